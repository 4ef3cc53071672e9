"""The chapters' reproduction times, measured the way the targets are stated.

Each chapter runs alone (``--jobs 1``, one seed) on ONE core, at the paper profile and then at the
quick profile: the benchmark process is pinned to one CPU (``os.sched_setaffinity``) for those runs,
so every process they start (the runner's workers, the Jupyter kernels, and the kernels' numba and
BLAS threads) inherits that one CPU and a second core cannot help. Then the one command's run: the
whole paper run with its seed sweep (:data:`RUN_SEEDS` seeds of every chapter) and ``--jobs 2``
(:data:`RUN_JOBS`) on the CPUs the benchmark may use. Every run goes into a temporary output tree
with ``force=True`` (no notebook is cached) that is removed afterwards.

The one-core times are the project's record of each chapter's time (``benchmarks/chapter_times.json``,
:func:`refresh_chapter_times`): the times ``ntpnb list`` shows, with this machine and the sources
they ran (``python -m benchmarks --chapter-times`` measures only them).

The targets are the issues': every chapter at the paper profile under
:data:`CHAPTER_TARGET_SECONDS` on one core, the paper run with its sweep and two jobs under
:data:`RUN_TARGET_SECONDS`; :func:`format_notebook_times` says whether each was met.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

try:
    import resource
except ImportError:  # pragma: no cover - not POSIX
    resource = None  # type: ignore[assignment]

from ntpnb.chapter import markdown_table

from .machine import load_average

#: Target: each chapter's wall time at the paper profile, alone on one core (seconds).
CHAPTER_TARGET_SECONDS = 45.0
#: Target: the wall time of the one command's paper run, its seed sweep included, with
#: :data:`RUN_JOBS` jobs on two cores (seconds).
RUN_TARGET_SECONDS = 180.0
#: The jobs (and cores) of the whole paper run.
RUN_JOBS = 2
#: The seeds of every chapter in the whole paper run: the book's and the sweep's, as the one command.
RUN_SEEDS = 5
#: The profiles each chapter is timed at on one core, in this order.
ONE_CORE_PROFILES = ("paper", "quick")


def can_pin() -> bool:
    """Whether this platform lets a process choose its CPUs (Linux: ``os.sched_setaffinity``)."""
    return hasattr(os, "sched_setaffinity") and hasattr(os, "sched_getaffinity")


def allowed_cpus() -> frozenset[int] | None:
    """The CPUs this process may run on (None where the platform does not say)."""
    return frozenset(os.sched_getaffinity(0)) if can_pin() else None


@contextmanager
def pinned_to(cpus: Iterable[int]) -> Iterator[frozenset[int]]:
    """Run the block on ``cpus`` only; the processes started inside inherit them.

    The calling thread's affinity is set (the runner starts its workers from it) and restored on
    exit, also when the block raises.

    Raises
    ------
    OSError
        If the platform cannot pin a process (:func:`can_pin`) or ``cpus`` is not allowed.
    """
    if not can_pin():
        raise OSError("this platform cannot pin a process to CPUs (no os.sched_setaffinity)")
    wanted = frozenset(int(c) for c in cpus)
    if not wanted:
        raise ValueError("pinned_to needs at least one CPU")
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, wanted)
    try:
        yield frozenset(os.sched_getaffinity(0))
    finally:
        os.sched_setaffinity(0, before)


@contextmanager
def one_core() -> Iterator[int | None]:
    """Pin to the first allowed CPU and yield it; yield None (unpinned) where pinning is impossible."""
    if not can_pin():
        yield None
        return
    cpu = min(os.sched_getaffinity(0))
    with pinned_to([cpu]):
        yield cpu


@dataclass
class NotebookTimes:
    """One benchmark's notebook runs: each chapter on one core per profile, and the two-job run."""

    one_core: dict[str, dict[str, dict]]  # profile -> chapter -> timings.json record
    one_core_wall: dict[str, float]  # profile -> wall time of its one-core reproduce call
    cpu: int | None  # the CPU of the one-core runs (None: not pinned)
    jobs: int
    run: dict[str, dict]  # chapter -> record of the paper run with ``jobs`` jobs (the book's seed)
    run_wall: float
    run_cpus: list[int] = field(default_factory=list)  # the CPUs that run could use ([] unknown)
    loads: dict[str, list[float]] = field(default_factory=dict)  # run -> load averages before it
    seeds: int = 1  # the seeds of every chapter in the paper run
    run_notebook_seconds: float = 0.0  # the sum of the paper run's notebook times, every seed


def _timed(
    root: Path, profile: str, out: Path, jobs: int, seeds: int = 1, names: Sequence[str] = ()
) -> tuple[dict[str, dict], float, float]:
    """One reproduce run of ``names`` (all if none) into ``out``.

    Returns the book seed's timings, the wall time and the notebook seconds.
    """
    from ntpnb.chapter import output_tree
    from ntpnb.records import load_timings
    from ntpnb.runner import reproduce

    start = time.perf_counter()
    results = reproduce(
        root, names, profile=profile, output_dir=out, jobs=jobs, force=True, log=print, seeds=seeds
    )
    wall = time.perf_counter() - start
    failed = [r.label for r in results if not r.complete]
    what = f"notebooks at {profile}, {seeds} seed{'s' * (seeds > 1)}, --jobs {jobs}"
    print(f"  {what}: {wall:.1f} s" + (f", FAILED: {failed}" if failed else ""))
    seconds = sum(r.seconds for r in results)
    return load_timings(output_tree(out)).get(profile, {}), wall, seconds


def _children_cpu_seconds() -> float:
    """The CPU seconds (user and system) of this process's children that have ended, theirs included."""
    if resource is None:  # pragma: no cover - not POSIX
        return float("nan")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_chapters(root: Path) -> tuple[dict[str, dict[str, dict]], dict[str, float], int | None, dict]:
    """Every chapter alone on one core at each profile (:data:`ONE_CORE_PROFILES`), in a temporary tree.

    The chapters' ``timings.json`` records by profile, each with its ``cpu`` seconds: its run's
    worker, kernel and every process they started, which ``ntpnb reproduce`` waits for (one
    chapter a call, so each is measured alone; on one core, the wall time an idle machine takes,
    which a shared machine's wall time is not). Then the wall time of each profile's runs, the
    CPU (None: not pinned) and the load averages before each profile's runs.
    """
    from ntpnb.records import notebook_sources

    one, walls, loads = {}, {}, {}
    names = [source.stem for source in notebook_sources(root)]
    with tempfile.TemporaryDirectory(prefix="ntpnb-bench-") as tmp, one_core() as cpu:
        for profile in ONE_CORE_PROFILES:
            loads[f"{profile}, one core"] = load_average()
            out = Path(tmp) / f"one-core-{profile}"  # a tree per profile: a tree holds one setting
            used, walls[profile] = {}, 0.0
            for name in names:
                before = _children_cpu_seconds()
                one[profile], wall, _ = _timed(root, profile, out, 1, names=[name])
                used[name], walls[profile] = _children_cpu_seconds() - before, walls[profile] + wall
            for name, entry in one[profile].items():
                entry["cpu"] = round(used[name], 2)
    return one, walls, cpu, loads


def refresh_chapter_times(
    root: Path, one_core: Mapping[str, Mapping[str, Mapping]], loads: Mapping[str, list[float]]
) -> Path:
    """Write the project's benchmark record of the chapters' times from the one-core runs; its path.

    The record ``ntpnb list`` shows (:mod:`ntpnb.records._timings`), with this machine, its load
    when each profile's runs started (``loads``, by :func:`time_chapters`), the date and the commit.
    """
    from ntpnb.records import source_commit
    from ntpnb.runner import write_chapter_times

    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load = {what.split(",")[0]: values[0] for what, values in loads.items() if values and "one core" in what}
    path = write_chapter_times(root, one_core, date, source_commit(root).sha, load)
    print(f"Wrote {path} (the chapters' times that ntpnb list shows)")
    return path


def time_notebooks(root: Path, jobs: int = RUN_JOBS, seeds: int = RUN_SEEDS) -> NotebookTimes:
    """Every chapter alone on one core at each profile, then the paper run's sweep with ``jobs`` jobs.

    Each into its own temporary output tree (removed on return), every notebook executed.
    """
    one, walls, cpu, loads = time_chapters(root)
    loads[f"paper, {seeds} seeds, --jobs {jobs}"] = load_average()
    with tempfile.TemporaryDirectory(prefix="ntpnb-bench-") as tmp:
        run, run_wall, run_seconds = _timed(root, "paper", Path(tmp) / "jobs", jobs, seeds)
    cpus = allowed_cpus()
    return NotebookTimes(one, walls, cpu, jobs, run, run_wall, sorted(cpus or ()), loads, seeds, run_seconds)


def format_seconds(seconds: float) -> str:
    """``12.3 s``; from 1000 s on ``1316 s``: at most four significant digits, as every page shows numbers."""
    return f"{seconds:.1f} s" if seconds < 999.95 else f"{seconds:.0f} s"


def format_run_seconds(rec: Mapping[str, object] | None) -> str:
    """A notebook's recorded time (a ``timings.json`` record), marked when it failed, or ``not run``."""
    if rec is None:
        return "not run"
    return format_seconds(float(rec["seconds"])) + ("" if rec.get("ok") else " (FAILED)")


def _met(seconds: float, target: float, ok: bool = True) -> str:
    """Whether a time met its target: ``yes``, ``no``, or ``no (failed)`` for a run that failed."""
    if not ok:
        return "no (failed)"
    return "yes" if seconds < target else "no"


def targets_met(times: NotebookTimes) -> tuple[bool, bool]:
    """Whether every chapter's paper time on one core, and the two-job run, are under their targets."""
    paper = times.one_core.get("paper", {})
    chapters = bool(paper) and all(
        r.get("ok") and float(r["seconds"]) < CHAPTER_TARGET_SECONDS for r in paper.values()
    )
    run_ok = bool(times.run) and all(r.get("ok") for r in times.run.values())
    return chapters, run_ok and times.run_wall < RUN_TARGET_SECONDS


def _chapter_head(times: NotebookTimes) -> list[str]:
    """The table's head: chapter, paper and quick times on one core (on which CPU), target, met."""
    where = f"CPU {times.cpu}" if times.cpu is not None else "not pinned"
    return ["chapter", f"paper (one core, {where})", "quick (one core)", "target (paper)", "met"]


def _chapter_rows(times: NotebookTimes) -> list[list[str]]:
    """One row per chapter: paper and quick times on one core, target, met."""
    paper, quick = times.one_core.get("paper", {}), times.one_core.get("quick", {})
    rows = []
    for name in sorted(set(paper) | set(quick)):
        rec = paper.get(name)
        met = _met(float(rec["seconds"]), CHAPTER_TARGET_SECONDS, bool(rec.get("ok"))) if rec else "not run"
        target = f"< {CHAPTER_TARGET_SECONDS:g} s"
        rows.append([name, format_run_seconds(rec), format_run_seconds(quick.get(name)), target, met])
    return rows


def _run_rows(times: NotebookTimes) -> list[list[str]]:
    """The table's closing rows: the sums, the one-core run's walls and the paper run with ``--jobs``."""
    paper, quick = times.one_core.get("paper", {}), times.one_core.get("quick", {})
    sums = [sum(float(r["seconds"]) for r in recs.values()) for recs in (paper, quick)]
    rows = [["sum of the chapters", format_seconds(sums[0]), format_seconds(sums[1]), "", ""]]
    walls = [times.one_core_wall.get(p) for p in ("paper", "quick")]
    shown = [format_seconds(w) if w is not None else "n/a" for w in walls]
    rows.append(["wall time of the one-core run (`--jobs 1`)", *shown, "", ""])
    run_ok = bool(times.run) and all(r.get("ok") for r in times.run.values())
    cores = f"{len(times.run_cpus)} cores" if times.run_cpus else "all cores"
    sweep = f"{times.seeds} seeds, " if times.seeds > 1 else ""
    run = f"**paper run, {sweep}`--jobs {times.jobs}` on {cores} (wall)**"
    met = _met(times.run_wall, RUN_TARGET_SECONDS, run_ok)
    rows.append([run, format_seconds(times.run_wall), "", f"< {RUN_TARGET_SECONDS:g} s", met])
    if times.seeds > 1:
        notebook_time = format_seconds(times.run_notebook_seconds)
        rows.append(["notebook time of that run, every seed", notebook_time, "", "", ""])
    return rows


def _targets_text(times: NotebookTimes) -> str:
    """The sentence under the table: whether every chapter and the paper run met their targets."""
    paper = times.one_core.get("paper", {})
    chapters_met, run_met = targets_met(times)
    over = [n for n, r in paper.items() if not (r.get("ok") and float(r["seconds"]) < CHAPTER_TARGET_SECONDS)]
    chapters_text = "yes" if chapters_met else f"no ({', '.join(sorted(over)) or 'no chapter ran'})"
    return (
        f"\nEvery chapter under {CHAPTER_TARGET_SECONDS:g} s on one core at the paper profile: "
        f"{chapters_text}; the paper run ({times.seeds} seed{'s' * (times.seeds > 1)}) with "
        f"`--jobs {times.jobs}` under {RUN_TARGET_SECONDS:g} s: "
        f"{'yes' if run_met else 'no'}."
    )


def format_notebook_times(times: NotebookTimes) -> str:
    """The table: chapter | paper (one core) | quick (one core) | target | met, the sum, the two-job run."""
    table = markdown_table(_chapter_head(times), _chapter_rows(times) + _run_rows(times))
    summary = _targets_text(times)
    per_chapter = ", ".join(f"{n} {format_run_seconds(r)}" for n, r in sorted(times.run.items()))
    within = f"within the `--jobs {times.jobs}` run"
    detail = f"\nEach chapter's time at the book's seed {within}: {per_chapter or 'none'}."
    loads = "; ".join(
        f"{what}: {', '.join(f'{x:g}' for x in values)}" for what, values in times.loads.items() if values
    )
    tail = f"\nLoad averages (1, 5, 15 min) when each run started: {loads}." if loads else ""
    return table + "\n" + summary + "\n" + detail + tail + "\n"
