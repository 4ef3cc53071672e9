"""``ntpnb reproduce``: execute the chosen notebooks into an output tree, one progress line each.

A run is planned once (:func:`~.choice.planned_run`), then executed here. Every notebook runs at
the book's seed into the output tree and, in a sweep (``seeds > 1``), at the next ``seeds - 1``
seeds into trees of their own (:meth:`~ntpnb.chapter.layout.OutputLayout.seed_root`): the book's
figures come from the book's seed, the claims' verdicts from every seed. A failed notebook does
not stop the others.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..chapter.outputs import describe_write_failure, remove_leftovers
from ..errors import RunInterruptedError
from .choice import RunPlan, planned_run, record_timings
from .cluster import run_on_dask
from .display import Display
from .estimate import TimeLeft, describe_time_left
from .execute import RunResult, completed_result
from .jupyter_kernel import run_environment
from .workers import run_in_workers


def _progress_line(result: RunResult, done: int, total: int, width: int) -> str:
    """``[2/6] 02_regularization_path  ok       12.3 s``: one finished notebook (at one seed)."""
    status = "cached" if result.cached else "ok" if result.ok else "checks" if result.completed else "FAILED"
    line = f"[{done}/{total}] {result.label:<{width}}  {status:<6}"
    if result.cached:
        line += "  unchanged since its last run (--force reruns it)"
    else:
        line += f" {result.seconds:7.1f} s"
    return line + (f"  {result.error}" if result.error else "")


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
    live: bool | None = None,
    seeds: int | None = None,
    scheduler: str | None = None,
) -> list[RunResult]:
    """Execute the selected notebooks of the project at ``root``; one progress line each.

    The run is planned once (:func:`~.choice.planned_run`: its runs, their trees, what is cached),
    then executed.

    Parameters
    ----------
    names
        Notebook names to run (all if empty).
    output_dir
        Root of the output tree (default: :func:`~.choice.output_tree`).
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
    live
        Redraw the running notebooks in place (default: on a terminal).
    seeds
        Seeds per notebook (default :data:`~.choice.DEFAULT_SEEDS`, or one with ``overrides``).
    scheduler
        Address of a Dask scheduler whose workers share this file system: runs are its tasks
        (:mod:`.cluster`), not local processes.

    Returns
    -------
    list of RunResult
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
    with planned_run(
        root, names, profile, overrides or {}, output_dir, jobs, seeds, force, wait, log
    ) as plan:
        width = max(len(run.label) for run in plan.runs)
        results: dict[str, RunResult] = {}
        time_left = TimeLeft(plan.runs, plan.seconds, plan.record.profile, plan.jobs)

        def left() -> str:
            now = time.monotonic()
            return describe_time_left(
                time_left.seconds({n: now - r.started for n, r in display.running.items()})
            )

        display = Display(log, width, live=live, footer=left)

        def report(result: RunResult) -> None:
            results[result.label] = result
            time_left.finished(result.label, result.seconds, not result.cached)
            display.running.pop(result.label, None)
            line = _progress_line(result, len(results), len(plan.runs), width)
            display.finished(result.label, f"{line}  ({left()})" if left() and not display.live else line)

        for run in plan.runs:
            if run.label in plan.cached:
                report(completed_result(run, plan.cached[run.label], cached=True))
            elif run.label in plan.rerun:  # its outputs were damaged since its run
                log(f"ntpnb: {run.label} runs again: {plan.rerun[run.label]}")
        try:
            with run_environment() as mark:
                if scheduler:
                    interrupted = run_on_dask(plan.pending, scheduler, report, mark, display)
                else:
                    interrupted = run_in_workers(plan.pending, plan.jobs, report, mark, display)
        finally:
            try:
                display.close()
            finally:  # also when the run stopped on an error (a closed output pipe)
                for tree in plan.trees:  # the staging folders, and the trees of notebooks that were stopped
                    remove_leftovers(tree)
        _record_timings(plan, results, log)
    if interrupted:
        raise RunInterruptedError(len(results), len(plan.runs))
    return [results[run.label] for run in plan.runs]


def _record_timings(plan: RunPlan, results: Mapping[str, RunResult], log: Callable[[str], None]) -> None:
    """Record the time of every notebook executed now, in the tree it ran into."""
    side_by_side = min(plan.jobs, len(plan.pending))  # how many notebooks actually ran at once
    for tree in plan.trees:
        executed_now = [results[r.label] for r in plan.pending if r.layout == tree and r.label in results]
        if not executed_now:
            continue
        try:
            record_timings(tree, plan.record.profile, executed_now, side_by_side)
        except OSError as exc:  # said once: a failed notebook's line already names the cause
            if all(r.ok for r in executed_now):
                log(f"ntpnb: timings not recorded: {describe_write_failure(exc, tree.root)}")
