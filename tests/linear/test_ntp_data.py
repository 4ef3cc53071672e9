"""NTPData (ntpnb.linear._ntp_data): validation, supports, construction from samples, refusal of what
is not data, and the per-data caches whose results are read-only or fresh copies."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given

import ntpnb as ntp
from ntpnb.errors import InvalidDataError, NotCompatibleError
from ntpnb.linear._constraints import ntp_constraints

from helpers import HALF, PROPERTY, instances, random_data, scaled

GOOD = {"H": np.eye(2), "pi": [0.5, 0.5], "P": [[0.5, 0.5, 0.0], [0.0, 0.25, 0.75]]}


def make(**changes):
    return ntp.NTPData(**{**GOOD, **changes})


def test_valid_data_and_supports():
    data = make()
    assert (data.m, data.d, data.V) == (2, 2, 3)
    assert [s.tolist() for s in data.supports] == [[0, 1], [1, 2]]
    assert data.support_sizes.tolist() == [2, 2]
    assert data.support_mask.tolist() == [[True, True, False], [False, True, True]]


def test_data_is_immutable_and_copied():
    H = np.eye(2)
    data = make(H=H)
    H[0, 0] = 99.0
    assert data.H[0, 0] == 1.0
    with pytest.raises(ValueError):
        data.P[0, 0] = 0.3
    with pytest.raises(AttributeError):
        data.H = np.zeros((2, 2))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"H": np.eye(3)}, "pi must have shape"),
        ({"P": [[0.5, 0.5, 0.0]]}, "P must have 2 rows"),
        ({"H": [1.0, 2.0]}, "H must be 2-dimensional"),
        ({"pi": [0.6, 0.6]}, "pi sums to"),
        ({"pi": [1.5, -0.5]}, "pi has a negative entry"),
        ({"pi": [1.0, 0.0]}, "context 1 has probability pi_1 = 0"),
        ({"P": [[0.5, 0.6, -0.1], [0.0, 0.25, 0.75]]}, "negative probability at context 0, token 2"),
        ({"P": [[0.5, 0.4, 0.0], [0.0, 0.25, 0.75]]}, "row 0 of P sums to"),
        ({"P": [[0.0, 0.0, 0.0], [0.0, 0.25, 0.75]]}, "context 0 has an empty support"),
        ({"P": [[np.nan, 0.5, 0.5], [0.0, 0.25, 0.75]]}, "P has a non-finite entry at index (0, 0)"),
        ({"H": [[np.inf, 0.0], [0.0, 1.0]]}, "H has a non-finite entry"),
        ({"P": [[1.0], [1.0]]}, "at least 2 tokens"),
        ({"H": np.zeros((2, 0))}, "embedding dimension d must be at least 1"),
        ({"H": [["a", "b"], ["c", "d"]]}, "H must hold numbers, got 'a'"),
    ],
)
def test_bad_data_is_rejected_with_a_clear_message(changes, message):
    with pytest.raises(InvalidDataError, match=re.escape(message)):
        make(**changes)


def test_float32_normalized_probabilities_are_accepted_and_renormalized():
    """Rows normalized in float32 (as from PyTorch) miss a 1e-8 sum tolerance: they are accepted and
    renormalized in float64, while a row off by more than float32 rounding is still an error."""
    rng = np.random.default_rng(0)
    logits32 = rng.standard_normal((200, 50)).astype(np.float32)
    e = np.exp(logits32 - logits32.max(axis=1, keepdims=True))
    P32 = e / e.sum(axis=1, keepdims=True)  # float32 arithmetic throughout
    assert np.mean(np.abs(P32.astype(np.float64).sum(axis=1) - 1) > 1e-8) > 0.5  # beyond 1e-8
    pi32 = np.full(200, 1 / 200, dtype=np.float32)
    data = ntp.NTPData(H=rng.standard_normal((200, 3)), pi=pi32, P=P32)
    np.testing.assert_allclose(data.P.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(data.P, P32, rtol=1e-6)
    assert data.pi.sum() == pytest.approx(1.0, abs=1e-15)
    with pytest.raises(InvalidDataError, match="row 0 of P sums to"):
        ntp.NTPData(H=[[1.0]], pi=[1.0], P=[[0.5, 0.5001]])  # beyond float32 rounding: an error


def test_complex_input_is_rejected_not_truncated():
    """Complex arrays are refused, never cast to real (which drops the imaginary part silently)."""
    with pytest.raises(InvalidDataError, match="H must be real"):
        ntp.NTPData(H=np.array([[1.0 + 2.0j]]), pi=[1.0], P=[[0.5, 0.5]])
    with pytest.raises(InvalidDataError, match="P must be real"):
        ntp.NTPData(H=[[1.0]], pi=[1.0], P=np.array([[0.5 + 0j, 0.5]]))
    with pytest.raises(InvalidDataError, match="W must be real"):
        ntp.ce_loss(HALF, np.zeros((3, 1), dtype=complex))


@pytest.mark.parametrize(
    "func",
    [ntp.ce_loss, ntp.ce_grad, ntp.logits, ntp.kl_divergence, ntp.project_F, ntp.project_F_perp],
)
def test_functions_of_data_and_W_reject_what_is_not_ntpdata(func):
    with pytest.raises(InvalidDataError, match="expected NTPData, got dict"):
        func({"H": np.eye(2)}, np.zeros((3, 2)))


@pytest.mark.parametrize(
    "func",
    [ntp.entropy, ntp.f_basis, ntp.finite_solution, ntp.is_compatible, ntp.is_separable, ntp.ntp_svm],
)
def test_functions_of_data_reject_what_is_not_ntpdata(func):
    with pytest.raises(InvalidDataError, match="expected NTPData, got ndarray"):
        func(np.eye(2))


# ---------------------------------------------------------------------------------------------
# Caches per data set: what they return is read-only or a fresh copy, and they keep no data alive


def test_nothing_returned_aliases_a_cache():
    """Writing into a returned array (B = f_basis(d); B *= 0) cannot change a cached result."""
    data = random_data(m=3, d=5, V=4, S=2, seed=40)
    with pytest.raises(ValueError, match="read-only"):
        B = ntp.f_basis(data)
        B *= 0
    assert np.linalg.norm(ntp.finite_solution(data)) > 0
    assert np.linalg.norm(ntp.ntp_svm(data)) > 0
    cons = ntp_constraints(data)
    sol = ntp.solve_ntp_svm(data)
    for arr in (cons.eq.data, cons.ineq.data, cons.eq_rhs, cons.anchors, sol.W, sol.duals, data.support_mask):
        with pytest.raises(ValueError):
            arr.setflags(write=True)
    for func in (ntp.finite_solution, ntp.ntp_svm, ntp.separating_direction):
        W = func(data)
        W[:] = 0.0  # copies: writable, and writing does not touch the cache
        assert np.linalg.norm(func(data)) > 0


def test_data_arrays_cannot_be_made_writable_again():
    data = random_data(m=3, d=5, V=4, S=2, seed=41)
    for arr in (data.H, data.pi, data.P):
        with pytest.raises(ValueError):
            arr.setflags(write=True)
        with pytest.raises(ValueError):
            arr[...] = 0.0


def test_errors_of_cached_functions_are_not_chained_to_the_cache_lookup():
    data = ntp.NTPData(H=[[1.0], [1.0]], pi=[0.5, 0.5], P=[[0.7, 0.3, 0.0], [0.2, 0.8, 0.0]])
    with pytest.raises(NotCompatibleError) as info:
        ntp.finite_solution(data)
    assert info.value.__cause__ is None and info.value.__context__ is None
    with pytest.raises(InvalidDataError) as info:
        ntp.f_basis("not data")
    assert info.value.__context__ is None


@PROPERTY
@given(data=instances())
def test_property_nothing_returned_can_change_what_is_returned_next(data):
    """Every array a public function returns is read-only for good or a fresh copy."""
    W = np.ones((data.V, data.d))
    calls = [
        lambda: data.H,
        lambda: data.P,
        lambda: data.pi,
        lambda: data.support_mask,
        lambda: ntp.f_basis(data),
        lambda: ntp.project_F(data, W),
        lambda: ntp.project_F_perp(data, W),
        lambda: ntp.logits(data, W),
        lambda: ntp.ce_grad(data, W),
    ]
    if ntp.is_compatible(data):
        calls.append(lambda: ntp.finite_solution(data))
    if ntp.is_separable(data):
        calls += [
            lambda: ntp.ntp_svm(data),
            lambda: ntp.separating_direction(data),
            lambda: ntp.solve_ntp_svm(data).W,
            lambda: ntp.solve_ntp_svm(data).duals,
        ]
    for call in calls:
        first = call()
        before = first.copy()
        try:
            first.setflags(write=True)
            first[...] = 7  # only possible for a copy ...
        except ValueError:
            pass
        np.testing.assert_array_equal(call(), before)  # ... which changes nothing


@pytest.mark.parametrize("s", [1.0, 1e3])
def test_the_caches_do_not_keep_data_alive(s):
    """With max|H| = 1 the data are their own normalization: the cache must not refer to them."""
    import gc
    import weakref

    data = random_data(m=3, d=5, V=4, S=2, seed=42)
    data = scaled(data, s / np.abs(data.H).max())
    ntp.ntp_svm(data), ntp.finite_solution(data), ntp.is_separable(data)
    ref = weakref.ref(data)
    del data
    gc.collect()
    assert ref() is None


def test_the_nearest_power_of_two_divides_exactly():
    from ntpnb.linear._ntp_data import nearest_power_of_two

    assert [nearest_power_of_two(x) for x in (0.0, 1.0, 1.4, 1.5, 3.0, 0.3, 5e4)] == [
        1.0,
        1.0,
        1.0,
        2.0,
        4.0,
        0.25,
        65536.0,
    ]
