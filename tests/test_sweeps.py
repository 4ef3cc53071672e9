"""The joblib sweep runner: seeding, independence of n_jobs, Wilson intervals, crossings."""

from __future__ import annotations

import joblib
import numpy as np
import pytest
from scipy.stats import binomtest, kstest

from ntpnb.errors import InvalidDataError
from ntpnb.linear.thresholds import cover_probability
from ntpnb.parallel import active_workers, parallel_map, run_sweep, trial_generators
from ntpnb.statistics import (
    _first_crossings,
    binomial_deviance,
    binomial_gof_pvalue,
    crossing,
    crossing_bootstrap,
    crossing_interval,
    finite_size_fit,
    wilson_interval,
)


def draw(point, rng):
    """A picklable trial: a few random numbers scaled by the point."""
    return point * rng.standard_normal(3)


GRID = [1.0, 2.0, 3.0, 4.0, 5.0]


def test_results_are_in_grid_order_and_use_each_point():
    res = run_sweep(lambda p, rng: (p, float(rng.random())), GRID, n_trials=4, seed=1)
    assert len(res) == len(GRID) and all(len(r) == 4 for r in res)
    assert [r[0][0] for r in res] == GRID


def test_every_trial_is_seeded_from_one_seed():
    res = run_sweep(draw, GRID, n_trials=3, seed=7)
    seeds = trial_generators(7, len(GRID), 3)
    for i, p in enumerate(GRID):
        for k in range(3):
            expected = p * np.random.default_rng(seeds[i][k]).standard_normal(3)
            np.testing.assert_array_equal(res[i][k], expected)
    # all trials differ (independent streams), and another seed gives other numbers
    flat = np.array([x / p for r, p in zip(res, GRID, strict=True) for x in r])
    assert len({tuple(row) for row in flat}) == flat.shape[0]
    assert not np.array_equal(run_sweep(draw, GRID, 3, seed=8)[0][0], res[0][0])


def test_results_do_not_depend_on_n_jobs_backend_or_batch_size():
    serial = run_sweep(draw, GRID, n_trials=5, seed=3)
    with joblib.parallel_config(backend="loky", n_jobs=2):
        loky = run_sweep(draw, GRID, n_trials=5, seed=3, batch_size=2)
    with joblib.parallel_config(backend="threading", n_jobs=2):
        threads = run_sweep(draw, GRID, n_trials=5, seed=3, batch_size=7)
    for other in (loky, threads):
        for a, b in zip(serial, other, strict=True):
            np.testing.assert_array_equal(np.array(a), np.array(b))


def test_appending_points_keeps_the_earlier_results():
    short = run_sweep(draw, GRID[:2], n_trials=3, seed=0)
    long = run_sweep(draw, GRID, n_trials=3, seed=0)
    np.testing.assert_array_equal(np.array(short), np.array(long[:2]))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"points": []}, "at least one grid point"),
        ({"n_trials": 0}, "n_trials"),
        ({"batch_size": 0}, "batch_size"),
        ({"seed": -1}, "seed"),
        ({"n_trials": 2.5}, "n_trials"),
    ],
)
def test_bad_sweep_arguments(kwargs, message):
    args = {"trial": draw, "points": GRID, "n_trials": 2, "seed": 0, **kwargs}
    with pytest.raises(InvalidDataError, match=message):
        run_sweep(**args)


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


def draw_and_where(point, rng):
    """:func:`draw`, and the address of the Dask worker that ran it (None outside Dask)."""
    from distributed import get_worker

    try:
        address = get_worker().address
    except ValueError:
        address = None
    return draw(point, rng), address


def test_the_dask_backend_runs_the_same_sweep_on_a_local_cluster(dask_client):
    serial = run_sweep(draw, GRID, n_trials=5, seed=3)
    with joblib.parallel_config(backend="dask"):
        assert active_workers() == 2
        remote = run_sweep(draw_and_where, GRID, n_trials=5, seed=3, batch_size=2)
    workers = set(dask_client.scheduler_info()["workers"])
    for a, b in zip(serial, remote, strict=True):
        np.testing.assert_array_equal(np.array(a), np.array([value for value, _ in b]))
    used = {address for row in remote for _, address in row}
    assert used <= workers and None not in used  # every trial ran on a worker of the cluster


def square(x):
    return x * x


def test_parallel_map_keeps_the_order_on_every_backend():
    items = list(range(11))
    expected = [x * x for x in items]
    assert active_workers() == 1  # nothing configured: serial
    assert parallel_map(square, items) == expected
    with joblib.parallel_config(backend="loky", n_jobs=2):
        assert active_workers() == 2
        assert parallel_map(square, items, batch_size=3) == expected
    assert parallel_map(square, []) == []
    with pytest.raises(InvalidDataError, match="batch_size"):
        parallel_map(square, items, batch_size=0)


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


def test_binomial_gof_pvalue_is_uniform_under_the_model():
    """A loose but real check: 300 data sets drawn from the model, 199 simulations each."""
    rng = np.random.default_rng(11)
    pvalues = np.array(
        [binomial_gof_pvalue(rng.binomial(40, COVER_20), COVER_20, 40, rng, n_sim=199) for _ in range(300)]
    )
    assert kstest(pvalues, "uniform").pvalue > 1e-3
    for level in (0.05, 0.2, 0.5):
        assert abs(np.mean(pvalues <= level) - level) < 0.07
    assert pvalues.min() >= 1 / 200


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
    from ntpnb.statistics import bootstrap_means

    x = np.r_[np.zeros(96), 25.0 * np.ones(4)]  # a mean carried by 4 of 100 trials
    means = bootstrap_means(x, n_resamples=4000, rng=1)
    np.testing.assert_array_equal(means, bootstrap_means(x, n_resamples=4000, rng=1))
    assert abs(means.mean() - x.mean()) < 0.05
    # P(no heavy trial among 100 draws) = 0.96^100 = 0.017; among 10 draws 0.96^10 = 0.66
    assert abs(np.mean(means == 0) - 0.96**100) < 0.01
    assert abs(np.mean(bootstrap_means(x, 10, 4000, rng=1) == 0) - 0.96**10) < 0.03
    for bad in ([], [1.0, np.nan], [[1.0, 2.0]]):
        with pytest.raises(InvalidDataError):
            bootstrap_means(bad)
    with pytest.raises(InvalidDataError, match="n_draws"):
        bootstrap_means(x, 0)
