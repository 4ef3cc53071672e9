"""``ntpnb reproduce``: execute the chosen notebooks into an output tree, one progress line each.

Every notebook runs at the book's seed into the output tree and, in a sweep (``seeds > 1``), at
the next ``seeds - 1`` seeds into trees of their own
(:meth:`~ntpnb.chapter.layout.OutputLayout.seed_root`): the book's figures come from the book's
seed, the claims' verdicts from every seed. A failed notebook does not stop the others.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from .. import __version__
from ..chapter.domains import INT_RANGE
from ..chapter.layout import DEFAULT_OUTPUT_DIRNAME, OutputLayout, exploratory_output_dir, output_layout
from ..chapter.outputs import (
    BOOK_PROFILE,
    RunRecord,
    describe_write_failure,
    is_book_run,
    load_run_record,
    output_lock,
    remove_leftovers,
    write_run_record,
)
from ..errors import NTPError, PathError, RunInterruptedError
from .choice import (
    CHANGED,
    NOT_RUN,
    NotebookRun,
    cache_state,
    choose_notebooks,
    int_seed,
    longest_first,
    package_fingerprint,
    record_timings,
    seed_runs,
)
from .cluster import run_on_dask
from .display import Display
from .estimate import TimeLeft, describe_time_left
from .execute import RunResult, cached_result
from .jupyter_kernel import run_environment
from .workers import default_jobs, run_in_workers

#: How many seeds a run executes by default: the book's seed and four more, so every verdict is
#: measured across seeds (see :func:`default_seeds`).
DEFAULT_SEEDS = 5


def default_seeds(overrides: Mapping[str, str]) -> int:
    """:data:`DEFAULT_SEEDS`, or one for a run with ``-p`` overrides (``--seeds`` asks for a sweep)."""
    return 1 if overrides else DEFAULT_SEEDS


#: The folders of a project holding its sources (or built book): no output tree goes there, nor
#: at or above the project's root (the tree's ``notebooks/`` would be the sources').
SOURCE_FOLDERS = ("notebooks", "ntpnb", "book", "tests", "benchmarks", ".git", "_build")


def output_tree(
    root: Path, profile: str, overrides: Mapping[str, str], output_dir: str | Path | None
) -> Path:
    """The root of the output tree a run writes: the book's (for the book's run), its own, or ``output_dir``.

    Raises
    ------
    NTPError
        If ``output_dir`` is the book's tree and the run is not the book's, or lies at the
        project's root, above it, or inside its sources (:data:`SOURCE_FOLDERS`).
    """
    project, book_tree = root.resolve(), (root / DEFAULT_OUTPUT_DIRNAME).resolve()
    book_run = is_book_run(profile, overrides)
    default = book_tree if book_run else exploratory_output_dir(project, profile, overrides)
    if output_dir is None:
        return default
    tree = Path(output_dir).expanduser().resolve()
    if tree == project or tree in project.parents:
        raise NTPError(
            f"--out {output_dir} is the project's folder or above it: the run would write its "
            f"notebooks/ over the sources in {project / 'notebooks'}; choose a folder of its own"
        )
    for folder in SOURCE_FOLDERS:
        if tree.is_relative_to(project / folder):
            raise NTPError(
                f"--out {output_dir} lies inside the project's {folder}/; choose a folder of its own "
                f"(by default this run goes to {default})"
            )
    if tree == book_tree and not book_run:
        raise NTPError(
            f"--out {output_dir} is the book's own tree, which only the book's run writes (profile "
            f"{BOOK_PROFILE}, no -p); leave out --out (this run then goes to "
            f"{default}) or choose another folder"
        )
    return tree


def claim_tree(layout: OutputLayout, record: RunRecord) -> None:
    """Record in ``layout``'s ``run.json`` that ``record``'s run writes there (under its lock).

    A tree holds one setting: runs of the same profile and overrides add to its record.

    Raises
    ------
    NTPError
        If the tree holds a run of another profile or other overrides (or a damaged record).
    """
    try:
        held = load_run_record(layout.root)
    except PathError as exc:
        raise NTPError(
            f"{exc}; if the tree holds only runs of {record.describe()}, delete that file and rerun"
        ) from exc
    if held is not None and not held.same_setting(record):
        raise NTPError(
            f"{layout.root} holds a run of {held.describe()}; this run is {record.describe()}: "
            "choose another --out, or leave --out out (each setting then gets a tree of its own)"
        )
    write_run_record(layout.root, held.merged(record) if held is not None else record)


def _warm_matplotlib() -> None:
    """Build matplotlib's font cache (in a process of its own), so its notice never lands in a notebook."""
    command = [sys.executable, "-c", "import matplotlib.font_manager"]
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


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

    Parameters
    ----------
    names
        Notebook names to run (all if empty).
    output_dir
        Root of the output tree (default: :func:`output_tree`).
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
        Seeds per notebook (default :func:`default_seeds`).
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
    overrides = dict(overrides or {})
    chosen = choose_notebooks(root, names, profile, overrides)
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise NTPError(f"--jobs must be at least 1, got {jobs}")
    seeds = default_seeds(overrides) if seeds is None else seeds
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise NTPError(f"--seeds must be a whole number of at least 1, got {seeds!r}")
    for source, parameters in chosen:
        base = int_seed(parameters)
        if base is not None and base + seeds - 1 > INT_RANGE[1]:
            raise NTPError(
                f"{source.stem}: a sweep of {seeds} seeds from seed={base} would reach seed "
                f"{base + seeds - 1}, beyond {INT_RANGE[1]} (the largest integer a parameter may hold)"
            )
    layout = output_layout(output_tree(root, profile, overrides, output_dir))
    fingerprint = package_fingerprint()
    runs = [
        run
        for source, parameters in chosen
        for run in seed_runs(source, parameters, profile, layout, seeds, fingerprint)
    ]
    record = RunRecord(
        profile,
        dict(overrides),
        tuple(dict.fromkeys(run.seed for run in runs if run.seed is not None)),
        tuple(sorted(s.stem for s, _ in chosen)),
        version=__version__,
    )
    _warm_matplotlib()
    with output_lock(layout.root, wait=wait, log=log), run_environment() as mark:
        claim_tree(layout, record)
        trees = list(dict.fromkeys(run.layout for run in runs))
        for tree in trees:
            remove_leftovers(tree)

        width = max(len(run.label) for run in runs)
        results: dict[str, RunResult] = {}
        time_left = TimeLeft(runs, profile, jobs)

        def left() -> str:
            return describe_time_left(time_left.seconds(display.elapsed()))

        display = Display(log, width, live=live, footer=left)

        def report(result: RunResult) -> None:
            results[result.label] = result
            time_left.finished(result.label, result.seconds, not result.cached)
            display.running.pop(result.label, None)
            line = _progress_line(result, len(results), len(runs), width)
            display.finished(result.label, f"{line}  ({left()})" if left() and not display.live else line)

        pending = []
        for run in runs:
            reason = None if force else cache_state(run)
            cached = cached_result(run) if not force and reason is None else None
            if cached:
                report(cached)
                continue
            pending.append(run)
            if reason not in (None, NOT_RUN, CHANGED):  # its outputs were damaged since its run
                log(f"ntpnb: {run.label} runs again: {reason}")
        ordered = longest_first(pending, profile)
        try:
            if scheduler:
                interrupted = run_on_dask(ordered, scheduler, report, mark, display)
            else:
                interrupted = run_in_workers(ordered, jobs, report, mark, display)
        finally:
            try:
                display.close()
            finally:  # also when the run stopped on an error (a closed output pipe)
                for tree in trees:  # the staging folders, and the trees of notebooks that were stopped
                    remove_leftovers(tree)
        _record_timings(trees, pending, results, profile, jobs, log)
    if interrupted:
        raise RunInterruptedError(len(results), len(runs))
    return [results[run.label] for run in runs]


def _record_timings(
    trees: Sequence[OutputLayout],
    pending: Sequence[NotebookRun],
    results: Mapping[str, RunResult],
    profile: str,
    jobs: int,
    log: Callable[[str], None],
) -> None:
    """Record the time of every notebook executed now, in the tree it ran into."""
    side_by_side = min(jobs, len(pending))  # how many notebooks actually ran at once
    for tree in trees:
        executed_now = [results[r.label] for r in pending if r.layout == tree and r.label in results]
        if not executed_now:
            continue
        try:
            record_timings(tree, profile, executed_now, side_by_side)
        except OSError as exc:  # said once: a failed notebook's line already names the cause
            if all(r.ok for r in executed_now):
                log(f"ntpnb: timings not recorded: {describe_write_failure(exc, tree.root)}")
