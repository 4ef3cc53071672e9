"""The Gram form of the regularization path against the orthonormal one, piece by piece and whole."""

from __future__ import annotations

import numpy as np
import pytest

import ntpnb as ntp
from ntpnb.errors import InvalidDataError
from ntpnb.linear import _regpath as rp
from ntpnb.linear import _regpath_gram as rg
from ntpnb.linear._ntp_data import normalized

from helpers import random_data


@pytest.fixture(scope="module")
def medium() -> ntp.NTPData:
    """d > m: full row rank, separable; supports of 3 of 6 tokens."""
    return random_data(m=12, d=20, V=6, S=3, seed=11)


def orthonormal_path(data: ntp.NTPData, radii) -> ntp.RegularizationPath:
    """The path solved in orthonormal bases even where the Gram form applies."""
    saved = rp._gram_form_fits
    rp._gram_form_fits = lambda svd, m: False
    try:
        return ntp.regularization_path(data, radii)
    finally:
        rp._gram_form_fits = saved


def to_gram(data: ntp.NTPData, theta: np.ndarray) -> np.ndarray:
    """Orthonormal coordinates (alpha, beta) of a point of the split -> Gram coordinates (normalized data)."""
    ds, gs = rp.path_structure(data), rg.gram_structure(data)
    delta, perp = (x.reshape(data.V, data.d) for x in ds.matrices(theta))
    C = np.linalg.solve(gs.K, data.H @ delta.T)  # delta = C^T H
    L = data.H @ perp.T
    ref = np.sum(np.where(data.support_mask, data.P * L, 0.0), axis=1)
    mu = np.where(data.support_mask, 0.0, ref[:, None] - L)
    return np.concatenate([gs.f_basis.T @ C.ravel(), mu[~data.support_mask]])


# ---------------------------------------------------------------------------- the decision
def test_full_row_rank_data_use_the_gram_form_and_the_others_do_not(medium):
    assert rp.uses_gram_form(medium)
    assert rp.uses_gram_form(ntp.synthetic_instance(seed=0))  # m = 50, d = 60
    assert not rp.uses_gram_form(ntp.toy2d_instance(0))  # m = 3 > d = 2
    # a nearly dependent row: full rank, but K too ill-conditioned for products with K^{-1}
    H = medium.H.copy()
    H[1] = H[0] + 1e-5 * H[1]
    assert not rp.uses_gram_form(ntp.NTPData(H=H, pi=medium.pi, P=medium.P))


# ---------------------------------------------------------------------------- the pieces
def test_products_with_k_of_coefficients_on_the_supports_match_the_dense_product(medium):
    gs = rg.gram_structure(medium)
    rng = np.random.default_rng(3)
    C = np.where(medium.support_mask, rng.standard_normal((2, medium.m, medium.V)), 0.0)
    np.testing.assert_allclose(rg._k_times_f(gs.supports, C), gs.K @ C, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(rg._k_times_f(gs.supports, C[0]), gs.K @ C[0], rtol=1e-13, atol=1e-14)


def test_projections_match_the_orthonormal_basis_of_F(medium):
    gs = rg.gram_structure(medium)
    rng = np.random.default_rng(1)
    X = rng.standard_normal((3, medium.m, medium.V))  # three coefficient matrices ...
    X -= X.mean(axis=2, keepdims=True)  # ... of matrices in R (zero column sums)
    C = rg._f_map(gs.supports, gs.K @ X)[0]
    assert np.all(C[:, ~medium.support_mask] == 0)
    np.testing.assert_allclose(C.sum(axis=2), 0.0, atol=1e-12)  # zero row sums: in F
    for x, c in zip(X, C, strict=True):
        W = x.T @ medium.H
        np.testing.assert_allclose(c.T @ medium.H, ntp.project_F(medium, W), atol=1e-11)
        # the F-perp part of W, given by its coefficients off the supports alone
        perp = W - ntp.project_F(medium, W)
        L = medium.H @ perp.T
        ref = np.sum(np.where(medium.support_mask, medium.P * L, 0.0), axis=1)
        margins = np.where(medium.support_mask, 0.0, ref[:, None] - L)
        np.testing.assert_allclose(gs.perp_map(x[None])[0], margins, atol=1e-10)


@pytest.mark.parametrize("seed", [11, 12])
def test_w_star_of_the_gram_form_is_the_finite_solution(seed):
    """W* from the supports' blocks of K agrees with the general solver (the Gram matrix of (4))."""
    data = random_data(m=12, d=20, V=6, S=3, seed=seed)
    gs = rg.gram_structure(data)
    W_ref = ntp.finite_solution(data)
    np.testing.assert_allclose(gs.W_star, W_ref, rtol=0, atol=1e-12 * np.abs(W_ref).max())
    np.testing.assert_allclose(gs.C_star.T @ data.H, gs.W_star, rtol=0, atol=1e-15 * np.abs(W_ref).max())
    assert np.all(gs.C_star[~data.support_mask] == 0)
    np.testing.assert_allclose(gs.C_star.sum(axis=1), 0.0, atol=1e-12 * np.abs(gs.C_star).max())


def test_coordinates_norms_and_matrices_agree_with_the_orthonormal_ones(medium):
    medium = normalized(medium)[0]  # the structures of the path are those of normalized data
    ds, gs = rp.path_structure(medium), rg.gram_structure(medium)
    rng = np.random.default_rng(2)
    x_d, y_d = rng.standard_normal((2, ds.n_f + ds.n_perp))
    x_g, y_g = to_gram(medium, x_d), to_gram(medium, y_d)
    assert gs.n_f == ds.n_f and gs.n_f + gs.n_perp == x_g.size
    assert gs.inner(x_g, y_g) == pytest.approx(ds.inner(x_d, y_d), rel=1e-11)
    np.testing.assert_allclose(gs.block_norms(x_g), ds.block_norms(x_d), rtol=1e-12)
    (f_g, perp_g), (f_d, perp_d) = gs.matrices(x_g), ds.matrices(x_d)
    np.testing.assert_allclose(f_g, f_d, atol=1e-12)
    np.testing.assert_allclose(perp_g, perp_d, atol=1e-11)
    np.testing.assert_allclose(
        to_gram(medium, np.concatenate([ds.w_star, np.zeros(ds.n_perp)]))[: gs.n_f], gs.w_star, atol=1e-12
    )


@pytest.mark.parametrize("B", [0.3, 40.0, 400.0])
def test_gradient_and_newton_solve_agree_with_the_dense_hessian(medium, B):
    """Where the F part of the path is far below the rounding of W (B = 400: about 1e-40), the
    F part of Newton's step keeps its relative accuracy."""
    path = orthonormal_path(medium, [B])
    end = path._end
    data, state = end.data, end.state
    ds, gs = rp.path_structure(data), rg.gram_structure(data)
    split = rp._theta(ds, state, False)
    ev_d = ds.evaluate(data, split, hessian=True)
    ev_g = gs.evaluate(data, to_gram(data, split), hessian=True)
    assert ev_g.loss.kl == pytest.approx(ev_d.loss.kl, rel=1e-12)
    grad_g = to_gram(data, ev_d.grad)
    np.testing.assert_allclose(ev_g.grad, grad_g, rtol=0, atol=1e-9 * np.abs(grad_g).max())
    # both right-hand sides of a Newton step, 5% off the minimizer
    lam = state.lam * 1.05
    w = rp._theta(ds, state, True)
    resid = ev_d.grad + lam * state.theta
    if not state.direct:
        resid[: ds.n_f] += lam * ds.w_star
    R_d = np.column_stack([resid, w])
    X_d = ds.solve(ev_d, lam, R_d)
    X_g = gs.solve(ev_g, lam, np.column_stack([to_gram(data, c) for c in R_d.T]))
    for k in range(2):
        for ref, got in zip(ds.matrices(X_d[:, k]), gs.matrices(X_g[:, k]), strict=True):  # F, F-perp
            assert np.linalg.norm(got - ref) <= 1e-9 * np.linalg.norm(ref)


# ---------------------------------------------------------------------------- the whole path
@pytest.mark.parametrize(
    "data",
    [
        pytest.param(random_data(m=12, d=20, V=6, S=3, seed=11), id="medium"),
        pytest.param(random_data(m=8, d=8, V=5, S=1, seed=4), id="one-hot"),
        pytest.param(random_data(m=10, d=10, V=7, S=2, seed=5), id="square-H"),
    ],
)
def test_the_path_agrees_with_the_orthonormal_form_far_below_double_resolution(data):
    """The same minimizers, certified both ways, to 1e-10 relative, at radii where CE - H and
    P_F(W_B) - W* are hundreds of orders of magnitude below the entries of W_B."""
    radii = np.geomspace(1e-3, 300 * np.linalg.norm(ntp.ntp_svm(data)), 12)
    gram = ntp.regularization_path(data, radii)
    dense = orthonormal_path(data, radii)
    assert gram._end.workspace.factors is not None and dense._end.workspace.factors is None
    for name in ("lam", "kl", "out_mass", "f_distance"):
        np.testing.assert_allclose(getattr(gram, name), getattr(dense, name), rtol=1e-10, err_msg=name)
    np.testing.assert_allclose(gram.W, dense.W, rtol=0, atol=1e-12 * radii.max())
    scale = np.maximum(dense.f_distance, 1e-300)[:, None, None]
    np.testing.assert_allclose(gram.f_offset / scale, dense.f_offset / scale, atol=1e-9)
    assert max(gram.kkt.max(), gram.kkt_f.max(), gram.kkt_perp.max()) <= 1e-8
    np.testing.assert_array_equal(gram.newton_iterations, dense.newton_iterations)


def test_a_context_whose_support_is_the_whole_vocabulary_in_the_gram_form(medium):
    P = medium.P.copy()
    P[0] = np.linspace(1.0, 2.0, medium.V) / np.linspace(1.0, 2.0, medium.V).sum()
    data = ntp.NTPData(H=medium.H, pi=medium.pi, P=P)
    assert rp.uses_gram_form(data) and data.support_mask[0].all()
    path = ntp.regularization_path(data, [0.5, 1.0, 10.0, 100.0])
    assert max(path.kkt.max(), path.kkt_f.max(), path.kkt_perp.max()) <= 1e-8
    np.testing.assert_allclose(path.lam, orthonormal_path(data, path.radii).lam, rtol=1e-10)


# ---------------------------------------------------------------------------- continuing a path
@pytest.mark.parametrize("instance", ["toy", "medium"])
def test_a_path_continued_from_its_end_is_the_path_of_all_radii(instance, medium):
    data = {"toy": ntp.toy2d_instance(0), "medium": medium}[instance]
    radii = np.geomspace(0.5, 200.0, 8)
    whole = ntp.regularization_path(data, radii)
    first = ntp.regularization_path(data, radii[:5])
    rest = ntp.regularization_path(data, radii[5:], start=first)
    for name in ("W", "lam", "kl", "f_offset", "f_distance", "newton_iterations"):
        np.testing.assert_array_equal(getattr(rest, name), getattr(whole, name)[5:], err_msg=name)
    np.testing.assert_array_equal(rest.radii, radii[5:])
    # a continuation of the continuation, and on a copy of the same data
    again = ntp.regularization_path(ntp.NTPData(H=data.H, pi=data.pi, P=data.P), [300.0], start=rest)
    np.testing.assert_array_equal(again.W[0], ntp.regularization_path(data, [*radii, 300.0]).W[-1])


def test_a_bad_start_is_rejected(medium):
    first = ntp.regularization_path(medium, [1.0, 2.0])
    with pytest.raises(InvalidDataError, match="beyond its last radius"):
        ntp.regularization_path(medium, [2.0, 3.0], start=first)
    other = random_data(m=12, d=20, V=6, S=3, seed=12)
    with pytest.raises(InvalidDataError, match="other data"):
        ntp.regularization_path(other, [3.0], start=first)
    with pytest.raises(InvalidDataError, match="RegularizationPath"):
        ntp.regularization_path(medium, [3.0], start="path")  # type: ignore[arg-type]
