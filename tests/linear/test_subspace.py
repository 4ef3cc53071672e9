"""The subspace F and the projections (compatibility and W*: test_separability.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import ntpnb as ntp

from helpers import all_pair_residuals


def test_F_basis_is_orthonormal_and_spans_the_generators(overparam_data):
    data = overparam_data
    B = ntp.f_basis(data).reshape(-1, data.V * data.d)
    np.testing.assert_allclose(B @ B.T, np.eye(B.shape[0]), atol=1e-12)
    # generic data with d > m: the sum_j (S_j - 1) generators are independent
    assert B.shape[0] == int(np.sum(data.support_sizes - 1))
    for j, support in enumerate(data.supports):
        for z, zp in itertools.combinations(support, 2):
            G = np.zeros((data.V, data.d))
            G[z], G[zp] = data.H[j], -data.H[j]
            np.testing.assert_allclose(ntp.project_F(data, G), G, atol=1e-12)


def test_projections_are_idempotent_complementary_and_orthogonal(overparam_data):
    data = overparam_data
    rng = np.random.default_rng(1)
    W = rng.standard_normal((data.V, data.d))
    PF, Pp = ntp.project_F(data, W), ntp.project_F_perp(data, W)
    np.testing.assert_allclose(PF + Pp, W, atol=1e-12)
    np.testing.assert_allclose(ntp.project_F(data, PF), PF, atol=1e-12)
    np.testing.assert_allclose(ntp.project_F_perp(data, Pp), Pp, atol=1e-12)
    assert abs(np.sum(PF * Pp)) < 1e-10
    # F-perp components leave every in-support logit difference unchanged (Eq. (6a))
    assert np.abs(all_pair_residuals(data, Pp) - all_pair_residuals(data, np.zeros_like(W))).max() < 1e-10


def test_one_hot_supports_give_F_zero():
    """Remark 1: with S_j = 1 the subspace F is {0} and W* = 0."""
    data = ntp.NTPData(H=np.eye(2), pi=[0.5, 0.5], P=[[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    assert ntp.f_basis(data).shape == (0, 3, 2)
    assert ntp.is_compatible(data)
    np.testing.assert_array_equal(ntp.finite_solution(data), np.zeros((3, 2)))
    W = np.ones((3, 2))
    np.testing.assert_array_equal(ntp.project_F_perp(data, W), W)


def test_project_R_keeps_what_the_loss_sees_and_what_gradients_move():
    """P_R is a projection; gradients and path points lie in R; the loss ignores R-perp."""
    rng = np.random.default_rng(3)
    data = ntp.random_instance(6, 9, 5, 3, rng)  # d > m: rowspace(H) is a proper subspace
    W = rng.standard_normal((data.V, data.d))
    PW = ntp.project_R(data, W)
    np.testing.assert_allclose(ntp.project_R(data, PW), PW, atol=1e-12)
    np.testing.assert_allclose(PW.sum(axis=0), 0.0, atol=1e-12)  # 1-perp
    assert np.linalg.norm(W - PW) > 0.5  # the complement is not trivial here
    np.testing.assert_allclose(ntp.ce_loss(data, PW), ntp.ce_loss(data, W), rtol=1e-12)
    g = ntp.ce_grad(data, W)
    np.testing.assert_allclose(ntp.project_R(data, g), g, atol=1e-12 * np.abs(g).max())
    W_B = ntp.regularization_path(data, [2.0]).W[0]
    np.testing.assert_allclose(ntp.project_R(data, W_B), W_B, atol=1e-10)


def test_project_R_refuses_a_matrix_of_the_wrong_shape():
    data = ntp.random_instance(4, 3, 5, 2, np.random.default_rng(0))
    with pytest.raises(ntp.errors.InvalidDataError, match=r"\(V, d\)"):
        ntp.project_R(data, np.ones((3, 3)))


def test_equality_operator_is_the_equality_matrix_and_its_transpose(overparam_data):
    from ntpnb.linear._constraints import ntp_constraints
    from ntpnb.linear._subspace import equality_operator

    data = overparam_data
    G, op = ntp_constraints(data).eq, equality_operator(data)
    rng = np.random.default_rng(1)
    w, mu = rng.standard_normal(G.shape[1]), rng.standard_normal(G.shape[0])
    np.testing.assert_allclose(op.matvec(w), G @ w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(op.rmatvec(mu), G.T @ mu, rtol=1e-12, atol=1e-12)


def test_the_doors_normalize_once_and_the_inner_functions_take_normalized_data_as_they_are(overparam_data):
    """``embedding_svd``, ``f_decomposition``, ``finite_solution`` and ``decide_separability`` are
    those of the normalized data (``H / c``, ``c`` a power of two), which their ``normalized_*``
    forms compute without normalizing again; ``W*`` and the singular values scale back exactly."""
    from ntpnb.linear._compatibility import normalized_finite_solution
    from ntpnb.linear._ntp_data import normalized
    from ntpnb.linear._separability import normalized_separability
    from ntpnb.linear._subspace import (
        embedding_svd,
        f_decomposition,
        normalized_embedding_svd,
        normalized_f_decomposition,
    )

    data = ntp.NTPData(H=overparam_data.H * 3.0, pi=overparam_data.pi, P=overparam_data.P)
    norm, c = normalized(data)
    assert c != 1.0 and norm is not data
    inner = normalized_embedding_svd(norm)
    assert embedding_svd(norm) is inner and embedding_svd(data).Vt is inner.Vt
    np.testing.assert_array_equal(embedding_svd(data).s, inner.s * c)
    assert f_decomposition(data) is normalized_f_decomposition(norm)
    np.testing.assert_array_equal(ntp.finite_solution(data), normalized_finite_solution(norm) / c)
    np.testing.assert_array_equal(ntp.finite_solution(norm), normalized_finite_solution(norm))
    assert ntp.decide_separability(data) is normalized_separability(norm)
