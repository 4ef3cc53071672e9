r"""The linear constraints of Paper A as scipy.sparse matrices acting on ``vec(W)``.

``vec(W)[v * d + k] = W[v, k]``, so ``W -> (e_a - e_b)^T W h_j`` is the row
``vec((e_a - e_b) h_j^T)`` (``2 d`` non-zeros). Per context ``j`` an *anchor* ``a_j`` (the
smallest token of ``S_j``) replaces all pairs ``z != z'`` in ``S_j`` (as Paper A notes after (4)):

* equalities  ``(e_z - e_{a_j})^T W h_j = c``  for ``z`` in ``S_j \ {a_j}`` (Eqs. (4), (6a)),
  with ``c = log(p_jz / p_j,a_j)`` for NTP_H-compatibility and ``c = 0`` for NTP-separability;
* inequalities ``(e_{a_j} - e_v)^T W h_j >= 1`` for ``v`` not in ``S_j`` (Eq. (6b)).

The equality rows span F (Eq. (5)). :class:`NTPRows` applies the rows through the logits
``H W^T`` without forming any (for :mod:`ntpnb._qp`).

Separability and compatibility are decided with each row of ``H`` divided by its power of two
(:func:`context_scales`, :func:`scaled_rows`; exact), so that no context's rows hide below
another's size: both decisions take the scaling from here.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy

from ._ntp_data import NTPData, cached_per_data, frozen


def context_scales(H: np.ndarray) -> np.ndarray:
    """Each row's power of two ``2^(e-1)`` with ``max_k |H_jk|`` in ``[2^(e-1), 2^e)`` (1 if zero).

    Dividing by it is exact: the row scaling in which separability and compatibility are decided.
    """
    top = np.abs(H).max(axis=1)
    _, exponent = np.frexp(top)
    return np.where(top > 0, np.ldexp(0.5, exponent), 1.0)


def scaled_rows(H: np.ndarray) -> np.ndarray:
    """``H`` with each row divided by its :func:`context_scales` (exact): the units of every decision."""
    return H / context_scales(H)[:, None]


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


def pair_coefficients(
    mask: np.ndarray, anchors: np.ndarray, eq: np.ndarray | tuple, lam: np.ndarray, mu: np.ndarray
) -> np.ndarray:
    """``C``: ``-lam`` off the supports, ``mu`` on the pairs ``eq`` (mask or indices), zero row sums."""
    C = np.zeros(mask.shape)
    C[~mask] = -lam
    C[eq] = mu
    C[np.arange(mask.shape[0]), anchors] = -C.sum(axis=1)
    return C


@dataclass(frozen=True, eq=False)
class NTPConstraints:
    """The (context, token) pairs of the constraint rows, row-major, and their scipy.sparse rows.

    Each matrix is formed at its first use (read-only, shared by every caller).
    """

    #: Anchor token ``a_j`` of each context, shape ``(m,)``.
    anchors: np.ndarray
    #: Context ``j`` and token ``z`` of each equality row ``(e_z - e_{a_j}) h_j^T``.
    eq_context: np.ndarray
    eq_token: np.ndarray
    #: Context ``j`` and out-of-support token ``v`` of each inequality row ``(e_{a_j} - e_v) h_j^T``.
    ineq_context: np.ndarray
    ineq_token: np.ndarray
    #: The embeddings and next-token probabilities the rows are made of (the data's arrays).
    H: np.ndarray = field(repr=False)
    P: np.ndarray = field(repr=False)

    @functools.cached_property
    def eq(self) -> scipy.sparse.csr_matrix:
        """``(n_eq, V d)`` equality rows of (4) and (6a)."""
        j = self.eq_context
        return _frozen_csr(pair_rows(self.H, j, self.eq_token, self.anchors[j], self.P.shape[1]))

    @functools.cached_property
    def eq_rhs(self) -> np.ndarray:
        """``log(p_jz / p_j,a_j)`` for each equality row: the right side of (4), without any matrix."""
        j = self.eq_context
        return frozen(np.log(self.P[j, self.eq_token]) - np.log(self.P[j, self.anchors[j]]))

    @functools.cached_property
    def ineq(self) -> scipy.sparse.csr_matrix:
        """``(n_ineq, V d)`` inequality rows of (6b)."""
        j = self.ineq_context
        return _frozen_csr(pair_rows(self.H, j, self.anchors[j], self.ineq_token, self.P.shape[1]))


@cached_per_data
def ntp_constraints(data: NTPData) -> NTPConstraints:
    """The constraint pairs and matrices of Eqs. (4) and (6), once per data set (read-only)."""
    anchors, eq = anchor_pairs(data.support_mask)
    eq_context, eq_token = np.nonzero(eq)
    ineq_context, ineq_token = np.nonzero(~data.support_mask)
    # the data's arrays, not the data: a cached value must not refer to its weak key
    return NTPConstraints(
        *(frozen(x) for x in (anchors, eq_context, eq_token, ineq_context, ineq_token)), data.H, data.P
    )


@dataclass(frozen=True, eq=False)
class NTPRows:
    """The NTP-SVM's constraints (6b) ``A w >= 1`` and (6a) ``B w = 0`` as maps on ``w = vec(W)``.

    The :class:`ntpnb._qp.QPConstraints` of Paper A, through the logits ``L = H W^T`` or a ``C``
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
        return int(ntp_constraints(self.data).eq_context.size)

    def _logit_gaps(self, w: np.ndarray) -> np.ndarray:
        """``L_{j a_j} - L_jv`` for every pair ``(j, v)``."""
        L = self.data.H @ np.reshape(w, self.shape).T
        return L[np.arange(self.data.m), ntp_constraints(self.data).anchors][:, None] - L

    def margins(self, w: np.ndarray) -> np.ndarray:
        """``A w``: the margins ``L_{j a_j} - L_jv`` of (6b)."""
        return self._logit_gaps(w)[~self.data.support_mask]

    def equality_residuals(self, w: np.ndarray) -> np.ndarray:
        """``B w``: the residuals ``L_jz - L_{j a_j}`` of (6a)."""
        pairs = ntp_constraints(self.data)
        return -self._logit_gaps(w)[pairs.eq_context, pairs.eq_token]

    def multipliers(self, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(lambda, mu)`` read off ``C`` (the inverse of :func:`pair_coefficients` for zero row sums)."""
        pairs = ntp_constraints(self.data)
        return -C[~self.data.support_mask], C[pairs.eq_context, pairs.eq_token]

    def combine(self, lam: np.ndarray, mu: np.ndarray) -> np.ndarray:
        """``A^T lambda + B^T mu = vec(C^T H)``, ``C`` of :func:`pair_coefficients`."""
        pairs = ntp_constraints(self.data)
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
