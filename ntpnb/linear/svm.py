"""NTP-separability and the NTP-SVM (Paper A, Definition 2 and Eq. (NTP-SVM)).

* :func:`is_separable` decides Definition 2 by a normalized max-margin linear program (rows of
  ``H`` scaled to unit largest entry, ``max|W_ik| <= 1``), certified either way: a verified
  separating direction, or LP multipliers proving that no direction has a positive margin
  above :data:`ntpnb.settings.SEP_MARGIN_TOL`.
* :func:`ntp_svm` solves ``W^mm = argmin ||W||`` subject to (6a) and (6b), a strongly convex QP,
  by the exact active-set method of :mod:`ntpnb.linear.svm_fast` (no basis of F; verified by
  constraints, KKT conditions with explicit multipliers and the duality gap). The cvxpy
  reference, :func:`solve_ntp_svm_reference` (CLARABEL, polished on its active set, verified
  with a basis of F), stays available for tests and benchmarks and is the fallback when the
  fast method does not converge.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from scipy import sparse
from scipy.optimize import OptimizeWarning, linprog

from .. import settings
from ..errors import InvalidDataError, NotSeparableError, RankAmbiguousError, ScaleError, SolverError
from ..linalg import least_squares
from ..qp import active_mask, min_norm_qp, polish_active_set
from .constraints import ntp_constraints, pair_rows
from .data import NTPData, cached_per_data, frozen, normalized
from .subspace import embedding_svd, f_decomposition
from .svm_fast import SOLVER_NAME as FAST_SOLVER_NAME
from .svm_fast import FastSVMResult, rank_witness, solve_ntp_svm_fast

__all__ = [
    "SVMSolution",
    "is_separable",
    "separating_direction",
    "zero_margin_direction",
    "solve_ntp_svm",
    "ntp_svm",
    "solve_ntp_svm_reference",
    "is_separable_lp",
    "solve_qp",
]


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
    """Solve ``max t  s.t.  A w >= t,  G w = 0,  -1 <= w <= 1,  t <= cap`` with one linprog method.

    The cap (:data:`~ntpnb.settings.LP_MARGIN_CAP`) stops the search once a margin that decides
    has been reached; it does not change the answer, since ``t* > 0`` iff ``min(t*, cap) > 0``.
    """
    n = A.shape[1]
    c = np.zeros(n + 1)
    c[-1] = -1.0
    A_ub = sparse.hstack([-A, np.ones((A.shape[0], 1))], format="csr")
    A_eq = sparse.hstack([G, sparse.csr_matrix((G.shape[0], 1))], format="csr") if G.shape[0] else None
    bounds = np.array([(-1.0, 1.0)] * n + [(-np.inf, settings.LP_MARGIN_CAP)])
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
    w = frozen(w / np.abs(w).max())
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


def _least_squares_direction(data: NTPData) -> np.ndarray | None:
    """Candidate ``vec(W)`` with logits ``H W^T`` equal to 0 on every support and -1 off it.

    The minimum-norm least-squares solution at ``rank H`` (:func:`~ntpnb.linear.subspace.embedding_svd`;
    None when that rank is ambiguous, and the LP decides). When ``H`` has full row
    rank (``d >= m``, Lemma 1 of Paper A) it satisfies (6a) and (6b) with every margin equal;
    otherwise it is only a candidate. :func:`_primal_margin` verifies it either way.
    """
    target = np.where(data.support_mask, 0.0, -1.0)  # (m, V)
    try:
        svd = embedding_svd(data)  # the minimum-norm solution at rank H (the one decision of it)
    except RankAmbiguousError:
        return None  # no candidate: the LP decides
    Wt = svd.Vt.T @ ((svd.U.T @ target) / (svd.s / svd.s[0])[:, None]) if svd.rank else None
    return None if Wt is None else Wt.T.ravel()


def _lp_multipliers(res, n_eq: int) -> tuple[np.ndarray, np.ndarray]:
    """``lambda >= 0`` of the (6b) rows and ``mu`` of the (6a) rows from a linprog result."""
    ineq, eq = getattr(res, "ineqlin", None), getattr(res, "eqlin", None)
    if ineq is None or getattr(ineq, "marginals", None) is None:
        return np.zeros(0), np.zeros(n_eq)
    lam = -np.asarray(ineq.marginals, dtype=float)
    mu = np.asarray(eq.marginals, dtype=float) if n_eq else np.zeros(0)
    return lam, mu


#: The ``method`` of a decision made by the NTP-SVM witness (:func:`_svm_witness`).
WITNESS_METHOD = f"NTP-SVM witness ({FAST_SOLVER_NAME})"


def lp_methods(n_variables: int) -> tuple[str, ...]:
    """The linprog methods tried in turn to decide a separability LP with ``n_variables``.

    :data:`~ntpnb.settings.LP_METHOD` then :data:`~ntpnb.settings.LP_FALLBACK_METHODS`, except
    that a small LP (at most :data:`~ntpnb.settings.LP_SMALL_MAX_VARIABLES` entries of ``W``)
    tries :data:`~ntpnb.settings.LP_SMALL_METHOD` first. Each method appears once.
    """
    methods = (settings.LP_METHOD, *settings.LP_FALLBACK_METHODS)
    if n_variables <= settings.LP_SMALL_MAX_VARIABLES:
        methods = (settings.LP_SMALL_METHOD, *methods)
    return tuple(dict.fromkeys(methods))


def _separability(data: NTPData) -> _Separability:
    """Decide Definition 2 (once for ``data`` and its normalized copy, see :func:`_decide`)."""
    return _decide(normalized(data)[0])


@cached_per_data
def _decide(data: NTPData) -> _Separability:
    """Decide Definition 2 (cached per data): :func:`_decide_with` the methods of :func:`lp_methods`.

    When the LP is large, the NTP-SVM (:func:`_svm_witness`) is tried first as a witness.
    """
    n = data.V * data.d
    witness = _svm_witness if n >= settings.SVM_WITNESS_MIN_VARIABLES else None
    return _decide_with(data, lp_methods(n), witness)


def _svm_witness(data: NTPData) -> np.ndarray | None:
    """``vec(W^mm)`` from the fast NTP-SVM solver, or None if it fails (e.g. not separable).

    Only a candidate: :func:`_decide_with` verifies its margin like any other direction.
    """
    try:
        return solve_ntp_svm_fast(data, max_iter=settings.SVM_WITNESS_MAX_ITER).W.ravel()
    except SolverError:
        return None


@cached_per_data
def _decide_interior(data: NTPData) -> _Separability:
    """:func:`_decide_with` the interior-point method first (cached per data)."""
    return _decide_with(data, tuple(dict.fromkeys((settings.LP_METHOD, *settings.LP_FALLBACK_METHODS))))


def _decide_with(
    data: NTPData, methods: tuple[str, ...], witness: Callable[[NTPData], np.ndarray | None] | None = None
) -> _Separability:
    """Decide Definition 2 by a normalized max-margin LP, with a certificate either way.

    Separability is invariant to a positive rescaling of each context's embedding, so the rows
    of ``H`` are first divided by their largest entry; then the LP
    ``max t  s.t.  (e_{a_j} - e_v)^T W h_j >= t  (6b),  (6a),  -1 <= W_ik <= 1`` is bounded
    and always feasible (``W = 0, t = 0``), and its value ``t*`` is the best normalized margin
    (the LP stops at ``t = ``:data:`~ntpnb.settings.LP_MARGIN_CAP`). The data are separable iff
    ``t* > 0``. A primal point with verified margin at least
    :data:`~ntpnb.settings.SEP_MARGIN_TOL` proves separability; multipliers that bound ``t*``
    below that tolerance prove that no direction separates with a larger normalized margin.
    Before any LP, the least-squares direction is tried (it decides when ``H`` has full row
    rank), then the ``witness`` (if any: a function of the data returning a candidate
    ``vec(W)`` or None). The LP ``methods`` are tried in order until one decides.
    """
    cons = ntp_constraints(data)
    n = data.V * data.d
    if cons.ineq.shape[0] == 0:  # no out-of-support token anywhere: W = 0 satisfies (6)
        return _Separability(True, frozen(np.zeros(n)), np.inf, np.inf, "none (no inequality)")
    A, G = _normalized_constraints(data)
    margin, w = _primal_margin(A, G, _least_squares_direction(data))
    if margin >= settings.SEP_MARGIN_TOL:
        return _Separability(True, w, margin, np.inf, "least squares")
    if witness is not None:
        margin, w = _primal_margin(A, G, witness(data))
        if margin >= settings.SEP_MARGIN_TOL:
            return _Separability(True, w, margin, np.inf, WITNESS_METHOD)
    tried = []
    for method in methods:
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

    When ``H`` has full row rank (``d >= m``, Lemma 1 of Paper A) the data are separable and
    a separating ``W`` is computed from ``H`` alone and checked
    (:func:`ntpnb.linear.svm_fast.rank_witness`). Otherwise the answer is decided by a
    normalized max-margin linear program (HiGHS through
    :func:`scipy.optimize.linprog`, methods :func:`lp_methods`) with each row of
    ``H`` divided by its largest entry, which leaves separability unchanged and makes the
    answer independent of the scale of the embeddings; when that LP is large
    (:data:`ntpnb.settings.SVM_WITNESS_MIN_VARIABLES`), ``W^mm`` from the fast NTP-SVM solver is
    tried first as a candidate direction. Either answer is certified: "separable"
    by a direction that is checked against (6a)-(6b) with margin at least
    :data:`ntpnb.settings.SEP_MARGIN_TOL` (relative to ``max|h_j|`` and ``max|W|``), "not
    separable" by LP multipliers proving that no direction reaches that margin.

    Raises
    ------
    SolverError
        If no LP method can decide (the data lie within the tolerance of the boundary or the
        solver fails); the message says what to change.
    """
    if rank_witness(data) is not None:  # rank H = m: every logit matrix is reachable
        return True
    return _separability(data).separable


def is_separable_lp(data: NTPData) -> bool:
    """Definition 2 decided by the certified max-margin LP alone (no full-rank shortcut).

    The same answer as :func:`is_separable`; kept for tests and benchmarks. The LP's
    interior-point method goes first, and no witness is tried.
    """
    return _decide_interior(normalized(data)[0]).separable


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
    if sep.method not in ("least squares", "none (no inequality)", settings.LP_METHOD):
        # a simplex vertex or the SVM witness decided: take the interior-point method's point
        sep = _decide_interior(normalized(data)[0])
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


def zero_margin_direction(data: NTPData, context: int, token: int) -> np.ndarray:
    """The minimum-norm ``W`` meeting (6a), with margin 0 on one pair and at least 1 on the others.

    The NTP-SVM with one inequality of (6b) made an equality: minimize ``||W||`` subject to
    (6a), ``(e_z - e_v)^T W h_j = 0`` for ``j = context``, ``v = token`` (not in ``S_j``; by (6a)
    the margin is the same for every ``z`` in ``S_j``), and ``(e_z - e_v')^T W h_j' >= 1`` for
    every other pair ``(j', v')``. Such a ``W`` lies in F-perp and ranks every in-support token
    at or above every out-of-support one, but fails (6b) on one pair: along
    ``W^p + gamma W`` that token keeps a fixed share of its context's probability.

    The QP is solved by :func:`ntpnb.qp.min_norm_qp` on the normalized data
    (:func:`~ntpnb.linear.data.normalized`, scaled back), its answer is projected onto the
    equalities (so that (6a) and the zero margin hold to rounding, not to the solver's
    tolerance), and verified: every other margin is at least ``1 - SVM_FEAS_TOL``.

    Parameters
    ----------
    data
        The data set.
    context, token
        The pair ``(j, v)`` whose margin is set to 0 (0-based; ``token`` not in ``S_context``).

    Returns
    -------
    numpy.ndarray
        ``W``, shape ``(V, d)``.

    Raises
    ------
    InvalidDataError
        If ``context`` or ``token`` is out of range, or ``token`` is in ``S_context``.
    NotSeparableError
        If no ``W`` meets these constraints (the solver certifies them infeasible; the data may
        still be separable, e.g. when a zero margin on this pair forces zero margins elsewhere).
    SolverError
        If the solver fails or its answer does not pass verification.
    """
    if not (0 <= context < data.m and 0 <= token < data.V):
        raise InvalidDataError(
            f"pair (context {context}, token {token}) out of range: m = {data.m}, V = {data.V}"
        )
    if data.support_mask[context, token]:
        raise InvalidDataError(
            f"token {token} is in the support of context {context}: it has no margin to set to 0"
        )
    norm, c = normalized(data)
    cons = ntp_constraints(norm)
    (row,) = np.flatnonzero((cons.ineq_context == context) & (cons.ineq_token == token))
    others = np.arange(cons.ineq.shape[0]) != row
    B = sparse.vstack([cons.eq, cons.ineq[row]]).toarray()
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

    The certificate is measured on the problem normalized to ``max|H| ~ 1``
    (:func:`ntpnb.linear.data.normalized`); every entry is scale-free.

    Attributes
    ----------
    W
        ``W^mm``, shape ``(V, d)`` (read-only).
    duals
        Multipliers ``lambda >= 0`` of the inequality constraints (6b), in the row order of
        :func:`ntpnb.linear.constraints.ntp_constraints` (read-only).
    margin_violation
        ``max(0, 1 - min margin)`` over all inequality constraints.
    f_component
        Violation of (6a), i.e. of ``W in F-perp``: ``||P_F(W)|| / ||W||`` for the cvxpy
        reference; for the fast solver (which never forms a basis of F) the largest residual of
        (6a) relative to the margin 1, ``max |(e_z - e_{a_j})^T W h_j|``. Both vanish exactly
        when ``W`` is in F-perp.
    stationarity
        ``||W - P_perp(A^T lambda)|| / ||W||`` (KKT stationarity; ``A`` = inequality rows) for
        the reference; for the fast solver ``||W - (A^T lambda + G^T mu)|| / ||W||`` with the
        multipliers ``mu`` of (6a) explicit (``G`` = equality rows), the same condition.
    complementarity
        ``max_i lambda_i |a_i^T vec(W) - 1| / max_i lambda_i``.
    duality_gap
        ``(primal - dual) / primal`` with primal ``||W||^2 / 2`` and dual
        ``sum(lambda) - ||P_perp(A^T lambda)||^2 / 2`` (0 when ``W = 0``); for the fast solver
        the Lagrange dual ``sum(lambda) - ||A^T lambda + G^T mu||^2 / 2``.
    solver
        Name of the solver: ``"ntpnb-active-set"`` (the fast solver) or the QP solver of the
        cvxpy reference.
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
        """Number of inequality constraints with a positive multiplier (support vectors).

        Decided by :func:`ntpnb.qp.active_mask` (relative threshold 1e-7; RankAmbiguousError
        when a multiplier lies near it).
        """
        return int(np.count_nonzero(active_mask(self.duals, what="the NTP-SVM")))


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
    tiny = np.finfo(float).tiny
    return SVMSolution(
        W=frozen(w.reshape(data.V, data.d)),
        duals=frozen(lam),
        margin_violation=float(max(0.0, 1.0 - margins.min(initial=np.inf))),
        f_component=float(np.linalg.norm(basis @ w)) / max(norm_w, tiny),
        stationarity=float(np.linalg.norm(w - Atl)) / max(norm_w, tiny),
        complementarity=float(np.max(lam * np.abs(margins - 1.0), initial=0.0))
        / max(float(lam.max(initial=0.0)), tiny),
        duality_gap=(primal - dual) / primal if primal > 0 else 0.0,
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
    """Exact min-norm solve with the active inequalities as equalities (:func:`ntpnb.qp.polish_active_set`).

    With ``A_act`` the active rows and ``B`` an orthonormal basis of F, the minimizer of
    ``||w||`` over ``{w in F-perp : A_act w = 1}`` is ``w = A~^T nu`` with ``A~ = P_perp(A_act)``
    and ``A~ A~^T nu = 1``. Returns ``(w, lambda)`` or None when no active set gives a KKT
    point (then the solver's answer is used).
    """
    cons = ntp_constraints(data)
    basis = f_decomposition(data).basis
    projected: dict[int, np.ndarray] = {}  # each row is projected once, whatever the rounds

    def solve_on(active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        new = [i for i in active.tolist() if i not in projected]
        if new:
            projected.update(zip(new, _project_perp(basis, cons.ineq[new].toarray()), strict=True))
        At = np.array([projected[i] for i in active.tolist()])
        # w = At^+ 1 (unique), nu = (At^T)^+ w, both at the rank of the one rule
        w = least_squares(At, np.ones(active.size), what="the active NTP-SVM constraints")
        nu = least_squares(At.T, w, what="the active NTP-SVM constraints (transposed)")
        return w, nu

    try:
        return polish_active_set(solve_on, lambda w: cons.ineq @ w, lam)
    except RankAmbiguousError:  # the active rows' rank is not determined: keep the solver's answer
        return None


def solve_qp(data: NTPData) -> tuple[np.ndarray, np.ndarray, str]:
    """The inner NTP-SVM solve: ``min ||w||^2 / 2`` s.t. (6b) ``A w >= 1`` and (6a) ``G w = 0``.

    Called only on normalized data (``max|H| ~ 1``) that are separable and have at least one
    inequality; normalization, polishing and verification are done by the caller
    (:func:`solve_ntp_svm`), so another solver can replace this function alone.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray, str)
        ``vec(W)``, the multipliers ``lambda >= 0`` of the inequality rows, the solver's name.

    Raises
    ------
    SolverError
        If the solver fails or does not report an optimal solution.
    """
    cons = ntp_constraints(data)
    result = min_norm_qp(cons.ineq, cons.eq, "the NTP-SVM")
    if result.infeasible:
        raise SolverError(
            f"{result.solver} reports the NTP-SVM infeasible ({result.status}) on separable data"
        )
    return result.w, result.lam, result.solver


def _fast_solution(res: FastSVMResult) -> SVMSolution:
    """The fast solver's verified answer as an :class:`SVMSolution`."""
    cert = res.certificate
    return SVMSolution(
        W=frozen(res.W),
        duals=frozen(res.duals),
        margin_violation=cert.margin_violation,
        f_component=cert.equality_residual,
        stationarity=cert.stationarity,
        complementarity=cert.complementarity,
        duality_gap=cert.duality_gap,
        solver=FAST_SOLVER_NAME,
        polished=False,
    )


@cached_per_data
def _solve_normalized(data: NTPData) -> SVMSolution:
    """The NTP-SVM of normalized data (``max|H| ~ 1``) by the fast solver, verified.

    A verified answer is itself a witness of separability, so the separability LP runs only
    when the fast solver fails: then non-separable data raise :class:`NotSeparableError`, and
    separable ones go to the cvxpy reference.
    """
    if data.support_mask.all():  # no inequality: W^mm = 0
        return _solve_normalized_reference(data)
    try:
        return _fast_solution(solve_ntp_svm_fast(data))
    except SolverError:
        if not is_separable(data):
            raise NotSeparableError(_not_separable_message(data)) from None
        return _solve_normalized_reference(data)


@cached_per_data
def _solve_normalized_reference(data: NTPData) -> SVMSolution:
    """Solve (cvxpy), polish and verify the NTP-SVM of normalized data (``max|H| ~ 1``)."""
    if not is_separable(data):
        raise NotSeparableError(_not_separable_message(data))
    cons = ntp_constraints(data)
    if cons.ineq.shape[0] == 0:  # no inequality: W^mm = 0
        return _certificate(data, np.zeros(data.V * data.d), np.zeros(0), "none (trivial)", False)
    w, lam, solver = solve_qp(data)
    raw = _certificate(data, w, lam, solver, False)
    polished = _polish(data, lam)
    if polished is not None:
        sol = _certificate(data, *polished, solver, True)
        if _passes(sol):
            return sol
    if _passes(raw):
        return raw
    raise SolverError(
        f"the NTP-SVM answer of {solver} failed verification: "
        f"margin violation {raw.margin_violation:.2e}, F-component {raw.f_component:.2e}, "
        f"stationarity {raw.stationarity:.2e}, complementarity {raw.complementarity:.2e}, "
        f"duality gap {raw.duality_gap:.2e}"
    )


def _scale_error(data: NTPData, what: str) -> ScaleError:
    return ScaleError(
        f"{what} exceeds the float64 range: W^mm scales like 1 / max|H| and "
        f"max|H| = {float(np.abs(data.H).max()):.3g}; rescale the embeddings"
    )


@cached_per_data
def solve_ntp_svm(data: NTPData) -> SVMSolution:
    """Solve the NTP-SVM of ``data`` and return the verified solution with its certificate.

    The solver is the exact active-set method of :mod:`ntpnb.linear.svm_fast` (one
    factorization per token of a block of the Gram matrix ``H H^T``; at ``m = 500, V = 100,
    d = 600, S = 10`` a few seconds); when it does not converge, the cvxpy reference
    (:func:`solve_ntp_svm_reference`) answers. ``SVMSolution.solver`` names which one did.

    The problem is solved for ``H / c`` with ``c`` a power of two that brings ``max|H|`` near 1
    (:func:`ntpnb.linear.data.normalized`), then scaled back: ``W^mm(H) = W^mm(H / c) / c`` and
    ``lambda(H) = lambda(H / c) / c^2``. The verification tolerances are relative
    (see :class:`SVMSolution`), so the answer has the same accuracy at any scale of ``H``.

    Raises
    ------
    NotSeparableError
        If the data are not NTP-separable (decided by the LP of :func:`is_separable`).
    SolverError
        If both solvers fail, or no answer passes verification.
    ScaleError
        If ``W^mm`` or the multipliers exceed the float64 range (``H`` near underflow).
    """
    norm, c = normalized(data)
    return _scaled_back(data, _solve_normalized(norm), c)


def solve_ntp_svm_reference(data: NTPData) -> SVMSolution:
    """The NTP-SVM by the cvxpy reference, verified.

    CLARABEL on the sparse constraints, then polished and verified with a basis of F
    (normalized and scaled back like :func:`solve_ntp_svm`). Slower than :func:`solve_ntp_svm`
    and limited by the dense basis of F (``sum_j (S_j - 1)`` by ``V d``); kept as the
    independent second method for tests and benchmarks.

    Raises
    ------
    NotSeparableError, SolverError, ScaleError
        As :func:`solve_ntp_svm`.
    """
    norm, c = normalized(data)
    return _scaled_back(data, _solve_normalized_reference(norm), c)


def _scaled_back(data: NTPData, sol: SVMSolution, c: float) -> SVMSolution:
    """The solution for ``H`` from the one for ``H / c``."""
    if c == 1.0:
        return sol
    with np.errstate(over="ignore", under="ignore"):
        W, duals = sol.W / c, sol.duals / c / c
    if not np.all(np.isfinite(W)):
        raise _scale_error(data, "W^mm")
    if not np.all(np.isfinite(duals)):
        raise _scale_error(data, "a multiplier of W^mm (it scales like 1 / max|H|^2)")
    return replace(sol, W=frozen(W), duals=frozen(duals))


def ntp_svm(data: NTPData) -> np.ndarray:
    """``W^mm``: the minimum-norm ``W`` satisfying (6a) and (6b), shape ``(V, d)``.

    See :func:`solve_ntp_svm` for the verified solution with its certificate.

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
    with np.errstate(over="ignore"):
        W = _solve_normalized(norm).W / c
    if not np.all(np.isfinite(W)):
        raise _scale_error(data, "W^mm")
    return W
