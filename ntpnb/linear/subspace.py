"""The data subspace F, its projections, the finite component W* and the rank of H (Paper A, Sec. 3-4).

``F = span{(e_z - e_z') h_j^T : z != z' in S_j, j in [m]}`` (Eq. (5)). An orthonormal basis
is computed once per data set from the singular value decomposition of the equality
constraint matrix, whose rows span F. The same decomposition solves the compatibility
equations (4): their minimum-norm solution is the unique solution lying in F, ``W*``. Above a
size (:data:`ntpnb.settings.F_DENSE_MAX_ENTRIES`) ``W*`` and the compatibility residual come from
LSQR on the map ``W -> in-support logit differences`` instead (:func:`equality_operator`), which
forms neither a basis of F nor any matrix of its rows.

Both dimensions the package needs from the data, ``rank H`` (:func:`embedding_svd`) and
``dim F`` (:func:`f_decomposition`), are decided here, once per data set, by the one rule of
:mod:`ntpnb.linalg` (a clear gap in the spectrum, never a cut-off at machine epsilon); every
other module takes them from these two functions.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike
from scipy.linalg import lapack
from scipy.sparse.linalg import LinearOperator, lsqr

from .. import settings
from ..errors import NotCompatibleError, ScaleError, SolverError
from ..linalg import numerical_rank, thin_svd
from ..settings import COMPAT_RTOL
from .constraints import NTPRows, equality_matrix, equality_rhs
from .data import NTPData, cached_per_data, check_decoder, check_dense_size, frozen, normalized

__all__ = [
    "EmbeddingSVD",
    "embedding_svd",
    "embedding_rank",
    "FDecomposition",
    "f_decomposition",
    "f_basis",
    "project_F",
    "project_F_perp",
    "project_R",
    "compatibility_residual",
    "is_compatible",
    "finite_solution",
    "equality_operator",
    "uses_dense_f",
]


@dataclass(frozen=True)
class EmbeddingSVD:
    """Thin SVD ``H = U diag(s) Vt`` of the embeddings, cut at their numerical rank.

    Attributes
    ----------
    U
        ``(m, r)`` left singular vectors (``r = rank H``).
    s
        ``(r,)`` the singular values of ``H`` kept (in the units of ``H``).
    Vt
        ``(r, d)`` orthonormal rows spanning the row space of ``H``.
    spectrum
        All ``min(m, d)`` singular values of ``H``.
    """

    U: np.ndarray
    s: np.ndarray
    Vt: np.ndarray
    spectrum: np.ndarray

    @property
    def rank(self) -> int:
        """``rank H``."""
        return int(self.s.size)


@cached_per_data
def embedding_svd(data: NTPData) -> EmbeddingSVD:
    """The SVD of ``H`` cut at ``rank H``, decided once per data set by :func:`ntpnb.linalg.numerical_rank`.

    Computed for ``H`` normalized by a power of two (:func:`ntpnb.linear.data.normalized`; exact)
    and scaled back, so it works at any scale of ``H``. The arrays are read-only.

    Raises
    ------
    RankAmbiguousError
        If the singular values of ``H`` show no clear gap (``rank H`` is not determined in float64).
    """
    norm, scale = normalized(data)
    if norm is not data:
        dec = embedding_svd(norm)
        return EmbeddingSVD(dec.U, frozen(dec.s * scale), dec.Vt, frozen(dec.spectrum * scale))
    U, s, Vt = thin_svd(data.H, "the embeddings H")
    r = numerical_rank(s, data.H.shape, what="the embeddings H")
    return EmbeddingSVD(U=frozen(U[:, :r]), s=frozen(s[:r]), Vt=frozen(Vt[:r]), spectrum=frozen(s))


def embedding_rank(data: NTPData) -> int:
    """``rank H``, the one decision of it in the package (see :func:`embedding_svd`)."""
    return embedding_svd(data).rank


@dataclass(frozen=True)
class FDecomposition:
    """Thin SVD ``G = U diag(s) B`` of the equality-constraint matrix ``G`` (rank part only).

    Attributes
    ----------
    basis
        ``(r, V d)`` matrix with orthonormal rows spanning F (``r = dim F``).
    U
        ``(n_eq, r)`` left singular vectors.
    s
        ``(r,)`` positive singular values of ``G / scale``.
    scale
        The power of two ``c`` by which ``H`` was divided before the decomposition
        (:func:`ntpnb.linear.data.normalized`); the singular values of ``G`` are ``scale * s``.
    """

    basis: np.ndarray
    U: np.ndarray
    s: np.ndarray
    scale: float = 1.0

    @property
    def dim(self) -> int:
        """Dimension of F."""
        return self.basis.shape[0]


@cached_per_data
def f_decomposition(data: NTPData) -> FDecomposition:
    """SVD of the equality constraints of ``data``, computed once per data set.

    Computed for ``H`` normalized to ``max|H| ~ 1`` (F and its basis do not depend on the scale
    of ``H``). ``dim F`` is the rank of the constraint matrix at a clear gap of its spectrum
    (:func:`ntpnb.linalg.numerical_rank`). The arrays are read-only.

    Raises
    ------
    RankAmbiguousError
        If that spectrum shows no clear gap (``dim F`` is not determined in float64).
    """
    norm, scale = normalized(data)
    if norm is not data:
        return replace(f_decomposition(norm), scale=scale)
    check_dense_size(equality_matrix(data).shape, "the equality-constraint matrix")
    G = equality_matrix(data).toarray()
    if G.shape[0] == 0:  # every support is a single token: F = {0}
        return FDecomposition(
            frozen(np.zeros((0, data.V * data.d))), frozen(np.zeros((0, 0))), frozen(np.zeros(0))
        )
    what = "the equality constraints (6a), whose rows span F"
    U, s, Vt = thin_svd(G, what)
    r = numerical_rank(s, G.shape, what=what)
    return FDecomposition(basis=frozen(Vt[:r]), U=frozen(U[:, :r]), s=frozen(s[:r]))


def f_basis(data: NTPData) -> np.ndarray:
    """An orthonormal basis of F as an ``(r, V, d)`` array of matrices (``r = dim F``)."""
    basis = f_decomposition(data).basis
    return basis.reshape(-1, data.V, data.d)


def project_F(data: NTPData, W: ArrayLike) -> np.ndarray:  # noqa: N802 (the paper's F)
    """Orthogonal projection ``P_F(W)`` of a ``(V, d)`` matrix onto F."""
    W = check_decoder(data, W)
    B = f_decomposition(data).basis
    return (B.T @ (B @ W.ravel())).reshape(W.shape)


def project_F_perp(data: NTPData, W: ArrayLike) -> np.ndarray:  # noqa: N802
    """Orthogonal projection ``P_perp(W) = W - P_F(W)`` onto the complement of F."""
    W = check_decoder(data, W)
    return W - project_F(data, W)


def project_R(data: NTPData, W: ArrayLike) -> np.ndarray:  # noqa: N802 (the subspace R)
    """Orthogonal projection of a ``(V, d)`` matrix onto ``R = 1-perp (x) rowspace(H)``.

    ``R`` (zero column sums, rows in the row space of the embeddings) is the part of ``W`` the
    loss sees: a multiple of ``1`` added to a column shifts every logit of a context equally,
    and a row component orthogonal to every ``h_j`` changes no logit. Every gradient of the
    loss lies in ``R`` (so gradient descent never changes ``W - P_R(W)``), and so does every
    point of the regularization path (a component outside ``R`` would spend norm for nothing).
    ``rank H`` is decided once (:func:`embedding_rank`).
    """
    W = check_decoder(data, W)
    Vt = embedding_svd(data).Vt
    centered = W - W.mean(axis=0, keepdims=True)
    return (centered @ Vt.T) @ Vt


def equality_operator(data: NTPData) -> LinearOperator:
    """The equality constraints (4) as a map ``vec(W) -> (L_jz - L_{j a_j})`` over their rows.

    ``L = H W^T`` are the logits; the adjoint maps the row weights ``mu`` to
    ``vec(C^T H)`` with ``C`` the ``(m, V)`` coefficients of :meth:`NTPRows.coefficients`. Each
    product costs two ``(m, d, V)`` matrix products; no row of the ``(n_eq, V d)`` matrix is formed.
    """
    rows = NTPRows(data)
    no_ineq = np.zeros(rows.n_ineq)
    return LinearOperator(
        (rows.n_eq, data.V * data.d),
        matvec=lambda w: rows.equality_residuals(np.ravel(w)),
        rmatvec=lambda mu: rows.combine(no_ineq, np.ravel(mu)),
        dtype=float,
    )


def _solve_dense(data: NTPData) -> tuple[np.ndarray, float]:
    """``vec(W*)`` and the residual of (4) from the SVD of the equality matrix (:func:`f_decomposition`)."""
    dec = f_decomposition(data)
    b = equality_rhs(data)
    coef = dec.U.T @ b
    return dec.basis.T @ (coef / dec.s), float(np.linalg.norm(b - dec.U @ coef))


def _solve_lsqr(data: NTPData) -> tuple[np.ndarray, float]:
    """``vec(W*)`` and the residual of (4) by LSQR on :func:`equality_operator`.

    Started at zero, LSQR's iterates stay in the range of the adjoint, which is F, so its limit
    is the minimum-norm least-squares solution: ``W*`` when (4) is solvable. The residual is
    recomputed from the answer, not taken from LSQR's recurrence.

    Raises
    ------
    SolverError
        If LSQR stops at its iteration limit (:data:`ntpnb.settings.F_LSQR_MAX_ITER`).
    """
    op = equality_operator(data)
    b = np.asarray(equality_rhs(data), dtype=float)
    tol = settings.F_LSQR_TOL
    w, istop, itn = lsqr(op, b, atol=tol, btol=tol, iter_lim=settings.F_LSQR_MAX_ITER)[:3]
    if istop == 7:
        raise SolverError(
            f"LSQR did not converge on the compatibility equations (4) in {itn} iterations "
            f"({op.shape[0]} rows, V d = {op.shape[1]}); raise ntpnb.settings.F_LSQR_MAX_ITER"
        )
    return w, float(np.linalg.norm(b - op.matvec(w)))


def uses_dense_f(data: NTPData) -> bool:
    """Whether ``W*`` comes from the dense SVD of (4) (:data:`ntpnb.settings.F_DENSE_MAX_ENTRIES`)."""
    return NTPRows(data).n_eq * data.V * data.d <= settings.F_DENSE_MAX_ENTRIES


def _solve_gram(data: NTPData) -> tuple[np.ndarray, float] | None:
    """``vec(W*)`` and the residual of (4) from the Gram matrix of the equality rows, or None.

    ``W*`` lies in F, so ``W* = sum_i mu_i r_i`` over the rows ``r_i = (e_z - e_{a_j}) h_j^T``
    of (4), and (4) reads ``G mu = b`` with ``G_ii' = <e_z - e_a, e_z' - e_a'> K_jj'``
    (``K = H H^T``): a ``dim F x dim F`` system, no matrix of size ``V d``. Solved by Cholesky
    with one step of iterative refinement when ``G`` is clearly non-singular (LAPACK's estimate
    of its reciprocal condition number above :data:`ntpnb.settings.F_GRAM_RCOND`), and only when
    the residual it leaves passes the compatibility test; None otherwise (dependent rows, as
    when (4) has no solution, or lost digits), and LSQR answers. The residual is recomputed
    from the answer.
    """
    rows = NTPRows(data)
    mask = data.support_mask
    anchors = np.argmax(mask, axis=1)
    eq = mask.copy()
    eq[np.arange(data.m), anchors] = False
    j, z = np.nonzero(eq)  # the rows of (4), in the order of equality_rhs
    if j.size == 0:
        return None
    a = anchors[j]
    tok = (z[:, None] == z[None, :]).astype(float) + (a[:, None] == a[None, :])
    tok -= (z[:, None] == a[None, :]).astype(float) + (a[:, None] == z[None, :])
    G = tok * (data.H[j] @ data.H[j].T)
    c, info = lapack.dpotrf(G, lower=1, clean=1)
    if info != 0:
        return None
    rcond, info = lapack.dpocon(c, float(np.abs(G).sum(axis=0).max()), uplo="L")
    if info != 0 or not rcond > settings.F_GRAM_RCOND:
        return None
    b = np.asarray(equality_rhs(data), dtype=float)
    no_ineq = np.zeros(rows.n_ineq)
    mu = lapack.dpotrs(c, b, lower=1)[0]
    w = rows.combine(no_ineq, mu)
    mu += lapack.dpotrs(c, b - rows.equality_residuals(w), lower=1)[0]  # refinement
    w = rows.combine(no_ineq, mu)
    residual = float(np.linalg.norm(b - rows.equality_residuals(w)))
    return (w, residual) if residual <= _compat_tolerance(data) else None


@cached_per_data
def _min_norm_solution(data: NTPData) -> tuple[np.ndarray | None, float]:
    """``W*`` (None if it exceeds the float64 range) and the least-squares residual of (4).

    Solved for the normalized ``H / c`` and scaled back: ``W*(H) = W*(H / c) / c``; by the
    SVD of the equality matrix when it is small (:func:`uses_dense_f`), otherwise by LSQR.
    """
    norm, scale = normalized(data)
    if norm is not data:
        W, residual = _min_norm_solution(norm)
        with np.errstate(over="ignore"):
            W = None if W is None else W / scale
        return (frozen(W) if W is not None and np.all(np.isfinite(W)) else None), residual
    if uses_dense_f(data):
        w, residual = _solve_dense(data)
    else:
        gram = _solve_gram(data)
        w, residual = gram if gram is not None else _solve_lsqr(data)
    W = w.reshape(data.V, data.d)
    return (frozen(W) if np.all(np.isfinite(W)) else None), residual


def compatibility_residual(data: NTPData) -> float:
    """Least-squares residual of the compatibility equations (4); 0 iff compatible."""
    return _min_norm_solution(data)[1]


def _compat_tolerance(data: NTPData) -> float:
    b = equality_rhs(data)
    return COMPAT_RTOL * max(1.0, float(np.linalg.norm(b)))


def is_compatible(data: NTPData) -> bool:
    """Whether the data are NTP_H-compatible (Definition 1 of Paper A).

    Decided exactly up to rounding: the linear system (4) is solvable iff its least-squares
    residual vanishes (tolerance :data:`ntpnb.settings.COMPAT_RTOL` relative to ``||b||``).
    """
    return compatibility_residual(data) <= _compat_tolerance(data)


def finite_solution(data: NTPData) -> np.ndarray:
    """``W*``: the unique solution in F of the compatibility equations (4), shape ``(V, d)``.

    Raises
    ------
    NotCompatibleError
        If the equations have no solution (the data are not NTP_H-compatible).
    ScaleError
        If ``W*`` has entries beyond the float64 range (``W*`` scales like ``1 / |H|``).
    """
    W, residual = _min_norm_solution(data)
    if residual > _compat_tolerance(data):
        raise NotCompatibleError(
            "the data are not NTP_H-compatible: the compatibility equations (4) have "
            f"least-squares residual {residual:.3g} (tolerance {_compat_tolerance(data):.3g})"
        )
    if W is None:
        raise ScaleError(
            f"W* has entries beyond the float64 range: it scales like 1 / max|H| and "
            f"max|H| = {float(np.abs(data.H).max()):.3g}; rescale the embeddings"
        )
    return W.copy()
