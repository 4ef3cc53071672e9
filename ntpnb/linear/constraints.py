r"""The linear constraints of Paper A as scipy.sparse matrices acting on ``vec(W)``.

A decoder ``W`` (V x d) is flattened row by row, ``vec(W)[v * d + k] = W[v, k]``, so the
functional ``W -> (e_a - e_b)^T W h_j`` is the row vector ``vec((e_a - e_b) h_j^T)`` with
``2 d`` non-zeros. Per context ``j`` an *anchor* ``a_j`` (the smallest token of ``S_j``)
replaces all pairs ``z != z'`` in ``S_j`` (equivalent, as Paper A notes after Eqs. (4), (6)):

* equalities  ``(e_z - e_{a_j})^T W h_j = c``  for ``z`` in ``S_j \ {a_j}`` (Eqs. (4), (6a)),
  with ``c = log(p_jz / p_j,a_j)`` for NTP_H-compatibility and ``c = 0`` for NTP-separability;
* inequalities ``(e_{a_j} - e_v)^T W h_j >= 1`` for ``v`` not in ``S_j`` (Eq. (6b)).

That is ``sum_j (S_j - 1)`` equalities and ``m V - sum_j S_j`` inequalities; the equality rows
span F (Eq. (5)). :func:`ntp_constraints` builds them as scipy.sparse matrices; :class:`NTPRows`
applies them through the logits ``H W^T`` without forming any (for :mod:`ntpnb.qp`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy

from .ntp_data import NTPData, cached_per_data, frozen

__all__ = [
    "NTPConstraints",
    "ntp_constraints",
    "ConstraintPairs",
    "constraint_pairs",
    "equality_matrix",
    "equality_rhs",
    "pair_rows",
    "NTPRows",
]


@dataclass(frozen=True)
class NTPConstraints:
    """Equality and inequality constraints of one data set (see the module docstring)."""

    #: Anchor token ``a_j`` of each context, shape ``(m,)``.
    anchors: np.ndarray
    #: Context ``j`` of each equality row ``(e_z - e_{a_j}) h_j^T``.
    eq_context: np.ndarray
    #: Token ``z`` of each equality row.
    eq_token: np.ndarray
    #: Sparse ``(n_eq, V d)`` matrix of the equality rows.
    eq: scipy.sparse.csr_matrix
    #: ``log(p_jz / p_j,a_j)`` for each equality row: the compatibility right-hand side.
    eq_rhs: np.ndarray
    #: Context ``j`` of each inequality row ``(e_{a_j} - e_v) h_j^T``.
    ineq_context: np.ndarray
    #: Out-of-support token ``v`` of each inequality row.
    ineq_token: np.ndarray
    #: Sparse ``(n_ineq, V d)`` matrix of the inequality rows.
    ineq: scipy.sparse.csr_matrix


def pair_rows(
    H: np.ndarray, context: np.ndarray, plus: np.ndarray, minus: np.ndarray, V: int, dense: bool = False
) -> scipy.sparse.csr_matrix | np.ndarray:
    """Rows ``vec((e_plus - e_minus) h_context^T)``, one per entry of the index arrays (``plus != minus``).

    A CSR matrix (each row's ``2 d`` entries: ``plus`` block, then ``minus`` block), or with
    ``dense`` a dense array (for small problems).
    """
    n, d = context.size, H.shape[1]
    k = np.arange(d)
    cols = np.concatenate([plus[:, None] * d + k, minus[:, None] * d + k], axis=1)
    vals = np.concatenate([H[context], -H[context]], axis=1)
    if dense:
        M = np.zeros((n, V * d))
        M[np.arange(n)[:, None], cols] = vals
        return M
    indptr = np.arange(0, 2 * d * n + 1, 2 * d)
    return scipy.sparse.csr_matrix((vals.ravel(), cols.ravel(), indptr), shape=(n, V * d))


def _frozen_csr(M: scipy.sparse.csr_matrix) -> scipy.sparse.csr_matrix:
    """``M`` in canonical form with read-only index and value arrays (it is cached and shared)."""
    M.sum_duplicates()
    M.sort_indices()
    M.data, M.indices, M.indptr = frozen(M.data), frozen(M.indices), frozen(M.indptr)
    return M


@cached_per_data
def _pairs(data: NTPData) -> tuple[np.ndarray, np.ndarray]:
    """The anchor of each context and the ``(m, V)`` mask of the equality pairs ``(j, z != a_j)``.

    The inequality pairs are the complement of the support mask; rows are row-major in ``(j, token)``.
    """
    mask = data.support_mask
    anchors = np.argmax(mask, axis=1)  # first in-support token of each row
    eq = mask.copy()
    eq[np.arange(data.m), anchors] = False
    return frozen(anchors), frozen(eq)


@cached_per_data
def equality_rhs(data: NTPData) -> np.ndarray:
    """``log(p_jz / p_j,a_j)`` for each equality row (row-major ``(j, z)``): the right side of (4).

    Computed without building any constraint matrix (:func:`ntp_constraints` holds the same array).
    """
    anchors, eq = _pairs(data)
    eq_context, eq_token = np.nonzero(eq)
    P = data.P
    return frozen(np.log(P[eq_context, eq_token]) - np.log(P[eq_context, anchors[eq_context]]))


@cached_per_data
def equality_matrix(data: NTPData) -> scipy.sparse.csr_matrix:
    """The sparse ``(n_eq, V d)`` equality rows of (4) alone (:func:`ntp_constraints` holds the same matrix).

    Without building the inequality rows (for :func:`ntpnb.linear.subspace.f_decomposition`).
    """
    anchors, eq = _pairs(data)
    eq_context, eq_token = np.nonzero(eq)
    return _frozen_csr(pair_rows(data.H, eq_context, eq_token, anchors[eq_context], data.V))


@dataclass(frozen=True)
class ConstraintPairs:
    """The (context, token) pairs of the constraint rows, without any matrix (see :func:`ntp_constraints`)."""

    #: Anchor token ``a_j`` of each context, shape ``(m,)``.
    anchors: np.ndarray
    #: Context of each equality row, in row-major order of ``(j, z)``.
    eq_context: np.ndarray
    #: Token of each equality row.
    eq_token: np.ndarray
    #: Context of each inequality row, in row-major order of ``(j, v)``.
    ineq_context: np.ndarray
    #: Out-of-support token of each inequality row.
    ineq_token: np.ndarray


@cached_per_data
def constraint_pairs(data: NTPData) -> ConstraintPairs:
    """The pairs of the rows of :func:`ntp_constraints`, without its matrices (cached; read-only)."""
    anchors, eq = _pairs(data)
    eq_context, eq_token = np.nonzero(eq)
    ineq_context, ineq_token = np.nonzero(~data.support_mask)
    return ConstraintPairs(
        anchors=anchors,
        eq_context=frozen(eq_context),
        eq_token=frozen(eq_token),
        ineq_context=frozen(ineq_context),
        ineq_token=frozen(ineq_token),
    )


@cached_per_data
def ntp_constraints(data: NTPData) -> NTPConstraints:
    """Build (once per data set) the scipy.sparse constraint matrices of Paper A, Eqs. (4) and (6).

    The result is shared by every caller: its arrays are read-only (copy before modifying).
    """
    pairs = constraint_pairs(data)
    ineq_context, ineq_token = pairs.ineq_context, pairs.ineq_token
    return NTPConstraints(
        anchors=pairs.anchors,
        eq_context=pairs.eq_context,
        eq_token=pairs.eq_token,
        eq=equality_matrix(data),
        eq_rhs=equality_rhs(data),
        ineq_context=ineq_context,
        ineq_token=ineq_token,
        ineq=_frozen_csr(pair_rows(data.H, ineq_context, pairs.anchors[ineq_context], ineq_token, data.V)),
    )


@dataclass(frozen=True, eq=False)
class NTPRows:
    """The NTP-SVM's constraints (6b) ``A w >= 1`` and (6a) ``B w = 0`` as maps on ``w = vec(W)``.

    The :class:`ntpnb.qp.QPConstraints` of Paper A. Every map goes through the logits
    ``L = H W^T`` or a coefficient matrix ``C`` (m x V) with ``A^T lambda + B^T mu = vec(C^T H)``;
    only :meth:`matrices` (for cvxpy and the polish) forms rows.
    """

    data: NTPData
    what: str = "the NTP-SVM"

    @property
    def shape(self) -> tuple[int, int]:
        """``(V, d)``."""
        return self.data.V, self.data.d

    @property
    def n_ineq(self) -> int:
        """Rows of (6b): the pairs ``(j, v)``, ``v`` not in ``S_j``."""
        return int(np.count_nonzero(~self.data.support_mask))

    @property
    def n_eq(self) -> int:
        """Rows of (6a): the pairs ``(j, z)``, ``z`` in ``S_j`` other than the anchor."""
        return int(np.count_nonzero(_pairs(self.data)[1]))

    def _logit_gaps(self, w: np.ndarray) -> np.ndarray:
        """``L_{j a_j} - L_jv`` for every pair ``(j, v)``."""
        L = self.data.H @ np.reshape(w, self.shape).T
        anchors, _ = _pairs(self.data)
        return L[np.arange(self.data.m), anchors][:, None] - L

    def margins(self, w: np.ndarray) -> np.ndarray:
        """``A w``: the margins ``L_{j a_j} - L_jv`` of (6b)."""
        return self._logit_gaps(w)[~self.data.support_mask]

    def equality_residuals(self, w: np.ndarray) -> np.ndarray:
        """``B w``: the residuals ``L_jz - L_{j a_j}`` of (6a)."""
        return -self._logit_gaps(w)[_pairs(self.data)[1]]

    def coefficients(self, lam: np.ndarray, mu: np.ndarray) -> np.ndarray:
        """``C`` with ``vec(C^T H) = A^T lambda + B^T mu`` (anchors complete zero row sums)."""
        anchors, eq = _pairs(self.data)
        C = np.zeros((self.data.m, self.data.V))
        C[~self.data.support_mask] = -lam
        C[eq] = mu
        C[np.arange(self.data.m), anchors] = -C.sum(axis=1)
        return C

    def multipliers(self, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(lambda, mu)`` read off ``C`` (the inverse of :meth:`coefficients` for zero row sums)."""
        return -C[~self.data.support_mask], C[_pairs(self.data)[1]]

    def combine(self, lam: np.ndarray, mu: np.ndarray) -> np.ndarray:
        """``A^T lambda + B^T mu = vec(C^T H)``."""
        return (self.coefficients(lam, mu).T @ self.data.H).ravel()

    def matrices(self) -> tuple[scipy.sparse.csr_matrix, scipy.sparse.csr_matrix, np.ndarray]:
        """The scipy.sparse rows of (6b) and (6a) (:func:`ntp_constraints`), and those of (6a) dense."""
        cons = ntp_constraints(self.data)
        return cons.ineq, cons.eq, cons.eq.toarray()
