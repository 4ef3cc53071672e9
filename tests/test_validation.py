"""The shared checks of user input: one rule for counts, one for ids, one way to freeze arrays."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

import ntpnb as ntp
from ntpnb import _optim as optim
from ntpnb import _parallel as parallel
from ntpnb import _statistics as statistics
from ntpnb import attention as att
from ntpnb._validation import (
    FrozenArrays,
    as_count,
    as_float,
    as_float_array,
    as_int_array,
    frozen,
    is_frozen,
    is_integer,
    is_real,
    read_only_view,
)
from ntpnb.errors import InvalidDataError
from ntpnb.linear import _condition_thresholds as thresholds
from ntpnb.linear import _corpus as corpus
from ntpnb.linear import _sequences as sequences
from ntpnb.linear._condition_thresholds import condition_trial
from ntpnb.linear._corpus import decode_ids, stdlib_docstring_list

# ---------------------------------------------------------------------------------------------
# Counts: a whole number, whatever its type; 5000.0 is the count 5000, 5000.5 is refused.


@pytest.mark.parametrize("value", [5000, np.int64(5000), np.uint16(5000), 5000.0, np.float64(5000.0), 5e3])
def test_a_count_is_a_whole_number_of_any_numeric_type(value):
    count = as_count(value, "n")
    assert count == 5000 and type(count) is int


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (5000.5, "5000.5"),
        (float("nan"), "nan"),
        (float("inf"), "inf"),
        (True, "True"),
        (np.True_, "np.True_"),
        ("50", "'50'"),
        (None, "None"),
        (np.array([3]), "array([3])"),
        (0, "0"),
        (-2.0, "-2.0"),
    ],
)
def test_a_count_refuses_anything_else_naming_the_argument(value, shown):
    with pytest.raises(InvalidDataError, match=re.escape(f"n must be a positive integer, got {shown}")):
        as_count(value, "n")


@pytest.mark.parametrize("value", [2**64, 2**64 + 1, 10**30])
def test_a_count_beyond_int64_is_a_whole_number_not_a_type_error(value):
    """Python ints past 2**64 are whole numbers; numpy's isfinite alone would raise TypeError."""
    assert as_count(value, "seed", minimum=0) == value
    # a seed that large draws, the same instance each time, and its own: not the seed reduced
    # modulo 2**64 (which an unsigned 64-bit conversion would make 2**64 into 0)
    drawn = ntp.toy2d_instance(value)
    assert (drawn.m, drawn.d, drawn.V) == (3, 2, 5)
    np.testing.assert_array_equal(drawn.H, ntp.toy2d_instance(value).H)
    assert not np.array_equal(drawn.H, ntp.toy2d_instance(value % 2**64).H)
    with pytest.raises(InvalidDataError, match="n must be a positive integer, got -"):
        as_count(-value, "n")


def test_a_count_names_its_minimum():
    assert as_count(0.0, "n_iter", minimum=0) == 0
    with pytest.raises(InvalidDataError, match=re.escape("seed must be a non-negative integer, got -1")):
        as_count(-1, "seed", minimum=0)
    with pytest.raises(InvalidDataError, match=re.escape("vocab_size must be an integer >= 2, got 1.0")):
        as_count(1.0, "vocab_size", minimum=2)


_TOY = ntp.toy2d_instance()
_CTX = sequences.prefix_contexts([[0, 1, 2], [0, 2, 1]], 3)
_E = att.random_embeddings(6, 4, seed=0)
_X, _Y = np.array([[0, 1, 2], [3, 4, 5]]), np.array([1, 4])

#: Every public function that takes a count, called with the count given as ``v`` (and what it
#: returns, as arrays): the rule is the same in all of them (they once refused 5000.0 while
#: as_count took it).
COUNTED = {
    "trial_generators n_trials": lambda v: [
        [s.entropy for s in r] for r in parallel.trial_generators(0, 2, v)
    ],
    "trial_generators seed": lambda v: [[s.entropy for s in r] for r in parallel.trial_generators(v, 2, 3)],
    "parallel_map batch_size": lambda v: parallel.parallel_map(abs, [1, -2, 3], batch_size=v),
    "run_sweep n_trials": lambda v: parallel.run_sweep(lambda p, rng: p * rng.random(), [1, 2], v),
    "random_instance m": lambda v: thresholds.random_instance(v, 2, 3, 2, np.random.default_rng(0)).P,
    "cover_probability d": lambda v: thresholds.cover_probability(10, v),
    "compatibility_threshold S": lambda v: thresholds.compatibility_threshold(4, 5, v),
    "separability_count_heuristic V": lambda v: thresholds.separability_count_heuristic(v + 2, 1),
    "run_decoder batch_size": lambda v: (
        ntp.run_decoder(_TOY, optim.sgd(0.1), 1, np.ones((5, 2)), batch_size=v).W
    ),
    "stdlib_corpus n_chars": lambda v: corpus.stdlib_corpus(v),
    "prefix_contexts vocab_size": lambda v: sequences.prefix_contexts([[0, 1]], v + 1).counts,
    "prefix_contexts max_length": lambda v: sequences.prefix_contexts([[0, 1, 2]], 3, max_length=v).counts,
    "sliding_windows length": lambda v: sequences.sliding_windows([0, 1, 2], v + 1),
    "joint_ntp_data d": lambda v: sequences.joint_ntp_data(_CTX, v).H,
    "smallest_separable_dimension hi": lambda v: sequences.smallest_separable_dimension(
        lambda d: d, 0, v, lambda d: True
    ),
    "as_token_data K": lambda v: att.as_token_data(_X, _Y, v + 5).tokens,
    "check_embeddings K": lambda v: att._token_data.check_embeddings(_E, K=v + 5),
    "random_embeddings d": lambda v: att.random_embeddings(6, v, seed=0),
    "acyclic_dataset n": lambda v: att.acyclic_dataset(6, v, 3, seed=0),
}


@pytest.mark.parametrize("name", list(COUNTED))
def test_every_count_takes_an_integer_valued_float_as_its_integer(name):
    given_int, given_float = COUNTED[name](1), COUNTED[name](1.0)
    if isinstance(given_int, tuple):
        for a, b in zip(given_int, given_float, strict=True):
            np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_array_equal(given_int, given_float)


@pytest.mark.parametrize("name", list(COUNTED))
def test_every_count_refuses_a_fraction_naming_the_argument(name):
    argument = name.split()[-1]
    with pytest.raises(InvalidDataError, match=re.escape(argument)) as info:
        COUNTED[name](1.5)
    assert "integer" in str(info.value)


# ---------------------------------------------------------------------------------------------
# Numbers and single ids


def test_is_real_takes_numbers_and_never_a_bool():
    for value in (1, 1.5, np.int32(2), np.float32(0.5), float("nan"), float("inf")):
        assert is_real(value)
    for value in (True, np.False_, "1", None, np.array([1.0]), 1j):
        assert not is_real(value)


def test_is_integer_takes_integers_only():
    for value in (0, np.int8(3), np.uint64(7)):
        assert is_integer(value)
    for value in (3.0, np.float64(3.0), True, np.True_, "3", None):
        assert not is_integer(value)


@pytest.mark.parametrize("value", [True, np.True_, "0.1", None])
def test_the_rates_and_tolerances_refuse_a_bool_or_a_string(value):
    with pytest.raises(InvalidDataError, match="learning rate"):
        ntp.optim.gd(value)
    with pytest.raises(InvalidDataError, match="confidence"):
        statistics.wilson_interval(1, 3, confidence=value)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ([True], "True"),
        (np.array([1.0, 0.0]) > 0, "True"),
        (["1"], "'1'"),
        (np.array(["2.0"]), "'2.0'"),
        ([1.0, None], "None"),
        ("3", "'3'"),
    ],
)
def test_arrays_of_numbers_refuse_booleans_and_text(value, shown):
    """numpy would read ``[True]`` as ``[1.0]`` and ``["1"]`` as ``[1.0]``: both are mistakes."""
    for convert in (lambda v: as_float(v, "radii"), lambda v: as_float_array(v, "radii", ndim=np.ndim(v))):
        with pytest.raises(InvalidDataError, match=re.escape(f"radii must hold numbers, got {shown}")):
            convert(value)
    with pytest.raises(InvalidDataError, match="radii must hold numbers"):
        ntp.regularization_path(ntp.toy2d_instance(), radii=value)
    X, y, _ = att.acyclic_dataset(8, 4, 6, 4)
    with pytest.raises(InvalidDataError, match="radii must hold numbers"):
        att.regularization_path(att.random_embeddings(8, 8, 0), att.as_token_data(X, y, 8), radii=value)


@pytest.mark.parametrize("value", [[1.0, 2j], np.array([1.0 + 0j])])
def test_arrays_of_numbers_refuse_complex_values_rather_than_truncate_them(value):
    for convert in (lambda v: as_float(v, "W"), lambda v: as_float_array(v, "W", ndim=1)):
        with pytest.raises(InvalidDataError, match="W must be real, got complex values"):
            convert(value)


def test_arrays_of_numbers_take_every_numeric_type():
    np.testing.assert_array_equal(as_float([1, np.float32(2.0), np.int8(3)], "x"), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(as_float_array(np.arange(3, dtype=np.uint8), "x", ndim=1), [0.0, 1.0, 2.0])


# ---------------------------------------------------------------------------------------------
# Arrays of ids: the one conversion both papers use


def test_int_array_takes_integers_and_whole_floats():
    np.testing.assert_array_equal(as_int_array([0, 2, 1], "ids"), [0, 2, 1])
    out = as_int_array(np.array([0.0, 3.0]), "ids")
    assert out.dtype == np.int64 and out.tolist() == [0, 3]
    assert as_int_array([], "ids").dtype == np.int64


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([0.0, 0.5], "ids must hold integer ids: token 0.5 at sample 1 is not one"),
        ([0.0, np.inf], "ids must hold integer ids: token inf at sample 1 is not one"),
        ([2.0**63], "ids must hold integer ids: token 9.223372036854776e+18 at sample 0 is not one"),
        ([True, False], "ids must hold integer ids, got dtype bool"),
        (["a"], "ids must hold integer ids, got dtype <U1"),
        ([[0, 1], [2]], "ids must be a 1-dimensional array of integer ids"),
        ([[0, 1]], "ids must be 1-dimensional, got shape (1, 2)"),
        ({0, 1}, "ids must be an ordered sequence of ids, got a set"),
        ({0: 1}, "ids must be an ordered sequence of ids, got a dict"),
    ],
)
def test_int_array_refuses_anything_else_naming_the_entry(values, message):
    with pytest.raises(InvalidDataError, match=re.escape(message)):
        as_int_array(values, "ids", "token", "sample")


def test_token_data_read_ids_with_the_shared_rule():
    tok = att.as_token_data([[0.0, 1.0]], [1.0], 3)
    assert tok.tokens.dtype == np.int64 and tok.labels.tolist() == [1]
    with pytest.raises(InvalidDataError, match=re.escape("token id 0.5 at position 0")):
        att.as_token_data([[0.5, 1]], [1], 3)


@pytest.mark.parametrize(
    ("bad", "shown"), [(np.inf, "inf"), (1e20, "1e+20"), (-np.inf, "-inf"), (np.nan, "nan")]
)
def test_non_integer_ids_are_reported_as_given(bad, shown):
    """A non-integer id is shown as given (inf, 1e20), not as the integer a cast makes of it."""
    with pytest.raises(InvalidDataError, match=rf"context id {re.escape(shown)} at sample 1"):
        as_int_array([0.0, bad], "contexts", "context id", "sample")


# ---------------------------------------------------------------------------------------------
# Freezing


@pytest.mark.parametrize(
    "arr",
    [
        np.arange(12.0).reshape(3, 4),
        np.asfortranarray(np.arange(12.0).reshape(3, 4)),
        np.einsum("ivk,jk->jvi", np.ones((6, 5, 2)), np.ones((3, 2))),
        np.arange(24).reshape(4, 6)[:, ::2],
        np.array(2.5),
        np.zeros((0, 3)),
    ],
)
def test_frozen_is_a_read_only_copy_that_cannot_be_thawed(arr):
    for order in ("C", "K"):
        out = frozen(arr, order=order)
        assert out.shape == arr.shape and out.dtype == arr.dtype
        np.testing.assert_array_equal(out, arr)
        assert not np.shares_memory(out, arr)
        with pytest.raises(ValueError, match="read-only"):
            out[...] = 0
        with pytest.raises(ValueError):
            out.setflags(write=True)
    assert arr.flags.writeable  # the input is left as it was


def test_frozen_order_k_keeps_the_layout_and_c_makes_it_contiguous():
    F = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    assert frozen(F, order="K").flags.f_contiguous and not frozen(F, order="K").flags.c_contiguous
    assert frozen(F).flags.c_contiguous
    T = np.einsum("ivk,jk->jvi", np.ones((6, 5, 2)), np.ones((3, 2)))
    assert frozen(T, order="K").strides == T.strides
    assert frozen(T).flags.c_contiguous


def test_frozen_arrays_freeze_every_array_field_once_keeping_its_layout():
    @dataclasses.dataclass(frozen=True, eq=False)
    class Result(FrozenArrays):
        T: np.ndarray
        kept: np.ndarray
        n: int

    T = np.einsum("ivk,jk->jvi", np.ones((6, 5, 2)), np.ones((3, 2)))
    kept = frozen(np.arange(3.0))
    res = Result(T, kept, 2)
    assert res.T.strides == T.strides and not np.shares_memory(res.T, T) and is_frozen(res.T)
    np.testing.assert_array_equal(res.T, T)
    assert res.kept is kept and res.n == 2  # frozen already: not copied again
    with pytest.raises(ValueError, match="read-only"):
        res.T[0] = 1.0
    assert T.flags.writeable and not is_frozen(T) and not is_frozen(read_only_view(T))


def test_read_only_view_follows_the_array_it_shows():
    W = np.zeros(3)
    view = read_only_view(W)
    W += 1.0
    np.testing.assert_array_equal(view, 1.0)
    with pytest.raises(ValueError, match="read-only"):
        view[0] = 5.0
    assert W.flags.writeable


# ---------------------------------------------------------------------------------------------
# Sequences: a set or a dict has no order, where an ordered sequence is meant


def _trial(point, rng):
    return point


@pytest.mark.parametrize(
    "call",
    [
        lambda: ntp.prefix_contexts({(0, 1), (1, 0)}, 2),
        lambda: ntp.prefix_contexts([{0, 1}], 2),
        lambda: ntp.prefix_contexts([{0: 1, 1: 0}], 2),
        lambda: ntp.sliding_windows({0, 1, 2}, 2),
        lambda: ntp.sliding_windows({0: 1, 1: 2, 2: 0}.keys(), 2),
        lambda: decode_ids({1, 2, 3}),
        lambda: stdlib_docstring_list({"re", "json"}),
        lambda: parallel.run_sweep(_trial, {1, 2}, n_trials=1),
        lambda: parallel.parallel_map(abs, {1: 0, -2: 0}),
        lambda: statistics.crossing({0.0, 1.0}, [0.0, 1.0]),
        lambda: optim.lecun_init({2, 3}, 3, 0),
    ],
)
def test_unordered_containers_are_refused_where_a_sequence_is_meant(call):
    with pytest.raises(InvalidDataError, match="unordered"):
        call()


# ---------------------------------------------------------------------------------------------
# Every public boundary: bad input raises an InvalidDataError naming the argument


_RAGGED = [[1.0, 2.0], [3.0]]
_HUGE = 10**12


def _attention_setup():
    X, y = att.general_dataset(3, 4, 3, seed=0)
    E = att.random_embeddings(3, 4, seed=0)
    data = att.as_token_data(X, y, 3)
    prob = att.make_problem(E, att.identity_head(E), data)
    return X, y, E, data, prob


_ATT_X, _ATT_Y, _ATT_E, _ATT_DATA, _ATT_PROB = _attention_setup()


#: (call, the name the message must contain): bad input at a public boundary, which would otherwise
#: reach numpy or Python and raise their own exception (or, for the sizes, a MemoryError).
NAMED_ERRORS = {
    # ntpnb.linear._ntp_data.as_float_array: a ragged list reached numpy before the conversion guard
    "NTPData H ragged": (lambda: ntp.NTPData(H=_RAGGED, pi=_TOY.pi, P=_TOY.P), "H"),
    "ce_loss W ragged": (lambda: ntp.ce_loss(_TOY, _RAGGED), "W"),
    "softmax L ragged": (lambda: ntp.softmax(_RAGGED), "L"),
    # ntpnb.linear._loss: max over zero tokens
    "softmax L no columns": (lambda: ntp.softmax(np.zeros((2, 0))), "L"),
    # seeds (numpy's SeedSequence errors): one check, ntpnb._validation.as_generator
    "joint_ntp_data seed": (lambda: ntp.joint_ntp_data(_CTX, 2, seed=-1), "seed"),
    "lecun_init seed": (lambda: optim.lecun_init((2, 2), 2, seed=2.5), "seed"),
    "linear train seed": (
        lambda: ntp.train(_TOY, optim.gd(0.1), 1, lim=ntp.limits(_TOY), seed="abc"),
        "seed",
    ),
    "random_embeddings seed": (lambda: att.random_embeddings(3, 2, seed="abc"), "seed"),
    "global_experiment seed": (
        lambda: att.global_experiment("acyclic", K=3, d=4, n=4, T=3, n_trials=1, lr=0.1, n_iter=1, seed=-1),
        "seed",
    ),
    # sizes (MemoryError after numpy tried): refused before allocating
    "synthetic_instance d": (lambda: ntp.synthetic_instance(n=50, m=5, d=_HUGE, V=4, S=2), "MAX_DENSE_BYTES"),
    "random_instance V": (
        lambda: ntp.random_instance(5, 2, _HUGE, 2, np.random.default_rng(0)),
        "MAX_DENSE_BYTES",
    ),
    "random_embeddings d": (lambda: att.random_embeddings(3, _HUGE, seed=0), "E"),
    "acyclic_dataset n": (lambda: att.acyclic_dataset(3, _HUGE, 2, seed=0), "MAX_DENSE_BYTES"),
    # not a sequence / not a flag (Python's TypeError, numpy's ambiguous truth value)
    "prefix_contexts None": (lambda: ntp.prefix_contexts(None, 3), "sequences"),
    "sliding_windows tokens": (lambda: ntp.sliding_windows(5, 2), "tokens"),
    "sliding_windows cyclic": (lambda: ntp.sliding_windows([0, 1, 2], 2, cyclic=np.zeros(2)), "cyclic"),
    "stdlib_docstring_list modules": (lambda: stdlib_docstring_list(np.array([])), "modules"),
    "parallel_map items": (lambda: parallel.parallel_map(abs, 5), "items"),
    "parallel_map func": (lambda: parallel.parallel_map(None, [1]), "func"),
    "run_sweep trial": (lambda: parallel.run_sweep("trial", [1], 1), "trial"),
    # wrong objects (AttributeError deep inside)
    "linear train data": (lambda: ntp.train(None, optim.gd(0.1), 1, lim=ntp.limits(_TOY)), "NTPData"),
    "condition_trial point": (lambda: condition_trial([3, 2, 3, 2], np.random.default_rng(0)), "point"),
    "random_instance rng": (lambda: ntp.random_instance(3, 2, 3, 2, rng=0), "rng"),
    # ntpnb._optim
    "Optimizer name array": (lambda: optim.Optimizer(np.array(["gd", "adam"]), 0.1), "optimizer"),
    "adam betas": (lambda: optim.adam(0.1, betas=None), "betas"),
    "run grad": (lambda: optim.run(None, np.ones(2), optim.gd(0.1), 1), "grad"),
    "run W0 ragged": (lambda: optim.run(lambda W: W, _RAGGED, optim.gd(0.1), 1), "W0"),
    "run W0 empty": (lambda: optim.run(lambda W: W, np.zeros(0), optim.normalized_gd(0.1), 1), "W0"),
    # ntpnb._parallel and ntpnb.statistics
    "wilson_interval successes": (lambda: statistics.wilson_interval(None, 3), "successes"),
    "wilson_interval n": (lambda: statistics.wilson_interval(1, "3"), "n"),
    "wilson_interval confidence": (lambda: statistics.wilson_interval(1, 3, confidence=None), "confidence"),
    "crossing x": (lambda: statistics.crossing("abc", [0.0, 1.0, 2.0]), "x"),
    "crossing y ragged": (lambda: statistics.crossing([0.0, 1.0], _RAGGED), "y"),
    "crossing level": (lambda: statistics.crossing([0.0, 1.0], [0.0, 1.0], level=[]), "level"),
    "trial_generators n_points": (lambda: parallel.trial_generators(0, None, 2), "n_points"),
    "run_sweep n_trials huge": (lambda: parallel.run_sweep(_trial, [1, 2], _HUGE), "MAX_DENSE_BYTES"),
    # ntpnb.attention: data, training, experiments
    "as_token_data X": (lambda: att.as_token_data(5, [0], 3), "X"),
    "as_token_data y ragged": (lambda: att.as_token_data(_ATT_X, [[0, 1], [2]], 3), "y"),
    "check_embeddings E ragged": (lambda: att._token_data.check_embeddings(_RAGGED), "E"),
    "check_embeddings K": (lambda: att._token_data.check_embeddings(_ATT_E, K=np.array([3, 3])), "K"),
    "random_embeddings K bool": (lambda: att.random_embeddings(True, 2, seed=0), "K"),
    "global_experiment kind": (
        lambda: att.global_experiment(
            np.array(["acyclic"] * 2), K=3, d=4, n=4, T=3, n_trials=1, lr=0.1, n_iter=1, seed=0
        ),
        "kind",
    ),
    "global_experiment n_trials": (
        lambda: att.global_experiment("acyclic", K=3, d=4, n=4, T=3, n_trials=None, lr=0.1, n_iter=1, seed=0),
        "n_trials",
    ),
    "global_experiment n_trials huge": (
        lambda: att.global_experiment(
            "acyclic", K=3, d=4, n=4, T=3, n_trials=_HUGE, lr=0.1, n_iter=1, seed=0
        ),
        "MAX_DENSE_BYTES",
    ),
    "attention train prob": (lambda: att.train(None, optim.gd(0.1), 1), "prob"),
    "attention train optimizer": (lambda: att.train(_ATT_PROB, "gd", 1), "optimizer"),
    "correlation W": (lambda: att.correlation("abc", np.ones((2, 2))), "W"),
    "correlation ref shape": (lambda: att.correlation(np.ones((2, 2)), np.ones(3)), "ref"),
    # ntpnb.attention model, graphs, convex: the one-line conversions at their boundary
    "make_problem C ragged": (lambda: att.make_problem(_ATT_E, _RAGGED, _ATT_DATA), "C"),
    "loss_and_grad W ragged": (lambda: att.loss_and_grad(_RAGGED, _ATT_PROB), "W"),
    "loss_and_grad prob": (lambda: att.loss_and_grad(np.zeros((1, 4, 4)), None), "prob"),
    "project_scyc W": (lambda: att.project_scyc("abc", np.eye(16)), "W"),
    "pseudo_priority_graphs W": (lambda: att._graphs.pseudo_priority_graphs(_ATT_E, _ATT_DATA, "abc"), "W"),
    "regularization_path radii": (
        lambda: att.regularization_path(_ATT_E, _ATT_DATA, radii="abc"),
        "radii",
    ),
    # graphs and the Graph-SVM: wrong types and shapes at their boundary
    "scyc_basis graphs": (lambda: att._graphs.scyc_basis(_ATT_E, "graphs"), "graphs"),
    "solve_graph_svm graphs": (lambda: att.solve_graph_svm(_ATT_E, "graphs"), "graphs"),
    "project_scyc basis": (lambda: att.project_scyc(np.ones((3, 3)), np.ones((2, 64))), "basis"),
    "project_scyc W 1-D": (lambda: att.project_scyc(np.ones(3), np.ones((2, 9))), "W"),
    "pseudo_priority_graphs W shape": (
        lambda: att._graphs.pseudo_priority_graphs(_ATT_E, _ATT_DATA, np.ones((3, 3))),
        "W",
    ),
    "pseudo_priority_graphs data": (
        lambda: att._graphs.pseudo_priority_graphs(_ATT_E, 5, np.ones((4, 4))),
        "TokenData",
    ),
    "token_priority_graphs ids": (lambda: att.token_priority_graphs(_ATT_X), "TokenData"),
    "regularization_path ids": (lambda: att.regularization_path(_ATT_E, _ATT_X), "TokenData"),
}


@pytest.mark.parametrize("name", list(NAMED_ERRORS))
def test_bad_input_raises_a_named_error_naming_the_argument(name):
    call, argument = NAMED_ERRORS[name]
    with pytest.raises(InvalidDataError) as info:
        call()
    assert argument in str(info.value), str(info.value)
