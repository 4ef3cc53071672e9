"""The data subspace F, its projections and the rank of H (Paper A, Sec. 3-4).

``F = span{(e_z - e_z') h_j^T : z != z' in S_j, j in [m]}`` (Eq. (5)). An orthonormal basis
comes once per data set from the SVD of the equality constraint matrix, whose rows span F; the
decision of compatibility and ``W*`` (:mod:`ntpnb.linear._separability`) uses it.

``rank H`` (:func:`embedding_svd`) and ``dim F`` (:func:`f_decomposition`) are decided here,
once per data set, by the one rule of :mod:`ntpnb._linalg` (a clear gap in the spectrum); every
other module takes them from these two functions, or, for data already
:func:`~._ntp_data.normalized`, from :func:`normalized_embedding_svd` and
:func:`normalized_f_decomposition`, which use the data as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy
from numpy.typing import ArrayLike

from .. import settings
from .._linalg import numerical_rank, thin_svd
from .._validation import check_dense_size
from ._constraints import NTPRows, ntp_constraints
from ._ntp_data import NTPData, cached_per_data, check_decoder, frozen, normalized

EQUALITY_WHAT = "the equality constraints (6a), whose rows span F"


@dataclass(frozen=True)
class EmbeddingSVD:
    """Thin SVD ``H = U diag(s) Vt`` of the embeddings, cut at their numerical rank."""

    #: ``(m, r)`` left singular vectors (``r = rank H``).
    U: np.ndarray
    #: ``(r,)`` the singular values of ``H`` kept (in the units of ``H``).
    s: np.ndarray
    #: ``(r, d)`` orthonormal rows spanning the row space of ``H``.
    Vt: np.ndarray

    @property
    def rank(self) -> int:
        """``rank H``."""
        return int(self.s.size)


@cached_per_data
def embedding_svd(data: NTPData) -> EmbeddingSVD:
    """The SVD of ``H`` cut at ``rank H`` (the rank rule of :mod:`ntpnb._linalg`), once per data set.

    That of the normalized data (:func:`normalized_embedding_svd`), its singular values in the units of ``H``.
    """
    norm, scale = normalized(data)
    dec = normalized_embedding_svd(norm)
    return dec if norm is data else EmbeddingSVD(dec.U, frozen(dec.s * scale), dec.Vt)


@cached_per_data
def normalized_embedding_svd(norm: NTPData) -> EmbeddingSVD:
    """:func:`embedding_svd` of data already :func:`~._ntp_data.normalized` (``norm`` is used as it is)."""
    U, s, Vt = thin_svd(norm.H, "the embeddings H")
    r = numerical_rank(s, norm.H.shape, what="the embeddings H")
    return EmbeddingSVD(U=frozen(U[:, :r]), s=frozen(s[:r]), Vt=frozen(Vt[:r]))


def embedding_rank(data: NTPData) -> int:
    """``rank H``, the one decision of it in the package (see :func:`embedding_svd`)."""
    return embedding_svd(data).rank


@dataclass(frozen=True)
class FDecomposition:
    """Thin SVD ``G = c U diag(s) B`` of the equality-constraint matrix ``G`` (rank part only).

    ``c`` is the power of two by which ``H`` was divided first (:func:`~._ntp_data.normalized`).
    """

    #: ``(r, V d)`` matrix with orthonormal rows spanning F (``r = dim F``).
    basis: np.ndarray
    #: ``(n_eq, r)`` left singular vectors.
    U: np.ndarray
    #: ``(r,)`` positive singular values of ``G / c``.
    s: np.ndarray

    @property
    def dim(self) -> int:
        """Dimension of F."""
        return self.basis.shape[0]


def f_decomposition(data: NTPData) -> FDecomposition:
    """SVD of the equality constraints cut at ``dim F`` (the rank rule), once per data set (read-only).

    That of the normalized data (:func:`normalized_f_decomposition`).
    """
    return normalized_f_decomposition(normalized(data)[0])


@cached_per_data
def normalized_f_decomposition(norm: NTPData) -> FDecomposition:
    """:func:`f_decomposition` of data already :func:`~._ntp_data.normalized` (``norm`` is used as it is)."""
    eq = ntp_constraints(norm).eq
    if eq.shape[0] == 0:  # every support is a single token: F = {0}
        return FDecomposition(
            frozen(np.zeros((0, norm.V * norm.d))), frozen(np.zeros((0, 0))), frozen(np.zeros(0))
        )
    check_dense_size(eq.shape, "the equality-constraint matrix")
    U, s, Vt = thin_svd(eq.toarray(), EQUALITY_WHAT)
    r = numerical_rank(s, eq.shape, what=EQUALITY_WHAT)
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
    :meth:`NTPRows.combine`). No row of the ``(n_eq, V d)`` matrix is formed.
    """
    rows = NTPRows(data)
    no_ineq = np.zeros(rows.n_ineq)
    return scipy.sparse.linalg.LinearOperator(
        (rows.n_eq, data.V * data.d),
        matvec=lambda w: rows.equality_residuals(np.ravel(w)),
        rmatvec=lambda mu: rows.combine(no_ineq, np.ravel(mu)),
        dtype=float,
    )


def uses_dense_f(data: NTPData) -> bool:
    """Whether ``W*`` comes from the dense SVD of (4) (:data:`ntpnb.settings.F_DENSE_MAX_ENTRIES`)."""
    return NTPRows(data).n_eq * data.V * data.d <= settings.F_DENSE_MAX_ENTRIES
