"""The joblib sweep runner: seeding, independence of n_jobs, Wilson intervals, crossings."""

from __future__ import annotations

import joblib
import numpy as np
import pytest
from scipy.stats import binomtest

from ntpnb.errors import InvalidDataError
from ntpnb.sweeps import (
    active_workers,
    crossing,
    crossing_interval,
    parallel_map,
    run_sweep,
    trial_generators,
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


def test_bootstrap_means_is_seeded_and_centred_on_the_sample_mean():
    from ntpnb.sweeps import bootstrap_means

    x = np.r_[np.zeros(96), 25.0 * np.ones(4)]  # a mean carried by 4 of 100 trials
    means = bootstrap_means(x, n_resamples=4000, seed=1)
    np.testing.assert_array_equal(means, bootstrap_means(x, n_resamples=4000, seed=1))
    assert abs(means.mean() - x.mean()) < 0.05
    # P(no heavy trial among 100 draws) = 0.96^100 = 0.017; among 10 draws 0.96^10 = 0.66
    assert abs(np.mean(means == 0) - 0.96**100) < 0.01
    assert abs(np.mean(bootstrap_means(x, 10, 4000, seed=1) == 0) - 0.96**10) < 0.03
    for bad in ([], [1.0, np.nan], [[1.0, 2.0]]):
        with pytest.raises(InvalidDataError):
            bootstrap_means(bad)
    with pytest.raises(InvalidDataError, match="n_draws"):
        bootstrap_means(x, 0)
