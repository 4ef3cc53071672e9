"""NTP-separability and the NTP-SVM (Paper A, Definition 2 and Eq. (NTP-SVM)).

* :func:`is_separable` decides Definition 2 exactly, as the feasibility of a linear program.
* :func:`ntp_svm` solves ``W^mm = argmin ||W||`` subject to (6a) and (6b), a strongly convex QP,
  with a named solver; the answer is polished on its active set and verified (feasibility,
  orthogonality to F, KKT conditions, duality gap) before it is returned.
"""

from __future__ import annotations

from dataclasses import dataclass

import cvxpy as cp
import numpy as np
from scipy.optimize import linprog

from .. import settings
from ..errors import NotSeparableError, SolverError
from .constraints import ntp_constraints
from .data import NTPData, cached_per_data
from .subspace import f_decomposition

__all__ = ["SVMSolution", "is_separable", "separating_direction", "solve_ntp_svm", "ntp_svm"]


@cached_per_data
def _separability_lp(data: NTPData) -> np.ndarray | None:
    """Solve the feasibility LP of Definition 2; return a feasible ``vec(W)`` or None."""
    cons = ntp_constraints(data)
    n = data.V * data.d
    if cons.ineq.shape[0] == 0:  # no out-of-support token anywhere: W = 0 satisfies (6)
        return np.zeros(n)
    res = linprog(
        c=np.zeros(n),
        A_ub=-cons.ineq,
        b_ub=-np.ones(cons.ineq.shape[0]),
        A_eq=cons.eq if cons.eq.shape[0] else None,
        b_eq=np.zeros(cons.eq.shape[0]) if cons.eq.shape[0] else None,
        bounds=(None, None),
        method=settings.LP_METHOD,
    )
    if res.status == 2:
        return None
    if res.status != 0:
        raise SolverError(f"the separability LP failed (linprog status {res.status}: {res.message})")
    w = res.x
    tol = settings.LP_FEAS_TOL * (1.0 + np.abs(w).max())
    if (cons.ineq @ w).min() < 1 - tol or np.abs(cons.eq @ w).max(initial=0.0) > tol:
        raise SolverError("the separability LP returned a point that violates its constraints")
    return w


def is_separable(data: NTPData) -> bool:
    """Whether the data are NTP-separable (Definition 2 of Paper A).

    Decided by the feasibility of the linear program (6a)-(6b) (HiGHS via
    :func:`scipy.optimize.linprog`); a feasible point is checked against the constraints.
    """
    return _separability_lp(data) is not None


def separating_direction(data: NTPData) -> np.ndarray:
    """Some ``W^d`` satisfying (6a) and (6b): the basic solution HiGHS returns (not ``W^mm``).

    The feasible set has no vertex (with ``W`` every ``W + 1 u^T`` is feasible, since the
    constraints see only differences of rows of ``W``); this is one feasible point among many.

    Raises
    ------
    NotSeparableError
        If the data are not NTP-separable.
    """
    w = _separability_lp(data)
    if w is None:
        raise NotSeparableError(_not_separable_message(data))
    return w.reshape(data.V, data.d).copy()


def _not_separable_message(data: NTPData) -> str:
    return (
        "the data are not NTP-separable: no W satisfies (6a) and (6b) "
        f"(m={data.m}, d={data.d}, V={data.V}; the separability LP is infeasible)"
    )


@dataclass(frozen=True)
class SVMSolution:
    """The NTP-SVM solution with the certificate of its verification.

    Attributes
    ----------
    W
        ``W^mm``, shape ``(V, d)``.
    duals
        Multipliers ``lambda >= 0`` of the inequality constraints (6b), in the row order of
        :func:`ntpnb.linear.constraints.ntp_constraints`.
    margin_violation
        ``max(0, 1 - min margin)`` over all inequality constraints.
    f_component
        ``||P_F(W)|| / ||W||``: violation of (6a), i.e. of ``W in F-perp``.
    stationarity
        ``||W - P_perp(A^T lambda)|| / ||W||`` (KKT stationarity; ``A`` = inequality rows).
    complementarity
        ``max_i lambda_i |a_i^T vec(W) - 1|``.
    duality_gap
        ``(primal - dual) / (1 + primal)`` with primal ``||W||^2 / 2`` and dual
        ``sum(lambda) - ||P_perp(A^T lambda)||^2 / 2``.
    solver
        Name of the QP solver.
    polished
        Whether the answer was refined by an exact solve on the active set.
    """

    W: np.ndarray
    duals: np.ndarray
    margin_violation: float
    f_component: float
    stationarity: float
    complementarity: float
    duality_gap: float
    solver: str
    polished: bool

    @property
    def n_active(self) -> int:
        """Number of inequality constraints with a positive multiplier (support vectors)."""
        return int(np.sum(self.duals > settings.ACTIVE_DUAL_TOL * max(1.0, self.duals.max(initial=0))))


def _project_perp(basis: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Project the rows of ``X`` (each a ``vec(W)``) onto F-perp."""
    return X - (X @ basis.T) @ basis


def _certificate(data: NTPData, w: np.ndarray, lam: np.ndarray, solver: str, polished: bool) -> SVMSolution:
    cons = ntp_constraints(data)
    basis = f_decomposition(data).basis
    A = cons.ineq
    norm_w = float(np.linalg.norm(w))
    margins = A @ w
    Atl = _project_perp(basis, np.asarray(A.T @ lam)[None, :])[0]
    primal = 0.5 * norm_w**2
    dual = float(lam.sum()) - 0.5 * float(Atl @ Atl)
    W = w.reshape(data.V, data.d).copy()
    W.setflags(write=False)
    lam = lam.copy()
    lam.setflags(write=False)
    return SVMSolution(
        W=W,
        duals=lam,
        margin_violation=float(max(0.0, 1.0 - margins.min(initial=np.inf))),
        f_component=float(np.linalg.norm(basis @ w)) / max(norm_w, 1e-300),
        stationarity=float(np.linalg.norm(w - Atl)) / max(norm_w, 1e-300),
        complementarity=float(np.max(np.abs(lam * (margins - 1.0)), initial=0.0)),
        duality_gap=(primal - dual) / (1.0 + primal),
        solver=solver,
        polished=polished,
    )


def _passes(sol: SVMSolution) -> bool:
    return (
        sol.margin_violation <= settings.SVM_FEAS_TOL
        and sol.f_component <= settings.SVM_FEAS_TOL
        and sol.stationarity <= settings.SVM_KKT_TOL
        and sol.complementarity <= settings.SVM_KKT_TOL
        and float(sol.duals.min(initial=0.0)) >= -settings.SVM_KKT_TOL
        and abs(sol.duality_gap) <= settings.SVM_GAP_TOL
    )


def _polish(data: NTPData, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Exact min-norm solve with the active inequalities as equalities.

    With ``A_act`` the rows whose multiplier is positive and ``B`` an orthonormal basis of F,
    the minimizer of ``||w||`` over ``{w in F-perp : A_act w = 1}`` is ``w = A~^T nu`` with
    ``A~ = P_perp(A_act)`` and ``A~ A~^T nu = 1``. Returns ``(w, lambda)`` or None when the
    active set does not give a KKT point (then the solver's answer is used).
    """
    cons = ntp_constraints(data)
    active = np.flatnonzero(lam > settings.ACTIVE_DUAL_TOL * max(1.0, lam.max()))
    if active.size == 0:
        return None
    basis = f_decomposition(data).basis
    At = _project_perp(basis, cons.ineq[active].toarray())
    nu, *_ = np.linalg.lstsq(At @ At.T, np.ones(active.size), rcond=None)
    w = At.T @ nu
    full = np.zeros_like(lam)
    full[active] = nu
    if nu.min() < -settings.SVM_KKT_TOL or (cons.ineq @ w).min() < 1 - settings.SVM_FEAS_TOL:
        return None
    return w, full


@cached_per_data
def solve_ntp_svm(data: NTPData) -> SVMSolution:
    """Solve the NTP-SVM of ``data`` and return the verified solution with its certificate.

    Raises
    ------
    NotSeparableError
        If the data are not NTP-separable (decided by the LP of :func:`is_separable`).
    SolverError
        If the QP solver fails, or no answer passes verification.
    """
    if not is_separable(data):
        raise NotSeparableError(_not_separable_message(data))
    cons = ntp_constraints(data)
    n = data.V * data.d
    if cons.ineq.shape[0] == 0:  # no inequality: W^mm = 0
        return _certificate(data, np.zeros(n), np.zeros(0), "none (trivial)", False)
    w = cp.Variable(n)
    constraints = [cons.ineq @ w >= 1]
    if cons.eq.shape[0]:
        constraints.append(cons.eq @ w == 0)
    problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w)), constraints)
    try:
        problem.solve(solver=settings.QP_SOLVER, **settings.QP_OPTIONS)
    except cp.SolverError as exc:
        raise SolverError(f"{settings.QP_SOLVER} failed on the NTP-SVM: {exc}") from exc
    if problem.status != cp.OPTIMAL or w.value is None:
        raise SolverError(f"{settings.QP_SOLVER} returned status {problem.status!r} on the NTP-SVM")
    lam = np.maximum(np.asarray(constraints[0].dual_value, dtype=float), 0.0)
    raw = _certificate(data, np.asarray(w.value, dtype=float), lam, settings.QP_SOLVER, False)
    polished = _polish(data, lam)
    if polished is not None:
        sol = _certificate(data, *polished, settings.QP_SOLVER, True)
        if _passes(sol):
            return sol
    if _passes(raw):
        return raw
    raise SolverError(
        f"the NTP-SVM answer of {settings.QP_SOLVER} failed verification: "
        f"margin violation {raw.margin_violation:.2e}, F-component {raw.f_component:.2e}, "
        f"stationarity {raw.stationarity:.2e}, complementarity {raw.complementarity:.2e}, "
        f"duality gap {raw.duality_gap:.2e}"
    )


def ntp_svm(data: NTPData) -> np.ndarray:
    """``W^mm``: the minimum-norm ``W`` satisfying (6a) and (6b), shape ``(V, d)``.

    See :func:`solve_ntp_svm` for the verified solution with its certificate.

    Raises
    ------
    NotSeparableError
        If the data are not NTP-separable.
    SolverError
        If the solver fails or its answer does not pass verification.
    """
    return solve_ntp_svm(data).W.copy()
