"""The verified minimum-norm QP that both papers solve, and the convex solves through cvxpy.

The NTP-SVM of Paper A (rows of ``A`` from (6b), of ``B`` from (6a)) and the Graph-SVM of
Paper B (rows from the strict and the equality relations of the token-priority graphs) are one
problem, ``min ||w||^2 / 2  s.t.  A w >= 1, B w = 0``. Each paper only builds its constraints
(the maps of :class:`QPConstraints`); here are :class:`SVMSolution` and its certificate
(:func:`certify`, through the maps alone: no dense matrix of a large problem's rows is formed),
:func:`polish`, the cvxpy reference :func:`solve_reference`, least-distance programming
(:func:`solve_least_distance`) for small dense problems, and :func:`scaled_solution` for answers
on normalized data. Every solve names its solver, checks its status, and raises
:class:`ntpnb.errors.SolverError` on failure.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import scipy

from . import settings
from ._linalg import column_basis, least_squares, numerical_rank, thin_svd
from ._validation import frozen
from .errors import RankAmbiguousError, ScaleError, SolverError

if TYPE_CHECKING:
    import cvxpy as cp

#: cvxpy's statuses of primal infeasibility (cvxpy, a second of import, is imported by the solves).
INFEASIBLE: tuple[str, ...] = ("infeasible", "infeasible_inaccurate")


# ---------------------------------------------------------------------------- the constraints
class QPConstraints(Protocol):
    """The constraints ``A w >= 1`` and ``B w = 0`` of one problem, as the maps its solvers need.

    The multipliers ``mu`` of the equalities are coefficients on the rows of ``S``, independent
    rows spanning those of ``B``. Only :func:`solve_reference` and :func:`polish` ask for the matrices.
    """

    what: str  # the problem, for messages (e.g. "the NTP-SVM")
    shape: tuple[int, int]  # the shape of the matrix W whose entries w lists
    n_ineq: int  # rows of A
    n_eq: int  # rows of S

    def margins(self, w: np.ndarray) -> np.ndarray:
        """``A w``."""
        ...

    def equality_residuals(self, w: np.ndarray) -> np.ndarray:
        """``B w``, in units of the unit margin."""
        ...

    def combine(self, lam: np.ndarray, mu: np.ndarray) -> np.ndarray:
        """``A^T lambda + S^T mu``."""
        ...

    def matrices(self) -> tuple[Any, Any, np.ndarray]:
        """``A`` and ``B`` (dense or sparse) and ``S`` (dense)."""
        ...


@dataclass(frozen=True, eq=False)
class MatrixConstraints:
    """:class:`QPConstraints` of explicit matrices ``A``, ``B`` (dense or sparse) and ``S`` (dense)."""

    A: Any
    B: Any
    S: np.ndarray
    what: str
    shape: tuple[int, int]

    @property
    def n_ineq(self) -> int:
        """Rows of ``A``."""
        return int(self.A.shape[0])

    @property
    def n_eq(self) -> int:
        """Rows of ``S``."""
        return int(self.S.shape[0])

    def margins(self, w: np.ndarray) -> np.ndarray:
        """``A w``."""
        return np.asarray(self.A @ w)

    def equality_residuals(self, w: np.ndarray) -> np.ndarray:
        """``B w``."""
        return np.asarray(self.B @ w)

    def combine(self, lam: np.ndarray, mu: np.ndarray) -> np.ndarray:
        """``A^T lambda + S^T mu``."""
        return np.asarray(self.A.T @ lam) + self.S.T @ mu

    def matrices(self) -> tuple[Any, Any, np.ndarray]:
        """``A``, ``B`` and ``S``."""
        return self.A, self.B, self.S


# ---------------------------------------------------------------------------- the solution
@dataclass(frozen=True)
class SVMSolution:
    """A verified minimum-norm solution ``W`` with its certificate.

    Every quantity of the certificate is scale-free (measured on the normalized problem).
    """

    #: The solution, shape ``shape`` of the constraints (read-only).
    W: np.ndarray
    #: Multipliers ``lambda`` of the inequalities ``A w >= 1``, in their row order (read-only).
    duals: np.ndarray
    #: Multipliers ``mu`` of the equalities, coefficients on the rows of ``S`` of the constraints (read-only).
    eq_duals: np.ndarray
    #: ``max(0, 1 - min(A w))``.
    margin_violation: float
    #: ``max |B w|`` (in units of the unit margin).
    equality_violation: float
    #: ``||w - A^T lambda - S^T mu|| / ||w||``: the gradient of the Lagrangian.
    stationarity: float
    #: ``max_i |lambda_i (a_i^T w - 1)| / max_i |lambda_i|``.
    complementarity: float
    #: ``max(0, -min lambda) / max_i |lambda_i|``.
    dual_sign: float
    #: ``(primal - dual) / primal``, primal ``||w||^2 / 2``, dual ``sum(lambda) - ||A^T lambda +
    #: S^T mu||^2 / 2`` (a lower bound when ``lambda >= 0``): bounds the relative suboptimality.
    duality_gap: float
    #: Which method answered (e.g. ``"ntpnb-active-set"`` or the QP solver of cvxpy).
    solver: str
    #: Whether the answer was refined by an exact solve on its active set (:func:`polish`).
    polished: bool
    #: The problem (e.g. ``"the NTP-SVM"``), for messages.
    problem: str
    #: Why the first method failed when a fallback answered (``""`` when the first method did).
    fallback_from: str = ""

    @property
    def n_active(self) -> int:
        """Number of support vectors: positive multipliers by :func:`active_mask` (which may raise)."""
        return int(np.count_nonzero(active_mask(self.duals, what=self.problem)))

    def passes(self) -> bool:
        """Whether every quantity of the certificate is within its tolerance.

        The tolerances (read at the call): :data:`~ntpnb.settings.SVM_FEAS_TOL`,
        :data:`~ntpnb.settings.SVM_KKT_TOL`, :data:`~ntpnb.settings.SVM_GAP_TOL`.
        """
        feas, kkt = settings.SVM_FEAS_TOL, settings.SVM_KKT_TOL
        return (
            self.margin_violation <= feas
            and self.equality_violation <= feas
            and self.stationarity <= kkt
            and self.complementarity <= kkt
            and self.dual_sign <= kkt
            and abs(self.duality_gap) <= settings.SVM_GAP_TOL
        )

    def summary(self) -> str:
        """The certificate in one line, for error messages."""
        return (
            f"margin violation {self.margin_violation:.2e}, equality violation "
            f"{self.equality_violation:.2e}, stationarity {self.stationarity:.2e}, complementarity "
            f"{self.complementarity:.2e}, dual sign {self.dual_sign:.2e}, duality gap {self.duality_gap:.2e}"
        )


def certify(
    cons: QPConstraints, w: np.ndarray, lam: np.ndarray, mu: np.ndarray, solver: str, polished: bool
) -> SVMSolution:
    """``w`` with the multipliers ``lam`` (of ``A``) and ``mu`` (of the equalities), certified."""
    tiny = np.finfo(float).tiny
    margins = cons.margins(w)
    combo = cons.combine(lam, mu)
    norm_w = float(np.linalg.norm(w))
    primal = 0.5 * norm_w**2
    dual = float(lam.sum()) - 0.5 * float(combo @ combo)
    top = float(np.abs(lam).max(initial=0.0))
    return SVMSolution(
        W=frozen(np.reshape(w, cons.shape)),
        duals=frozen(lam),
        eq_duals=frozen(mu),
        margin_violation=float(max(0.0, 1.0 - margins.min(initial=np.inf))),
        equality_violation=float(np.abs(cons.equality_residuals(w)).max(initial=0.0)),
        stationarity=float(np.linalg.norm(w - combo)) / max(norm_w, tiny),
        complementarity=float(np.abs(lam * (margins - 1.0)).max(initial=0.0)) / top if top > 0 else 0.0,
        dual_sign=max(0.0, -float(lam.min(initial=0.0))) / top if top > 0 else 0.0,
        duality_gap=(primal - dual) / (primal if primal > 0 else 1.0),
        solver=solver,
        polished=polished,
        problem=cons.what,
    )


def trivial_solution(cons: QPConstraints) -> SVMSolution:
    """``W = 0``, the solution when there is no inequality, certified."""
    n = cons.shape[0] * cons.shape[1]
    return certify(
        cons, np.zeros(n), np.zeros(cons.n_ineq), np.zeros(cons.n_eq), "none (no inequality)", False
    )


def active_mask(lam: np.ndarray, *, what: str | None = None) -> np.ndarray:
    """Multipliers above :data:`~ntpnb.settings.ACTIVE_DUAL_TOL` times the largest one (support vectors).

    Polished or active-set multipliers are exact (zero off the active set), far from the
    threshold. When ``what`` is given (a reported decision, e.g. a printed count), a multiplier
    within a factor :data:`~ntpnb.settings.RANK_BAND` of the threshold raises
    :class:`~ntpnb.errors.RankAmbiguousError` listing them; without it (a starting guess for
    :func:`polish`) nothing is raised.
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


# ---------------------------------------------------------------------------- polishing
def polish(cons: QPConstraints, lam: np.ndarray, solver: str) -> SVMSolution | None:
    """The exact minimizer from approximate multipliers ``lam`` of ``A w >= 1`` (of ``solver``), certified.

    Starting from the rows of :func:`active_mask`, each round solves ``M w = 1`` at minimum norm
    (``M``: the active rows projected off the equalities' span; multipliers ``(M^T)^+ w``), drops
    rows with a negative multiplier (beyond :data:`~ntpnb.settings.SVM_KKT_TOL` relative) and
    adds rows ``w`` violates (beyond :data:`~ntpnb.settings.SVM_FEAS_TOL`). A round that changes
    nothing leaves ``w`` satisfying the KKT conditions up to one linear solve's rounding.

    Returns
    -------
    SVMSolution or None
        ``w`` with the multipliers of all rows of ``A`` (zero off the active set) and those of the
        equalities (the ``mu`` that minimizes ``||w - A^T lambda - S^T mu||``); None when there is
        no active row, the rounds (:data:`~ntpnb.settings.POLISH_MAX_ROUNDS`) do not settle, or the
        rank of some active set is not determined in float64.
    """
    A, _, S = cons.matrices()
    what = f"the active rows of {cons.what} (off its equalities)"
    active = np.flatnonzero(active_mask(lam))
    try:
        Q = column_basis(S.T, what=f"the equalities of {cons.what}").T if S.shape[0] else S
        for _ in range(settings.POLISH_MAX_ROUNDS):
            if active.size == 0:
                return None
            M = _dense(A[active])
            M = M - (M @ Q.T) @ Q
            # w = M^+ 1 and nu = (M^T)^+ w (so w = M^T nu), from one SVD of M (never M M^T)
            U, s, Vt = thin_svd(M, what)
            r = numerical_rank(s, M.shape, what=what)
            coef = (U[:, :r].T @ np.ones(active.size)) / s[:r]
            w, nu = Vt[:r].T @ coef, U[:, :r] @ (coef / s[:r])
            negative = nu < -settings.SVM_KKT_TOL * max(float(nu.max(initial=0.0)), 1e-300)
            violated = np.flatnonzero(cons.margins(w) < 1 - settings.SVM_FEAS_TOL)
            added = np.setdiff1d(violated, active)
            if not negative.any() and added.size == 0:
                full = np.zeros(cons.n_ineq)
                full[active] = nu
                mu = np.zeros(0)
                if S.shape[0]:
                    residual = w - cons.combine(full, np.zeros(cons.n_eq))
                    mu = least_squares(S.T, residual, what=f"the equalities of {cons.what}")
                return certify(cons, w, full, mu, solver, True)
            active = np.union1d(active[~negative], added)
    except RankAmbiguousError:
        return None
    return None


# ---------------------------------------------------------------------------- cvxpy
def solve_named(
    problem: cp.Problem, solver: str, options: Mapping[str, Any], what: str, allowed: tuple[str, ...] = ()
) -> str:
    """Solve ``problem`` with the named ``solver`` and return its status.

    Parameters
    ----------
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
    cvxpy's warning "Solution may be inaccurate" is silenced: such a status is an error here
    or one of ``allowed``, which the caller verifies.
    """
    import cvxpy as cp

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

    ``w`` and the multipliers ``lam >= 0`` of ``A w >= 1`` (None when infeasible), status, solver.
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

    ``A`` and ``B`` are dense or sparse; ``B`` may have no rows. An infeasible problem is
    returned (``infeasible`` True), not raised.

    Raises
    ------
    SolverError
        If the solver fails or ends neither optimal nor infeasible.
    """
    import cvxpy as cp

    w = cp.Variable(A.shape[1])
    constraints = [A @ w >= 1]
    if B.shape[0]:
        constraints.append(B @ w == 0)
    problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w)), constraints)
    status = solve_named(problem, settings.QP_SOLVER, settings.QP_OPTIONS, what, allowed=INFEASIBLE)
    if status in INFEASIBLE:
        return MinNormQP(None, None, status, settings.QP_SOLVER)
    if w.value is None:
        raise SolverError(f"{settings.QP_SOLVER} returned no point on {what} (status {status!r})")
    lam = np.maximum(np.asarray(constraints[0].dual_value, dtype=float), 0.0)
    return MinNormQP(np.asarray(w.value, dtype=float), lam, status, settings.QP_SOLVER)


def solve_reference(cons: QPConstraints, infeasible: Callable[[MinNormQP], Exception]) -> SVMSolution:
    """The cvxpy method: :func:`min_norm_qp`, polished on its active set (:func:`polish`) and verified.

    Parameters
    ----------
    infeasible
        The error to raise when the solver reports the constraints infeasible.

    Raises
    ------
    SolverError
        If the solver fails, polishing finds no exact minimizer, or the answer fails verification.
    """
    if cons.n_ineq == 0:
        return trivial_solution(cons)
    result = min_norm_qp(*cons.matrices()[:2], cons.what)
    if result.infeasible:
        raise infeasible(result)
    sol = polish(cons, result.lam, result.solver)
    if sol is not None and sol.passes():
        return sol
    why = (
        "found no exact minimizer on its active set (no active row, rounds unsettled, or rank not "
        "determined in float64)"
        if sol is None
        else sol.summary()
    )
    raise SolverError(f"{cons.what} answer of {result.solver} failed verification: {why}")


# ---------------------------------------------------------------------------- least distance
#: The solver named by :func:`solve_least_distance`'s answers.
LEAST_DISTANCE_SOLVER = "least-distance NNLS (Lawson-Hanson)"


def _dense(M: Any) -> np.ndarray:
    return np.asarray(M.toarray() if hasattr(M, "toarray") else M, dtype=float)


def least_distance_nnls(G: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, float] | None:
    """Lawson and Hanson's non-negative least squares for ``min ||x||^2 / 2`` s.t. ``G x >= h``.

    Lawson and Hanson (*Solving Least Squares Problems*, 1974, ch. 23): ``u >= 0`` minimizes
    ``||E u - f||`` with ``E = [G^T; h^T]``, ``f = (0, ..., 0, 1)``; ``||E u - f||^2 = 1 - h^T u``
    is positive exactly when the problem is feasible, else ``u`` is a Farkas certificate
    (``G^T u = 0``, ``h^T u = 1``).

    Returns
    -------
    (numpy.ndarray, float) or None
        ``u`` and ``1 - h^T u``; None when NNLS does not converge.
    """
    E = np.vstack([G.T, h[None, :]])
    f = np.zeros(E.shape[0])
    f[-1] = 1.0
    try:
        u, _ = scipy.optimize.nnls(E, f, maxiter=50 * max(E.shape))
    except RuntimeError:  # scipy's "too many iterations"
        return None
    return u, 1.0 - float(h @ u)


def solve_least_distance(cons: QPConstraints) -> SVMSolution | None:
    """The minimum-norm QP by least-distance programming, polished and certified; None if unsure.

    Each equality ``b w = 0`` becomes rows ``b w >= 0`` and ``-b w >= 0``, and the multipliers
    are ``lambda = u / (1 - h^T u)`` with ``u`` of :func:`least_distance_nnls` (``w = G^T lambda``,
    ``1 - h^T u = 1 / (1 + ||w||^2)``, near rounding for infeasible constraints: decided with a
    margin). :func:`polish` starts from every row whose margin is 1 (within
    :data:`~ntpnb.settings.ACTIVE_MARGIN_TOL`; NNLS returns one vertex of a degenerate problem's
    multipliers), so both methods name the same support vectors. Well under a millisecond for a
    few hundred rows.

    Returns None (the caller then uses :func:`solve_reference`) rather than decide at the rounding
    level: NNLS not converging, an infeasible problem or a minimum norm above
    :data:`~ntpnb.settings.LEAST_DISTANCE_MAX_NORM` (nearly infeasible; multipliers lose accuracy
    like ``eps * ||w||^2``), a margin within a factor :data:`~ntpnb.settings.RANK_BAND` of that
    tolerance, or no answer passing verification.
    """
    if cons.n_ineq == 0:
        return trivial_solution(cons)
    A, B, _ = cons.matrices()
    A, B = _dense(A), _dense(B)
    G = np.vstack([A, B, -B])
    h = np.concatenate([np.ones(A.shape[0]), np.zeros(2 * B.shape[0])])
    found = least_distance_nnls(G, h)
    if found is None or found[1] <= 1.0 / (1.0 + settings.LEAST_DISTANCE_MAX_NORM**2):  # (nearly) infeasible
        return None
    lam_all = found[0] / found[1]
    w = G.T @ lam_all
    # polish starts from the rows whose margin is 1, unless one lies too close to the threshold to say
    excess, tol = cons.margins(w) - 1.0, settings.ACTIVE_MARGIN_TOL
    if np.any((excess > tol / settings.RANK_BAND) & (excess <= tol * settings.RANK_BAND)):
        return None
    sol = polish(cons, (excess <= tol).astype(float), LEAST_DISTANCE_SOLVER)
    return sol if sol is not None and sol.passes() else None


# ---------------------------------------------------------------------------- scaling back
def scaled_back(values: np.ndarray, c: float, power: int, what: str) -> np.ndarray:
    """``values / c**power`` (read-only; exact for a power of two ``c``), or a ScaleError.

    Maps back an answer for data divided by ``c``. The largest entry must stay finite and keep
    at least half of its digits (not deep in the subnormal range). ``what`` names the answer and
    how it scales, for the message.

    Raises
    ------
    ScaleError
        If ``values`` does not fit in float64 at this scale.
    """
    out = np.array(values, dtype=float)
    with np.errstate(over="ignore", under="ignore"):
        for _ in range(power):
            out = out / c
    top = float(np.abs(values).max(initial=0.0))
    if top > 0:
        largest = float(np.abs(out).max())
        if not (np.isfinite(largest) and np.spacing(largest) <= np.sqrt(settings.FLOAT64_EPS) * largest):
            raise ScaleError(
                f"{what} lies outside the float64 range at this scale of the embeddings (it is "
                f"{top:.3g} divided by {c:.3g}^{power}); rescale the embeddings"
            )
    return frozen(out, order="K")


def scaled_solution(sol: SVMSolution, c: float, power: int, size: str) -> SVMSolution:
    """The solution for data ``c`` times the normalized data whose solution is ``sol``.

    ``W`` scales like ``1 / c**power`` (``power``: degree of the constraint rows in the data, 1 for
    Paper A's ``H``, 2 for Paper B's ``E``), the multipliers like ``1 / c**(2 power)``. ``size``
    names the data's size in messages (e.g. ``"max|H|"``).

    Raises
    ------
    ScaleError
        If ``W`` or a multiplier does not fit in float64 (:func:`scaled_back`).
    """
    if c == 1.0:
        return sol
    like = f"1 / {size}" + (f"^{power}" if power != 1 else "")
    dual = f"a multiplier of W^mm (it scales like 1 / {size}^{2 * power})"
    return replace(
        sol,
        W=scaled_back(sol.W, c, power, f"W^mm (it scales like {like})"),
        duals=scaled_back(sol.duals, c, 2 * power, dual),
        eq_duals=scaled_back(sol.eq_duals, c, 2 * power, dual),
    )
