"""Many small independent random trials in parallel, through joblib: sweeps and maps.

:func:`run_sweep` evaluates ``trial(point, rng)`` for every point of a grid and ``n_trials``
independent random generators per point. Trial ``k`` of point ``i`` gets
``SeedSequence(seed).spawn(n_points)[i].spawn(n_trials)[k]``, so the results (in grid order) are
the same for any ``n_jobs``, backend or batch size, and points added at the end of a grid leave
earlier ones unchanged. The backend and the number of workers come from joblib's configuration
(serial by default; ``joblib.parallel_config(backend="loky", n_jobs=2)``, or a Dask or Ray
cluster as the book's *Reproduce* page shows); ``trial`` must then be picklable (a module-level
function). :func:`parallel_map` is the same machinery for work that is not a random sweep.
"""

from __future__ import annotations

import functools
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np
from threadpoolctl import ThreadpoolController

from . import settings
from ._validation import as_count, as_ordered, check_dense_size
from .errors import InvalidDataError

#: The joblib backends whose workers run on this machine (joblib is imported by the functions).
_LOCAL_BACKENDS: tuple[str, ...] = ("loky", "multiprocessing", "threading")

#: Memory of one spawned ``numpy.random.SeedSequence`` (measured: about 380 bytes).
SEED_SEQUENCE_BYTES: int = 400

P = TypeVar("P")
R = TypeVar("R")


def trial_generators(seed: int, n_points: int, n_trials: int) -> list[list[np.random.SeedSequence]]:
    """The seed sequences of every trial: ``[point][trial]``, all spawned from ``seed``.

    Raises
    ------
    InvalidDataError
        If ``seed`` is not a non-negative integer, a count is not a positive integer, or the
        seeds would exceed :data:`ntpnb.settings.MAX_DENSE_BYTES`.
    """
    seed = as_count(seed, "seed", minimum=0)
    n_points, n_trials = as_count(n_points, "n_points"), as_count(n_trials, "n_trials")
    check_dense_size((n_points, n_trials), "the trials' seed sequences", itemsize=SEED_SEQUENCE_BYTES)
    return [child.spawn(n_trials) for child in np.random.SeedSequence(seed).spawn(n_points)]


@functools.lru_cache(maxsize=1)
def _controller(pid: int, n_modules: int) -> ThreadpoolController:
    """The BLAS/OpenMP controller of process ``pid``, remade after new imports (making one takes 2 ms)."""
    return ThreadpoolController()


def limit_threads(limits: int | None, user_api: str | None = None) -> Any:
    """``threadpoolctl.threadpool_limits(limits, user_api)`` without its scan of the libraries per call."""
    return _controller(os.getpid(), len(sys.modules)).limit(limits=limits, user_api=user_api)


def _map_batch(func: Callable[[Any], Any], items: list[Any]) -> list[Any]:
    with limit_threads(settings.BLAS_THREADS):
        return [func(item) for item in items]


def parallel_map(func: Callable[[P], R], items: Sequence[P], batch_size: int = 1) -> list[R]:
    """``[func(item) for item in items]``, computed through joblib on its configured backend.

    The results come in the order of ``items``; ``batch_size`` (items per joblib task) does not
    change them. ``func`` uses :data:`ntpnb.settings.BLAS_THREADS` BLAS/OpenMP threads.

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
    if not callable(func):
        raise InvalidDataError(f"func must be a callable, got {type(func).__name__}")
    batch_size = as_count(batch_size, "batch_size")
    items = as_ordered(items, "items")
    batches = [items[i : i + batch_size] for i in range(0, len(items), batch_size)]
    from joblib import Parallel, delayed

    tasks = (delayed(_map_batch)(func, batch) for batch in batches)
    return [result for batch in Parallel(n_jobs=active_workers())(tasks) for result in batch]


def active_workers() -> int:
    """The number of workers of joblib's active backend (on a local one at most its CPUs, warning)."""
    import joblib
    from joblib.parallel import BACKENDS, get_active_backend

    backend, n_jobs = get_active_backend()
    workers = max(1, int(backend.effective_n_jobs(n_jobs)))
    if isinstance(backend, tuple(BACKENDS[name] for name in _LOCAL_BACKENDS)):
        cpus = max(1, int(joblib.cpu_count()))
        if workers > cpus:
            warnings.warn(
                f"n_jobs = {n_jobs} exceeds the {cpus} CPUs of this machine; using {cpus} workers",
                UserWarning,
                stacklevel=3,
            )
            return cpus
    return workers


def seeded_trial(trial: Callable[[Any, np.random.Generator], Any], job: tuple[Any, Any]) -> Any:
    """``trial(point, rng)`` for a job ``(point, seed_sequence)``, ``rng`` seeded by the sequence."""
    point, seed_sequence = job
    return trial(point, np.random.default_rng(seed_sequence))


def run_sweep(
    trial: Callable[[P, np.random.Generator], R],
    points: Sequence[P],
    n_trials: int,
    seed: int = 0,
) -> list[list[R]]:
    """Run ``trial(point, rng)`` ``n_trials`` times at every point, in parallel through joblib.

    All of ``trial``'s randomness must come from its generator; ``points`` are any picklable
    objects (e.g. dicts of parameters). 16 trials per joblib task (:func:`parallel_map`'s ``batch_size``).

    Returns
    -------
    list of list
        ``results[i][k]`` is the result of trial ``k`` at ``points[i]``.

    Raises
    ------
    InvalidDataError
        If ``trial`` is not callable, the grid is empty or unordered (a set, a dict), or
        ``n_trials`` is not a positive integer.
    """
    if not callable(trial):
        raise InvalidDataError(f"trial must be a callable, got {type(trial).__name__}")
    points = as_ordered(points, "points")
    if not points:
        raise InvalidDataError("the sweep needs at least one grid point")
    n_trials = as_count(n_trials, "n_trials")
    seeds = trial_generators(seed, len(points), n_trials)
    jobs = [(point, ss) for point, per in zip(points, seeds, strict=True) for ss in per]
    flat = parallel_map(functools.partial(seeded_trial, trial), jobs, 16)
    return [flat[i * n_trials : (i + 1) * n_trials] for i in range(len(points))]
