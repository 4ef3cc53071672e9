"""The data subspace F, its projections, the finite component W* and the rank of H (Paper A, Sec. 3-4).

``F = span{(e_z - e_z') h_j^T : z != z' in S_j, j in [m]}`` (Eq. (5)). An orthonormal basis
comes once per data set from the SVD of the equality constraint matrix, whose rows span F; the
same SVD gives the minimum-norm solution of the compatibility equations (4), the unique one in
F, ``W*``. Above :data:`ntpnb.settings.F_DENSE_MAX_ENTRIES`, ``W*`` and the residual come from
the Gram matrix of the rows or LSQR on :func:`equality_operator`, with no basis of F formed.

**Compatibility, right or honestly undecided** (:func:`is_compatible`). A candidate ``W*`` (at
the decided ``dim F``, else from every singular value of (4) that float64 resolves,
:func:`ntpnb.linalg.nonzero_count`) proves compatibility when its residual, evaluated as if in
twice the precision plus a rigorous error bound (:func:`ntpnb.linalg.accurate_dots`), is within
:data:`~ntpnb.settings.COMPAT_RTOL` of ``||b||``. The data are not compatible when the
log-odds ``b`` have a part larger than that tolerance outside the directions (4) resolves
(singular values within ``RANK_BAND`` of the rounding floor: a solution would need
``||W|| >= 1 / (RANK_BAND floor)`` times that part). Otherwise
:class:`~ntpnb.errors.NumericallyAmbiguousError` gives the verified residual, the tolerance and
the smallest resolved singular value. Above the dense size the computed residual decides.

``rank H`` (:func:`embedding_svd`) and ``dim F`` (:func:`f_decomposition`) are decided here,
once per data set, by the one rule of :mod:`ntpnb.linalg` (a clear gap in the spectrum); every
other module takes them from these two functions.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np
import scipy
from numpy.typing import ArrayLike

from .. import settings
from ..errors import (
    NotCompatibleError,
    NumericallyAmbiguousError,
    RankAmbiguousError,
    ScaleError,
    SolverError,
)
from ..linalg import accurate_dots, nonzero_count, numerical_rank, rank_floor, thin_svd
from ..settings import COMPAT_RTOL
from .constraints import NTPRows, constraint_pairs, equality_matrix, equality_rhs
from .ntp_data import NTPData, cached_per_data, check_decoder, check_dense_size, frozen, normalized

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
    """Thin SVD ``H = U diag(s) Vt`` of the embeddings, cut at their numerical rank."""

    #: ``(m, r)`` left singular vectors (``r = rank H``).
    U: np.ndarray
    #: ``(r,)`` the singular values of ``H`` kept (in the units of ``H``).
    s: np.ndarray
    #: ``(r, d)`` orthonormal rows spanning the row space of ``H``.
    Vt: np.ndarray
    #: All ``min(m, d)`` singular values of ``H``.
    spectrum: np.ndarray

    @property
    def rank(self) -> int:
        """``rank H``."""
        return int(self.s.size)


@cached_per_data
def embedding_svd(data: NTPData) -> EmbeddingSVD:
    """The SVD of ``H`` cut at ``rank H``, decided once per data set by :func:`ntpnb.linalg.numerical_rank`.

    Computed for ``H`` normalized by a power of two (:func:`ntpnb.linear.ntp_data.normalized`) and
    scaled back. Read-only.

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
    """Thin SVD ``G = U diag(s) B`` of the equality-constraint matrix ``G`` (rank part only)."""

    #: ``(r, V d)`` matrix with orthonormal rows spanning F (``r = dim F``).
    basis: np.ndarray
    #: ``(n_eq, r)`` left singular vectors.
    U: np.ndarray
    #: ``(r,)`` positive singular values of ``G / scale``.
    s: np.ndarray
    #: The power of two ``c`` by which ``H`` was divided before the decomposition
    #: (:func:`ntpnb.linear.ntp_data.normalized`); the singular values of ``G`` are ``scale * s``.
    scale: float = 1.0

    @property
    def dim(self) -> int:
        """Dimension of F."""
        return self.basis.shape[0]


@cached_per_data
def f_decomposition(data: NTPData) -> FDecomposition:
    """SVD of the equality constraints of ``data``, computed once per data set.

    Computed for ``H`` normalized to ``max|H| ~ 1``; ``dim F`` is the rank at a clear gap of the
    spectrum (:func:`ntpnb.linalg.numerical_rank`). Read-only.

    Raises
    ------
    RankAmbiguousError
        If that spectrum shows no clear gap (``dim F`` is not determined in float64).
    """
    norm, scale = normalized(data)
    if norm is not data:
        return replace(f_decomposition(norm), scale=scale)
    if equality_matrix(data).shape[0] == 0:  # every support is a single token: F = {0}
        return FDecomposition(
            frozen(np.zeros((0, data.V * data.d))), frozen(np.zeros((0, 0))), frozen(np.zeros(0))
        )
    U, s, Vt = _equality_svd(data)
    r = numerical_rank(s, equality_matrix(data).shape, what=_EQUALITY_WHAT)
    return FDecomposition(basis=frozen(Vt[:r]), U=frozen(U[:, :r]), s=frozen(s[:r]))


_EQUALITY_WHAT = "the equality constraints (6a), whose rows span F"


@cached_per_data
def _equality_svd(data: NTPData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The thin SVD of the dense equality matrix of (4) (read-only; cached per data)."""
    check_dense_size(equality_matrix(data).shape, "the equality-constraint matrix")
    U, s, Vt = thin_svd(equality_matrix(data).toarray(), _EQUALITY_WHAT)
    return frozen(U), frozen(s), frozen(Vt)


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
    loss sees; every gradient lies in it (gradient descent never changes ``W - P_R(W)``), and so
    does every point of the regularization path. ``rank H`` from :func:`embedding_rank`.
    """
    W = check_decoder(data, W)
    Vt = embedding_svd(data).Vt
    centered = W - W.mean(axis=0, keepdims=True)
    return (centered @ Vt.T) @ Vt


def equality_operator(data: NTPData) -> scipy.sparse.linalg.LinearOperator:
    """The equality constraints (4) as a map ``vec(W) -> (L_jz - L_{j a_j})`` over their rows.

    ``L = H W^T``; the adjoint maps row weights ``mu`` to ``vec(C^T H)`` (``C`` of
    :meth:`NTPRows.coefficients`). No row of the ``(n_eq, V d)`` matrix is formed.
    """
    rows = NTPRows(data)
    no_ineq = np.zeros(rows.n_ineq)
    return scipy.sparse.linalg.LinearOperator(
        (rows.n_eq, data.V * data.d),
        matvec=lambda w: rows.equality_residuals(np.ravel(w)),
        rmatvec=lambda mu: rows.combine(no_ineq, np.ravel(mu)),
        dtype=float,
    )


@dataclass(frozen=True)
class _Compatibility:
    """The decision of (4) for normalized data."""

    #: ``vec(W*)``; None if not compatible.
    w: np.ndarray | None
    #: The residual that decided.
    residual: float
    #: The message of an ambiguity; None if decided.
    ambiguity: str | None = None

    @property
    def compatible(self) -> bool:
        """Whether (4) has a solution."""
        return self.w is not None


def _accurate_residual(data: NTPData, w: np.ndarray) -> tuple[float, float]:
    """``||G w - b||`` of (4) at the float64 ``w``, evaluated accurately, and a rigorous bound on its error.

    Each entry ``h_j . (w_z - w_a) - b`` is evaluated as if in twice the precision
    (:func:`ntpnb.linalg.accurate_dots`), so a large ``W*`` is judged by its own residual, not by
    the rounding ``eps |G| |w|`` of a plain evaluation.
    """
    pairs = constraint_pairs(data)
    W = np.reshape(w, (data.V, data.d))
    b = np.asarray(equality_rhs(data), dtype=float)
    Hj = data.H[pairs.eq_context]
    X = np.hstack([Hj, -Hj, -b[:, None]])
    Y = np.hstack([W[pairs.eq_token], W[pairs.anchors[pairs.eq_context]], np.ones((b.size, 1))])
    residuals, bounds = accurate_dots(X, Y)
    with np.errstate(over="ignore", invalid="ignore"):
        value = float(np.linalg.norm(residuals))
        bound = float(np.linalg.norm(bounds)) + 4 * b.size * 2**-53 * value  # and the norm's rounding
    return (value, bound) if np.isfinite(value) and np.isfinite(bound) else (np.inf, np.inf)


def _verified_residual(data: NTPData, w: np.ndarray) -> float:
    """An upper bound on the exact ``||G w - b||`` of (4) at ``w`` (:func:`_accurate_residual`)."""
    value, bound = _accurate_residual(data, w)
    return value + bound


def _solve_dense(data: NTPData) -> tuple[np.ndarray, float]:
    """``vec(W*)`` and the residual of (4) from the SVD of the equality matrix at the decided ``dim F``.

    Raises
    ------
    RankAmbiguousError
        If ``dim F`` is not decided (:func:`f_decomposition`).
    """
    dec = f_decomposition(data)
    b = equality_rhs(data)
    coef = dec.U.T @ b
    return dec.basis.T @ (coef / dec.s), float(np.linalg.norm(b - dec.U @ coef))


def context_scales(H: np.ndarray) -> np.ndarray:
    """Each row's power of two ``2^(e-1)`` with ``max_k |H_jk|`` in ``[2^(e-1), 2^e)`` (1 if zero).

    Dividing by it is exact: the row scaling in which separability and compatibility are decided.
    """
    top = np.abs(H).max(axis=1)
    _, exponent = np.frexp(top)
    return np.where(top > 0, np.ldexp(0.5, exponent), 1.0)


@cached_per_data
def _normalized_equations(data: NTPData) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """The rows of (4) divided by each context's scale: ``U, s, Vt`` of their thin SVD, ``b_c, c``.

    The same solutions as (4), no row hidden by another's size. Their right side is ``b_c / c``:
    ``c`` the smallest row scale, ``b_c`` the log-odds times ``c`` over each row's scale.
    """
    scales = context_scales(data.H)[constraint_pairs(data).eq_context]
    U, s, Vt = thin_svd(equality_matrix(data).toarray() / scales[:, None], _EQUALITY_WHAT)
    c = float(scales.min())
    b_c = np.asarray(equality_rhs(data), dtype=float) * (c / scales)
    return frozen(U), frozen(s), frozen(Vt), frozen(b_c), c


def _dense_candidates(data: NTPData) -> Iterator[tuple[np.ndarray, int]]:
    """Candidate ``vec(W*)`` with the number of singular values they use; finite ones only.

    At the decided ``dim F`` (:func:`_solve_dense`, if decided), then (lazily) at every resolved
    singular value of :func:`_normalized_equations`.
    """
    try:
        w = _solve_dense(data)[0]
        if np.all(np.isfinite(w)):
            yield w, f_decomposition(data).dim
    except RankAmbiguousError:
        pass
    U, s, Vt, b_c, c = _normalized_equations(data)
    k = nonzero_count(s, U.shape)
    with np.errstate(over="ignore", invalid="ignore"):
        w = Vt[:k].T @ ((U[:, :k].T @ b_c) / s[:k]) / c
    if np.all(np.isfinite(w)):
        yield w, k


def _checked_residual(data: NTPData, w: np.ndarray, tol: float) -> tuple[float, float]:
    """``||G w - b||`` and an upper bound on its exact value, decided against ``tol`` as cheaply as possible.

    The plain evaluation with the rounding bound ``2 (2d + 1) eps (|G| |w| + |b|)`` first; where
    that leaves the comparison with ``tol`` open, :func:`_accurate_residual`.
    """
    G = equality_matrix(data)
    b = np.asarray(equality_rhs(data), dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        rounding = 2 * (2 * data.d + 1) * settings.FLOAT64_EPS * (abs(G) @ np.abs(w) + np.abs(b))
        value, bound = float(np.linalg.norm(G @ w - b)), float(np.linalg.norm(rounding))
    if np.isfinite(value + bound) and (value + bound <= tol or value - bound > tol):
        return value, value + bound
    value, bound = _accurate_residual(data, w)
    return value, value + bound


def _decide_dense(data: NTPData) -> _Compatibility:
    """The decision of (4) from dense SVDs of its matrix (see the module docstring).

    A candidate verified within the tolerance proves compatibility. Otherwise, with ``b_n`` the
    part of the row-normalized log-odds outside the resolved singular directions, every ``W``
    has ``||G w - b|| >= c (||b_n|| - sigma ||w||)`` (``c`` the smallest row scale, ``sigma``
    below the resolution): where ``c ||b_n||`` exceeds the tolerance, only a ``W`` beyond
    float64's resolution could solve (4), and the data are not compatible.
    """
    tol = _compat_tolerance(data)
    G, b = equality_matrix(data), equality_rhs(data)
    if G.shape[0] == 0:  # every support is a single token: no equation, W* = 0
        return _Compatibility(np.zeros(data.V * data.d), 0.0)
    best = (np.inf, 0)
    for w, k in _dense_candidates(data):
        value, verified = _checked_residual(data, w, tol)
        if verified <= tol:
            return _Compatibility(w, value)
        best = min(best, (verified, k), key=lambda pair: pair[0])
    U, s, _, b_c, _ = _normalized_equations(data)
    k = nonzero_count(s, U.shape)
    outside = float(np.linalg.norm(b_c - U[:, :k] @ (U[:, :k].T @ b_c)))  # c ||b_n||, unresolved part
    rounding = 2 * U.shape[0] * settings.FLOAT64_EPS * float(np.linalg.norm(b_c))
    if outside - rounding > tol:
        first = next(_dense_candidates(data), None)
        residual = outside if first is None else float(np.linalg.norm(G @ first[0] - b))
        return _Compatibility(None, max(residual, outside))
    resolution = settings.RANK_BAND * rank_floor(U.shape, 1.0)
    smallest = float(s[k - 1] / s[0]) if k else 0.0
    return _Compatibility(
        None,
        outside,
        f"NTP_H-compatibility is numerically ambiguous (m={data.m}, d={data.d}, V={data.V}): the best "
        f"candidate W* leaves a residual of (4) of {best[0]:.3g} (rounding included) against the tolerance "
        f"{tol:.3g}; it uses {best[1]} singular values of the row-normalized equations, down to "
        f"{smallest:.3g} of the largest (float64 resolves them to {resolution:.3g}), and the log-odds "
        f"outside them are {outside:.3g}: W* exists in exact arithmetic, but its logits are too large "
        f"for float64 to evaluate to the tolerance (near-duplicate embeddings with different log-odds)",
    )


def _solve_lsqr(data: NTPData) -> tuple[np.ndarray, float]:
    """``vec(W*)`` and the residual of (4) by LSQR on :func:`equality_operator`.

    Started at zero, LSQR stays in the range of the adjoint (F), so it converges to the
    minimum-norm least-squares solution, ``W*`` when (4) is solvable. The residual is recomputed
    from the answer.

    Raises
    ------
    SolverError
        If LSQR stops at its iteration limit (:data:`ntpnb.settings.F_LSQR_MAX_ITER`).
    """
    op = equality_operator(data)
    b = np.asarray(equality_rhs(data), dtype=float)
    tol = settings.F_LSQR_TOL
    w, istop, itn = scipy.sparse.linalg.lsqr(op, b, atol=tol, btol=tol, iter_lim=settings.F_LSQR_MAX_ITER)[:3]
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
    (``K = H H^T``), a ``dim F x dim F`` system. Solved by Cholesky with one refinement step when
    LAPACK's reciprocal condition estimate exceeds :data:`ntpnb.settings.F_GRAM_RCOND`, and kept
    only if its recomputed residual passes the compatibility test; None otherwise (then LSQR).
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
    c, info = scipy.linalg.lapack.dpotrf(G, lower=1, clean=1)
    if info != 0:
        return None
    rcond, info = scipy.linalg.lapack.dpocon(c, float(np.abs(G).sum(axis=0).max()), uplo="L")
    if info != 0 or not rcond > settings.F_GRAM_RCOND:
        return None
    b = np.asarray(equality_rhs(data), dtype=float)
    no_ineq = np.zeros(rows.n_ineq)
    mu = scipy.linalg.lapack.dpotrs(c, b, lower=1)[0]
    w = rows.combine(no_ineq, mu)
    mu += scipy.linalg.lapack.dpotrs(c, b - rows.equality_residuals(w), lower=1)[0]  # refinement
    w = rows.combine(no_ineq, mu)
    residual = float(np.linalg.norm(b - rows.equality_residuals(w)))
    return (w, residual) if residual <= _compat_tolerance(data) else None


@cached_per_data
def _decision(data: NTPData) -> _Compatibility:
    """The decision of (4) for normalized ``data`` (cached per data; an ambiguity too).

    By the SVD of the equality matrix when it is small (:func:`uses_dense_f`, see the module
    docstring), otherwise by the Gram matrix or LSQR, whose residual decides.
    """
    if uses_dense_f(data):
        return _decide_dense(data)
    gram = _solve_gram(data)
    w, residual = gram if gram is not None else _solve_lsqr(data)
    return _Compatibility(w if residual <= _compat_tolerance(data) else None, residual)


def _decided(data: NTPData) -> tuple[_Compatibility, float]:
    """The decision of ``data`` (made for its normalized copy) and the power of two ``c`` of that copy.

    Raises
    ------
    NumericallyAmbiguousError
        If the decision is ambiguous.
    """
    norm, scale = normalized(data)
    decision = _decision(norm)
    if decision.ambiguity is not None:
        raise NumericallyAmbiguousError(decision.ambiguity)
    return decision, scale


@cached_per_data
def _min_norm_solution(data: NTPData) -> tuple[np.ndarray | None, float]:
    """``W*`` (None if not compatible or beyond the float64 range) and the residual of (4) that decided.

    Solved for the normalized ``H / c`` and scaled back: ``W*(H) = W*(H / c) / c``.
    """
    decision, scale = _decided(data)
    if decision.w is None:
        return None, decision.residual
    with np.errstate(over="ignore"):
        W = decision.w.reshape(data.V, data.d) / scale
    return (frozen(W) if np.all(np.isfinite(W)) else None), decision.residual


def compatibility_residual(data: NTPData) -> float:
    """Least-squares residual of the compatibility equations (4); 0 iff compatible.

    The residual of ``W*`` when the data are compatible, else that of the part of the
    log-odds that (4) cannot reach.

    Raises
    ------
    NumericallyAmbiguousError
        As :func:`is_compatible`.
    """
    return _decided(data)[0].residual


def _compat_tolerance(data: NTPData) -> float:
    b = equality_rhs(data)
    return COMPAT_RTOL * max(1.0, float(np.linalg.norm(b)))


def is_compatible(data: NTPData) -> bool:
    """Whether the data are NTP_H-compatible (Definition 1 of Paper A), right or honestly undecided.

    (4) is solvable to :data:`ntpnb.settings.COMPAT_RTOL` relative to ``||b||``: True rests on a
    ``W*`` with a verified residual (returned by :func:`finite_solution`), False on a part of the
    log-odds that (4) does not resolve in float64 (see the module docstring).

    Raises
    ------
    NumericallyAmbiguousError
        If neither holds (near-duplicate embeddings with different log-odds: ``W*`` too large
        for its logits to be evaluated to the tolerance); the message gives the verified
        residual, the tolerance and the smallest singular value used.
    """
    return _decided(data)[0].compatible


def finite_solution(data: NTPData) -> np.ndarray:
    """``W*``: the unique solution in F of the compatibility equations (4), shape ``(V, d)``.

    Raises
    ------
    NotCompatibleError
        If the equations have no solution (the data are not NTP_H-compatible).
    NumericallyAmbiguousError
        As :func:`is_compatible`.
    ScaleError
        If ``W*`` has entries beyond the float64 range (``W*`` scales like ``1 / |H|``).
    """
    W, residual = _min_norm_solution(data)
    if not is_compatible(data):
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
