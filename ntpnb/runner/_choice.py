"""The plan of a run: the notebooks it executes, their parameters, their trees, which must run.

A run's inputs are checked first (:func:`check_run`, which writes nothing: a hint's command is
checked with it too); the run is planned once (:func:`planned_run`), then executed
(:mod:`._run`). Names choose notebooks (:func:`select_notebooks`), the profile and ``-p``
overrides their parameters, the seeds their runs (:func:`seed_runs`), each into an output tree
(:func:`~ntpnb.chapter._layout.output_tree`; a sweep's further seeds into trees of their own).
Then, under the output lock, what the trees hold: a notebook is not executed again while its
cache key (:func:`seed_runs`: source, parameters, ``ntpnb`` sources) is unchanged since its last
success into the tree and its outputs are what that run wrote: key and output SHA-256s go to its
manifest (:mod:`ntpnb.chapter._outputs`) after a success and are removed on failure
(:mod:`._execute`). The longest notebooks start first (:func:`longest_first`), by the times of
earlier runs in the tree's ``timings.json`` (:func:`record_timings`: by profile and notebook,
wall seconds, ``--jobs``, the date in UTC, whether it succeeded, the sources it ran; the book's
benchmarks page shows them), an untimed one by the benchmark record's (:mod:`._timings`).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .. import __version__
from .._validation import as_count
from ..chapter._claims import ChapterRecord, load_chapter_record
from ..chapter._domains import INT_RANGE, closest
from ..chapter._layout import (
    DEFAULT_OUTPUT_DIRNAME,
    DEFAULT_SEEDS,
    OutputLayout,
    load_timings,
    notebook_sources,
    output_layout,
    output_tree,
)
from ..chapter._outputs import (
    CHANGED,
    NOT_RUN,
    RunRecord,
    atomic_write_json,
    chapter_damage,
    check_setting,
    claim_tree,
    output_lock,
    remove_leftovers,
)
from ..chapter._ownership import RUN_TREE, check_output_folder
from ..chapter._parameters import apply_overrides
from ..chapter._sources import source_changes
from ..errors import NTPError, PathError
from ._timings import reference_seconds, run_sources, slowest_first


class Labelled:
    """A notebook at a seed, named by its :attr:`label` (a run, or its result)."""

    name: str
    seed: int | None
    sweep: bool  # a further seed of the sweep (outputs in its own tree), not the book's seed
    #: The point of an explore's grid it runs at (:func:`~ntpnb.explore._grid.point_label`); "" for none.
    point: str

    @property
    def label(self) -> str:
        """Its name, with the seed when it is a further seed of the sweep (unique within a run).

        A run at a point of a grid (one chapter) is named by its point and seed: ``lr=0.1 seed 2``.
        """
        if self.point:
            return f"{self.point} seed {self.seed}"
        return f"{self.name} seed {self.seed}" if self.sweep else self.name


@dataclass(frozen=True)
class NotebookRun(Labelled):
    """One notebook to execute: its source, what papermill injects, where, and its cache key."""

    source: Path
    parameters: dict[str, Any]
    layout: OutputLayout
    key: str
    sweep: bool = False
    package: str = ""  # the fingerprint of the ntpnb sources in its cache key
    point: str = ""

    @property
    def name(self) -> str:
        """The notebook's name (file stem)."""
        return self.source.stem

    @property
    def seed(self) -> int | None:
        """The seed it runs at (None if the notebook has no ``seed`` parameter)."""
        return int_seed(self.parameters)

    @property
    def executed(self) -> Path:
        """Where its executed copy goes in the output tree."""
        return self.layout.notebooks / f"{self.name}.ipynb"


def int_seed(parameters: Mapping[str, Any]) -> int | None:
    """The integer ``seed`` parameter, if there is one."""
    seed = parameters.get("seed")
    return seed if isinstance(seed, int) and not isinstance(seed, bool) else None


def select_notebooks(root: Path, names: Sequence[str]) -> list[Path]:
    """The notebooks of the project at ``root`` named in ``names`` (all if none).

    A name is a notebook's stem, a unique prefix of one (``03``, ``03_gd``) or its number
    (``3`` is chapter ``03``).

    Raises
    ------
    NTPError
        If the project has no notebooks, or a name matches no notebook or more than one (naming
        those it matches).
    """
    sources = notebook_sources(root)
    if not sources:
        raise NTPError(f"no notebooks found in {root / 'notebooks'}")
    if not names:
        return sources
    chosen = []
    for name in names:
        matches = _matching_notebooks(sources, Path(name).stem)
        if len(matches) != 1:
            known = ", ".join(s.stem for s in sources)
            if matches:
                shown = ", ".join(s.stem for s in matches)
                raise NTPError(
                    f"several notebooks named {name!r}: {shown}; name one of them, e.g. "
                    f"{matches[0].stem.split('_')[0]}"
                )
            near = closest(Path(name).stem, [s.stem for s in sources])
            raise NTPError(f"no notebook named {name!r}{near}; the notebooks are: {known}")
        chosen.append(matches[0])
    return chosen


def _matching_notebooks(sources: Sequence[Path], stem: str) -> list[Path]:
    """The notebooks of ``sources`` that ``stem`` names: by stem, by number (``3``: ``03_x``), by prefix."""
    exact = [s for s in sources if s.stem == stem]
    numbered = [s for s in sources if stem.isdigit() and s.stem.split("_")[0].isdigit()]
    by_number = [s for s in numbered if int(s.stem.split("_")[0]) == int(stem)]
    return exact or by_number or [s for s in sources if s.stem.startswith(stem)]


def seed_runs(
    source: Path,
    parameters: Mapping[str, Any],
    profile: str,
    layout: OutputLayout,
    seeds: int,
    fingerprint: str,
    point: str = "",
) -> list[NotebookRun]:
    """The runs of one notebook in a sweep of ``seeds`` seeds: the book's first, then the others.

    The further seeds (``seed + 1``, ...) run into trees of their own under ``layout``; a notebook
    without an integer ``seed`` runs once. Every run is given ``profile`` and its ``output_dir``
    (``point``: the point of a grid they run at, which names them).
    """
    base = int_seed(parameters)
    runs = []
    for i in range(seeds if base is not None else 1):
        tree = layout if i == 0 else output_layout(layout.seed_root(base + i))
        seeded = {**parameters, "seed": base + i} if i else parameters
        # output_dir is relative to the executed notebook's folder, where papermill, nbval and Jupyter run it
        injected = {**seeded, "profile": profile, "output_dir": os.path.relpath(tree.root, tree.notebooks)}
        key = hashlib.sha256(source.read_bytes() + b"\0")  # its cache key: source, parameters, package
        key.update(json.dumps(injected, sort_keys=True, default=repr).encode() + b"\0")
        key.update(fingerprint.encode())
        runs.append(NotebookRun(source, injected, tree, key.hexdigest(), i > 0, fingerprint, point))
    return runs


def package_fingerprint() -> str:
    """SHA-256 of the package's ``.py`` and ``.json`` files (paths and contents), so a change shows."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(p for pattern in ("*.py", "*.json") for p in package.rglob(pattern)):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def complete_record(run: NotebookRun, claims: Path) -> ChapterRecord | None:
    """The record of ``run`` in ``claims``, if it reads and is complete (empty if it keeps none)."""
    path = claims / f"{run.name}.json"
    if not path.exists():
        return ChapterRecord(run.name, str(run.parameters.get("profile", "")), complete=True)
    try:
        record = load_chapter_record(path)
    except PathError:
        return None
    return record if record.complete else None


def last_seconds(layout: OutputLayout, profile: str, name: str) -> float:
    """How long ``name`` took at ``profile`` when last run into ``layout`` (inf if unknown)."""
    record = load_timings(layout).get(profile, {}).get(name, {})
    seconds = record.get("seconds") if isinstance(record, dict) else None
    return float(seconds) if isinstance(seconds, (int, float)) else float("inf")


def recorded_seconds(runs: Sequence[NotebookRun], profile: str) -> dict[str, float]:
    """Each of ``runs``' last time at ``profile`` in its tree by label, else its book seed's (else inf).

    A further seed at a point of a grid takes the time of its point's run at the book's seed.
    """
    at_book_seed = {
        (run.name, run.point): last_seconds(run.layout, profile, run.name) for run in runs if not run.sweep
    }
    found = {}
    for run in runs:
        seconds = last_seconds(run.layout, profile, run.name)
        if seconds == float("inf") and run.sweep:
            seconds = at_book_seed.get((run.name, run.point), seconds)
        found[run.label] = seconds
    return found


def longest_first(
    runs: Sequence[NotebookRun], seconds: Mapping[str, float], order: Sequence[str] = ()
) -> list[NotebookRun]:
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
        runs, key=lambda r: (-seconds[r.label], untimed_sweep[r.label], rank.get(r.name, len(rank)))
    )


def record_timings(
    layout: OutputLayout,
    profile: str,
    results: Iterable[object],
    jobs: int,
    now: datetime | None = None,
    sources: Mapping[str, Mapping[str, str]] | None = None,
) -> Path:
    """Add or replace the entries of the executed (not cached) ``results`` in ``layout.timings``.

    ``sources``: the sources each notebook ran, by name (:func:`~._timings.run_sources`), kept with
    its time so that a time of other sources is known as such (:func:`~._timings.staleness`); a
    time that includes numba's compiling is marked ``compiled``.
    """
    timings = load_timings(layout)
    date = (now or datetime.now(timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    entries = timings.setdefault(profile, {})
    for r in results:
        if not r.cached:
            entry = {"seconds": round(r.seconds, 2), "jobs": jobs, "date": date, "ok": bool(r.ok)}
            entry |= {"compiled": True} if getattr(r, "compiled", False) else {}
            entries[r.name] = entry | dict((sources or {}).get(r.name, {}))
    return atomic_write_json(layout.timings, timings, sort_keys=True)


@dataclass(frozen=True)
class CheckedRun:
    """The inputs of a run, checked: its notebooks with their parameters, jobs, seeds, tree, setting."""

    chosen: tuple[tuple[Path, dict[str, Any]], ...]
    jobs: int
    seeds: int
    #: The root of the output tree of the book's seed (:func:`~ntpnb.chapter._layout.output_tree`).
    tree: Path
    #: Its setting, with the seeds it runs and the notebooks (as :func:`planned_run` records it).
    record: RunRecord
    #: The point of an explore's grid it is (:func:`~ntpnb.explore._grid.point_label`); "" for none.
    point: str = ""
    #: How each chosen chapter's source differs from its commit, by name (those that do only:
    #: :func:`~ntpnb.chapter._sources.source_changes`).
    changed: Mapping[str, str] = field(default_factory=dict)


def check_run(
    root: Path,
    names: Sequence[str],
    profile: str,
    overrides: Mapping[str, str],
    output_dir: str | Path | None,
    jobs: int | None,
    seeds: int | None,
    force: bool = False,
    uncommitted: bool = False,
) -> CheckedRun:
    """Check every input of a run of the project at ``root`` (the parameters of :func:`~._run.reproduce`).

    Writes nothing and starts nothing: what ``ntpnb reproduce`` refuses before it runs, refused
    here (a hint's command is checked with it too: :func:`ntpnb.cli._check_command`). ``force``:
    an ``output_dir`` holding files ntpnb did not write may be written
    (:func:`~ntpnb.chapter._ownership.check_output_folder`); ``uncommitted``: a chapter whose
    source differs from its commit may run into the book's own tree (:func:`uncommitted_changes`).

    Raises
    ------
    NTPError
        On an unknown notebook, profile or parameter, a value outside its domain, ``jobs < 1``,
        ``seeds < 1``, a sweep beyond the largest seed, an output folder that may not be written
        (a file, an explore tree, or, without ``force``, a folder of files ntpnb did not write),
        a tree that holds a run of another setting, or, without ``uncommitted``, a chapter whose
        source differs from its commit to run into the book's tree.
    """
    overrides = dict(overrides)
    chosen = tuple(
        (source, apply_overrides(source, profile, overrides)) for source in select_notebooks(root, names)
    )
    jobs = max(1, os.cpu_count() or 1) if jobs is None else as_count(jobs, "--jobs")  # one notebook per core
    seeds = (1 if overrides else DEFAULT_SEEDS) if seeds is None else as_count(seeds, "--seeds")
    ran: dict[int, None] = {}
    for source, parameters in chosen:
        base = int_seed(parameters)
        if base is not None and base + seeds - 1 > INT_RANGE[1]:
            raise NTPError(
                f"{source.stem}: a sweep of {seeds} seeds from seed={base} would reach seed "
                f"{base + seeds - 1}, beyond {INT_RANGE[1]} (the largest integer a parameter may hold)"
            )
        ran.update(dict.fromkeys(range(base, base + seeds)) if base is not None else {})
    tree = output_tree(root, profile, overrides, output_dir)
    record = RunRecord(
        profile, overrides, tuple(ran), tuple(sorted(s.stem for s, _ in chosen)), version=__version__
    )
    check_output_folder(
        tree, RUN_TREE, tree if output_dir is None else output_dir, force or output_dir is None
    )
    check_setting(tree, record)
    changed = uncommitted_changes(root, [source for source, _ in chosen], tree, uncommitted)
    return CheckedRun(chosen, jobs, seeds, tree, record, changed=changed)


def uncommitted_changes(root: Path, sources: Sequence[Path], tree: Path, allowed: bool) -> dict[str, str]:
    """How each of the chapters ``sources`` differs from its commit, by name (those that do only).

    Raises
    ------
    NTPError
        If one does, ``tree`` is the book's own and ``allowed`` is False: the book's outputs are the
        committed chapters' (the message says what differs, and how to go on).
    """
    changed = {source.stem: change for source in sources if (change := source_changes(source))}
    if changed and not allowed and tree == (root / DEFAULT_OUTPUT_DIRNAME).resolve():
        names = " ".join(name.split("_")[0] for name in changed)
        files = " ".join(f"notebooks/{name}.md" for name in changed)
        what = "; ".join(f"notebooks/{name}.md {change}" for name, change in changed.items())
        raise NTPError(
            f"{what}: the book's outputs are the committed chapters' runs. Commit the change, or undo it "
            f"(git restore {files}), or run it into a tree of its own (`ntpnb reproduce {names} "
            f"--profile quick`), or add --uncommitted to run it into the book's outputs anyway (the run "
            "records what differs)"
        )
    return changed


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

    record: RunRecord
    runs: tuple[NotebookRun, ...]
    trees: tuple[OutputLayout, ...]
    jobs: int
    seconds: Mapping[str, float]
    cached: Mapping[str, ChapterRecord]
    pending: tuple[NotebookRun, ...]
    rerun: Mapping[str, str]
    reference: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def sources(self) -> dict[str, dict[str, str]]:
        """The sources each notebook of the run ran, by name (:func:`~._timings.run_sources`; once each)."""
        by_name = {run.name: run for run in self.runs if not run.sweep}  # one per notebook, of any point
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
    notebook. Under the lock (:func:`~ntpnb.chapter._outputs.output_lock`), held
    while the plan executes, the tree is claimed (:func:`~ntpnb.chapter._outputs.claim_tree`), what
    killed runs left is removed, then what the trees hold is read (each run's
    :func:`~ntpnb.chapter._outputs.chapter_damage` given its cache key, its record, its last time).
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
    layouts = {c.tree: output_layout(c.tree) for c in checked}
    runs = _every_run(checked, layouts, profile)
    trees = tuple(dict.fromkeys(run.layout for run in runs))
    warm = [sys.executable, "-c", "import matplotlib.font_manager"]  # in a process of its own
    subprocess.run(warm, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    with ExitStack() as locks:
        for c in sorted(checked, key=lambda c: str(layouts[c.tree].root)):
            locks.enter_context(output_lock(layouts[c.tree].root, wait=wait, log=log))
            claim_tree(layouts[c.tree].root, c.record)
        for tree in trees:
            remove_leftovers(tree)
        cached, rerun = _cached_runs(runs, force)
        seconds = recorded_seconds(runs, profile)
        reference = reference_seconds(root)
        order = slowest_first(reference)
        pending = longest_first([run for run in runs if run.label not in cached], seconds, order)
        yield RunPlan(
            first.record, runs, trees, first.jobs, seconds, cached, tuple(pending), rerun, reference
        )


def _every_run(
    checked: Sequence[CheckedRun], layouts: Mapping[Path, OutputLayout], profile: str
) -> tuple[NotebookRun, ...]:
    """Every run of ``checked``: each chosen notebook at each seed, into its tree (``layouts``)."""
    fingerprint = package_fingerprint()
    return tuple(
        run
        for c in checked
        for source, parameters in c.chosen
        for run in seed_runs(source, parameters, profile, layouts[c.tree], c.seeds, fingerprint, c.point)
    )


def _cached_runs(runs: Sequence[NotebookRun], force: bool) -> tuple[dict[str, ChapterRecord], dict[str, str]]:
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
        run.label: None if force else chapter_damage(run.layout.root, run.executed, key=run.key)
        for run in runs
    }
    current = [run for run in runs if not force and states[run.label] is None]
    complete = {run.label: complete_record(run, run.layout.claims) for run in current}
    cached = {label: chapter for label, chapter in complete.items() if chapter is not None}
    rerun = {label: why for label, why in states.items() if why not in (None, NOT_RUN, CHANGED)}
    return cached, rerun
