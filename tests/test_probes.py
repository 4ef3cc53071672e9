"""Regression tests for the probe findings of issue 18, item 6.

Memory and time guards that refuse before working, normalized GD at an overflowing gradient
norm, the gradient's shape checked at every step, ids outside the alphabet, unordered
containers where a sequence is meant, and raw numpy/scipy exceptions on bad input (each now an
:class:`ntpnb.errors.NTPError` naming the argument).
"""

from __future__ import annotations

import math
import time
import warnings
from fractions import Fraction

import joblib
import numpy as np
import pytest
from scipy.stats import binom

import ntpnb as ntp
import ntpnb.attention as att
from ntpnb import optim, parallel, settings, statistics
from ntpnb.errors import InvalidDataError, SolverError
from ntpnb.linear.corpus import decode_ids, encode_text, stdlib_docstring_list
from ntpnb.linear.thresholds import condition_trial


# ------------------------------------------------------------------ optim: guards and NGD
def test_log_grid_refuses_too_many_points_before_allocating():
    """1e7 recording points allocated 240 MB; now refused, naming the size and the limit."""
    with pytest.raises(InvalidDataError, match=r"n_points = 10000000 .*MAX_RECORD_POINTS = 100000"):
        optim.log_grid(10**9, 10**7)
    grid = optim.log_grid(10**9, settings.MAX_RECORD_POINTS)  # the limit itself is allowed
    assert grid[0] == 0 and grid[-1] == 10**9


@pytest.mark.parametrize("batch_ndim", [0, 1])
def test_normalized_gd_steps_by_lr_when_the_gradient_norm_overflows(batch_ndim):
    """Entries of 1e200 overflow ``sqrt(sum g^2)`` to inf; the step used to be a silent zero.
    Now it is ``lr`` along ``g`` (the norm computed as ``max|g| * ||g / max|g|||``)."""
    g = np.array([[3e200, -4e200], [1.0, 0.0]])  # row 0 overflows, row 1 does not
    W0 = np.zeros((2, 2)) if batch_ndim else np.zeros(2)
    grad = (lambda W: g) if batch_ndim else (lambda W: g[0])
    trace = optim.run(grad, W0, optim.normalized_gd(0.5), 1, batch_ndim=batch_ndim)
    expected = np.array([[-0.3, 0.4], [-0.5, 0.0]])
    np.testing.assert_allclose(trace.W, expected if batch_ndim else expected[0], rtol=1e-15)


@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_normalized_gd_names_a_non_finite_gradient_entry(bad):
    steps = []

    def grad(W):
        steps.append(1)
        return np.array([[1.0, 2.0], [bad if len(steps) == 3 else 1.0, 0.0]])

    with pytest.raises(
        SolverError, match=r"non-finite gradient entry \(batch element \(1,\)\) at iteration 2"
    ):
        optim.run(grad, np.zeros((2, 2)), optim.normalized_gd(0.1), 5, batch_ndim=1)


def test_run_checks_the_gradient_shape_at_every_step():
    """A gradient of shape (2,) for an iterate of shape (3, 2) broadcasts silently; at step 0 it
    was refused, at step 3 it was used."""
    calls = []

    def grad(W):
        calls.append(1)
        return W if len(calls) <= 3 else W[0]

    with pytest.raises(
        InvalidDataError, match=r"gradient at iteration 3 has shape \(2,\), the iterate \(3, 2\)"
    ):
        optim.run(grad, np.ones((3, 2)), optim.gd(0.1), 10)


# ------------------------------------------------------------------ sequences and the corpus
def test_prefix_contexts_refuses_a_quadratic_count_before_building_it():
    """One sequence of 10^5 tokens has prefixes holding 5e9 ids (40 GB): refused at once,
    naming the sizes and the limit; windows of the same text are counted."""
    text = np.arange(100_000) % 27
    start = time.perf_counter()
    with pytest.raises(InvalidDataError, match=r"4999950000 prefix token ids .*MAX_DENSE_BYTES"):
        ntp.prefix_contexts([text], vocab_size=27)
    assert time.perf_counter() - start < 10.0  # generous: it used to run until memory ran out
    windows = ntp.prefix_contexts(ntp.sliding_windows(text[:1000], 5), vocab_size=27)
    assert windows.n_pairs == 4 * 1000


def test_prefix_contexts_refuses_a_huge_vocabulary_before_allocating():
    with pytest.raises(InvalidDataError, match="rows of 1000000000000 counts"):
        ntp.prefix_contexts([[0, 1, 2]], vocab_size=10**12)


@pytest.mark.parametrize("ids", [[-1], [27], [0, 1, 100], np.array([3, -2])])
def test_decode_ids_refuses_ids_outside_the_alphabet(ids):
    """``decode_ids([-1])`` returned 'z' (Python's negative indexing)."""
    with pytest.raises(InvalidDataError, match=r"outside the alphabet's ids \[0, 27\)"):
        decode_ids(ids)
    assert decode_ids(encode_text("hello world")) == "hello world"


@pytest.mark.parametrize("ids", [[1.5], [True], ["a"], [[1, 2]], 5, "abc", None])
def test_decode_ids_refuses_non_integer_ids(ids):
    with pytest.raises(InvalidDataError, match="ids"):
        decode_ids(ids)


@pytest.mark.parametrize("text", [None, 5, ["a", "b"], np.array(["a"])])
def test_encode_text_refuses_a_non_string(text):
    with pytest.raises(InvalidDataError, match="text must be a str"):
        encode_text(text)


# ------------------------------------------------------------------ capacity: Cover's count
def _cover_rational(m: int, d: int, bias: bool = False) -> float:
    """The previous implementation: Cover's count in rational arithmetic (slow, exact)."""
    k_max = d + 1 if bias else d
    count = 2 * sum(math.comb(m - 1, k) for k in range(min(k_max, m)))
    return float(Fraction(count, 2**m))


@pytest.mark.parametrize("m", [1, 2, 3, 7, 30, 101, 500, 1200])
def test_cover_probability_equals_the_rational_sum(m):
    """Both are exact sums rounded once to float64, so they agree to the last bit (0 ulp)."""
    ds = sorted({1, 2, 3, m // 3 + 1, m // 2, m // 2 + 1, m - 1, m, m + 5} - {0})
    for d in ds:
        for bias in (False, True):
            assert ntp.cover_probability(m, d, bias) == _cover_rational(m, d, bias), (m, d, bias)


def test_cover_probability_is_fast_at_large_m_and_refuses_beyond_its_limit():
    """(20000, 10000) took 29 s; it is 1/2 exactly (sum_{k < 10000} C(19999, k) = 2^19998)."""
    start = time.perf_counter()
    assert ntp.cover_probability(20000, 10000) == 0.5
    upper, lower = ntp.cover_probability(20000, 10100), ntp.cover_probability(20000, 9900)
    assert time.perf_counter() - start < 10.0  # generous upper bound (about 0.1 s here)
    assert abs(upper + lower - 1.0) <= 2**-52  # P(X < 10100) = 1 - P(X < 9900), X ~ Bin(19999, 1/2)
    np.testing.assert_allclose(upper, binom.cdf(10099, 19999, 0.5), rtol=1e-10)  # scipy: ~1e-12 here
    with pytest.raises(
        InvalidDataError, match=r"m = 100001 points exceed ntpnb.settings.COVER_MAX_M = 100000"
    ):
        ntp.cover_probability(settings.COVER_MAX_M + 1, 10)
    with pytest.raises(InvalidDataError, match="bias must be True or False"):
        ntp.cover_probability(10, 2, bias=np.array([True, False]))


# ------------------------------------------------------------------ unordered containers
@pytest.mark.parametrize(
    "call",
    [
        lambda: ntp.validate_sequences({(0, 1), (1, 0)}, 2),
        lambda: ntp.validate_sequences([{0, 1}], 2),
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


def _trial(point, rng):
    return point


# ------------------------------------------------------------------ parallel: n_jobs
def test_n_jobs_beyond_the_machine_is_capped_with_a_warning():
    """``n_jobs = 1000`` asked for 1000 workers; on a local backend it is capped to the CPUs."""
    cpus = joblib.cpu_count()
    with joblib.parallel_config(backend="threading", n_jobs=1000):
        with pytest.warns(UserWarning, match=rf"n_jobs = 1000 exceeds the {cpus} CPUs"):
            assert parallel.active_workers() == cpus
        with pytest.warns(UserWarning, match="exceeds"):
            assert parallel.parallel_map(abs, [-1, 2, -3]) == [1, 2, 3]
    with joblib.parallel_config(backend="threading", n_jobs=-1), warnings.catch_warnings():
        warnings.simplefilter("error")  # joblib's -1 (every CPU) keeps working, without a warning
        assert parallel.active_workers() == cpus
        assert parallel.run_sweep(_trial, [1, 2], n_trials=2) == [[1, 1], [2, 2]]


# ------------------------------------------------------------------ raw exceptions, now named
_RAGGED = [[1.0, 2.0], [3.0]]
_HUGE = 10**12


def _attention_setup():
    X, y = att.general_dataset(3, 4, 3, seed=0)
    E = att.random_embeddings(3, 4, seed=0)
    data = att.as_token_data(X, y, 3)
    prob = att.make_problem(E, att.identity_head(E), data)
    return X, y, E, data, prob


_X, _Y, _E, _TD, _PROB = _attention_setup()
_TOY = ntp.toy2d_instance()

#: (call, the name the message must contain). Each raised a raw numpy/Python exception (or,
#: for the sizes, a MemoryError) on the main branch of 2026-11-23.
RAW_BEFORE = {
    # ntpnb.linear.data.as_float_array: a ragged list reached numpy before the conversion guard
    "NTPData H ragged": (lambda: ntp.NTPData(H=_RAGGED, pi=_TOY.pi, P=_TOY.P), "H"),
    "ce_loss W ragged": (lambda: ntp.ce_loss(_TOY, _RAGGED), "W"),
    "softmax L ragged": (lambda: ntp.softmax(_RAGGED), "L"),
    # ntpnb.linear.loss: max over zero tokens
    "softmax L no columns": (lambda: ntp.softmax(np.zeros((2, 0))), "L"),
    # seeds (numpy's SeedSequence errors): one check, ntpnb.validation.as_generator
    "random_context_embeddings seed": (lambda: ntp.random_context_embeddings(3, 2, seed=-1), "seed"),
    "lecun_init seed": (lambda: optim.lecun_init((2, 2), 2, seed=2.5), "seed"),
    "linear train seed": (lambda: ntp.train(_TOY, optim.gd(0.1), 1, seed="abc"), "seed"),
    "random_embeddings seed": (lambda: att.random_embeddings(3, 2, seed="abc"), "seed"),
    "global_experiment seed": (
        lambda: att.global_experiment("acyclic", K=3, d=4, n=4, T=3, n_trials=1, lr=0.1, n_iter=1, seed=-1),
        "seed",
    ),
    # sizes (MemoryError after numpy tried): refused before allocating
    "random_context_embeddings m": (lambda: ntp.random_context_embeddings(_HUGE, 2), "embeddings"),
    "synthetic_instance d": (lambda: ntp.synthetic_instance(n=50, m=5, d=_HUGE, V=4, S=2), "MAX_DENSE_BYTES"),
    "random_instance V": (
        lambda: ntp.random_instance(5, 2, _HUGE, 2, np.random.default_rng(0)),
        "MAX_DENSE_BYTES",
    ),
    "random_embeddings d": (lambda: att.random_embeddings(3, _HUGE, seed=0), "E"),
    "acyclic_dataset n": (lambda: att.acyclic_dataset(3, _HUGE, 2, seed=0), "MAX_DENSE_BYTES"),
    # not a sequence / not a flag (Python's TypeError, numpy's ambiguous truth value)
    "validate_sequences None": (lambda: ntp.validate_sequences(None, 3), "sequences"),
    "sliding_windows tokens": (lambda: ntp.sliding_windows(5, 2), "tokens"),
    "sliding_windows cyclic": (lambda: ntp.sliding_windows([0, 1, 2], 2, cyclic=np.zeros(2)), "cyclic"),
    "stdlib_docstring_list modules": (lambda: stdlib_docstring_list(np.array([])), "modules"),
    "parallel_map items": (lambda: parallel.parallel_map(abs, 5), "items"),
    "parallel_map func": (lambda: parallel.parallel_map(None, [1]), "func"),
    "run_sweep trial": (lambda: parallel.run_sweep("trial", [1], 1), "trial"),
    # wrong objects (AttributeError deep inside)
    "linear train data": (lambda: ntp.train(None, optim.gd(0.1), 1), "NTPData"),
    "condition_trial point": (lambda: condition_trial([3, 2, 3, 2], np.random.default_rng(0)), "point"),
    "random_instance rng": (lambda: ntp.random_instance(3, 2, 3, 2, rng=0), "rng"),
    "best_achievable_loss tol": (lambda: ntp.best_achievable_loss(_TOY, tol="abc"), "tol"),
    # ntpnb.optim
    "Optimizer name array": (lambda: optim.Optimizer(np.array(["gd", "adam"]), 0.1), "optimizer"),
    "adam betas": (lambda: optim.adam(0.1, betas=None), "betas"),
    "run grad": (lambda: optim.run(None, np.ones(2), optim.gd(0.1), 1), "grad"),
    "run W0 ragged": (lambda: optim.run(lambda W: W, _RAGGED, optim.gd(0.1), 1), "W0"),
    "run W0 empty": (lambda: optim.run(lambda W: W, np.zeros(0), optim.normalized_gd(0.1), 1), "W0"),
    # ntpnb.parallel and ntpnb.statistics
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
    "as_token_data y ragged": (lambda: att.as_token_data(_X, [[0, 1], [2]], 3), "y"),
    "check_embeddings E ragged": (lambda: att.check_embeddings(_RAGGED), "E"),
    "check_embeddings K": (lambda: att.check_embeddings(_E, K=np.array([3, 3])), "K"),
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
    "attention train optimizer": (lambda: att.train(_PROB, "gd", 1), "optimizer"),
    "correlation W": (lambda: att.correlation("abc", np.ones((2, 2))), "W"),
    "correlation ref shape": (lambda: att.correlation(np.ones((2, 2)), np.ones(3)), "ref"),
    "stack_bases": (lambda: att.stack_bases([None]), "bases"),
    # ntpnb.attention model, graphs, convex: the one-line conversions at their boundary
    "make_problem C ragged": (lambda: att.make_problem(_E, _RAGGED, _TD), "C"),
    "loss_value W ragged": (lambda: att.loss_value(_RAGGED, _PROB), "W"),
    "gradient prob": (lambda: att.gradient(np.zeros((1, 4, 4)), None), "prob"),
    "project_scyc W": (lambda: att.project_scyc("abc", np.eye(16)), "W"),
    "pseudo_priority_graphs W": (lambda: att.pseudo_priority_graphs(_E, _TD, "abc"), "W"),
    "regularization_path radii": (lambda: att.regularization_path(_E, _X, _Y, radii="abc", K=3), "radii"),
    # graphs and the Graph-SVM: wrong types and shapes at their boundary
    "graphs_from_edges nodes": (lambda: att.graphs_from_edges(3, [1, 2], {}), "nodes"),
    "graphs_from_edges K": (lambda: att.graphs_from_edges("3", {}, {}), "K"),
    "graphs_from_edges id": (lambda: att.graphs_from_edges(3, {0: {5}}, {}), "vocabulary"),
    "graphs_from_edges edge": (lambda: att.graphs_from_edges(3, {0: {1}}, {0: {(1, 2)}}), "edge"),
    "scyc_basis graphs": (lambda: att.scyc_basis(_E, "graphs"), "graphs"),
    "graph_constraints graphs": (lambda: att.graph_constraints(_E, "graphs"), "graphs"),
    "solve_graph_svm graphs": (lambda: att.solve_graph_svm(_E, "graphs"), "graphs"),
    "project_scyc basis": (lambda: att.project_scyc(np.ones((3, 3)), np.ones((2, 64))), "basis"),
    "project_scyc W 1-D": (lambda: att.project_scyc(np.ones(3), np.ones((2, 9))), "W"),
    "attention_scores W": (lambda: att.attention_scores(_E, _TD, np.ones((3, 3))), "W"),
    "attention_scores data": (lambda: att.attention_scores(_E, "data", np.ones((4, 4))), "data"),
    "pseudo_priority_graphs X": (lambda: att.pseudo_priority_graphs(_E, 5, np.ones((4, 4)), K=3), "X"),
}


@pytest.mark.parametrize("name", list(RAW_BEFORE))
def test_bad_input_raises_a_named_error_naming_the_argument(name):
    call, argument = RAW_BEFORE[name]
    with pytest.raises(InvalidDataError) as info:
        call()
    assert argument in str(info.value), str(info.value)
