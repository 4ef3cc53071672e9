"""``ntpnb reproduce``: execute the chosen notebooks into an output tree, one progress line each.

A run is planned once (:func:`~._plan.planned_run`), then executed here. Every notebook runs at
the book's seed into the output tree and, in a sweep (``seeds > 1``), at the next ``seeds - 1``
seeds into trees of their own (:meth:`~ntpnb.records._places.OutputTree.seed_root`): the book's
figures come from the book's seed, the claims' verdicts from every seed. A failed notebook does
not stop the others.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..errors import RunInterruptedError
from ..records._manifest import recorded_figures
from ..records._run import ChapterRun, completed_run
from ..records._staging import describe_write_failure, remove_leftovers
from ..records._timings import record_timings
from ._check import CheckedRun, check_run
from ._cluster import run_on_dask
from ._display import Display
from ._jupyter_kernel import run_environment
from ._plan import RunPlan, planned_run
from ._time_left import time_left
from ._workers import run_in_workers


def reproduce(
    root: Path,
    names: Sequence[str] = (),
    profile: str = "paper",
    output_dir: str | Path | None = None,
    log: Callable[[str], None] = print,
    overrides: Mapping[str, str] | None = None,
    jobs: int | None = None,
    force: bool = False,
    wait: bool = True,
    seeds: int | None = None,
    scheduler: str | None = None,
    uncommitted: bool = False,
) -> list[ChapterRun]:
    """Execute the selected notebooks of the project at ``root``; one progress line each.

    The run is checked (:func:`~._check.check_run`), planned once (:func:`~._plan.planned_run`:
    its runs, their trees, what is cached), then executed.

    Parameters
    ----------
    names
        Notebook names to run (all if empty).
    output_dir
        Root of the output tree (default: :func:`~ntpnb.records._places.tree_root`).
    log
        Where progress lines go (one per notebook, as they finish).
    overrides
        Parameter values as text (``{"seed": "3"}``), checked against every notebook first.
    jobs
        Notebooks run at once, each in its own process and kernel (default: one per core).
    force
        Execute every notebook even if its cache key is unchanged.
    wait
        If another process is writing the output tree, wait for it, or raise.
    seeds
        Seeds per notebook (default :data:`~ntpnb.records._places.DEFAULT_SEEDS`, or one with ``overrides``).
    scheduler
        Address of a Dask scheduler whose workers share this file system: runs are its tasks
        (:mod:`._cluster`), not local processes.
    uncommitted
        Run a chapter whose source differs from its commit into the book's own tree too (refused
        otherwise); each such chapter is named first, with what differs, and its run records it.

    Returns
    -------
    list of ChapterRun
        In the notebooks' order, each at the book's seed, then the others.

    Raises
    ------
    NTPError
        On an unknown notebook, profile or parameter, a value of the wrong type, ``jobs < 1``
        or ``seeds < 1``.
    PathError
        If the output folder cannot be created or written.
    OutputLockedError
        If another process holds the output folder and ``wait`` is False.
    RunInterruptedError
        On SIGINT (Ctrl-C): finished notebooks keep their outputs (and timings).
    """
    checked = check_run(
        root, names, profile, overrides or {}, output_dir, jobs, seeds, force, uncommitted, scheduler
    )
    return run_checked(root, checked, log, force, wait, scheduler)


def run_checked(
    root: Path,
    checked: CheckedRun,
    log: Callable[[str], None] = print,
    force: bool = False,
    wait: bool = True,
    scheduler: str | None = None,
) -> list[ChapterRun]:
    """Execute the run ``checked`` (:func:`~._check.check_run`) of the project at ``root``: :func:`reproduce`.

    The command line checks a run first, so that a refusal loads none of what a run needs.
    """
    for line in changed_lines(checked.changed):
        log(line)
    with planned_run(root, checked, force, wait, log) as plan:
        results, interrupted = execute_plan(plan, log, scheduler)
    if interrupted:
        raise RunInterruptedError(len(results), len(plan.runs))
    return [results[run.label] for run in plan.runs]


def changed_lines(changed: Mapping[str, str]) -> list[str]:
    """``ntpnb: 03_x: its source differs from commit ...``: a line per chapter not as committed."""
    return [
        f"ntpnb: {name}: its source notebooks/{name}.md {change}; this run is of that source, and "
        "records it (not the commit's run)"
        for name, change in changed.items()
    ]


def execute_plan(
    plan: RunPlan,
    log: Callable[[str], None],
    scheduler: str | None = None,
    status: Callable[[Mapping[str, ChapterRun]], str] = lambda results: "",
) -> tuple[dict[str, ChapterRun], bool]:
    """Execute ``plan``'s pending runs (within :func:`~._plan.planned_run`), a progress line as each ends.

    Its cached runs are reported first, those whose outputs were damaged said; then the pending
    runs in worker processes (``plan.jobs`` at once) or as tasks of the Dask cluster at
    ``scheduler``. The time left follows each line (on a terminal, the status block's last
    line), after ``status`` of the results so far (e.g. the points of a grid done; "" for
    nothing): the work left of the runs executed (a cached run takes none). The times of the runs
    executed are recorded in their trees.

    Returns the results by label, and whether the run was interrupted (SIGINT or SIGTERM).
    """
    width = max(len(run.label) for run in plan.runs)
    results: dict[str, ChapterRun] = {}

    def left() -> str:
        now = time.monotonic()
        running = {n: now - r.started for n, r in display.running.items()}
        profile = plan.record.profile
        # the runs to execute: a cached one takes no time, however long its last run took
        return time_left(
            plan.pending, plan.seconds, profile, plan.jobs, results, running, plan.reference
        ).describe()

    def footer() -> str:
        return "; ".join(part for part in (status(results), left()) if part)

    display = Display(log, width, footer=footer)

    def report(result: ChapterRun) -> None:
        """Show one finished notebook (at one seed) with the time left."""
        results[result.label] = result
        display.running.pop(result.label, None)
        line = progress_line(result, len(results), len(plan.runs), width)
        to_go = footer()
        display.finished(result.label, f"{line}  ({to_go})" if to_go and not display.live else line)

    for run in plan.runs:
        if run.label in plan.cached:
            figures = recorded_figures(run.executed)
            report(completed_run(run, plan.cached[run.label], cached=True, figures=figures))
        elif run.label in plan.rerun:  # its outputs were damaged since its run
            log(f"ntpnb: {run.label} runs again: {plan.rerun[run.label]}")
    interrupted = _run_pending(plan, scheduler, report, display)
    record_executed_times(plan, results, log)
    return results, interrupted


def _run_pending(
    plan: RunPlan, scheduler: str | None, report: Callable[[ChapterRun], None], display: Display
) -> bool:
    """Run ``plan``'s pending runs locally or on the Dask cluster at ``scheduler``; whether interrupted.

    However the run ends, the display is closed and the trees' leftovers (staging folders, the
    outputs of notebooks that were stopped) are removed.
    """
    try:
        with run_environment() as mark:
            if scheduler:
                return run_on_dask(plan.pending, scheduler, report, mark, display)
            return run_in_workers(plan.pending, plan.jobs, report, mark, display)
    finally:
        try:
            display.close()
        finally:  # also when the run stopped on an error (a closed output pipe)
            for tree in plan.trees:  # the staging folders, and the trees of notebooks that were stopped
                remove_leftovers(tree)


def progress_line(result: ChapterRun, done: int, total: int, width: int) -> str:
    """``[2/6] 02_regularization_path  ok       12.3 s``: one finished notebook (at one seed)."""
    head = f"[{done}/{total}] {result.label:<{width}}  "
    if result.cached:
        line = head + "cached  unchanged since its last run (--force reruns it)"
    else:
        status = "ok" if result.ok else "checks" if result.complete else "FAILED"
        line = head + f"{status:<6} {result.seconds:7.1f} s"
    return line + (f"  {result.error}" if result.error else "")


def record_executed_times(
    plan: RunPlan, results: Mapping[str, ChapterRun], log: Callable[[str], None]
) -> None:
    """Record the time of every notebook executed now in the tree it ran into (once per tree).

    A tree that cannot be written is said once, unless a failed notebook's line already names it.
    """
    side_by_side = min(plan.jobs, len(plan.pending))  # how many notebooks actually ran at once
    sources = plan.sources()  # read once, for every tree
    for tree in plan.trees:
        executed_now = [results[r.label] for r in plan.pending if r.tree == tree and r.label in results]
        if not executed_now:
            continue
        try:
            record_timings(tree, plan.record.profile, executed_now, side_by_side, sources=sources)
        except OSError as exc:
            if all(r.ok for r in executed_now):
                log(f"ntpnb: timings not recorded: {describe_write_failure(exc, tree.root)}")
