"""Inverses of symmetric positive definite blocks of a Gram matrix, in compiled loops where they pay.

The regularization path's Newton systems (:mod:`.regpath_gram`) invert, per token, the block
``K[A, A] + diag`` of the Gram matrix ``K = H H^T`` on the contexts ``A`` where the token is
free; every inverse is taken after scaling the block to a unit diagonal (a diagonally scaled
Cholesky factorization), which keeps it accurate when the diagonal spans many decades. A
failed factorization is a :class:`~ntpnb.linear.pathloss.NoConvergenceError`: the caller
takes a shorter step.

The module loads numba; :mod:`.regpath_gram` imports it when it first factorizes, so that
``import ntpnb`` does not.
"""

from __future__ import annotations

import numba
import numpy as np
import scipy

from .pathloss import NoConvergenceError

__all__ = ["block_inverse", "lower_times", "scaled_block", "spd_inverse", "unscale_lower"]


def spd_inverse(M: np.ndarray) -> np.ndarray:
    """The inverse of a symmetric positive definite ``M`` by a diagonally scaled Cholesky factorization.

    Raises
    ------
    NoConvergenceError
        If ``M`` is not finite or not numerically positive definite.
    """
    diag = np.diag(M)
    if not (np.all(np.isfinite(M)) and np.all(diag > 0)):
        raise NoConvergenceError("a block of the Newton system is not finite and positive on its diagonal")
    scale = 1.0 / np.sqrt(diag)
    Ms = M * scale[:, None] * scale[None, :]
    c, info = scipy.linalg.lapack.dpotrf(Ms, lower=1, clean=0, overwrite_a=1)
    if info != 0:
        raise NoConvergenceError("a block of the Newton system is not numerically positive definite")
    inv, info = scipy.linalg.lapack.dpotri(c, lower=1, overwrite_c=1)
    if info != 0:
        raise NoConvergenceError("a block of the Newton system is singular")
    inv = np.tril(inv)
    inv += np.tril(inv, -1).T
    inv *= scale[:, None]
    inv *= scale[None, :]
    return inv


@numba.njit(cache=True)
def scaled_block(K: np.ndarray, A: np.ndarray, diag: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(D M D, s)`` for ``M = K[A, A] + diag(diag)`` and ``D = diag(s)``, ``s = 1 / sqrt(diag M)``.

    The scaled block has a unit diagonal; it is returned in column-major order (LAPACK's).
    ``K`` is symmetric: column ``j`` of the block is read along row ``A[j]`` of ``K``.
    """
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


@numba.njit(cache=True)
def unscale_lower(inv: np.ndarray, s: np.ndarray) -> None:
    """In place: the lower triangle of ``inv`` times ``s_i s_j`` (``D M^-1 D``, undone).

    The upper triangle is left as it is: the blocks are used through their lower triangle
    alone (the Newton factors of :mod:`.regpath_gram`), which halves the memory each product moves.
    """
    n = s.size
    for j in range(n):
        for i in range(j, n):
            inv[i, j] *= s[i] * s[j]


def block_inverse(K: np.ndarray, A: np.ndarray, diag: np.ndarray) -> np.ndarray:
    """``(K[A, A] + diag(diag))^{-1}`` by a diagonally scaled Cholesky factorization: its lower triangle.

    Column-major; only the lower triangle holds the inverse (the upper one is left over from
    the factorization).

    Raises
    ------
    NoConvergenceError
        If the block is not finite or not numerically positive definite.
    """
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
