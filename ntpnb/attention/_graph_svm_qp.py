"""The Graph-SVM ``W^mm`` (Paper B, Sec. 3.2) as a verified QP.

``W^mm = argmin ||W||_F`` subject to ``(e_i - e_j)^T W e_k = 0`` for every ``(i ~ j)`` and ``>= 1``
for every ``(i => j)`` in ``G^(k)``, every ``k`` (on acyclic data no equalities: Acyc-SVM). The
constraint rows are ``vec((e_i - e_j) e_k^T)``. It is :mod:`ntpnb._qp`'s
minimum-norm problem, solved by least-distance programming (one NNLS,
:func:`ntpnb._qp.solve_least_distance`) or cvxpy (:data:`ntpnb.settings.QP_SOLVER`), refined on its
active set and verified (feasibility, KKT stationarity and sign, complementary slackness, duality gap).
The equalities' multipliers refer to an orthonormal basis of their span, ``S_cyc``
(:func:`~ntpnb.attention._graphs.scyc_basis`, Lemma 2's proof).
"""

from __future__ import annotations

import numpy as np

from .._qp import (
    MatrixConstraints,
    MinNormQP,
    SVMSolution,
    scaled_solution,
    solve_least_distance,
    solve_reference,
)
from ..errors import InfeasibleGraphSVMError, SolverError
from ._graphs import TokenPriorityGraphs, check_graphs, scyc_basis, scyc_dimension
from ._token_data import check_embeddings, normalized_embeddings

__all__ = ["solve_graph_svm"]


def _constraint_rows(E: np.ndarray, triples: list[tuple[int, int, int]]) -> np.ndarray:
    """Rows ``vec((e_i - e_j) e_k^T)``, ``(len(triples), d*d)``, of the relations ``(i, j, k)``."""
    d = E.shape[1]
    if not triples:
        return np.zeros((0, d * d))
    i, j, k = (np.array(v) for v in zip(*triples, strict=True))
    return np.einsum("ra,rb->rab", E[i] - E[j], E[k]).reshape(len(triples), d * d)


def solve_graph_svm(E: object, graphs: TokenPriorityGraphs) -> SVMSolution:
    """Solve (Graph-SVM) for the graphs ``graphs`` and return the verified solution.

    One NNLS (:func:`ntpnb._qp.solve_least_distance`), handed to cvxpy
    (:func:`ntpnb._qp.solve_reference`) when its answer is not certain (infeasible or nearly so, no
    convergence, not verified). ``SVMSolution.solver`` names which answered. With no strict
    relation ``W^mm = 0`` (certified trivially).

    Solved for ``E / c`` (:func:`~ntpnb.attention._token_data.normalized_embeddings`) and scaled back
    (:func:`ntpnb._qp.scaled_solution`): ``W^mm(E) = W^mm(E / c) / c^2``, ``lambda(E) = lambda(E / c) /
    c^4``; the certificate (:class:`ntpnb._qp.SVMSolution`) is the normalized problem's, scale-free.

    Raises
    ------
    InfeasibleGraphSVMError
        If the solver certifies the constraints infeasible (only for linearly dependent embeddings).
    ScaleError
        If ``W^mm`` (it scales like ``1 / |E|^2``) or a multiplier (like ``1 / |E|^4``) lies
        outside the float64 range.
    RankAmbiguousError
        If the dimension of ``S_cyc`` is not determined in float64 (see :func:`scyc_basis`).
    SolverError
        If the solver fails, no answer passes verification, or it reports infeasibility for
        linearly independent embeddings (which make the problem feasible).
    """
    E, c = normalized_embeddings(check_embeddings(E, check_graphs(graphs).K))
    A, B = _constraint_rows(E, graphs.strict), _constraint_rows(E, graphs.equivalent)
    cons = MatrixConstraints(A, B, scyc_basis(E, graphs), "the Graph-SVM", (E.shape[1], E.shape[1]))

    def infeasible(result: MinNormQP) -> Exception:
        if scyc_dimension(E, graphs) is not None:
            # with linearly independent embeddings each W e_k is free and every score order
            # along the (acyclic) condensation of G^(k) is reachable: the Graph-SVM is feasible
            s = np.linalg.svd(E, compute_uv=False)
            return SolverError(
                f"{result.solver} reports the Graph-SVM infeasible ({result.status}), but the "
                f"embeddings are linearly independent, which makes it feasible: they are too "
                f"ill-conditioned for the solver (condition number {s[0] / s[-1]:.3g})"
            )
        return InfeasibleGraphSVMError(
            f"(Graph-SVM) is infeasible ({result.solver}: {result.status}): no W satisfies the "
            f"{A.shape[0]} strict and {B.shape[0]} equality constraints of these embeddings"
        )

    fast = solve_least_distance(cons)
    solution = fast if fast is not None else solve_reference(cons, infeasible)
    return scaled_solution(solution, c, 2, "|E|")
