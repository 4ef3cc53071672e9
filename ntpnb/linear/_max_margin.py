"""The NTP-SVM of Paper A (Eq. (NTP-SVM)): ``W^mm = argmin ||W||`` subject to (6a) and (6b).

A strongly convex QP, the minimum-norm problem of :mod:`ntpnb._qp` with the constraints
:class:`~ntpnb.linear._constraints.NTPRows`. :func:`solve_ntp_svm` solves it by the exact
active-set method of :mod:`ntpnb.linear._active_set` or by the cvxpy reference, each answer verified
by the one certificate of :func:`ntpnb._qp.certify`; :func:`ntp_svm` returns ``W^mm`` alone.
:func:`zero_margin_direction` solves the NTP-SVM with one inequality made an equality.
"""

from __future__ import annotations

import numpy as np
import scipy

from .. import settings
from .._linalg import least_squares
from .._qp import SVMSolution, min_norm_qp, scaled_back, scaled_solution, solve_reference
from ..errors import InvalidDataError, NotSeparableError, SolverError
from ._active_set import SOLVER_NAME as ACTIVE_SET_SOLVER
from ._active_set import full_row_rank, reference_infeasible, solve_verified
from ._constraints import NTPRows, ntp_constraints
from ._ntp_data import NTPData, cached_per_data, normalized
from ._separability import proves_separable, require_separable

#: How a page names each method that answers an NTP-SVM (:attr:`SVMSolution.solver`): a reader's
#: words, not the method's name in the code.
SOLVER_WORDS = {ACTIVE_SET_SOLVER: "the active-set method", "CLARABEL": "Clarabel"}


def solver_words(solver: str) -> str:
    """The method ``solver`` (an :attr:`SVMSolution.solver`) as a page names it (:data:`SOLVER_WORDS`).

    A method it does not name is given as the code names it.
    """
    return SOLVER_WORDS.get(solver, solver)


@cached_per_data
def _reference(data: NTPData) -> SVMSolution:
    """The cvxpy method on normalized data (``max|H| ~ 1``), after the separability decision."""
    require_separable(data)
    return solve_reference(NTPRows(data), reference_infeasible)


@cached_per_data
def _active_set(data: NTPData) -> SVMSolution:
    """The active-set method on normalized data (``max|H| ~ 1``), else the cvxpy reference.

    Without full row rank of ``H`` (Lemma 1 of Paper A) separability is decided first: the
    proximal method would run to its iteration caps on non-separable data. When the active-set
    method fails, the cvxpy reference answers (:func:`~._active_set.solve_verified`; the
    solution's ``solver`` and ``fallback_from`` say so). An answer that
    :func:`~ntpnb.linear._separability.proves_separable` is its own witness; otherwise (e.g. a
    broken (6a) on a tiny row), or when both methods fail, the decision is asked: not separable
    raises :class:`NotSeparableError`, separable keeps the answer or the methods'
    :class:`~ntpnb.errors.SolverError`.
    """
    if not full_row_rank(data):
        require_separable(data)
    try:
        sol = solve_verified(data)
    except SolverError:
        require_separable(data)
        raise
    if not proves_separable(data, sol.W):
        require_separable(data)
    return sol


_SOLVERS = {"active-set": _active_set, "cvxpy": _reference}


def solve_ntp_svm(data: NTPData, method: str = "active-set") -> SVMSolution:
    """Solve the NTP-SVM of ``data`` and return the verified solution with its certificate.

    Parameters
    ----------
    data
        The data set (each method solves its QP once per data set).
    method
        ``"active-set"`` (the default): :mod:`ntpnb.linear._active_set` (a few seconds at
        ``m = 500, V = 100, d = 600, S = 10``), the cvxpy reference when it fails (then
        ``SVMSolution.fallback_from`` gives its failure). ``"cvxpy"``: the reference alone
        (CLARABEL, polished on its active set; slower). ``SVMSolution.solver`` names the
        method that answered.

    Notes
    -----
    Solved for ``H / c`` (:func:`ntpnb.linear._ntp_data.normalized`), then scaled back
    (:func:`ntpnb._qp.scaled_solution`): ``W^mm(H) = W^mm(H / c) / c``, ``lambda(H) = lambda(H / c)
    / c^2``; the tolerances are relative, so the accuracy is the same at any scale.

    Raises
    ------
    InvalidDataError
        If ``method`` is neither ``"active-set"`` nor ``"cvxpy"``.
    NotSeparableError
        If the data are not NTP-separable (decided by the LP of :func:`ntpnb.is_separable`).
    SolverError
        If the method (with ``"active-set"``: both methods) fails or its answer does not pass
        verification.
    ScaleError
        If ``W^mm`` or the multipliers exceed the float64 range (``H`` near underflow or overflow).
    """
    if method not in _SOLVERS:
        raise InvalidDataError(f"method must be one of {tuple(_SOLVERS)}, got {method!r}")
    norm, c = normalized(data)
    return scaled_solution(_SOLVERS[method](norm), c, 1, "max|H|")


def ntp_svm(data: NTPData) -> np.ndarray:
    """``W^mm``: the minimum-norm ``W`` satisfying (6a) and (6b), shape ``(V, d)`` (a writable copy).

    :func:`solve_ntp_svm` gives the certificate too; here only ``W^mm`` must fit in float64.

    Raises
    ------
    NotSeparableError
        If the data are not NTP-separable.
    SolverError
        If the solver fails or its answer does not pass verification.
    ScaleError
        If ``W^mm`` exceeds the float64 range.
    """
    norm, c = normalized(data)
    return np.array(scaled_back(_active_set(norm).W, c, 1, "W^mm (it scales like 1 / max|H|)"))


def zero_margin_direction(data: NTPData, context: int, token: int) -> np.ndarray:
    """The minimum-norm ``W`` meeting (6a), with margin 0 on one pair and at least 1 on the others.

    The NTP-SVM with the (6b) row of ``(j, v) = (context, token)`` (0-based, ``v`` not in
    ``S_j``) made an equality. Such a ``W`` lies in F-perp and ranks every in-support token at or
    above every out-of-support one, but along ``W^p + gamma W`` token ``v`` keeps a fixed share of
    context ``j``'s probability. Solved by :func:`ntpnb._qp.min_norm_qp` on the normalized data
    (scaled back), projected onto the equalities (so (6a) and the zero margin hold to rounding),
    and verified: every other margin is at least ``1 - SVM_FEAS_TOL``. Shape ``(V, d)``.

    Raises
    ------
    NotSeparableError
        If no ``W`` meets these constraints (the solver certifies them infeasible; the data may
        still be separable, e.g. when a zero margin on this pair forces zero margins elsewhere).
    SolverError
        If the solver fails or its answer does not pass verification.
    """
    norm, c = normalized(data)
    cons = ntp_constraints(norm)
    (row,) = np.flatnonzero((cons.ineq_context == context) & (cons.ineq_token == token))
    others = np.arange(cons.ineq.shape[0]) != row
    B = scipy.sparse.vstack([cons.eq, cons.ineq[row]]).toarray()
    what = f"the NTP-SVM with a zero margin on (context {context}, token {token})"
    result = min_norm_qp(cons.ineq[others], B, what)
    if result.infeasible:
        raise NotSeparableError(
            f"no W meets (6a), margin 0 on (context {context}, token {token}) and margins >= 1 on "
            f"every other pair ({result.solver}: {result.status})"
        )
    w = result.w - least_squares(B, B @ result.w, what=f"the equalities of {what}")
    smallest = float((cons.ineq[others] @ w).min(initial=np.inf))
    if smallest < 1 - settings.SVM_FEAS_TOL:
        raise SolverError(f"{result.solver} on {what}: smallest other margin {smallest:.3g} < 1")
    return (w / c).reshape(data.V, data.d)
