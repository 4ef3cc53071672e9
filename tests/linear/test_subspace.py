"""The subspace F, the projections, compatibility and the finite solution W*."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given

import ntpnb as ntp
from ntpnb.errors import NotCompatibleError, ScaleError

from helpers import PROPERTY, instances, log_scales, scaled


def all_pair_residuals(data: ntp.NTPData, W: np.ndarray) -> np.ndarray:
    """Residuals of Eq. (4) for *every* pair z != z' in S_j (not only against the anchor)."""
    out = []
    for j, support in enumerate(data.supports):
        logits = W @ data.H[j]
        for z, zp in itertools.permutations(support, 2):
            out.append(logits[z] - logits[zp] - np.log(data.P[j, z] / data.P[j, zp]))
    return np.array(out)


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


def test_incompatible_data_are_reported_not_solved():
    """Two contexts with one embedding and different odds: Eq. (4) has no solution."""
    data = ntp.NTPData(H=[[1.0], [1.0]], pi=[0.5, 0.5], P=[[0.7, 0.3, 0.0], [0.2, 0.8, 0.0]])
    assert not ntp.is_compatible(data)
    assert ntp.compatibility_residual(data) > 0.1
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


@pytest.mark.parametrize("size", [(20, 5, 25, 3), (50, 10, 30, 6), (100, 20, 60, 8), (60, 12, 80, 12)])
def test_lsqr_and_the_dense_svd_give_the_same_finite_solution(size):
    from benchmarks.instances import gaussian_instance
    from ntpnb.linear.ntp_data import normalized
    from ntpnb.linear.subspace import _solve_dense, _solve_lsqr

    data = normalized(gaussian_instance(*size))[0]  # both solve the normalized problem
    w_dense, res_dense = _solve_dense(data)
    w_lsqr, res_lsqr = _solve_lsqr(data)
    assert np.linalg.norm(w_lsqr - w_dense) <= LSQR_RTOL * np.linalg.norm(w_dense)
    assert max(res_dense, res_lsqr) <= 1e-10  # both compatible, far below COMPAT_RTOL * ||b||


def test_equality_operator_is_the_equality_matrix_and_its_transpose(overparam_data):
    from ntpnb.linear.constraints import ntp_constraints
    from ntpnb.linear.subspace import equality_operator

    data = overparam_data
    G, op = ntp_constraints(data).eq, equality_operator(data)
    rng = np.random.default_rng(1)
    w, mu = rng.standard_normal(G.shape[1]), rng.standard_normal(G.shape[0])
    np.testing.assert_allclose(op.matvec(w), G @ w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(op.rmatvec(mu), G.T @ mu, rtol=1e-12, atol=1e-12)


@pytest.fixture
def lsqr_only(monkeypatch):
    """Every W* of fresh data sets by LSQR (the dense SVD only for an empty system, no Gram matrix)."""
    from ntpnb import settings

    monkeypatch.setattr(settings, "F_DENSE_MAX_ENTRIES", 0)
    monkeypatch.setattr(settings, "F_GRAM_RCOND", np.inf)


@pytest.mark.parametrize("size", [(20, 5, 25, 3), (50, 10, 30, 6), (100, 20, 60, 8), (60, 12, 80, 12)])
def test_the_gram_matrix_of_the_rows_gives_the_finite_solution_of_the_svd(size):
    from benchmarks.instances import gaussian_instance
    from ntpnb.linear.ntp_data import normalized
    from ntpnb.linear.subspace import _solve_dense, _solve_gram

    data = normalized(gaussian_instance(*size))[0]
    w_dense, _ = _solve_dense(data)
    w_gram, res_gram = _solve_gram(data)
    assert np.linalg.norm(w_gram - w_dense) <= LSQR_RTOL * np.linalg.norm(w_dense)
    assert res_gram <= 1e-10


def test_the_gram_matrix_refuses_dependent_rows_and_the_svd_decides():
    """Two contexts with the same embedding and the same pair of tokens in their supports: the two
    rows of (4) are equal, and their right sides differ (incompatible)."""
    from ntpnb.linear.subspace import _solve_gram

    data = ntp.NTPData(H=[[1.0], [1.0]], pi=[0.5, 0.5], P=[[0.7, 0.3, 0.0], [0.2, 0.8, 0.0]])
    assert _solve_gram(data) is None
    assert not ntp.is_compatible(data) and ntp.compatibility_residual(data) > 0.1
    consistent = ntp.NTPData(H=[[1.0], [1.0]], pi=[0.5, 0.5], P=[[0.7, 0.3, 0.0], [0.7, 0.3, 0.0]])
    assert _solve_gram(consistent) is None and ntp.is_compatible(consistent)


def test_above_the_dense_limit_w_star_and_compatibility_come_from_lsqr(lsqr_only):
    from ntpnb.linear.subspace import uses_dense_f

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


def test_lsqr_reports_incompatible_data_not_solved(lsqr_only):
    data = ntp.NTPData(H=[[1.0], [1.0]], pi=[0.5, 0.5], P=[[0.7, 0.3, 0.0], [0.2, 0.8, 0.0]])
    assert not ntp.is_compatible(data)
    assert ntp.compatibility_residual(data) > 0.1
    with pytest.raises(NotCompatibleError, match="not NTP_H-compatible"):
        ntp.finite_solution(data)


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
