"""Statistics of many random trials: intervals, threshold crossings, finite-size fits, tests.

Summaries of the sweeps of :mod:`ntpnb._parallel`: Wilson intervals, where a curve crosses a
level (bracketed by Wilson intervals, or with a bootstrap error over whole nested draws), the
drift of such a threshold with size, a goodness-of-fit test with a simulated null distribution,
the bootstrap of a heavy-tailed mean, Fisher's exact test and the exact test of a trend in rates.

**Statistical claim checks** (:class:`Sample`): a sample recorded at each seed, tested there,
and pooled over the sweep.

A claim about an average over random trials would fail by chance under a fixed threshold on one
run's mean. Such a check records its :class:`Sample`, tested at the chapter's seed; the verdict
tests it pooled over the sweep's seeds, which decides the claim. Every test has an error rate, its
``level``. The tests (:data:`TESTS`):

``"mean"``
    The values are trials; the estimate is their mean, its standard error ``sd / sqrt(n)``
    (normal approximation). Pooled: all trials of all seeds.
``"estimate"``
    One estimate per seed with its standard error (e.g. a bootstrap error); pooled by inverse
    variance weights (a fixed-effect combination).
``"mean_quantile"``
    The values are trials, and the target is a mean a paper reports over ``trials`` trials; the
    statistic ``q`` is the mid-rank of the target among bootstrap means of ``trials`` of our
    trials (the fraction below it plus half the fraction equal to it), for heavy-tailed values
    whose standard error would mislead. Pooled: all trials.
``"rate"``
    The values are trials, each 1 when an event happened and 0 when not (a count check: "trials
    with a non-empty sub-dataset"); the estimate is the rate ``k / n`` with Wilson's interval at
    the level on each side. Pooled: all trials. ``==`` with target 0 asks that the event never
    happens (any occurrence is a counterexample).
``"pvalue"``
    One p-value per seed of a test that is run whole at each seed (a goodness-of-fit test of
    independent draws); pooled by Fisher's method, ``-2 sum log p`` against chi-squared with
    ``2k`` degrees of freedom. The statistic is the combined p-value and the target the test's
    significance: a claim ``> target`` fails when the combined p falls to the target or below,
    a finding ``< target`` holds when it does. Each p-value must be a valid p-value of its own
    test (uniform, or larger, when the test's null holds). A p-value capped at 1 by a
    correction (Bonferroni's ``min(1, k p)``) is valid but nearly powerless: a sample whose every
    p-value is 1 is *vacuous* (:attr:`Sample.vacuous`; Fisher's combination is then 1 and can
    reject nothing) and says so when printed. A Monte Carlo p-value ``(1 + k) / (n + 1)`` has a
    *floor*, ``1 / (n + 1)``, the smallest value it can take: a sample may carry each p-value's
    floor (``floors``). The Monte Carlo p-value is itself valid, so the test decides on it as
    it is; but Fisher's combination increases with each p, so where some p sits at its floor
    (the true p could be smaller) the combined p is an upper bound, printed ``"≤ 2.05e-15"``
    (rounded up), never as a point value.
``"instances"``
    One value per random instance (per seed: a property of that seed's drawn instance, such
    as a ratio measured on it), to be decided with how the value varies *between* instances,
    not with the error within one. Pooled: the mean over the instances, with Student's t
    interval (``N - 1`` degrees of freedom, ``se = s / sqrt(N)``); printed with that interval
    at ``1 - 2 level``, the range of the instances' values and the interval in which a new
    instance's value falls with probability ``1 - 2 level`` (``mean +- t s sqrt(1 + 1/N)``),
    both exact when the instances' values are normal. One instance cannot be decided (its
    line prints ``OPEN`` and says so; :attr:`Sample.decidable` is false); two are the fewest
    that decide, with a wide interval (t with 1 degree of freedom).

How a check decides, with ``z`` the standard normal quantile of ``1 - level``:

* a **claim** check of a bound (the paper says a value lies above or below a number: ``>``,
  ``>=``, ``<``, ``<=``) holds where the estimate lies on the bound's side, and is *missed*
  where it does not, whatever the test says: the test (``z`` as below) only says how sure the
  side is (:meth:`Sample.certainty`: established, contradicted, or within the test's noise), so
  a decision cannot flip because more seeds shrink the standard error. For ``"rate"`` the
  estimate is ``k / n``; for ``"instances"`` the mean over the instances. Where the true value
  lies on the bound's side, the estimate lies on the other with probability below one half,
  and far below once the value is a few standard errors from the bound; a card states which;
* a **claim** check of a consistency (``~``: the paper reports a value) fails only when the data
  contradict it at that level: ``|estimate - target| <= tol + z se``; for ``"mean_quantile"``,
  ``level/2 < q < 1 - level/2``; for ``"instances"``, ``z`` is Student's t quantile with
  ``N - 1`` degrees of freedom. A true claim fails with probability at most ``2 level``, one
  tail each side (``"instances"``: when the instances' values are normal); a ``"pvalue"``
  claim ``> target`` fails when the combined p falls to the target or below (probability at
  most the target when the claim is true);
* a claim check of a strict difference (the paper says two things differ, or one exceeds the
  other) is not evidence when merely not contradicted, since no difference is not contradicted
  either: such a sample is made with ``establish=True`` and holds where the data establish it,
  as a finding does; a verdict counts it *missed* where its estimate lies on the wrong side, and
  *not decided* where the estimate lies on its side within the test's noise (more trials may
  decide it: the card says so);
* a **finding** check (the relation is the shortfall), and a **measurement** (a statement of
  ours that qualifies a claim), hold only when the data establish them:
  ``>`` needs ``estimate - z se > target``, ``<`` needs ``estimate + z se < target`` (for
  ``"rate"``: the interval's lower end above, or its upper end below, the target); for
  ``"mean_quantile"``, ``>`` (our means exceed the paper's value) needs ``q < level`` and ``<``
  needs ``q > 1 - level``. A shortfall that is not there is recorded with probability at most
  ``level``.

A value the authors' own stored artifact shows (a figure's last point, a mean over ``trials``
of their trials) is compared with the pooled sample by
:meth:`Sample.consistent_with`: with a mean over ``trials`` trials,
``|value - estimate| <= precision + z' sqrt(se^2 + s^2/trials)`` with ``z'`` at ``level/2`` on
each side; for ``"mean_quantile"``, the value's mid-rank among our means of ``trials`` trials
lies in ``(level/2, 1 - level/2)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from statistics import NormalDist
from typing import Any

import numpy as np
import scipy

from . import settings
from ._validation import (
    as_count,
    as_flag,
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


def _compositions(trials: np.ndarray, total: int) -> tuple[np.ndarray, np.ndarray]:
    """Every ``(k_1, ..., k_G)`` with ``0 <= k_g <= trials_g`` and ``sum k = total``, and its weight.

    The rows of the first array, each with ``log prod C(trials_g, k_g)`` in the second.
    """
    ks, logw = np.zeros((1, 0), dtype=np.int64), np.zeros(1)
    for g, n in enumerate(trials):
        room = total - ks.sum(axis=1)
        check_dense_size((ks.shape[0], int(n) + 1, g + 1), "the exact trend test's compositions")
        k = np.arange(int(n) + 1)
        keep = k[None, :] <= room[:, None]
        if g == trials.size - 1:  # the last group takes what is left
            keep &= k[None, :] == room[:, None]
        rows, cols = np.nonzero(keep)
        log_binom = (
            scipy.special.gammaln(n + 1) - scipy.special.gammaln(k + 1) - scipy.special.gammaln(n - k + 1)
        )
        ks = np.column_stack([ks[rows], k[cols]])
        logw = logw[rows] + log_binom[cols]
    return ks, logw


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
    n = np.array([as_count(x, "trials") for x in as_ordered(trials, "trials")])
    s = as_float_array(as_ordered(scores, "scores"), "scores", 1)
    if not k.size == n.size == s.size or k.size < 2:
        raise InvalidDataError(
            "need at least two groups and one count of events, trials and score each, got "
            f"{k.size}, {n.size}, {s.size}"
        )
    if np.any(k > n):
        raise InvalidDataError(f"a group has more events than trials: {k.tolist()} of {n.tolist()}")
    if np.ptp(s) == 0:
        raise InvalidDataError("the scores are all equal: no trend to test")
    ks, logw = _compositions(n, int(k.sum()))
    t = ks @ s
    observed = float(s @ k)
    probs = np.exp(logw - scipy.special.logsumexp(logw))
    extreme = t >= observed - settings.PVALUE_TIE_RTOL * max(1.0, abs(observed))
    return float(min(1.0, probs[extreme].sum()))


#: The error rate of a statistical check (see the module docstring); rare by chance over a sweep.
DEFAULT_LEVEL = 0.01

#: The kinds of check that hold only when the data establish them (see the module docstring).
ESTABLISHED_KINDS: tuple[str, ...] = ("finding", "measurement")

#: The relations of a bound: a claim that a value lies on one side of a number.
BOUNDS: tuple[str, ...] = (">", ">=", "<", "<=")

#: The tests a :class:`Sample` can be checked with (see the module docstring).
TESTS: tuple[str, ...] = ("mean", "estimate", "mean_quantile", "rate", "pvalue", "instances")

#: Resamples of a ``"mean_quantile"`` test, and the seed of its generator (the same on every machine).
BOOTSTRAP_RESAMPLES = 20_000
BOOTSTRAP_SEED = 0


def _finite_tuple(values: Iterable[Any], name: str) -> tuple[float, ...]:
    try:
        out = tuple(float(v) for v in values)
    except (TypeError, ValueError) as exc:
        raise InvalidDataError(f"{name} must be numbers: {exc}") from None
    if not all(math.isfinite(v) for v in out):
        raise InvalidDataError(f"{name} must be finite numbers")
    return out


def _round_up(x: float, digits: int) -> str:
    """``x > 0`` rounded up to ``digits`` significant digits, as ``"2.05e-15"``: a bound stays a bound."""
    if x < settings.PVALUE_PRINT_MIN:  # Fisher's combination underflowed (it is far below this)
        return f"{settings.PVALUE_PRINT_MIN:g}"
    step = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    up = math.ceil(x / step * (1 - 1e-12)) * step  # (1 - 1e-12): x already on the grid stays
    return f"{up:.{digits}g}"


@dataclass(frozen=True)
class Sample:
    """What a statistical check records at one seed, enough to pool it with the others."""

    test: str  # one of TESTS
    #: The trials' values (``"mean"``, ``"mean_quantile"``, ``"rate"``), the estimates
    #: (``"estimate"``), the p-values (``"pvalue"``) or one value per instance (``"instances"``).
    values: tuple[float, ...]
    #: The standard error of each estimate (``"estimate"`` only).
    errors: tuple[float, ...] = ()
    #: ``"mean_quantile"``: how many trials the target is a mean of.
    trials: int = 0
    level: float = DEFAULT_LEVEL  # the test's error rate
    #: A claim check of a strict difference: holds only when the data establish it.
    establish: bool = False
    #: ``"pvalue"`` only: the smallest value each p-value's test can output (a Monte Carlo
    #: test's ``1 / (n_sim + 1)``), one per p-value, or none (see the module docstring).
    floors: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.test not in TESTS:
            raise InvalidDataError(f"unknown statistical test {self.test!r}; use one of {list(TESTS)}")
        object.__setattr__(self, "values", _finite_tuple(self.values, "the sample's values"))
        object.__setattr__(self, "errors", _finite_tuple(self.errors, "the standard errors"))
        object.__setattr__(self, "floors", _finite_tuple(self.floors, "the p-values' floors"))
        if not 0.0 < float(self.level) < 0.5:
            raise InvalidDataError(f"a test's level must lie in (0, 0.5), got {self.level!r}")
        minimum = 1 if self.test in ("estimate", "pvalue", "instances") else 2
        if len(self.values) < minimum:
            raise InvalidDataError(
                f"a {self.test!r} test needs at least {minimum} values, got {len(self.values)}"
            )
        if self.test == "estimate":
            if len(self.errors) != len(self.values) or not all(e > 0 for e in self.errors):
                raise InvalidDataError("an 'estimate' test needs one positive standard error per estimate")
        elif self.errors:
            raise InvalidDataError(f"a {self.test!r} test takes no standard errors")
        if self.test == "mean_quantile":
            object.__setattr__(self, "trials", as_count(self.trials, "a 'mean_quantile' test's trials"))
        elif self.trials != 0:
            raise InvalidDataError(
                f"a {self.test!r} test takes no trials (only 'mean_quantile'), got {self.trials!r}"
            )
        if self.test == "rate" and not all(v in (0.0, 1.0) for v in self.values):
            raise InvalidDataError("a 'rate' test needs one 0 or 1 per trial (whether the event happened)")
        if self.test == "pvalue" and not all(0.0 < v <= 1.0 for v in self.values):
            raise InvalidDataError("a 'pvalue' test needs p-values in (0, 1]")
        self._check_floors()
        object.__setattr__(self, "establish", as_flag(self.establish, "establish"))

    def _check_floors(self) -> None:
        if not self.floors:
            return
        if self.test != "pvalue":
            raise InvalidDataError(f"a {self.test!r} test takes no floors (only 'pvalue')")
        if len(self.floors) != len(self.values) or not all(0.0 < f <= 1.0 for f in self.floors):
            raise InvalidDataError("a 'pvalue' test's floors must be one number in (0, 1] per p-value")
        below = [
            (p, f)
            for p, f in zip(self.values, self.floors, strict=True)
            if p < f * (1 - settings.PVALUE_FLOOR_RTOL)
        ]
        if below:
            p, f = below[0]
            raise InvalidDataError(
                f"a p-value of {p:g} lies below its floor {f:g}: its test cannot output it"
            )

    @classmethod
    def pooled(cls, samples: Sequence[Sample]) -> Sample:
        """One sample from the samples of every seed (the same test, level, trials and floors or none)."""
        first = samples[0]
        for other in samples[1:]:
            if other.setting != first.setting:
                raise InvalidDataError(
                    f"cannot pool a {other.test!r} test (level {other.level}, trials {other.trials}, "
                    f"establish {other.establish}, floors {bool(other.floors)}) with a {first.test!r} "
                    f"test (level {first.level}, trials {first.trials}, establish {first.establish}, "
                    f"floors {bool(first.floors)})"
                )
        values = tuple(v for s in samples for v in s.values)
        errors = tuple(e for s in samples for e in s.errors)
        floors = tuple(f for s in samples for f in s.floors)
        return cls(first.test, values, errors, first.trials, first.level, first.establish, floors)

    @property
    def setting(self) -> tuple[str, int, float, bool, bool]:
        """What must agree for two samples to pool: test, trials, level, establish, whether floors."""
        return (self.test, self.trials, self.level, self.establish, bool(self.floors))

    @property
    def size(self) -> int:
        """How many trials (estimates, tests, instances) the sample holds."""
        return len(self.values)

    @property
    def count(self) -> str:
        """How many values and what they are: ``"500 trials"``, ``"1 estimate"``, ``"5 tests"``."""
        unit = {"estimate": "estimate", "pvalue": "test", "instances": "instance"}.get(self.test, "trial")
        return f"{self.size} {unit}{'s' * (self.size != 1)}"

    @property
    def decidable(self) -> bool:
        """Whether the sample can decide its check: not one instance alone (see the module docstring)."""
        return not (self.test == "instances" and self.size < 2)

    @property
    def at_floor(self) -> int:
        """``"pvalue"``: how many p-values sit at their floor (0 without floors)."""
        if not self.floors:
            return 0
        return sum(
            p <= f * (1 + settings.PVALUE_FLOOR_RTOL) for p, f in zip(self.values, self.floors, strict=True)
        )

    @property
    def vacuous(self) -> bool:
        """``"pvalue"``: every p-value is 1 (capped corrections, say): Fisher's method can reject nothing."""
        return self.test == "pvalue" and all(p == 1.0 for p in self.values)

    def estimate(self) -> tuple[float, float]:
        """The estimate and its standard error (the mean; ``"estimate"``: inverse-variance weighted).

        One instance alone has no standard error (NaN).
        """
        if self.test == "estimate":
            weights = [1.0 / e**2 for e in self.errors]
            total = math.fsum(weights)
            mean = math.fsum(w * v for w, v in zip(weights, self.values, strict=True)) / total
            return mean, math.sqrt(1.0 / total)
        n = len(self.values)
        mean = math.fsum(self.values) / n
        if n < 2:
            return mean, float("nan")
        var = math.fsum((v - mean) ** 2 for v in self.values) / (n - 1)
        return mean, math.sqrt(var / n)

    def quantile(self) -> float:
        """The one-sided quantile the tests use at :attr:`level`: normal, or Student's t (``"instances"``)."""
        if self.test == "instances":
            return float(scipy.stats.t.ppf(1.0 - self.level, self.size - 1))
        return NormalDist().inv_cdf(1.0 - self.level)

    def instance_intervals(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """``"instances"``: the ``1 - 2 level`` intervals of the mean and of a new instance's value."""
        if self.test != "instances" or not self.decidable:
            raise InvalidDataError("only an 'instances' test of at least 2 instances has these intervals")
        mean, se = self.estimate()
        half, spread = self.quantile() * se, self.quantile() * se * math.sqrt(self.size + 1)
        return (mean - half, mean + half), (mean - spread, mean + spread)  # s sqrt(1 + 1/N) = se sqrt(N + 1)

    def rate_interval(self) -> tuple[float, float]:
        """``"rate"``: Wilson's interval of the rate, at :attr:`level` on each side."""
        return wilson_interval(round(math.fsum(self.values)), self.size, 1.0 - 2.0 * self.level)

    @cached_property
    def bootstrap_means(self) -> Any:
        """``"mean_quantile"``: the means of ``trials`` trials resampled from the values, drawn once."""
        if self.test != "mean_quantile":
            raise InvalidDataError(f"a {self.test!r} test has no bootstrap means (only 'mean_quantile')")
        return bootstrap_means(self.values, self.trials, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED)

    def quantile_of(self, target: float) -> float:
        """``"mean_quantile"``: the mid-rank of ``target`` among bootstrap means of ``trials`` trials.

        The fraction of means below it plus half the fraction equal to it, so that a target at
        an atom of the means (0 for distances that are often exactly 0) is not called extreme.
        """
        means = self.bootstrap_means
        return float((means < target).mean() + 0.5 * (means == target).mean())

    def statistic(self, target: float) -> tuple[float, float]:
        """What the check compares: ``(estimate, se)``.

        ``"mean_quantile"``: ``(q, NaN)``; ``"pvalue"``: Fisher's combination of the p-values (the
        chi-squared tail in closed form) and NaN.
        """
        if self.test == "mean_quantile":
            return self.quantile_of(target), float("nan")
        if self.test == "pvalue":  # Fisher's method: -2 sum log p against chi-squared with 2k dof
            combined = scipy.stats.combine_pvalues(self.values, method="fisher").pvalue
            return min(1.0, float(combined)), float("nan")
        return self.estimate()

    def decide(self, relation: str, target: float, tol: float, kind: str) -> bool:
        """Whether the check holds (see the module docstring for the rule of each kind).

        A sample that is not :attr:`decidable` (one instance) holds nothing: its check is open.
        """
        value, se = self.statistic(target)
        if self.establishes(kind):
            rules = self._established_rules(value, se, target)
        else:
            rules = self._claim_rules(value, se, target, tol)
        if relation not in rules:
            takes = f"takes a relation in {sorted(rules)}, not {relation!r}"
            raise InvalidDataError(f"a {kind} check with a {self.test!r} test {takes}")
        return bool(rules[relation])

    def establishes(self, kind: str) -> bool:
        """Whether a check of ``kind`` on this sample holds only when the data establish it."""
        return kind in ESTABLISHED_KINDS or self.establish

    def _slack(self, se: float) -> float:
        """The test's one-sided margin ``z se`` (NaN for a sample that cannot decide: every rule is false)."""
        return self.quantile() * se if self.decidable else math.nan

    def _established_rules(self, value: float, se: float, target: float) -> dict[str, bool]:
        """Relation -> whether the data establish it at :attr:`level` (findings, measurements)."""
        if self.test == "mean_quantile":  # value is q
            return {">": value < self.level, "<": value > 1.0 - self.level}
        if self.test == "pvalue":  # value is the combined p; the target its significance
            return {"<": value < target}
        if self.test == "rate":
            low, high = self.rate_interval()
            return {">": low > target, "<": high < target}
        slack = self._slack(se)
        return {">": value - slack > target, "<": value + slack < target}

    def _claim_rules(self, value: float, se: float, target: float, tol: float) -> dict[str, bool]:
        """Relation -> whether a paper's claim holds on this sample.

        A bound (``>``, ``>=``, ``<``, ``<=``) holds where the estimate lies on its side: the test
        only says how sure that is (:meth:`certainty`), so more trials cannot turn an estimate on
        the wrong side into a bound that holds. ``~`` is a consistency: not contradicted by the
        test. A ``"pvalue"`` claim holds where the combined p is above its significance.
        """
        if self.test == "mean_quantile":  # value is q
            return {"~": self.level / 2 < value < 1.0 - self.level / 2}
        if self.test == "pvalue":
            return {">": value > target}
        if not self.decidable:
            return dict.fromkeys((*BOUNDS, "~", "=="), False)
        rules = {
            ">": value > target,
            ">=": value >= target,
            "<": value < target,
            "<=": value <= target,
        }
        if self.test == "rate":
            return {**rules, "==": value == target}
        return {**rules, "~": abs(value - target) <= tol + self._slack(se)}

    def side(self, relation: str, target: float) -> bool:
        """Whether the estimate lies on the side of ``target`` that the bound ``relation`` names."""
        value = self.statistic(target)[0]
        return bool(
            {">": value > target, ">=": value >= target, "<": value < target, "<=": value <= target}[relation]
        )

    def certainty(self, relation: str, target: float) -> str:
        """How sure a bound's decision is, in words (empty for a relation that is not a bound).

        ``"established at the 1% level"`` (the test shows the estimate's side),
        ``"contradicted at the 1% level"`` (the test shows the other side), or ``"within the
        test's noise at the 1% level"`` (it shows neither: more trials may move the estimate).
        """
        if relation not in BOUNDS or self.test in ("mean_quantile", "pvalue") or not self.decidable:
            return ""
        strict = relation.rstrip("=")
        other = "<" if strict == ">" else ">"
        value, se = self.statistic(target)
        rules = self._established_rules(value, se, target)
        level = f"at the {self.level:.0%} level"
        if rules[strict]:
            return f"established {level}"
        if rules[other]:
            return f"contradicted {level}"
        return f"within the test's noise {level}"

    def describe(self, target: float, digits: int = 3, count: bool = True) -> str:
        """The measurement as printed, e.g. ``"0.988 ± 0.002 (100 trials)"`` (``count``: with the count).

        ``"mean_quantile"``: ``"q = 0.016 (100 trials)"``; ``"rate"``: ``"2 of 500 trials (0.4%;
        98% interval 0.089% to 1.8%)"``; ``"pvalue"`` at a floor: ``"Fisher's combined p ≤ 2.05e-15
        (5 tests, 5 at their Monte Carlo floor)"``; ``"instances"``: ``"0.874 (98% interval 0.80 to
        0.95; 5 instances from 0.78 to 0.96; a new instance 0.66 to 1.09)"``.
        """
        value, se = self.statistic(target)
        counted = f" ({self.count})" if count else ""
        if self.test == "mean_quantile":
            return f"q = {value:.{digits}g}{counted}"
        if self.test == "pvalue":
            how = "p" if self.size == 1 else "Fisher's combined p"
            notes = [self.count] if count else []
            if self.at_floor:
                at = "at its" if self.size == 1 else f"{self.at_floor} at their"
                notes.append(f"{at} Monte Carlo floor")
                text = f"{how} ≤ {_round_up(value, digits)}"
            else:
                text = f"{how} = {value:.{digits}g}"
            if self.vacuous:
                notes.append("every p is 1: it can reject nothing")
            return text + (f" ({', '.join(notes)})" if notes else "")
        if self.test == "rate":
            low, high = self.rate_interval()
            share = f"{_percent(value)}; {1 - 2 * self.level:.0%} interval"
            bounds = f"{_percent(low)} to {_percent(high)}"
            return f"{round(math.fsum(self.values))} of {self.size} trials ({share} {bounds})"
        if self.test == "instances":
            return self._describe_instances(digits, count)
        return f"{value:#.{digits}g} ± {se:.1g}{counted}"

    def quote(self, digits: int = 3) -> str:
        """The estimate as a sentence quotes it: ``"0.988 ± 0.0006"``, ``"2 of 500 (0.4%)"``.

        ``"instances"``: the mean and the instances' range, ``"0.874 (instances 0.78 to 0.96)"``
        (one instance: its value). A ``"mean_quantile"`` or ``"pvalue"`` sample has no estimate to
        quote (InvalidDataError).
        """
        if self.test in ("mean_quantile", "pvalue"):
            raise InvalidDataError(f"a {self.test!r} sample has no estimate to quote")
        if self.test == "rate":
            return f"{round(math.fsum(self.values))} of {self.size} ({_percent(self.estimate()[0])})"
        value, se = self.estimate()
        if self.test == "instances":
            if self.size == 1:
                return f"{value:#.{digits}g}"
            low, high = min(self.values), max(self.values)
            return f"{value:#.{digits}g} (instances {low:.{digits}g} to {high:.{digits}g})"
        return f"{value:#.{digits}g} ± {se:.1g}"

    def _describe_instances(self, digits: int, count: bool) -> str:
        mean = self.estimate()[0]
        if not self.decidable:
            return f"{mean:#.{digits}g} (1 instance: not decided alone, only over the seeds' instances)"
        (low, high), (new_low, new_high) = self.instance_intervals()
        g = lambda x: f"{x:.{digits}g}"
        share = f"{1 - 2 * self.level:.0%}"
        values = f"{self.count} from " if count else "instances "
        return (
            f"{mean:#.{digits}g} ({share} interval {g(low)} to {g(high)}; {values}"
            f"{g(min(self.values))} to {g(max(self.values))}; a new instance {g(new_low)} to {g(new_high)})"
        )

    def requirement(self, kind: str, relation: str = "") -> str:
        """How the test decides, in words: ``"on the estimate (1% mean test: how sure)"``.

        A claim's bound is decided on the estimate, its test saying how sure (:meth:`certainty`);
        a consistency (``~``) is ``"not contradicted at the 1% level"``; a finding, a measurement
        or a strict difference is ``"established at the 1% level"``.
        """
        if self.test == "pvalue":
            return "the seeds' p-values pooled by Fisher's method"
        if not self.establishes(kind) and relation in BOUNDS:
            return f"on the estimate ({self.level:.0%} {self.test} test: how sure)"
        what = "established" if self.establishes(kind) else "not contradicted"
        return f"{what} at the {self.level:.0%} level ({self.test} test)"

    def consistent_with(self, value: float, trials: int = 0, precision: float = 0.0) -> bool:
        """Whether ``value``, read to within ``precision``, is consistent with this sample.

        ``value`` is a mean over ``trials`` trials of the same experiment (0: an exact value); the
        rule is the module docstring's (a ``"mean"``, ``"estimate"``, ``"instances"`` or
        ``"mean_quantile"`` test).
        """
        if self.test == "mean_quantile":
            low, high = self.quantile_of(value - precision), self.quantile_of(value + precision)
            return high > self.level / 2 and low < 1.0 - self.level / 2
        if not self.decidable:
            return False
        estimate, se = self.estimate()
        spread = 0.0
        if trials and self.test == "mean":
            spread = se * se * self.size / trials  # their mean's variance, s^2 / trials
        z = NormalDist().inv_cdf(1.0 - self.level / 2)
        if self.test == "instances":
            z = float(scipy.stats.t.ppf(1.0 - self.level / 2, self.size - 1))
        return abs(value - estimate) <= precision + z * math.sqrt(se * se + spread)


def _percent(x: float) -> str:
    """``0.004`` as ``"0.4%"``: two significant digits below 10%, whole percents above."""
    value = 100 * x
    if value == 0:
        return "0%"
    return f"{value:.0f}%" if value >= 10 else f"{value:.2g}%"


#: A :class:`Sample` from any iterable of numbers (numpy arrays included): ``trials``,
#: ``level``, ``establish`` and ``floors`` by keyword.
sample_of = Sample
