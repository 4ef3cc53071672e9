"""The Gram-block algebra: inverses, pseudo-inverses and Schur complements of blocks of ``K = H H^T``.

:mod:`._active_set`, :mod:`._hinge_newton` and :mod:`._regpath_gram` each invert, per token, a
block ``K[F, F]`` (plus a diagonal) on the contexts ``F`` where the token is free, and sum the
inverses scattered into ``F x F`` (a Schur complement of size ``m``); :class:`NewtonFactors` holds
those of the regularization path's Newton system.

**The rank rule.** A block is inverted by its Cholesky factor when the factor is *resolved*:
``(min diag / max diag)^2 > GRAM_CHOL_RCOND`` (:data:`ntpnb.settings.GRAM_CHOL_RCOND`). Otherwise
it is decomposed through the SVD of ``H[F]`` (not squaring the condition), its rank decided by
:func:`ntpnb._linalg.numerical_rank` (a clear gap of :data:`ntpnb.settings.RANK_GAP`, or
:class:`~ntpnb.errors.RankAmbiguousError`). A block with a positive ridge has full rank.

A block known to be positive definite (the regularization path) is inverted by a diagonally
scaled Cholesky factorization, accurate when the diagonal spans many decades; failure is a
:class:`NoConvergenceError` (the caller takes a shorter step). Two loops
of that route are compiled on first call (:func:`ntpnb._compiled.jit_on_first_call`), so
``import ntpnb`` does not load numba.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy

from .. import settings
from .._compiled import jit_on_first_call
from .._linalg import numerical_rank
from ..errors import SolverError


class NoConvergenceError(Exception):
    """Newton's method did not converge from the given start (the path solver then subdivides)."""


# ---------------------------------------------------------------------------- Cholesky
def symmetric(lower: np.ndarray) -> np.ndarray:
    """The symmetric matrix whose lower triangle is that of ``lower`` (its upper one is ignored)."""
    A = np.tril(lower)
    return A + np.tril(A, -1).T


def cholesky(M: np.ndarray) -> np.ndarray | None:
    """The lower Cholesky factor of an SPD ``M`` if resolved (the rank rule above), else None."""
    c, info = scipy.linalg.lapack.dpotrf(M, lower=1, clean=1)
    if info != 0:
        return None
    diag = np.diag(c)
    return None if (diag.min() / diag.max()) ** 2 <= settings.GRAM_CHOL_RCOND else c


def inverse(M: np.ndarray) -> np.ndarray | None:
    """``M^{-1}`` (symmetric) from the :func:`cholesky` factor of ``M``, or None where that is None."""
    c = cholesky(M)
    if c is None:
        return None
    inv, info = scipy.linalg.lapack.dpotri(c, lower=1)
    return symmetric(inv) if info == 0 else None


def scaled_inverse(M: np.ndarray) -> np.ndarray:
    """The inverse of a symmetric positive definite ``M``: :func:`block_inverse` of all of it."""
    if not (np.all(np.isfinite(M)) and np.all(np.diag(M) > 0)):
        raise NoConvergenceError("a block of the Newton system is not finite and positive on its diagonal")
    n = M.shape[0]
    return symmetric(block_inverse(M, np.arange(n), np.zeros(n)))


def solve_spd(S: np.ndarray, b: np.ndarray, what: str, ridge: float = 0.0) -> np.ndarray:
    """The solution of ``S x = b`` for a symmetric positive definite ``S``, by Cholesky.

    Only the lower triangle of ``S`` is read. ``ridge`` (relative to the largest diagonal entry)
    is added first (it picks one solution of a consistent singular system).
    """
    if ridge:
        S = S + ridge * float(np.diag(S).max()) * np.eye(S.shape[0])
    try:
        return scipy.linalg.cho_solve(
            scipy.linalg.cho_factor(S, lower=True, check_finite=False), b, check_finite=False
        )
    except (scipy.linalg.LinAlgError, ValueError):
        raise SolverError(
            f"the Schur complement of {what} could not be solved: it is not finite, or not "
            "numerically positive definite on this instance (its Cholesky factorization failed)"
        ) from None


def scatter_add(S: np.ndarray, F: np.ndarray, block: np.ndarray) -> None:
    """In place: ``S[F, F] += block`` for a C-ordered ``S`` (``m x m``) and distinct indices ``F``."""
    S.reshape(-1)[(F[:, None] * S.shape[0] + F).ravel()] += block.ravel()


# ---------------------------------------------------------------------------- blocks of any rank
@dataclass(frozen=True)
class GramBlock:
    """Pseudo-inverse ``P`` of ``K[F, F] + ridge I`` and an orthonormal basis ``N`` of its null space."""

    F: np.ndarray
    P: np.ndarray
    N: np.ndarray  # shape (|F|, 0) when the block is non-singular


def gram_block(K: np.ndarray, H: np.ndarray, F: np.ndarray, ridge: float = 0.0) -> GramBlock:
    """Factor ``K[F, F] + ridge I`` (``K = H H^T``): an inverse by Cholesky, or from the SVD of ``H[F]``.

    The SVD route (see the module docstring): ``K[F, F] = U diag(s^2) U^T`` from
    ``H[F] = U diag(s) Vt`` (full ``U``). With ``ridge = 0`` the rank is ``rank H[F]``
    (:func:`ntpnb._linalg.numerical_rank`) and ``N`` spans the rest.
    """
    if F.size == 0:
        return GramBlock(F, np.zeros((0, 0)), np.zeros((0, 0)))
    KF = K[np.ix_(F, F)]
    if ridge:
        KF = KF + ridge * np.eye(F.size)
    P = inverse(KF)
    if P is not None:
        return GramBlock(F, P, np.zeros((F.size, 0)))
    HF = H[F]
    U, s, _ = np.linalg.svd(HF, full_matrices=True)
    w = np.zeros(F.size)
    w[: s.size] = s * s
    if ridge:
        return GramBlock(F, (U / (w + ridge)) @ U.T, np.zeros((F.size, 0)))
    r = numerical_rank(s, HF.shape, what=f"the embeddings of a block of {F.size} contexts")
    Ur = U[:, :r]
    return GramBlock(F, (Ur / w[:r]) @ Ur.T, U[:, r:])


def _downdate(P: np.ndarray, keep: np.ndarray) -> np.ndarray | None:
    """The inverse of the kept principal block (rows ``keep``) from the inverse ``P`` of the whole.

    A Schur-complement downdate; ``None`` where the leaving rows' block of ``P`` is not positive
    definite to LAPACK.
    """
    r = ~keep
    Prr = P[np.ix_(r, r)]
    Pkr = P[np.ix_(keep, r)]
    try:
        X = scipy.linalg.solve(Prr, Pkr.T, assume_a="pos", check_finite=False)
    except (scipy.linalg.LinAlgError, ValueError):
        return None
    return P[np.ix_(keep, keep)] - Pkr @ X


def _border(
    K: np.ndarray, P: np.ndarray, keep: np.ndarray, add: np.ndarray, ridge: float, top: float
) -> np.ndarray | None:
    """The inverse on ``keep`` and ``add`` (sorted) from the inverse ``P`` on ``keep``: bordering.

    ``top`` is the whole block's largest diagonal entry (ridge included): the rank rule resolves
    the Schur complement's factor against it, not only against its own diagonal (a single joining
    row is always "resolved" alone). ``None`` where the factor is not resolved or not inverted.
    """
    B = K[np.ix_(keep, add)]
    PB = P @ B
    Kaa = K[np.ix_(add, add)] + ridge * np.eye(add.size)
    Z = Kaa - B.T @ PB
    c = cholesky(Z)
    if c is None or float(np.diag(c).min()) ** 2 <= settings.GRAM_CHOL_RCOND * top:
        return None
    Zi, info = scipy.linalg.lapack.dpotri(c, lower=1)
    if info != 0:
        return None
    Zi = symmetric(Zi)
    PBZ = PB @ Zi
    P = np.block([[P + PBZ @ PB.T, -PBZ], [-PBZ.T, Zi]])
    order = np.argsort(np.concatenate([keep, add]), kind="stable")
    return P[np.ix_(order, order)]


def update_block(K: np.ndarray, old: GramBlock, F: np.ndarray, ridge: float) -> GramBlock | None:
    """The inverse of ``K[F, F] + ridge I`` from the inverse ``old.P`` on a nearby set ``old.F``.

    A Schur-complement downdate for rows leaving, the bordering formula for rows joining:
    ``O(|F|^2 k)`` for ``k`` changes. None when more than
    :data:`~ntpnb.settings.GRAM_UPDATE_FRACTION` of the rows change, or for a singular block or
    a Schur complement whose factor is not resolved.
    """
    if old.N.shape[1] or old.F.size == 0:
        return None
    keep_old = np.isin(old.F, F, assume_unique=True)
    add = F[~np.isin(F, old.F, assume_unique=True)]
    n_changes = int((~keep_old).sum()) + add.size
    if n_changes == 0:
        return old
    if n_changes > settings.GRAM_UPDATE_FRACTION * F.size:
        return None
    P = old.P
    if not keep_old.all():
        P = _downdate(P, keep_old)
        if P is None:
            return None
    keep = old.F[keep_old]
    if add.size:
        P = _border(K, P, keep, add, ridge, np.diag(K)[F].max() + ridge)
        if P is None:
            return None
    return GramBlock(F, P, np.zeros((F.size, 0)))


# ---------------------------------------------------------------------------- compiled loops
@jit_on_first_call
def scaled_block(K: np.ndarray, A: np.ndarray, diag: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(D M D, s)``, column-major: ``M = K[A, A] + diag(diag)``, ``D = diag(s) = diag(M)^{-1/2}``."""
    n = A.size
    s = np.empty(n)
    for i in range(n):
        s[i] = 1.0 / np.sqrt(K[A[i], A[i]] + diag[i])
    out = np.empty((n, n)).T  # column-major
    for j in range(n):
        row = K[A[j]]
        for i in range(n):
            out[i, j] = row[A[i]] * s[i] * s[j]
        out[j, j] = 1.0
    return out, s


@jit_on_first_call
def unscale_lower(inv: np.ndarray, s: np.ndarray) -> None:
    """In place: the lower triangle of ``inv`` (the one read) times ``s_i s_j`` (``D M^-1 D``, undone)."""
    n = s.size
    for j in range(n):
        for i in range(j, n):
            inv[i, j] *= s[i] * s[j]


def block_inverse(K: np.ndarray, A: np.ndarray, diag: np.ndarray) -> np.ndarray:
    """``(K[A, A] + diag(diag))^{-1}`` by a diagonally scaled Cholesky factorization: its lower triangle."""
    if not np.all(np.isfinite(diag)):
        raise NoConvergenceError("a block of the Newton system is not finite")
    Ms, scale = scaled_block(K, A, diag)
    c, info = scipy.linalg.lapack.dpotrf(Ms, lower=1, clean=0, overwrite_a=1)
    if info != 0:
        raise NoConvergenceError("a block of the Newton system is not numerically positive definite")
    inv, info = scipy.linalg.lapack.dpotri(c, lower=1, overwrite_c=1)
    if info != 0:
        raise NoConvergenceError("a block of the Newton system is singular")
    unscale_lower(inv, scale)
    return inv


def lower_times(inv: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``x @ M`` for the rows of ``x`` (k, n), ``M`` symmetric given by the lower triangle of ``inv``."""
    return (
        np.stack([scipy.linalg.blas.dsymv(1.0, inv, row, lower=1) for row in x]) if x.shape[0] else x.copy()
    )


# ---------------------------------------------------------------------------- the path's Newton system
class NewtonFactors:
    """The inverses ``M_v^{-1}`` and ``S^{-1}`` of Newton's ``psi`` form at one point and ``lambda``.

    The regularization path's Gram form (:mod:`._regpath_gram`) solves with them; ``M_v = K[A, A] +
    diag(lambda / (pi q_v))`` on the contexts ``A`` where token ``v``'s entry is kept.
    """

    def __init__(self, K: np.ndarray, lam: float, pi_q: np.ndarray):
        m, V = pi_q.shape
        self.lam = lam
        self.pi_q = pi_q
        with np.errstate(divide="ignore", over="ignore"):
            self.Delta = Delta = lam / pi_q
        diag_K = np.diag(K)
        # psi_jv is below the rounding of its equations when lambda / (pi q) > K_jj / eps
        self.keep = keep = Delta * settings.FLOAT64_EPS <= diag_K[:, None]
        # where lambda / (pi q) <= K_jj the logits are read as psi / (pi q), else from the residual
        self.first = Delta <= diag_K[:, None]
        self.blocks: list[tuple[int, np.ndarray | None, np.ndarray]] = []
        S = np.zeros((m, m))
        for v in range(V):
            A = np.flatnonzero(keep[:, v])
            if A.size == 0:
                continue
            inv = block_inverse(K, A, Delta[A, v])  # lower triangle
            full = A.size == m
            if full:
                S += inv
            else:  # A increasing: the lower triangle of the block lands in that of S
                scatter_add(S, A, inv)
            self.blocks.append((v, None if full else A, inv))
        S = symmetric(S)
        lonely = np.diag(S) == 0  # a context with no entry left: its multiplier is free
        S[lonely, lonely] = 1.0
        self.S_inv = scaled_inverse(S)

    def change(self, K: np.ndarray, lam: float, pi_q: np.ndarray) -> float:
        """How far the Newton matrix at ``(lam, pi_q)`` is from this one, relative to this one.

        The largest ``|Delta' - Delta| / (K_jj + Delta)`` over the entries kept in both (a bound
        on the relative change of each block's diagonal); ``K_jj / (K_jj + Delta)`` for an entry
        kept in one only (the other's ``Delta`` taken as infinite).
        """
        diag_K = np.diag(K)[:, None]
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            Delta = lam / pi_q
            keep = Delta * settings.FLOAT64_EPS <= diag_K
            rel = np.abs(Delta - self.Delta) / (diag_K + self.Delta)
            alone = diag_K / (diag_K + np.where(keep, Delta, self.Delta))
        rel = np.where(keep & self.keep, rel, np.where(keep | self.keep, alone, 0.0))
        return float(np.nan_to_num(rel, nan=1.0).max(initial=0.0))

    def solve(self, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(psi, c)`` for the right-hand sides ``b`` (k, m, V)."""
        beta = np.zeros(b.shape[:2])
        parts = []
        for v, A, inv in self.blocks:
            y = lower_times(inv, b[:, :, v] if A is None else b[:, A, v])
            if A is None:
                beta += y
            else:
                beta[:, A] += y
            parts.append(y)
        c = beta @ self.S_inv
        psi = np.zeros_like(b)
        for (v, A, inv), y in zip(self.blocks, parts, strict=True):
            if A is None:
                psi[:, :, v] = y - lower_times(inv, c)
            else:
                psi[:, A, v] = y - lower_times(inv, c[:, A])
        return psi, c
