"""Model-agnostic parameter sweeps of many small independent random trials, through joblib.

:func:`run_sweep` evaluates ``trial(point, rng)`` for every point of a grid and ``n_trials``
independent random generators per point. Reproducibility does not depend on how the work is
split:

* every trial gets its own generator, spawned from one seed with
  :class:`numpy.random.SeedSequence` (``SeedSequence(seed).spawn(n_points)[i].spawn(n_trials)[k]``
  for trial ``k`` of point ``i``), so the results are the same for any ``n_jobs``, backend or
  batch size, and adding points at the end of a grid leaves earlier ones unchanged;
* results come back in grid order.

The parallel backend and the number of workers are *not* arguments: they come from joblib's
configuration, so the same code runs serially (the default), on local processes, or on a
cluster:

.. code-block:: python

    import joblib
    with joblib.parallel_config(backend="loky", n_jobs=2):
        results = run_sweep(trial, grid, n_trials=100, seed=0)

    # Dask (``pip install "dask[distributed]"``): connect a client to the cluster first;
    # ``distributed.Client()`` with no address starts a local one (tests/test_sweeps.py runs
    # a sweep this way and checks that it gives the serial results)
    client = distributed.Client("tcp://scheduler:8786")
    with joblib.parallel_config(backend="dask"):
        results = run_sweep(trial, grid, n_trials=100, seed=0)

    # Ray (``pip install ray``): ``from ray.util.joblib import register_ray; register_ray()``
    with joblib.parallel_config(backend="ray"):
        results = run_sweep(trial, grid, n_trials=100, seed=0)

``trial`` must be picklable (a module-level function) for process and cluster backends.

:func:`parallel_map` is the same machinery for work that is not a random sweep: ``func(item)``
for every item, in order, on joblib's configured backend (Paper B's experiments set up their
trials and train them in chunks this way), and :func:`active_workers` says how many workers that
backend has.

:func:`wilson_interval` gives the Wilson score interval of a success fraction, and
:func:`crossing` locates where an increasing curve crosses a level (a threshold).
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, TypeVar

import joblib
import numpy as np
from joblib import Parallel, delayed
from joblib.parallel import BACKENDS, get_active_backend
from scipy.stats import norm
from threadpoolctl import threadpool_limits

from . import settings
from .errors import InvalidDataError
from .validation import as_count, as_float_array, as_ordered, check_dense_size

__all__ = [
    "trial_generators",
    "run_sweep",
    "parallel_map",
    "active_workers",
    "wilson_interval",
    "crossing",
    "crossing_interval",
    "bootstrap_means",
]

#: The joblib backends whose workers run on this machine (their number is capped to its CPUs).
_LOCAL_BACKENDS = tuple(BACKENDS[name] for name in ("loky", "multiprocessing", "threading"))

#: Memory of one trial's spawned ``numpy.random.SeedSequence`` (measured with tracemalloc: about
#: 380 bytes); a sweep whose seeds would exceed :data:`ntpnb.settings.MAX_DENSE_BYTES` (about
#: 5 million trials) is refused before any is spawned.
SEED_SEQUENCE_BYTES: int = 400

P = TypeVar("P")
R = TypeVar("R")


def trial_generators(seed: int, n_points: int, n_trials: int) -> list[list[np.random.SeedSequence]]:
    """The seed sequences of every trial: ``[point][trial]``, all spawned from ``seed``.

    Raises
    ------
    InvalidDataError
        If ``seed`` is not a non-negative integer, a count is not a positive integer, or the
        seeds would exceed :data:`ntpnb.settings.MAX_DENSE_BYTES` (:data:`SEED_SEQUENCE_BYTES`
        each).
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InvalidDataError(f"seed must be a non-negative integer, got {seed!r}")
    _check_count(n_points, "n_points")
    _check_count(n_trials, "n_trials")
    check_dense_size((n_points, n_trials), "the trials' seed sequences", itemsize=SEED_SEQUENCE_BYTES)
    return [child.spawn(n_trials) for child in np.random.SeedSequence(int(seed)).spawn(n_points)]


def _map_batch(func: Callable[[Any], Any], items: list[Any], blas_threads: int | None) -> list[Any]:
    with threadpool_limits(limits=blas_threads):
        return [func(item) for item in items]


def _check_count(value: object, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidDataError(f"{name} must be a positive integer, got {value!r}")


def _check_callable(value: object, name: str) -> None:
    if not callable(value):
        raise InvalidDataError(f"{name} must be a callable, got {type(value).__name__}")


def parallel_map(
    func: Callable[[P], R],
    items: Sequence[P],
    batch_size: int = 1,
    blas_threads: int | None = settings.BLAS_THREADS,
) -> list[R]:
    """``[func(item) for item in items]``, computed through joblib on its configured backend.

    Serial by default; inside ``joblib.parallel_config(backend=..., n_jobs=...)`` on local
    processes, threads or a Dask or Ray cluster (see the module docstring). The results come
    back in the order of ``items`` and do not depend on the backend as long as ``func`` is a
    deterministic function of its item.

    Parameters
    ----------
    func
        A function of one item; picklable (module level) for process and cluster backends.
    items
        The inputs (picklable).
    batch_size
        Items per joblib task; does not change the results.
    blas_threads
        BLAS/OpenMP threads ``func`` may use (``threadpoolctl``); None leaves them alone.

    Raises
    ------
    InvalidDataError
        If ``func`` is not callable, ``batch_size`` not a positive integer or ``items`` not an
        ordered sequence (a set or a dict has no defined order).

    Warns
    -----
    UserWarning
        If ``n_jobs`` exceeds the CPUs of this machine on a local backend (it is capped).
    """
    _check_callable(func, "func")
    _check_count(batch_size, "batch_size")
    items = as_ordered(items, "items")
    batches = [items[i : i + batch_size] for i in range(0, len(items), batch_size)]
    tasks = (delayed(_map_batch)(func, batch, blas_threads) for batch in batches)
    workers, capped = _workers()
    parallel = Parallel(n_jobs=workers) if capped else Parallel()
    return [result for batch in parallel(tasks) for result in batch]


def _workers() -> tuple[int, bool]:
    """The number of workers to use on joblib's active backend, and whether it was capped.

    On the backends that run on this machine (processes or threads) a request for more workers
    than :func:`joblib.cpu_count` (which respects CPU affinity and container limits) is capped
    to it, with a warning: the trials are CPU-bound, and ``n_jobs = 1000`` would start 1000
    processes. Negative ``n_jobs`` keep joblib's meaning (``-1``: every CPU). Cluster backends
    (Dask, Ray) are not capped: their workers live elsewhere.
    """
    backend, n_jobs = get_active_backend()
    workers = max(1, int(backend.effective_n_jobs(n_jobs)))
    if isinstance(backend, _LOCAL_BACKENDS):
        cpus = max(1, int(joblib.cpu_count()))
        if workers > cpus:
            warnings.warn(
                f"n_jobs = {n_jobs} exceeds the {cpus} CPUs of this machine; using {cpus} workers",
                UserWarning,
                stacklevel=3,
            )
            return cpus, True
    return workers, False


def active_workers() -> int:
    """The number of workers of joblib's active backend (1 unless ``parallel_config`` says more).

    On local backends it is at most :func:`joblib.cpu_count` (a larger ``n_jobs`` is capped,
    with a warning).
    """
    return _workers()[0]


def _seeded_trial(trial: Callable[[Any, np.random.Generator], Any], job: tuple[Any, Any]) -> Any:
    point, seed_sequence = job
    return trial(point, np.random.default_rng(seed_sequence))


def run_sweep(
    trial: Callable[[P, np.random.Generator], R],
    points: Sequence[P],
    n_trials: int,
    seed: int = 0,
    batch_size: int = 16,
    blas_threads: int | None = settings.BLAS_THREADS,
) -> list[list[R]]:
    """Run ``trial(point, rng)`` ``n_trials`` times at every point, in parallel through joblib.

    Parameters
    ----------
    trial
        A function of one grid point and a :class:`numpy.random.Generator`; all of its
        randomness must come from that generator.
    points
        The grid (any picklable objects, e.g. dicts of parameters).
    n_trials
        Independent trials per point.
    seed
        The one seed every trial's generator is spawned from.
    batch_size
        Trials per joblib task (fewer, larger tasks amortize the dispatch overhead); does not
        change the results.
    blas_threads
        BLAS/OpenMP threads each trial may use (``threadpoolctl``); None leaves them alone.
        The default 1 suits many small problems: the parallelism comes from the workers, and
        a multi-threaded BLAS on small matrices is slower (by 100x on a loaded machine here).

    Returns
    -------
    list of list
        ``results[i][k]`` is the result of trial ``k`` at ``points[i]``.

    Raises
    ------
    InvalidDataError
        If ``trial`` is not callable, the grid is empty or unordered (a set, a dict), or
        ``n_trials`` or ``batch_size`` is not a positive integer.
    """
    _check_callable(trial, "trial")
    points = as_ordered(points, "points")
    if not points:
        raise InvalidDataError("the sweep needs at least one grid point")
    _check_count(n_trials, "n_trials")
    _check_count(batch_size, "batch_size")
    seeds = trial_generators(seed, len(points), n_trials)
    jobs = [(point, ss) for point, per in zip(points, seeds, strict=True) for ss in per]
    flat = parallel_map(partial(_seeded_trial, trial), jobs, batch_size, blas_threads)
    return [flat[i * n_trials : (i + 1) * n_trials] for i in range(len(points))]


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``successes / n``.

    ``(p + z^2/(2n) ± z sqrt(p(1-p)/n + z^2/(4n^2))) / (1 + z^2/n)`` with ``p = successes/n``
    and ``z`` the two-sided normal quantile of ``confidence``. Unlike the Wald interval it
    stays inside [0, 1] and is not degenerate at 0 or ``n`` successes.

    Raises
    ------
    InvalidDataError
        If ``n`` is not a positive integer, ``successes`` not an integer in ``[0, n]``, or
        ``confidence`` not a number in (0, 1).
    """
    n = as_count(n, "n")
    successes = as_count(successes, "successes", minimum=0)
    if isinstance(confidence, (bool, np.bool_)) or not isinstance(confidence, numbers.Real):
        raise InvalidDataError(f"confidence must be a number in (0, 1), got {confidence!r}")
    if not 0 <= successes <= n:
        raise InvalidDataError(f"need 0 <= successes <= n and n >= 1, got {successes} of {n}")
    if not 0 < confidence < 1:
        raise InvalidDataError(f"confidence must lie in (0, 1), got {confidence}")
    z = float(norm.ppf(0.5 + confidence / 2))
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if successes == 0 else max(0.0, centre - half)  # exact ends (no rounding)
    hi = 1.0 if successes == n else min(1.0, centre + half)
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
    if isinstance(level, (bool, np.bool_)) or not isinstance(level, numbers.Real) or not np.isfinite(level):
        raise InvalidDataError(f"level must be a finite number, got {level!r}")
    if x.shape != y.shape or x.ndim != 1 or x.size == 0:
        raise InvalidDataError(f"x and y must be 1-D of the same length, got {x.shape} and {y.shape}")
    if np.any(np.diff(x) <= 0):
        raise InvalidDataError("x must be strictly increasing")
    above = np.flatnonzero(y >= level)
    if above.size == 0:
        return float("nan")
    i = int(above[0])
    if i == 0:
        return float(x[0])
    x0, x1, y0, y1 = x[i - 1], x[i], y[i - 1], y[i]
    return float(x0 + (level - y0) * (x1 - x0) / (y1 - y0))


def crossing_interval(
    x: Sequence[float],
    successes: Sequence[int],
    n: int,
    level: float = 0.5,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Where a measured proportion crosses ``level``, with its uncertainty from Wilson intervals.

    ``successes[i]`` of ``n`` trials succeeded at ``x[i]``. The interval runs from the crossing of
    the upper Wilson bounds (below it the proportion is significantly under ``level``) to the
    crossing of the lower Wilson bounds (above it, significantly over), both by :func:`crossing`.
    The upper end is NaN if the lower bounds never reach ``level`` on the grid.

    Raises
    ------
    InvalidDataError
        On bad counts (see :func:`wilson_interval`) or a bad grid (see :func:`crossing`).
    """
    bounds = np.array([wilson_interval(int(k), n, confidence) for k in successes]).reshape(-1, 2)
    return crossing(x, bounds[:, 1], level), crossing(x, bounds[:, 0], level)


def bootstrap_means(
    values: Sequence[float], n_draws: int | None = None, n_resamples: int = 20_000, seed: int = 0
) -> np.ndarray:
    """Means of ``n_draws`` values drawn with replacement from ``values``, ``n_resamples`` times.

    The distribution of a mean over ``n_draws`` trials (default: as many as ``values`` has) when
    trials are distributed as ``values`` are: its quantiles give a percentile interval of the
    mean, and ``np.mean(bootstrap_means(x) <= v)`` how often such a mean is at most ``v``
    (what a heavy-tailed sample, whose mean a few trials carry, needs instead of a standard
    error). Seeded: the same draws on every machine.

    Raises
    ------
    InvalidDataError
        If ``values`` is not a non-empty finite 1-D numeric sequence or a count is not positive.
    """
    x = as_float_array(as_ordered(values, "values"), "values", 1)
    if x.ndim != 1 or x.size == 0 or not np.all(np.isfinite(x)):
        raise InvalidDataError(f"values must be a non-empty finite 1-D sequence, got shape {x.shape}")
    n = x.size if n_draws is None else as_count(n_draws, "n_draws")
    reps = as_count(n_resamples, "n_resamples")
    check_dense_size((reps, n), "the bootstrap draws")
    rng = np.random.default_rng(seed)
    return x[rng.integers(0, x.size, size=(reps, n))].mean(axis=1)
