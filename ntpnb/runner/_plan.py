"""The plan of a run: the runs it executes, into which trees, and which of them must run.

A run's inputs are checked first (:func:`~._check.check_run`, which writes nothing); the run is
planned once (:func:`planned_run`), then executed (:mod:`._run`). Each chosen notebook runs at the
book's seed, then the further seeds (:func:`seed_runs`), each into an output tree (a sweep's
further seeds into trees of their own). Then, under the output lock, what the trees hold: a
notebook is not executed again while its cache key (:func:`~ntpnb.records._cache.run_key`:
source, parameters, ``ntpnb`` sources) is unchanged since its last success into the tree and its
outputs are what that run wrote (its manifest, :mod:`ntpnb.records._manifest`, written after a
success and removed on failure: :mod:`._execute`). The longest notebooks start first
(:func:`longest_first`), by the times of earlier runs in the tree's ``timings.json``
(:func:`~ntpnb.records._timings.record_timings`), an untimed one by the benchmark record's
(:mod:`ntpnb.records._timings`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..records._cache import package_fingerprint, run_key
from ..records._lock import output_lock
from ..records._manifest import CHANGED, NOT_RUN, chapter_damage
from ..records._places import (
    OutputTree,
    output_tree,
)
from ..records._run import ChapterRun, PlannedRun, complete_run, int_seed
from ..records._staging import remove_leftovers
from ..records._timings import last_seconds, reference_seconds, run_sources, slowest_first
from ..records._tree import TreeRecord, claim_tree
from ..settings import QUIET_SECONDS
from ._check import CheckedRun


def seed_runs(
    source: Path,
    parameters: Mapping[str, Any],
    profile: str,
    tree: OutputTree,
    seeds: int,
    fingerprint: str,
    point: str = "",
) -> list[PlannedRun]:
    """The runs of one notebook in a sweep of ``seeds`` seeds: the book's first, then the others.

    The further seeds (``seed + 1``, ...) run into trees of their own under ``tree``; a notebook
    without an integer ``seed`` runs once. Every run is given ``profile`` and its ``output_dir``
    (``point``: the point of a grid they run at, which names them).
    """
    base = int_seed(parameters)
    runs = []
    for i in range(seeds if base is not None else 1):
        into = tree if i == 0 else output_tree(tree.seed_root(base + i))
        seeded = {**parameters, "seed": base + i} if i else parameters
        # output_dir is relative to the executed notebook's folder, where papermill, nbval and Jupyter run it
        injected = {**seeded, "profile": profile, "output_dir": os.path.relpath(into.root, into.notebooks)}
        key = run_key(source, injected, fingerprint)
        runs.append(PlannedRun(source, injected, into, key, i > 0, fingerprint, point))
    return runs


def recorded_seconds(runs: Sequence[PlannedRun], profile: str) -> dict[str, float]:
    """Each of ``runs``' last time at ``profile`` in its tree by label, else its book seed's (else inf).

    A further seed at a point of a grid takes the time of its point's run at the book's seed.
    """
    at_book_seed = {
        (run.notebook, run.point): last_seconds(run.tree, profile, run.notebook)
        for run in runs
        if not run.sweep
    }
    found = {}
    for run in runs:
        seconds = last_seconds(run.tree, profile, run.notebook)
        if seconds == float("inf") and run.sweep:
            seconds = at_book_seed.get((run.notebook, run.point), seconds)
        found[run.label] = seconds
    return found


def longest_first(
    runs: Sequence[PlannedRun], seconds: Mapping[str, float], order: Sequence[str] = ()
) -> list[PlannedRun]:
    """``runs``, the longest first by the ``seconds`` of their last runs (by label: :func:`recorded_seconds`).

    Untimed notebooks come first, following ``order`` (the slowest first, by the benchmark record:
    :func:`~._timings.slowest_first`), then the order asked; of those, every notebook's run at the
    book's seed before any further seed. On a first run the book's-seed runs compile each
    chapter's kernels once into numba's cache, from which the further seeds load them, instead of
    two seeds of one chapter compiling the same kernels side by side.
    """
    rank = {name: i for i, name in enumerate(order)}
    untimed_sweep = {run.label: run.sweep and seconds[run.label] == float("inf") for run in runs}
    return sorted(
        runs, key=lambda r: (-seconds[r.label], untimed_sweep[r.label], rank.get(r.notebook, len(rank)))
    )


@dataclass(frozen=True)
class RunPlan:
    """A run resolved once: what it executes, into which trees, and what those trees already hold.

    ``record`` is its setting (profile, overrides, seeds, notebooks); ``runs`` are in the
    notebooks' order, each at the book's seed, then the others, into ``trees`` (the book's seed's
    first). Of the runs, ``cached`` holds the records of those whose outputs in place are their
    last run's and ``pending`` the others, the longest first (:func:`longest_first`); ``rerun``
    says why those whose outputs were damaged since run again. ``seconds``: each run's last time;
    ``reference``: the benchmark record's times (:func:`~._timings.reference_seconds`).
    """

    record: TreeRecord
    runs: tuple[PlannedRun, ...]
    trees: tuple[OutputTree, ...]
    jobs: int
    seconds: Mapping[str, float]
    cached: Mapping[str, ChapterRun]
    pending: tuple[PlannedRun, ...]
    rerun: Mapping[str, str]
    reference: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def sources(self) -> dict[str, dict[str, str]]:
        """The sources each notebook of the run ran, by name (:func:`~._timings.run_sources`; once each)."""
        by_name = {run.notebook: run for run in self.runs if not run.sweep}  # one per notebook, of any point
        return {name: run_sources(run.source, run.package) for name, run in by_name.items()}


def planned_run(
    root: Path,
    checked: CheckedRun,
    force: bool = False,
    wait: bool = True,
    log: Callable[[str], None] = print,
) -> AbstractContextManager[RunPlan]:
    """Within: the plan of the ``checked`` run of the project at ``root`` (:func:`check_run`).

    Every input was checked before the output lock is taken: a refused run writes nothing and
    starts no kernel. Then matplotlib's font cache is built, so its notice never lands in a
    notebook. Under the lock (:func:`~ntpnb.records._lock.output_lock`), held
    while the plan executes, the tree is claimed (:func:`~ntpnb.records._tree.claim_tree`), what
    killed runs left is removed, then what the trees hold is read (each run's
    :func:`~ntpnb.records._manifest.chapter_damage` given its cache key, its record, its last time).
    """
    return planned_runs(root, [checked], force, wait, log)


@contextmanager
def planned_runs(
    root: Path,
    checked: Sequence[CheckedRun],
    force: bool = False,
    wait: bool = True,
    log: Callable[[str], None] = print,
) -> Iterator[RunPlan]:
    """Within: one plan of several ``checked`` runs of one profile and ``--jobs`` (the points of a grid).

    As :func:`planned_run`, each run into its own tree under its own lock, all held while the plan
    executes (taken in the order of the trees' paths, so two commands never wait on each other).
    The plan's ``record`` is the first run's.

    Raises
    ------
    ValueError
        If the runs differ in profile or jobs, or none is given.
    """
    first = checked[0]
    profile = first.record.profile
    if any(c.record.profile != profile or c.jobs != first.jobs for c in checked):
        raise ValueError("the runs of one plan share their profile and jobs")
    tree_of = {c.tree: output_tree(c.tree) for c in checked}
    runs = _every_run(checked, tree_of, profile)
    trees = tuple(dict.fromkeys(run.tree for run in runs))
    said = f"ntpnb: preparing {len(runs)} run{'s' * (len(runs) != 1)} ({PREPARING})"
    slow = threading.Timer(QUIET_SECONDS, log, [said])
    slow.daemon = True  # said if the preparation is slow; never keeps a stopped command alive
    with ExitStack() as locks:
        slow.start()  # a first run builds matplotlib's font cache: tens of seconds on a busy machine
        locks.callback(slow.cancel)
        warm_font_cache()
        for c in sorted(checked, key=lambda c: str(tree_of[c.tree].root)):
            locks.enter_context(output_lock(tree_of[c.tree].root, wait=wait, log=log))
            claim_tree(tree_of[c.tree].root, c.record, force)
        for tree in trees:
            remove_leftovers(tree)
        cached, rerun = _cached_runs(runs, force)
        seconds = recorded_seconds(runs, profile)
        reference = reference_seconds(root)
        order = slowest_first(reference)
        pending = longest_first([run for run in runs if run.label not in cached], seconds, order)
        slow.cancel()
        yield RunPlan(
            first.record, runs, trees, first.jobs, seconds, cached, tuple(pending), rerun, reference
        )


def warm_font_cache() -> None:
    """Build matplotlib's font cache in a process of its own: its notice never lands in a notebook."""
    warm = [sys.executable, "-c", "import matplotlib.font_manager"]
    subprocess.run(warm, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


#: What a run does before its first notebook starts, as said when that takes long.
PREPARING = "matplotlib's font cache on a first run, which outputs in place are current"


def _every_run(
    checked: Sequence[CheckedRun], tree_of: Mapping[Path, OutputTree], profile: str
) -> tuple[PlannedRun, ...]:
    """Every run of ``checked``: each chosen notebook at each seed, into its tree (``tree_of`` its path)."""
    fingerprint = package_fingerprint()
    return tuple(
        run
        for c in checked
        for source, parameters in c.chosen
        for run in seed_runs(source, parameters, profile, tree_of[c.tree], c.seeds, fingerprint, c.point)
    )


def _cached_runs(runs: Sequence[PlannedRun], force: bool) -> tuple[dict[str, ChapterRun], dict[str, str]]:
    """Which of ``runs`` are cached, and which run again because their outputs were damaged.

    Parameters
    ----------
    runs
        The runs of a plan, their trees locked.
    force
        Run every one again: none is cached.

    Returns
    -------
    cached : dict
        Label -> the complete claim record of a run whose outputs are current and intact.
    rerun : dict
        Label -> why a run's outputs were damaged since it ran (not: never run, or its sources changed).
    """
    states = {
        run.label: None if force else chapter_damage(run.tree.root, run.executed, key=run.key) for run in runs
    }
    current = [run for run in runs if not force and states[run.label] is None]
    complete = {run.label: complete_run(run, run.tree.claims) for run in current}
    cached = {label: chapter for label, chapter in complete.items() if chapter is not None}
    rerun = {label: why for label, why in states.items() if why not in (None, NOT_RUN, CHANGED)}
    return cached, rerun
