"""NTP-separability and the NTP-SVM (Paper A, Definition 2 and Eq. (NTP-SVM)).

* :func:`is_separable` decides Definition 2 by a normalized max-margin linear program (rows of
  ``H`` scaled to unit largest entry, ``max|W_ik| <= 1``), certified either way: a verified
  separating direction, or LP multipliers proving that no direction has a positive margin
  above :data:`ntpnb.settings.SEP_MARGIN_TOL`.
* :func:`ntp_svm` solves ``W^mm = argmin ||W||`` subject to (6a) and (6b), a strongly convex QP,
  with a named solver; the answer is polished on its active set and verified (feasibility,
  orthogonality to F, KKT conditions, duality gap) before it is returned.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import cvxpy as cp
import numpy as np
from scipy import sparse
from scipy.optimize import OptimizeWarning, linprog

from .. import settings
from ..errors import NotSeparableError, ScaleError, SolverError
from .constraints import ntp_constraints, pair_rows
from .data import NTPData, cached_per_data
from .subspace import f_decomposition

__all__ = ["SVMSolution", "is_separable", "separating_direction", "solve_ntp_svm", "ntp_svm"]


@dataclass(frozen=True)
class _Separability:
    """Outcome of the max-margin LP (see :func:`_separability`).

    ``direction`` is a separating ``vec(W)`` for the row-normalized embeddings with
    ``max|W| = 1`` (None when the data are not separable), ``margin`` its verified normalized
    margin, ``dual_bound`` the certified upper bound on the best normalized margin (inf when no
    LP was needed), ``method`` what decided ("least squares" or the LP method).
    """

    separable: bool
    direction: np.ndarray | None
    margin: float
    dual_bound: float
    method: str


def _row_scales(H: np.ndarray) -> np.ndarray:
    """``max_k |H_jk|`` of each row, with 1 for a zero row (it stays zero)."""
    scales = np.abs(H).max(axis=1)
    return np.where(scales > 0, scales, 1.0)


def _normalized_constraints(data: NTPData) -> tuple[sparse.csr_matrix, sparse.csr_matrix]:
    """The (6b) and (6a) rows of :func:`ntp_constraints` with each ``h_j`` divided by its scale."""
    cons = ntp_constraints(data)
    Hn = data.H / _row_scales(data.H)[:, None]  # each row's largest entry becomes +-1
    A = pair_rows(Hn, cons.ineq_context, cons.anchors[cons.ineq_context], cons.ineq_token, data.V)
    G = pair_rows(Hn, cons.eq_context, cons.eq_token, cons.anchors[cons.eq_context], data.V)
    return A, G


def _max_margin_lp(A: sparse.csr_matrix, G: sparse.csr_matrix, method: str):
    """Solve ``max t  s.t.  A w >= t,  G w = 0,  -1 <= w <= 1`` with one linprog method."""
    n = A.shape[1]
    c = np.zeros(n + 1)
    c[-1] = -1.0
    A_ub = sparse.hstack([-A, np.ones((A.shape[0], 1))], format="csr")
    A_eq = sparse.hstack([G, sparse.csr_matrix((G.shape[0], 1))], format="csr") if G.shape[0] else None
    bounds = np.array([(-1.0, 1.0)] * n + [(-np.inf, np.inf)])
    options = {"time_limit": settings.LP_TIME_LIMIT, **settings.LP_OPTIONS.get(method, {})}
    with warnings.catch_warnings():
        # HiGHS options that scipy does not list (run_crossover) are passed on with a warning
        warnings.filterwarnings("ignore", "Unrecognized options", OptimizeWarning)
        return linprog(
            c,
            A_ub=A_ub,
            b_ub=np.zeros(A.shape[0]),
            A_eq=A_eq,
            b_eq=np.zeros(G.shape[0]) if A_eq is not None else None,
            bounds=bounds,
            method=method,
            options=options,
        )


def _product_rounding(M: sparse.csr_matrix, x: np.ndarray) -> np.ndarray:
    """A bound on the rounding error of each entry of ``M @ x`` (float64, sparse rows)."""
    per_row = max(int(np.diff(M.indptr).max(initial=0)), 1)
    return 2 * per_row * np.finfo(float).eps * (abs(M) @ np.abs(x))


def _primal_margin(
    A: sparse.csr_matrix, G: sparse.csr_matrix, w: np.ndarray | None
) -> tuple[float, np.ndarray | None]:
    """Verified normalized margin of a candidate direction, and the direction scaled to ``max|w| = 1``.

    The margin is ``min(A w)`` less its rounding error; it counts as ``-inf`` when there is no
    candidate or it breaks ``G w = 0`` by more than :data:`~ntpnb.settings.LP_FEAS_TOL` times
    its margin.
    """
    if w is None or not np.all(np.isfinite(w)) or not np.any(w):
        return -np.inf, None
    w = w / np.abs(w).max()
    margin = float((A @ w - _product_rounding(A, w)).min())
    if np.abs(G @ w).max(initial=0.0) > settings.LP_FEAS_TOL * max(margin, 0.0):
        return -np.inf, w
    return margin, w


def _dual_bound(A: sparse.csr_matrix, G: sparse.csr_matrix, lam: np.ndarray, mu: np.ndarray) -> float:
    """Certified upper bound on the best normalized margin from multipliers ``lam >= 0, mu``.

    Every ``w`` with ``G w = 0`` and ``max|w| <= 1`` has
    ``min(A w) <= lam^T A w / sum(lam) = (A^T lam + G^T mu)^T w / sum(lam)
    <= ||A^T lam + G^T mu||_1 / sum(lam)``. The rounding of the product is added, so the bound
    holds in exact arithmetic.
    """
    lam = np.maximum(lam, 0.0)
    total = float(lam.sum())
    if total <= 0 or not np.all(np.isfinite(mu)) or not np.all(np.isfinite(lam)):
        return np.inf
    r = A.T @ lam + G.T @ mu
    rounding = _product_rounding(A.T.tocsr(), lam) + _product_rounding(G.T.tocsr(), mu)
    return (float(np.abs(r).sum()) + float(rounding.sum())) / total


def _least_squares_direction(data: NTPData) -> np.ndarray:
    """Candidate ``vec(W)`` with logits ``H W^T`` equal to 0 on every support and -1 off it.

    Computed by least squares on ``H`` divided by its largest entry. When ``H`` has full row
    rank (``d >= m``, Lemma 1 of Paper A) it satisfies (6a) and (6b) with every margin equal;
    otherwise it is only a candidate. :func:`_primal_margin` verifies it either way.
    """
    target = np.where(data.support_mask, 0.0, -1.0)  # (m, V)
    Wt, *_ = np.linalg.lstsq(data.H / np.abs(data.H).max(initial=1e-300), target, rcond=None)
    return Wt.T.ravel()


def _lp_multipliers(res, n_eq: int) -> tuple[np.ndarray, np.ndarray]:
    """``lambda >= 0`` of the (6b) rows and ``mu`` of the (6a) rows from a linprog result."""
    ineq, eq = getattr(res, "ineqlin", None), getattr(res, "eqlin", None)
    if ineq is None or getattr(ineq, "marginals", None) is None:
        return np.zeros(0), np.zeros(n_eq)
    lam = -np.asarray(ineq.marginals, dtype=float)
    mu = np.asarray(eq.marginals, dtype=float) if n_eq else np.zeros(0)
    return lam, mu


@cached_per_data
def _separability(data: NTPData) -> _Separability:
    """Decide Definition 2 by a normalized max-margin LP, with a certificate either way.

    Separability is invariant to a positive rescaling of each context's embedding, so the rows
    of ``H`` are first divided by their largest entry; then the LP
    ``max t  s.t.  (e_{a_j} - e_v)^T W h_j >= t  (6b),  (6a),  -1 <= W_ik <= 1`` is bounded
    and always feasible (``W = 0, t = 0``), and its value ``t*`` is the best normalized margin.
    The data are separable iff ``t* > 0``. A primal point with verified margin at least
    :data:`~ntpnb.settings.SEP_MARGIN_TOL` proves separability; multipliers that bound ``t*``
    below that tolerance prove that no direction separates with a larger normalized margin.
    The methods of :data:`~ntpnb.settings.LP_METHOD` and then
    :data:`~ntpnb.settings.LP_FALLBACK_METHODS` are tried in order until one decides.
    """
    cons = ntp_constraints(data)
    n = data.V * data.d
    if cons.ineq.shape[0] == 0:  # no out-of-support token anywhere: W = 0 satisfies (6)
        return _Separability(True, np.zeros(n), np.inf, np.inf, "none (no inequality)")
    A, G = _normalized_constraints(data)
    margin, w = _primal_margin(A, G, _least_squares_direction(data))
    if margin >= settings.SEP_MARGIN_TOL:
        return _Separability(True, w, margin, np.inf, "least squares")
    tried = []
    for method in (settings.LP_METHOD, *settings.LP_FALLBACK_METHODS):
        res = _max_margin_lp(A, G, method)
        margin, w = _primal_margin(A, G, None if res.x is None else res.x[:-1])
        bound = _dual_bound(A, G, *_lp_multipliers(res, G.shape[0]))
        if margin >= settings.SEP_MARGIN_TOL:
            return _Separability(True, w, margin, bound, method)
        if bound <= settings.SEP_MARGIN_TOL:
            return _Separability(False, None, max(margin, 0.0), bound, method)
        tried.append(
            f"{method}: linprog status {res.status} ({res.message.strip()}), verified margin "
            f"{margin:.3g}, certified bound {bound:.3g}"
        )
    raise SolverError(
        "could not decide NTP-separability: no LP method produced a verified separating direction "
        f"or a certificate that none exists with normalized margin above {settings.SEP_MARGIN_TOL:g} "
        f"(m={data.m}, d={data.d}, V={data.V}). " + "; ".join(tried) + ". The data may lie within "
        "that margin of the separability boundary. To decide, raise ntpnb.settings.LP_TIME_LIMIT, "
        "set ntpnb.settings.LP_METHOD to another method (e.g. 'highs-ds', dual simplex, "
        "exact vertices but slower), or perturb the embeddings slightly."
    )


def is_separable(data: NTPData) -> bool:
    """Whether the data are NTP-separable (Definition 2 of Paper A).

    Decided by a normalized max-margin linear program (HiGHS through
    :func:`scipy.optimize.linprog`, method :data:`ntpnb.settings.LP_METHOD`) with each row of
    ``H`` divided by its largest entry, which leaves separability unchanged and makes the
    answer independent of the scale of the embeddings. Either answer is certified: "separable"
    by a direction that is checked against (6a)-(6b) with margin at least
    :data:`ntpnb.settings.SEP_MARGIN_TOL` (relative to ``max|h_j|`` and ``max|W|``), "not
    separable" by LP multipliers proving that no direction reaches that margin.

    Raises
    ------
    SolverError
        If no LP method can decide (the data lie within the tolerance of the boundary or the
        solver fails); the message says what to change.
    """
    return _separability(data).separable


def separating_direction(data: NTPData) -> np.ndarray:
    """Some ``W^d`` satisfying (6a) and (6b) (Definition 2), scaled to smallest margin 1.

    The direction is the one that decided :func:`is_separable`: the least-squares solution of
    ``H W^T = `` (0 on each support, -1 off it) when it separates, which it does with all
    margins equal whenever ``H`` has full row rank; otherwise the max-margin LP's point (an
    interior point of its optimal face). It is not ``W^mm``.

    Raises
    ------
    NotSeparableError
        If the data are not NTP-separable.
    ScaleError
        If the direction does not fit in float64 (embeddings near the underflow threshold).
    """
    sep = _separability(data)
    if not sep.separable:
        raise NotSeparableError(_not_separable_message(data))
    cons = ntp_constraints(data)
    if cons.ineq.shape[0] == 0:
        return np.zeros((data.V, data.d))
    A, _ = _normalized_constraints(data)
    # the margins for the original rows: row j was divided by its scale
    margin = float((_row_scales(data.H)[cons.ineq_context] * (A @ sep.direction)).min())
    with np.errstate(over="ignore"):
        W = (sep.direction / margin).reshape(data.V, data.d)
    if not np.all(np.isfinite(W)):
        raise ScaleError(
            f"a separating direction of these data has entries beyond the float64 range "
            f"(smallest margin {margin:.3g} at max|W| = 1); rescale H"
        )
    return W


def _not_separable_message(data: NTPData) -> str:
    sep = _separability(data)
    return (
        "the data are not NTP-separable: no W satisfies (6a) and (6b) "
        f"(m={data.m}, d={data.d}, V={data.V}; the max-margin LP ({sep.method}) certifies that "
        f"no direction has normalized margin above {sep.dual_bound:.2g})"
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
