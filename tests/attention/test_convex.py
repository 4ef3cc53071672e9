"""The exact convex solves (ntpnb.attention._convex): W^cyc (exact vs a second solver vs GD from
zero) and the regularization path (verified KKT points, the caller's order, the real cause of a
radius out of reach)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from ntpnb import _optim as optim
from ntpnb import settings
from ntpnb.attention import (
    acyclic_dataset,
    as_token_data,
    correlation,
    identity_head,
    loss_and_grad,
    make_problem,
    project_scyc,
    random_embeddings,
    regularization_path,
    solve_cyclic_correction,
    train,
)
from ntpnb.attention._convex import log_loss_features
from ntpnb.errors import InvalidDataError, SolverError

from attention_instances import general_instance, w_mm


@pytest.mark.parametrize("seed", range(3))
def test_cyclic_correction_is_verified_and_orthogonal_to_w_mm(seed):
    E, data = general_instance(seed)
    cyc = solve_cyclic_correction(E, data)
    assert cyc.dim > 0 and cyc.grad_norm <= settings.CONVEX_KKT_TOL and cyc.min_curvature > 0
    np.testing.assert_allclose(project_scyc(cyc.W, cyc.basis), cyc.W, atol=1e-12)
    W_mm = w_mm(E, data)
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
    assert cyc.loss <= loss_and_grad(trace.W, p)[0][0] + 1e-12


def test_cyclic_correction_of_acyclic_data_is_zero():
    E = random_embeddings(8, 8, 3)
    X, y, _ = acyclic_dataset(8, 4, 6, 4)
    np.testing.assert_array_equal(solve_cyclic_correction(E, as_token_data(X, y, 8)).W, np.zeros((8, 8)))


# ---------------------------------------------------------------------------------------------
# The regularization path


def test_regularization_path_is_a_verified_kkt_point_and_aligns():
    E, data = general_instance(5)
    W_mm = w_mm(E, data)
    cyc = solve_cyclic_correction(E, data)
    path = regularization_path(E, data, radii=[2.0, 8.0, 32.0])
    for W, R, kkt in zip(path.W, path.radii, path.kkt, strict=True):
        assert abs(np.linalg.norm(W) - R) <= 1e-6 * R and kkt <= settings.RP_KKT_TOL
    corrs = [correlation(W, W_mm) for W in path.W]
    dists = [np.linalg.norm(project_scyc(W, cyc.basis) - cyc.W) for W in path.W]
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
    assert np.linalg.norm(w.value.reshape(8, 8) - path.W[1]) <= 1e-4 * 8.0


def test_regularization_path_bad_inputs():
    E, data = general_instance(0)
    with pytest.raises(InvalidDataError, match="radii"):
        regularization_path(E, data, radii=[-1.0])
    E3 = random_embeddings(3, 4, 0)
    with pytest.raises(SolverError, match="finite minimizer"):  # W^mm = 0: ||W_R|| stays bounded
        regularization_path(E3, as_token_data([[0, 1, 2], [1, 0, 2], [2, 0, 2]], [0, 1, 2], 3), radii=[1e3])


def _chapter6_acyclic():
    """Chapter 07's acyclic instance (the notebook's first draws from seed 0)."""
    rng = np.random.default_rng(0)
    E = random_embeddings(8, 8, rng)
    X, y, _ = acyclic_dataset(8, 4, 6, rng)
    return E, as_token_data(X, y, 8)


def test_path_keeps_the_callers_order():
    E, data = _chapter6_acyclic()
    radii = [8.0, 0.5, 2.0]
    path = regularization_path(E, data, radii=radii)
    assert path.radii.tolist() == radii
    alone = regularization_path(E, data, radii=[2.0])
    assert np.linalg.norm(path.W[2] - alone.W[0]) <= 1e-6 * 2.0


def test_path_reaches_r_150_on_chapter_6_data():
    # a relative stopping rule: an absolute floor of 1e-15 on Newton's gradient stops the path at
    # ||W|| ~ 128 and blames "||W_lam|| stays below R = 150: the risk has a finite minimizer"
    E, data = _chapter6_acyclic()
    W_mm = w_mm(E, data)
    path = regularization_path(E, data, radii=[150.0, 10.0])
    assert path.radii.tolist() == [150.0, 10.0]
    for kkt, norm_error in zip(path.kkt, path.norm_error, strict=True):
        assert kkt <= settings.RP_KKT_TOL and norm_error <= settings.RADIUS_RTOL
    assert correlation(path.W[0], W_mm) > correlation(path.W[1], W_mm) > 0.97
    assert 1 - correlation(path.W[0], W_mm) < 1e-3


def test_path_names_the_real_cause():
    E3 = random_embeddings(3, 4, 0)
    X, y = [[0, 1, 2], [1, 0, 2], [2, 0, 2]], [0, 1, 2]  # no strict relation
    with pytest.raises(SolverError, match=r"no strict relation.*finite minimizer"):
        regularization_path(E3, as_token_data(X, y, 3), radii=[1e3])
    E, data = general_instance(1000)
    R = 100 * np.linalg.norm(w_mm(E, data))
    with pytest.raises(SolverError, match="float64 resolves"):
        regularization_path(E, data, radii=[R])


@pytest.mark.parametrize("seed", range(3))
def test_general_paths_beyond_float64_fail_with_the_reason(seed):
    # the cyclic terms stay of order one, so their rounding limits the path to ~20 ||W^mm||;
    # beyond, a SolverError says so (never a raw ValueError of Brent's method)
    E, data = general_instance(seed)
    n = np.linalg.norm(w_mm(E, data))
    assert regularization_path(E, data, radii=[20 * n]).kkt[0] <= settings.RP_KKT_TOL
    for ratio in (30, 60):
        with pytest.raises(SolverError, match="float64 resolves"):
            regularization_path(E, data, radii=[ratio * n])
