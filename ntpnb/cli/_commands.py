"""What each ``ntpnb`` command does once its line is parsed: run, explore, build the book, compare, time.

Each ``cmd_*`` function takes the parsed arguments and returns the exit status; ``ntpnb list`` is
:mod:`._list`'s.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import NTPError, PathError
from ..records._places import find_project_root
from ._list import cmd_list
from ._parser import BOOK_FAILED, plain_text

if TYPE_CHECKING:  # the command's own modules load when it runs: `ntpnb --help` loads none of them
    from ..book import BookTree, Verdict
    from ..records import OutputTree
    from ..runner import ChapterRun
    from ..runner._check import CheckedRun
    from ..runner._explore import CheckedExplore

#: What ``ntpnb benchmarks`` runs, in the project root (where the package lives, not installed).
BENCHMARKS = "python -m benchmarks"


def _cmd_reproduce(args: argparse.Namespace) -> int:
    """Run the notebooks, say which failed, the verdicts across the seeds, and what to do next.

    The run is checked first (:func:`~ntpnb.runner.check_run`), so that a refusal loads nothing
    that a run needs. With ``--book``, the book of the run is built after it (:func:`_run_book`),
    unless a run failed before its end or the run was stopped. The exit status is 1 when a run
    failed before its end or a check failed, :data:`~._parser.BOOK_FAILED` when the book build
    failed (whether a check failed or not: they are listed before its messages), else 0.
    """
    checked = checked_run(args, args.uncommitted)
    if args.book:
        from ..book import jupyter_book

        jupyter_book()  # a book asked for without jupyter-book is refused before the run
    from ..runner import run_checked

    results = run_checked(
        args.root, checked, force=args.force, wait=not args.no_wait, scheduler=args.scheduler
    )
    failing = [r for r in results if r.complete and not r.ok]
    _print_failed_checks(failing)
    crashed = _print_crashed(results)
    books = [r for r in results if not r.sweep and r.complete and r.executed is not None]
    out = books[0].executed.parent.parent if books else None  # the output tree of the book's seed
    broken = _print_seed_verdicts(out, results, books)
    if crashed:
        return 1
    if out is not None and not args.book:
        print(_next_step(args.root, out))
    status = 1 if any(not r.sweep for r in failing) or broken else 0
    if not status:
        print(_completed_line(results, args.profile, out))
    return (_run_book(args, out) if args.book and out is not None else 0) or status


def _print_seed_verdicts(
    out: Path | None, results: Sequence[ChapterRun], books: Sequence[ChapterRun]
) -> bool:
    """Print the verdicts across the seeds of a sweep into ``out``; whether a check failed at every seed.

    Nothing without a sweep (``results`` at one seed) or a tree of the book's seed (``out``).
    """
    from ..book import CHECK_FAILED
    from ..records._places import output_tree

    if out is None or not any(r.sweep for r in results):
        return False
    found = _seed_verdicts(output_tree(out), books)
    _print_verdicts(found)
    return any(v.verdict == CHECK_FAILED for v in found.values())


def _run_book(args: argparse.Namespace, out: Path) -> int:
    """``ntpnb reproduce --book``: build the book of the run into ``out``, as ``ntpnb book`` would.

    Returns 0, or :data:`~._parser.BOOK_FAILED` if the build failed.
    """
    from ..book import book_tree, build_book
    from ..records import DEFAULT_OUTPUT_DIRNAME, output_lock

    own = out.resolve() == (args.root / DEFAULT_OUTPUT_DIRNAME).resolve()
    book = book_tree(args.root, None if own else out)
    with output_lock(book.tree.root, wait=not args.no_wait):
        return _book_status(build_book(book))


def _book_status(code: int) -> int:
    """The exit status of a book build that ended with ``code``: 0, or :data:`~._parser.BOOK_FAILED`."""
    return BOOK_FAILED if code else 0


def checked_run(args: argparse.Namespace, uncommitted: bool) -> CheckedRun:
    """The run of a ``reproduce`` command line, checked (:func:`~ntpnb.runner.check_run`), nothing run.

    ``uncommitted``: a chapter whose source differs from its commit may run into the book's tree.
    """
    from ..chapter._parameters import parse_overrides
    from ..runner import check_run

    overrides = parse_overrides(args.param)
    return check_run(
        args.root,
        args.names,
        args.profile,
        overrides,
        args.out,
        args.jobs,
        args.seeds,
        args.force,
        uncommitted,
        args.scheduler,
    )


def checked_explore(args: argparse.Namespace) -> CheckedExplore:
    """The grid of an ``explore`` command line, checked (:func:`~ntpnb.runner.check_explore`), nothing run."""
    from ..explore import split_parameters
    from ..runner import check_explore

    axes, fixed = split_parameters(args.param)
    return check_explore(
        args.root,
        args.chapter,
        axes,
        fixed,
        args.profile,
        args.out,
        args.jobs,
        args.seeds,
        args.force,
        args.scheduler,
    )


def _completed_line(results: Sequence[ChapterRun], profile: str, out: Path | None) -> str:
    """The line ending a run whose notebooks all completed: how many, their time, where the outputs are."""
    n, seeds = len(results), len({r.seed for r in results})
    runs = f"{n} runs ({seeds} seeds)" if seeds > 1 else f"{n} notebook{'s' * (n != 1)}"
    return f"all {runs} completed ({_time_spent(results, profile)}); outputs in {out}"


def _print_failed_checks(checked: Sequence[ChapterRun]) -> None:
    """Say (to standard error) which checks failed in the completed runs ``checked``, run by run."""
    for r in checked:
        where = "counted in the verdicts across seeds" if r.sweep else "at the book's seed"
        print(f"{r.label}: {r.error} ({where}):", file=sys.stderr)
        for line in r.failed_checks:
            print(f"  {line}", file=sys.stderr)


def _seed_verdicts(tree: OutputTree, books: Sequence[ChapterRun]) -> dict[str, Verdict]:
    """The verdicts across the seeds of the claims the runs ``books`` (at the book's seed) checked.

    Parameters
    ----------
    tree
        The output tree of the book's seed (its seed trees hold the sweep).
    books
        The completed runs at the book's seed; a run whose claim record cannot be read is left out.

    Returns
    -------
    dict
        Claim id -> its verdict, in the order the records first check it. A map's numbers are
        measurements beyond the papers: no verdict counts them.
    """
    from ..book import load_sweeps, sweep_verdicts
    from ..evidence._registry import MAPS
    from ..records import load_chapter_run

    records = []
    for r in books:
        with suppress(PathError):
            records.append(load_chapter_run(tree.claims / f"{r.notebook}.json"))
    claims = [c for c in dict.fromkeys(c.claim for r in records for c in r.checks) if c not in MAPS]
    return sweep_verdicts(claims, load_sweeps(tree, records))


def _print_verdicts(found: Mapping[str, Verdict]) -> None:
    """Print the counts of the verdicts ``found``, and each negative one with its reasons."""
    from ..book import format_counts

    print(f"verdicts across the seeds: {format_counts(found)}")
    for claim, verdict in found.items():
        if verdict.negative:  # printed with their reasons
            print(f"  {claim}: {verdict.phrase}")
            for reason in verdict.reasons:
                print(f"    {reason}")


def _print_crashed(results: Sequence[ChapterRun]) -> list[ChapterRun]:
    """Say (to standard error) which of ``results`` failed before their end, where each kept its notebook.

    Returns them.
    """
    crashed = [r for r in results if not r.complete]
    if crashed:
        total = sum(r.seconds for r in results)
        print(f"{len(crashed)} of {len(results)} runs failed ({total:.1f} s):", file=sys.stderr)
        for r in crashed:
            kept = f"executed notebook kept at {r.executed}" if r.executed else "no executed copy kept"
            print(f"  {r.label}: {r.error}\n    {kept}", file=sys.stderr)
    return crashed


def _time_spent(results: Sequence[ChapterRun], profile: str) -> str:
    """``12.3 s of notebook time, 2 unchanged and not rerun, profile quick``."""
    cached = sum(r.cached for r in results)
    skipped = f", {cached} unchanged and not rerun" if cached else ""
    return f"{sum(r.seconds for r in results):.1f} s of notebook time{skipped}, profile {profile}"


def _cmd_explore(args: argparse.Namespace) -> int:
    """Run the grid, say which runs failed; exit 1 if some did (a check failing at a point is data)."""
    checked = checked_explore(args)
    from ..book import root_option, shown
    from ..runner import explore

    done = explore(args.root, checked, force=args.force, wait=not args.no_wait, scheduler=args.scheduler)
    if _print_crashed(done.results):
        return 1
    print(_explored_line(done.results, len(done.grid.points()), args.profile, shown(done.tree)))
    book = f"ntpnb book --run {shlex.quote(shown(done.tree))}{root_option(args.root)}"
    print(f"next: {book}  (the page of its maps, in its _book/html)")
    return 0


def _explored_line(results: Sequence[ChapterRun], points: int, profile: str, tree: str) -> str:
    """``all 4 runs completed (2 points, 2 seeds each; ...)``: the line ending an explore of ``points``."""
    failing, seeds = sum(not r.ok for r in results), len(results) // points
    runs = f"{len(results)} runs ({points} points, {seeds} seed{'s' * (seeds != 1)} each)"
    failing_text = f"; {failing} with a failing check (the maps show where)" if failing else ""
    return f"all {runs} completed ({_time_spent(results, profile)}){failing_text}; outputs in {tree}"


def _next_step(root: Path, out: Path) -> str:
    """``next: ntpnb book ...  (...)``: the line ending a run into the tree ``out`` (a command that runs)."""
    from ..book import book_tree
    from ..records import DEFAULT_OUTPUT_DIRNAME

    own = out.resolve() == (root / DEFAULT_OUTPUT_DIRNAME).resolve()
    book = book_tree(root, None if own else out)
    where = "the book of these outputs, in _build/html" if own else "the book of this run, in its _book/html"
    return f"next: {book.book_command()}  ({where})"


def _cmd_book(args: argparse.Namespace) -> int:
    """Execute the tree's missing notebooks (with ``--run-missing``, in its setting), then build its book.

    Returns 0, or :data:`~._parser.BOOK_FAILED` if the build failed.
    """
    from ..book import book_tree, build_book, describe_unrunnable, jupyter_book, missing_notebooks
    from ..explore import build_explore_book, is_explore_tree
    from ..records import output_lock
    from ..runner import reproduce

    root, wait = args.root, not args.no_wait
    jupyter_book()  # a missing jupyter-book fails before any notebook runs
    if args.run is not None and is_explore_tree(args.run):  # its book is its map page
        if args.run_missing:
            raise NTPError(
                "--run-missing runs a run's chapters; an explore tree's points run again with the "
                "ntpnb explore command that made it"
            )
        with output_lock(Path(args.run).expanduser().resolve(), wait=wait):
            return _book_status(build_explore_book(root, args.run, pdf=not args.no_pdf))
    book = book_tree(root, args.run)
    missing = missing_notebooks(book)
    if missing and args.run_missing:
        runnable, unrunnable, (profile, overrides, seeds) = missing_run(book, missing)
        if unrunnable:
            print(f"ntpnb: not executed: {describe_unrunnable(unrunnable)} (their pages say how to run them)")
        if runnable:
            print(f"ntpnb: executing the notebooks not run yet ({', '.join(runnable)}): {book.label()}")
            reproduce(root, runnable, profile, book.tree.root, overrides=overrides, wait=wait, seeds=seeds)
            book = book_tree(root, args.run)  # its run record now names them
    with output_lock(book.tree.root, wait=wait):
        return _book_status(build_book(book, pdf=not args.no_pdf))


def missing_run(
    book: BookTree, missing: list[str]
) -> tuple[list[str], dict[str, str], tuple[str, dict[str, str], int | None]]:
    """What ``ntpnb book --run-missing`` executes of the ``missing`` chapters of ``book``, in which setting.

    The chapters that can run into the tree, why each other cannot
    (:meth:`~ntpnb.book._trees.BookTree.split_missing`), and the tree's setting: profile,
    overrides, seeds (:meth:`~ntpnb.book._trees.BookTree.rerun_setting`, which refuses a tree
    whose setting is unknown or that is an interactive run's).
    """
    setting = book.rerun_setting(missing)
    runnable, unrunnable = book.split_missing(missing)
    return runnable, unrunnable, setting


def _cmd_benchmarks(args: argparse.Namespace) -> int:
    """``python -m benchmarks ARGS`` in the project root (the package lives there, not installed).

    ``ntpnb benchmarks -- --help`` passes on what follows ``--`` (here the benchmarks' own help);
    ``--help`` shows this command's help, then that of ``python -m benchmarks``.
    """
    if args.help:
        args.parser.print_help()
        print(f"\nevery other argument (all after --) goes to {BENCHMARKS}; its help:\n")
        try:
            where = find_project_root(args.root)
        except NTPError as exc:
            shown = f"(its options cannot be shown: {exc})\n"
        else:
            command = [sys.executable, *BENCHMARKS.split()[1:], "--help"]
            proc = subprocess.run(command, cwd=where, capture_output=True, text=True, check=False)
            why = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
            shown = proc.stdout if proc.returncode == 0 and proc.stdout else ""
            shown = shown or f"(its options cannot be shown: {BENCHMARKS} --help failed in {where}: {why})\n"
        print(plain_text(shown), end="")
        args.parser.exit()
    passed = args.extra[1:] if args.extra[:1] == ["--"] else args.extra
    return subprocess.call([sys.executable, *BENCHMARKS.split()[1:], *passed], cwd=args.root)


def _cmd_compare(args: argparse.Namespace) -> int:
    """Compare two runs or explore trees: :func:`~ntpnb.book._compare.print_comparison`, its exit code."""
    from ..book import print_comparison

    return print_comparison(args.run_a, args.run_b)


#: What each command runs.
COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "reproduce": _cmd_reproduce,
    "explore": _cmd_explore,
    "book": _cmd_book,
    "list": cmd_list,
    "compare": _cmd_compare,
    "benchmarks": _cmd_benchmarks,
}
