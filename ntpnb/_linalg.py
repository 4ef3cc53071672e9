r"""Numerical rank: the one rule by which the package decides a dimension from a spectrum.

A rank cut at a multiple of machine epsilon (as ``numpy.linalg.matrix_rank`` does) flips between
machines, whose BLAS kernels round the noise differently (a noise singular value of 2.29e-15
against a cut-off of 2.22e-15 did). The package takes the dimension from the mathematics where
it is known (:func:`check_known_rank` verifies a clear gap there), else from a **clear gap** in
the spectrum (:func:`numerical_rank`).

The rule: with singular values ``s_0 >= ... >= s_{n-1} >= 0`` of a matrix of shape ``shape``,
``scale`` the size of its entries' source (``s_0`` unless :func:`check_known_rank` is given
another) and ``floor = max(shape) * eps * scale`` the level rounding can produce, the gap below
position ``r`` (keeping ``s_0 .. s_{r-1}``) is

.. math::  g_r = s_{r-1} / \max(s_r, \mathrm{floor}), \qquad s_n := 0.

The rank is the largest ``r`` with ``g_r >= RANK_GAP`` (:data:`ntpnb.settings.RANK_GAP`), and it
must hold under rounding noise up to ``RANK_BAND`` times larger or smaller: ``s_{r-1}`` stands
``RANK_GAP * RANK_BAND`` above the floor and no dropped position has a gap above ``RANK_GAP /
RANK_BAND``; otherwise :class:`~ntpnb.errors.RankAmbiguousError` lists the singular values
relative to ``s_0``. The rule is scale-free and gives rank 0 only for a zero matrix.

Not a rank decision: a solve *verified* afterwards keeps every singular value ``RANK_BAND`` times
above the floor, however small (:func:`nonzero_count`; near-duplicate embeddings: ``1e-10``).

Its functions trust their arrays (the package's own, checked where they entered); the measure
users call on theirs, :func:`~ntpnb._direction.correlation`, checks them at its own door.
"""

from __future__ import annotations

import numpy as np
import scipy
from numpy.typing import ArrayLike

from . import settings
from .errors import RankAmbiguousError, SolverError


def rank_floor(shape: tuple[int, ...], scale: float) -> float:
    """The rounding level ``max(shape) * eps * scale`` below which a singular value is noise."""
    return max(max(shape, default=1), 1) * settings.FLOAT64_EPS * float(scale)


def _all_gaps(s: np.ndarray, shape: tuple[int, ...], scale: float) -> np.ndarray:
    """``g_r`` for ``r = 0 .. n``, with ``s_{-1} = scale`` (so ``g_0 = 1`` for the default scale)."""
    floor = rank_floor(shape, scale)
    tops = np.concatenate([[scale], s])
    bottoms = np.maximum(np.append(s, 0.0), floor)
    return tops / bottoms


def _describe(s: np.ndarray, what: str, shape: tuple[int, ...], scale: float) -> str:
    rel = s / scale if scale > 0 else s
    shown = ", ".join(f"{v:.3g}" for v in rel[:12]) + (", ..." if rel.size > 12 else "")
    return (
        f"{what} (shape {tuple(shape)}): singular values relative to {scale:.3g}: [{shown}]; "
        f"rounding floor {rank_floor(shape, 1.0):.3g}, clear gap = ratio >= {settings.RANK_GAP:.0e}"
    )


def numerical_rank(s: ArrayLike, shape: tuple[int, ...], *, what: str) -> int:
    """The rank at the lowest clear gap of the spectrum ``s`` (see the module docstring).

    Parameters
    ----------
    s
        Singular values in decreasing order.
    what
        What the matrix is, for the error message (e.g. ``"the embeddings H"``).

    Raises
    ------
    RankAmbiguousError
        If the spectrum has no clear gap, or its lowest one lies where rounding noise of
        another machine could move it.
    """
    s = np.asarray(s, dtype=float)
    if s.size == 0 or s[0] == 0.0:
        return 0
    sc = float(s[0])
    floor = rank_floor(shape, sc)
    g = _all_gaps(s, shape, sc)
    clear = np.flatnonzero(g >= settings.RANK_GAP)
    if clear.size == 0:
        raise RankAmbiguousError("the rank of " + _describe(s, what, shape, sc) + ": no clear gap")
    r = int(clear[-1])
    kept_clear = r == 0 or s[r - 1] >= settings.RANK_GAP * settings.RANK_BAND * floor
    if not kept_clear or np.any(g[r + 1 :] >= settings.RANK_GAP / settings.RANK_BAND):
        raise RankAmbiguousError(
            "the rank of "
            + _describe(s, what, shape, sc)
            + f": the gap below position {r} is too close to the rounding floor to hold on every machine"
        )
    return r


def check_known_rank(
    s: ArrayLike, shape: tuple[int, ...], rank: int, *, what: str, scale: float | None = None
) -> None:
    """Verify that the spectrum ``s`` has a clear gap at ``rank``, a dimension known from the mathematics.

    Raises
    ------
    RankAmbiguousError
        If it has none there: the matrix is too ill-conditioned for float64 to show the
        dimension the mathematics gives.
    """
    s = np.asarray(s, dtype=float)
    sc = float(s[0]) if scale is None and s.size else float(scale or 0.0)
    g = _all_gaps(s, shape, sc)[rank] if sc > 0 else 0.0
    if not g >= settings.RANK_GAP:
        raise RankAmbiguousError(
            f"the dimension {rank} that the mathematics gives for "
            + _describe(s, what, shape, sc)
            + f": the spectrum shows no clear gap there (ratio {g:.3g})"
        )


def nonzero_count(s: ArrayLike, shape: tuple[int, ...]) -> int:
    """How many singular values ``s`` (decreasing) are positive in exact arithmetic on every machine.

    Those at least ``RANK_BAND`` times the rounding floor ``max(shape) eps s[0]``, for a matrix
    given exactly (its computed singular values are within about the floor of the exact ones).
    Not a rank decision: for solves the caller verifies.
    """
    s = np.asarray(s, dtype=float)
    if s.size == 0 or s[0] == 0.0:
        return 0
    return int(np.count_nonzero(s >= settings.RANK_BAND * rank_floor(shape, float(s[0]))))


#: Dekker's splitting constant ``2^27 + 1`` (error-free products without a fused multiply-add).
_SPLIT = 134217729.0
_UNIT_ROUNDOFF = settings.FLOAT64_EPS / 2


def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a b = x + y`` exactly, ``x = fl(a b)`` (Dekker), barring overflow and underflow."""
    x = a * b
    ca, cb = _SPLIT * a, _SPLIT * b  # each factor split exactly into halves of at most 26 bits
    ah, bh = ca - (ca - a), cb - (cb - b)
    al, bl = a - ah, b - bh
    return x, al * bl - (((x - ah * bh) - al * bh) - ah * bl)


def accurate_dots(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ``sum_k X_ik Y_ik`` as if computed in twice the precision, with a rigorous error bound.

    Ogita, Rump and Oishi's ``Dot2`` ("Accurate sum and dot product", SIAM J. Sci. Comput. 26,
    2005): error-free products and sums, so the result ``s_i`` differs from the exact dot
    product by at most ``u |s_i| + gamma_k^2 sum_k |X_ik Y_ik|`` (``u = eps / 2``,
    ``gamma_k = k u / (1 - k u)``) over ``1 - u``, plus ``k`` times the smallest normal number
    for products that underflow. Where a product or its splitting overflows, the bound is inf.
    ``X`` and ``Y`` have the same shape ``(n, k)``; returns the ``n`` dot products and their bounds.
    """
    X, Y = np.asarray(X, dtype=float), np.asarray(Y, dtype=float)
    n, k = X.shape
    with np.errstate(over="ignore", invalid="ignore"):
        p, s = _two_product(X[:, 0], Y[:, 0]) if k else (np.zeros(n), np.zeros(n))
        for i in range(1, k):
            h, r = _two_product(X[:, i], Y[:, i])
            x = p + h  # p + h = x + q exactly (Knuth's TwoSum)
            z = x - p
            p, q = x, (p - (x - z)) + (h - z)
            s = s + (q + r)
        result = p + s
        gamma = k * _UNIT_ROUNDOFF / (1 - k * _UNIT_ROUNDOFF)
        size = np.abs(X * Y).sum(axis=1)
        bound = (_UNIT_ROUNDOFF * np.abs(result) + gamma**2 * size) / (1 - _UNIT_ROUNDOFF)
        bound = bound + k * np.finfo(float).tiny
        split_safe = np.all(np.abs(X) * _SPLIT < np.finfo(float).max, axis=1) & np.all(
            np.abs(Y) * _SPLIT < np.finfo(float).max, axis=1
        )
    finite = np.isfinite(result) & np.isfinite(bound) & split_safe
    return np.where(finite, result, np.nan), np.where(finite, bound, np.inf)


def thin_svd(A: ArrayLike, what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``U, s, Vt`` of the finite matrix ``A`` (thin), robust to LAPACK's gesdd not converging.

    Raises
    ------
    SolverError
        If neither gesdd nor gesvd converges.
    """
    A = np.asarray(A, dtype=float)
    if A.size == 0:
        return np.zeros((A.shape[0], 0)), np.zeros(0), np.zeros((0, A.shape[1]))
    try:
        return np.linalg.svd(A, full_matrices=False)
    except np.linalg.LinAlgError:
        # gesdd can fail on highly degenerate spectra with some BLAS kernels; gesvd is slower but robust
        try:
            return scipy.linalg.svd(A, full_matrices=False, lapack_driver="gesvd")
        except np.linalg.LinAlgError as exc:
            raise SolverError(f"the singular value decomposition of {what} did not converge") from exc


def matrix_rank(A: ArrayLike, *, what: str) -> int:
    """:func:`numerical_rank` of the singular values of ``A`` (``what`` names it in errors)."""
    _, s, _ = thin_svd(A, what)
    return numerical_rank(s, np.shape(A), what=what)


def column_basis(A: ArrayLike, *, what: str) -> np.ndarray:
    """Orthonormal basis ``(rows, r)`` of the column space of ``A``, ``r`` by :func:`numerical_rank`."""
    U, s, _ = thin_svd(A, what)
    return U[:, : numerical_rank(s, np.shape(A), what=what)]


def least_squares(A: ArrayLike, b: ArrayLike, *, what: str, rank: int | None = None) -> np.ndarray:
    """The minimum-norm least-squares solution ``x = A^+ b`` at the rank of the one rule.

    Unlike ``numpy.linalg.lstsq``, whose rounding-level cut changes ``x`` by ``1 / noise``
    between machines, the rank is decided by :func:`numerical_rank` (or verified when given).

    Parameters
    ----------
    b
        ``(n,)`` or ``(n, p)`` right-hand side.
    what
        What ``A`` is, for error messages.
    rank
        The rank if the mathematics gives it (then only verified by :func:`check_known_rank`).

    Raises
    ------
    RankAmbiguousError
        If the rank of ``A`` is not determined in float64.
    """
    U, s, Vt = thin_svd(A, what)
    if rank is None:
        rank = numerical_rank(s, np.shape(A), what=what)
    else:
        check_known_rank(s, np.shape(A), rank, what=what)
    b = np.asarray(b, dtype=float)
    coef = U[:, :rank].T @ b
    coef = coef / (s[:rank, None] if coef.ndim == 2 else s[:rank])
    return Vt[:rank].T @ coef
