"""The max-norm NTP-SVM W^inf (ntpnb.linear._max_norm_svm): answers by hand, a second solver, the
least-norm point of a face, its certificates, scale and errors."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import ntpnb as ntp
from ntpnb import settings
from ntpnb.errors import NotSeparableError
from ntpnb.linear._constraints import ntp_constraints


def one_context(h):
    """One context followed by token 0 only, over V = 2 tokens: the constraint (e_0 - e_1)^T W h >= 1."""
    return ntp.NTPData(H=np.array([h], dtype=float), pi=[1.0], P=[[1.0, 0.0]])


def test_by_hand_where_it_differs_from_the_frobenius_svm():
    # W_0 - W_1 = u with u . h >= 1: ||W||_max = ||u||_max / 2 at best, least at u = (1, 1) / 1.5
    sol = ntp.max_norm_svm(one_context([1.0, 0.5]))
    assert sol.value == pytest.approx(1 / 3, rel=1e-9)
    assert sol.W == pytest.approx(np.array([[1, 1], [-1, -1]]) / 3, abs=1e-8)
    W_mm = ntp.ntp_svm(one_context([1.0, 0.5]))  # along h instead
    assert np.sum(W_mm * sol.W) / (np.linalg.norm(W_mm) * np.linalg.norm(sol.W)) == pytest.approx(
        1.5 / np.sqrt(2.5), rel=1e-7
    )


def test_on_a_face_the_point_of_least_frobenius_norm():
    # h = (1, 0): u_1 >= 1 and any |u_2| <= 1 are optimal; the least-norm point has u_2 = 0
    sol = ntp.max_norm_svm(one_context([1.0, 0.0]))
    assert sol.value == pytest.approx(0.5, rel=1e-9)
    assert sol.W == pytest.approx(np.array([[0.5, 0.0], [-0.5, 0.0]]), abs=1e-8)


@pytest.fixture(scope="module")
def synthetic():
    return ntp.synthetic_instance(n=400, m=6, d=8, V=4, S=2, seed=3)


def test_certified_and_equal_to_a_second_solver(synthetic):
    sol = ntp.max_norm_svm(synthetic)
    assert sol.gap <= settings.SVM_GAP_TOL and sol.violation <= settings.SVM_FEAS_TOL
    cons = ntp_constraints(synthetic)
    w = sol.W.ravel()
    assert (cons.ineq @ w).min() >= 1 - 1e-7 and np.abs(cons.eq @ w).max() <= 1e-7
    assert np.abs(w).max() == pytest.approx(sol.value, rel=1e-8)
    # cvxpy's conic solver on the max-norm problem itself, and the least-norm point by a small
    # Frobenius penalty on it (which tends to the face's least-norm point as it vanishes)
    x = cp.Variable(w.size)
    constraints = [cons.ineq @ x >= 1, cons.eq @ x == 0]
    cp.Problem(cp.Minimize(cp.norm_inf(x)), constraints).solve(solver="CLARABEL")
    assert np.abs(x.value).max() == pytest.approx(sol.value, rel=1e-7)
    cp.Problem(cp.Minimize(cp.norm_inf(x) + 1e-6 * cp.sum_squares(x)), constraints).solve(solver="CLARABEL")
    assert np.sum(x.value * w) / (np.linalg.norm(x.value) * np.linalg.norm(w)) > 1 - 1e-6
    # no feasible point has a smaller max-norm than the certified bound
    assert sol.lower_bound <= sol.value and sol.lower_bound == pytest.approx(sol.value, rel=1e-7)


def test_scales_like_one_over_the_embeddings_and_refuses_inseparable_data(synthetic):
    sol = ntp.max_norm_svm(synthetic)
    bigger = ntp.NTPData(H=8 * synthetic.H, pi=synthetic.pi, P=synthetic.P)
    assert ntp.max_norm_svm(bigger).W == pytest.approx(sol.W / 8, rel=1e-6, abs=1e-12)
    # two contexts along one line with the same support but opposite orders: no W separates
    inseparable = ntp.NTPData(H=[[1.0], [-1.0]], pi=[0.5, 0.5], P=[[1.0, 0.0], [1.0, 0.0]])
    with pytest.raises(NotSeparableError):
        ntp.max_norm_svm(inseparable)
