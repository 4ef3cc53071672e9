"""Exact convex solves of Paper B under the log-loss and ``C E^T = I`` (Lemma 3).

With the log-loss and ``C E^T = I`` the risk is (Sec. 5)

    L(W) = sum_i w_i [ logsumexp_t(x_t^T W x_bar_i) - log sum_{t: x_t = y_i} exp(x_t^T W x_bar_i) ],

a log-sum-exp of linear functions of ``vec(W)`` minus a linear one (the label's copies share a
score): convex. Two problems are solved by Newton's method (analytic gradient and Hessian), then verified:

* :func:`solve_cyclic_correction`: ``W^cyc`` (Definition 3), the minimum-norm minimizer of the cyclic
  sub-dataset's risk, which depends on ``W`` only through ``Pi_Scyc(W)`` (Lemma 2's proof) and is
  strictly convex there (Lemma 3): Newton runs in an orthonormal basis of ``S_cyc``.
* :func:`regularization_path`: ``W_R = argmin_{||W|| <= R} L(W)`` (Algo-RP): the minimizer of
  ``L(W) + lam ||W||^2 / 2`` solves it at ``R = ||W_lam||`` (KKT); Brent's method finds ``lam`` per ``R``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy

from .. import settings
from .._linalg import check_known_rank
from .._path_result import RegularizationPath, checked_radii
from .._qp import scaled_back
from .._validation import frozen
from ..errors import SolverError
from ._graphs import (
    CyclicSubdataset,
    TokenPriorityGraphs,
    cyclic_subdataset,
    graphs_of_checked,
    scyc_basis,
    token_priority_graphs,
)
from ._model import identity_head
from ._token_data import TokenData, check_embeddings, check_token_data, normalized_embeddings

__all__ = [
    "CyclicCorrection",
    "solve_cyclic_correction",
    "AttentionPath",
    "regularization_path",
]


@dataclass(frozen=True)
class LogLossFeatures:
    """The log-loss risk as a function of coordinates ``z`` with ``vec(W) = basis^T z``.

    Sample ``i``'s loss is ``log(1 + sum_{t not a copy of y} exp(a_t) / o_i)``, ``a_t = (phi_t -
    phi_y)^T z``, ``phi_t = basis @ vec(x_t x_bar_i^T)``, ``o_i`` the label's number of copies. The
    differences ``delta_t = phi_t - phi_y`` keep loss, gradient and Hessian accurate to relative
    rounding when the softmax saturates (loss ``~ exp(-margin)``).
    """

    #: ``(n, T, p)`` differences ``phi_t - phi_y`` (0 on copies of the label and at padding).
    delta: np.ndarray
    #: ``(n, T)`` positions holding a token other than the label.
    other: np.ndarray
    #: ``(n,)`` ``log o_i``.
    log_copies: np.ndarray
    #: ``(n,)`` sample weights ``1/n``.
    weights: np.ndarray
    #: ``(p, d*d)`` the coordinates' basis.
    basis: np.ndarray

    def _losses(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-sample losses ``(n,)`` and the softmax probability ``(n, T)`` of each non-label position."""
        a = np.where(self.other, self.delta @ z - self.log_copies[:, None], -np.inf)  # (n, T)
        m = np.maximum(a.max(axis=1), 0.0)
        rest = np.exp(a - m[:, None]).sum(axis=1)
        # loss_i = log(1 + sum_t exp(a_t)) = m + log(exp(-m) + rest), via log1p when m = 0
        loss = np.where(m > 0, m + np.log(np.exp(-m) + rest), np.log1p(rest))
        return loss, np.exp(a - loss[:, None])

    def value_grad_hess(
        self, z: np.ndarray, lam: float = 0.0, hessian: bool = True
    ) -> tuple[float, np.ndarray, np.ndarray | None]:
        """Risk ``+ lam ||z||^2 / 2``, its gradient and its Hessian at ``z`` (None if not ``hessian``).

        The Hessian costs ``n T p^2`` (dominant in the ``d^2`` coordinates of ``vec(W)``).
        """
        loss, p = self._losses(z)
        g_i = np.einsum("nt,ntp->np", p, self.delta)
        f = float(self.weights @ loss) + 0.5 * lam * float(z @ z)
        g = self.weights @ g_i + lam * z
        if not hessian:
            return f, g, None
        H = np.einsum("n,nt,ntp,ntq->pq", self.weights, p, self.delta, self.delta)
        H -= np.einsum("n,np,nq->pq", self.weights, g_i, g_i)
        return f, g, H + lam * np.eye(z.size)

    def gradient_scale(self, z: np.ndarray) -> float:
        """``sum_i w_i sum_t p_it ||delta_it||``: the size of the terms the risk's gradient sums.

        The gradient is accurate relative to this (its terms may cancel): below
        :data:`~ntpnb.settings.RP_GRAD_NOISE_RTOL` times it, it is zero up to rounding.
        """
        _, p = self._losses(z)
        return float(self.weights @ np.sum(p * np.linalg.norm(self.delta, axis=-1), axis=1))


def log_loss_features(E: np.ndarray, data: TokenData, basis: np.ndarray | None = None) -> LogLossFeatures:
    """Features of the log-loss risk with ``C E^T = I`` (see :class:`LogLossFeatures`)."""
    d = E.shape[1]
    q = E[data.query]
    phi = np.einsum("nta,nb->ntab", E[data.tokens], q).reshape(*data.tokens.shape, d * d)
    phi_y = np.einsum("na,nb->nab", E[data.labels], q).reshape(data.n, d * d)
    if basis is not None:
        phi, phi_y = phi @ basis.T, phi_y @ basis.T
    else:
        basis = np.eye(d * d)
    copies = (data.tokens == data.labels[:, None]) & data.mask
    other = data.mask & ~copies
    delta = (phi - phi_y[:, None, :]) * other[..., None]
    log_copies = np.log(copies.sum(axis=1))
    return LogLossFeatures(delta, other, log_copies, np.full(data.n, 1.0 / data.n), basis)


def _newton(
    vgh: Callable[[np.ndarray], tuple[float, np.ndarray, np.ndarray]],
    z0: np.ndarray,
    gtol: float,
    noise: Callable[[np.ndarray], float] | None = None,
) -> tuple[np.ndarray, int]:
    """Damped Newton with Armijo backtracking until ``||grad|| <= gtol`` or no further progress.

    With ``noise``, it also stops when ``||grad|| <= noise(z)`` (the gradient is rounding noise).
    """
    z = z0.copy()
    f, g, H = vgh(z)
    for it in range(settings.NEWTON_MAX_ITER):
        gn = np.linalg.norm(g)
        if gn <= gtol or (noise is not None and gn <= noise(z)):
            return z, it
        try:
            step = -np.linalg.solve(H, g)
        except np.linalg.LinAlgError:  # an exactly singular Hessian: a gradient step, no rank guessed
            step = -g
        slope = float(g @ step)
        if not slope < 0:  # not a descent direction (numerically singular Hessian): gradient step
            step, slope = -g, -float(g @ g)
        t, gnorm, armijo = 1.0, float(np.linalg.norm(g)), settings.NEWTON_ARMIJO
        while True:  # accept on sufficient decrease of f, or of ||grad|| (f may be at its rounding floor)
            z_new = z + t * step
            f_new, g_new, H_new = vgh(z_new)
            if f_new <= f + armijo * t * slope or np.linalg.norm(g_new) <= (1 - armijo * t) * gnorm:
                break
            t *= 0.5
            if t < settings.NEWTON_MIN_STEP:
                return z, it
        z, f, g, H = z_new, f_new, g_new, H_new
    return z, settings.NEWTON_MAX_ITER


@dataclass(frozen=True)
class CyclicCorrection:
    """``W^cyc`` with the certificate of its verification."""

    #: ``W^cyc``, ``(d, d)`` (0 when the cyclic sub-dataset is empty).
    W: np.ndarray
    #: Orthonormal basis of ``S_cyc`` (rows ``vec(W)``).
    basis: np.ndarray
    #: The cyclic sub-dataset the risk is taken over.
    subdataset: CyclicSubdataset
    #: The cyclic risk ``L-bar(W^cyc)``.
    loss: float
    #: ``||grad L-bar(W^cyc)||_F`` of the *full* ``d x d`` gradient (stationarity in every direction), for the
    #: normalized embeddings ``E / c`` (:func:`solve_cyclic_correction`): scale-free.
    grad_norm: float
    #: Smallest eigenvalue of the Hessian of ``L-bar`` on ``S_cyc`` (``> 0``: unique minimizer, Lemma 3), for
    #: the normalized embeddings.
    min_curvature: float
    #: Iterations of Newton's method.
    newton_iterations: int

    @property
    def dim(self) -> int:
        """``dim S_cyc``."""
        return int(self.basis.shape[0])


def solve_cyclic_correction(
    E: object, data: TokenData, graphs: TokenPriorityGraphs | None = None
) -> CyclicCorrection:
    """``W^cyc`` (Definition 3) under the log-loss and ``C E^T = I``, verified.

    The scores are quadratic in the embeddings, so ``W^cyc(E) = W^cyc(E / c) / c^2``: solved for
    ``E / c`` (:func:`~ntpnb.attention._token_data.normalized_embeddings`) and scaled back; the
    certificate (``grad_norm``, ``min_curvature``) is the normalized problem's, scale-free. The
    Hessian on ``S_cyc`` has full rank (Lemma 3), checked as a clear spectral gap
    (:func:`ntpnb._linalg.check_known_rank`).

    Raises
    ------
    HeadAssumptionError
        If ``E`` does not have full row rank (no head with ``C E^T = I`` exists).
    ScaleError
        If ``W^cyc`` (it scales like ``1 / |E|^2``) lies outside the float64 range.
    RankAmbiguousError
        If ``dim S_cyc``, or the rank of the Hessian on it, is not determined in float64.
    SolverError
        If the full gradient at the answer exceeds :data:`~ntpnb.settings.CONVEX_KKT_TOL` or
        the restricted Hessian is not positive definite.
    """
    E = check_embeddings(E, data.K)
    identity_head(E)  # Assumption 4 must be satisfiable, else Lemma 3 does not apply
    graphs = token_priority_graphs(data) if graphs is None else graphs
    sub = cyclic_subdataset(data, graphs=graphs)
    En, c = normalized_embeddings(E)
    basis = scyc_basis(En, graphs)
    d = E.shape[1]
    if sub.data is None or basis.shape[0] == 0:
        zero = np.zeros((d, d))
        return CyclicCorrection(zero, basis, sub, 0.0, 0.0, np.inf, 0)
    feats = log_loss_features(En, sub.data, basis)
    z, iters = _newton(lambda v: feats.value_grad_hess(v), np.zeros(basis.shape[0]), settings.NEWTON_GRAD_TOL)
    f, _, H = feats.value_grad_hess(z)
    full = log_loss_features(En, sub.data)
    _, g_full, _ = full.value_grad_hess(basis.T @ z, hessian=False)
    grad_norm = float(np.linalg.norm(g_full))
    min_curv = float(np.linalg.eigvalsh(H)[0])
    if not grad_norm <= settings.CONVEX_KKT_TOL or not min_curv > 0:
        raise SolverError(
            f"W^cyc failed verification: ||grad|| = {grad_norm:.2e} (tol {settings.CONVEX_KKT_TOL:.0e}), "
            f"smallest curvature on S_cyc {min_curv:.2e} (must be > 0)"
        )
    curvatures = np.linalg.svd(H, compute_uv=False)
    what = "the Hessian of the cyclic risk on S_cyc (positive definite by Lemma 3)"
    check_known_rank(curvatures, H.shape, basis.shape[0], what=what)
    W = (basis.T @ z).reshape(d, d)
    W = frozen(W) if c == 1.0 else scaled_back(W, c, 2, "W^cyc (it scales like 1 / |E|^2)")
    return CyclicCorrection(W, basis, sub, f, grad_norm, min_curv, iters)


@dataclass(frozen=True)
class AttentionPath(RegularizationPath):
    """Paper B's path: :class:`~ntpnb._path_result.RegularizationPath` and the risk at each point.

    ``radii`` are in the caller's order; ``W`` is ``(n, d, d)``; ``kkt`` is ``||grad L(W_R) +
    lam W_R|| / (lam ||W_R||)``.
    """

    #: ``(n,)`` ``L(W_R)``.
    loss: np.ndarray


class _PenalizedMinimizer:
    """The minimizers of ``L(W) + lam ||W||^2 / 2`` by Newton, each warm-started from the last one."""

    def __init__(self, feats: LogLossFeatures, d: int) -> None:
        self.feats = feats
        self.z = np.zeros(d * d)

    def noise(self, z: np.ndarray) -> float:
        """The rounding level of the risk's gradient at ``z`` (Newton stops there)."""
        return settings.RP_GRAD_NOISE_RTOL * self.feats.gradient_scale(z)

    def __call__(self, log_lam: float) -> np.ndarray:
        """The minimizer at ``lam = exp(log_lam)`` (coordinates ``z``), kept as the next start."""
        lam = float(np.exp(log_lam))
        gtol = settings.RP_NEWTON_RTOL * lam * max(1.0, float(np.linalg.norm(self.z)))
        z, _ = _newton(lambda v: self.feats.value_grad_hess(v, lam), self.z, gtol, self.noise)
        self.z = z
        return z


def regularization_path(E: object, data: TokenData, radii: object = (1.0,)) -> AttentionPath:
    """``W_R = argmin_{||W||_F <= R} L(W)`` (Algo-RP) for each ``R``, log-loss with ``C E^T = I``.

    Returned in the order of ``radii`` (solved by increasing ``R``, each warm-started from the last).
    ``lam`` is searched below ``||grad L(0)|| / R`` in steps of ``e``, down to
    :data:`~ntpnb.settings.PATH_MIN_LAMBDA` (below it the gradient, of size ``lam R``, is not resolved
    in float64); Newton stops at a gradient relative to ``lam ||W||``
    (:data:`~ntpnb.settings.RP_NEWTON_RTOL`) or at its terms' rounding level
    (:data:`~ntpnb.settings.RP_GRAD_NOISE_RTOL`).

    Raises
    ------
    InvalidDataError
        On radii that are not positive and finite (:func:`~ntpnb._path_result.checked_radii`).
    SolverError
        If the penalized minimizer's norm cannot reach ``R`` (no strict relation, so a finite
        minimizer and ``W^mm = 0``; or a multiplier below :data:`~ntpnb.settings.PATH_MIN_LAMBDA`
        needed: the message says which), or a point fails verification.
    """
    data = check_token_data(data)
    E = check_embeddings(E, data.K)
    identity_head(E)
    radii = checked_radii(radii, increasing=False)
    feats = log_loss_features(E, data)
    d = E.shape[1]
    g0 = float(np.linalg.norm(feats.value_grad_hess(np.zeros(d * d), hessian=False)[1]))
    if g0 == 0.0:
        raise SolverError("the gradient vanishes at W = 0: W_R = 0 for every R")
    solve = _PenalizedMinimizer(feats, d)
    points: dict[int, tuple[np.ndarray, float, float, float, float]] = {}
    for idx in np.argsort(radii, kind="stable"):
        R = float(radii[idx])
        lo, hi = _multiplier_bracket(solve, R, g0, data)
        points[int(idx)] = _verified_point(solve, R, _multiplier(solve, R, lo, hi))
    W, lam, loss, kkt, norm_error = zip(*(points[i] for i in range(radii.size)), strict=True)
    columns = {"lam": lam, "loss": loss, "kkt": kkt, "norm_error": norm_error}
    arrays = {name: frozen(np.array(values)) for name, values in columns.items()}
    return AttentionPath(radii=radii, W=frozen(np.stack(W).reshape(-1, d, d)), **arrays)


def _multiplier_bracket(
    solve: _PenalizedMinimizer, R: float, g0: float, data: TokenData
) -> tuple[float, float]:
    """``(lo, hi)``: log-multipliers with ``||W_lam||`` above ``R`` at ``lo`` and below it at ``hi``."""
    log_min_lam = float(np.log(settings.PATH_MIN_LAMBDA))
    hi = float(np.log(1.01 * g0 / R))  # ||W_lam|| <= ||grad L(0)|| / lam < R here
    lo = hi
    while True:
        lo -= 1.0
        reached = float(np.linalg.norm(solve(lo)))
        if reached > R:
            return lo, hi
        if lo - 1.0 < log_min_lam:
            raise SolverError(_unreachable_radius(R, reached, float(np.exp(lo)), data, solve.feats, solve.z))


def _multiplier(solve: _PenalizedMinimizer, R: float, lo: float, hi: float) -> float:
    """``log lam`` with ``||W_lam|| = R`` by Brent's method in the bracket."""
    log_r = float(np.log(R))
    try:
        return scipy.optimize.brentq(
            lambda t: np.log(np.linalg.norm(solve(t))) - log_r,
            lo,
            hi,
            xtol=settings.RP_LOG_LAMBDA_XTOL,
            rtol=settings.RP_LOG_LAMBDA_RTOL,
        )
    except ValueError:  # ||W_lam|| - R changed sign between two solves at the same lam
        raise SolverError(
            f"||W_lam|| at lam = {float(np.exp(lo)):.3g} came out above R = {R:g} once and below "
            "it when solved again from another start: R is beyond what float64 resolves of "
            "this path, where Newton's answers are rounding noise"
        ) from None


def _verified_point(
    solve: _PenalizedMinimizer, R: float, log_lam: float
) -> tuple[np.ndarray, float, float, float, float]:
    """``(z, lam, L, kkt, norm_error)`` at ``log_lam``, or SolverError if it fails verification."""
    feats = solve.feats
    lam = float(np.exp(log_lam))
    z = solve(log_lam)
    f, g, _ = feats.value_grad_hess(z, hessian=False)
    kkt = float(np.linalg.norm(g + lam * z)) / (lam * float(np.linalg.norm(z)))
    rad_err = abs(float(np.linalg.norm(z)) - R) / R
    if kkt > settings.RP_KKT_TOL or rad_err > settings.RADIUS_RTOL:
        raise SolverError(
            f"W_R at R = {R:g} failed verification: KKT {kkt:.2e}, radius error {rad_err:.2e} "
            f"(lam = {lam:.3g}, lam ||W|| = {lam * float(np.linalg.norm(z)):.3g}; "
            f"{_resolution(feats, z)}: R may be beyond what float64 resolves)"
        )
    return z, lam, f, kkt, rad_err


def _unreachable_radius(
    R: float, reached: float, lam: float, data: TokenData, feats: LogLossFeatures, z: np.ndarray
) -> str:
    """Why ``||W_lam||`` stays below ``R`` down to the smallest multiplier: the real cause."""
    head = f"||W_lam|| stays below R = {R:g} (it is {reached:.6g} at lam = {lam:.3g})"
    if not graphs_of_checked(data).strict:  # data were checked at the path's door
        return f"{head}: the data have no strict relation, so W^mm = 0 and the risk has a finite minimizer"
    return (
        f"{head}: R is beyond what float64 resolves of this path. The multiplier went down to "
        f"PATH_MIN_LAMBDA = {settings.PATH_MIN_LAMBDA:.3g}; {_resolution(feats, z)}. Along W^mm "
        "the gradient falls like exp(-R / ||W^mm||), so W_R is resolved only while it stands "
        "above that level"
    )


def _resolution(feats: LogLossFeatures, z: np.ndarray) -> str:
    """The risk's gradient at ``z`` against the rounding level of the terms it sums."""
    grad = float(np.linalg.norm(feats.value_grad_hess(z, hessian=False)[1]))
    terms = feats.gradient_scale(z)
    return (
        f"the risk's gradient there is {grad:.3g}, its terms have size {terms:.3g} "
        f"(rounding level about {settings.RP_GRAD_NOISE_RTOL * terms:.1g})"
    )
