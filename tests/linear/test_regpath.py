"""The exact regularization path: invariants, bad input, cvxpy at small B, mpmath at large B."""

from __future__ import annotations

import warnings

import cvxpy as cp
import mpmath
import numpy as np
import pytest

import ntpnb as ntp
from ntpnb.errors import InvalidDataError, NotCompatibleError, NotSeparableError, ScaleError
from ntpnb.linear import _ntp_data as ntp_data
from ntpnb.linear._path_split import expm1_minus_x, helmert_basis, safe_norm
from ntpnb.linear._regpath import _certify, _State, path_structure

from helpers import random_data


@pytest.fixture(scope="module")
def toy() -> ntp.NTPData:
    return ntp.toy2d_instance(0)


@pytest.fixture(scope="module")
def small() -> ntp.NTPData:
    """A small overparameterized instance (d > m): compatible and separable."""
    return random_data(m=4, d=6, V=5, S=3, seed=3)


# ---------------------------------------------------------------------------- invariants
def test_path_points_are_on_the_sphere_with_positive_decreasing_multipliers(toy):
    radii = np.geomspace(0.3, 300, 12)
    path = ntp.regularization_path(toy, radii)
    assert len(path) == 12
    norms = np.linalg.norm(path.W, axis=(1, 2))
    np.testing.assert_allclose(norms, radii, rtol=1e-12)
    assert np.all(path.lam > 0) and np.all(np.diff(path.lam) < 0)
    assert np.all(np.diff(path.kl) < 0)  # a larger ball, a smaller loss
    assert max(path.kkt.max(), path.kkt_f.max(), path.kkt_perp.max()) < 1e-8


def test_kkt_holds_for_the_package_gradient_and_loss_at_moderate_radii(toy, small):
    """Independent evaluation with ntp.ce_grad and ntp.kl_divergence, where float64 CE is fine."""
    for data in (toy, small):
        path = ntp.regularization_path(data, [0.5, 2.0, 8.0])
        for W, lam, kl in zip(path.W, path.lam, path.kl, strict=True):
            G = ntp.ce_grad(data, W)
            assert np.linalg.norm(G + lam * W) / np.linalg.norm(G) < 1e-10
            assert kl == pytest.approx(ntp.kl_divergence(data, W), rel=1e-10)


def test_path_lies_in_the_split_it_reports(toy):
    path = ntp.regularization_path(toy, [1.0, 30.0])
    W_star = ntp.finite_solution(toy)
    for W, off, dist in zip(path.W, path.f_offset, path.f_distance, strict=True):
        np.testing.assert_allclose(ntp.project_F(toy, off), off, atol=1e-12)
        np.testing.assert_allclose(ntp.project_F(toy, W) - W_star, off, atol=1e-9)
        assert dist == pytest.approx(np.linalg.norm(off), rel=1e-12)
        np.testing.assert_allclose(W.sum(axis=0), 0.0, atol=1e-10)  # zero column sums


def test_minimizer_beats_nearby_points_on_the_sphere(small):
    B = 3.0
    W_B = ntp.regularization_path(small, [B]).W[0]
    rng = np.random.default_rng(0)
    ce_B = ntp.ce_loss(small, W_B)
    for _ in range(50):
        Z = W_B + 0.05 * rng.standard_normal(W_B.shape)
        Z *= B / np.linalg.norm(Z)
        assert ntp.ce_loss(small, Z) > ce_B


def test_the_certificate_rejects_a_point_that_is_only_nearly_right(toy):
    """At B = 300 a change of the F-part by 1e-6 of ||P_F(W_B) - W*|| (itself ~1e-34, far
    below the rounding of W_B) is invisible in the matrix but fails the KKT check on F."""
    B = 300.0
    path = ntp.regularization_path(toy, [B])
    st = path_structure(toy)
    alpha = st.basis_f @ path.f_offset[0].ravel()
    beta = st.basis_perp @ path.W[0].ravel()
    ok = _State(np.concatenate([alpha, beta]), float(path.lam[0]))
    _certify(toy, st, ok, B)
    bad = _State(np.concatenate([alpha * (1 + 1e-6), beta]), float(path.lam[0]))
    with pytest.raises(ntp.PathCertificateError, match="on F"):
        _certify(toy, st, bad, B)


def test_result_is_immutable(toy):
    path = ntp.regularization_path(toy, [1.0])
    with pytest.raises(ValueError):
        path.W[0, 0, 0] = 1.0
    with pytest.raises(AttributeError):
        path.lam = None  # type: ignore[misc]


def test_expm1_minus_x_keeps_relative_accuracy():
    mpmath.mp.dps = 40
    for x in (1e-300, -3e-20, 1e-9, -0.0999, 0.0999, 0.1, -0.5, 2.0, -30.0):
        exact = mpmath.expm1(mpmath.mpf(x)) - mpmath.mpf(x)
        got = expm1_minus_x(np.array([x]))[0]
        assert got == pytest.approx(float(exact), rel=1e-14, abs=0.0)


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("radii", "match"),
    [
        ([], "non-empty"),
        ([[1.0, 2.0]], "1-dimensional"),
        ([1.0, np.nan], "non-finite"),
        ([1.0, np.inf], "non-finite"),
        ([-1.0, 2.0], "positive"),
        ([0.0, 2.0], "positive"),
        ([2.0, 1.0], "increasing"),
        ([1.0, 1.0], "increasing"),
        (["a"], "numbers"),
    ],
)
def test_bad_radii_are_rejected(toy, radii, match):
    with pytest.raises(InvalidDataError, match=match):
        ntp.regularization_path(toy, radii)


def test_a_scalar_radius_is_one_radius(toy):
    path = ntp.regularization_path(toy, 2.0)
    assert len(path) == 1
    np.testing.assert_array_equal(path.W, ntp.regularization_path(toy, [2.0]).W)


def test_bad_data_are_rejected():
    with pytest.raises(InvalidDataError, match="NTPData"):
        ntp.regularization_path(np.eye(2), [1.0])  # type: ignore[arg-type]
    same_h = np.ones((2, 1))
    incompatible = ntp.NTPData(H=same_h, pi=[0.5, 0.5], P=[[0.5, 0.5, 0.0], [0.25, 0.75, 0.0]])
    with pytest.raises(NotCompatibleError):
        ntp.regularization_path(incompatible, [1.0])
    not_separable = ntp.NTPData(H=same_h, pi=[0.5, 0.5], P=[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    with pytest.raises(NotSeparableError):
        ntp.regularization_path(not_separable, [1.0])


@pytest.mark.slow
def test_beyond_the_float64_range_the_solver_raises_instead_of_returning_noise(toy):
    """On the 2D example lambda leaves the normal doubles near B = 2400 (B / ||W^mm|| ~ 660)."""
    ntp.regularization_path(toy, [10.0, 2300.0])
    with pytest.raises(ntp.PathCertificateError, match="normal doubles"):
        ntp.regularization_path(toy, [10.0, 3000.0])


# ---------------------------------------------------------------------------- cvxpy at small B
def cvxpy_minimizer(data: ntp.NTPData, B: float) -> np.ndarray:
    """The minimizer from Clarabel with tolerances of 1e-12 (its defaults, 1e-8 on the duality
    gap, leave W accurate only to about sqrt(1e-8) = 1e-4, since the loss is flat to second
    order at the minimizer). At these tolerances Clarabel often ends "optimal_inaccurate" (it
    could not reach every tolerance): accepted here, because the test then asks for agreement
    to 1e-8, which an inaccurate answer would fail."""
    W = cp.Variable((data.V, data.d))
    L = data.H @ W.T
    loss = sum(data.pi[j] * (cp.log_sum_exp(L[j, :]) - data.P[j] @ L[j, :]) for j in range(data.m))
    problem = cp.Problem(cp.Minimize(loss), [cp.norm(W, "fro") <= B])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # cvxpy's "solution may be inaccurate"
        problem.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE)
    return W.value


def assert_agrees_with_cvxpy(data: ntp.NTPData, B: float) -> None:
    """Ours and Clarabel's agree to 1e-8 relative, and ours is at least as good: its CE - H
    no larger, up to rounding."""
    W_B = ntp.regularization_path(data, [B]).W[0]
    W_cvx = cvxpy_minimizer(data, B)
    assert np.linalg.norm(W_cvx - W_B) / B < 1e-8
    assert ntp.kl_divergence(data, W_B) <= ntp.kl_divergence(data, W_cvx) + 1e-13


@pytest.mark.parametrize("B", [0.5, 4.0, 16.0])
def test_agrees_with_cvxpy_clarabel_where_cvxpy_is_accurate(toy, B):
    assert_agrees_with_cvxpy(toy, B)


@pytest.mark.slow
def test_agrees_with_cvxpy_clarabel_on_the_m50_instance():
    data = ntp.synthetic_instance(seed=0)
    for B in (1.0, 10.0):
        assert_agrees_with_cvxpy(data, B)


# ---------------------------------------------------------------------------- mpmath at large B
def mp_orthonormal_rows(rows: list[list], tol: mpmath.mpf) -> list[list]:
    """Modified Gram-Schmidt in mpmath: an orthonormal basis of the span of ``rows``."""
    basis: list[list] = []
    for r in rows:
        v = list(r)
        for b in basis:
            c = mpmath.fsum(x * y for x, y in zip(v, b, strict=True))
            v = [x - c * y for x, y in zip(v, b, strict=True)]
        n = mpmath.sqrt(mpmath.fsum(x * x for x in v))
        if n > tol:
            basis.append([x / n for x in v])
    return basis


def normalized(x: list) -> list:
    total = mpmath.fsum(x)
    return [v / total for v in x]


class MpProblem:
    """CE(W) and its derivatives at high precision, from the definition (no split, no W*)."""

    def __init__(self, data: ntp.NTPData) -> None:
        self.data = data
        self.H = [[mpmath.mpf(x) for x in row] for row in data.H]
        # the rows of P sum to 1 only up to rounding; normalize them exactly (it changes no
        # ratio, and a gradient whose entries do not sum to 0 has a component along the
        # directions where CE is flat, which Newton would follow a long way)
        self.P = [normalized([mpmath.mpf(x) for x in row]) for row in data.P]
        self.pi = normalized([mpmath.mpf(x) for x in data.pi])

    def softmax(self, W: list, j: int) -> list:
        V, d = self.data.V, self.data.d
        logits = [mpmath.fsum(W[v * d + k] * self.H[j][k] for k in range(d)) for v in range(V)]
        top = max(logits)
        e = [mpmath.exp(x - top) for x in logits]
        s = mpmath.fsum(e)
        return [x / s for x in e]

    def kl(self, W: list) -> mpmath.mpf:
        total = mpmath.mpf(0)
        for j in range(self.data.m):
            q = self.softmax(W, j)
            total += self.pi[j] * mpmath.fsum(
                p * mpmath.log(p / qz) for p, qz in zip(self.P[j], q, strict=True) if p > 0
            )
        return total

    def grad_hess(self, W: list) -> tuple[list, mpmath.matrix]:
        V, d = self.data.V, self.data.d
        n = V * d
        g = [mpmath.mpf(0)] * n
        Hs = mpmath.zeros(n, n)
        for j in range(self.data.m):
            q = self.softmax(W, j)
            h = self.H[j]
            for v in range(V):
                for k in range(d):
                    g[v * d + k] += self.pi[j] * (q[v] - self.P[j][v]) * h[k]
                for w in range(V):
                    c = self.pi[j] * ((q[v] if v == w else 0) - q[v] * q[w])
                    for k in range(d):
                        for k2 in range(d):
                            Hs[v * d + k, w * d + k2] += c * h[k] * h[k2]
        return g, Hs

    def kkt_newton(self, W0: np.ndarray, lam0: float, B: float, steps: int = 30) -> tuple[list, mpmath.mpf]:
        """Newton on grad CE(W) + lam W = 0, ||W||^2 = B^2, from (W0, lam0).

        The start is first mapped onto R (zero column sums, rows in the span of the h_j) and
        the sphere: any KKT point lies there (W = -grad / lam), and off R the loss is flat, so
        the rounding of W0 in those directions would send Newton far along them.
        """
        n = W0.size
        V, d = self.data.V, self.data.d
        Q = mpmath.matrix(mp_orthonormal_rows(self.H, mpmath.mpf(10) ** (-20)))
        P_H = Q.T * Q  # projector onto the span of the h_j
        W0m = mpmath.matrix([[mpmath.mpf(x) for x in row] for row in W0])
        W0m = (mpmath.eye(V) - mpmath.ones(V, V) / V) * W0m * P_H
        B = mpmath.mpf(B)
        scale = B / mpmath.sqrt(mpmath.fsum(W0m[v, k] ** 2 for v in range(V) for k in range(d)))
        W = [W0m[v, k] * scale for v in range(V) for k in range(d)]
        lam = mpmath.mpf(lam0)
        for _ in range(steps):
            g, Hs = self.grad_hess(W)
            J = mpmath.zeros(n + 1, n + 1)
            F = mpmath.zeros(n + 1, 1)
            for i in range(n):
                F[i] = g[i] + lam * W[i]
                J[i, n] = W[i]
                J[n, i] = W[i]
                for k in range(n):
                    J[i, k] = Hs[i, k] + (lam if i == k else 0)
            F[n] = (mpmath.fsum(x * x for x in W) - B * B) / 2
            step = mpmath.lu_solve(J, -F)
            W = [W[i] + step[i] for i in range(n)]
            lam += step[n]
            size = max(abs(step[i]) for i in range(n)) / B
            tol = mpmath.mpf(10) ** (-(mpmath.mp.dps // 3))  # far below double precision
            if size < tol and abs(step[n]) < lam * tol:
                return W, lam
        raise AssertionError("mpmath Newton did not converge")

    def f_offset(self, W: list) -> list:
        """P_F(W) - W*, with F and W* computed in mpmath from the constraint rows."""
        data = self.data
        V, d = data.V, data.d
        rows, rhs = [], []
        for j, support in enumerate(data.supports):
            z0 = int(support[0])
            for z in support[1:]:
                row = [mpmath.mpf(0)] * (V * d)
                for k in range(d):
                    row[int(z) * d + k] += self.H[j][k]
                    row[z0 * d + k] -= self.H[j][k]
                rows.append(row)
                rhs.append(mpmath.log(self.P[j][int(z)] / self.P[j][z0]))
        basis = mp_orthonormal_rows(rows, mpmath.mpf(10) ** (-20))
        # W* = the point of F solving the equations: in the basis, solve (rows @ basis^T) c = rhs
        A = mpmath.matrix(
            [[mpmath.fsum(x * y for x, y in zip(r, b, strict=True)) for b in basis] for r in rows]
        )
        c = mpmath.lu_solve(A.T * A, A.T * mpmath.matrix(rhs))
        coef_W = [mpmath.fsum(x * y for x, y in zip(W, b, strict=True)) for b in basis]
        diff = [coef_W[i] - c[i] for i in range(len(basis))]
        return [mpmath.fsum(diff[i] * basis[i][t] for i in range(len(basis))) for t in range(V * d)]


def mp_norm(x: list) -> mpmath.mpf:
    return mpmath.sqrt(mpmath.fsum(v * v for v in x))


@pytest.mark.slow
@pytest.mark.parametrize(("instance", "radii"), [("toy", [3.0, 200.0, 600.0]), ("small", [2.0, 60.0, 200.0])])
def test_agrees_with_an_independent_mpmath_minimizer_far_below_double_resolution(instance, radii, toy, small):
    """At the largest radii CE - H is far below 1e-16 (1e-73 on the 2D example, 1e-34 on the other).

    mpmath solves the KKT system of the plain definition of CE in the full matrix space (no
    split, no W*, its own subspace F), at 150 digits, from our answer; it lands on the same
    minimizer: lambda, CE - H and P_F(W_B) - W* agree to relative 1e-12 (measured: 5e-14 at
    worst), where that difference is up to 70 orders of magnitude below the entries of W_B.
    """
    data = {"toy": toy, "small": small}[instance]
    path = ntp.regularization_path(data, radii)
    assert path.kl[-1] < 1e-20
    mpmath.mp.dps = 150
    prob = MpProblem(data)
    for i, B in enumerate(radii):
        W_mp, lam_mp = prob.kkt_newton(path.W[i], path.lam[i], B)
        W_ours = path.W[i].ravel()
        assert float(mp_norm([W_mp[t] - W_ours[t] for t in range(len(W_ours))])) / B < 1e-13
        assert float(abs(lam_mp - path.lam[i]) / lam_mp) < 1e-12
        assert float(abs(prob.kl(W_mp) - path.kl[i]) / prob.kl(W_mp)) < 1e-12
        off_mp = prob.f_offset(W_mp)
        off = path.f_offset[i].ravel()
        err = mp_norm([off_mp[t] - off[t] for t in range(len(off))]) / mp_norm(off_mp)
        assert float(err) < 1e-12
        assert float(mp_norm(off_mp)) == pytest.approx(path.f_distance[i], rel=1e-12)


def test_structure_is_cached_and_read_only(toy):
    st = path_structure(toy)
    assert path_structure(toy) is st
    assert not st.T_F.flags.writeable


# ------------------------------------------------------------------------ perturbed triangles: every kernel
def perturbed_triangles(n: int = 40, seed: int = 1234) -> list[ntp.NTPData]:
    """Copies of the chapter's triangle instance (``toy2d_instance(0)``): each embedding turned by
    up to 20 degrees and scaled by 0.5-2, new probabilities on the same supports. Copies whose
    embeddings leave an angular gap above 170 degrees (the origin near or outside the triangle:
    not clearly separable) are redrawn."""
    from ntpnb.linear._recipes import dirichlet_on_supports

    base = ntp.toy2d_instance(0)
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        angle = np.deg2rad(rng.uniform(-20.0, 20.0, 3))
        scale = rng.uniform(0.5, 2.0, 3)
        c, s = np.cos(angle), np.sin(angle)
        x, y = base.H[:, 0], base.H[:, 1]
        H = np.column_stack([c * x - s * y, s * x + c * y]) * scale[:, None]
        P = dirichlet_on_supports(base.support_mask, rng)
        theta = np.sort(np.arctan2(H[:, 1], H[:, 0]))
        if np.diff(np.append(theta, theta[0] + 2 * np.pi)).max() > np.deg2rad(170.0):
            continue
        out.append(ntp.NTPData(H=H, pi=base.pi, P=P))
    return out


def test_perturbed_triangles_all_certify():
    """With a rank cut-off at machine epsilon, 15 of these 40 copies failed to certify
    under OPENBLAS_CORETYPE=Haswell or Zen and 1 under SandyBridge or Prescott (a spurious F-perp
    direction); with the known dimension of R ∩ F-perp every copy certifies on every kernel, the
    answers agreeing to 1e-15 relative across the four (measured; the cross-kernel test module
    checks agreement)."""
    for data in perturbed_triangles():
        st = path_structure(ntp_data.normalized(data)[0])
        assert (st.n_f, st.basis_perp.shape[0]) == (6, (data.V - 1) * 2 - 6)  # dim F = 3 contexts x 2
        path = ntp.regularization_path(data, [0.5, 1.0, 10.0])
        assert max(path.kkt.max(), path.kkt_f.max(), path.kkt_perp.max()) <= 1e-8


# ---------------------------------------------------------------------------- the path at its edges
def test_one_hot_data_have_a_path_with_no_f_block(toy):
    """Every support a single token: F = {0}, W* = 0, and the KKT residual on F is absent (it was
    0/0 and refused the path)."""
    P = np.zeros((3, 5))
    P[0, 1] = P[1, 0] = P[2, 4] = 1.0
    data = ntp.NTPData(H=toy.H, pi=toy.pi, P=P)
    st = path_structure(data)
    assert st.n_f == 0 and not np.any(st.W_star)
    path = ntp.regularization_path(data, [0.5, 1.0, 10.0])
    np.testing.assert_array_equal(path.kkt_f, 0.0)
    assert path.kkt.max() <= 1e-8 and path.kkt_perp.max() <= 1e-8
    np.testing.assert_allclose(np.linalg.norm(path.W, axis=(1, 2)), [0.5, 1.0, 10.0], rtol=1e-12)


@pytest.mark.parametrize("factor", [1e3, 2.0**10, 1e-3, 1e-100, 1e100])
def test_the_path_is_scale_relative(toy, factor):
    """W_B(cH) = W_{cB}(H) / c: the entry radius and the tolerances are relative to max|H| (H
    scaled by 1e3 failed to converge at B = 0.5)."""
    radii = np.array([0.5, 1.0, 10.0])
    ref = ntp.regularization_path(toy, radii)
    scaled = ntp.regularization_path(ntp.NTPData(H=toy.H * factor, pi=toy.pi, P=toy.P), radii / factor)
    np.testing.assert_allclose(scaled.W * factor, ref.W, rtol=0, atol=1e-12 * 10)
    np.testing.assert_allclose(scaled.lam / factor**2, ref.lam, rtol=1e-10)
    np.testing.assert_allclose(scaled.kl, ref.kl, rtol=1e-10)
    np.testing.assert_array_equal(scaled.radii, radii / factor)


def test_tiny_radii_are_certified_to_full_relative_accuracy(toy):
    """Below ||W*|| the F-part is held as W's own coordinates: at B = 1e-5 the norm error was
    3.6e-12 (the cancellation of W* + delta) and B = 1e-12 did not converge."""
    radii = [1e-12, 1e-9, 1e-5, 0.1, 1.0]
    path = ntp.regularization_path(toy, radii)
    assert path.norm_error.max() <= 1e-14
    # near 0 the path leaves W = 0 along the steepest descent: W_B / B -> -grad CE(0) / ||grad CE(0)||
    g = ntp.ce_grad(toy, np.zeros((toy.V, toy.d)))
    np.testing.assert_allclose(path.W[0] / 1e-12, -g / np.linalg.norm(g), atol=1e-10)


def test_a_radius_beyond_float64_is_a_named_error(toy):
    with pytest.raises(ntp.PathCertificateError, match="float64 range"):
        ntp.regularization_path(toy, [1.0, 1e308])
    with pytest.raises(ntp.PathCertificateError, match="float64 range"):
        ntp.regularization_path(ntp.NTPData(H=toy.H * 1e3, pi=toy.pi, P=toy.P), [1e307])
    with pytest.raises(ScaleError, match="lambda"):  # lambda scales like max|H|^2 = 1e400
        ntp.regularization_path(ntp.NTPData(H=toy.H * 1e200, pi=toy.pi, P=toy.P), [1e-200])


def test_a_tiny_in_support_probability_is_certified_beyond_b_32_then_refused_with_the_reason():
    """The 2D instance tempered to a smallest in-support probability of 4.5e-9: Hess CE + lambda I
    has condition ~1e9 and Newton's steps stall near 1e-9, above the step tolerance, so the path
    stopped at B = 32; now the certificate decides there. Further out the F-gradient is so deep a
    cancellation that moving W_B's coordinates by their rounding moves the KKT residual on F by
    more than the tolerance (2.9e-8 at B = 300): refused, with that reason, on every machine."""
    data = ntp.toy2d_instance(0, entropy=0.2523580174780111)
    assert abs(data.P[data.P > 0].min() / 4.5e-9 - 1) < 1e-6
    path = ntp.regularization_path(data, [0.5, 4.0, 32.0, 64.0])
    assert max(path.kkt.max(), path.kkt_f.max(), path.kkt_perp.max()) <= 1e-8
    with pytest.raises(ntp.PathCertificateError, match="float64 does not resolve the KKT conditions"):
        ntp.regularization_path(data, [300.0])


def test_a_context_whose_support_is_the_whole_vocabulary(small):
    """S_j = V: context j has no out-of-support token (no margin, no exponent x_jv)."""
    P = small.P.copy()
    P[0] = np.linspace(1.0, 2.0, small.V) / np.linspace(1.0, 2.0, small.V).sum()
    data = ntp.NTPData(H=small.H, pi=small.pi, P=P)
    assert data.support_mask[0].all()
    st = path_structure(data)
    assert np.all(st.margins[0] == 0) and np.all(np.isneginf(st.a[0]))
    path = ntp.regularization_path(data, [0.5, 1.0, 10.0, 100.0])
    assert max(path.kkt.max(), path.kkt_f.max(), path.kkt_perp.max()) <= 1e-8
    np.testing.assert_allclose(np.linalg.norm(path.W, axis=(1, 2)), path.radii, rtol=1e-12)


@pytest.mark.parametrize("V", [2, 3, 7, 50])
def test_helmert_basis_is_an_orthonormal_basis_of_the_zero_sum_vectors(V):
    Q = helmert_basis(V)
    assert Q.shape == (V, V - 1)
    np.testing.assert_allclose(Q.T @ Q, np.eye(V - 1), atol=1e-14)
    np.testing.assert_allclose(Q.sum(axis=0), 0.0, atol=1e-14)
    # together with 1 / sqrt(V) it is a complete orthonormal basis: the projection onto 1-perp
    np.testing.assert_allclose(Q @ Q.T, np.eye(V) - 1.0 / V, atol=1e-14)


def test_safe_norm_keeps_the_digits_that_numpy_loses_below_1e_154():
    x = np.array([3.0, 4.0]) * 1e-170
    assert np.linalg.norm(x) == 0.0  # what the plain norm returns here
    assert safe_norm(x) == pytest.approx(5e-170, rel=1e-15)
    A = np.array([[1.0, 1.0], [0.0, 2.0]])
    assert safe_norm(x, lambda v: A @ v) == pytest.approx(
        np.linalg.norm(A @ np.array([3.0, 4.0])) * 1e-170, rel=1e-15
    )
    assert safe_norm(np.zeros(3)) == 0.0
    assert safe_norm(np.array([np.inf, 1.0])) == np.inf
