"""The shared minimum-norm QP (ntpnb._qp): named solver, status checked, infeasibility returned,
polishing, the one certificate and the scale-back."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from scipy import sparse

import ntpnb as ntp
from ntpnb import settings
from ntpnb._qp import (
    LEAST_DISTANCE_SOLVER,
    MatrixConstraints,
    active_mask,
    certify,
    least_distance_nnls,
    min_norm_qp,
    polish,
    scaled_back,
    scaled_solution,
    solve_least_distance,
    solve_named,
    solve_reference,
)
from ntpnb.errors import RankAmbiguousError, ScaleError, SolverError
from ntpnb.linear._active_set import solve_active_set
from ntpnb.linear._constraints import NTPRows
from ntpnb.linear._ntp_data import normalized


def test_min_norm_qp_matches_the_closed_form():
    # min ||w||^2/2 s.t. a^T w >= 1: w = a / ||a||^2, lambda = 1 / ||a||^2
    a = np.array([[3.0, 4.0]])
    result = min_norm_qp(a, np.zeros((0, 2)), "a test")
    assert not result.infeasible
    np.testing.assert_allclose(result.w, a[0] / 25, atol=1e-9)
    np.testing.assert_allclose(result.lam, [1 / 25], atol=1e-9)


def test_min_norm_qp_with_sparse_equalities():
    A = sparse.csr_matrix([[1.0, 1.0, 0.0]])
    B = sparse.csr_matrix([[1.0, -1.0, 0.0]])  # w_0 = w_1
    result = min_norm_qp(A, B, "a test")
    np.testing.assert_allclose(result.w, [0.5, 0.5, 0.0], atol=1e-9)


def test_min_norm_qp_reports_infeasibility_instead_of_raising():
    A = np.array([[1.0], [-1.0]])  # w >= 1 and -w >= 1
    result = min_norm_qp(A, np.zeros((0, 1)), "a test")
    assert result.infeasible and result.w is None and result.lam is None


def test_solve_named_names_the_solver_and_the_problem_on_failure():
    x = cp.Variable()
    problem = cp.Problem(cp.Minimize(x), [x >= 0])
    with pytest.raises(SolverError, match="NO_SUCH_SOLVER failed on a test"):
        solve_named(problem, "NO_SUCH_SOLVER", {}, "a test")
    unbounded = cp.Problem(cp.Minimize(x))
    with pytest.raises(SolverError, match="status 'unbounded' on a test"):
        solve_named(unbounded, "CLARABEL", {}, "a test")


def test_an_inaccurate_status_is_our_error_without_cvxpy_s_warning():
    # one interior-point iteration ends inaccurate ("user_limit" in cvxpy 1.7, "optimal_inaccurate"
    # in older ones): the caller gets a SolverError that names the status, and no "Solution may be
    # inaccurate" UserWarning besides
    x = cp.Variable(3)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(x)), [np.array([[1.0, 2, 3], [3, 1, 2]]) @ x >= 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(SolverError, match=r"CLARABEL returned status '\w+' on a test"):
            solve_named(problem, "CLARABEL", {"max_iter": 1}, "a test")


def _inequalities(A):
    """The constraints ``A w >= 1`` with no equality."""
    none = np.zeros((0, A.shape[1]))
    return MatrixConstraints(A, none, none, "a test QP", (1, A.shape[1]))


# min ||w||^2 / 2 s.t. w_0 >= 1, w_1 >= 1, 0.6 (w_0 + w_1) + w_2 >= 1: the optimum is
# w = (1, 1, 0) with multipliers (1, 1, 0); the third row is inactive there (margin 1.2)
A3 = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.6, 0.6, 1.0]])
W3 = np.array([1.0, 1.0, 0.0])


@pytest.mark.parametrize(
    "lam",
    [
        np.array([1.0, 1.0, 0.0]),  # the exact active set
        np.array([1.0, 1.0, 0.3]),  # an inactive row named active (its multiplier comes out < 0)
        np.array([1.0, 0.0, 0.0]),  # an active row missed (its constraint is violated)
        np.array([0.0, 0.5, 0.4]),  # both: three rounds correct the set
    ],
)
def test_polish_reaches_the_exact_minimizer_from_a_wrong_active_set(lam):
    sol = polish(_inequalities(A3), lam, "test")
    assert sol.eq_duals.size == 0 and sol.polished and sol.solver == "test"
    np.testing.assert_allclose(sol.W.ravel(), W3, atol=1e-14)
    np.testing.assert_allclose(sol.duals, [1.0, 1.0, 0.0], atol=1e-14)  # KKT: w = A^T lambda


def test_polish_gives_up_without_an_active_row_or_when_the_rounds_do_not_settle(monkeypatch):
    assert polish(_inequalities(A3), np.zeros(3), "test") is None
    monkeypatch.setattr(settings, "POLISH_MAX_ROUNDS", 1)
    assert polish(_inequalities(A3), np.array([1.0, 0.0, 0.0]), "test") is None


def test_polish_agrees_with_the_qp_solver_on_a_random_problem():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((40, 12))
    A[:, 0] = np.abs(A[:, 0]) + 0.5  # feasible: w = t e_0 for large t
    result = min_norm_qp(A, np.zeros((0, 12)), "a test")
    sol = polish(_inequalities(A), result.lam, "test")
    w, full = sol.W.ravel(), sol.duals
    assert (A @ w).min() >= 1 - 1e-12 and full.min() >= 0
    np.testing.assert_allclose(w, A.T @ full, atol=1e-12)  # stationarity
    np.testing.assert_allclose(full * (A @ w - 1), 0, atol=1e-12)  # complementarity
    np.testing.assert_allclose(w, result.w, atol=1e-7)


def test_active_mask_counts_exact_multipliers_and_refuses_ambiguous_ones():
    lam = np.array([2.0, 0.0, 1e-3, 0.0, 3e-16])  # polished: exact zeros, rounding far below
    np.testing.assert_array_equal(active_mask(lam, what="x"), [True, False, True, False, False])
    near = np.array([1.0, 2 * settings.ACTIVE_DUAL_TOL, 0.0])  # which side holds on another machine?
    with pytest.raises(RankAmbiguousError, match=r"active set of the test QP .*2e-07"):
        active_mask(near, what="the test QP")
    np.testing.assert_array_equal(active_mask(near), [True, True, False])  # a start guess: no error
    assert not active_mask(np.zeros(3), what="x").any()


def test_polish_keeps_the_equalities_and_returns_their_multipliers():
    # min ||w||^2 / 2 s.t. w_0 + w_1 >= 1, w_0 - w_1 = 0: w = (1/2, 1/2), lambda = 1/2, mu = 0;
    # with w_2 >= 1 as well, lambda = 1; the row 2 w_2 >= 1 is inactive and its multiplier zero
    A = np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 2.0]])
    B = np.array([[1.0, -1.0, 0.0]])
    cons = MatrixConstraints(A, B, B, "a test QP", (1, 3))
    sol = polish(cons, np.array([0.4, 0.9, 1e-9]), "polish")
    np.testing.assert_allclose(sol.W.ravel(), [0.5, 0.5, 1.0], atol=1e-14)
    np.testing.assert_allclose(sol.duals, [0.5, 1.0, 0.0], atol=1e-14)
    assert sol.passes() and sol.stationarity < 1e-14 and sol.n_active == 2


# ---------------------------------------------------------------------------- the certificate
def test_certificate_is_tight():
    sol = solve_active_set(ntp.synthetic_instance())
    assert sol.margin_violation < 1e-10
    assert sol.equality_violation < 1e-10
    assert sol.dual_sign == 0.0
    assert sol.stationarity < 1e-10
    assert sol.complementarity < 1e-10
    assert abs(sol.duality_gap) < 1e-10


@pytest.mark.parametrize(
    ("factor", "broken"),
    [(0.99, "margin_violation"), (1.01, "duality_gap")],
)
def test_certificate_rejects_a_wrong_answer(factor, broken):
    """A shorter W violates margins; a longer one leaves a duality gap (and complementarity)."""
    data = ntp.synthetic_instance()
    sol = solve_active_set(data)
    cert = certify(NTPRows(data), factor * sol.W.ravel(), sol.duals, sol.eq_duals, "test", False)
    assert getattr(cert, broken) > 1e-3
    assert not cert.passes()


def test_certificate_rejects_a_point_outside_f_perp():
    data = ntp.synthetic_instance(n=2000, m=20, d=25, V=8, S=4, seed=5)
    sol = solve_active_set(data)
    F_dir = ntp.f_basis(data)[0]
    cert = certify(NTPRows(data), (sol.W + 0.1 * F_dir).ravel(), sol.duals, sol.eq_duals, "test", False)
    assert cert.equality_violation > 1e-3
    assert not cert.passes()


@pytest.mark.parametrize("s", [1e-3, 1.0, 1e3])
def test_svm_verification_rejects_an_answer_off_by_4e_4_at_any_scale(s):
    """Relative gap and complementarity tolerances: W^mm scaled by 1 + 4e-4 fails verification at
    every scale (absolute tolerances passed it at H x 1000)."""
    base = ntp.synthetic_instance(n=2000, m=20, d=25, V=8, S=4, seed=5)
    data = normalized(ntp.NTPData(H=base.H * s, pi=base.pi, P=base.P))[0]
    sol = ntp.solve_ntp_svm(data)
    assert sol.passes()
    off = certify(NTPRows(data), (1 + 4e-4) * sol.W.ravel(), sol.duals, sol.eq_duals, "test", False)
    assert not off.passes()
    assert off.duality_gap == pytest.approx(8e-4, rel=1e-2)
    assert off.complementarity == pytest.approx(4e-4, rel=1e-2)


def test_the_dual_sign_is_relative_to_the_largest_multiplier():
    """A negative multiplier counts against the largest one, so the test reads the same at every
    scale of the multipliers (they scale like 1 / c^2 with the data)."""
    cons = _inequalities(A3)
    for scale in (1e-12, 1.0, 1e12):
        lam = scale * np.array([1.0, 1.0, -1e-9])
        near = certify(cons, W3 * np.sqrt(scale), lam, np.zeros(0), "test", False)
        assert near.dual_sign == pytest.approx(1e-9)
        lam[2] = -1e-3 * scale
        assert certify(cons, W3, lam, np.zeros(0), "test", False).dual_sign == pytest.approx(1e-3)


# ---------------------------------------------------------------------------- scaling back
def test_scaled_back_divides_exactly_and_refuses_what_float64_cannot_hold():
    out = scaled_back(np.array([3.0, -1.0]), 2.0**10, 2, "x")
    np.testing.assert_array_equal(out, [3 * 2.0**-20, -(2.0**-20)])
    with pytest.raises(ScaleError, match="x lies outside the float64 range"):
        scaled_back(np.array([1.0]), 2.0**-600, 2, "x")  # 2^1200: overflow
    with pytest.raises(ScaleError):
        scaled_back(np.array([1.0]), 2.0**540, 2, "x")  # 2^-1080: flushed to zero
    with pytest.raises(ScaleError):
        scaled_back(np.array([1.0]), 2.0**530, 2, "x")  # 2^-1060: subnormal, 14 bits left
    assert scaled_back(np.array([1.0]), 2.0**512, 2, "x")[0] == 2.0**-1024  # subnormal, 50 bits left
    assert not scaled_back(np.zeros(2), 2.0**600, 2, "x").any()  # zero stays zero


def test_a_scaled_solution_names_what_does_not_fit():
    sol = solve_active_set(ntp.toy2d_instance(0))
    big = scaled_solution(sol, 2.0**100, 1, "max|H|")
    np.testing.assert_array_equal(big.W, sol.W / 2.0**100)
    np.testing.assert_array_equal(big.duals, sol.duals / 2.0**200)
    assert big.passes() and big.n_active == sol.n_active
    with pytest.raises(ScaleError, match=r"a multiplier of W\^mm \(it scales like 1 / max\|H\|\^2\)"):
        scaled_solution(sol, 2.0**600, 1, "max|H|")


# ---------------------------------------------------------------------------- least distance
def least_distance_multipliers(G: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, float] | None:
    """``lambda = u / (1 - h^T u)`` and ``1 - h^T u`` as solve_least_distance reads them."""
    found = least_distance_nnls(G, h)
    if found is None:
        return None
    u, slack = found
    return (u / slack, slack) if slack > 0 else None


def test_least_distance_matches_the_closed_form():
    # min ||x||^2/2 s.t. a^T x >= 2: x = 2 a / ||a||^2, lambda = 2 / ||a||^2, ||x||^2 = 4 / 25
    lam, slack = least_distance_multipliers(np.array([[3.0, 4.0]]), np.array([2.0]))
    np.testing.assert_allclose(lam, [2 / 25], rtol=1e-14)
    assert slack == pytest.approx(1 / (1 + 4 / 25), rel=1e-14)  # 1 - h^T u = 1 / (1 + ||x||^2)


def test_least_distance_of_infeasible_constraints_has_a_slack_at_the_rounding_level():
    # x >= 1 and -x >= 1 have no solution: 1 - h^T u is 0 up to rounding, or negative
    found = least_distance_multipliers(np.array([[1.0], [-1.0]]), np.ones(2))
    assert found is None or found[1] <= 8 * np.finfo(float).eps


def _random_qp(seed: int, n_eq: int) -> MatrixConstraints:
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((30, 12))
    A[:, 0] += 4.0  # feasible (w = e_1 / 2 nearly is), with some rows inactive
    B = rng.standard_normal((n_eq, 12))
    B[:, 0] = 0.0
    return MatrixConstraints(A, B, B, "a random QP", (3, 4))


@pytest.mark.parametrize("n_eq", [0, 3])
@pytest.mark.parametrize("seed", range(5))
def test_least_distance_agrees_with_the_conic_solver(seed, n_eq):
    cons = _random_qp(seed, n_eq)
    fast = solve_least_distance(cons)
    ref = solve_reference(cons, lambda r: AssertionError(f"infeasible: {r.status}"))
    assert fast is not None and fast.solver == LEAST_DISTANCE_SOLVER and fast.passes()
    assert fast.polished and fast.n_active == ref.n_active < cons.n_ineq  # some rows inactive
    np.testing.assert_allclose(fast.W, ref.W, rtol=0, atol=1e-12 * np.abs(ref.W).max())
    np.testing.assert_allclose(fast.duals, ref.duals, rtol=0, atol=1e-10 * ref.duals.max())


def test_least_distance_gives_way_when_unsure(monkeypatch):
    # infeasible, or a minimum norm above max_norm (nearly infeasible in normalized units): None,
    # and the conic solver decides; no inequality: W = 0
    infeasible = MatrixConstraints(np.array([[1.0], [-1.0]]), np.zeros((0, 1)), np.zeros((0, 1)), "x", (1, 1))
    assert solve_least_distance(infeasible) is None
    far = MatrixConstraints(np.array([[1e-2, 0.0]]), np.zeros((0, 2)), np.zeros((0, 2)), "far", (1, 2))
    assert solve_least_distance(far).W.ravel()[0] == pytest.approx(100.0, rel=1e-13)
    monkeypatch.setattr(settings, "LEAST_DISTANCE_MAX_NORM", 10.0)
    assert solve_least_distance(far) is None
    none = MatrixConstraints(np.zeros((0, 2)), np.zeros((0, 2)), np.zeros((0, 2)), "none", (1, 2))
    np.testing.assert_array_equal(solve_least_distance(none).W, np.zeros((1, 2)))
