"""NTP-separability (Paper A, Definition 2): one decision, certified either way.

:func:`is_separable` decides whether some ``W`` satisfies (6a) and (6b), by the method its
``method`` names: the package's test (a full-rank witness, candidate directions, then the
certified max-margin linear program of ``vec(W)``), that LP alone, or a feasibility LP in the
row space of ``H``. The LP's answer is certified: a verified separating direction, or LP
multipliers proving that no direction has a positive margin above
:data:`ntpnb.settings.SEP_MARGIN_TOL`. :func:`separating_direction` returns the direction that
decided.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.linalg import lapack
from scipy.optimize import OptimizeWarning, linprog

from .. import settings
from ..errors import InvalidDataError, NotSeparableError, RankAmbiguousError, ScaleError, SolverError
from ..qp import least_distance_nnls
from .active_set import SOLVER_NAME as ACTIVE_SET_SOLVER
from .active_set import solve_active_set
from .constraints import NTPRows, constraint_pairs, ntp_constraints, pair_rows
from .data import NTPData, cached_per_data, frozen, normalized
from .subspace import embedding_svd, f_decomposition, uses_dense_f

__all__ = ["SEPARABILITY_METHODS", "is_separable", "separating_direction", "satisfies_definition_2"]


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


def _normalized_constraints(
    data: NTPData, dense: bool = False
) -> tuple[sparse.csr_matrix, sparse.csr_matrix]:
    """The (6b) and (6a) rows of :func:`ntp_constraints` with each ``h_j`` divided by its scale.

    Sparse, or with ``dense`` as dense arrays (:func:`~ntpnb.linear.constraints.pair_rows`).
    """
    pairs = constraint_pairs(data)
    Hn = data.H / _row_scales(data.H)[:, None]  # each row's largest entry becomes +-1
    anchors = pairs.anchors
    A = pair_rows(Hn, pairs.ineq_context, anchors[pairs.ineq_context], pairs.ineq_token, data.V, dense)
    G = pair_rows(Hn, pairs.eq_context, pairs.eq_token, anchors[pairs.eq_context], data.V, dense)
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


def _product_rounding(M: sparse.spmatrix | np.ndarray, x: np.ndarray) -> np.ndarray:
    """A bound on the rounding error of each entry of ``M @ x`` (float64; sparse or dense ``M``).

    ``2 p eps (|M| |x|)`` with ``p`` the most non-zeros of a row: the terms that are zero add
    nothing and no rounding, in any order of summation.
    """
    counts = M.getnnz(axis=1) if sparse.issparse(M) else np.count_nonzero(M, axis=1)
    per_row = max(int(np.max(counts, initial=0)), 1)
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
    rounding = _product_rounding(A.T, lam) + _product_rounding(G.T, mu)
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
WITNESS_METHOD = f"NTP-SVM witness ({ACTIVE_SET_SOLVER})"


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
    """``vec(W^mm)`` from the active-set NTP-SVM solver, or None if it fails (e.g. not separable).

    Only a candidate: :func:`_decide_with` verifies its margin like any other direction.
    """
    try:
        return solve_active_set(data, max_iter=settings.SVM_WITNESS_MAX_ITER).W.ravel()
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


def satisfies_definition_2(data: NTPData, W: np.ndarray, tol: float) -> bool:
    """Whether ``W`` meets Definition 2 (6a)-(6b) to ``tol`` relative to ``s = 1 + max|W_ij|``.

    (6b) margins at least ``1 - tol s`` and (6a) residuals at most ``tol s``.
    """
    rows, w = NTPRows(data), W.ravel()
    scale = 1.0 + float(np.abs(W).max())
    return bool(
        rows.margins(w).min(initial=np.inf) >= 1 - tol * scale
        and np.abs(rows.equality_residuals(w)).max(initial=0.0) <= tol * scale
    )


@cached_per_data
def rank_witness(data: NTPData) -> np.ndarray | None:
    """A separating ``W`` computed from ``H`` alone when ``rank H = m``, else None.

    With full row rank every logit matrix ``L = H W^T`` is reachable; ``W = L0^T (H^+)^T`` with
    logits ``L0`` equal to 1 on the supports and 0 elsewhere satisfies (6a)-(6b) with every
    margin 1 (Lemma 1 of Paper A: ``d >= m`` and generic embeddings suffice). The answer is
    checked against Definition 2 (tolerance :data:`ntpnb.settings.LP_FEAS_TOL` relative to
    ``1 + max |W_ij|``); None also when the check fails. Computed once per data set (read-only).
    """
    if data.m > data.d:
        return None
    try:
        svd = embedding_svd(data)
    except RankAmbiguousError:  # only a shortcut: the LP decides
        return None
    if svd.rank < data.m:
        return None
    L0 = data.support_mask.astype(float)
    W = ((svd.U.T @ L0) / svd.s[:, None]).T @ svd.Vt  # H W^T = U U^T L0 = L0
    return frozen(W) if satisfies_definition_2(data, W, settings.LP_FEAS_TOL) else None


@dataclass(frozen=True)
class _ReducedDecision:
    """The decision of :func:`_reduced_lp`.

    Whether the data are separable, a checked separating ``W`` (None when not separable), and
    ``"rank"`` (``rank H = m``) or ``"reduced LP (...)"`` with the HiGHS method that decided.
    """

    separable: bool
    W: np.ndarray | None
    method: str


def _reduced_lp(data: NTPData, tol: float = settings.LP_FEAS_TOL) -> _ReducedDecision:
    """Decide NTP-separability (Definition 2 of Paper A) in the row space of ``H``.

    Any separating ``W`` can be replaced by its projection onto the row space of ``H`` (the
    constraints only see ``W h_j``), so with the thin SVD ``H = U diag(sigma) Vt`` of rank ``r``
    one may take ``W = A Vt`` and the logits are ``L = G A^T`` with ``G = U diag(sigma)``. With the
    common in-support logits ``s_j`` as extra variables, Definition 2 is the feasibility of

        ``G_j . a_v - s_j = 0`` for ``v`` in ``S_j``,  ``G_j . a_v - s_j <= -1`` otherwise,

    an LP with ``V r + m`` variables and ``m V`` rows of ``r + 1`` non-zeros (against ``V d``
    variables and rows of ``2 d`` non-zeros in the original form, plus its equality rows).

    * If ``r = m`` every logit matrix is reachable, so the data are separable: ``W`` with logits
      ``1`` on the supports and ``0`` elsewhere is returned (checked).
    * Otherwise the LP is solved by HiGHS (:func:`scipy.optimize.linprog`, the method
      :data:`ntpnb.settings.LP_METHOD`, then the fallbacks ``LP_FALLBACK_METHODS`` when it ends
      without a decision); a feasible point is checked against Definition 2 (tolerance ``tol``
      relative to ``1 + max |W_ij|``).

    Raises
    ------
    SolverError
        If HiGHS fails or returns a point that violates the constraints.
    """
    mask = data.support_mask
    m, V = data.m, data.V
    W = rank_witness(data)
    if W is not None:
        return _ReducedDecision(True, W, "rank")
    svd = embedding_svd(data)
    r = svd.rank
    G = svd.U * svd.s
    Vt = svd.Vt
    # rows (j, v) in row-major order; columns: a_v (V blocks of r), then s (m)
    j_idx, v_idx = np.indices((m, V)).reshape(2, -1)
    rows = np.repeat(np.arange(m * V), r + 1)
    cols = np.concatenate([(v_idx * r)[:, None] + np.arange(r), (V * r + j_idx)[:, None]], axis=1).ravel()
    vals = np.concatenate([G[j_idx], -np.ones((m * V, 1))], axis=1).ravel()
    A = sparse.csr_matrix((vals, (rows, cols)), shape=(m * V, V * r + m))
    on = mask.ravel()
    failures = []
    for method in (settings.LP_METHOD, *settings.LP_FALLBACK_METHODS):
        res = linprog(
            c=np.zeros(V * r + m),
            A_ub=A[~on],
            b_ub=-np.ones(int((~on).sum())),
            A_eq=A[on],
            b_eq=np.zeros(int(on.sum())),
            bounds=(None, None),
            method=method,
        )
        if res.status in (0, 2):
            break
        failures.append(f"{method}: status {res.status} ({res.message})")
    else:
        raise SolverError("the reduced separability LP failed: " + "; ".join(failures))
    if res.status == 2:
        return _ReducedDecision(False, None, f"reduced LP ({method})")
    W = res.x[: V * r].reshape(V, r) @ Vt
    if not satisfies_definition_2(data, W, tol):
        raise SolverError("the reduced separability LP returned a point that violates Definition 2")
    return _ReducedDecision(True, W, f"reduced LP ({method})")


#: The ``method`` of a decision made by :func:`_decide_least_distance`.
LEAST_DISTANCE_METHOD = "least distance (NNLS in the complement of F)"


def _free_directions(data: NTPData) -> np.ndarray:
    """An orthonormal basis (columns) of the ``vec(W)`` with ``G w = 0`` and zero column sums.

    The complement of ``F`` (:func:`~ntpnb.linear.subspace.f_decomposition`, whose rank is the
    package's one decision of ``dim F``) and of the ``d`` directions ``W = 1 u^T``, which change no
    log-odds and lie in the complement of ``F`` too. Both sets of rows are orthonormal and
    orthogonal to each other, so the complement has the known dimension ``V d - dim F - d``: a
    complete QR decomposition of them gives it, with no rank decision of its own.
    """
    known = np.kron(np.full((data.V, 1), 1 / np.sqrt(data.V)), np.eye(data.d))  # W = 1 u^T
    if constraint_pairs(data).eq_context.size:  # F = {0} without equations
        known = np.hstack([f_decomposition(data).basis.T, known])  # rows of the basis of F
    n, k = known.shape[0], known.shape[0] - known.shape[1]
    if k == 0:
        return np.zeros((n, 0))
    # the last k columns of the complete Q, without forming the others: Q applied to [0; I]
    qr, tau, _, info = lapack.dgeqrf(known)
    tail = np.zeros((n, k))
    tail[n - k :] = np.eye(k)
    free, _, info_q = lapack.dormqr("L", "N", qr, tau, tail, lwork=max(1, 64 * k))
    if info or info_q:
        raise SolverError(f"LAPACK's QR of F and its complement failed (info {info}, {info_q})")
    return free


@cached_per_data
def _decide_least_distance(data: NTPData) -> _Separability | None:
    """Decide Definition 2 by least-distance programming, certified either way; None if unsure.

    With ``N`` an orthonormal basis of the directions allowed by (6a) (:func:`_free_directions`)
    and ``B = A N`` the normalized (6b) rows in those coordinates, the data are separable iff
    ``B z >= 1`` is feasible. Lawson and Hanson's reduction (*Solving Least Squares Problems*,
    1974, ch. 23) decides that by one non-negative least squares: ``u >= 0`` minimizing
    ``||B^T u||^2 + (1 - sum u)^2``. If ``sum u < 1``, ``z = B^T u / (1 - sum u)`` is the
    shortest feasible point, and ``w = N z`` is checked like any separating direction
    (:func:`_primal_margin`). Otherwise ``B^T u = 0`` with ``sum u = 1``: ``u`` are the
    multipliers of a certificate that no direction separates, completed by the equality
    multipliers that cancel ``A^T u`` on F (from the same decomposition) and checked by
    :func:`_dual_bound`. So either answer carries the certificate of the LP's
    (:func:`_decide_with`), with the same tolerance :data:`~ntpnb.settings.SEP_MARGIN_TOL`.

    Dense: for data whose F is decomposed densely (:func:`~ntpnb.linear.subspace.uses_dense_f`)
    and whose (6b) rows fit in :data:`~ntpnb.settings.LEAST_DISTANCE_MAX_ENTRIES`; None above
    that, when ``dim F`` is ambiguous, when NNLS does not converge, or when neither
    certificate passes (the caller then decides by the LP). ``data`` is normalized by a power of
    two (:func:`_separability` passes that copy); cached per data.
    """
    pairs = constraint_pairs(data)
    n_ineq = pairs.ineq_context.size
    if n_ineq == 0:  # no out-of-support token anywhere: W = 0 satisfies (6)
        return _Separability(True, frozen(np.zeros(data.V * data.d)), np.inf, np.inf, "none (no inequality)")
    if not uses_dense_f(data) or n_ineq * data.V * data.d > settings.LEAST_DISTANCE_MAX_ENTRIES:
        return None
    A, G = _normalized_constraints(data, dense=True)
    try:
        N = _free_directions(data)
    except RankAmbiguousError:
        return None
    B = A @ N  # (n_ineq, k)
    found = least_distance_nnls(B, np.ones(B.shape[0]))
    if found is None:
        return None
    u, slack = found
    if slack > 0:
        margin, w = _primal_margin(A, G, N @ (B.T @ u) / slack)
        if margin >= settings.SEP_MARGIN_TOL:
            return _Separability(True, w, margin, np.inf, LEAST_DISTANCE_METHOD)
    mu = np.zeros(G.shape[0])
    if G.shape[0] and f_decomposition(data).dim:
        # G^T nu = -(the part of A^T u in F) for the equality rows of H; G holds them divided by
        # each context's row scale, so its multipliers are nu times that scale
        dec = f_decomposition(data)
        nu = -dec.U @ ((dec.basis @ (A.T @ u)) / dec.s)
        mu = nu * _row_scales(data.H)[pairs.eq_context]
    bound = _dual_bound(A, G, u, mu)
    if bound <= settings.SEP_MARGIN_TOL:
        return _Separability(False, None, 0.0, bound, LEAST_DISTANCE_METHOD)
    return None


#: The methods of :func:`is_separable`.
SEPARABILITY_METHODS: tuple[str, ...] = ("auto", "lp", "reduced-lp", "least-distance")


def is_separable(data: NTPData, method: str = "auto") -> bool:
    """Whether the data are NTP-separable (Definition 2 of Paper A).

    Parameters
    ----------
    data
        The data set.
    method
        ``"auto"`` (the default): when ``H`` has full row rank (``d >= m``, Lemma 1 of Paper A)
        the data are separable and a separating ``W`` is computed from ``H`` alone and checked
        (:func:`rank_witness`). Otherwise a small problem (its (6b) rows within
        :data:`ntpnb.settings.LEAST_DISTANCE_MAX_ENTRIES`) is decided by least-distance
        programming, one non-negative least squares (as ``"least-distance"``), and a larger one,
        or one that method cannot certify, by a normalized max-margin linear program (HiGHS
        through :func:`scipy.optimize.linprog`, methods :func:`lp_methods`) with each row of
        ``H`` divided by its largest entry, which leaves separability unchanged and makes the
        answer independent of the scale of the embeddings; when that LP is large
        (:data:`ntpnb.settings.SVM_WITNESS_MIN_VARIABLES`), ``W^mm`` from the active-set
        NTP-SVM solver is tried first as a candidate direction. Every answer is certified:
        "separable" by a direction that is checked against (6a)-(6b) with margin at least
        :data:`ntpnb.settings.SEP_MARGIN_TOL` (relative to ``max|h_j|`` and ``max|W|``), "not
        separable" by multipliers proving that no direction reaches that margin.

        ``"lp"``: the certified max-margin LP alone (no full-rank shortcut, no NTP-SVM witness),
        its interior-point method first; the same answer, and the method of choice on data that
        are likely not separable, where the witness is slow to give up.

        ``"reduced-lp"``: the full-rank witness, else a feasibility LP in the row space of ``H``
        (:func:`_reduced_lp`); its "not separable" rests on the HiGHS status alone.

        ``"least-distance"``: the same as ``"auto"``, named for what decides small problems: one
        non-negative least squares in the directions allowed by (6a)
        (:func:`_decide_least_distance`), with the same certificate either way as the LP; where
        it cannot certify, the LP decides. The same answer as the LP, for small dense data (the
        random instances of a phase diagram, the triples of chapter 01) in a fraction of its
        time.

    Raises
    ------
    InvalidDataError
        If ``method`` is not one of :data:`SEPARABILITY_METHODS`.
    SolverError
        If no LP method can decide (the data lie within the tolerance of the boundary or the
        solver fails); the message says what to change.
    """
    if method in ("auto", "least-distance"):
        if rank_witness(data) is not None:  # rank H = m: every logit matrix is reachable
            return True
        decision = _decide_least_distance(normalized(data)[0])  # None when large or unsure
        return (decision if decision is not None else _separability(data)).separable
    if method == "lp":
        return _decide_interior(normalized(data)[0]).separable
    if method == "reduced-lp":
        return _reduced_lp(data).separable
    raise InvalidDataError(f"method must be one of {SEPARABILITY_METHODS}, got {method!r}")


def separating_direction(data: NTPData) -> np.ndarray:
    """Some ``W^d`` satisfying (6a) and (6b) (Definition 2), scaled to smallest margin 1.

    The direction is the one that decided :func:`is_separable` (by the LP of ``vec(W)``): the
    least-squares solution of ``H W^T = `` (0 on each support, -1 off it) when it separates,
    which it does with all margins equal whenever ``H`` has full row rank; otherwise the
    max-margin LP's point (an interior point of its optimal face). It is not ``W^mm``.

    Raises
    ------
    NotSeparableError
        If the data are not NTP-separable.
    ScaleError
        If the direction does not fit in float64 (embeddings near the underflow threshold).
    """
    sep = _separability(data)
    if not sep.separable:
        raise NotSeparableError(not_separable_message(data))
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


def not_separable_message(data: NTPData) -> str:
    """Why the data are not separable: the LP's certificate (for :class:`NotSeparableError`)."""
    sep = _separability(data)
    return (
        "the data are not NTP-separable: no W satisfies (6a) and (6b) "
        f"(m={data.m}, d={data.d}, V={data.V}; the max-margin LP ({sep.method}) certifies that "
        f"no direction has normalized margin above {sep.dual_bound:.2g})"
    )
