"""Trials in parallel (ntpnb._parallel): seeding, results independent of n_jobs, backend and batch
size, order kept, n_jobs capped to the machine."""

from __future__ import annotations

import sys
import types
import warnings

import joblib
import numpy as np
import pytest

from ntpnb import _parallel as parallel
from ntpnb._parallel import active_workers, parallel_map, run_sweep, trial_generators
from ntpnb.errors import InvalidDataError

from conftest import worker_blas_threads


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


def test_results_do_not_depend_on_n_jobs_or_backend():
    serial = run_sweep(draw, GRID, n_trials=5, seed=3)
    with joblib.parallel_config(backend="loky", n_jobs=2):
        loky = run_sweep(draw, GRID, n_trials=5, seed=3)
    with joblib.parallel_config(backend="threading", n_jobs=2):
        threads = run_sweep(draw, GRID, n_trials=5, seed=3)
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
        ({"seed": -1}, "seed"),
        ({"n_trials": 2.5}, "n_trials"),
    ],
)
def test_bad_sweep_arguments(kwargs, message):
    args = {"trial": draw, "points": GRID, "n_trials": 2, "seed": 0, **kwargs}
    with pytest.raises(InvalidDataError, match=message):
        run_sweep(**args)


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
        remote = run_sweep(draw_and_where, GRID, n_trials=5, seed=3)
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


def _trial(point, rng):
    return point


def test_n_jobs_beyond_the_machine_is_capped_with_a_warning():
    """``n_jobs = 1000`` asked for 1000 workers; on a local backend it is capped to the CPUs."""
    cpus = joblib.cpu_count()
    with joblib.parallel_config(backend="threading", n_jobs=1000):
        with pytest.warns(UserWarning, match=rf"n_jobs = 1000 exceeds the {cpus} CPUs"):
            assert parallel.active_workers() == cpus
        with pytest.warns(UserWarning, match="exceeds"):
            assert parallel.parallel_map(abs, [-1, 2, -3]) == [1, 2, 3]
    with joblib.parallel_config(backend="threading", n_jobs=-1), warnings.catch_warnings():
        warnings.simplefilter("error")  # joblib's -1 (every CPU) keeps working, without a warning
        assert parallel.active_workers() == cpus
        assert parallel.run_sweep(_trial, [1, 2], n_trials=2) == [[1, 1], [2, 2]]


def blas_threads() -> dict[str, int]:
    """The thread count of each BLAS library loaded in this process, by its file."""
    from threadpoolctl import threadpool_info

    return {lib["filepath"]: lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}


def test_limit_threads_limits_every_blas_library_and_restores_them():

    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=2, user_api="blas"):  # whatever the test worker's own limit
        before = blas_threads()  # a BLAS built single-threaded (SCS's own OpenBLAS) stays at 1
        assert 2 in before.values(), "numpy's BLAS is not loaded"  # imported above
        with parallel.limit_threads(1, user_api="blas"):
            assert set(blas_threads().values()) == {1}
        assert blas_threads() == before


def test_a_test_worker_s_blas_uses_its_share_of_the_cores():
    """Under pytest-xdist, numpy's and scipy's BLAS run this worker's share (conftest's limit)."""
    threads = worker_blas_threads()
    if threads is None:
        pytest.skip("not a pytest-xdist worker: the BLAS keeps its own thread count")
    import scipy.linalg  # noqa: F401  (its BLAS, loaded before the limit)

    blas = blas_threads()
    assert len(blas) >= 2 and max(blas.values()) <= threads, blas


def test_the_thread_controller_is_made_again_when_modules_were_imported(monkeypatch):
    with parallel.limit_threads(1):
        made = parallel._controller.cache_info().misses
    with parallel.limit_threads(1):
        assert parallel._controller.cache_info().misses == made  # once per process
    monkeypatch.setitem(sys.modules, "ntpnb_test_fake_module", types.ModuleType("fake"))
    with parallel.limit_threads(1):
        assert parallel._controller.cache_info().misses == made + 1
