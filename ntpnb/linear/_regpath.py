"""The exact regularization path ``W_B = argmin_{||W|| <= B} CE(W)`` (Paper A, Thm. 1, Lemma 4).

Along the path ``CE(W_B) - H`` falls exponentially in ``B`` (about 1e-16 at ``B = 100`` on the
2D example of Fig. 1, below the rounding of ``CE``, where cvxpy with Clarabel or SCS returns
wrong matrices reported optimal), so the path is solved in the structure the paper gives.

The split
---------
``W = W* + delta + W_perp`` with ``W*`` the finite solution (in F), ``delta`` in F and ``W_perp``
in F-perp. A matrix in F-perp leaves every in-support logit difference unchanged, so the loss is
evaluated from the logits of ``delta`` and the margins of ``W_perp`` alone, never adding a tiny
``delta`` to ``W*`` in floating point (:func:`._path_split.split_loss`). The minimizer lies in
``R``, the matrices with zero column sums and rows in the span of the embeddings (the loss
ignores the rest). Two representations of the split (:class:`._path_split.Split`) share the
solver: orthonormal bases of F and of ``R ∩ F-perp`` (:class:`PathStructure`, any rank of ``H``;
a dense Newton system of size ``(V - 1) rank H``), and, when ``H`` has full row rank,
coefficients in the Gram matrix ``K = H H^T`` (:class:`._regpath_gram.GramStructure`; Newton's
system through ``V`` matrices of size at most ``m`` and one of size ``m``, no basis formed).

The solver
----------
For each radius, Newton's method on the KKT system ``grad f + lambda W = 0, ||W|| = B`` in the
split coordinates and ``log lambda`` (the F block of the Hessian is of order one, the F-perp
block of the order of the out-of-support mass), a bounded step in logit space, warm starts from
the previous radius by a first-order predictor, and radii inserted in between when a step does
not converge. The iterates depend only on the matrices ``W`` (every norm and inner product is
the matrices'), so both representations follow the same path.

Each answer is certified: ``||W_B|| = B``, ``lambda > 0`` and the KKT residual ``grad CE(W_B) +
lambda W_B`` small relative to the gradient, on F and on F-perp separately (on F the gradient is
smaller by a factor ``||W*|| / B``, which a combined residual would not see), each residual plus
how far it moves when the coordinates of ``W_B`` move by their own rounding (a tiny in-support
probability can make the F-gradient a cancellation float64 no longer resolves; the error says
so). Strict convexity of CE on ``R`` makes a KKT point with ``lambda > 0`` the unique minimizer.

Where float64 ends
------------------
The out-of-support probabilities of ``W_B`` (its smallest margin is about ``B / ||W^mm||``),
``CE - H``, the gradient and ``B lambda`` are about ``exp(-B / ||W^mm||)``. The F-part ``P_F(W_B)
- W*`` shrinks at the same rate, below the rounding of the entries of ``W_B`` (``1e-16 B``) from
``B / ||W^mm||`` of 35 to 40, so the result keeps it separately. The certificate needs
``lambda`` and the quantities of order ``lambda * eps`` to be normal doubles, ``lambda >=
2.2e-308 / 2.2e-16 = 1e-292`` (:data:`ntpnb.settings.PATH_MIN_LAMBDA`), which holds up to ``B /
||W^mm||`` of about 660; beyond it the loss is flat to double precision around ``W_B`` and
:class:`~ntpnb.errors.PathCertificateError` is raised instead of returning a matrix.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import scipy
from numpy.typing import ArrayLike

from .. import settings
from .._linalg import check_known_rank
from .._parallel import limit_threads
from .._path_result import RegularizationPath, checked_radii
from .._validation import frozen
from ..errors import (
    InvalidDataError,
    NotSeparableError,
    PathCertificateError,
    RankAmbiguousError,
    ScaleError,
)
from ._compatibility import normalized_finite_solution
from ._gram_blocks import NoConvergenceError as _NoConvergenceError
from ._ntp_data import NTPData, cached_per_data, normalized, require_data
from ._path_split import Evaluation, Split, Workspace, helmert_basis, safe_norm, split_loss, star_exponents
from ._regpath_gram import gram_structure
from ._separability import normalized_separability
from ._subspace import EmbeddingSVD, normalized_embedding_svd, normalized_f_decomposition


# ---------------------------------------------------------------------------- the dense structure
@dataclass(frozen=True, eq=False)
class PathStructure(Split):
    """The split of a data set in orthonormal bases (:func:`path_structure`).

    The coordinates of a matrix ``W`` in ``R`` are ``(alpha, beta)``: its components in F and in
    ``R ∩ F-perp`` in the two bases (so inner products and norms are those of the coordinates).
    """

    #: Orthonormal rows spanning F (each row a ``vec(W)``, row-major).
    basis_f: np.ndarray
    #: Orthonormal rows spanning ``R ∩ F-perp`` (see :func:`path_structure`).
    basis_perp: np.ndarray
    #: ``(m, V, r)``: logits ``(delta h_j)_v`` of each basis matrix of F.
    T_F: np.ndarray
    #: ``(m, V, k)``: ``margin_jv`` of each basis matrix of ``R ∩ F-perp`` (0 on supports).
    margins: np.ndarray

    def evaluate(self, data: NTPData, theta: np.ndarray, hessian: bool) -> Evaluation:
        """The loss at the split coordinates ``theta = (alpha, beta)``, its gradient (and Hessian)."""
        r = self.n_f
        alpha, beta = theta[:r], theta[r:]
        loss = split_loss(data, self.a, self.T_F @ alpha, self.margins @ beta)
        pi = data.pi
        jac = np.concatenate([self.T_F, -self.margins], axis=2)  # (m, V, n)
        grad = np.einsum("j,jv,jvi->i", pi, loss.q_minus_p, jac)
        hess = None
        if hessian:
            q = loss.q
            Jq = np.einsum("jv,jvi->ji", q, jac)  # J_j^T q_j
            Jw = (np.sqrt(pi[:, None] * q)[:, :, None] * jac).reshape(-1, jac.shape[2])
            Jqw = np.sqrt(pi)[:, None] * Jq
            hess = Jw.T @ Jw - Jqw.T @ Jqw  # sum_j pi_j J_j^T (diag(q_j) - q_j q_j^T) J_j
        return Evaluation(loss=loss, grad=grad, hess=hess, jac=jac)

    def solve(
        self, ev: Evaluation, lam: float, rhs: np.ndarray, ws: Workspace | None = None, rtol: ArrayLike = 0.0
    ) -> np.ndarray:
        """``(Hess CE + lam I)^{-1} rhs`` (columns) by a diagonally scaled Cholesky factor, to rounding."""
        assert ev.hess is not None
        K = ev.hess + lam * np.eye(ev.hess.shape[0])
        diag = np.diag(K)
        if not (np.all(np.isfinite(K)) and np.all(diag > 0) and np.all(np.isfinite(rhs))):
            raise _NoConvergenceError("the KKT matrix is not finite and positive on its diagonal")
        scale = 1.0 / np.sqrt(diag)
        Ks = K * scale[:, None] * scale[None, :]
        try:
            factor = scipy.linalg.cho_factor(Ks)
            return scale[:, None] * scipy.linalg.cho_solve(factor, scale[:, None] * rhs)
        except np.linalg.LinAlgError as exc:
            raise _NoConvergenceError("Hess CE + lambda I is not numerically positive definite") from exc
        except ValueError as exc:  # scipy's check_finite: the scaled system overflowed
            raise _NoConvergenceError("the KKT system overflows float64") from exc

    def inner(self, x: np.ndarray, y: np.ndarray) -> float:
        """``<W_x, W_y>``: the coordinates are orthonormal."""
        return float(x @ y)

    def block_norms(self, x: np.ndarray) -> tuple[float, float]:
        """The norms of the F part and of the F-perp part of ``W_x``."""
        r = self.n_f
        return safe_norm(x[:r]), safe_norm(x[r:])

    def logit_step(self, ev: Evaluation, x: np.ndarray) -> float:
        """The largest change of a logit along ``x`` (F part) less its margins (F-perp part)."""
        return float(np.abs(np.einsum("jvi,i->jv", ev.jac, x)).max(initial=0.0))

    def matrices(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``vec`` of the F part and of the F-perp part of the matrix ``W_x``."""
        return self.basis_f.T @ x[: self.n_f], self.basis_perp.T @ x[self.n_f :]

    def gradient_split(self, data: NTPData, ev: Evaluation) -> tuple[np.ndarray, np.ndarray]:
        """``vec(grad CE)`` and its projection on F."""
        g = ((data.pi[:, None] * ev.loss.q_minus_p).T @ data.H).ravel()
        return g, self.basis_f.T @ (self.basis_f @ g)


def _perp_basis(V: int, Vt: np.ndarray, basis_f: np.ndarray) -> np.ndarray:
    """The orthonormal basis of ``R ∩ F-perp`` (rows), from those of the row space of ``H`` (``Vt``) and of F.

    Raises
    ------
    RankAmbiguousError
        If dim F exceeds dim R, or F's columns in the coordinates of R are not orthonormal to
        rounding: the ranks of H and of (6a) are not determined consistently in float64.
    """
    R = np.kron(helmert_basis(V), Vt.T)  # orthonormal columns: vec(u v^T), row-major
    n_f = basis_f.shape[0]
    if n_f > R.shape[1]:  # F lies in R: impossible unless the two rank decisions disagree
        raise RankAmbiguousError(
            f"dim F = {n_f} exceeds dim R = (V - 1) rank H = {R.shape[1]}: the ranks of H and of "
            "the constraints (6a) are not determined consistently in float64"
        )
    C = R.T @ basis_f.T  # F in the coordinates of R: orthonormal columns, since F lies in R
    check_known_rank(
        np.linalg.svd(C, compute_uv=False), C.shape, n_f, what="F in the coordinates of R", scale=1.0
    )
    Q, _ = np.linalg.qr(C, mode="complete")  # Householder: robust, no decision
    return (R @ Q[:, n_f:]).T


@cached_per_data
def path_structure(norm: NTPData) -> PathStructure:
    """The split of normalized data in orthonormal bases (cached per data set).

    ``norm`` is used as it is: data already :func:`~._ntp_data.normalized`, as
    :func:`regularization_path` passes them. ``R = 1-perp (x) rowspace(H)`` has the orthonormal
    basis ``kron(Helmert, V_H)`` and contains F, so ``R ∩ F-perp`` has dimension ``(V - 1) rank
    H - dim F``. In the coordinates of ``R``, F is spanned by the orthonormal columns ``C = R^T
    B_F^T`` (singular values 1 up to rounding, verified by :func:`ntpnb._linalg.check_known_rank`),
    and ``R ∩ F-perp`` by the last columns of a complete Householder QR of ``C``: no rank is
    decided at the rounding level.

    Raises
    ------
    NotCompatibleError
        If the data are not NTP_H-compatible (no ``W*``).
    """
    W_star = normalized_finite_solution(norm)
    basis_f = normalized_f_decomposition(norm).basis
    basis_perp = _perp_basis(norm.V, normalized_embedding_svd(norm).Vt, basis_f)
    # (m, V, n): the logits of each basis matrix
    T_F, T_perp = (
        np.einsum("ivk,jk->jvi", b.reshape(-1, norm.V, norm.d), norm.H) for b in (basis_f, basis_perp)
    )
    u = np.einsum("jv,jvi->ji", norm.P, T_perp)  # the common in-support logit
    margins = np.where(norm.support_mask[:, :, None], 0.0, u[:, None, :] - T_perp)
    w_star = basis_f @ W_star.ravel()
    return PathStructure(
        W_star=W_star,
        a=star_exponents(norm, W_star),
        w_star=w_star,
        w_star_norm=safe_norm(w_star),
        n_f=basis_f.shape[0],
        n_perp=basis_perp.shape[0],
        basis_f=basis_f,
        basis_perp=basis_perp,
        T_F=T_F,
        margins=margins,
    )


def _gram_form_fits(svd: EmbeddingSVD, m: int) -> bool:
    """Whether the Gram form serves embeddings of ``m`` rows with SVD ``svd`` (see :func:`uses_gram_form`)."""
    return svd.rank == m and float(svd.s[0] / svd.s[-1]) ** 2 <= settings.PATH_GRAM_MAX_COND


def uses_gram_form(data: NTPData) -> bool:
    """Whether the path of ``data`` is solved in the Gram form (:mod:`._regpath_gram`).

    It is when ``H`` has full row rank (``rank H = m``, the one decision of
    :func:`~ntpnb.linear._subspace.embedding_svd`) and ``K = H H^T`` has a condition number of at
    most :data:`ntpnb.settings.PATH_GRAM_MAX_COND`; otherwise in orthonormal bases.
    """
    return _gram_form_fits(normalized_embedding_svd(normalized(data)[0]), data.m)


# ---------------------------------------------------------------------------- Newton on the KKT system
@dataclass
class _State:
    """A point ``(theta, lambda)`` of the Newton iteration.

    ``theta = (alpha, beta)`` in the split (``direct`` False): the F-part of ``W`` is ``w* +
    alpha``, kept as the offset ``alpha``, which keeps its relative accuracy at large radii. Below
    ``||W*||``, where ``w* + alpha`` would cancel (relative error ``eps ||W*|| / B``), ``theta =
    (w* + alpha, beta)`` holds ``W``'s own coordinates (``direct`` True); :func:`_solve_radius`
    chooses by the radius.
    """

    theta: np.ndarray
    lam: float
    direct: bool = False


def _theta(st: Split, state: _State, direct: bool) -> np.ndarray:
    """The coordinates of ``state`` in the direct (``W`` itself) or the split form."""
    if direct == state.direct:
        return state.theta
    theta = state.theta.copy()
    theta[: st.n_f] += st.w_star if direct else -st.w_star
    return theta


def _newton_direction(
    st: Split, state: _State, ev: Evaluation, B: float, ws: Any, rtols: list[float]
) -> tuple[np.ndarray, float, np.ndarray]:
    """The Newton step of the KKT system at radius ``B``: ``(d_theta, d_nu, b)``, ``b = K^{-1} w``.

    ``rtols``: the relative tolerances of the two solves (``a`` and ``b``); ``d_nu``, the step of
    ``log lambda``, is clipped to :data:`~ntpnb.settings.PATH_MAX_LOG_LAMBDA_STEP`.
    """
    w = _theta(st, state, True)
    resid = ev.grad + state.lam * state.theta
    if not state.direct:
        resid[: st.n_f] += state.lam * st.w_star  # never form w* + alpha here
    sol = st.solve(ev, state.lam, np.column_stack([resid, w]), ws, rtols)
    a_vec, b_vec = sol[:, 0], sol[:, 1]
    d_lam = (0.5 * (st.inner(w, w) - B * B) - st.inner(w, a_vec)) / st.inner(w, b_vec)
    cap = settings.PATH_MAX_LOG_LAMBDA_STEP
    d_nu = float(np.clip(d_lam / state.lam, -cap, cap))
    return -a_vec - state.lam * d_nu * b_vec, d_nu, b_vec


def _relative_size(st: Split, state: _State, d_theta: np.ndarray, d_nu: float) -> float:
    """The size of a step relative to the point: ``|d_nu|``, and on F and F-perp (norms of the matrices)."""
    tiny = np.finfo(float).tiny
    (step_f, step_p), (at_f, at_p) = st.block_norms(d_theta), st.block_norms(state.theta)
    return max(abs(d_nu), step_f / max(at_f, tiny) if st.n_f else 0.0, step_p / max(at_p, tiny))


def _solve_radius(data, st: Split, state: _State, B: float, ws: Any = None) -> tuple[_State, int, np.ndarray]:
    """Newton at radius ``B`` from ``state``: the point, the iterations, ``K^{-1} w`` of the last step."""
    direct = B < st.w_star_norm
    if direct != state.direct:
        state = _State(_theta(st, state, direct), state.lam, direct)
    tiny = np.finfo(float).tiny
    prev_size = last_size = np.inf
    for it in range(1, settings.PATH_MAX_NEWTON + 1):
        ev = st.evaluate(data, _theta(st, state, False), hessian=True)
        # solve to PATH_FORCING s (s the last step's size; keeps Newton's convergence), or to
        # PATH_STEP_RTOL / s (point accurate to PATH_STEP_RTOL); the last step's b is the tangent
        rtol = min(
            settings.PATH_FORCING, max(settings.PATH_FORCING * last_size, settings.PATH_STEP_RTOL / last_size)
        )
        last = prev_size <= settings.PATH_NEWTON_RTOL
        b_rtol = min(rtol, settings.PATH_TANGENT_RTOL) if last else rtol
        d_theta, d_nu, b_vec = _newton_direction(st, state, ev, B, ws, [rtol, b_rtol])
        step_logits = st.logit_step(ev, d_theta)
        t = min(1.0, settings.PATH_MAX_LOGIT_STEP / step_logits) if step_logits > 0 else 1.0
        size = _relative_size(st, state, d_theta, d_nu)
        # converged one full step after the first full step below PATH_NEWTON_RTOL (see there):
        # the count does not depend on the size of rounding-level steps
        converged = t == 1.0 and prev_size <= settings.PATH_NEWTON_RTOL
        prev_size = size if t == 1.0 else np.inf
        last_size = t * size
        state = _State(state.theta + t * d_theta, state.lam * float(np.exp(t * d_nu)), state.direct)
        if not (np.all(np.isfinite(state.theta)) and state.lam >= tiny):
            raise _NoConvergenceError
        if converged:
            return state, it, b_vec
    raise _NoConvergenceError


def _tangent_from(st: Split, state: _State, B: float, b_vec: np.ndarray) -> tuple[np.ndarray, float]:
    """``(d theta / dB, d log lambda / dB)`` at a solved point, from ``b = K^{-1} w`` of its last Newton step.

    Differentiating ``grad f + lambda W = 0, ||W||^2 = B^2`` in ``B``: ``d theta / dB = -(d
    lambda / dB) b`` and ``<w, d theta / dB> = B``.
    """
    w = _theta(st, state, True)
    d_lam_dB = -B / st.inner(w, b_vec)
    return -d_lam_dB * b_vec, d_lam_dB / state.lam


# ---------------------------------------------------------------------------- the certificate
#: The relative KKT residuals a certificate checks, with the names its error gives them.
_RESIDUALS = {"kkt_f": "KKT residual on F", "kkt_perp": "on F-perp", "kkt": "in total"}


def _measure(data, st: Split, state: _State, B: float) -> dict[str, Any]:
    """The certificate's measurements at ``state`` (no verdict), named as in :class:`SplitPath`."""
    V, d = data.V, data.d
    lam = state.lam
    split = _theta(st, state, False)
    ev = st.evaluate(data, split, hessian=False)
    g, G_F = st.gradient_split(data, ev)  # grad CE(W) and its F part, vec (V d)
    G_perp = g - G_F
    delta, W_perp = st.matrices(split)

    def rel(num: np.ndarray, den: float) -> float:
        return safe_norm(num) / den if den > 0 else np.inf

    if state.direct:  # W's F-part from its own coordinates (no cancellation of W* + delta)
        W_F = st.matrices(state.theta)[0]
        lam_W_F = lam * W_F
    else:
        W_F = st.W_star.ravel() + delta
        lam_W_F = lam * st.W_star.ravel() + lam * delta
    W = (W_F + W_perp).reshape(V, d)
    return {
        "W": W,
        "f_offset": delta.reshape(V, d),
        "f_distance": st.block_norms(split)[0],
        "kl": ev.loss.kl,
        "out_mass": ev.loss.out_mass,
        "norm_error": abs(float(np.hypot(*st.block_norms(_theta(st, state, True)))) - B) / B,
        # with F = {0} (every support a single token) there is no F block to certify
        "kkt_f": rel(G_F + lam_W_F, safe_norm(G_F)) if st.n_f else 0.0,
        "kkt_perp": rel(G_perp + lam * W_perp, safe_norm(G_perp)),
        "kkt": rel(g + lam * W.ravel(), safe_norm(g)),
    }


def _certify(data, st: Split, state: _State, B: float) -> dict[str, Any]:
    """Verify ``state`` as the minimizer at radius ``B``: its :func:`_measure`, or PathCertificateError."""
    cert = _measure(data, st, state, B)
    lam = state.lam
    problems = []
    if not lam >= settings.PATH_MIN_LAMBDA:
        problems.append(
            f"lambda = {lam:.3g} is below {settings.PATH_MIN_LAMBDA:.3g}: the out-of-support "
            "probabilities exp(-margin) of W_B, the gradient and lambda are leaving the range of "
            "normal doubles, where the KKT residual can no longer be measured to full precision"
        )
    if cert["norm_error"] > settings.PATH_NORM_RTOL:
        problems.append(f"| ||W|| - B | / B = {cert['norm_error']:.2e}")
    # each residual plus how far W_B's own rounding moves it stays within the tolerance: the
    # largest change of the residuals over four seeded moves of every coordinate by +-eps
    rng = np.random.default_rng(0)
    spread = 0.0
    for _ in range(4):
        theta = state.theta * (1.0 + settings.FLOAT64_EPS * rng.choice([-1.0, 1.0], size=state.theta.size))
        moved = _measure(data, st, _State(theta, lam, state.direct), B)
        spread = max(spread, *(abs(moved[name] - cert[name]) for name in _RESIDUALS))
    for name, label in _RESIDUALS.items():
        if not cert[name] + spread <= settings.PATH_KKT_RTOL:
            problems.append(f"{label} {cert[name]:.2e}")
    if problems and spread >= settings.PATH_KKT_RTOL / 10:
        problems.append(
            f"float64 does not resolve the KKT conditions here: moving the coordinates of W_B "
            f"by their rounding (relative eps) moves the relative residuals by {spread:.1e}, "
            f"against the tolerance {settings.PATH_KKT_RTOL:g}"
        )
    if problems:
        raise PathCertificateError(
            f"the regularization path cannot be certified at B = {B:g}: " + "; ".join(problems)
        )
    return cert


# ---------------------------------------------------------------------------- the public API
@dataclass(frozen=True)
class _PathEnd:
    """Where a path ended, to continue it: the solver's last point, for the normalized data."""

    data: NTPData  # the normalized data the path was solved for
    state: _State
    radius: float  # the last radius, for the normalized data
    b_vec: np.ndarray  # K^{-1} w of the last Newton step (the tangent there)
    workspace: Workspace  # what the solver kept between Newton steps


@dataclass(frozen=True)
class SplitPath(RegularizationPath):
    """Paper A's path: :class:`~ntpnb._path_result.RegularizationPath` and the split's measurements.

    ``radii`` increase; ``W`` is ``(n, V, d)``; ``kkt`` is relative to ``||grad CE(W_B)||``.
    """

    #: ``(n, V, d)`` ``P_F(W_B) - W*``, from the split: relatively accurate even far below the
    #: rounding of ``W_B`` (about ``1e-16 B``).
    f_offset: np.ndarray
    #: ``(n,)`` ``||P_F(W_B) - W*||`` without the underflow of squaring (``np.linalg.norm(f_offset)``
    #: returns 0 below about 1e-154).
    f_distance: np.ndarray
    #: ``(n,)`` ``CE(W_B) - H`` (relatively accurate; far below the resolution of ``CE``).
    kl: np.ndarray
    #: ``(n,)`` ``sum_j pi_j`` (out-of-support probability of context ``j`` under ``W_B``).
    out_mass: np.ndarray
    #: ``(n,)`` the relative KKT residual on F.
    kkt_f: np.ndarray
    #: ``(n,)`` the same on F-perp.
    kkt_perp: np.ndarray
    #: ``(n,)`` Newton iterations spent reaching each radius from the previous one.
    newton_iterations: np.ndarray
    _end: _PathEnd | None = field(default=None, repr=False, compare=False)


#: Radii (for H normalized to max|H| ~ 1) beyond which ``B^2`` and the norm constraint overflow.
_MAX_RADIUS = float(np.sqrt(np.finfo(float).max)) / 2**10


def _start_end(norm: NTPData, radii: np.ndarray, start: object) -> _PathEnd | None:
    """The end of ``start`` (a path of the data normalized to ``norm``, below ``radii``), if given."""
    if start is None:
        return None
    if not isinstance(start, SplitPath) or start._end is None:
        raise InvalidDataError(
            f"start must be a RegularizationPath returned by regularization_path, got {type(start).__name__}"
        )
    end = start._end
    same = end.data is norm or all(
        np.array_equal(getattr(end.data, k), getattr(norm, k)) for k in ("H", "pi", "P")
    )
    if not same:
        raise InvalidDataError("start is a path of other data: it can only be continued on its own data")
    if not radii[0] > start.radii[-1]:
        raise InvalidDataError(
            f"radii must continue start beyond its last radius {float(start.radii[-1])!r}, "
            f"got {float(radii[0])!r}"
        )
    return end


def regularization_path(data: NTPData, radii: ArrayLike, *, start: SplitPath | None = None) -> SplitPath:
    """The exact minimizers ``W_B = argmin_{||W||_F <= B} CE(W)`` for increasing radii ``B``.

    Method and certificate (KKT residuals within :data:`ntpnb.settings.PATH_KKT_RTOL`): see the
    module docstring.

    Parameters
    ----------
    data
        An NTP_H-compatible, NTP-separable training set.
    radii
        Positive, finite, strictly increasing radii.
    start
        A path of the same data whose last radius lies below ``radii``, continued from its last
        point instead of from ``W = 0``; the answers are those of one call with both sets of
        radii. The result holds the new radii only.

    Returns
    -------
    SplitPath
        The minimizers with their certificates.

    Raises
    ------
    InvalidDataError
        On bad radii (empty, non-finite, non-positive, not strictly increasing, not beyond the
        last radius of ``start``) or a ``start`` that is not a path of ``data``.
    NotCompatibleError, NotSeparableError
        If the data are not compatible or not separable (Theorem 1's assumptions; without
        separability the ball constraint stops being active at a finite radius).
    PathCertificateError
        For a radius at which no certified float64 answer exists (see the module docstring) or
        the solver does not converge.
    """
    require_data(data)
    B_all = checked_radii(radii)
    norm, c = normalized(data)  # the one normalization: everything below sees norm only
    end = _start_end(norm, B_all, start)
    scaled = _scaled_radii(B_all, c)
    st = _path_structure(norm)
    p = _path(norm, st, scaled, end)
    return p if c == 1.0 else _scaled_back(p, B_all, c)


def _scaled_radii(B_all: np.ndarray, c: float) -> np.ndarray:
    """The radii for the data normalized by ``c``: ``c B`` (exact; ``c`` a power of two).

    ``CE(W; cH) = CE(cW; H)``, so ``W_B(H) = W_{cB}(H / c) / c`` and ``lambda_B(H) =
    lambda_{cB}(H / c) / c^2``; the entry radius and every tolerance are then relative to ``H``.
    """
    if c == 1.0:
        return B_all
    with np.errstate(over="ignore", under="ignore"):
        scaled = B_all * c
    bad = ~np.isfinite(scaled) | (scaled <= 0) | np.append(np.diff(scaled) <= 0, False)
    if bad.any():  # radii that leave float64 (or become equal) times c
        raise PathCertificateError(
            f"the radius B = {float(B_all[np.flatnonzero(bad)[0]]):g} times max|H| ~ {c:g} lies outside "
            "the float64 range, where no point of the path can be represented and certified"
        )
    return scaled


def _scaled_back(p: SplitPath, B_all: np.ndarray, c: float) -> SplitPath:
    """The path of the normalized data ``p`` as that of the data: ``W / c``, ``lambda c^2``."""
    with np.errstate(over="ignore", under="ignore"):
        lam = p.lam * c * c
    if not np.all(np.isfinite(lam) & (lam >= np.finfo(float).tiny)):
        raise ScaleError(
            f"the multipliers lambda of the path scale like max|H|^2 ~ {c:.3g}^2 and leave the float64 "
            "range; rescale the embeddings"
        )
    out = {name: getattr(p, name) / c for name in ("W", "f_offset", "f_distance")}
    out.update(radii=B_all, lam=lam)
    return replace(p, **{name: frozen(arr, order="K") for name, arr in out.items()})


def _path_structure(norm: NTPData) -> Split:
    """The split of normalized data, its two conditions decided here once: compatible, separable.

    ``rank H = m`` (the Gram form) makes the data compatible; otherwise the split's ``W*`` decides.
    Raises NotCompatibleError (while the split's ``W*`` is formed) or NotSeparableError.
    """
    if _gram_form_fits(normalized_embedding_svd(norm), norm.m):
        st = gram_structure(norm)
    else:
        st = path_structure(norm)  # or NotCompatibleError
    if not normalized_separability(norm).separable:
        raise NotSeparableError("the regularization path needs NTP-separable data (Theorem 1)")
    return st


def _first_point(data: NTPData, st: Split, B_cur: float, ws: Workspace) -> tuple[_State, np.ndarray]:
    """The path's first point, at radius ``B_cur``, and its tangent's ``b_vec``.

    The path starts at ``W = 0`` (``alpha = -w*``) in the direction of steepest descent.

    Raises
    ------
    PathCertificateError
        If the gradient of CE vanishes at ``W = 0``, or Newton's method does not converge at ``B_cur``.
    """
    theta0 = np.concatenate([-st.w_star, np.zeros(st.n_perp)])
    g = st.evaluate(data, theta0, hessian=False).grad
    gnorm = float(np.sqrt(st.inner(g, g)))
    if gnorm == 0.0:
        raise PathCertificateError("the gradient of CE vanishes at W = 0: the path is the single point 0")
    step = -B_cur * g / gnorm
    if B_cur < st.w_star_norm:  # W = step exactly, in the direct representation
        state = _State(step, gnorm / B_cur, direct=True)
    else:
        state = _State(theta0 + step, gnorm / B_cur)
    try:
        state, _, b_vec = _solve_radius(data, st, state, B_cur, ws)
    except _NoConvergenceError as exc:
        raise PathCertificateError(f"Newton's method did not converge at B = {B_cur:g}") from exc
    return state, b_vec


def _path(data: NTPData, st: Split, B_all: np.ndarray, end: _PathEnd | None) -> SplitPath:
    """:func:`regularization_path` for normalized data (``max|H|`` near 1) and their split ``st``."""
    if B_all[-1] > _MAX_RADIUS:
        raise PathCertificateError(
            f"no certified path point exists at B = {B_all[-1]:g}: B^2 leaves the float64 range "
            f"beyond {_MAX_RADIUS:.3g}, and far before it (at B / ||W^mm|| of about 660) the "
            "multiplier lambda and the out-of-support probabilities exp(-margin) of W_B leave the "
            "range of normal doubles"
        )
    records = []
    # trial iterates may overflow (every answer is certified, so no warnings); the matrices are
    # small, where threaded BLAS gains nothing and loses much to contention
    with limit_threads(settings.BLAS_THREADS, user_api="blas"), np.errstate(all="ignore"):
        if end is None:
            ws = Workspace()
            B_cur = min(B_all[0], settings.PATH_START_RADIUS)
            state, b_vec = _first_point(data, st, B_cur, ws)
        else:
            # a copy: continuing the same path twice starts from the same factors both times
            B_cur, state, b_vec, ws = end.radius, end.state, end.b_vec, copy.copy(end.workspace)
        for B in B_all:
            state, its, b_vec = _continue(data, st, state, b_vec, B_cur, B, ws)
            B_cur = B
            records.append({**_certify(data, st, state, B), "lam": state.lam, "newton_iterations": its})
    arrays = {name: frozen(np.array([rec[name] for rec in records]), order="K") for name in records[0]}
    arrays["radii"] = frozen(B_all, order="K")
    return SplitPath(**arrays, _end=_PathEnd(data, state, float(B_all[-1]), b_vec, ws))


def _predict(st: Split, state: _State, d_theta: np.ndarray, dB: float) -> np.ndarray:
    """The predicted coordinates at radius ``B + dB`` from the tangent ``d_theta`` at ``B``.

    The F part ``delta = P_F(W_B) - W*`` falls like ``exp(-B / ||W^mm||)``, which the linear step
    overshoots many times over, so a decaying ``delta`` moves at its own rate
    ``kappa = <delta, delta'> / ||delta||^2``: to ``e^{kappa dB} (delta + dB (delta' - kappa
    delta))`` (the linear step to first order). The F-perp part, a growing F part and the direct
    representation step linearly.
    """
    theta = state.theta + dB * d_theta
    r = st.n_f
    if state.direct or not r:
        return theta
    delta = np.zeros_like(state.theta)
    delta[:r] = state.theta[:r]
    rate = np.zeros_like(state.theta)
    rate[:r] = d_theta[:r]
    size = st.inner(delta, delta)
    if not size > 0:
        return theta
    kappa = st.inner(delta, rate) / size
    if not kappa * dB < 0:
        return theta
    shrink = float(np.exp(max(kappa * dB, -700.0)))
    theta[:r] = shrink * (state.theta[:r] + dB * (d_theta[:r] - kappa * state.theta[:r]))
    return theta


def _guess(
    st: Split, state: _State, d_theta: np.ndarray, d_nu: float, B_from: float, B_next: float
) -> _State:
    """The predicted point at ``B_next`` from the solved one at ``B_from`` and its tangent.

    ``theta`` by :func:`_predict`; ``lambda B = -<grad CE, W / B>`` has a log nearly linear in ``B``
    (constant near 0, slope ``-1/||W^mm||`` far out), so ``log(lambda)`` is predicted linear in
    ``B`` beside ``-log B``, exact at both ends; its change is only kept finite.
    """
    dB = B_next - B_from
    d_log_lam = float(np.clip((d_nu + 1.0 / B_from) * dB - np.log(B_next / B_from), -700.0, 700.0))
    return _State(_predict(st, state, d_theta, dB), state.lam * float(np.exp(d_log_lam)), state.direct)


def _unreached(B_to: float, B_from: float, lam: float) -> PathCertificateError:
    """The error of a path that stopped at ``B_from`` (multiplier ``lam``) short of ``B_to``."""
    msg = f"the path solver did not reach B = {B_to:g} (last certified radius {B_from:g}, "
    msg += f"where lambda = {lam:.3g})"
    if lam < settings.PATH_MIN_LAMBDA * 1e12:
        msg += (
            ": the out-of-support probabilities exp(-margin) of W_B and the multiplier "
            "lambda leave the range of normal doubles (about 2.2e-308) beyond it, so no "
            "float64 certificate exists there"
        )
    return PathCertificateError(msg)


def _continue(
    data, st: Split, state: _State, b_vec: np.ndarray, B_from: float, B_to: float, ws: Any = None
) -> tuple[_State, int, np.ndarray]:
    """Follow the path from a solved point at ``B_from`` to ``B_to``, subdividing on failure.

    ``b_vec`` is the tangent's ``K^{-1} w`` at ``B_from``; returns the point at ``B_to``, the
    iterations spent and its ``b_vec``.
    """
    if B_to == B_from:
        return state, 0, b_vec
    targets = [B_to]
    total = 0
    depth = 0
    # at the current point (it does not change when a step is subdivided)
    d_theta, d_nu = _tangent_from(st, state, B_from, b_vec)
    while targets:
        B_next = targets[-1]
        guess = _guess(st, state, d_theta, d_nu, B_from, B_next)
        try:
            state_new, its, b_new = _solve_radius(data, st, guess, B_next, ws)
        except (_NoConvergenceError, PathCertificateError) as exc:
            depth += 1
            if depth > settings.PATH_MAX_SUBDIVISIONS:
                raise _unreached(B_to, B_from, state.lam) from exc
            targets.append(float(np.sqrt(B_from * B_next)) if B_from > 0 else B_next / 2)
            continue
        total += its
        state, B_from, b_vec = state_new, B_next, b_new
        d_theta, d_nu = _tangent_from(st, state, B_from, b_vec)
        targets.pop()
    return state, total, b_vec
