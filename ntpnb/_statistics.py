"""Statistics of many random trials: intervals, threshold crossings, finite-size fits, tests.

Summaries of the sweeps of :mod:`ntpnb._parallel`: Wilson intervals, where a curve crosses a
level (bracketed by Wilson intervals, or with a bootstrap error over whole nested draws), the
drift of such a threshold with size, a goodness-of-fit test with a simulated null distribution,
the bootstrap of a heavy-tailed mean, Fisher's exact test, and the exact test of a trend in rates
with its power.

The statistical claim checks built on them (a :class:`~ntpnb.evidence._samples.Sample` tested at each seed
and pooled over a sweep) are :mod:`ntpnb.evidence._samples`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy
from numpy.typing import ArrayLike

from . import settings
from ._validation import (
    as_count,
    as_float_array,
    as_generator,
    as_ordered,
    check_dense_size,
    is_real,
)
from .errors import InvalidDataError


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``successes / n`` (scipy's ``binomtest``).

    Unlike the Wald interval it stays inside [0, 1] and is not degenerate at 0 or ``n`` successes;
    its ends are exactly 0 and 1 there.

    Raises
    ------
    InvalidDataError
        If ``n`` is not a positive integer, ``successes`` not an integer in ``[0, n]``, or
        ``confidence`` not a number in (0, 1).
    """
    n = as_count(n, "n")
    successes = as_count(successes, "successes", minimum=0)
    if successes > n:
        raise InvalidDataError(f"need 0 <= successes <= n and n >= 1, got {successes} of {n}")
    if not (is_real(confidence) and 0 < confidence < 1):
        raise InvalidDataError(f"confidence must be a number in (0, 1), got {confidence!r}")
    interval = scipy.stats.binomtest(successes, n).proportion_ci(float(confidence), method="wilson")
    lo = 0.0 if successes == 0 else max(0.0, float(interval.low))  # exact ends (no rounding)
    hi = 1.0 if successes == n else min(1.0, float(interval.high))
    return lo, hi


def crossing(x: Sequence[float], y: Sequence[float], level: float = 0.5) -> float:
    """Where a curve first crosses ``level`` from below, by linear interpolation.

    Returns ``x[0]`` if ``y[0] >= level`` already, and NaN if the curve never reaches it.

    Raises
    ------
    InvalidDataError
        If ``x`` or ``y`` is not a finite 1-D numeric sequence (a set has no order), they differ
        in length, ``x`` is not increasing, or ``level`` is not a finite number.
    """
    x = as_float_array(as_ordered(x, "x"), "x", 1)
    y = as_float_array(as_ordered(y, "y"), "y", 1)
    if not (is_real(level) and np.isfinite(level)):
        raise InvalidDataError(f"level must be a finite number, got {level!r}")
    if x.shape != y.shape or x.size == 0:
        raise InvalidDataError(f"x and y must be 1-D of the same length, got {x.shape} and {y.shape}")
    if np.any(np.diff(x) <= 0):
        raise InvalidDataError("x must be strictly increasing")
    return float(_first_crossings(x, y[None, :], level)[0])


def crossing_interval(x: Sequence[float], successes: Sequence[int], n: int) -> tuple[float, float]:
    """Where a measured proportion crosses 1/2, with its uncertainty from 95% Wilson intervals.

    ``successes[i]`` of ``n`` trials succeeded at ``x[i]``. The interval runs from the crossing of
    the upper Wilson bounds (below it the proportion is significantly under 1/2) to the crossing
    of the lower ones (above it, significantly over); the upper end is NaN if the lower bounds
    never reach 1/2 on the grid.

    Raises
    ------
    InvalidDataError
        On bad counts (see :func:`wilson_interval`) or a bad grid (see :func:`crossing`).
    """
    bounds = np.array([wilson_interval(int(k), n) for k in successes]).reshape(-1, 2)
    return crossing(x, bounds[:, 1]), crossing(x, bounds[:, 0])


def _whole_numbers(values: Sequence[int], top: int, name: str) -> np.ndarray:
    """``values`` as a non-empty 1-D int64 array of whole numbers in ``[0, top]``."""
    array = as_float_array(as_ordered(values, name), name, 1)
    if array.size == 0:
        raise InvalidDataError(f"{name} must be a non-empty 1-D sequence")
    if np.any(array != np.floor(array)) or np.any(array < 0) or np.any(array > top):
        raise InvalidDataError(f"{name} must hold whole numbers in [0, {top}], got {array.tolist()}")
    return array.astype(np.int64)


def _first_crossings(x: np.ndarray, y: np.ndarray, level: float) -> np.ndarray:
    """:func:`crossing` of every row of ``y`` (2-D) on the grid ``x``, vectorized."""
    above = y >= level
    first = np.argmax(above, axis=1)
    rows = np.arange(y.shape[0])
    before = np.maximum(first - 1, 0)
    y0, y1 = y[rows, before], y[rows, first]
    x0, x1 = x[before], x[first]
    with np.errstate(divide="ignore", invalid="ignore"):
        inner = x0 + (level - y0) * (x1 - x0) / (y1 - y0)
    out = np.where(first == 0, x[0], inner)
    return np.where(above.any(axis=1), out, np.nan)


def threshold_crossing_bootstrap(
    x: Sequence[float], first: Sequence[int], rng: int | np.random.Generator, n_boot: int = 2000
) -> tuple[float, float]:
    """Where the fraction of draws whose threshold is at most ``x`` crosses 1/2, with a bootstrap error.

    Draw ``k`` succeeds exactly at the grid points from index ``first[k]`` on (``len(x)``: at
    none), as a draw nested in the grid does. Returns :func:`crossing` of the fraction of draws
    with ``first <= i``, and its standard error over ``n_boot`` replicates resampling whole draws
    (the counts are dependent across points); both NaN if a curve never reaches 1/2. The grid's
    resolution is not part of the error.

    Raises
    ------
    InvalidDataError
        On a bad grid (see :func:`crossing`), indices that are not whole numbers in
        ``[0, len(x)]``, a bad ``n_boot`` or ``rng``.
    """
    n_boot = as_count(n_boot, "n_boot", minimum=2)
    grid = as_float_array(as_ordered(x, "x"), "x", 1)
    idx = _whole_numbers(first, grid.size, "first")
    at_most = np.arange(grid.size)
    estimate = crossing(grid, (idx[:, None] <= at_most).mean(axis=0))  # validates x
    check_dense_size((n_boot, idx.size), "the bootstrap replicates")
    draws = idx[as_generator(rng, "rng").integers(0, idx.size, size=(n_boot, idx.size))]
    counts = np.cumsum(np.stack([np.bincount(row, minlength=grid.size + 1) for row in draws]), axis=1)
    crossings = _first_crossings(grid, counts[:, : grid.size] / idx.size, 0.5)
    if np.isnan(estimate) or np.any(np.isnan(crossings)):
        return estimate, float("nan")
    if np.all(crossings == crossings[0]):  # no spread (np.std would leave rounding of the mean)
        return estimate, 0.0
    return estimate, float(np.std(crossings, ddof=1))


@dataclass(frozen=True)
class FiniteSizeFit:
    """The fit ``value = limit + slope / size`` of :func:`finite_size_fit`."""

    #: The extrapolation to ``size -> infinity``, the coefficient of ``1 / size``, and their
    #: standard errors.
    limit: float
    limit_se: float
    slope: float
    slope_se: float
    #: Sum of the squared residuals in units of their standard errors, and its degrees of
    #: freedom (the number of sizes minus 2).
    chi2: float
    dof: int


def finite_size_fit(
    sizes: Sequence[float], values: Sequence[float], errors: Sequence[float]
) -> FiniteSizeFit:
    """Weighted (``1 / errors**2``) least-squares fit of ``values = limit + slope / sizes``.

    The standard errors are not rescaled by the residuals (compare ``chi2`` with ``dof``). ``1 /
    size`` is a model of the drift, not a law. Closed form, no BLAS (the same bits on every CPU).

    Raises
    ------
    InvalidDataError
        If the inputs are not finite 1-D sequences of one length, a size or an error is not
        positive, or there are fewer than two distinct sizes.
    """
    sizes = as_float_array(as_ordered(sizes, "sizes"), "sizes", 1)
    values = as_float_array(as_ordered(values, "values"), "values", 1)
    errors = as_float_array(as_ordered(errors, "errors"), "errors", 1)
    if not sizes.shape == values.shape == errors.shape:
        shapes = f"{sizes.shape}, {values.shape}, {errors.shape}"
        raise InvalidDataError(f"sizes, values and errors must be 1-D of one length, got {shapes}")
    if np.any(sizes <= 0) or np.any(errors <= 0):
        raise InvalidDataError(
            f"sizes and errors must be positive, got {sizes.tolist()} and {errors.tolist()}"
        )
    if np.unique(sizes).size < 2:
        raise InvalidDataError(f"the fit needs at least two distinct sizes, got {sizes.tolist()}")
    w, u = 1.0 / errors**2, 1.0 / sizes
    s, su, suu = w.sum(), (w * u).sum(), (w * u * u).sum()
    sy, suy = (w * values).sum(), (w * u * values).sum()
    det = s * suu - su * su
    limit, slope = (suu * sy - su * suy) / det, (s * suy - su * sy) / det
    chi2 = float((w * (values - limit - slope * u) ** 2).sum())
    limit_se, slope_se = float(np.sqrt(suu / det)), float(np.sqrt(s / det))
    return FiniteSizeFit(float(limit), limit_se, float(slope), slope_se, chi2, sizes.size - 2)


def binomial_deviance(successes: np.ndarray, probs: np.ndarray, n: int) -> np.ndarray:
    r"""The likelihood-ratio (G) statistic of binomial counts against probabilities.

    ``G = 2 sum_i [k_i log(k_i / (n p_i)) + (n - k_i) log((n - k_i) / (n (1 - p_i)))]`` over the
    last axis (zero-count terms are 0); ``inf`` when a count is impossible under ``probs``.
    ``successes`` may have leading axes (many simulated data sets); no validation.
    """
    k = np.asarray(successes, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        hit = np.where(k > 0, k * np.log(k / (n * probs)), 0.0)
        miss = np.where(k < n, (n - k) * np.log((n - k) / (n * (1 - probs))), 0.0)
    return 2.0 * np.sum(hit + miss, axis=-1)


def threshold_gof_pvalue(
    first: Sequence[int], cdf: Sequence[float], rng: int | np.random.Generator, n_sim: int = 9999
) -> float:
    """Monte Carlo p-value of where draws' thresholds lie against a model of their distribution function.

    Draw ``k`` succeeds exactly at the grid points from index ``first[k]`` on (``len(cdf)``: at
    none), and the model says ``P(first <= i) = cdf[i]``. The statistic is
    :func:`binomial_deviance` of the numbers of draws with ``first <= i``, with its null
    distribution simulated (``n_sim`` sets of ``len(first)`` thresholds; an asymptotic
    chi-square is wrong for small expected counts), so the p-value is valid at every sample
    size. Returns 0 when an observed threshold is impossible under the model.

    Raises
    ------
    InvalidDataError
        If the indices are not whole numbers in ``[0, len(cdf)]``, ``cdf`` leaves ``[0, 1]`` or
        decreases, ``n_sim`` is not a positive integer, ``rng`` is not a generator or a seed,
        or the simulations would exceed :data:`ntpnb.settings.MAX_DENSE_BYTES`.
    """
    F = as_float_array(as_ordered(cdf, "cdf"), "cdf", 1)
    if F.size == 0 or not np.all((F >= 0) & (F <= 1)) or np.any(np.diff(F) < 0):
        raise InvalidDataError(f"cdf must be a non-decreasing 1-D sequence in [0, 1], got {F.tolist()}")
    idx = _whole_numbers(first, F.size, "first")
    n, n_sim = idx.size, as_count(n_sim, "n_sim")
    generator = as_generator(rng, "rng")
    observed = float(binomial_deviance(np.cumsum(np.bincount(idx, minlength=F.size + 1))[: F.size], F, n))
    if not np.isfinite(observed):
        return 0.0
    check_dense_size((n_sim, F.size + 1), "the simulated thresholds")
    cells = np.diff(np.concatenate([[0.0], F, [1.0]]))
    simulated_counts = np.cumsum(generator.multinomial(n, cells / cells.sum(), size=n_sim), axis=1)
    simulated = binomial_deviance(simulated_counts[:, : F.size], F, n)
    # (1 + #{simulated >= observed}) / (n_sim + 1), ties within PVALUE_TIE_RTOL
    extreme = int(np.count_nonzero(simulated >= observed - settings.PVALUE_TIE_RTOL * max(1.0, observed)))
    return (1 + extreme) / (n_sim + 1)


def bootstrap_means(
    values: Sequence[float], n_draws: int, n_resamples: int, rng: int | np.random.Generator
) -> np.ndarray:
    """Means of ``n_draws`` values drawn with replacement, ``n_resamples`` times.

    Raises
    ------
    InvalidDataError
        If ``values`` is not a non-empty finite 1-D numeric sequence, a count is not positive or
        ``rng`` is not a generator or a seed.
    """
    x = as_float_array(as_ordered(values, "values"), "values", 1)
    if x.size == 0:
        raise InvalidDataError("values must be a non-empty finite 1-D sequence")
    n = as_count(n_draws, "n_draws")
    reps = as_count(n_resamples, "n_resamples")
    check_dense_size((reps, n), "the bootstrap draws")
    draws = as_generator(rng, "rng").integers(0, x.size, size=(reps, n))
    return x[draws].mean(axis=1)


def fisher_pvalue(k1: int, n1: int, k2: int, n2: int) -> float:
    """Two-sided p-value of Fisher's exact test that ``k1 / n1`` and ``k2 / n2`` share one probability.

    Raises
    ------
    InvalidDataError
        If a count is not a whole number or a success count lies outside ``[0, n]``.
    """
    n1, n2 = as_count(n1, "n1"), as_count(n2, "n2")
    k1, k2 = as_count(k1, "k1", minimum=0), as_count(k2, "k2", minimum=0)
    if k1 > n1 or k2 > n2:
        raise InvalidDataError(f"need 0 <= k <= n, got {k1} of {n1} and {k2} of {n2}")
    return float(scipy.stats.fisher_exact([[k1, n1 - k1], [k2, n2 - k2]])[1])


def _log_binomial(n: ArrayLike, k: ArrayLike) -> np.ndarray:
    """``log C(n, k)`` elementwise (``k`` in ``[0, n]``)."""
    n, k = np.asarray(n, dtype=float), np.asarray(k, dtype=float)
    return scipy.special.gammaln(n + 1) - scipy.special.gammaln(k + 1) - scipy.special.gammaln(n - k + 1)


def _compositions(trials: np.ndarray, total: int, room: int) -> tuple[np.ndarray, np.ndarray]:
    """Every ``(k_1, ..., k_G)``, ``0 <= k_g <= trials_g``, leaving ``total - sum k`` in ``[0, room]``.

    The rows of the first array, each with ``log prod C(trials_g, k_g)`` in the second; ``room``
    is what the groups after these can still take.
    """
    ks, logw = np.zeros((1, 0), dtype=np.int64), np.zeros(1)
    after = int(trials.sum()) + room
    for n in trials:
        after -= int(n)
        check_dense_size((ks.shape[0], int(n) + 1), "the exact trend test's compositions")
        k = np.arange(int(n) + 1)
        sums = ks.sum(axis=1)[:, None] + k[None, :]
        rows, cols = np.nonzero((sums <= total) & (sums >= total - after))
        ks = np.column_stack([ks[rows], k[cols]])
        logw = logw[rows] + _log_binomial(n, k[cols])
    return ks, logw


@dataclass(frozen=True)
class _TrendNull:
    """The exact null distribution of ``T = sum_g scores_g k_g`` given the total of events.

    The counts of the first groups are enumerated (:func:`_compositions`); the last two groups'
    share of the rest is summed in closed form, since their part of ``T`` is monotone in the
    count of the one before last: a threshold on it, over cumulative sums of the hypergeometric
    weights (so three groups of 150 trials enumerate 151 rows, not 22,801).
    """

    #: Per composition of the first groups: its part of ``T``, its log weight, the events left.
    partial: np.ndarray
    log_weight: np.ndarray
    left: np.ndarray
    #: The last two groups' scores and, per events left ``r`` (rows) and count ``k`` of the
    #: one before last (columns), the log weights summed over counts at least, and at most, ``k``.
    pair: tuple[float, float]
    from_k: np.ndarray
    to_k: np.ndarray

    @classmethod
    def of(cls, trials: np.ndarray, scores: np.ndarray, total: int) -> _TrendNull:
        """The null of ``total`` events over groups of ``trials`` trials (at least two) at ``scores``."""
        n_a, n_b = int(trials[-2]), int(trials[-1])
        ks, logw = _compositions(trials[:-2], total, n_a + n_b)
        r, k = np.arange(n_a + n_b + 1)[:, None], np.arange(n_a + 1)[None, :]
        valid = (r - k >= 0) & (r - k <= n_b)
        weights = np.where(valid, _log_binomial(n_a, k) + _log_binomial(n_b, np.clip(r - k, 0, n_b)), -np.inf)
        from_k = np.logaddexp.accumulate(weights[:, ::-1], axis=1)[:, ::-1]
        to_k = np.logaddexp.accumulate(weights, axis=1)
        partial = ks @ scores[:-2] if ks.shape[1] else np.zeros(len(ks))
        return cls(
            partial, logw, total - ks.sum(axis=1), (float(scores[-2]), float(scores[-1])), from_k, to_k
        )

    def tails(self, observed: ArrayLike) -> np.ndarray:
        """``P(T >= observed)`` for each observed value (ties within ``settings.PVALUE_TIE_RTOL``)."""
        observed = np.atleast_1d(np.asarray(observed, dtype=float))
        s_a, s_b = self.pair
        step, last = s_a - s_b, self.from_k.shape[1] - 1
        # the last two groups must add at least `need`: step * k >= need - s_b * r
        need = observed[:, None] - settings.PVALUE_TIE_RTOL * np.maximum(1.0, np.abs(observed))[:, None]
        bound = need - self.partial[None, :] - s_b * self.left[None, :]
        rows = np.broadcast_to(self.left, bound.shape)
        if step > 0:  # k >= bound / step
            k = np.ceil(bound / step)
            tail = np.where(k > last, -np.inf, self.from_k[rows, np.clip(k, 0, last).astype(np.int64)])
        elif step < 0:  # k <= bound / step
            k = np.floor(bound / step)
            tail = np.where(k < 0, -np.inf, self.to_k[rows, np.clip(k, 0, last).astype(np.int64)])
        else:
            tail = np.where(bound <= 0, self.to_k[rows, last], -np.inf)
        whole = self.log_weight + self.to_k[self.left, last]
        log_p = scipy.special.logsumexp(self.log_weight[None, :] + tail, axis=1) - scipy.special.logsumexp(
            whole
        )
        return np.minimum(1.0, np.exp(log_p))


def _trend_design(trials: Sequence[int], scores: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """The trials and scores of a trend test's groups, validated (see :func:`trend_pvalue`)."""
    n = np.array([as_count(x, "trials") for x in as_ordered(trials, "trials")])
    s = as_float_array(as_ordered(scores, "scores"), "scores", 1)
    if n.size != s.size or n.size < 2:
        raise InvalidDataError(f"need at least two groups, one score each, got {n.size} and {s.size}")
    if np.ptp(s) == 0:
        raise InvalidDataError("the scores are all equal: no trend to test")
    return n, s


def trend_pvalue(successes: Sequence[int], trials: Sequence[int], scores: Sequence[float]) -> float:
    """One-sided p-value of an increasing trend of a rate in ``scores``: the exact Cochran-Armitage test.

    Group ``g`` has ``successes[g]`` events in ``trials[g]`` trials at the score ``scores[g]``
    (e.g. ``log n``). Under the null hypothesis (one rate for every group), given the total of
    events the counts are multivariate hypergeometric; the p-value is the probability there that
    ``T = sum_g scores_g k_g`` is at least the observed one (ties within
    ``settings.PVALUE_TIE_RTOL``). Conditional and exact, it is valid at any size: a true null
    is rejected at level ``a`` with probability at most ``a`` (less, as the counts are discrete).

    Raises
    ------
    InvalidDataError
        If the three sequences differ in length or have fewer than two groups, a count is not a
        whole number, a group has more events than trials, or the scores are not finite or all
        equal.
    """
    k = np.array([as_count(x, "successes", minimum=0) for x in as_ordered(successes, "successes")])
    n, s = _trend_design(trials, scores)
    if k.size != n.size:
        raise InvalidDataError(
            f"need at least two groups, one count of events each, got {k.size} for {n.size}"
        )
    if np.any(k > n):
        raise InvalidDataError(f"a group has more events than trials: {k.tolist()} of {n.tolist()}")
    return float(_TrendNull.of(n, s, int(k.sum())).tails(float(s @ k))[0])


def event_trend_pvalue(events: Sequence[float], covariates: Sequence[float]) -> float:
    """:func:`trend_pvalue` of 0/1 events, one per trial, against each trial's covariate.

    The trials are grouped by the distinct values of ``covariates``, each group's score its
    value: the exact test of a rate rising with the covariate, conditional on the total of
    events (a permutation test of the events over the trials, computed exactly). Trials of several
    seeds pool by concatenation, so that one test decides on all of them.

    Raises
    ------
    InvalidDataError
        If ``events`` is not a 1-D sequence of 0s and 1s, ``covariates`` not one finite number
        per event, or the covariates take fewer than two values.
    """
    y = as_float_array(as_ordered(events, "events"), "events", 1)
    x = as_float_array(as_ordered(covariates, "covariates"), "covariates", 1)
    if not np.all((y == 0) | (y == 1)):
        raise InvalidDataError("events must be 0 or 1, one per trial (whether the event happened)")
    if x.shape != y.shape:
        raise InvalidDataError(f"need one covariate per event, got {x.size} for {y.size} events")
    values, group = np.unique(x, return_inverse=True)
    if values.size < 2:
        raise InvalidDataError(f"the covariates take {values.size} value(s): a trend needs at least two")
    successes = np.bincount(group, weights=y, minlength=values.size).round().astype(np.int64)
    return trend_pvalue(successes, np.bincount(group, minlength=values.size), values)


def trend_power(
    rates: Sequence[float],
    trials: Sequence[int],
    scores: Sequence[float],
    level: float,
    rng: int | np.random.Generator,
    n_sim: int = 2000,
) -> float:
    """The power of :func:`trend_pvalue` at ``level`` against the rates ``rates``, by simulation.

    The fraction of ``n_sim`` simulated data sets (group ``g``: ``Binomial(trials[g], rates[g])``
    events) whose p-value is below ``level``; its Monte Carlo standard error is
    ``sqrt(power (1 - power) / n_sim)``. The null distribution is built once per total of
    events.

    Raises
    ------
    InvalidDataError
        On rates outside [0, 1] or of another length than ``trials``, a ``level`` outside (0, 1),
        bad counts or scores (see :func:`trend_pvalue`), a bad ``n_sim`` or ``rng``.
    """
    p = as_float_array(as_ordered(rates, "rates"), "rates", 1)
    n, s = _trend_design(trials, scores)
    if p.shape != n.shape or np.any((p < 0) | (p > 1)):
        raise InvalidDataError(f"need one rate in [0, 1] per group, got {p.tolist()} for {n.size} groups")
    if not (is_real(level) and 0 < level < 1):
        raise InvalidDataError(f"level must be a number in (0, 1), got {level!r}")
    n_sim = as_count(n_sim, "n_sim")
    counts = as_generator(rng, "rng").binomial(n, p, size=(n_sim, n.size))
    rejected = 0
    for total in np.unique(counts.sum(axis=1)):
        rows = counts[counts.sum(axis=1) == total]
        rejected += int(np.count_nonzero(_TrendNull.of(n, s, int(total)).tails(rows @ s) < level))
    return rejected / n_sim
