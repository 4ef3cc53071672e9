"""The shared convex-solve helpers: named solver, status checked, infeasibility returned, polishing."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from scipy import sparse

from ntpnb import settings
from ntpnb.errors import RankAmbiguousError, SolverError
from ntpnb.qp import active_mask, min_norm_qp, polish_active_set, solve_named


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


def _equality_solver(A):
    """``solve_on`` for rows ``A`` with no equality constraints: ``w = A_act^T nu``, ``A_act w = 1``."""

    def solve_on(active):
        M = A[active]
        nu = np.linalg.solve(M @ M.T, np.ones(active.size))
        return M.T @ nu, nu

    return solve_on


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
    w, full = polish_active_set(_equality_solver(A3), lambda w: A3 @ w, lam)
    np.testing.assert_allclose(w, W3, atol=1e-14)
    np.testing.assert_allclose(full, [1.0, 1.0, 0.0], atol=1e-14)  # KKT: w = A^T lambda


def test_polish_gives_up_without_an_active_row_or_when_the_rounds_do_not_settle(monkeypatch):
    assert polish_active_set(_equality_solver(A3), lambda w: A3 @ w, np.zeros(3)) is None
    monkeypatch.setattr(settings, "POLISH_MAX_ROUNDS", 1)
    assert polish_active_set(_equality_solver(A3), lambda w: A3 @ w, np.array([1.0, 0.0, 0.0])) is None


def test_polish_agrees_with_the_qp_solver_on_a_random_problem():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((40, 12))
    A[:, 0] = np.abs(A[:, 0]) + 0.5  # feasible: w = t e_0 for large t
    result = min_norm_qp(A, np.zeros((0, 12)), "a test")
    w, full = polish_active_set(_equality_solver(A), lambda w: A @ w, result.lam)
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
