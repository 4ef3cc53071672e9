"""Convex solves through cvxpy shared by both papers' models.

Every solve names its solver, checks its status, and turns its failures into
:class:`ntpnb.errors.SolverError`.

The minimum-norm problem ``min ||w||^2 / 2  s.t.  A w >= 1, B w = 0`` is the NTP-SVM of
Paper A (rows of ``A`` from (6b), of ``B`` from (6a)) and the Graph-SVM of Paper B (rows from the
strict and the equality relations of the token-priority graphs): :func:`min_norm_qp` solves it
for both, and :func:`polish_active_set` turns its approximate answer into the exact minimizer
when the active set can be read off the multipliers. Verification (constraints, KKT, duality
gap) is the caller's, since the certificates differ between the models.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import cvxpy as cp
import numpy as np

from . import settings
from .errors import RankAmbiguousError, SolverError

__all__ = ["INFEASIBLE", "MinNormQP", "min_norm_qp", "solve_named", "active_mask", "polish_active_set"]

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

    Notes
    -----
    cvxpy's own warning for an inaccurate status ("Solution may be inaccurate") is silenced:
    such a status is either an error here that names it, or one of ``allowed``, which the
    caller verifies.
    """
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Solution may be inaccurate", category=UserWarning)
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


def active_mask(lam: np.ndarray, *, what: str | None = None) -> np.ndarray:
    """Multipliers above :data:`~ntpnb.settings.ACTIVE_DUAL_TOL` times the largest one (support vectors).

    The threshold (1e-7) is relative and far from the rounding level. Polished or active-set
    multipliers are exact (zero off the active set), so they sit far from it. When the active set
    is a *reported decision* (``what`` given, e.g. a count that a notebook prints) it must also
    hold on another machine: a multiplier within a factor
    :data:`~ntpnb.settings.RANK_BAND` of the threshold makes it ambiguous, and
    :class:`~ntpnb.errors.RankAmbiguousError` lists those multipliers instead of a guess.
    Without ``what`` (a starting guess that :func:`polish_active_set` corrects) no error is raised.
    """
    top = float(lam.max(initial=0.0))
    tol = settings.ACTIVE_DUAL_TOL * top
    mask = lam > tol
    if what is not None and top > 0:
        band = (lam > tol / settings.RANK_BAND) & (lam <= tol * settings.RANK_BAND)
        if band.any():
            shown = ", ".join(f"{v:.3g}" for v in np.sort(lam[band] / top)[::-1][:8])
            raise RankAmbiguousError(
                f"the active set of {what} is not determined: multipliers relative to the largest "
                f"[{shown}] lie within a factor {settings.RANK_BAND:g} of the threshold "
                f"{settings.ACTIVE_DUAL_TOL:g}"
            )
    return mask


def polish_active_set(
    solve_on: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    margins: Callable[[np.ndarray], np.ndarray],
    lam: np.ndarray,
) -> tuple[np.ndarray, np.ndarray] | None:
    """The exact minimizer of ``min ||w||^2 / 2`` s.t. ``A w >= 1``, ``B w = 0`` from approximate multipliers.

    An interior-point answer has every multiplier positive, the inactive ones tiny. Starting
    from the rows whose multiplier exceeds :data:`~ntpnb.settings.ACTIVE_DUAL_TOL` times the
    largest, each round solves the problem with the current rows as equalities
    (``solve_on(active) -> (w, nu)``, ``nu`` the multipliers of those rows), then drops the rows
    whose multiplier is negative and adds the rows ``margins(w) = A w`` violates (both beyond
    :data:`~ntpnb.settings.SVM_KKT_TOL` and :data:`~ntpnb.settings.SVM_FEAS_TOL`). When a round
    changes nothing, ``w`` satisfies the KKT conditions exactly, up to the rounding of one
    linear solve: that is the minimizer. A solver's multipliers usually name the active set
    exactly, or up to a few rows of degenerate or nearly active constraints, which the rounds
    correct.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray) or None
        ``w`` and the multipliers of all rows (zero off the active set), or None when there is
        no active row or the rounds (:data:`~ntpnb.settings.POLISH_MAX_ROUNDS`) do not settle
        (then the caller keeps the solver's answer).
    """
    active = np.flatnonzero(active_mask(lam))
    for _ in range(settings.POLISH_MAX_ROUNDS):
        if active.size == 0:
            return None
        w, nu = solve_on(active)
        negative = nu < -settings.SVM_KKT_TOL * max(float(nu.max(initial=0.0)), 1e-300)
        violated = np.flatnonzero(margins(w) < 1 - settings.SVM_FEAS_TOL)
        added = np.setdiff1d(violated, active)
        if not negative.any() and added.size == 0:
            full = np.zeros_like(lam)
            full[active] = nu
            return w, full
        active = np.union1d(active[~negative], added)
    return None
