"""Graph-SVM verification, W^cyc (exact vs a second solver vs GD from zero), the regularization path."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from attention_instances import general_instance

from ntpnb import optim, settings
from ntpnb.attention import (
    acyclic_dataset,
    correlation,
    cyclic_correction,
    graph_constraints,
    graph_svm,
    identity_head,
    log_loss_features,
    loss_value,
    make_problem,
    project_scyc,
    random_embeddings,
    regularization_path,
    solve_cyclic_correction,
    solve_graph_svm,
    token_priority_graphs,
    train,
)
from ntpnb.errors import InfeasibleGraphSVMError, InvalidDataError, NotSeparableError, SolverError


@pytest.mark.parametrize("seed", range(4))
def test_graph_svm_is_verified_and_feasible(seed):
    E, data = general_instance(seed)
    graphs = token_priority_graphs(data)
    sol = solve_graph_svm(E, graphs)
    assert sol.passes() and sol.solver == settings.QP_SOLVER
    A, B = graph_constraints(E, graphs)
    w = sol.W.ravel()
    assert (A @ w).min() >= 1 - 1e-8
    assert np.abs(B @ w).max() <= 1e-8
    # a second method: scipy's SLSQP on the same QP from a feasible start reaches the same norm
    from scipy.optimize import minimize

    res = minimize(
        lambda v: 0.5 * v @ v,
        2 * w,
        jac=lambda v: v,
        constraints=[{"type": "ineq", "fun": lambda v: A @ v - 1}, {"type": "eq", "fun": lambda v: B @ v}],
        method="SLSQP",
        options={"ftol": 1e-12, "maxiter": 500},
    )
    assert abs(np.linalg.norm(res.x) - np.linalg.norm(w)) <= 1e-5 * np.linalg.norm(w)


def test_graph_svm_on_acyclic_data_has_no_equalities():
    E = random_embeddings(8, 8, 1)
    X, y, _ = acyclic_dataset(8, 4, 6, 2)
    graphs = token_priority_graphs(X, y, 8)
    A, B = graph_constraints(E, graphs)
    assert B.shape[0] == 0 and A.shape[0] > 0
    np.testing.assert_allclose(graph_svm(E, X, y), solve_graph_svm(E, graphs).W)


def test_infeasible_graph_svm_raises():
    # d = 1: tokens 0 and 1 with embeddings +1, -1 and query 2 with embedding 1. Sample 1 needs
    # score(0) > score(1), i.e. 2 W > 0; sample 2 (query 3 = -1) with the same order needs
    # -2 W > 0 as well, and the orders are forced by two graphs: infeasible.
    E = np.array([[1.0], [-1.0], [1.0], [1.0]])
    X = [[0, 1, 2], [1, 0, 2]]
    y = [0, 1]
    with pytest.raises(InfeasibleGraphSVMError) as err:
        graph_svm(E, X, y)
    assert isinstance(err.value, NotSeparableError)


def test_graph_svm_without_strict_relations_is_zero():
    E = random_embeddings(3, 4, 0)
    X, y = [[0, 1, 2], [1, 0, 2], [2, 0, 2]], [0, 1, 2]  # G(2) is one SCC {0, 1, 2}
    assert token_priority_graphs(X, y, 3).n_strict == 0
    np.testing.assert_array_equal(graph_svm(E, X, y), np.zeros((4, 4)))


@pytest.mark.parametrize("seed", range(3))
def test_cyclic_correction_is_verified_and_orthogonal_to_w_mm(seed):
    E, data = general_instance(seed)
    cyc = solve_cyclic_correction(E, data)
    assert cyc.dim > 0 and cyc.grad_norm <= settings.CONVEX_KKT_TOL and cyc.min_curvature > 0
    np.testing.assert_allclose(project_scyc(cyc.W, cyc.basis), cyc.W, atol=1e-12)
    W_mm = graph_svm(E, data)
    assert abs(np.sum(W_mm * cyc.W)) <= 1e-9 * np.linalg.norm(W_mm) * np.linalg.norm(cyc.W)
    # Lemma 2's proof: the cyclic risk ignores every direction orthogonal to S_cyc
    feats = log_loss_features(E, cyc.subdataset.data)
    R = np.random.default_rng(seed).standard_normal((8, 8))
    R -= project_scyc(R, cyc.basis)
    f0 = feats.value_grad_hess(cyc.W.ravel())[0]
    assert abs(feats.value_grad_hess((cyc.W + 5 * R).ravel())[0] - f0) <= 1e-12


@pytest.mark.parametrize("seed", range(2))
def test_cyclic_correction_matches_clarabel_and_gd_from_zero(seed):
    E, data = general_instance(seed)
    cyc = solve_cyclic_correction(E, data)
    sub = cyc.subdataset.data
    # second solver: the exponential-cone form of the same convex problem in S_cyc coordinates
    feats = log_loss_features(E, sub, cyc.basis)
    z = cp.Variable(cyc.dim)
    terms = []
    for i in range(sub.n):
        a = feats.delta[i][feats.other[i]] @ z - feats.log_copies[i]
        terms.append(cp.log_sum_exp(cp.hstack([0, a])))
    prob = cp.Problem(cp.Minimize(sum(terms) / sub.n))
    prob.solve(solver="CLARABEL")
    assert prob.status == cp.OPTIMAL
    W_cvx = (cyc.basis.T @ z.value).reshape(8, 8)
    assert np.linalg.norm(W_cvx - cyc.W) <= 1e-5 * max(1.0, np.linalg.norm(cyc.W))
    # the paper's method: plain GD from zero on the cyclic sub-dataset converges to it
    p = make_problem(E, identity_head(E), sub)
    trace = train(p, optim.gd(1.0), 20000, record_at=np.array([20000]))
    assert np.linalg.norm(trace.W[0] - cyc.W) <= 1e-6
    assert cyc.loss <= loss_value(trace.W, p)[0] + 1e-12


def test_cyclic_correction_of_acyclic_data_is_zero():
    E = random_embeddings(8, 8, 3)
    X, y, _ = acyclic_dataset(8, 4, 6, 4)
    np.testing.assert_array_equal(cyclic_correction(E, X, y), np.zeros((8, 8)))


def test_regularization_path_is_a_verified_kkt_point_and_aligns():
    E, data = general_instance(5)
    W_mm = graph_svm(E, data)
    cyc = solve_cyclic_correction(E, data)
    path = regularization_path(E, data, radii=[2.0, 8.0, 32.0])
    for pt in path:
        assert abs(np.linalg.norm(pt.W) - pt.R) <= 1e-6 * pt.R and pt.kkt_residual <= settings.RP_KKT_TOL
    corrs = [correlation(pt.W, W_mm) for pt in path]
    dists = [np.linalg.norm(project_scyc(pt.W, cyc.basis) - cyc.W) for pt in path]
    assert corrs[0] < corrs[1] < corrs[2] and dists[2] < dists[0]
    # a second method at R = 8: CLARABEL on the constrained problem in the same coordinates
    feats = log_loss_features(E, data)
    w = cp.Variable(64)
    terms = [
        cp.log_sum_exp(cp.hstack([0, feats.delta[i][feats.other[i]] @ w - feats.log_copies[i]]))
        for i in range(data.n)
    ]
    prob = cp.Problem(cp.Minimize(sum(terms) / data.n), [cp.norm(w) <= 8.0])
    prob.solve(solver="CLARABEL")
    assert np.linalg.norm(w.value.reshape(8, 8) - path[1].W) <= 1e-4 * 8.0


def test_regularization_path_bad_inputs():
    E, data = general_instance(0)
    with pytest.raises(InvalidDataError, match="radii"):
        regularization_path(E, data, radii=[-1.0])
    E3 = random_embeddings(3, 4, 0)
    with pytest.raises(SolverError, match="finite minimizer"):  # W^mm = 0: ||W_R|| stays bounded
        regularization_path(E3, [[0, 1, 2], [1, 0, 2], [2, 0, 2]], [0, 1, 2], radii=[1e3])
