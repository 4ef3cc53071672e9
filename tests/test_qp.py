"""The shared convex-solve helpers: named solver, status checked, infeasibility returned."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from scipy import sparse

from ntpnb.errors import SolverError
from ntpnb.qp import min_norm_qp, solve_named


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
