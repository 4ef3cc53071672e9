r"""The linear constraints of Paper A as scipy.sparse matrices acting on ``vec(W)``.

``vec(W)[v * d + k] = W[v, k]``, so ``W -> (e_a - e_b)^T W h_j`` is the row
``vec((e_a - e_b) h_j^T)`` (``2 d`` non-zeros). Per context ``j`` an *anchor* ``a_j`` (the
smallest token of ``S_j``) replaces all pairs ``z != z'`` in ``S_j`` (as Paper A notes after (4)):

* equalities  ``(e_z - e_{a_j})^T W h_j = c``  for ``z`` in ``S_j \ {a_j}`` (Eqs. (4), (6a)),
  with ``c = log(p_jz / p_j,a_j)`` for NTP_H-compatibility and ``c = 0`` for NTP-separability;
* inequalities ``(e_{a_j} - e_v)^T W h_j >= 1`` for ``v`` not in ``S_j`` (Eq. (6b)).

The equality rows span F (Eq. (5)). :class:`NTPRows` applies the rows through the logits
``H W^T`` without forming any (for :mod:`ntpnb.qp`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy

from .ntp_data import NTPData, cached_per_data, frozen


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


def anchor_pairs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The anchor (first in-support token) of each context and the ``(m, V)`` mask of the equality pairs.

    The pairs ``(j, z != a_j)``; the inequality pairs are the complement of ``mask``.
    """
    anchors = np.argmax(mask, axis=1)
    eq = mask.copy()
    eq[np.arange(mask.shape[0]), anchors] = False
    return anchors, eq


def equality_gram(
    mask: np.ndarray, gram: Callable[[np.ndarray], np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The equality pairs ``j, z, a_j`` (row-major) and the Gram matrix of their rows ``(e_z - e_a) h_j^T``.

    ``G_ii' = <e_z - e_a, e_z' - e_a'> K_jj'`` with ``K_jj' = gram(j)`` (the block of ``H H^T``).
    """
    anchors, eq = anchor_pairs(mask)
    j, z = np.nonzero(eq)
    a = anchors[j]
    tok = (z[:, None] == z[None, :]).astype(float) + (a[:, None] == a[None, :])
    tok -= (z[:, None] == a[None, :]).astype(float) + (a[:, None] == z[None, :])
    return j, z, a, tok * gram(j)


def pair_coefficients(
    mask: np.ndarray, anchors: np.ndarray, eq: np.ndarray | tuple, lam: np.ndarray, mu: np.ndarray
) -> np.ndarray:
    """``C``: ``-lam`` off the supports, ``mu`` on the pairs ``eq`` (mask or indices), zero row sums."""
    C = np.zeros(mask.shape)
    C[~mask] = -lam
    C[eq] = mu
    C[np.arange(mask.shape[0]), anchors] = -C.sum(axis=1)
    return C


@cached_per_data
def equality_rhs(data: NTPData) -> np.ndarray:
    """``log(p_jz / p_j,a_j)`` for each equality row: the right side of (4), without any matrix."""
    pairs, P = constraint_pairs(data), data.P
    j = pairs.eq_context
    return frozen(np.log(P[j, pairs.eq_token]) - np.log(P[j, pairs.anchors[j]]))


@cached_per_data
def equality_matrix(data: NTPData) -> scipy.sparse.csr_matrix:
    """The sparse ``(n_eq, V d)`` equality rows of (4), without the inequality rows."""
    pairs = constraint_pairs(data)
    j = pairs.eq_context
    return _frozen_csr(pair_rows(data.H, j, pairs.eq_token, pairs.anchors[j], data.V))


@dataclass(frozen=True)
class ConstraintPairs:
    """The (context, token) pairs of the constraint rows, row-major, without any matrix."""

    #: Anchor token ``a_j`` of each context, shape ``(m,)``.
    anchors: np.ndarray
    #: Context ``j`` and token ``z`` of each equality row ``(e_z - e_{a_j}) h_j^T``.
    eq_context: np.ndarray
    eq_token: np.ndarray
    #: Context ``j`` and out-of-support token ``v`` of each inequality row ``(e_{a_j} - e_v) h_j^T``.
    ineq_context: np.ndarray
    ineq_token: np.ndarray


@dataclass(frozen=True)
class NTPConstraints(ConstraintPairs):
    """The pairs with the scipy.sparse rows (see the module docstring)."""

    #: ``(n_eq, V d)`` equality rows.
    eq: scipy.sparse.csr_matrix
    #: ``log(p_jz / p_j,a_j)`` for each equality row: the compatibility right-hand side.
    eq_rhs: np.ndarray
    #: ``(n_ineq, V d)`` inequality rows.
    ineq: scipy.sparse.csr_matrix


@cached_per_data
def constraint_pairs(data: NTPData) -> ConstraintPairs:
    """The pairs of the rows of :func:`ntp_constraints`, without its matrices (cached; read-only)."""
    anchors, eq = anchor_pairs(data.support_mask)
    eq_context, eq_token = np.nonzero(eq)
    ineq_context, ineq_token = np.nonzero(~data.support_mask)
    return ConstraintPairs(
        anchors=frozen(anchors),
        eq_context=frozen(eq_context),
        eq_token=frozen(eq_token),
        ineq_context=frozen(ineq_context),
        ineq_token=frozen(ineq_token),
    )


@cached_per_data
def ntp_constraints(data: NTPData) -> NTPConstraints:
    """The scipy.sparse constraint matrices of Eqs. (4) and (6), once per data set (read-only)."""
    pairs = constraint_pairs(data)
    j = pairs.ineq_context
    return NTPConstraints(
        **vars(pairs),
        eq=equality_matrix(data),
        eq_rhs=equality_rhs(data),
        ineq=_frozen_csr(pair_rows(data.H, j, pairs.anchors[j], pairs.ineq_token, data.V)),
    )


@dataclass(frozen=True, eq=False)
class NTPRows:
    """The NTP-SVM's constraints (6b) ``A w >= 1`` and (6a) ``B w = 0`` as maps on ``w = vec(W)``.

    The :class:`ntpnb.qp.QPConstraints` of Paper A, through the logits ``L = H W^T`` or a ``C``
    (m x V) with ``A^T lambda + B^T mu = vec(C^T H)`` (:meth:`combine`); only :meth:`matrices` forms rows.
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
        return int(constraint_pairs(self.data).eq_context.size)

    def _logit_gaps(self, w: np.ndarray) -> np.ndarray:
        """``L_{j a_j} - L_jv`` for every pair ``(j, v)``."""
        L = self.data.H @ np.reshape(w, self.shape).T
        return L[np.arange(self.data.m), constraint_pairs(self.data).anchors][:, None] - L

    def margins(self, w: np.ndarray) -> np.ndarray:
        """``A w``: the margins ``L_{j a_j} - L_jv`` of (6b)."""
        return self._logit_gaps(w)[~self.data.support_mask]

    def equality_residuals(self, w: np.ndarray) -> np.ndarray:
        """``B w``: the residuals ``L_jz - L_{j a_j}`` of (6a)."""
        pairs = constraint_pairs(self.data)
        return -self._logit_gaps(w)[pairs.eq_context, pairs.eq_token]

    def multipliers(self, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(lambda, mu)`` read off ``C`` (the inverse of :func:`pair_coefficients` for zero row sums)."""
        pairs = constraint_pairs(self.data)
        return -C[~self.data.support_mask], C[pairs.eq_context, pairs.eq_token]

    def combine(self, lam: np.ndarray, mu: np.ndarray) -> np.ndarray:
        """``A^T lambda + B^T mu = vec(C^T H)``, ``C`` of :func:`pair_coefficients`."""
        pairs = constraint_pairs(self.data)
        eq = (pairs.eq_context, pairs.eq_token)
        C = pair_coefficients(self.data.support_mask, pairs.anchors, eq, lam, mu)
        return (C.T @ self.data.H).ravel()

    def matrices(self) -> tuple[scipy.sparse.csr_matrix, scipy.sparse.csr_matrix, np.ndarray]:
        """The scipy.sparse rows of (6b) and (6a) (:func:`ntp_constraints`), and those of (6a) dense."""
        cons = ntp_constraints(self.data)
        return cons.ineq, cons.eq, cons.eq.toarray()


def margin_lp(
    A: scipy.sparse.csr_matrix,
    G: scipy.sparse.csr_matrix,
    T: Any,
    bounds: Any,
    method: str,
    options: dict | None = None,
) -> scipy.optimize.OptimizeResult:
    """``max sum(t)`` over ``(w, t)`` subject to ``A w >= T t`` and ``G w = 0``: one linprog ``method``.

    ``T`` is a column of ones (one margin for all rows) or the identity (one per row); ``bounds``
    those of ``(w, t)``.
    """
    n, k = A.shape[1], T.shape[1]
    A_eq = (
        scipy.sparse.hstack([G, scipy.sparse.csr_matrix((G.shape[0], k))], format="csr")
        if G.shape[0]
        else None
    )
    with warnings.catch_warnings():
        # HiGHS options that scipy does not list (run_crossover) are passed on with a warning
        warnings.filterwarnings("ignore", "Unrecognized options", scipy.optimize.OptimizeWarning)
        return scipy.optimize.linprog(
            np.concatenate([np.zeros(n), -np.ones(k)]),
            A_ub=scipy.sparse.hstack([-A, T], format="csr"),
            b_ub=np.zeros(A.shape[0]),
            A_eq=A_eq,
            b_eq=None if A_eq is None else np.zeros(G.shape[0]),
            bounds=bounds,
            method=method,
            options=options,
        )
