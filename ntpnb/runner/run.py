"""``ntpnb reproduce``: execute the chosen notebooks into an output tree, one progress line each.

The arguments are checked once, before anything runs (:mod:`.choice`: the notebooks, the
profile, the overrides, the number of jobs). Then, holding the output tree's lock
(:mod:`.lock`; a second run waits for it, or with ``wait=False`` refuses), the run executes
every notebook whose outputs are not current (its cache key changed, or ``force``) in worker
processes (:mod:`.workers`), the longest first, each in its staging tree (:mod:`.staging`).
One failed notebook does not stop the others: each result is reported. A Ctrl-C ends every
worker and kernel of the run and raises :class:`~ntpnb.errors.RunInterruptedError`; the
notebooks that finished keep their outputs. The wall time of every executed notebook is
recorded in ``<output root>/timings.json`` (:mod:`.timings`), which the book's benchmarks page
shows.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..chapter.atomic import atomic_write_text
from ..chapter.paths import DEFAULT_OUTPUT_DIRNAME, output_layout, override_output_dir
from ..errors import NTPError, RunInterruptedError
from .choice import NotebookRun, cache_key, choose_notebooks, longest_first, package_fingerprint, with_output
from .diagnosis import describe_write_failure
from .display import Display
from .execute import RunResult, cached_result
from .kernels import run_environment
from .lock import output_lock
from .staging import remove_leftovers
from .timings import record_timings
from .workers import default_jobs, run_in_workers

__all__ = ["reproduce"]


def _warm_matplotlib() -> None:
    """Build matplotlib's font cache now, so its one-time notice never lands in a notebook.

    In a process of its own (quiet, and ended with the run on Ctrl-C): the runner itself loads
    neither matplotlib nor numpy.
    """
    command = [sys.executable, "-c", "import matplotlib.font_manager"]
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def _progress_line(result: RunResult, done: int, total: int, width: int) -> str:
    """``[2/6] 02_regularization_path  ok       12.3 s``: one finished notebook."""
    status = "cached" if result.cached else ("ok" if result.ok else "FAILED")
    line = f"[{done}/{total}] {result.name:<{width}}  {status:<6}"
    if result.cached:
        line += "  unchanged since its last successful run (--force reruns it)"
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
) -> list[RunResult]:
    """Execute the selected notebooks of the project at ``root``; one progress line each.

    Parameters
    ----------
    root
        Project root (holds ``notebooks/``).
    names
        Notebook names to run (all if empty).
    profile
        ``"paper"`` or ``"quick"``.
    output_dir
        Root of the output tree (default ``<root>/outputs``, or
        ``<root>/outputs/runs/<overrides>`` when there are overrides, so that such a run never
        replaces the canonical outputs the book and its report are built from).
    log
        Where progress lines go (one per notebook, in the order they finish).
    overrides
        Parameter values (text, ``{"seed": "3"}``) that replace the profile's; checked against
        every selected notebook before anything runs.
    jobs
        How many notebooks run at once (each in its own process and kernel); default
        :func:`~ntpnb.runner.workers.default_jobs`, one per CPU core.
    force
        Execute every notebook even if its cache key is unchanged.
    wait
        If another process is writing the output tree, wait for it (the default), or raise.
    live
        Show the running notebooks in a block redrawn in place (:mod:`.display`; default:
        when standard output is a terminal); otherwise one line when each starts.

    Returns
    -------
    list of RunResult
        In the order of the selected notebooks.

    Raises
    ------
    NTPError
        On an unknown notebook, profile or parameter, a value of the wrong type, or ``jobs < 1``.
    PathError
        If the output folder cannot be created or written.
    OutputLockedError
        If another process holds the output folder and ``wait`` is False.
    RunInterruptedError
        On SIGINT (Ctrl-C): the notebooks that finished keep their outputs (and timings).
    """
    overrides = dict(overrides or {})
    chosen = choose_notebooks(root, names, profile, overrides)
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise NTPError(f"--jobs must be at least 1, got {jobs}")
    if output_dir is None:
        output_dir = override_output_dir(root, overrides) if overrides else root / DEFAULT_OUTPUT_DIRNAME
    layout = output_layout(output_dir)
    _warm_matplotlib()
    with output_lock(layout.root, wait=wait, log=log), run_environment() as mark:
        remove_leftovers(layout)
        if overrides:
            record = {"profile": profile, "overrides": overrides, "notebooks": [s.stem for s, _ in chosen]}
            atomic_write_text(layout.root / "run.json", json.dumps(record, indent=1) + "\n")

        fingerprint = package_fingerprint()
        width = max(len(source.stem) for source, _ in chosen)
        results: dict[str, RunResult] = {}

        display = Display(log, width, live=live)

        def report(result: RunResult) -> None:
            results[result.name] = result
            display.finished(result.name, _progress_line(result, len(results), len(chosen), width))

        pending = []
        for source, parameters in chosen:
            injected = with_output(parameters, profile, layout)
            run = NotebookRun(source, injected, layout, cache_key(source, injected, fingerprint))
            cached = cached_result(run, force)
            if cached:
                report(cached)
            else:
                pending.append(run)
        try:
            interrupted = run_in_workers(longest_first(pending, profile), jobs, report, mark, log, display)
        finally:
            display.close()
        remove_leftovers(layout)  # the staging folder, and the trees of notebooks that were stopped
        executed_now = [r for r in results.values() if not r.cached]
        if executed_now:  # with the number of notebooks that actually ran side by side
            try:
                record_timings(layout, profile, executed_now, min(jobs, len(pending)))
            except OSError as exc:  # said once: a failed notebook's line already names the cause
                if all(r.ok for r in executed_now):
                    log(f"ntpnb: timings not recorded: {describe_write_failure(exc, layout.root)}")
    if interrupted:
        raise RunInterruptedError(len(results), len(chosen))
    return [results[source.stem] for source, _ in chosen]
