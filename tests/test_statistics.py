"""Statistics of many trials (ntpnb.statistics): Wilson intervals, crossings and their errors,
finite-size fits, binomial goodness of fit, bootstrap means, the exact trend test."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.stats
from scipy.stats import binomtest, fisher_exact, kstest, permutation_test

from ntpnb import settings
from ntpnb._statistics import (
    _first_crossings,
    _whole_numbers,
    binomial_deviance,
    crossing,
    crossing_interval,
    event_trend_pvalue,
    finite_size_fit,
    fisher_pvalue,
    threshold_crossing_bootstrap,
    threshold_gof_pvalue,
    trend_power,
    trend_pvalue,
    wilson_interval,
)
from ntpnb._validation import as_count, as_float_array, as_generator, as_ordered, check_dense_size
from ntpnb.errors import InvalidDataError
from ntpnb.evidence._samples import Sample
from ntpnb.linear._condition_thresholds import cover_probability


# ----------------------------------------------------- used only here: the tests keep them as oracles
def crossing_bootstrap(x, successes, n, rng, n_boot=2000, level=0.5):
    """Where a proportion (``successes[i]`` of ``n`` independent trials at ``x[i]``) crosses
    ``level``, and the standard deviation of that crossing over ``n_boot`` replicates drawing the
    count at ``x[i]`` as ``Binomial(n, successes[i] / n)`` (NaN if a curve never reaches it)."""
    n = as_count(n, "n")
    n_boot = as_count(n_boot, "n_boot", minimum=2)
    counts = _whole_numbers(successes, n, "successes")
    estimate = crossing(x, counts / n, level)  # validates x and level
    grid = np.asarray(x, dtype=np.float64)
    check_dense_size((n_boot, grid.size), "the bootstrap replicates")
    replicates = as_generator(rng, "rng").binomial(n, counts / n, size=(n_boot, grid.size)) / n
    crossings = _first_crossings(grid, replicates, float(level))
    if np.isnan(estimate) or np.any(np.isnan(crossings)):
        return estimate, float("nan")
    return estimate, float(np.std(crossings, ddof=1))


def binomial_gof_pvalue(successes, probs, n, rng, n_sim=9999):
    """Monte Carlo p-value of independent binomial counts (``successes[i]`` of ``n``) against the
    probabilities ``probs``: :func:`binomial_deviance` against its null simulated from the model
    (as :func:`ntpnb.statistics.threshold_gof_pvalue`); 0 when a count is impossible."""
    n = as_count(n, "n")
    n_sim = as_count(n_sim, "n_sim")
    counts = _whole_numbers(successes, n, "successes")
    p = as_float_array(as_ordered(probs, "probs"), "probs", 1)
    if p.shape != (counts.size,):
        raise InvalidDataError(f"probs must be 1-D with one entry per count ({counts.size}), got {p.shape}")
    if not np.all((p >= 0) & (p <= 1)):
        raise InvalidDataError(f"probs must lie in [0, 1], got {p.tolist()}")
    generator = as_generator(rng, "rng")
    observed = float(binomial_deviance(counts, p, n))
    if not np.isfinite(observed):
        return 0.0
    check_dense_size((n_sim, counts.size), "the simulated counts")
    simulated = binomial_deviance(generator.binomial(n, p, size=(n_sim, counts.size)), p, n)
    extreme = np.count_nonzero(simulated >= observed - settings.PVALUE_TIE_RTOL * max(1.0, observed))
    return (1 + extreme) / (n_sim + 1)


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (50, 100), (1, 1000)])
def test_wilson_interval_matches_scipy(k, n):
    lo, hi = wilson_interval(k, n)
    ref = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert lo == pytest.approx(ref.low, abs=1e-12)
    assert hi == pytest.approx(ref.high, abs=1e-12)
    assert 0.0 <= lo <= k / n <= hi <= 1.0


def test_wilson_interval_coverage_by_simulation():
    rng = np.random.default_rng(0)
    p, n = 0.3, 40
    ks = rng.binomial(n, p, size=4000)
    covered = np.mean([lo <= p <= hi for lo, hi in (wilson_interval(int(k), n) for k in ks)])
    assert 0.93 <= covered <= 0.97


@pytest.mark.parametrize(("k", "n", "conf"), [(-1, 5, 0.95), (6, 5, 0.95), (1, 0, 0.95), (1, 5, 1.0)])
def test_wilson_interval_bad_input(k, n, conf):
    with pytest.raises(InvalidDataError):
        wilson_interval(k, n, conf)


def test_crossing():
    assert crossing([0, 1, 2], [0.0, 0.25, 0.75]) == pytest.approx(1.5)
    assert crossing([0, 1], [0.6, 0.9]) == 0.0
    assert np.isnan(crossing([0, 1], [0.1, 0.2]))
    assert crossing([1, 2, 3], [0.0, 1.0, 1.0], level=0.9) == pytest.approx(1.9)
    with pytest.raises(InvalidDataError, match="increasing"):
        crossing([1, 0], [0, 1])
    with pytest.raises(InvalidDataError, match="same length"):
        crossing([0, 1], [0])


def test_crossing_interval_brackets_the_crossing_and_narrows_with_more_trials():
    x = np.linspace(0.0, 1.0, 21)
    p = 1 / (1 + np.exp(-(x - 0.5) * 20))
    for n in (20, 2000):
        counts = np.round(p * n).astype(int)
        lo, hi = crossing_interval(x, counts, n)
        assert lo <= crossing(x, counts / n) <= hi
        width = hi - lo
        if n == 20:
            wide = width
    assert width < wide / 3
    assert np.isnan(crossing_interval(x, np.zeros(21, dtype=int), 20)[1])


def test_crossing_interval_bad_counts():
    with pytest.raises(InvalidDataError):
        crossing_interval([0.0, 1.0], [1, 30], 20)


def logistic_curve(x, centre=0.5, scale=20.0):
    return 1 / (1 + np.exp(-(x - centre) * scale))


def test_vectorized_crossings_agree_with_crossing():
    rng = np.random.default_rng(0)
    x = np.linspace(0.0, 1.0, 9)
    rows = np.vstack([rng.integers(0, 5, size=(200, 9)) / 4, np.zeros((1, 9)), np.ones((1, 9))])
    got = _first_crossings(x, rows, 0.5)
    for row, value in zip(rows, got, strict=True):
        expected = crossing(x, row)
        assert (np.isnan(value) and np.isnan(expected)) or value == pytest.approx(expected, abs=1e-15)


def test_crossing_bootstrap_error_matches_the_spread_of_independent_sweeps():
    """The bootstrap standard error of one sweep estimates the spread of the crossing over
    independent repetitions of the sweep (here within 30%), and shrinks like 1/sqrt(n)."""
    rng = np.random.default_rng(3)
    x = np.linspace(0.0, 1.0, 21)
    p = logistic_curve(x, 0.47, 12.0)
    spread, mean_se = {}, {}
    for n in (20, 80):
        draws = rng.binomial(n, p, size=(300, x.size))
        spread[n] = np.std([crossing(x, k / n) for k in draws], ddof=1)
        mean_se[n] = np.mean([crossing_bootstrap(x, k, n, rng, n_boot=300)[1] for k in draws[:60]])
        assert mean_se[n] == pytest.approx(spread[n], rel=0.3)
    assert mean_se[80] / mean_se[20] == pytest.approx(0.5, rel=0.3)
    counts = rng.binomial(20, p)
    estimate, se = crossing_bootstrap(x, counts, 20, 5)
    assert estimate == crossing(x, counts / 20) and se > 0
    assert crossing_bootstrap(x, counts, 20, 5) == (estimate, se)  # seeded: reproducible


def test_crossing_bootstrap_edge_cases_and_bad_input():
    x = [0.0, 1.0, 2.0]
    assert crossing_bootstrap(x, [0, 10, 10], 10, 0) == (pytest.approx(0.5), 0.0)  # a jump: no spread
    estimate, se = crossing_bootstrap(x, [0, 1, 2], 10, 0)
    assert np.isnan(estimate) and np.isnan(se)
    with pytest.raises(InvalidDataError, match="whole numbers"):
        crossing_bootstrap(x, [0, 11, 10], 10, 0)
    with pytest.raises(InvalidDataError, match="whole numbers"):
        crossing_bootstrap(x, [0, 0.5, 10], 10, 0)
    with pytest.raises(InvalidDataError, match="n_boot"):
        crossing_bootstrap(x, [0, 5, 10], 10, 0, n_boot=1)
    with pytest.raises(InvalidDataError, match="rng"):
        crossing_bootstrap(x, [0, 5, 10], 10, rng=1.5)


def test_finite_size_fit_recovers_a_line_in_one_over_size_with_the_weighted_errors():
    sizes = np.array([15.0, 30.0, 60.0])
    fit = finite_size_fit(sizes, 0.48 + 2.0 / sizes, [0.01, 0.02, 0.01])
    assert fit.limit == pytest.approx(0.48) and fit.slope == pytest.approx(2.0)
    assert fit.chi2 == pytest.approx(0.0, abs=1e-20) and fit.dof == 1
    values, errors = np.array([0.62, 0.58, 0.57]), np.array([0.012, 0.008, 0.006])
    fit = finite_size_fit(sizes, values, errors)
    (slope, limit), cov = np.polyfit(1 / sizes, values, 1, w=1 / errors, cov="unscaled")
    assert (fit.limit, fit.slope) == (pytest.approx(limit), pytest.approx(slope))
    assert fit.slope_se == pytest.approx(np.sqrt(cov[0, 0]))
    assert fit.limit_se == pytest.approx(np.sqrt(cov[1, 1]))
    residual = values - limit - slope / sizes
    assert fit.chi2 == pytest.approx(np.sum((residual / errors) ** 2))


@pytest.mark.parametrize(
    ("sizes", "values", "errors", "message"),
    [
        ([15, 30], [0.5, 0.4], [0.1, 0.0], "positive"),
        ([15, 15], [0.5, 0.4], [0.1, 0.1], "two distinct sizes"),
        ([15, 30], [0.5], [0.1, 0.1], "one length"),
        ([15, 30], [0.5, np.nan], [0.1, 0.1], "finite"),
    ],
)
def test_finite_size_fit_bad_input(sizes, values, errors, message):
    with pytest.raises(InvalidDataError, match=message):
        finite_size_fit(sizes, values, errors)


# Cover's curve at m = 20 with 40 trials per d: most cells expect far fewer than 5 successes or
# failures, where an asymptotic chi-square is badly calibrated (the Pearson statistic against
# chi2(#cells) gives a Kolmogorov-Smirnov p-value below 1e-20 on these simulated data sets)
COVER_20 = np.array([cover_probability(20, d) for d in range(1, 21)])


def test_binomial_deviance_is_the_log_likelihood_ratio_to_the_saturated_model():
    k, p, n = np.array([0, 3, 10]), np.array([0.1, 0.5, 0.9]), 10
    saturated = k * np.log(np.where(k > 0, k / n, 1)) + (n - k) * np.log(np.where(k < n, 1 - k / n, 1))
    model = k * np.log(p) + (n - k) * np.log(1 - p)
    assert binomial_deviance(k, p, n) == pytest.approx(2 * np.sum(saturated - model))
    assert binomial_deviance(np.array([1]), np.array([0.0]), 5) == np.inf
    assert binomial_deviance(np.array([0, 5]), np.array([0.0, 1.0]), 5) == 0.0


def assert_uniform_pvalues(pvalues: np.ndarray, n_sim: int) -> None:
    """p-values of data drawn from the model: uniform (a loose but real check) down to 1/(n_sim + 1)."""
    assert kstest(pvalues, "uniform").pvalue > 1e-3
    for level in (0.05, 0.2, 0.5):
        assert abs(np.mean(pvalues <= level) - level) < 0.07
    assert pvalues.min() >= 1 / (n_sim + 1)


def test_binomial_gof_pvalue_is_uniform_under_the_model():
    """300 data sets drawn from the model, 199 simulations each."""
    rng = np.random.default_rng(11)
    pvalues = np.array(
        [binomial_gof_pvalue(rng.binomial(40, COVER_20), COVER_20, 40, rng, n_sim=199) for _ in range(300)]
    )
    assert_uniform_pvalues(pvalues, 199)


def test_binomial_gof_pvalue_is_tiny_under_a_clear_alternative():
    """Data from Cover's curve tested against the curve with a bias (one dimension more)."""
    rng = np.random.default_rng(12)
    with_bias = np.array([cover_probability(20, d, bias=True) for d in range(1, 21)])
    for _ in range(5):
        counts = rng.binomial(150, COVER_20)
        assert binomial_gof_pvalue(counts, with_bias, 150, rng, n_sim=999) == 1 / 1000
        assert binomial_gof_pvalue(counts, COVER_20, 150, rng, n_sim=999) > 1e-3


def test_binomial_gof_pvalue_ties_impossible_counts_and_seeding():
    # every simulated data set equals the observed one (p in {0, 1}): all are ties, p = 1
    assert binomial_gof_pvalue([0, 7], [0.0, 1.0], 7, 0, n_sim=99) == 1.0
    assert binomial_gof_pvalue([1, 7], [0.0, 1.0], 7, 0, n_sim=99) == 0.0  # impossible: refuted
    counts = [3, 5, 9]
    first = binomial_gof_pvalue(counts, [0.2, 0.5, 0.8], 10, 4)
    assert first == binomial_gof_pvalue(counts, [0.2, 0.5, 0.8], 10, np.random.default_rng(4))
    assert 0 < first <= 1 and first * 10000 == pytest.approx(round(first * 10000))


@pytest.mark.parametrize(
    ("counts", "probs", "n", "n_sim", "message"),
    [
        ([3, 11], [0.5, 0.5], 10, 99, "whole numbers"),
        ([3, 4], [0.5], 10, 99, "one entry per count"),
        ([3, 4], [0.5, 1.5], 10, 99, r"\[0, 1\]"),
        ([3, 4], [0.5, 0.5], 0, 99, "n must"),
        ([3, 4], [0.5, 0.5], 10, 0, "n_sim"),
        ([], [], 10, 99, "non-empty"),
    ],
)
def test_binomial_gof_pvalue_bad_input(counts, probs, n, n_sim, message):
    with pytest.raises(InvalidDataError, match=message):
        binomial_gof_pvalue(counts, probs, n, 0, n_sim=n_sim)


def test_bootstrap_means_is_seeded_and_centred_on_the_sample_mean():
    from ntpnb._statistics import bootstrap_means

    x = np.r_[np.zeros(96), 25.0 * np.ones(4)]  # a mean carried by 4 of 100 trials
    means = bootstrap_means(x, 100, 4000, 1)
    np.testing.assert_array_equal(means, bootstrap_means(x, 100, 4000, 1))
    assert abs(means.mean() - x.mean()) < 0.05
    # P(no heavy trial among 100 draws) = 0.96^100 = 0.017; among 10 draws 0.96^10 = 0.66
    assert abs(np.mean(means == 0) - 0.96**100) < 0.01
    assert abs(np.mean(bootstrap_means(x, 10, 4000, 1) == 0) - 0.96**10) < 0.03
    for bad in ([], [1.0, np.nan], [[1.0, 2.0]]):
        with pytest.raises(InvalidDataError):
            bootstrap_means(bad, 10, 4000, 1)
    with pytest.raises(InvalidDataError, match="n_draws"):
        bootstrap_means(x, 0, 4000, 1)


# ------------------------------------------------------------------ draws nested in the grid
#: Cover's distribution of a draw's threshold on the grid d = 1 .. 20 (m = 20 points).
COVER_20_CELLS = np.diff(np.concatenate([[0.0], COVER_20, [1.0]]))


def _thresholds(rng, n, cells=COVER_20_CELLS):
    """``n`` draws' first grid indices, drawn from the cell probabilities."""
    return rng.choice(cells.size, size=n, p=cells / cells.sum())


def test_threshold_crossing_bootstrap_estimate_is_the_crossing_of_the_curve():
    x = np.arange(1, 21) / 20
    first = _thresholds(np.random.default_rng(0), 40)
    curve = [(first <= i).mean() for i in range(20)]
    estimate, se = threshold_crossing_bootstrap(x, first, 3)
    assert estimate == crossing(x, curve)
    assert (estimate, se) == threshold_crossing_bootstrap(x, first, np.random.default_rng(3))  # seeded
    assert 0 < se < 0.1
    # a jump: every draw's threshold at one grid point, no spread
    assert threshold_crossing_bootstrap(x, [5] * 10, 0) == (pytest.approx((x[4] + x[5]) / 2), 0.0)
    # the curve never reaches 1/2: no crossing, no error
    est, se = threshold_crossing_bootstrap(x, [20, 20, 3], 0)
    assert np.isnan(est) and np.isnan(se)


def test_threshold_crossing_bootstrap_error_matches_the_spread_of_independent_experiments():
    """The bootstrap standard error against the spread of the crossing over 300 fresh experiments."""
    rng = np.random.default_rng(5)
    x = np.arange(1, 21) / 20
    experiments = [_thresholds(rng, 30) for _ in range(300)]
    spread = np.std([crossing(x, [(f <= i).mean() for i in range(20)]) for f in experiments], ddof=1)
    mean_se = np.mean([threshold_crossing_bootstrap(x, f, rng, n_boot=300)[1] for f in experiments[:60]])
    assert mean_se == pytest.approx(spread, rel=0.25)


def test_threshold_crossing_bootstrap_bad_input():
    x = [0.1, 0.2, 0.3]
    with pytest.raises(InvalidDataError, match=r"whole numbers in \[0, 3\]"):
        threshold_crossing_bootstrap(x, [0, 4], 0)
    with pytest.raises(InvalidDataError, match=r"whole numbers in \[0, 3\]"):
        threshold_crossing_bootstrap(x, [0, 1.5], 0)
    with pytest.raises(InvalidDataError, match="non-empty"):
        threshold_crossing_bootstrap(x, [], 0)
    with pytest.raises(InvalidDataError):
        threshold_crossing_bootstrap(x, [0, 1], 0, n_boot=1)
    with pytest.raises(InvalidDataError, match="strictly increasing"):
        threshold_crossing_bootstrap([0.2, 0.1, 0.3], [0, 1], 0)


def test_threshold_gof_pvalue_is_uniform_under_the_model():
    rng = np.random.default_rng(21)
    pvalues = np.array(
        [threshold_gof_pvalue(_thresholds(rng, 60), COVER_20, rng, n_sim=199) for _ in range(300)]
    )
    assert_uniform_pvalues(pvalues, 199)


def test_threshold_gof_pvalue_rejects_a_shift_by_one_grid_point():
    """Cover's thresholds tested against the count with a bias (one dimension more)."""
    rng = np.random.default_rng(22)
    with_bias = np.array([cover_probability(20, d, bias=True) for d in range(1, 21)])
    for _ in range(5):
        first = _thresholds(rng, 300)
        assert threshold_gof_pvalue(first, with_bias, rng, n_sim=999) == 1 / 1000
        assert threshold_gof_pvalue(first, COVER_20, rng, n_sim=999) > 1e-3


def test_threshold_gof_pvalue_impossible_thresholds_seeding_and_bad_input():
    assert threshold_gof_pvalue([0, 1], [0.0, 1.0], 0, n_sim=99) == 0.0  # P(first = 0) = 0
    assert threshold_gof_pvalue([1, 1, 1], [0.0, 1.0], 0, n_sim=99) == 1.0  # the only outcome
    first = [0, 1, 1, 2, 3]
    p = threshold_gof_pvalue(first, [0.2, 0.5, 0.8], 4, n_sim=999)
    assert p == threshold_gof_pvalue(first, [0.2, 0.5, 0.8], np.random.default_rng(4), n_sim=999)
    with pytest.raises(InvalidDataError, match="non-decreasing"):
        threshold_gof_pvalue(first, [0.5, 0.2, 0.8], 0)
    with pytest.raises(InvalidDataError, match="non-decreasing"):
        threshold_gof_pvalue(first, [0.2, 0.5, 1.5], 0)
    with pytest.raises(InvalidDataError, match=r"whole numbers in \[0, 3\]"):
        threshold_gof_pvalue([0, 4], [0.2, 0.5, 0.8], 0)
    with pytest.raises(InvalidDataError):
        threshold_gof_pvalue(first, [0.2, 0.5, 0.8], 0, n_sim=0)


def test_fisher_pvalue_is_scipys_and_checks_its_counts():
    assert fisher_pvalue(3, 30, 10, 30) == pytest.approx(fisher_exact([[3, 27], [10, 20]])[1])
    assert fisher_pvalue(15, 30, 15, 30) == 1.0
    assert fisher_pvalue(0, 10, 10, 10) < 1e-4
    with pytest.raises(InvalidDataError, match="need 0 <= k <= n"):
        fisher_pvalue(11, 10, 3, 10)
    with pytest.raises(InvalidDataError):
        fisher_pvalue(1, 0, 1, 10)


def _permutation_trend_pvalue(events, covariates, random_state):
    """The second method: scipy's Monte Carlo permutation test of ``covariates @ events`` (40,000 draws)."""
    return permutation_test(
        (events,),
        lambda v: covariates @ v,
        permutation_type="pairings",
        n_resamples=40_000,
        alternative="greater",
        random_state=random_state,
    ).pvalue


def test_trend_pvalue_is_fishers_one_sided_test_for_two_groups_and_a_permutation_tests_for_three():
    # two groups: the exact conditional test of a rise is Fisher's one-sided exact test
    for k1, k2 in ((1, 5), (4, 4), (7, 2)):
        expected = fisher_exact([[k1, 50 - k1], [k2, 50 - k2]], alternative="less")[1]
        assert trend_pvalue([k1, k2], [50, 50], [0.0, 1.0]) == pytest.approx(expected, rel=1e-10)
    # three groups: the Monte Carlo permutation test of the same statistic, to its error
    scores, counts, sizes = np.log([4.0, 16.0, 32.0]), [1, 3, 5], [20, 30, 50]
    x = np.repeat(scores, sizes)
    y = np.concatenate([np.r_[np.ones(k), np.zeros(n - k)] for k, n in zip(counts, sizes, strict=True)])
    mc = _permutation_trend_pvalue(y, x, random_state=0)
    assert trend_pvalue(counts, sizes, scores) == pytest.approx(mc, abs=4 * np.sqrt(mc * (1 - mc) / 40_000))
    # a rise in a rate, a fall, and no events at all
    assert trend_pvalue([2, 10, 25], [30, 30, 30], [1, 2, 3]) < 1e-6
    assert trend_pvalue([25, 10, 2], [30, 30, 30], [1, 2, 3]) > 0.999
    assert trend_pvalue([0, 0, 0], [10, 10, 10], [1, 2, 3]) == 1.0


def _trend_pvalue_by_enumeration(successes, trials, scores):
    """The second method: every table with the observed total, weighted by prod C(n_g, k_g)."""
    tables = [k for k in itertools.product(*(range(n + 1) for n in trials)) if sum(k) == sum(successes)]
    log_w = np.array([sum(math.lgamma(n + 1) - math.lgamma(x + 1) - math.lgamma(n - x + 1)
                          for x, n in zip(k, trials, strict=True)) for k in tables])  # fmt: skip
    t, observed = np.array(tables) @ np.asarray(scores, dtype=float), float(np.dot(successes, scores))
    w = np.exp(log_w - log_w.max())
    return float(w[t >= observed - 1e-9 * max(1.0, abs(observed))].sum() / w.sum())


@pytest.mark.parametrize(
    ("successes", "trials", "scores"),
    [
        ([1, 3, 5], [8, 9, 10], [0.0, 1.0, 2.5]),
        ([4, 1, 0, 2], [6, 5, 7, 4], [1.0, 2.0, 3.0, 4.0]),  # a fall
        ([2, 2, 3, 1, 4], [4, 5, 4, 3, 6], np.log([2.0, 4.0, 8.0, 16.0, 32.0])),
        ([3, 1, 2], [5, 6, 4], [3.0, 1.0, 2.0]),  # scores out of order: the last step negative
        ([2, 2, 2], [4, 4, 4], [0.0, 1.0, 2.0]),  # the observed T ties many tables
        ([0, 6], [6, 6], [1.0, 1.0 + 1e-3]),
    ],
)
def test_trend_pvalue_sums_every_table_of_the_observed_total(successes, trials, scores):
    expected = _trend_pvalue_by_enumeration(successes, trials, scores)
    assert trend_pvalue(successes, trials, scores) == pytest.approx(expected, rel=1e-9, abs=1e-15)


def test_trend_pvalue_takes_many_groups_of_many_trials():
    """Five groups of 150 trials (a map of M5 with more sizes): the last two summed in closed form."""
    counts, sizes, scores = [5, 9, 12, 20, 26], [150] * 5, np.log([4.0, 8.0, 16.0, 32.0, 64.0])
    p = trend_pvalue(counts, sizes, scores)
    x = np.repeat(scores, sizes)
    y = np.concatenate([np.r_[np.ones(k), np.zeros(n - k)] for k, n in zip(counts, sizes, strict=True)])
    mc = _permutation_trend_pvalue(y, x, random_state=2)
    assert p == pytest.approx(mc, abs=4 * np.sqrt(mc * (1 - mc) / 40_000) + 1e-4)
    with pytest.raises(InvalidDataError, match="compositions"):
        trend_pvalue([67] * 6, [150] * 6, np.arange(6.0))  # six: a clear refusal, not a wrong answer


def test_trend_pvalue_is_valid_under_the_null():
    # one rate for every group: a p-value at most a is drawn with probability at most a
    rng = np.random.default_rng(4)
    p = [trend_pvalue(rng.binomial(10, 0.1, size=3), [10, 10, 10], [1, 2, 4]) for _ in range(1500)]
    for a in (0.01, 0.05, 0.2):
        assert np.mean(np.array(p) <= a) <= a + 3 * np.sqrt(a * (1 - a) / 1500)


@pytest.mark.parametrize(
    ("successes", "trials", "scores", "message"),
    [
        ([1, 2], [5, 5, 5], [1, 2, 3], "at least two groups"),
        ([1], [5], [1], "at least two groups"),
        ([6, 1], [5, 5], [1, 2], "more events than trials"),
        ([1, 2], [5, 5], [1, 1], "all equal"),
        ([1.5, 2], [5, 5], [1, 2], "non-negative integer"),
    ],
)
def test_trend_pvalue_bad_input(successes, trials, scores, message):
    with pytest.raises(InvalidDataError, match=message):
        trend_pvalue(successes, trials, scores)


def test_event_trend_pvalue_groups_the_trials_by_their_covariate_and_agrees_with_a_permutation_test():
    # trials in any order, groups of unequal sizes: the exact test of the grouped counts
    rng = np.random.default_rng(7)
    x = rng.permutation(np.repeat(np.log([4.0, 16.0, 32.0]), [40, 25, 35]))
    y = (rng.random(x.size) < np.where(x > 2, 0.2, 0.05)).astype(float)
    scores = np.unique(x)
    counts = [int(y[x == v].sum()) for v in scores]
    sizes = [int(np.sum(x == v)) for v in scores]
    p = event_trend_pvalue(y, x)
    assert p == trend_pvalue(counts, sizes, scores)
    # a second method: the permutation test of the events over the trials, to its Monte Carlo error
    mc = _permutation_trend_pvalue(y, x, random_state=1)
    assert p == pytest.approx(mc, abs=4 * np.sqrt(mc * (1 - mc) / 40_000) + 1e-4)
    # pooling two seeds' trials is the test on the concatenation
    assert event_trend_pvalue(np.r_[y, y], np.r_[x, x]) < p


@pytest.mark.parametrize(
    ("events", "covariates", "message"),
    [
        ([0, 1, 2], [1, 2, 3], "0 or 1"),
        ([0, 1, 1], [1, 2], "one covariate per event"),
        ([0, 1, 1], [2, 2, 2], "at least two"),
        ([0, 1], [1, np.nan], "finite"),
    ],
)
def test_event_trend_pvalue_bad_input(events, covariates, message):
    with pytest.raises(InvalidDataError, match=message):
        event_trend_pvalue(events, covariates)


def test_trend_power_agrees_with_the_exact_power_of_fishers_one_sided_test():
    # two groups: the exact test is Fisher's one-sided test, whose power is a finite sum
    n, rates, level = 30, (0.05, 0.3), 0.01
    k = np.arange(n + 1)
    pmf = [scipy.stats.binom.pmf(k, n, r) for r in rates]
    exact = sum(
        pmf[0][a] * pmf[1][b]
        for a in k
        for b in k
        if fisher_exact([[a, n - a], [b, n - b]], alternative="less")[1] < level
    )
    power = trend_power(rates, [n, n], [0.0, 1.0], level, rng=3, n_sim=4000)
    assert power == pytest.approx(exact, abs=4 * np.sqrt(exact * (1 - exact) / 4000))
    # one rate for every group: the power is the test's size, at most the level
    null = trend_power((0.2, 0.2, 0.2), [20, 20, 20], [1, 2, 3], 0.05, rng=4, n_sim=4000)
    assert null <= 0.05 + 4 * np.sqrt(0.05 * 0.95 / 4000)
    # more trials, more power
    assert trend_power(
        (0.01, 0.07, 0.12), [150] * 3, np.log([4, 16, 32]), 0.01, rng=5, n_sim=500
    ) > trend_power((0.01, 0.07, 0.12), [50] * 3, np.log([4, 16, 32]), 0.01, rng=5, n_sim=500)


@pytest.mark.parametrize(
    ("rates", "trials", "level", "message"),
    [
        ((0.1, 1.2), [5, 5], 0.01, "rate in"),
        ((0.1,), [5, 5], 0.01, "rate in"),
        ((0.1, 0.2), [5, 5], 1.0, "level"),
        ((0.1, 0.2), [5], 0.01, "at least two groups"),
    ],
)
def test_trend_power_bad_input(rates, trials, level, message):
    with pytest.raises(InvalidDataError, match=message):
        trend_power(rates, trials, [1, 2][: len(trials)], level, rng=0)


def _wilson_by_hand(k, n, confidence):
    """The closed form the package computed before it called scipy (the reference of the next test)."""
    z = float(scipy.stats.norm.ppf(0.5 + confidence / 2))
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (0.0 if k == 0 else max(0.0, centre - half), 1.0 if k == n else min(1.0, centre + half))


def _fisher_by_hand(pvalues):
    """Fisher's combination in closed form, P(chi2_2k > 2h) = e^-h sum_{i<k} h^i / i!, h = -sum log p."""
    half = -math.fsum(math.log(p) for p in pvalues)
    term, total = 1.0, 1.0
    for i in range(1, len(pvalues)):
        term *= half / i
        total += term
    return min(1.0, math.exp(-half) * total)


def test_scipys_wilson_interval_and_fishers_method_give_the_previous_numbers():
    """The interval and the combination come from scipy.stats now; they equal the hand-written ones."""
    rng = np.random.default_rng(2027)
    for _ in range(500):
        n = int(rng.integers(1, 3000))
        k = int(rng.integers(0, n + 1))
        confidence = float(rng.choice([0.9, 0.95, 0.98, 0.99]))
        assert wilson_interval(k, n, confidence) == pytest.approx(
            _wilson_by_hand(k, n, confidence), abs=1e-15
        )
    assert wilson_interval(0, 7)[0] == 0.0 and wilson_interval(7, 7)[1] == 1.0  # exact ends
    for _ in range(500):
        pvalues = tuple(rng.uniform(1e-12, 1.0, size=int(rng.integers(1, 30))) ** rng.uniform(0.1, 5))
        combined = Sample("pvalue", pvalues).statistic(0.01)[0]
        assert combined == pytest.approx(_fisher_by_hand(pvalues), rel=1e-12, abs=1e-300)
