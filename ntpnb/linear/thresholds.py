r"""Random instances and the thresholds of Paper A's conditions on them; the best loss below.

When the conditions hold over random instances (chapter 4), and the best loss when they do not:

* :func:`random_instance`: a random NTP instance with ``m`` contexts, embedding dimension
  ``d``, vocabulary ``V`` and every support of size ``S`` (the sweep's model).
* :func:`condition_trial`: one trial of the sweep: NTP_H-compatible? NTP-separable? plus the
  counts that explain compatibility (number of equations, rank of the system).
* :func:`cover_probability`: Cover's (1965) function-counting probability that a random
  dichotomy of ``m`` points in general position in ``R^d`` is separable by a hyperplane
  through the origin (no bias), ``C(m, d) / 2^m`` with ``C(m, d) = 2 sum_{k<d} binom(m-1, k)``.
* :func:`compatibility_threshold`: the count of equations against unknowns for
  compatibility, ``(V - 1) d >= m (S - 1)``.
* :func:`best_achievable_loss`: ``inf_W CE(W)``, exactly, by two convex methods that must
  agree: the primal (the separable part found by a linear program is sent to infinity, the
  rest minimized, where the minimum is attained) and the maximum-entropy dual.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import cvxpy as cp
import numpy as np
from scipy import sparse
from scipy.optimize import linprog, minimize
from scipy.special import logsumexp

from .. import settings
from ..errors import InvalidDataError, SolverError
from ..qp import solve_named
from ..validation import as_count, as_flag, check_dense_size, is_real
from .constraints import ntp_constraints
from .data import NTPData, require_data
from .datasets import dirichlet_on_supports
from .loss import entropy
from .separability import is_separable
from .subspace import f_decomposition, is_compatible

__all__ = [
    "random_instance",
    "condition_trial",
    "cover_probability",
    "compatibility_threshold",
    "compatibility_rank_bound",
    "separability_count_heuristic",
    "BestLoss",
    "recession_pairs",
    "best_achievable_loss",
]


def random_instance(m: int, d: int, V: int, S: int, rng: np.random.Generator) -> NTPData:
    """A random instance: ``h_j ~ N(0, I_d / d)``, ``S_j`` a uniform ``S``-subset of ``[V]``.

    ``p_j`` is uniform on the simplex of ``S_j`` (Dirichlet(1)) and ``pi`` is uniform. With
    ``S = 1`` every context has one uniformly random next token (one-hot labels).

    Raises
    ------
    InvalidDataError
        If a size is not a positive integer, ``V < 2`` or ``S > V``, ``rng`` is not a
        ``numpy.random.Generator``, or the arrays would exceed
        :data:`ntpnb.settings.MAX_DENSE_BYTES`.
    """
    m, d, V, S = (as_count(v, k) for k, v in {"m": m, "d": d, "V": V, "S": S}.items())
    if V < 2 or S > V:
        raise InvalidDataError(f"need V >= 2 and 1 <= S <= V, got V = {V}, S = {S}")
    if not isinstance(rng, np.random.Generator):
        raise InvalidDataError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    check_dense_size((m, max(d, V)), "H or the (m, V) probabilities")
    H = rng.standard_normal((m, d)) / np.sqrt(d)
    order = np.argsort(rng.random((m, V)), axis=1)
    mask = np.zeros((m, V), dtype=bool)
    np.put_along_axis(mask, order[:, :S], True, axis=1)
    P = dirichlet_on_supports(mask, rng)
    return NTPData(H=H, pi=np.full(m, 1.0 / m), P=P)


def compatibility_rank_bound(data: NTPData) -> int:
    """The count of unknowns against equations for compatibility, on one instance.

    ``rank(G) <= min(n_eq, sum_v min(d, m_v) - min(d, m))`` where ``G`` is the matrix of the
    ``n_eq = sum_j (S_j - 1)`` compatibility equations and ``m_v`` the number of contexts
    whose support holds token ``v``: row ``w_v`` of ``W`` enters the equations only through
    its projection on ``span{h_j : v in S_j}`` (dimension ``min(d, m_v)`` for generic
    embeddings), and ``W = 1 u^T`` changes no log-odds (a kernel of dimension ``min(d, m)``
    inside that space). Generic probabilities are matched iff ``rank(G) = n_eq``, so the data
    are not compatible when this bound is below ``n_eq``.
    """
    n_eq = int(ntp_constraints(data).eq.shape[0])
    m_v = data.support_mask.sum(axis=0)
    unknowns = int(np.minimum(data.d, m_v).sum()) - min(data.d, data.m)
    return min(n_eq, unknowns)


def condition_trial(point: dict[str, int], rng: np.random.Generator) -> dict[str, Any]:
    """One random instance at ``point = {"m", "d", "V", "S"}``: which conditions hold.

    Returns
    -------
    dict
        ``compatible`` and ``separable`` (bools), ``n_eq`` (number of compatibility
        equations ``sum_j (S_j - 1)``), ``rank`` (rank of their matrix, ``dim F``) and
        ``rank_bound`` (:func:`compatibility_rank_bound`).

    Raises
    ------
    InvalidDataError
        If ``point`` is not a mapping with the keys ``m, d, V, S``, or as
        :func:`random_instance`.
    """
    if not isinstance(point, Mapping) or not {"m", "d", "V", "S"} <= set(point):
        raise InvalidDataError(f"point must be a mapping with the keys m, d, V, S, got {point!r}")
    data = random_instance(point["m"], point["d"], point["V"], point["S"], rng)
    return {
        "compatible": bool(is_compatible(data)),
        "separable": bool(is_separable(data)),
        "n_eq": int(ntp_constraints(data).eq.shape[0]),
        "rank": int(f_decomposition(data).dim),
        "rank_bound": compatibility_rank_bound(data),
    }


def _binomial_head(n: int, K: int) -> int:
    """``sum_{k=0}^{K-1} binom(n, k)``, exactly, with at most ``n/2 + 1`` big-integer terms.

    The terms come from the recurrence ``binom(n, k+1) = binom(n, k) (n - k) / (k + 1)`` (exact
    integer division); past the middle the sum is ``2^n`` minus the (shorter) tail.
    """
    K = min(K, n + 1)
    if K > (n + 1) // 2:
        return 2**n - _binomial_head(n, n + 1 - K)
    total, term = 0, 1
    for k in range(K):
        total += term
        term = term * (n - k) // (k + 1)
    return total


def cover_probability(m: int, d: int, bias: bool = False) -> float:
    """Probability that a uniformly random dichotomy of ``m`` points is linearly separable.

    Cover (1965): ``m`` points in general position in ``R^d`` admit
    ``C(m, d) = 2 sum_{k=0}^{d-1} binom(m-1, k)`` dichotomies separable by a hyperplane
    through the origin; with a bias (an affine hyperplane) ``d`` becomes ``d + 1``. The result
    is ``C / 2^m``, the probability that a Binomial(m - 1, 1/2) variable is below ``d``,
    computed exactly in integer arithmetic and rounded once (correctly) to float64. The work
    grows like ``m^2``: at ``m = 20000`` it takes about 0.03 s, at
    :data:`ntpnb.settings.COVER_MAX_M` about 1 s.

    Raises
    ------
    InvalidDataError
        If ``m`` or ``d`` is not a positive integer, ``bias`` not a bool, or ``m`` exceeds
        :data:`ntpnb.settings.COVER_MAX_M` (checked before any work).
    """
    m, d = as_count(m, "m"), as_count(d, "d")
    bias = as_flag(bias, "bias")
    if m > settings.COVER_MAX_M:
        raise InvalidDataError(
            f"cover_probability: m = {m} points exceed ntpnb.settings.COVER_MAX_M = "
            f"{settings.COVER_MAX_M} (the exact sum takes time ~ m^2)"
        )
    k_max = d + 1 if bias else d
    return float(Fraction(_binomial_head(m - 1, k_max), 2 ** (m - 1)))


def compatibility_threshold(m: int, V: int, S: int) -> float:
    """The count for NTP_H-compatibility: ``d/m`` at which ``(V - 1) d = m (S - 1)``.

    The equations number ``m (S - 1)``; the unknowns are ``V d`` entries of ``W`` less the
    ``d``-dimensional kernel ``W = 1 u^T`` (adding ``u^T h`` to every logit changes no
    log-odds). Generic probabilities are matched iff the system has full row rank, which for
    generic embeddings needs ``(V - 1) d >= m (S - 1)``.
    """
    m, V, S = as_count(m, "m"), as_count(V, "V"), as_count(S, "S")
    if V < 2:
        raise InvalidDataError(f"V must be at least 2, got {V}")
    return (S - 1) / (V - 1)


def separability_count_heuristic(V: int, S: int) -> float:
    """A Cover-style count for NTP-separability: ``d/m = (V + S - 2) / (2 (V - 1))``.

    After the ``m (S - 1)`` equalities (6a), ``(V - 1) d - m (S - 1)`` free directions remain
    for ``m (V - S)`` homogeneous inequalities (6b); Cover's rule "feasible with probability
    1/2 when the inequalities are twice the dimension" gives this value. It is exact for the
    binary one-hot case (``V = 2, S = 1``: ``1/2``) and ignores the correlations between the
    ``V - S`` inequalities of one context, so it is only a heuristic elsewhere.
    """
    V, S = as_count(V, "V"), as_count(S, "S")
    if V < 2 or S >= V:
        raise InvalidDataError(f"need V >= 2 and S < V, got V = {V}, S = {S}")
    return (V + S - 2) / (2 * (V - 1))


# ---------------------------------------------------------------------- best achievable loss
def recession_pairs(data: NTPData) -> np.ndarray:
    """Which (context, out-of-support token) pairs can be driven to probability 0.

    A direction ``U`` lowers (or keeps) the loss at infinity iff it satisfies (6a) and the
    inequalities (6b) with margin ``>= 0`` instead of ``>= 1`` (the asymptotic slope of the
    loss of context ``j`` along ``U`` is ``max_v u_jv - sum_z p_jz u_jz >= 0``, with equality
    iff the in-support logits are equal and maximal). The pairs that some such ``U`` makes
    strict form the set ``I``; since these ``U`` form a convex cone, one ``U`` is strict on
    all of ``I``. The linear program ``max sum t`` subject to (6a), ``margin_i >= t_i``,
    ``0 <= t_i <= 1`` has ``t_i = 1`` on ``I`` and ``0`` elsewhere at any optimum.

    Returns
    -------
    numpy.ndarray
        Boolean mask over the inequality rows of :func:`ntp_constraints` (``True`` = in ``I``).

    Raises
    ------
    SolverError
        If the LP fails or its answer is not 0/1 or violates its constraints.
    """
    cons = ntp_constraints(data)
    n_ineq, n_w = cons.ineq.shape
    if n_ineq == 0:
        return np.zeros(0, dtype=bool)

    A_ub = sparse.hstack([-cons.ineq, sparse.identity(n_ineq)], format="csr")
    A_eq = None
    if cons.eq.shape[0]:
        A_eq = sparse.hstack([cons.eq, sparse.csr_matrix((cons.eq.shape[0], n_ineq))], format="csr")
    res = linprog(
        c=np.concatenate([np.zeros(n_w), -np.ones(n_ineq)]),
        A_ub=A_ub,
        b_ub=np.zeros(n_ineq),
        A_eq=A_eq,
        b_eq=np.zeros(A_eq.shape[0]) if A_eq is not None else None,
        bounds=[(None, None)] * n_w + [(0.0, 1.0)] * n_ineq,
        method=settings.LP_METHOD,
    )
    if res.status != 0:
        raise SolverError(f"the recession LP failed (linprog status {res.status}: {res.message})")
    w, t = res.x[:n_w], res.x[n_w:]
    tol = settings.LP_FEAS_TOL * (1.0 + np.abs(res.x).max())
    if np.any(np.minimum(np.abs(t), np.abs(1 - t)) > 1e-6):
        raise SolverError("the recession LP returned fractional pair indicators")
    strict = t > 0.5
    margins = cons.ineq @ w
    if margins.min() < -tol or np.any(margins[strict] < 1 - tol):
        raise SolverError("the recession LP returned a direction that violates its constraints")
    if cons.eq.shape[0] and np.abs(cons.eq @ w).max() > tol:
        raise SolverError("the recession LP returned a direction outside F-perp")
    return strict


@dataclass(frozen=True)
class BestLoss:
    """``inf_W CE(W)`` with the certificate of two methods.

    Attributes
    ----------
    value
        The infimum (the primal value; attained iff ``n_vanishing == 0``).
    entropy
        ``H``, the lower bound of claim A1.
    dual_value
        The maximum-entropy dual's value (the same number, by strong duality).
    dual_residual
        Largest violation of the dual's moment constraints at its solution.
    grad_norm
        Gradient norm of the reduced primal at its minimizer.
    n_vanishing
        Number of (context, token) pairs whose probability tends to 0 at the infimum (``|I|``).
    W
        Minimizer of the reduced problem (the infimum is approached by ``W + g U`` with ``U``
        a recession direction strict on ``I``, as ``g -> inf``).
    """

    value: float
    entropy: float
    dual_value: float
    dual_residual: float
    grad_norm: float
    n_vanishing: int
    W: np.ndarray

    @property
    def gap_to_entropy(self) -> float:
        """``inf CE - H``: how far above the entropy the loss must stay."""
        return self.value - self.entropy


def _reduced_objective(data: NTPData, allowed: np.ndarray):
    H, pi, P = data.H, data.pi, data.P
    mask = data.support_mask
    neg_inf = np.where(allowed, 0.0, -np.inf)

    def fun(w: np.ndarray) -> tuple[float, np.ndarray]:
        W = w.reshape(data.V, data.d)
        L = H @ W.T
        Lm = L + neg_inf
        lse = logsumexp(Lm, axis=1)
        Q = np.exp(Lm - lse[:, None])
        val = float(pi @ (lse - np.where(mask, P * L, 0.0).sum(axis=1)))
        G = ((Q - P) * pi[:, None]).T @ H
        return val, G.ravel()

    return fun


def _dual_max_entropy(data: NTPData, allowed: np.ndarray) -> tuple[float, float]:
    """The maximum-entropy dual of the best loss; returns (value, constraint residual).

    ``max sum_j pi_j Ent(q_j)`` over ``q_j`` in the simplex, zero off ``allowed``, with
    matched moments ``sum_j pi_j (q_j - p_j) h_j^T = 0``.

    Any feasible ``q`` gives a lower bound on ``inf CE`` (weak duality); zeros on the
    vanishing pairs keep the solver off the boundary of the exponential cone there.
    """
    H, pi, P = data.H, data.pi, data.P
    rows, cols = np.nonzero(allowed)
    n = rows.size
    x = cp.Variable(n, nonneg=True)
    row_sum = sparse.csr_matrix((np.ones(n), (rows, np.arange(n))), shape=(data.m, n))
    # moments: entry (v, k) of sum_j pi_j q_jv h_jk; one row per (v, k)
    k = np.arange(data.d)
    mom = sparse.csr_matrix(
        (
            (pi[rows, None] * H[rows]).ravel(),
            ((cols[:, None] * data.d + k).ravel(), np.repeat(np.arange(n), data.d)),
        ),
        shape=(data.V * data.d, n),
    )
    target = (P.T @ (pi[:, None] * H)).ravel()
    constraints = [row_sum @ x == 1, mom @ x == target]
    problem = cp.Problem(cp.Maximize(cp.sum(cp.multiply(pi[rows], cp.entr(x)))), constraints)
    solve_named(problem, settings.EXP_CONE_SOLVER, settings.EXP_CONE_OPTIONS, "the maximum-entropy dual")
    if x.value is None:
        raise SolverError(f"{settings.EXP_CONE_SOLVER} returned no point on the maximum-entropy dual")
    xv = np.maximum(np.asarray(x.value), 0.0)
    residual = max(float(np.abs(row_sum @ xv - 1).max()), float(np.abs(mom @ xv - target).max()))
    q = xv / (row_sum.T @ (row_sum @ xv))  # renormalize rows exactly before evaluating
    value = float(pi[rows] @ -(q * np.log(np.where(q > 0, q, 1.0))))
    return value, residual


def best_achievable_loss(data: NTPData, tol: float = settings.BEST_LOSS_TOL) -> BestLoss:
    """``inf_W CE(W)``, computed exactly and certified by two convex methods.

    1. Primal: :func:`recession_pairs` finds the pairs ``I`` whose probability can be sent to
       0. Removing them from the softmax leaves a convex problem whose recession directions
       are all directions of constancy, so its minimum is attained; L-BFGS minimizes it to a
       vanishing gradient. Its minimum is the infimum of CE.
    2. Dual (Fenchel; ``lse`` is conjugate to the negative entropy on the simplex):
       ``inf CE = max { sum_j pi_j Ent(q_j) : q_j in simplex, sum_j pi_j (q_j - p_j) h_j^T = 0 }``,
       a concave maximization that is always attained, solved with a named conic solver
       (:data:`ntpnb.settings.EXP_CONE_SOLVER`) with ``q`` fixed to 0 on the pairs ``I``.
       Every feasible ``q`` bounds ``inf CE`` from below, so the primal value (approached
       from above) and the dual value (a lower bound) agreeing certifies both.

    When the data are NTP_H-compatible and NTP-separable, ``q = p`` is optimal and both give
    ``H`` (Proposition 1).

    Raises
    ------
    InvalidDataError
        If ``data`` is not an :class:`NTPData` or ``tol`` is not a positive number.
    SolverError
        If a solver fails, the reduced gradient does not vanish, or the two values differ by
        more than ``tol``.
    """
    require_data(data)
    if not (is_real(tol) and tol > 0):
        raise InvalidDataError(f"tol must be a positive number, got {tol!r}")
    strict = recession_pairs(data)
    cons = ntp_constraints(data)
    allowed = np.ones((data.m, data.V), dtype=bool)
    allowed[cons.ineq_context[strict], cons.ineq_token[strict]] = False
    fun = _reduced_objective(data, allowed)
    res = minimize(
        fun,
        np.zeros(data.V * data.d),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 20000, "maxcor": 30, "gtol": 1e-11, "ftol": 1e-15},
    )
    value, grad = fun(res.x)
    grad_norm = float(np.linalg.norm(grad))
    if grad_norm > 1e-6:
        raise SolverError(f"the reduced primal did not converge: gradient norm {grad_norm:.2e}")
    dual_value, dual_residual = _dual_max_entropy(data, allowed)
    if abs(value - dual_value) > tol or dual_residual > tol:
        raise SolverError(
            f"primal {value:.10f} and maximum-entropy dual {dual_value:.10f} disagree "
            f"(dual residual {dual_residual:.1e})"
        )
    W = res.x.reshape(data.V, data.d)
    return BestLoss(
        value=value,
        entropy=entropy(data),
        dual_value=dual_value,
        dual_residual=dual_residual,
        grad_norm=grad_norm,
        n_vanishing=int(strict.sum()),
        W=W,
    )
