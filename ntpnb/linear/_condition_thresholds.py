r"""Random instances and the thresholds of Paper A's conditions on them; the best loss below.

When the conditions hold over random instances (chapter 5): one trial of a sweep
(:func:`condition_trial`), draws nested in ``d`` searched by bisection (:func:`nested_trial`),
Cover's probability and the counts of unknowns against equations; and the best loss when they
do not (:func:`best_achievable_loss`).

**Ambiguous draws.** A decision of a sweep's draw that float64 cannot make
(:class:`~ntpnb.errors.NumericallyAmbiguousError`, or a dimension of F that the spectrum does not
determine, :class:`~ntpnb.errors.RankAmbiguousError`) is never guessed and never stops the sweep:
the draw is excluded, replaced by a fresh draw from the same generator (at most
:data:`~ntpnb.settings.SWEEP_MAX_REDRAWS` times), and counted (``ambiguous`` of each trial). The
statistics of a sweep are then those of the draws float64 decides: the model conditioned on
being decided, which differs from it only by the ambiguous draws' share, which the count shows.
"""

from __future__ import annotations

import functools
import itertools
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import numpy as np
import scipy

from .. import settings
from .._qp import solve_named
from .._validation import as_count, as_flag, as_ordered, check_dense_size, frozen, is_real
from ..errors import (
    GenerationError,
    InvalidDataError,
    NumericallyAmbiguousError,
    RankAmbiguousError,
    SolverError,
)
from ._compatibility import is_compatible
from ._constraints import margin_lp, ntp_constraints
from ._loss import entropy, logits, softmax
from ._ntp_data import NTPData, require_data
from ._recipes import dirichlet_on_supports
from ._separability import is_separable
from ._subspace import f_decomposition


def random_instance(m: int, d: int, V: int, S: int, rng: np.random.Generator) -> NTPData:
    """A random instance: ``h_j ~ N(0, I_d / d)``, ``S_j`` a uniform ``S``-subset of ``[V]``.

    ``p_j`` uniform on the simplex of ``S_j`` (Dirichlet(1)), ``pi`` uniform: the draw of
    ``nested_instance(m, d, V, S, rng).at(d)``.

    Raises
    ------
    InvalidDataError
        If a size is not a positive integer, ``V < 2`` or ``S > V``, ``rng`` is not a
        ``numpy.random.Generator``, or the arrays would exceed
        :data:`ntpnb.settings.MAX_DENSE_BYTES`.
    """
    d = as_count(d, "d")
    return nested_instance(m, d, V, S, rng).at(d)


@dataclass(frozen=True, eq=False)
class NestedInstance:
    """One draw of :func:`random_instance`'s model for every ``d = 1, ..., d_max``, nested in ``d``.

    At ``d`` (:meth:`at`), ``h_j = z_j[:d] / sqrt(d)`` with the same supports and probabilities:
    at each ``d`` the distribution of :func:`random_instance`, dependent across ``d``. Both
    conditions, and ``dim F``, are monotone in ``d`` (a zero column appended to ``W``, rescaled
    by ``sqrt((d + 1) / d)``, reaches at ``d + 1`` every logit matrix reachable at ``d``).
    """

    #: ``(m, d_max)`` standard normal embedding coordinates (read-only).
    Z: np.ndarray
    #: ``(m, V)`` next-token probabilities (read-only).
    P: np.ndarray
    _at: dict[int, NTPData] = field(default_factory=dict, repr=False, compare=False)

    def at(self, d: int) -> NTPData:
        """The instance at dimension ``d`` in ``[1, d_max]`` (one object per ``d``: derived data cached)."""
        if d not in self._at:
            m = self.Z.shape[0]
            self._at[d] = NTPData(H=self.Z[:, :d] / np.sqrt(d), pi=np.full(m, 1.0 / m), P=self.P)
        return self._at[d]


def nested_instance(m: int, d_max: int, V: int, S: int, rng: np.random.Generator) -> NestedInstance:
    """A random instance for every ``d`` up to ``d_max`` at once, from the same calls to ``rng``.

    ``nested_instance(m, d_max, V, S, rng).at(d_max)`` is ``random_instance(m, d_max, V, S, rng)``.

    Raises
    ------
    InvalidDataError
        As :func:`random_instance`.
    """
    m, d_max, V, S = (as_count(v, k) for k, v in {"m": m, "d_max": d_max, "V": V, "S": S}.items())
    if V < 2 or S > V:
        raise InvalidDataError(f"need V >= 2 and 1 <= S <= V, got V = {V}, S = {S}")
    if not isinstance(rng, np.random.Generator):
        raise InvalidDataError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    check_dense_size((m, max(d_max, V)), "H or the (m, V) probabilities")
    Z = rng.standard_normal((m, d_max))
    order = np.argsort(rng.random((m, V)), axis=1)
    mask = np.zeros((m, V), dtype=bool)
    np.put_along_axis(mask, order[:, :S], True, axis=1)
    P = dirichlet_on_supports(mask, rng)
    return NestedInstance(Z=frozen(Z), P=frozen(P))


def compatibility_rank_bound(mask: np.ndarray, ds: np.ndarray) -> np.ndarray:
    """The count of unknowns against equations for compatibility, at every dimension ``d`` of ``ds``.

    For supports ``mask`` (``m x V``): ``rank(G) <= min(n_eq, sum_v min(d, m_v) - min(d, m))``
    where ``G`` is the matrix of the ``n_eq = sum_j (S_j - 1)`` compatibility equations and
    ``m_v`` the number of contexts whose support holds token ``v``: row ``w_v`` enters only
    through its projection on ``span{h_j : v in S_j}``, and ``W = 1 u^T`` (a kernel of dimension
    ``min(d, m)``) changes no log-odds. Generic probabilities are matched iff ``rank(G) = n_eq``.
    """
    n_eq = int(mask.sum()) - int(np.count_nonzero(mask.any(axis=1)))  # sum_j (S_j - 1)
    m_v = mask.sum(axis=0)
    unknowns = np.minimum(ds[:, None], m_v).sum(axis=1) - np.minimum(ds, mask.shape[0])
    return np.minimum(n_eq, unknowns)


_Result = TypeVar("_Result")

#: The errors that make a sweep's draw ambiguous (:func:`decided_draw`).
AMBIGUOUS_ERRORS: tuple[type[Exception], ...] = (NumericallyAmbiguousError, RankAmbiguousError)


def decided_draw(draw: Callable[[], _Result], what: str) -> tuple[_Result, int]:
    """``draw()`` until one is decided: its result and the number of ambiguous draws replaced.

    ``draw`` makes one random draw (from a generator it shares with its next call) and decides
    it; a draw whose decision is numerically ambiguous (:data:`AMBIGUOUS_ERRORS`) is replaced
    (the module docstring).

    Raises
    ------
    GenerationError
        If :data:`~ntpnb.settings.SWEEP_MAX_REDRAWS` redraws in a row are ambiguous too; the
        message gives the last ambiguity.
    """
    for ambiguous in range(settings.SWEEP_MAX_REDRAWS + 1):
        try:
            return draw(), ambiguous
        except AMBIGUOUS_ERRORS as exc:
            logging.getLogger(__name__).info("%s: ambiguous draw replaced: %s", what, exc)
            last = exc
    raise GenerationError(
        f"{what}: {settings.SWEEP_MAX_REDRAWS + 1} draws in a row were numerically ambiguous "
        f"(the last: {last})"
    )


def condition_trial(point: Mapping[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    """One random instance at ``point = {"m", "d", "V", "S"}``: which conditions hold.

    A draw whose decision is numerically ambiguous is replaced by a fresh one and counted
    (:func:`decided_draw`).

    Returns
    -------
    dict
        ``compatible`` and ``separable`` (bools), ``n_eq`` (number of compatibility
        equations), ``rank`` (``dim F``), ``rank_bound`` (:func:`compatibility_rank_bound`) and
        ``ambiguous`` (the ambiguous draws replaced before this one).

    Raises
    ------
    InvalidDataError
        If ``point`` lacks a key, or as :func:`random_instance`.
    GenerationError
        As :func:`decided_draw`.
    """
    if not isinstance(point, Mapping) or not {"m", "d", "V", "S"} <= set(point):
        raise InvalidDataError(f"point must be a mapping with the keys m, d, V, S, got {point!r}")

    def draw() -> dict[str, Any]:
        data = random_instance(point["m"], point["d"], point["V"], point["S"], rng)
        return {
            "compatible": bool(is_compatible(data)),
            "separable": bool(is_separable(data)),
            "n_eq": int(data.support_mask.sum()) - data.m,  # sum_j (S_j - 1)
            "rank": int(f_decomposition(data).dim),
            "rank_bound": int(compatibility_rank_bound(data.support_mask, np.array([data.d]))[0]),
        }

    result, ambiguous = decided_draw(draw, f"condition_trial at {dict(point)}")
    return {**result, "ambiguous": ambiguous}


def first_true(
    decide: Callable[[int], bool], n: int, start: int | None = None, guess: int | None = None
) -> int:
    """The first index ``i`` in ``range(n)`` where a monotone ``decide`` holds (``n`` if none does).

    Bisection, about ``log2(n) + 1`` calls (never one at ``n``). The answer does not depend on
    ``start`` or ``guess``, only the number of calls does.

    Parameters
    ----------
    start
        Decided first: an index in ``range(n)`` where the answer is expected to be True.
    guess
        The expected answer, an index in ``range(n)``: the search gallops from it (``guess``, then
        ``guess -+ 1``, then steps of 2, 4, ...) before it bisects; an exact guess costs two calls.
    """
    lo, hi = 0, n  # decide is False below lo and True at hi (hi = n: not known to hold anywhere)

    def probe(i: int) -> bool:
        nonlocal lo, hi
        if decide(i):
            hi = i
            return True
        lo = i + 1
        return False

    if start is not None:
        probe(start)
    if guess is not None and lo <= guess < hi:
        below = probe(guess)  # True: the answer is at or below the guess
        step = 1
        while lo < hi:
            i = guess - step if below else guess + step
            if not lo <= i < hi or probe(i) != below:
                break
            step *= 2
    while lo < hi:
        probe((lo + hi) // 2)
    return lo


@dataclass(frozen=True)
class NestedTrial:
    """One nested draw (:func:`nested_trial`) on a grid of ``d``: where each condition starts to hold."""

    #: The grid index of the first ``d`` where the draw is NTP_H-compatible (the grid's length if none).
    compatible_from: int
    #: The same for NTP-separable.
    separable_from: int
    #: Number of compatibility equations ``sum_j (S_j - 1)``.
    n_eq: int
    #: :func:`compatibility_rank_bound` at every ``d`` of the grid.
    rank_bound: tuple[int, ...]
    #: Every decision made, ``{grid index: holds}``.
    compatible: dict[int, bool]
    #: Every decision made, ``{grid index: holds}``.
    separable: dict[int, bool]
    #: ``dim F`` wherever compatibility was decided, ``{grid index: rank}``.
    rank: dict[int, int]
    #: Numerically ambiguous draws replaced before this one (:func:`decided_draw`).
    ambiguous: int = 0


def nested_trial(point: Mapping[str, Any], rng: np.random.Generator) -> NestedTrial:
    """One nested draw (:func:`nested_instance`) decided on a grid of ``d``, a trial for ``run_sweep``.

    ``point`` has the keys ``m``, ``V``, ``S``, ``d`` (the increasing grid) and optionally
    ``guess``, a dimension near which separability is expected to set in. Both searches
    (:func:`first_true`) decide first at the smallest grid ``d > m`` (where Lemma 1 says both
    hold); separability gallops from the grid point nearest ``guess``,
    compatibility from the first ``d`` where :func:`compatibility_rank_bound` reaches the number
    of equations. Wherever separability is decided so is compatibility (if there are equations),
    and wherever compatibility is decided ``dim F`` is recorded. A draw with a numerically
    ambiguous decision is replaced by a fresh one and counted (:func:`decided_draw`).

    Raises
    ------
    InvalidDataError
        If ``point`` lacks a key, the grid is not an increasing sequence of positive integers, or
        as :func:`nested_instance`.
    GenerationError
        As :func:`decided_draw`.
    """
    if not isinstance(point, Mapping) or not {"m", "V", "S", "d"} <= set(point):
        raise InvalidDataError(f"point must be a mapping with the keys m, V, S, d, got {point!r}")
    grid = tuple(as_count(d, "d") for d in as_ordered(point["d"], "d"))
    if not grid or any(b <= a for a, b in itertools.pairwise(grid)):
        raise InvalidDataError(f"the grid of d must be a non-empty increasing sequence, got {point['d']!r}")
    guess = point.get("guess")
    if guess is not None:
        if not (is_real(guess) and np.isfinite(guess)):
            raise InvalidDataError(f"guess must be a finite number (a dimension d), got {guess!r}")
        guess = int(np.argmin(np.abs(np.array(grid) - guess)))
    draw = functools.partial(nested_instance, point["m"], grid[-1], point["V"], point["S"], rng)
    trial, ambiguous = decided_draw(lambda: _searched(draw(), grid, guess), f"nested_trial at {dict(point)}")
    return replace(trial, ambiguous=ambiguous)


def _searched(draw: NestedInstance, grid: tuple[int, ...], guess: int | None) -> NestedTrial:
    """The searches of :func:`nested_trial` on one draw (``guess`` a grid index or None)."""
    m = draw.Z.shape[0]
    mask = draw.at(grid[0]).support_mask
    n_eq = int(mask.sum()) - m
    bound = tuple(int(b) for b in compatibility_rank_bound(mask, np.array(grid)))
    start = next((i for i, d in enumerate(grid) if d > m), None)
    count = next((i for i, b in enumerate(bound) if b == n_eq), None)
    compatible: dict[int, bool] = {}
    separable: dict[int, bool] = {}
    rank: dict[int, int] = {}

    def decide_compatible(i: int) -> bool:
        if i not in compatible:
            data = draw.at(grid[i])
            compatible[i] = bool(is_compatible(data))
            rank[i] = int(f_decomposition(data).dim)
        return compatible[i]

    def decide_separable(i: int) -> bool:
        separable[i] = bool(is_separable(draw.at(grid[i])))
        if n_eq:  # with no equations compatibility holds everywhere: nothing to learn
            decide_compatible(i)
        return separable[i]

    return NestedTrial(
        compatible_from=first_true(decide_compatible, len(grid), start, count),
        separable_from=first_true(decide_separable, len(grid), start, guess),
        n_eq=n_eq,
        rank_bound=bound,
        compatible=compatible,
        separable=separable,
        rank=rank,
    )


def _binomial_head(n: int, K: int) -> int:
    """``sum_{k=0}^{K-1} binom(n, k)``, exactly, with at most ``n/2 + 1`` big-integer terms."""
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
    through the origin; with a bias ``d`` becomes ``d + 1``. ``C / 2^m`` is computed exactly in
    integers and rounded once to float64 (work ~ ``m^2``).

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
    return _binomial_head(m - 1, k_max) / 2 ** (m - 1)  # int / int: correctly rounded, once


def compatibility_threshold(m: int, V: int, S: int) -> float:
    """The count for NTP_H-compatibility: ``d/m`` at which ``(V - 1) d = m (S - 1)``.

    ``m (S - 1)`` equations; ``V d`` unknowns less the kernel ``W = 1 u^T`` (no log-odds change).
    """
    m, V, S = as_count(m, "m"), as_count(V, "V"), as_count(S, "S")
    if V < 2:
        raise InvalidDataError(f"V must be at least 2, got {V}")
    return (S - 1) / (V - 1)


def separability_count_heuristic(V: int, S: int) -> float:
    """A Cover-style count for NTP-separability: ``d/m = (V + S - 2) / (2 (V - 1))``.

    ``(V - 1) d - m (S - 1)`` free directions for ``m (V - S)`` homogeneous inequalities (6b),
    feasible with probability 1/2 at twice the dimension (Cover): exact for ``V = 2, S = 1``,
    a heuristic elsewhere (it ignores correlations within a context).
    """
    V, S = as_count(V, "V"), as_count(S, "S")
    if V < 2 or S >= V:
        raise InvalidDataError(f"need V >= 2 and S < V, got V = {V}, S = {S}")
    return (V + S - 2) / (2 * (V - 1))


# ---------------------------------------------------------------------- best achievable loss
def recession_pairs(data: NTPData) -> np.ndarray:
    """Which (context, out-of-support token) pairs can be driven to probability 0.

    A direction ``U`` lowers (or keeps) the loss at infinity iff it satisfies (6a) and (6b) with
    margin ``>= 0`` instead of ``>= 1``. The pairs some such ``U`` makes strict form ``I`` (one
    ``U`` is strict on all of it), so the LP ``max sum t`` subject to (6a), ``margin_i >= t_i``,
    ``0 <= t_i <= 1`` has ``t = 1`` exactly on ``I``.

    Returns a boolean mask over the inequality rows of :func:`ntp_constraints` (``True`` = in ``I``).
    """
    cons = ntp_constraints(data)
    n_ineq, n_w = cons.ineq.shape
    if n_ineq == 0:
        return np.zeros(0, dtype=bool)
    bounds = [(None, None)] * n_w + [(0.0, 1.0)] * n_ineq
    res = margin_lp(cons.ineq, cons.eq, scipy.sparse.identity(n_ineq), bounds, settings.LP_METHOD)
    if res.status != 0:
        raise SolverError(f"the recession LP failed (linprog status {res.status}: {res.message})")
    w, t = res.x[:n_w], res.x[n_w:]
    tol = settings.LP_POINT_FEAS_RTOL * (1.0 + np.abs(res.x).max())
    if np.any(np.minimum(np.abs(t), np.abs(1 - t)) > settings.RECESSION_INDICATOR_TOL):
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
    """``inf_W CE(W)`` with the certificate of two methods."""

    #: The infimum (the primal value; attained iff ``n_vanishing == 0``).
    value: float
    #: ``H``, the lower bound of claim A1.
    entropy: float
    #: The maximum-entropy dual's value (the same number, by strong duality).
    dual_value: float
    #: Largest violation of the dual's moment constraints at its solution.
    dual_residual: float
    #: Gradient norm of the reduced primal at its minimizer.
    grad_norm: float
    #: Number of (context, token) pairs whose probability tends to 0 at the infimum (``|I|``).
    n_vanishing: int
    #: Minimizer of the reduced problem (the infimum is approached by ``W + g U``, ``g -> inf``).
    W: np.ndarray

    @property
    def gap_to_entropy(self) -> float:
        """``inf CE - H``: how far above the entropy the loss must stay."""
        return self.value - self.entropy


def _dual_constraints(data: NTPData, allowed: np.ndarray) -> tuple[scipy.sparse.csr_matrix, np.ndarray]:
    """The dual's constraints ``A x = b`` on the allowed pairs' ``q_jv`` (row-major).

    The first ``m`` rows are the row sums (``= 1``), the other ``V d`` the moments
    ``sum_j pi_j q_jv h_jk = sum_j pi_j p_jv h_jk``.
    """
    H, pi, P = data.H, data.pi, data.P
    rows, cols = np.nonzero(allowed)
    n = rows.size
    row_sum = scipy.sparse.csr_matrix((np.ones(n), (rows, np.arange(n))), shape=(data.m, n))
    k = np.arange(data.d)
    mom = scipy.sparse.csr_matrix(
        (
            (pi[rows, None] * H[rows]).ravel(),
            ((cols[:, None] * data.d + k).ravel(), np.repeat(np.arange(n), data.d)),
        ),
        shape=(data.V * data.d, n),
    )
    A = scipy.sparse.vstack([row_sum, mom], format="csr")
    b = np.concatenate([np.ones(data.m), (P.T @ (pi[:, None] * H)).ravel()])
    return A, b


def _dual_value(
    data: NTPData, allowed: np.ndarray, x: np.ndarray, A: scipy.sparse.csr_matrix, b: np.ndarray
) -> tuple[float, float]:
    """``sum_j pi_j Ent(q_j)`` at ``x`` (rows renormalized exactly first), and ``max |A x - b|``."""
    rows = np.nonzero(allowed)[0]
    residual = float(np.abs(A @ x - b).max())
    q = x / np.bincount(rows, weights=x, minlength=data.m)[rows]
    value = float(data.pi[rows] @ -(q * np.log(np.where(q > 0, q, 1.0))))
    return value, residual


def _minimize_reduced(data: NTPData, allowed: np.ndarray, max_iter: int) -> tuple[np.ndarray, float, float]:
    """L-BFGS on the loss with the pairs off ``allowed`` removed: ``(W, value, gradient norm)``."""
    H, pi, P = data.H, data.pi, data.P
    neg_inf = np.where(allowed, 0.0, -np.inf)

    def fun(w: np.ndarray) -> tuple[float, np.ndarray]:
        L = H @ w.reshape(data.V, data.d).T
        Lm = L + neg_inf
        lse = scipy.special.logsumexp(Lm, axis=1)
        Q = np.exp(Lm - lse[:, None])
        val = float(pi @ (lse - np.where(data.support_mask, P * L, 0.0).sum(axis=1)))
        return val, (((Q - P) * pi[:, None]).T @ H).ravel()

    res = scipy.optimize.minimize(
        fun,
        np.zeros(data.V * data.d),
        jac=True,
        method="L-BFGS-B",
        options={
            "maxiter": max_iter,
            "maxcor": 30,
            "gtol": settings.BEST_LOSS_LBFGS_GTOL,
            "ftol": settings.BEST_LOSS_LBFGS_FTOL,
        },
    )
    value, grad = fun(res.x)
    return res.x.reshape(data.V, data.d), value, float(np.linalg.norm(grad))


def _best_loss_no_vanishing_pair(data: NTPData) -> BestLoss | None:
    """:func:`best_achievable_loss` when a dual point certifies that no pair vanishes, else None.

    The minimizer's probabilities, made feasible (``A x = b``) by a least-norm correction, are a
    dual point ``q`` (a lower bound on ``inf CE``); ``q > 0`` on every out-of-support pair
    certifies that no pair vanishes: along a ``U`` with (6a) and margins ``>= 0``, matched
    moments give ``sum_j pi_j sum_{v not in S_j} q_jv (u_jv - s_j) = 0`` with every term
    ``<= 0``, so every margin is 0.
    """
    allowed = np.ones((data.m, data.V), dtype=bool)
    W, value, grad_norm = _minimize_reduced(data, allowed, settings.BEST_LOSS_DIRECT_MAX_ITER)
    if grad_norm > settings.BEST_LOSS_GRAD_TOL:
        return None
    A, b = _dual_constraints(data, allowed)
    x = softmax(logits(data, W)).ravel()
    gram = (A @ A.T).toarray()
    for _ in range(2):  # the correction and one refinement step
        x = x + A.T @ np.linalg.lstsq(gram, b - A @ x, rcond=None)[0]
    if np.abs(A @ x - b).max() > settings.BEST_LOSS_DUAL_FEAS_TOL:
        return None
    if x.reshape(data.m, data.V)[~data.support_mask].min(initial=np.inf) < settings.BEST_LOSS_MIN_PROB:
        return None
    dual_value, dual_residual = _dual_value(data, allowed, x, A, b)
    if abs(value - dual_value) > settings.BEST_LOSS_TOL:
        return None
    return BestLoss(value, entropy(data), dual_value, dual_residual, grad_norm, 0, W)


def best_achievable_loss(data: NTPData) -> BestLoss:
    """``inf_W CE(W)``, computed exactly and certified by a primal and a dual method.

    1. Primal: without the pairs ``I`` of :func:`recession_pairs` the loss is convex with an
       attained minimum (its recession directions are directions of constancy); L-BFGS
       minimizes it to a vanishing gradient.
    2. Dual (Fenchel): ``inf CE = max { sum_j pi_j Ent(q_j) : q_j in simplex,
       sum_j pi_j (q_j - p_j) h_j^T = 0 }``, attained with ``q = 0`` on ``I``; every feasible
       ``q`` is a lower bound, so the two values agreeing (to
       :data:`ntpnb.settings.BEST_LOSS_TOL`) certifies both.

    The minimizer over all pairs comes first: its corrected probabilities, clearly positive off
    the supports, certify ``I`` empty and the value. Otherwise ``I`` comes from the LP and the
    dual from :data:`ntpnb.settings.EXP_CONE_SOLVER`. Compatible and separable data give ``H``
    (Proposition 1).

    Raises
    ------
    InvalidDataError
        If ``data`` is not an :class:`NTPData`.
    SolverError
        If a solver fails, the reduced gradient does not vanish, or the two values differ by
        more than the tolerance.
    """
    require_data(data)
    found = _best_loss_no_vanishing_pair(data)
    if found is not None:
        return found
    strict = recession_pairs(data)
    cons = ntp_constraints(data)
    allowed = np.ones((data.m, data.V), dtype=bool)
    allowed[cons.ineq_context[strict], cons.ineq_token[strict]] = False
    W, value, grad_norm = _minimize_reduced(data, allowed, 20000)
    if grad_norm > settings.BEST_LOSS_GRAD_TOL:
        raise SolverError(f"the reduced primal did not converge: gradient norm {grad_norm:.2e}")
    # the maximum-entropy dual by the conic solver; zeros on the vanishing pairs keep it off the
    # boundary of the exponential cone there
    import cvxpy as cp  # a second of import, for this one solve

    A, b = _dual_constraints(data, allowed)
    x = cp.Variable(A.shape[1], nonneg=True)
    pi = data.pi[np.nonzero(allowed)[0]]
    problem = cp.Problem(cp.Maximize(cp.sum(cp.multiply(pi, cp.entr(x)))), [A @ x == b])
    solve_named(problem, settings.EXP_CONE_SOLVER, settings.EXP_CONE_OPTIONS, "the maximum-entropy dual")
    if x.value is None:
        raise SolverError(f"{settings.EXP_CONE_SOLVER} returned no point on the maximum-entropy dual")
    dual_value, dual_residual = _dual_value(data, allowed, np.maximum(np.asarray(x.value), 0.0), A, b)
    if max(abs(value - dual_value), dual_residual) > settings.BEST_LOSS_TOL:
        raise SolverError(
            f"primal {value:.10f} and maximum-entropy dual {dual_value:.10f} disagree "
            f"(dual residual {dual_residual:.1e})"
        )
    return BestLoss(value, entropy(data), dual_value, dual_residual, grad_norm, int(strict.sum()), W)
