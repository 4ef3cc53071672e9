"""The Graph-SVM ``W^mm`` (Paper B, Sec. 3.2) as a verified QP.

``W^mm = argmin ||W||_F`` subject to ``(e_i - e_j)^T W e_k = 0`` for every ``(i ~ j)`` and
``>= 1`` for every ``(i => j)`` in ``G^(k)``, for every ``k``; on acyclic data there are no
equalities and it is (Acyc-SVM). In ``w = vec(W)`` coordinates the constraint rows are
``vec((e_i - e_j) e_k^T)``. The QP is solved with a named solver
(:data:`ntpnb.settings.QP_SOLVER`), refined by an exact solve on its active set, and verified
(feasibility, KKT stationarity and sign, complementary slackness, duality gap) before it is
returned.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .. import settings
from ..errors import InfeasibleGraphSVMError, RankAmbiguousError, SolverError
from ..linalg import numerical_rank
from ..qp import active_mask, min_norm_qp, polish_active_set
from .data import Ids, TokenData, check_embeddings, normalized_embeddings, scaled_back
from .graphs import TokenPriorityGraphs, check_graphs, scyc_basis, scyc_dimension, token_priority_graphs

__all__ = [
    "GraphSVMSolution",
    "graph_constraints",
    "solve_graph_svm",
    "graph_svm",
]


def graph_constraints(E: np.ndarray, graphs: TokenPriorityGraphs) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``vec((e_i - e_j) e_k^T)`` of the inequalities ``(i => j)`` and equalities ``(i ~ j)``.

    Returns
    -------
    A, B
        ``(n_strict, d*d)`` and ``(n_equiv, d*d)``.

    Raises
    ------
    InvalidDataError
        If ``graphs`` is not TokenPriorityGraphs or ``E`` does not embed its vocabulary.
    """
    E = check_embeddings(E, check_graphs(graphs).K)
    d = E.shape[1]

    def rows(triples: list[tuple[int, int, int]]) -> np.ndarray:
        if not triples:
            return np.zeros((0, d * d))
        i, j, k = (np.array(v) for v in zip(*triples, strict=True))
        return np.einsum("ra,rb->rab", E[i] - E[j], E[k]).reshape(len(triples), d * d)

    return rows(graphs.strict), rows(graphs.equivalent)


@dataclass(frozen=True)
class GraphSVMSolution:
    """``W^mm`` with the certificate of its verification.

    The problem is solved for ``E / c``, ``c`` a power of two near the largest norm of an
    embedding (:func:`~ntpnb.attention.data.normalized_embeddings`), and scaled back:
    ``W^mm(E) = W^mm(E / c) / c^2``, ``lambda(E) = lambda(E / c) / c^4``. The certificate is
    that of the normalized problem, every quantity in it scale-free (relative to the unit
    margin, to ``||W||``, to the largest multiplier or to the primal objective), so it reads
    the same at every scale of ``E``.

    Attributes
    ----------
    W
        ``W^mm``, shape ``(d, d)``.
    duals
        Multipliers ``lambda >= 0`` of the inequalities, in the order of ``graphs.strict``.
    margin_violation
        ``max(0, 1 - min margin)`` over the inequalities.
    equality_violation
        ``max |(e_i - e_j)^T W e_k|`` over the equalities (in units of the unit margin).
    stationarity
        ``||w - A^T lambda - Pi_S(w - A^T lambda)|| / ||w||`` (KKT stationarity), ``Pi_S`` the
        projection on the span of the equalities' rows, which is ``S_cyc`` (Lemma 2's proof).
    complementarity
        ``max_r lambda_r |a_r^T w - 1| / max_r lambda_r``.
    duality_gap
        ``(primal - dual) / primal``, primal ``||w||^2/2``, dual
        ``sum(lambda) - ||A^T lambda + B^T nu||^2 / 2`` (0 without strict relations).
    solver
        Name of the QP solver.
    polished
        Whether the answer was refined by an exact solve on the active set.
    """

    W: np.ndarray
    duals: np.ndarray
    margin_violation: float
    equality_violation: float
    stationarity: float
    complementarity: float
    duality_gap: float
    solver: str
    polished: bool

    @property
    def n_active(self) -> int:
        """Number of inequalities with a positive multiplier (support vectors).

        Decided by :func:`ntpnb.qp.active_mask`, relative to the largest multiplier (never at
        the rounding level: a polished answer has exact zeros off its active set).
        """
        return int(np.sum(active_mask(self.duals)))

    def passes(self) -> bool:
        """Whether every verification quantity is within :mod:`ntpnb.settings` tolerances."""
        top = float(self.duals.max(initial=0.0))
        return (
            self.margin_violation <= settings.SVM_FEAS_TOL
            and self.equality_violation <= settings.SVM_FEAS_TOL
            and self.stationarity <= settings.SVM_KKT_TOL
            and self.complementarity <= settings.SVM_KKT_TOL
            and float(self.duals.min(initial=0.0)) >= -settings.SVM_KKT_TOL * top
            and abs(self.duality_gap) <= settings.SVM_GAP_TOL
        )


def _certificate(
    A: np.ndarray,
    B: np.ndarray,
    basis: np.ndarray,
    w: np.ndarray,
    lam: np.ndarray,
    solver: str,
    polished: bool,
) -> GraphSVMSolution:
    d = math.isqrt(w.size)
    norm_w = float(np.linalg.norm(w))
    margins = A @ w
    resid = w - A.T @ lam
    resid = resid - basis.T @ (basis @ resid)  # the part no B^T nu can absorb
    combo = w - resid  # A^T lambda + B^T nu
    primal = 0.5 * norm_w**2
    dual = float(lam.sum()) - 0.5 * float(combo @ combo)
    top = float(lam.max(initial=0.0))
    W = w.reshape(d, d).copy()
    W.setflags(write=False)
    lam = lam.copy()
    lam.setflags(write=False)
    return GraphSVMSolution(
        W=W,
        duals=lam,
        margin_violation=float(max(0.0, 1.0 - margins.min(initial=np.inf))),
        equality_violation=float(np.abs(B @ w).max(initial=0.0)),
        stationarity=float(np.linalg.norm(resid)) / norm_w if norm_w > 0 else 0.0,
        complementarity=float(np.max(np.abs(lam * (margins - 1.0)), initial=0.0)) / top if top > 0 else 0.0,
        duality_gap=(primal - dual) / primal if primal > 0 else 0.0,
        solver=solver,
        polished=polished,
    )


def _polish(A: np.ndarray, basis: np.ndarray, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Min-norm ``w`` with the active inequalities as equalities and ``w`` orthogonal to ``S_cyc``.

    The equalities ``B w = 0`` say ``w _|_ S_cyc`` (the span of ``B``'s rows, Lemma 2's proof),
    so with ``M`` the active rows of ``A`` projected off ``S_cyc``, ``w`` is the minimum-norm
    solution of ``M w = 1`` and ``w = M^T alpha``: both from the SVD of ``M`` itself (never
    ``M M^T``, which squares its condition number), its rank decided by
    :func:`ntpnb.linalg.numerical_rank`. The active set is corrected by
    :func:`ntpnb.qp.polish_active_set`. Returns ``(w, lambda)`` or None when no active set
    gives a KKT point or the rank of some active set is not determined in float64.
    """

    def solve_on(active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        M = A[active]
        M = M - (M @ basis.T) @ basis
        U, s, Vt = np.linalg.svd(M, full_matrices=False)
        r = numerical_rank(s, M.shape, what="the active rows of the Graph-SVM (off S_cyc)")
        coef = (U[:, :r].T @ np.ones(active.size)) / s[:r]
        return Vt[:r].T @ coef, U[:, :r] @ (coef / s[:r])

    try:
        return polish_active_set(solve_on, lambda w: A @ w, lam)
    except RankAmbiguousError:
        return None


def _solve_normalized(E: np.ndarray, graphs: TokenPriorityGraphs) -> GraphSVMSolution:
    """The verified Graph-SVM for embeddings of norm about 1 (see :func:`solve_graph_svm`)."""
    A, B = graph_constraints(E, graphs)
    n = E.shape[1] ** 2
    basis = scyc_basis(E, graphs)
    if A.shape[0] == 0:
        return _certificate(A, B, basis, np.zeros(n), np.zeros(0), "none (no strict relation)", False)
    result = min_norm_qp(A, B, "the Graph-SVM")
    if result.infeasible:
        if scyc_dimension(E, graphs) is not None:
            # with linearly independent embeddings each W e_k is free and every score order
            # along the (acyclic) condensation of G^(k) is reachable: the Graph-SVM is feasible
            s = np.linalg.svd(E, compute_uv=False)
            raise SolverError(
                f"{result.solver} reports the Graph-SVM infeasible ({result.status}), but the "
                f"embeddings are linearly independent, which makes it feasible: they are too "
                f"ill-conditioned for the solver (condition number {s[0] / s[-1]:.3g})"
            )
        raise InfeasibleGraphSVMError(
            f"(Graph-SVM) is infeasible ({result.solver}: {result.status}): no W satisfies the "
            f"{A.shape[0]} strict and {B.shape[0]} equality constraints of these embeddings"
        )
    lam = result.lam
    raw = _certificate(A, B, basis, result.w, lam, result.solver, False)
    polished = _polish(A, basis, lam)
    if polished is not None:
        sol = _certificate(A, B, basis, *polished, settings.QP_SOLVER, True)
        if sol.passes():
            return sol
    if raw.passes():
        return raw
    raise SolverError(
        f"the Graph-SVM answer of {settings.QP_SOLVER} failed verification: margin violation "
        f"{raw.margin_violation:.2e}, equality violation {raw.equality_violation:.2e}, stationarity "
        f"{raw.stationarity:.2e}, complementarity {raw.complementarity:.2e}, gap {raw.duality_gap:.2e}"
    )


def solve_graph_svm(E: object, graphs: TokenPriorityGraphs) -> GraphSVMSolution:
    """Solve (Graph-SVM) for the graphs ``graphs`` and return the verified solution.

    With no strict relation the solution is ``W^mm = 0`` (certified trivially). The problem is
    solved for normalized embeddings and scaled back (see :class:`GraphSVMSolution`), so the
    answer and its certificate do not depend on the scale of ``E``.

    Raises
    ------
    InfeasibleGraphSVMError
        If the constraints have no solution (the solver certifies infeasibility; this happens
        only when the embeddings are linearly dependent).
    ScaleError
        If ``W^mm`` (it scales like ``1 / |E|^2``) or a multiplier (like ``1 / |E|^4``) lies
        outside the float64 range.
    RankAmbiguousError
        If the dimension of ``S_cyc`` is not determined in float64 (see :func:`scyc_basis`).
    SolverError
        If the solver fails or no answer passes verification, or if it reports infeasibility
        for linearly independent embeddings (which make the problem feasible).
    """
    E = check_embeddings(E, check_graphs(graphs).K)
    En, c = normalized_embeddings(E)
    sol = _solve_normalized(En, graphs)
    if c == 1.0:
        return sol
    W = scaled_back(sol.W, c, 2, "W^mm (it scales like 1 / |E|^2)")
    duals = scaled_back(sol.duals, c, 4, "a multiplier of W^mm (it scales like 1 / |E|^4)")
    return replace(sol, W=W, duals=duals)


def graph_svm(E: object, X: Ids | TokenData, y: object = None, K: int | None = None) -> np.ndarray:
    """``W^mm`` of (Graph-SVM) for the token-priority graphs of the data ``(X, y)``, ``(d, d)``.

    ``K`` defaults to the number of rows of ``E``. See :func:`solve_graph_svm` for the
    certificate and the errors raised (only ``W^mm`` needs to fit in float64 here, not the
    multipliers).
    """
    E = check_embeddings(E)
    graphs = token_priority_graphs(X, y, E.shape[0] if K is None else K)
    En, c = normalized_embeddings(E)
    W = _solve_normalized(En, graphs).W
    return np.array(W if c == 1.0 else scaled_back(W, c, 2, "W^mm (it scales like 1 / |E|^2)"))
