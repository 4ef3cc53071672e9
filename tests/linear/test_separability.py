"""The decisions of ntpnb.linear._separability: NTP-separability (Definition 2, the plane criterion of
chapter 1, the certified LP and its methods, the verified SVM witness, scale
invariance), then NTP_H-compatibility and the finite solution W*."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given
from scipy.optimize import linprog

import ntpnb as ntp
from ntpnb import settings
from ntpnb.errors import (
    InvalidDataError,
    NotCompatibleError,
    NotSeparableError,
    NumericallyAmbiguousError,
    ScaleError,
    SolverError,
)
from ntpnb.linear._compatibility import compatibility_residual
from ntpnb.linear._constraints import ntp_constraints
from ntpnb.linear._ntp_data import normalized, unambiguous
from ntpnb.linear._separability import (
    LEAST_DISTANCE_METHOD,
    WITNESS_METHOD,
    _decided,
    _free_directions,
    _from_embeddings,
    _from_least_distance,
    _from_witness,
    _MatrixRows,
    _sources,
    decide_by_newton,
    decide_separability,
)

from helpers import (
    PROPERTY,
    all_pair_residuals,
    instances,
    log_scales,
    margins_all_pairs,
    random_data,
    scaled,
)


def _separability(data: ntp.NTPData):
    """The LP chain's decision: ``H`` alone, the SVM witness, the LP of "auto", then those of "lp"."""
    norm = normalized(data)[0]
    lps = [s for method in ("auto", "lp") for s in _sources(norm, method) if isinstance(s, functools.partial)]
    return unambiguous(_decided(norm, (_from_embeddings, _from_witness, *lps)))


def test_separating_direction_satisfies_definition_2(overparam_data):
    data = overparam_data
    W = ntp.separating_direction(data)
    eq, ineq = margins_all_pairs(data, W)
    scale = 1 + np.abs(W).max()
    assert np.abs(eq).max() < 1e-7 * scale
    assert ineq.min() > 1 - 1e-7 * scale
    assert np.linalg.norm(W) >= np.linalg.norm(ntp.ntp_svm(data)) - 1e-9  # W^mm is the shortest


def test_separating_direction_is_the_shortest_with_equal_margins_when_h_has_full_row_rank():
    """No part ``1 u^T`` (columns sum to 0), and for full-row-rank ``H`` the minimum-norm ``W`` with
    every margin 1: checked against a least-squares solve of all (6a) and (6b) rows as equations."""
    data = random_data(m=6, d=9, V=7, S=3, seed=4)
    W = ntp.separating_direction(data)
    assert np.abs(W.sum(axis=0)).max() < 1e-12 * np.abs(W).max()
    cons = ntp_constraints(data)
    rows = np.vstack([cons.eq.toarray(), cons.ineq.toarray()])
    target = np.concatenate([np.zeros(cons.eq.shape[0]), np.ones(cons.ineq.shape[0])])
    shortest = np.linalg.lstsq(rows, target, rcond=None)[0]
    np.testing.assert_allclose(W.ravel(), shortest, atol=1e-10 * np.abs(shortest).max())


def test_non_separable_data_are_reported_not_solved():
    """d = 1: context 1 needs token 0 above token 2 and tokens 0 = 1, context 2 needs token 1
    above token 0. No W satisfies both."""
    data = ntp.NTPData(H=[[1.0], [2.0]], pi=[0.5, 0.5], P=[[0.6, 0.4, 0.0], [0.0, 0.4, 0.6]])
    assert ntp.is_compatible(data)
    assert not ntp.is_separable(data)
    with pytest.raises(NotSeparableError, match="not NTP-separable"):
        ntp.ntp_svm(data)
    with pytest.raises(NotSeparableError):
        ntp.separating_direction(data)


@pytest.mark.parametrize("seed", range(40))
def test_2d_separability_is_the_origin_inside_the_triangle(seed):
    """With the supports of Fig. 1, d = 2: separable iff 0 is a positive combination of h_A, h_B, h_C
    (necessity is proved in the first chapter; here both directions are checked on random triples)."""
    toy = ntp.toy2d_instance(0)
    H = np.random.default_rng(seed).standard_normal((3, 2))
    weights = np.linalg.solve(np.vstack([H.T, np.ones(3)]), [0.0, 0.0, 1.0])
    data = ntp.NTPData(H=H, pi=toy.pi, P=toy.P)
    assert ntp.is_separable(data) == bool(np.all(weights > 0))


@pytest.mark.parametrize(
    "H",
    [
        [[1.0, 0.0], [0.3, 1.0], [-2.0, 0.0]],  # h_A, h_C opposite: the origin on the edge AC
        [[1.0, 0.0], [0.0, 0.0], [-1.0, -1.0]],  # h_B = 0
        [[1.0, 1.0], [-2.0, -2.0], [3.0, 3.0]],  # all on one line through the origin
    ],
)
def test_fig1_supports_with_the_origin_not_strictly_inside_are_not_separable(H):
    """The degenerate cases of the plane theorem of chapter 1 (the LP must agree with the proof)."""
    toy = ntp.toy2d_instance(0)
    assert not ntp.is_separable(ntp.NTPData(H=H, pi=toy.pi, P=toy.P))


# ---------------------------------------------------------------------------------------------
# The methods agree around the threshold m ~ d


@pytest.mark.parametrize("seed", range(12))
def test_auto_and_the_lp_agree_around_the_threshold(seed):
    """Random sizes around the threshold m ~ d: the default decision, the LP chain's and the
    separating direction's constraints agree."""
    rng = np.random.default_rng(seed)
    m, V = int(rng.integers(5, 30)), int(rng.integers(3, 8))
    S, d = int(rng.integers(1, V)), int(rng.integers(1, m + 3))
    data = ntp.synthetic_instance(n=m * S + 50, m=m, d=d, V=V, S=S, seed=seed)
    answer = ntp.is_separable(data)
    assert answer == ntp.is_separable(data, method="lp")
    if answer:
        cons = ntp_constraints(data)
        w = ntp.separating_direction(data).ravel()
        assert (cons.ineq @ w).min() >= 1 - 1e-6 * (1 + np.abs(w).max())
        assert np.abs(cons.eq @ w).max(initial=0.0) <= 1e-6 * (1 + np.abs(w).max())


# ---------------------------------------------------------------------------------------------
# The decision: least squares, the certified LP (each method once), the verified SVM witness


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_phase_diagram_sized_instances_are_decided_with_a_certificate(seed):
    """m = 100, d = 16, V = 100, S = 4 (9600 inequalities), the size of the phase diagram: both
    seeds are not separable, decided with the multipliers as certificate (a plain feasibility LP
    runs for minutes on seed 1 and fails with status 4 on seed 0)."""
    data = ntp.synthetic_instance(n=500, m=100, d=16, V=100, S=4, seed=seed)
    sep = _separability(data)
    assert not sep.separable
    assert sep.bound <= settings.SEP_MARGIN_TOL  # the multipliers certify it
    assert not ntp.is_separable(data)


def test_overparameterized_data_are_separable_without_an_lp():
    """d >= m (Lemma 1): the least-squares direction is verified, no LP is solved; all its
    margins are equal."""
    data = random_data(m=6, d=9, V=7, S=3, seed=1)
    sep = _separability(data)
    assert sep.separable and sep.method == "least squares"
    W = ntp.separating_direction(data)
    cons = ntp_constraints(data)
    np.testing.assert_allclose(cons.ineq @ W.ravel(), 1.0, rtol=1e-12)
    assert np.abs(cons.eq @ W.ravel()).max() < 1e-12


def test_separable_data_below_d_equals_m_are_certified_by_the_lp():
    data = ntp.synthetic_instance(n=500, m=30, d=20, V=30, S=3, seed=2)
    sep = _separability(data)
    assert sep.separable and sep.method == settings.LP_METHOD
    assert sep.margin >= settings.LP_MARGIN_CAP * (1 - 1e-6)  # the LP stops at the cap
    W = ntp.separating_direction(data)
    cons = ntp_constraints(data)
    margins = cons.ineq @ W.ravel()
    assert margins.min() == pytest.approx(1.0, rel=1e-12)
    assert np.abs(cons.eq @ W.ravel()).max() < settings.SEP_EQUALITY_RTOL


def test_auto_solves_one_lp_chosen_by_size_and_lp_tries_each_method_once(monkeypatch):
    monkeypatch.setattr(settings, "LP_METHOD", "highs-ipm")
    monkeypatch.setattr(settings, "LP_FALLBACK_METHODS", ("highs-ds",))
    monkeypatch.setattr(settings, "LP_SMALL_METHOD", "highs-ds")
    monkeypatch.setattr(settings, "LP_SMALL_MAX_VARIABLES", 100)

    def lps(V: int, d: int, method: str = "auto") -> list[str]:
        data = random_data(m=3, d=d, V=V, S=1, seed=0)
        return [s.keywords["method"] for s in _sources(data, method) if isinstance(s, functools.partial)]

    assert lps(10, 10) == ["highs-ds"]
    assert lps(101, 1) == ["highs-ipm"]
    assert lps(10, 10, "lp") == lps(101, 1, "lp") == ["highs-ipm", "highs-ds"]


def test_both_lp_orders_give_the_same_certified_answers_and_direction(monkeypatch):
    """Sweep-sized instances (chapter 05): dual simplex first or IPM first, the same decisions,
    and ``separating_direction`` the interior-point method's point either way."""
    answers, directions, methods = {}, {}, {}
    for small_max in (0, 10_000):
        monkeypatch.setattr(settings, "LP_SMALL_MAX_VARIABLES", small_max)
        rng = np.random.default_rng(5)
        answers[small_max], directions[small_max], methods[small_max] = [], [], set()
        for d, V, S in [(4, 5, 2), (8, 5, 2), (12, 10, 3), (20, 10, 3), (14, 5, 1)]:
            data = ntp.random_instance(24, d, V, S, rng)
            sep = _separability(data)
            if sep.separable:
                assert sep.margin >= settings.SEP_MARGIN_TOL
                directions[small_max].append(ntp.separating_direction(data))
            else:
                assert sep.bound <= settings.SEP_MARGIN_TOL
            answers[small_max].append(sep.separable)
            methods[small_max].add(sep.method)
    assert answers[0] == answers[10_000] == [False, False, True, True, True]
    assert "highs-ds" not in methods[0] and methods[10_000] == {"highs-ds"}
    for W_ipm, W_small in zip(directions[0], directions[10_000], strict=True):
        np.testing.assert_array_equal(W_ipm, W_small)


def test_large_separable_data_are_decided_by_the_verified_svm_witness():
    """V d >= SVM_WITNESS_MIN_VARIABLES, m > d: W^mm from the fast solver decides, verified; the
    LP alone gives the same answer, and separating_direction is still the LP's point."""
    data = ntp.synthetic_instance(n=500, m=40, d=25, V=40, S=3, seed=1)
    assert data.V * data.d >= settings.SVM_WITNESS_MIN_VARIABLES and data.m > data.d
    sep = _separability(data)
    assert sep.separable and sep.method == WITNESS_METHOD
    assert sep.margin >= settings.SEP_MARGIN_TOL
    assert ntp.is_separable(data, method="lp")
    W = ntp.separating_direction(data)
    same = ntp.synthetic_instance(n=500, m=40, d=25, V=40, S=3, seed=1)
    lp_only = decide_separability(same, "lp")
    assert lp_only.method == settings.LP_METHOD
    cons = ntp_constraints(data)
    assert (cons.ineq @ W.ravel()).min() == pytest.approx(1.0, rel=1e-12)
    assert np.abs(cons.eq @ W.ravel()).max() < settings.SEP_EQUALITY_RTOL
    np.testing.assert_allclose(W, ntp.separating_direction(same))


def test_a_failing_lp_is_an_error_in_auto_and_falls_back_to_the_next_in_lp(monkeypatch):
    """The IPM stopped after one iteration, no least distance: "auto" (one LP) raises a SolverError
    that names the LP's failure, never an answer or an ambiguity; "lp" falls back to the simplex."""
    monkeypatch.setattr(settings, "LP_SMALL_MAX_VARIABLES", 0)  # the IPM first, even on 3 variables
    monkeypatch.setattr(settings, "LP_METHOD", "highs-ipm")
    monkeypatch.setattr(settings, "LP_OPTIONS", {"highs-ipm": {"presolve": False, "maxiter": 1}})
    monkeypatch.setattr(settings, "LEAST_DISTANCE_MAX_ENTRIES", 0)
    data = ntp.NTPData(H=[[1.0], [2.0]], pi=[0.5, 0.5], P=[[0.6, 0.4, 0.0], [0.0, 0.4, 0.6]])
    failed = r"max-margin LP did not solve.*highs-ipm \(linprog status 1: "
    with pytest.raises(SolverError, match=failed) as err:
        ntp.is_separable(data)
    assert not isinstance(err.value, NumericallyAmbiguousError)
    sep = decide_separability(data, "lp")
    assert not sep.separable and sep.method == "highs-ds"


# ---------------------------------------------------------------------------------------------
# Scale invariance, and agreement with an independent LP


TOY = ntp.toy2d_instance(0)


@pytest.mark.parametrize("s", [1e-300, 1e-9, 3e-9, 1e20, 1e300])
def test_separability_and_its_direction_do_not_depend_on_the_scale(s):
    """The decision and the direction do not depend on the scale of H: absolute tolerances reported
    H x 1e-9 and x 1e20 not separable, and at x 3e-9 passed a direction that broke (6a) by 0.77."""
    data = scaled(TOY, s)
    assert ntp.is_separable(data)
    W = ntp.separating_direction(data)
    cons = ntp_constraints(data)
    assert (cons.ineq @ W.ravel()).min() == pytest.approx(1.0, rel=1e-12)
    assert np.abs(cons.eq @ W.ravel()).max() <= settings.SEP_EQUALITY_RTOL


def independent_feasibility(data: ntp.NTPData) -> bool:
    """Definition 2 as the plain feasibility LP A w >= 1, G w = 0 of the original data, by dual
    simplex: a formulation and method other than the package's (fine on small instances)."""
    cons = ntp_constraints(data)
    if cons.ineq.shape[0] == 0:
        return True
    res = linprog(
        np.zeros(data.V * data.d),
        A_ub=-cons.ineq.toarray(),
        b_ub=-np.ones(cons.ineq.shape[0]),
        A_eq=cons.eq.toarray() if cons.eq.shape[0] else None,
        b_eq=np.zeros(cons.eq.shape[0]) if cons.eq.shape[0] else None,
        bounds=(None, None),
        method="highs-ds",
    )
    assert res.status in (0, 2), res.message
    return res.status == 0


@PROPERTY
@given(data=instances(), e=log_scales)
def test_property_separability_is_scale_invariant_and_agrees_with_an_independent_lp(data, e):
    answer = ntp.is_separable(data)
    assert answer == independent_feasibility(data)
    assert ntp.is_separable(scaled(data, 10.0**e)) == answer


# ---------------------------------------------------------------------------------------------
# The decision by least-distance programming (one NNLS), for the random instances of chapter 5


def _certified_least_distance(data: ntp.NTPData):
    """The least-distance decision of ``data`` and its certificate, checked independently."""
    norm = normalized(data)[0]
    decision = _decided(norm, (_from_embeddings, _from_least_distance))
    assert isinstance(decision, ntp.SeparabilityDecision)  # decided (neither unsure nor ambiguous)
    if decision.separable:  # a direction with a verified margin
        assert decision.margin >= settings.SEP_MARGIN_TOL
        if decision.method == LEAST_DISTANCE_METHOD:
            rows = _MatrixRows.of(norm)
            A, G = rows.A.M, rows.G.M
            w = decision.direction.ravel()
            assert (A @ w).min() >= decision.margin
            assert np.abs(G @ w).max(initial=0.0) <= settings.SEP_EQUALITY_RTOL * decision.margin
    else:  # multipliers bounding every normalized margin
        assert decision.bound <= settings.SEP_MARGIN_TOL
    return decision


@pytest.mark.parametrize(
    ("m", "V", "S"), [(12, 2, 1), (15, 5, 1), (12, 6, 2), (10, 6, 3), (10, 8, 6), (30, 10, 3)]
)
def test_least_distance_decides_as_the_lp_with_a_certificate(m, V, S):
    rng = np.random.default_rng(m + 10 * V + 100 * S)
    decided = set()
    for d in range(1, m + 2):
        for _ in range(3):
            data = ntp.random_instance(m, d, V, S, rng)
            decision = _certified_least_distance(data)
            assert decision.separable == _separability(data).separable
            if m <= 15:  # the plain feasibility LP fails to decide some larger instances
                assert decision.separable == independent_feasibility(data)
            assert ntp.is_separable(data) == decision.separable
            decided.add(decision.separable)
    assert decided == {True, False}


@PROPERTY
@given(data=instances(), e=log_scales)
def test_property_least_distance_agrees_with_the_lp_at_every_scale(data, e):
    answer = ntp.is_separable(data, method="lp")
    assert ntp.is_separable(data) == answer
    assert ntp.is_separable(scaled(data, 10.0**e)) == answer


def test_least_distance_hands_large_data_to_the_lp(monkeypatch):
    """Above LEAST_DISTANCE_MAX_ENTRIES the decision is the LP's, with the same answer."""
    data = ntp.random_instance(12, 5, 5, 2, np.random.default_rng(0))
    answer = ntp.is_separable(data)
    monkeypatch.setattr(settings, "LEAST_DISTANCE_MAX_ENTRIES", 10)
    fresh = ntp.NTPData(H=data.H.copy(), pi=data.pi, P=data.P)  # nothing cached
    assert decide_separability(fresh).method != LEAST_DISTANCE_METHOD
    assert ntp.is_separable(fresh) == answer


def test_free_directions_complement_f_and_the_constant_rows():
    data = normalized(ntp.random_instance(10, 6, 6, 3, np.random.default_rng(2)))[0]
    N = _free_directions(data)
    basis = ntp.linear._subspace.f_decomposition(data).basis
    ones = np.kron(np.ones((data.V, 1)), np.eye(data.d))  # W = 1 u^T
    assert N.shape == (data.V * data.d, data.V * data.d - basis.shape[0] - data.d)
    np.testing.assert_allclose(N.T @ N, np.eye(N.shape[1]), atol=1e-13)
    assert np.abs(basis @ N).max() < 1e-13 and np.abs(ones.T @ N).max() < 1e-13
    assert np.abs(ntp_constraints(data).eq @ N).max() < 1e-12  # (6a) holds along every column


def test_one_entry_refuses_an_unknown_method(overparam_data):
    for bad in ("simplex", "LP", None):
        with pytest.raises(InvalidDataError, match=r"method must be one of \('auto', .*'newton'\), got"):
            decide_separability(overparam_data, bad)
        with pytest.raises(InvalidDataError, match="method must be one of"):
            ntp.is_separable(overparam_data, method=bad)
    every = {method: decide_separability(overparam_data, method) for method in ntp.SEPARABILITY_METHODS}
    assert all(isinstance(dec, ntp.SeparabilityDecision) and dec.separable for dec in every.values())
    assert decide_by_newton(overparam_data).iterations > 0


# ---------------------------------------------------------------------------------------------
# NTP_H-compatibility (4) and the finite solution W*


def test_finite_solution_solves_every_compatibility_equation_and_lies_in_F(overparam_data):
    data = overparam_data
    assert ntp.is_compatible(data)
    W_star = ntp.finite_solution(data)
    assert np.abs(all_pair_residuals(data, W_star)).max() < 1e-10
    np.testing.assert_allclose(ntp.project_F(data, W_star), W_star, atol=1e-12)
    assert np.linalg.norm(ntp.project_F_perp(data, W_star)) < 1e-12


def test_finite_solution_is_the_unique_solution_in_F(overparam_data):
    """Adding any F-perp matrix keeps Eq. (4) satisfied; projecting back onto F recovers W*."""
    data = overparam_data
    W_star = ntp.finite_solution(data)
    rng = np.random.default_rng(0)
    N = ntp.project_F_perp(data, rng.standard_normal(W_star.shape))
    assert np.abs(all_pair_residuals(data, W_star + N)).max() < 1e-10
    np.testing.assert_allclose(ntp.project_F(data, W_star + N), W_star, atol=1e-10)


def test_incompatible_data_are_reported_not_solved():
    """Two contexts with one embedding and different odds: Eq. (4) has no solution."""
    data = ntp.NTPData(H=[[1.0], [1.0]], pi=[0.5, 0.5], P=[[0.7, 0.3, 0.0], [0.2, 0.8, 0.0]])
    assert not ntp.is_compatible(data)
    assert compatibility_residual(data) > 0.1
    with pytest.raises(NotCompatibleError, match="not NTP_H-compatible"):
        ntp.finite_solution(data)


def test_same_embedding_with_same_odds_is_compatible():
    data = ntp.NTPData(H=[[1.0], [1.0]], pi=[0.5, 0.5], P=[[0.7, 0.3, 0.0], [0.7, 0.3, 0.0]])
    assert ntp.is_compatible(data)
    assert np.abs(all_pair_residuals(data, ntp.finite_solution(data))).max() < 1e-12


def test_the_2d_example_is_compatible_although_underparameterized():
    data = ntp.toy2d_instance(0)
    assert data.d < data.m
    assert ntp.is_compatible(data)
    assert np.abs(all_pair_residuals(data, ntp.finite_solution(data))).max() < 1e-10


# ---------------------------------------------------------------------------------------------
# Extreme magnitudes: the exact W* or a named ScaleError, at any scale of H


def test_subnormal_embeddings_raise_a_scale_error_not_inf():
    """H = [[1e-310]]: the true W* = +-0.42 / 1e-310 is beyond float64, a ScaleError (never +-inf)."""
    data = ntp.NTPData(H=[[1e-310]], pi=[1.0], P=[[0.3, 0.7]])
    assert ntp.is_compatible(data)
    with pytest.raises(ScaleError, match="beyond the float64 range"):
        ntp.finite_solution(data)
    with pytest.raises(ScaleError):
        ntp.ntp_svm(ntp.NTPData(H=[[1e-310]], pi=[1.0], P=[[1.0, 0.0]]))


def test_huge_embeddings_are_compatible_with_the_exact_finite_solution():
    """H = [[1e308]] is compatible: the rank tolerance is relative and cannot overflow."""
    data = ntp.NTPData(H=[[1e308]], pi=[1.0], P=[[0.3, 0.7]])
    assert ntp.is_compatible(data)
    half = np.log(0.7 / 0.3) / 2
    np.testing.assert_allclose(ntp.finite_solution(data).ravel(), [-half / 1e308, half / 1e308], rtol=1e-14)
    np.testing.assert_allclose(
        ntp.ntp_svm(ntp.NTPData(H=[[1e308]], pi=[1.0], P=[[1.0, 0.0]])), [[0.5e-308], [-0.5e-308]], rtol=1e-12
    )


@PROPERTY
@given(data=instances(), e=log_scales)
def test_property_finite_solution_scales_like_one_over_s(data, e):
    s = 10.0**e
    big = scaled(data, s)
    assert ntp.is_compatible(big) == ntp.is_compatible(data)
    if ntp.is_compatible(data):
        W = ntp.finite_solution(data)
        np.testing.assert_allclose(
            ntp.finite_solution(big) * s, W, rtol=1e-8, atol=1e-10 * np.abs(W).max(initial=1)
        )


# The iterative W* (LSQR on the map W -> in-support logit differences) against the dense SVD.
# LSQR stops at relative tolerance F_LSQR_TOL = 1e-14 and the SVD solution is exact to rounding
# times the condition number of (4) on F; on these instances the two differ by at most 4e-12
# (measured), so 1e-9 leaves room for condition numbers up to about 1e5 and still fails on any
# solution outside F (a component in F-perp of relative size 1e-9 or more).
LSQR_RTOL = 1e-9


def _solve_dense(data: ntp.NTPData) -> tuple[np.ndarray, float]:
    """``vec(W*)`` and the residual of (4) from the SVD of the equality matrix at the decided ``dim F``."""
    from ntpnb.linear._subspace import f_decomposition

    dec = f_decomposition(data)
    b = ntp_constraints(data).eq_rhs
    coef = dec.U.T @ b
    return dec.basis.T @ (coef / dec.s), float(np.linalg.norm(b - dec.U @ coef))


@pytest.mark.parametrize("size", [(20, 5, 25, 3), (50, 10, 30, 6), (100, 20, 60, 8), (60, 12, 80, 12)])
def test_lsqr_and_the_dense_svd_give_the_same_finite_solution(size):
    from benchmarks.instances import gaussian_instance
    from ntpnb.linear._compatibility import _solve_lsqr
    from ntpnb.linear._ntp_data import normalized

    data = normalized(gaussian_instance(*size))[0]  # both solve the normalized problem
    w_dense, res_dense = _solve_dense(data)
    w_lsqr, res_lsqr = _solve_lsqr(data, ntp_constraints(data))
    assert np.linalg.norm(w_lsqr - w_dense) <= LSQR_RTOL * np.linalg.norm(w_dense)
    assert max(res_dense, res_lsqr) <= 1e-10  # both compatible, far below COMPAT_RTOL * ||b||


@pytest.fixture
def lsqr_only(monkeypatch):
    """Every W* of fresh data sets by LSQR (the dense SVD only for an empty system)."""
    from ntpnb import settings

    monkeypatch.setattr(settings, "F_DENSE_MAX_ENTRIES", 0)


@pytest.mark.parametrize("dense", [True, False])
def test_dependent_rows_are_decided_by_the_svd_and_by_lsqr(dense, monkeypatch):
    """Two contexts with the same embedding and the same pair of tokens in their supports: the two
    rows of (4) are equal, and their right sides differ (incompatible) or agree (compatible)."""
    if not dense:
        monkeypatch.setattr(settings, "F_DENSE_MAX_ENTRIES", 0)
    data = ntp.NTPData(H=[[1.0], [1.0]], pi=[0.5, 0.5], P=[[0.7, 0.3, 0.0], [0.2, 0.8, 0.0]])
    assert not ntp.is_compatible(data) and compatibility_residual(data) > 0.1
    with pytest.raises(NotCompatibleError, match="not NTP_H-compatible"):
        ntp.finite_solution(data)
    consistent = ntp.NTPData(H=[[1.0], [1.0]], pi=[0.5, 0.5], P=[[0.7, 0.3, 0.0], [0.7, 0.3, 0.0]])
    assert ntp.is_compatible(consistent) and compatibility_residual(consistent) < 1e-12


def test_above_the_dense_limit_w_star_and_compatibility_come_from_lsqr(lsqr_only):
    from ntpnb.linear._subspace import uses_dense_f

    data = ntp.toy2d_instance(0)
    assert not uses_dense_f(data) and ntp.is_compatible(data)
    W = ntp.finite_solution(data)
    assert np.abs(all_pair_residuals(data, W)).max() < 1e-10
    reference = ntp.toy2d_instance(0)  # the same data, a new object: its own cache
    with pytest.MonkeyPatch.context() as mp:
        from ntpnb import settings

        mp.setattr(settings, "F_DENSE_MAX_ENTRIES", 2**24)
        W_dense = ntp.finite_solution(reference)
    assert np.linalg.norm(W - W_dense) <= LSQR_RTOL * np.linalg.norm(W_dense)


def test_lsqr_scales_w_star_like_one_over_the_embeddings(lsqr_only):
    data = ntp.toy2d_instance(0)
    big = ntp.NTPData(H=data.H * 2.0**40, pi=data.pi, P=data.P)
    np.testing.assert_allclose(ntp.finite_solution(big) * 2.0**40, ntp.finite_solution(data), rtol=1e-12)


def test_lsqr_stops_with_an_error_at_its_iteration_limit(lsqr_only, monkeypatch):
    from ntpnb import settings
    from ntpnb.errors import SolverError

    monkeypatch.setattr(settings, "F_LSQR_MAX_ITER", 1)
    from benchmarks.instances import gaussian_instance

    with pytest.raises(SolverError, match="LSQR did not converge"):
        ntp.finite_solution(gaussian_instance(50, 10, 30, 6))
