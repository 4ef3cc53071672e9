"""Convex solves through cvxpy shared by both papers' models.

Every solve names its solver, checks its status, and turns its failures into
:class:`ntpnb.errors.SolverError`.

The minimum-norm problem ``min ||w||^2 / 2  s.t.  A w >= 1, B w = 0`` is the NTP-SVM of
Paper A (rows of ``A`` from (6b), of ``B`` from (6a)) and the Graph-SVM of Paper B (rows from the
strict and the equality relations of the token-priority graphs): :func:`min_norm_qp` solves it
for both. Verification (constraints, KKT, duality gap) is the caller's, since the certificates
differ between the models.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import cvxpy as cp
import numpy as np

from . import settings
from .errors import SolverError

__all__ = ["INFEASIBLE", "MinNormQP", "min_norm_qp", "solve_named"]

#: The cvxpy statuses that report primal infeasibility.
INFEASIBLE: tuple[str, ...] = (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE)


def solve_named(
    problem: cp.Problem, solver: str, options: Mapping[str, Any], what: str, allowed: tuple[str, ...] = ()
) -> str:
    """Solve ``problem`` with the named ``solver`` and return its status.

    Parameters
    ----------
    problem
        The cvxpy problem.
    solver, options
        The solver's name and settings (from :mod:`ntpnb.settings`; never cvxpy's default).
    what
        What the problem is, for error messages (e.g. ``"the NTP-SVM"``).
    allowed
        Statuses other than ``optimal`` that the caller handles itself (e.g. :data:`INFEASIBLE`).

    Raises
    ------
    SolverError
        If the solver raises, or ends with a status that is neither optimal nor allowed.
    """
    try:
        problem.solve(solver=solver, **options)
    except cp.SolverError as exc:
        raise SolverError(f"{solver} failed on {what}: {exc}") from None
    if problem.status != cp.OPTIMAL and problem.status not in allowed:
        raise SolverError(f"{solver} returned status {problem.status!r} on {what}")
    return str(problem.status)


@dataclass(frozen=True)
class MinNormQP:
    """The answer of :func:`min_norm_qp`.

    ``w`` and the multipliers ``lam >= 0`` of ``A w >= 1`` (both None when the solver certified
    infeasibility), the solver's status and its name.
    """

    w: np.ndarray | None
    lam: np.ndarray | None
    status: str
    solver: str

    @property
    def infeasible(self) -> bool:
        """Whether the solver reported the constraints infeasible."""
        return self.status in INFEASIBLE


def min_norm_qp(A: Any, B: Any, what: str) -> MinNormQP:
    """``min ||w||^2 / 2`` s.t. ``A w >= 1`` and ``B w = 0``, with :data:`ntpnb.settings.QP_SOLVER`.

    ``A`` and ``B`` are dense or sparse matrices with the same number of columns; ``B`` may have
    no rows. An infeasible problem is returned (``infeasible`` is True), not raised: what it
    means differs between the callers.

    Raises
    ------
    SolverError
        If the solver fails or ends neither optimal nor infeasible.
    """
    w = cp.Variable(A.shape[1])
    constraints = [A @ w >= 1]
    if B.shape[0]:
        constraints.append(B @ w == 0)
    problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w)), constraints)
    status = solve_named(problem, settings.QP_SOLVER, settings.QP_OPTIONS, what, allowed=INFEASIBLE)
    if status in INFEASIBLE or w.value is None:
        if status not in INFEASIBLE:
            raise SolverError(f"{settings.QP_SOLVER} returned no point on {what} (status {status!r})")
        return MinNormQP(None, None, status, settings.QP_SOLVER)
    lam = np.maximum(np.asarray(constraints[0].dual_value, dtype=float), 0.0)
    return MinNormQP(np.asarray(w.value, dtype=float), lam, status, settings.QP_SOLVER)
