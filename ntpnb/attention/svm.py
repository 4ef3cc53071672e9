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
from dataclasses import dataclass

import numpy as np

from .. import settings
from ..errors import InfeasibleGraphSVMError, SolverError
from ..qp import min_norm_qp, polish_active_set
from .data import Ids, TokenData, check_embeddings
from .graphs import TokenPriorityGraphs, token_priority_graphs

__all__ = ["GraphSVMSolution", "graph_constraints", "solve_graph_svm", "graph_svm"]


def graph_constraints(E: np.ndarray, graphs: TokenPriorityGraphs) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``vec((e_i - e_j) e_k^T)`` of the inequalities ``(i => j)`` and equalities ``(i ~ j)``.

    Returns
    -------
    A, B
        ``(n_strict, d*d)`` and ``(n_equiv, d*d)``.
    """
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

    Attributes
    ----------
    W
        ``W^mm``, shape ``(d, d)``.
    duals
        Multipliers ``lambda >= 0`` of the inequalities, in the order of ``graphs.strict``.
    margin_violation
        ``max(0, 1 - min margin)`` over the inequalities.
    equality_violation
        ``max |(e_i - e_j)^T W e_k|`` over the equalities, relative to ``max(1, ||W||)``.
    stationarity
        ``min_nu ||w - A^T lambda - B^T nu|| / ||w||`` (KKT stationarity).
    complementarity
        ``max_r lambda_r |a_r^T w - 1|``.
    duality_gap
        ``(primal - dual) / (1 + primal)``, primal ``||w||^2/2``, dual
        ``sum(lambda) - ||A^T lambda + B^T nu||^2 / 2``.
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
        """Number of inequalities with a positive multiplier (support vectors)."""
        top = max(1.0, float(self.duals.max(initial=0.0)))
        return int(np.sum(self.duals > settings.ACTIVE_DUAL_TOL * top))

    def passes(self) -> bool:
        """Whether every verification quantity is within :mod:`ntpnb.settings` tolerances."""
        return (
            self.margin_violation <= settings.SVM_FEAS_TOL
            and self.equality_violation <= settings.SVM_FEAS_TOL
            and self.stationarity <= settings.SVM_KKT_TOL
            and self.complementarity <= settings.SVM_KKT_TOL
            and float(self.duals.min(initial=0.0)) >= -settings.SVM_KKT_TOL
            and abs(self.duality_gap) <= settings.SVM_GAP_TOL
        )


def _certificate(
    A: np.ndarray, B: np.ndarray, w: np.ndarray, lam: np.ndarray, solver: str, polished: bool
) -> GraphSVMSolution:
    d = math.isqrt(w.size)
    norm_w = float(np.linalg.norm(w))
    margins = A @ w
    resid = w - A.T @ lam
    if B.shape[0]:
        nu, *_ = np.linalg.lstsq(B.T, resid, rcond=None)
        resid = resid - B.T @ nu
    combo = w - resid  # A^T lambda + B^T nu
    primal = 0.5 * norm_w**2
    dual = float(lam.sum()) - 0.5 * float(combo @ combo)
    W = w.reshape(d, d).copy()
    W.setflags(write=False)
    lam = lam.copy()
    lam.setflags(write=False)
    return GraphSVMSolution(
        W=W,
        duals=lam,
        margin_violation=float(max(0.0, 1.0 - margins.min(initial=np.inf))),
        equality_violation=float(np.abs(B @ w).max(initial=0.0)) / max(1.0, norm_w),
        stationarity=float(np.linalg.norm(resid)) / max(norm_w, 1e-300),
        complementarity=float(np.max(np.abs(lam * (margins - 1.0)), initial=0.0)),
        duality_gap=(primal - dual) / (1.0 + primal),
        solver=solver,
        polished=polished,
    )


def _polish(A: np.ndarray, B: np.ndarray, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Min-norm ``w`` with the active inequalities and the equalities as equalities.

    ``w = M^T alpha`` with ``M = [A_act; B]`` and ``M M^T alpha = [1; 0]`` (least squares, since
    the equalities of one SCC are linearly dependent), the active set corrected by
    :func:`ntpnb.qp.polish_active_set`. Returns ``(w, lambda)`` or None when no active set gives
    a KKT point.
    """

    def solve_on(active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        M = np.vstack([A[active], B])
        rhs = np.concatenate([np.ones(active.size), np.zeros(B.shape[0])])
        alpha, *_ = np.linalg.lstsq(M @ M.T, rhs, rcond=None)
        return M.T @ alpha, alpha[: active.size]

    return polish_active_set(solve_on, lambda w: A @ w, lam)


def solve_graph_svm(E: object, graphs: TokenPriorityGraphs) -> GraphSVMSolution:
    """Solve (Graph-SVM) for the graphs ``graphs`` and return the verified solution.

    With no strict relation the solution is ``W^mm = 0`` (certified trivially).

    Raises
    ------
    InfeasibleGraphSVMError
        If the constraints have no solution (the solver certifies infeasibility; this happens
        only when the embeddings are linearly dependent).
    SolverError
        If the solver fails or no answer passes verification.
    """
    E = check_embeddings(E, graphs.K)
    A, B = graph_constraints(E, graphs)
    n = E.shape[1] ** 2
    if A.shape[0] == 0:
        return _certificate(A, B, np.zeros(n), np.zeros(0), "none (no strict relation)", False)
    result = min_norm_qp(A, B, "the Graph-SVM")
    if result.infeasible:
        raise InfeasibleGraphSVMError(
            f"(Graph-SVM) is infeasible ({result.solver}: {result.status}): no W satisfies the "
            f"{A.shape[0]} strict and {B.shape[0]} equality constraints of these embeddings"
        )
    lam = result.lam
    raw = _certificate(A, B, result.w, lam, result.solver, False)
    polished = _polish(A, B, lam)
    if polished is not None:
        sol = _certificate(A, B, *polished, settings.QP_SOLVER, True)
        if sol.passes():
            return sol
    if raw.passes():
        return raw
    raise SolverError(
        f"the Graph-SVM answer of {settings.QP_SOLVER} failed verification: margin violation "
        f"{raw.margin_violation:.2e}, equality violation {raw.equality_violation:.2e}, stationarity "
        f"{raw.stationarity:.2e}, complementarity {raw.complementarity:.2e}, gap {raw.duality_gap:.2e}"
    )


def graph_svm(E: object, X: Ids | TokenData, y: object = None, K: int | None = None) -> np.ndarray:
    """``W^mm`` of (Graph-SVM) for the token-priority graphs of the data ``(X, y)``, ``(d, d)``.

    ``K`` defaults to the number of rows of ``E``. See :func:`solve_graph_svm` for the
    certificate and the errors raised.
    """
    E = check_embeddings(E)
    graphs = token_priority_graphs(X, y, E.shape[0] if K is None else K)
    return solve_graph_svm(E, graphs).W.copy()
