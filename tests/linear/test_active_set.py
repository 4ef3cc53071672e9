"""The active-set NTP-SVM solver (ntpnb.linear._active_set): agreement with the cvxpy reference,
its answer checked independently, its linear algebra, and its errors."""

from __future__ import annotations

import numpy as np
import pytest

import ntpnb as ntp
from ntpnb import settings
from ntpnb.errors import SolverError
from ntpnb.linear._active_set import solve_active_set
from ntpnb.linear._constraints import ntp_constraints

from helpers import random_data


def reference(data: ntp.NTPData) -> ntp.SVMSolution:
    """The cvxpy (CLARABEL) solve of the NTP-SVM, one constraint per (context, token) pair."""
    sol = ntp.solve_ntp_svm(data, method="cvxpy")
    assert sol.solver == settings.QP_SOLVER
    return sol


INSTANCES = {
    "toy2d": lambda: ntp.toy2d_instance(0),
    "random-d>m": lambda: random_data(m=8, d=10, V=6, S=3, seed=11),
    "synthetic-d>m": lambda: ntp.synthetic_instance(n=2000, m=20, d=25, V=8, S=4, seed=5),
    "paper-size": lambda: ntp.synthetic_instance(),  # m=50, V=10, d=60, S=6
    # m > d: the Gram matrix H H^T is singular and the dual degenerate
    "synthetic-m>d": lambda: ntp.synthetic_instance(n=1000, m=40, d=30, V=8, S=2, seed=3),
    "synthetic-m>d-2": lambda: ntp.synthetic_instance(n=1000, m=50, d=40, V=10, S=3, seed=1),
    "random-m>d": lambda: random_data(m=30, d=20, V=10, S=3, seed=2),
    # singular blocks whose null spaces are independent: the active-set equations have full rank,
    # but their Schur part (~1 / sigma^2 = 5e4) and null-space part (~1) differ in scale
    "random-m>d-independent-null-spaces": lambda: ntp.random_instance(25, 15, 6, 2, np.random.default_rng(0)),
}


@pytest.mark.parametrize("make", INSTANCES.values(), ids=INSTANCES.keys())
def test_fast_solver_agrees_with_the_cvxpy_reference(make):
    data = make()
    ref = reference(data)
    fast = solve_active_set(data)
    scale = np.linalg.norm(ref.W)
    assert np.linalg.norm(fast.W - ref.W) <= 1e-6 * scale
    # the optimal value, and the margins of every constraint
    assert abs(np.sum(fast.W**2) - np.sum(ref.W**2)) <= 1e-6 * scale**2


def test_polished_reference_is_exact_where_the_solvers_multipliers_miss_the_active_set():
    """(m, V, d, S) = (100, 20, 120, 8) of the benchmarks: CLARABEL's multipliers name 763 active
    rows, one of them inactive; unpolished, its answer is 1.4e-7 from W^mm (relative). The
    polishing rounds find the 762 rows, and the two exact methods then agree to rounding."""
    from benchmarks.instances import gaussian_instance

    data = gaussian_instance(100, 20, 120, 8)
    ref, fast = reference(data), solve_active_set(data)
    assert ref.polished
    assert np.array_equal(ref.duals > 0, fast.duals > 0)
    assert np.linalg.norm(fast.W - ref.W) <= 1e-10 * np.linalg.norm(ref.W)


@pytest.mark.parametrize("make", INSTANCES.values(), ids=INSTANCES.keys())
def test_fast_solution_satisfies_the_constraint_matrices(make):
    """Checked through the sparse constraint matrices and the basis of F (not the solver's code)."""
    data = make()
    sol = solve_active_set(data)
    cons = ntp_constraints(data)
    w = sol.W.ravel()
    assert (cons.ineq @ w).min() >= 1 - 1e-9
    assert np.abs(cons.eq @ w).max(initial=0.0) <= 1e-9
    assert np.linalg.norm(ntp.project_F(data, sol.W)) <= 1e-9 * np.linalg.norm(sol.W)
    # the multipliers: nonnegative, zero off the active constraints, and W = P_perp(A^T lambda)
    assert sol.duals.shape == (cons.ineq.shape[0],)
    assert sol.duals.min() >= 0
    margins = cons.ineq @ w
    assert np.all(sol.duals[margins > 1 + 1e-6] == 0)
    W_dual = ntp.project_F_perp(data, (cons.ineq.T @ sol.duals).reshape(data.V, data.d))
    np.testing.assert_allclose(W_dual, sol.W, atol=1e-8 * np.abs(sol.W).max())


@pytest.mark.parametrize("scale", [1e-4, 1e4])
def test_fast_solver_is_exact_at_any_scale_of_h(scale):
    """W^mm(c H) = W^mm(H) / c, and the certificate is scale-free (the cvxpy reference is not)."""
    data = ntp.synthetic_instance(n=2000, m=20, d=25, V=8, S=4, seed=5)
    W1 = solve_active_set(data).W
    scaled = solve_active_set(ntp.NTPData(H=scale * data.H, pi=data.pi, P=data.P))
    np.testing.assert_allclose(scaled.W * scale, W1, atol=1e-10 * np.abs(W1).max())
    feasibility = (scaled.margin_violation, scaled.equality_violation, scaled.stationarity)
    assert all(
        v <= 1e-9 for v in (*feasibility, scaled.complementarity, scaled.dual_sign, abs(scaled.duality_gap))
    )


def test_full_supports_give_zero():
    data = ntp.NTPData(H=np.eye(2), pi=[0.5, 0.5], P=[[0.5, 0.5], [0.3, 0.7]])
    sol = solve_active_set(data)
    assert np.all(sol.W == 0) and sol.duals.size == 0


def test_non_separable_data_raise_instead_of_returning():
    """The non-separable example of tests/linear/test_separability.py: no W satisfies (6a)-(6b)."""
    data = ntp.NTPData(H=[[1.0], [2.0]], pi=[0.5, 0.5], P=[[0.6, 0.4, 0.0], [0.0, 0.4, 0.6]])
    with pytest.raises(SolverError):
        solve_active_set(data)


def test_iteration_cap_raises():
    with pytest.raises(SolverError, match="did not converge"):
        solve_active_set(ntp.synthetic_instance(), max_iter=2)
