"""Near-duplicate and scaled embeddings: every separability and compatibility answer agrees with the
package's definition checks on the same data, or names the numerical ambiguity with its numbers.

Context 1 is context 0 moved by ``rel ||h_0||`` in a random direction, with other supports and
log-odds: exact duplicates (``rel = 0``) are neither separable nor compatible, and any
``rel > 0`` makes them both in exact arithmetic when ``d >= m``, with ``||W|| ~ 1 / rel``.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

import ntpnb as ntp
from ntpnb import settings
from ntpnb.errors import NotCompatibleError, NotSeparableError, NumericallyAmbiguousError, SolverError
from ntpnb.linear._active_set import solve_active_set
from ntpnb.linear._compatibility import _accurate_residual, compatibility_residual
from ntpnb.linear._constraints import NTPRows, ntp_constraints
from ntpnb.linear._loss import kl_divergence
from ntpnb.linear._ntp_data import normalized
from ntpnb.linear._separability import SEPARABILITY_METHODS, decide_separability

NEAR = hypothesis_settings(max_examples=25, deadline=None, derandomize=True, database=None)

#: A number in scientific notation, as the ambiguity messages print them.
NUMBER = re.compile(r"\d(\.\d+)?e[-+]\d+")

#: Context 0: tokens {0, 1}; context 1: tokens {0, 1, 2} with other odds (the two conflict when
#: their embeddings coincide: l_0 = l_2 for context 1, l_0 > l_2 for context 0).
FIRST_TWO = np.array([[0.3, 0.7, 0.0], [0.6, 0.2, 0.2]])

#: The methods that weigh the evidence by the module's rules ("newton" decides to SEP_MARGIN_TOL).
METHODS = tuple(method for method in SEPARABILITY_METHODS if method != "newton")


def near_duplicates(m: int, d: int, V: int, rel: float, seed: int, row_exponents=None) -> ntp.NTPData:
    """``m`` contexts in ``R^d``, contexts 0 and 1 a relative ``rel`` apart; others random."""
    rng = np.random.default_rng(seed)
    H = rng.standard_normal((m, d))
    u = rng.standard_normal(d)
    H[1] = H[0] + rel * np.linalg.norm(H[0]) * u / np.linalg.norm(u)
    P = np.zeros((m, V))
    P[:2, :3] = FIRST_TWO
    for j in range(2, m):
        support = rng.choice(V, size=int(rng.integers(1, V)), replace=False)
        P[j, support] = rng.uniform(0.2, 1.0, size=support.size)
    if row_exponents is not None:
        H = H * 10.0 ** np.asarray(row_exponents, dtype=float)[:, None]
    return ntp.NTPData(H=H, pi=np.full(m, 1.0 / m), P=P / P.sum(axis=1, keepdims=True))


def _verified_residual(data: ntp.NTPData, w: np.ndarray) -> float:
    """An upper bound on the exact ``||G w - b||`` of (4) at ``w``."""
    return sum(_accurate_residual(ntp_constraints(data), w))


def full_rank_solve(data: ntp.NTPData, logits: np.ndarray) -> np.ndarray | None:
    """The minimum-norm ``W`` with ``H W^T = logits`` from every positive singular value of ``H``
    (no rank cut), computed here from ``H`` alone; None when ``d < m``."""
    if data.m > data.d:
        return None
    U, s, Vt = np.linalg.svd(data.H, full_matrices=False)
    keep = s > 0
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        W = (Vt[keep].T @ ((U[:, keep].T @ logits) / s[keep, None])).T
    return W if np.all(np.isfinite(W)) else None


def assert_names_its_numbers(err: NumericallyAmbiguousError) -> None:
    text = str(err)
    assert "numerically ambiguous" in text
    assert len(NUMBER.findall(text)) >= 2, text


def restricted_kl(data: ntp.NTPData, W: np.ndarray) -> float:
    """``sum_j pi_j KL(p_j || softmax restricted to S_j)``: zero iff ``W`` solves (4)."""
    L = np.where(data.support_mask, data.H @ W.T, -np.inf)
    logq = L - L.max(axis=1, keepdims=True)
    logq = logq - np.log(np.exp(logq).sum(axis=1, keepdims=True))
    logp = np.log(data.P, where=data.support_mask, out=np.zeros_like(data.P))
    terms = np.where(data.support_mask, data.P * (logp - np.where(data.support_mask, logq, 0.0)), 0.0)
    return float(data.pi @ terms.sum(axis=1))


# ---------------------------------------------------------------------------- the checks
def separability_answer(data: ntp.NTPData) -> bool | None:
    """``is_separable`` by every method: the same answer, or the named ambiguity (None); never both
    True and False."""
    answers = set()
    for method in METHODS:
        try:
            answers.add(ntp.is_separable(data, method=method))
        except NumericallyAmbiguousError as err:
            assert_names_its_numbers(err)
            answers.add(None)
    assert not {True, False} <= answers, answers
    decided = answers - {None}
    return decided.pop() if decided else None


def check_separability(data: ntp.NTPData) -> bool | None:
    """The answer agrees with the definition checks on the same data (see the module docstring)."""
    answer = separability_answer(data)
    if answer is None:
        with pytest.raises(NumericallyAmbiguousError):
            ntp.is_separable(data)
    elif answer:
        sol = ntp.solve_ntp_svm(data)
        assert sol.passes()
        W = ntp.ntp_svm(data)
        assert NTPRows(data).margins(W.ravel()).min(initial=np.inf) >= 1 - 10 * settings.SVM_FEAS_TOL
        tol = min(settings.SVM_FEAS_TOL, 0.1 / (1.0 + np.abs(W).max()))
        assert ntp.satisfies_definition_2(data, W, tol)
    else:
        sep = decide_separability(data)
        assert sep.bound <= 2 * sep.resolution  # the certificate, to float64's resolution
        with pytest.raises(NotSeparableError):
            ntp.ntp_svm(data)
        W = full_rank_solve(data, data.support_mask.astype(float))
        if W is not None:
            for tol in (1e-9, settings.SVM_FEAS_TOL, 1e-3):
                assert not ntp.satisfies_definition_2(data, W, tol)
    return answer


def check_compatibility(data: ntp.NTPData, separable: bool | None) -> None:
    """``is_compatible`` agrees with ``compatibility_residual``, ``finite_solution`` and the loss."""
    try:
        answer = ntp.is_compatible(data)
    except NumericallyAmbiguousError as err:
        assert_names_its_numbers(err)
        with pytest.raises(NumericallyAmbiguousError):
            ntp.finite_solution(data)
        return
    tol = settings.COMPAT_RTOL * max(1.0, float(np.linalg.norm(ntp_constraints(data).eq_rhs)))
    if answer:
        W = ntp.finite_solution(data)
        assert compatibility_residual(data) <= tol
        assert _verified_residual(data, W.ravel()) <= tol
        assert restricted_kl(data, W) <= tol
        if separable:  # both: the loss approaches the entropy along W* + R W^mm
            W_mm, rows = ntp.ntp_svm(data), NTPRows(data)
            behind = max(0.0, -float(rows.margins(W.ravel()).min(initial=0.0)))  # W*'s worst margin
            R = (40.0 + behind) / rows.margins(W_mm.ravel()).min(initial=1.0)
            assert kl_divergence(data, W + R * W_mm) <= 1e-8
    else:
        assert compatibility_residual(data) > tol
        with pytest.raises(NotCompatibleError):
            ntp.finite_solution(data)
        logits = np.log(np.where(data.support_mask, data.P, 1.0))
        W = full_rank_solve(data, logits)
        if W is not None:
            assert _verified_residual(data, W.ravel()) > tol  # no W from H alone solves (4)


# ---------------------------------------------------------------------------- properties
relative_distances = st.one_of(st.just(0.0), st.floats(-16.0, -4.0).map(lambda e: 10.0**e))


@st.composite
def near_duplicate_data(draw) -> ntp.NTPData:
    m = draw(st.integers(2, 6))
    return near_duplicates(
        m=m,
        d=draw(st.integers(1, 8)),
        V=draw(st.integers(3, 5)),
        rel=draw(relative_distances),
        seed=draw(st.integers(0, 2**20)),
    )


@st.composite
def scaled_data(draw) -> ntp.NTPData:
    """Near duplicates (or not) with each row, or the whole ``H``, scaled by ``10^k``, ``|k| <= 150``."""
    m = draw(st.integers(2, 5))
    if draw(st.booleans()):
        exponents = draw(st.lists(st.integers(-150, 150), min_size=m, max_size=m))
    else:
        exponents = [draw(st.integers(-150, 150))] * m
    return near_duplicates(
        m=m,
        d=draw(st.integers(1, 6)),
        V=draw(st.integers(3, 4)),
        rel=draw(st.one_of(st.just(1.0), relative_distances)),
        seed=draw(st.integers(0, 2**20)),
        row_exponents=exponents,
    )


@NEAR
@given(data=near_duplicate_data())
def test_property_near_duplicates_are_decided_as_the_definitions_say_or_named_ambiguous(data):
    check_compatibility(data, check_separability(data))


@NEAR
@given(data=scaled_data())
def test_property_scaled_embeddings_are_decided_as_the_definitions_say_or_named_ambiguous(data):
    check_compatibility(data, check_separability(data))


# ---------------------------------------------------------------------------- the faults
@pytest.mark.parametrize(("m", "d"), [(3, 4), (6, 8)])
@pytest.mark.parametrize("rel", [1e-6, 1e-7, 1e-8])
def test_near_duplicates_within_float64_reach_are_separable_and_the_svm_succeeds(m, d, rel):
    """A condition number of 1e6 to 1e8 is far inside float64: is_separable said True and ntp_svm
    raised SolverError (1e-6), or is_separable raised SolverError (1e-7, 1e-8)."""
    data = near_duplicates(m, d, 3, rel, seed=0)
    assert all(ntp.is_separable(data, method=method) for method in METHODS)
    sol = ntp.solve_ntp_svm(data)
    assert sol.passes() and sol.solver == "ntpnb-active-set"
    assert np.linalg.norm(sol.W) > 0.1 / rel  # W^mm grows like one over the distance
    check_separability(data)


@pytest.mark.parametrize(("m", "d", "seed"), [(3, 4, 0), (3, 3, 1), (6, 8, 0), (6, 8, 2), (6, 4, 3)])
def test_near_duplicates_at_1e_10_are_never_reported_inseparable_or_incompatible(m, d, seed):
    """They were reported False with certainty: the rank cut at RANK_GAP threw away the direction
    that separates them (a W from H alone has every margin >= 0.999). Now True, or the named
    ambiguity with its numbers; where d >= m they are compatible in exact arithmetic too."""
    data = near_duplicates(m, d, 3, 1e-10, seed=seed)
    if m <= d:
        for method in METHODS:
            try:
                assert ntp.is_separable(data, method=method)
            except NumericallyAmbiguousError as err:
                assert_names_its_numbers(err)
        try:
            assert ntp.is_compatible(data)
        except NumericallyAmbiguousError as err:
            assert_names_its_numbers(err)
    check_compatibility(data, check_separability(data))


def test_the_ambiguity_says_by_how_much():
    data = near_duplicates(3, 4, 3, 1e-10, seed=0)
    with pytest.raises(NumericallyAmbiguousError, match=r"verified normalized margin 5\.\d+e-11") as sep:
        ntp.is_separable(data)
    assert "beyond float64's reach" in str(sep.value)
    with pytest.raises(NumericallyAmbiguousError, match="numerically ambiguous") as comp:
        ntp.is_compatible(data)
    residual = r"residual of \(4\) of \d\S* \(rounding included\) against the tolerance \S+; "
    resolved = r"float64 resolves 3 singular values of the row-normalized equations, down to 3\.\d+e-"
    assert re.search(residual + resolved + "11 ", str(comp.value))
    no_candidate = r"no candidate W\* exists at dim F because its rank is not determined in float64; "
    with pytest.raises(NumericallyAmbiguousError, match=no_candidate + resolved + "10 "):
        ntp.is_compatible(near_duplicates(3, 4, 3, 1e-9, seed=0))
    with pytest.raises(NumericallyAmbiguousError):
        ntp.ntp_svm(data)  # a SolverError, as before: never a W^mm that fails its verification
    undecided = near_duplicates(4, 3, 3, 1e-12, seed=0)  # no direction verified, no bound within rho
    bound = r"certified bound on every normalized margin \S+ \(.+\); float64 resolves normalized margins to"
    with pytest.raises(NumericallyAmbiguousError, match=r"numerically ambiguous.*none verified.*" + bound):
        ntp.is_separable(undecided)


def test_an_unverified_square_root_answer_names_its_form(monkeypatch):
    monkeypatch.setattr(settings, "SVM_GAP_TOL", -1.0)  # no answer can pass
    with pytest.raises(SolverError, match=r"\(the square-root form\) failed verification"):
        solve_active_set(near_duplicates(3, 4, 3, 1e-6, seed=0))  # K unresolved by Cholesky


@pytest.mark.parametrize(("m", "d"), [(3, 4), (6, 8), (6, 4)])
def test_exact_duplicates_with_different_supports_are_neither_separable_nor_compatible(m, d):
    data = near_duplicates(m, d, 3, 0.0, seed=0)
    assert not any(ntp.is_separable(data, method=method) for method in METHODS)
    assert not ntp.is_compatible(data)
    with pytest.raises(NotSeparableError):
        ntp.ntp_svm(data)
    with pytest.raises(NotCompatibleError):
        ntp.finite_solution(data)
    check_compatibility(data, check_separability(data))


def test_rows_scaled_apart_are_never_reported_inseparable():
    """Separability does not depend on the scale of each row; a W^mm of 1e150 is beyond float64."""
    for exponents in ([-150, -150, 0], [0, 0, 150], [150, 150, -150]):
        data = near_duplicates(3, 4, 3, 1e-3, seed=0, row_exponents=exponents)
        try:
            assert ntp.is_separable(data)
        except NumericallyAmbiguousError as err:
            assert "beyond float64's reach" in str(err)


# ---------------------------------------------------------------------------- the parts
def test_square_root_active_set_solves_near_duplicates_the_dual_in_k_cannot():
    """K = H H^T has condition 1e14 at a relative distance 1e-7: the square-root form."""
    data = normalized(near_duplicates(6, 8, 3, 1e-7, seed=0))[0]
    sol = solve_active_set(data)
    assert sol.passes()
    margins = NTPRows(data).margins(sol.W.ravel())
    assert margins.min() >= 1 - settings.SVM_FEAS_TOL
    assert np.sum(sol.duals > 0) >= 1


def test_definition_2_check_refuses_a_tolerance_beyond_the_unit_margin():
    """A W of norm 1e14 (from H alone at a relative distance 1e-14) broke (6a) by 1e-2 and passed
    at tol = 1e-3, which allowed residuals of 1e11."""
    data = near_duplicates(6, 8, 3, 1e-14, seed=0)
    W = full_rank_solve(data, data.support_mask.astype(float))
    assert np.abs(W).max() > 1e12
    assert not ntp.satisfies_definition_2(data, W, 1e-3)
    good = near_duplicates(6, 8, 3, 1e-6, seed=0)
    W = ntp.ntp_svm(good)
    assert ntp.satisfies_definition_2(good, W, 0.1 / (1 + np.abs(W).max()))
    assert not ntp.satisfies_definition_2(good, W, 10.0 / (1 + np.abs(W).max()))
