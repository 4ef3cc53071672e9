"""The ``ntpnb`` command: run the notebooks, explore grids, build the book, compare runs, time the solvers.

It sits on the runner (:mod:`ntpnb.runner`, ``reproduce``), the book build (:mod:`ntpnb.book`,
``book`` and ``compare``) and what they share (:mod:`ntpnb.chapter`). ``ntpnb COMMAND --help``
gives every option of a command, each with what it does; the README's quick start, examples.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from .chapter._claims import PROFILE_NAMES
from .chapter._layout import DEFAULT_SEEDS, EXPLORE_SEEDS, find_project_root
from .errors import NTPError, PathError, RunInterruptedError

if TYPE_CHECKING:  # the command's own modules load when it runs: `ntpnb --help` loads none of them
    from .book import BookTree, Verdict
    from .chapter import OutputLayout
    from .runner import ChapterTimes, Expected, RunResult


def _cmd_reproduce(args: argparse.Namespace) -> int:
    """Run the notebooks, say which failed, the verdicts across the seeds, and what to do next."""
    from .book import CHECK_FAILED
    from .chapter import output_layout, parse_overrides
    from .runner import reproduce

    results = reproduce(
        args.root,
        args.names,
        args.profile,
        args.out,
        overrides=parse_overrides(args.param),
        jobs=args.jobs,
        force=args.force,
        wait=not args.no_wait,
        seeds=args.seeds,
        scheduler=args.scheduler,
        uncommitted=args.uncommitted,
    )
    checked = [r for r in results if r.completed and not r.ok]
    _print_failed_checks(checked)
    crashed = _print_crashed(results)
    books = [r for r in results if not r.sweep and r.completed and r.executed is not None]
    out = books[0].executed.parent.parent if books else None  # the output tree of the book's seed
    broken = False  # a sanity check failed at some seed, or a claim's evidence held at no seed
    if out is not None and any(r.sweep for r in results):  # the verdicts across the seeds
        found = _seed_verdicts(output_layout(out), books)
        _print_verdicts(found)
        broken = any(v.verdict == CHECK_FAILED for v in found.values())
    if not crashed and out is not None:
        print(_next_step(args.root, out))
    if crashed or any(not r.sweep for r in checked) or broken:
        return 1
    print(_completed_line(results, args.profile, out))
    return 0


def _completed_line(results: Sequence[RunResult], profile: str, out: Path | None) -> str:
    """The line ending a run whose notebooks all completed: how many, their time, where the outputs are."""
    n, seeds = len(results), len({r.seed for r in results})
    runs = f"{n} runs ({seeds} seeds)" if seeds > 1 else f"{n} notebook{'s' * (n != 1)}"
    return f"all {runs} completed ({_time_spent(results, profile)}); outputs in {out}"


def _print_failed_checks(checked: Sequence[RunResult]) -> None:
    """Say (to standard error) which checks failed in the completed runs ``checked``, run by run."""
    for r in checked:
        where = "counted in the verdicts across seeds" if r.sweep else "at the book's seed"
        print(f"{r.label}: {r.error} ({where}):", file=sys.stderr)
        for line in r.failed_checks:
            print(f"  {line}", file=sys.stderr)


def _seed_verdicts(layout: OutputLayout, books: Sequence[RunResult]) -> dict[str, Verdict]:
    """The verdicts across the seeds of the claims the runs ``books`` (at the book's seed) checked.

    Parameters
    ----------
    layout
        The output tree of the book's seed (its seed trees hold the sweep).
    books
        The completed runs at the book's seed; a run whose claim record cannot be read is left out.

    Returns
    -------
    dict
        Claim id -> its verdict, in the order the records first check it. A map's numbers are
        measurements beyond the papers: no verdict counts them.
    """
    from .book import load_sweeps, sweep_verdicts
    from .chapter import MAPS, load_chapter_record

    records = []
    for r in books:
        with suppress(PathError):
            records.append(load_chapter_record(layout.claims / f"{r.name}.json"))
    claims = [c for c in dict.fromkeys(c.claim for r in records for c in r.checks) if c not in MAPS]
    return sweep_verdicts(claims, load_sweeps(layout, records))


def _print_verdicts(found: Mapping[str, Verdict]) -> None:
    """Print the counts of the verdicts ``found``, and each negative one with its reasons."""
    from .book import format_counts

    print(f"verdicts across the seeds: {format_counts(found)}")
    for claim, verdict in found.items():
        if verdict.negative:  # printed with their reasons
            print(f"  {claim}: {verdict.phrase}")
            for reason in verdict.reasons:
                print(f"    {reason}")


def _print_crashed(results: Sequence[RunResult]) -> list[RunResult]:
    """Say (to standard error) which of ``results`` failed before their end, where each kept its notebook.

    Returns them.
    """
    crashed = [r for r in results if not r.completed]
    if crashed:
        total = sum(r.seconds for r in results)
        print(f"{len(crashed)} of {len(results)} runs failed ({total:.1f} s):", file=sys.stderr)
        for r in crashed:
            kept = f"executed notebook kept at {r.executed}" if r.executed else "no executed copy kept"
            print(f"  {r.label}: {r.error}\n    {kept}", file=sys.stderr)
    return crashed


def _time_spent(results: Sequence[RunResult], profile: str) -> str:
    """``12.3 s of notebook time, 2 unchanged and not rerun, profile quick``."""
    cached = sum(r.cached for r in results)
    skipped = f", {cached} unchanged and not rerun" if cached else ""
    return f"{sum(r.seconds for r in results):.1f} s of notebook time{skipped}, profile {profile}"


def _cmd_explore(args: argparse.Namespace) -> int:
    """Run the grid, say which runs failed; exit 1 if some did (a check failing at a point is data)."""
    from .book import root_option, shown
    from .explore import split_parameters
    from .runner import check_explore, explore

    axes, fixed = split_parameters(args.param)
    checked = check_explore(
        args.root, args.chapter, axes, fixed, args.profile, args.out, args.jobs, args.seeds, args.force
    )
    done = explore(args.root, checked, force=args.force, wait=not args.no_wait, scheduler=args.scheduler)
    if _print_crashed(done.results):
        return 1
    print(_explored_line(done.results, len(done.grid.points()), args.profile, shown(done.tree)))
    book = f"ntpnb book --run {shlex.quote(shown(done.tree))}{root_option(args.root)}"
    print(f"next: {book}  (the page of its maps, in its _book/html)")
    return 0


def _explored_line(results: Sequence[RunResult], points: int, profile: str, tree: str) -> str:
    """``all 4 runs completed (2 points, 2 seeds each; ...)``: the line ending an explore of ``points``."""
    failing, seeds = sum(not r.ok for r in results), len(results) // points
    runs = f"{len(results)} runs ({points} points, {seeds} seed{'s' * (seeds != 1)} each)"
    failing_text = f"; {failing} with a failing check (the maps show where)" if failing else ""
    return f"all {runs} completed ({_time_spent(results, profile)}){failing_text}; outputs in {tree}"


def _next_step(root: Path, out: Path) -> str:
    """``next: ntpnb book ...  (...)``: the line ending a run into the tree ``out`` (a command that runs)."""
    from .book import book_tree
    from .chapter import DEFAULT_OUTPUT_DIRNAME

    own = out.resolve() == (root / DEFAULT_OUTPUT_DIRNAME).resolve()
    tree = book_tree(root, None if own else out)
    where = "the book of these outputs, in _build/html" if own else "the book of this run, in its _book/html"
    return f"next: {tree.book_command()}  ({where})"


#: reStructuredText inline markup of a docstring: ``code``, :role:`target`, *emphasis*.
_MARKUP = re.compile(r"``(.+?)``|:[a-z]+:`~?(.+?)`|(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])", re.DOTALL)


def _plain_text(text: str) -> str:
    """``text`` without its reStructuredText inline markup, for a terminal (``code`` becomes code)."""
    return _MARKUP.sub(lambda m: next(g for g in m.groups() if g is not None), text)


def _cmd_book(args: argparse.Namespace) -> int:
    """Execute the tree's missing notebooks (with ``--run-missing``, in its setting), then build its book."""
    from .book import book_tree, build_book, describe_unrunnable, jupyter_book, missing_notebooks
    from .chapter import output_lock
    from .explore import build_explore_book, is_explore_tree
    from .runner import reproduce

    root, wait = args.root, not args.no_wait
    jupyter_book()  # a missing jupyter-book fails before any notebook runs
    if args.run is not None and is_explore_tree(args.run):  # its book is its map page
        if args.run_missing:
            raise NTPError(
                "--run-missing runs a run's chapters; an explore tree's points run again with the "
                "ntpnb explore command that made it"
            )
        with output_lock(Path(args.run).expanduser().resolve(), wait=wait):
            return build_explore_book(root, args.run, pdf=not args.no_pdf)
    tree = book_tree(root, args.run)
    missing = missing_notebooks(tree)
    if missing and args.run_missing:
        runnable, unrunnable, (profile, overrides, seeds) = _missing_run(tree, missing)
        if unrunnable:
            print(f"ntpnb: not executed: {describe_unrunnable(unrunnable)} (their pages say how to run them)")
        if runnable:
            print(f"ntpnb: executing the notebooks not run yet ({', '.join(runnable)}): {tree.label()}")
            reproduce(root, runnable, profile, tree.layout.root, overrides=overrides, wait=wait, seeds=seeds)
            tree = book_tree(root, args.run)  # its run record now names them
    with output_lock(tree.layout.root, wait=wait):
        return build_book(tree, pdf=not args.no_pdf)


def _missing_run(
    tree: BookTree, missing: list[str]
) -> tuple[list[str], dict[str, str], tuple[str, dict[str, str], int | None]]:
    """What ``ntpnb book --run-missing`` executes of the ``missing`` chapters of ``tree``, in which setting.

    The chapters that can run into the tree, why each other cannot
    (:meth:`~ntpnb.book._trees.BookTree.split_missing`), and the tree's setting: profile,
    overrides, seeds (:meth:`~ntpnb.book._trees.BookTree.rerun_setting`, which refuses a tree
    whose setting is unknown or that is an interactive run's).
    """
    setting = tree.rerun_setting(missing)
    runnable, unrunnable = tree.split_missing(missing)
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
        print(_plain_text(shown), end="")
        args.parser.exit()
    passed = args.extra[1:] if args.extra[:1] == ["--"] else args.extra
    return subprocess.call([sys.executable, *BENCHMARKS.split()[1:], *passed], cwd=args.root)


def _cmd_list(args: argparse.Namespace) -> int:
    """Print the parameters of the notebooks ``args.names`` chooses, as ``reproduce`` chooses them.

    Each notebook's expected time at each profile comes from this machine's last run into the
    profile's own tree, else the project's benchmark record, the current sources' first
    (:func:`~ntpnb.runner._timings.expected_time`); the end says what the record measured, on what
    machine, and which times are stale.
    """
    from .runner import (
        format_expected,
        load_chapter_times,
        package_fingerprint,
        run_sources,
        select_notebooks,
    )

    root = args.root
    width = min(shutil.get_terminal_size((LIST_WIDTH, 24)).columns, LIST_WIDTH)
    wrap = textwrap.TextWrapper(width - 1, subsequent_indent="   ", break_on_hyphens=False)
    try:
        record, unread = load_chapter_times(root), ""
    except PathError as exc:  # said at the end; this machine's own times still show
        record, unread = None, str(exc)
    fingerprint, shown = package_fingerprint(), []
    chosen = select_notebooks(root, args.names)
    for source in chosen:
        print(source.stem)
        times = _expected_times(root, source, run_sources(source, fingerprint), record)
        shown += [expected for _, expected in times]
        if times:
            print(
                "\n".join(
                    f" {line}" for line in wrap.wrap(f"expected time at one seed: {format_expected(times)}")
                )
            )
        for line in _parameter_lines(source, width):
            print(line)
    for note in _list_notes(record, unread, shown):
        print("\n".join(wrap.wrap(note)))
    print(_change_example(root, chosen))
    return 0


def _expected_times(
    root: Path, source: Path, current: Mapping[str, str], record: ChapterTimes | None
) -> list[tuple[str, Expected]]:
    """The expected time of the notebook ``source`` at each profile that has one, as ``(profile, time)``.

    ``current`` says its sources now (:func:`~ntpnb.runner._timings.run_sources`); ``record`` is the
    project's benchmark record, if read.
    """
    from .runner import expected_time

    times = []
    for profile in PROFILE_NAMES:
        expected = expected_time(source.stem, profile, current, _profile_tree(root, profile), record)
        if expected:
            times.append((profile, expected))
    return times


def _parameter_lines(source: Path, width: int) -> list[str]:
    """The lines of ``ntpnb list`` giving the parameters of the notebook ``source``, group by group.

    Parameters
    ----------
    source
        The notebook's Jupytext source.
    width
        The width the lines wrap to.

    Returns
    -------
    list of str
        Each group's heading (if it has a name) and its parameters with their meaning, domain and
        value at each profile (a notebook without profiles shows no values); run parameters are
        left out.
    """
    from .chapter import CHANGES, RUN_PARAMETERS, profile_parameters, read_parameters_cell

    cell = read_parameters_cell(source)
    meanings = {name: f"{p.meaning} ({p.domain.describe()})".lstrip() for name, p in cell.items()}
    known = source.stem in CHANGES  # a notebook without profiles shows no values
    per_profile = {p: profile_parameters(source, p) for p in PROFILE_NAMES} if known else {}
    lines = []
    for group in dict.fromkeys(p.group for name, p in cell.items() if name not in RUN_PARAMETERS):
        if group:
            lines.append(f" {group}:")
        in_group = {
            profile: {k: v for k, v in values.items() if cell[k].group == group}
            for profile, values in per_profile.items()
        }
        lines += _format_parameters(in_group, meanings, width)
    return lines


def _list_notes(record: ChapterTimes | None, unread: str, shown: Sequence[Expected]) -> list[str]:
    """The notes ending ``ntpnb list``: what the benchmark record measured, stale times, an unread record.

    Parameters
    ----------
    record
        The project's benchmark record of chapter times, or ``None`` if it could not be read.
    unread
        Why the record could not be read ("" if it was).
    shown
        The expected times the listing showed.

    Returns
    -------
    list of str
        The notes, each one paragraph.
    """
    from .runner import BENCHMARK, REFRESH_COMMAND, describe_record, refresh_minutes

    notes = []
    if record is not None and any(e.where == BENCHMARK for e in shown):
        notes.append(f"the {BENCHMARK}: {describe_record(record)}")
    if any(e.stale for e in shown):
        notes.append("a stale time was measured with other sources than these, and may not hold for them")
        if record is not None:
            notes[-1] += (
                f"; `{REFRESH_COMMAND}` measures the record again (about {refresh_minutes(record)} min)"
            )
    if unread:
        notes.append(f"no {BENCHMARK} times: {unread}")
    return notes


def _profile_tree(root: Path, profile: str) -> OutputLayout:
    """The tree a run of ``profile`` without ``-p`` writes (its ``timings.json``: this machine's times)."""
    from .chapter import OutputLayout, output_tree

    return OutputLayout(output_tree(root, profile, {}, None))


def _change_example(root: Path, chosen: Sequence[Path]) -> str:
    """The line ending ``ntpnb list``: how to change a parameter for a run, with a command that runs.

    The example changes the ``seed`` of the first chosen notebook that has one (to the next
    seed); without any, it says how in words.
    """
    from .book import chapter_number, root_option
    from .chapter import exploratory_output_dir, read_parameters_cell
    from .runner import int_seed

    for source in chosen:
        seed = int_seed({k: p.value for k, p in read_parameters_cell(source).items()})
        if seed is not None:
            change = {"seed": str(seed + 1)}
            tree = exploratory_output_dir(root, "paper", change).relative_to(root)
            command = f"ntpnb reproduce {chapter_number(source.stem)} -p seed={seed + 1}{root_option(root)}"
            return f"change one for a run, e.g. `{command}` (outputs go to {tree})"
    return "change one for a run with ntpnb reproduce and -p KEY=VALUE (outputs go to outputs/runs/)"


#: The widest ``ntpnb list`` writes its lines (narrower on a narrower terminal).
LIST_WIDTH = 100


def _format_parameters(
    per_profile: Mapping[str, Mapping[str, Any]], meanings: Mapping[str, str], width: int = LIST_WIDTH
) -> list[str]:
    """The lines of ``ntpnb list`` for one notebook: each parameter, its meaning, its values.

    ``per_profile`` holds values by profile, then name. Each parameter gets its name and meaning,
    wrapped at ``width`` and aligned after the names, then its values on the next line (one line
    per profile when they do not fit; a value is never split).

    Examples
    --------
    >>> for line in _format_parameters({"paper": {"n": 9}, "quick": {"n": 3}}, {"n": "samples"}):
    ...     print(line)
      n  samples
         paper 9 | quick 3
    """
    names = list(dict.fromkeys(name for values in per_profile.values() for name in values))
    indent = " " * (2 + max((len(name) for name in names), default=0) + 2)
    wrap = textwrap.TextWrapper(width=max(width, len(indent) + 20), subsequent_indent=indent)
    wrap.break_long_words = wrap.break_on_hyphens = False
    lines = []
    for name in names:
        meaning = meanings.get(name) or "(no comment in the notebook's parameters cell)"
        lines += wrap.wrap(f"  {name:<{len(indent) - 4}}  {meaning}")
        shown = [f"{indent}{p} {values[name]!r}" for p, values in per_profile.items() if name in values]
        one_line = indent + " | ".join(line.lstrip() for line in shown)
        lines += [one_line] if len(one_line) <= width else shown
    return lines


#: What ``ntpnb benchmarks`` runs, in the project root (where the package lives, not installed).
BENCHMARKS = "python -m benchmarks"


class _UsageError(NTPError):
    """A command line its parser refuses; :func:`main` reports it as argparse does (usage, exit 2)."""

    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__(message)
        self.parser = parser


class _Parser(argparse.ArgumentParser):
    """An argument parser that raises :class:`_UsageError` instead of exiting (its subparsers too)."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(self, message)


def _add_reproduce(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    """``ntpnb reproduce``: its profile, ``-p``, output folder, jobs, seeds, scheduler and ``--force``."""
    what = "execute notebooks with papermill (all by default)"
    rep = sub.add_parser("reproduce", parents=parents, help=what, description=what)
    _add_run_options(
        rep,
        param=(
            "KEY=VALUE",
            "override one parameter of the profile (repeatable); outputs go to outputs/runs/<overrides> "
            "(the profile and the output folder are --profile and --out)",
        ),
        out="output folder (default: <root>/outputs, the book's, for the paper profile without -p; "
        "outputs/runs/<what differs> for any other run, e.g. outputs/runs/profile=quick)",
        seeds="run each notebook at the book's seed and the N - 1 seeds after it, each into its own tree "
        f"(outputs/seeds/seed=S); the verdicts count every seed (default: {DEFAULT_SEEDS}, or 1 with -p)",
    )
    rep.add_argument(
        "--uncommitted",
        action="store_true",
        help="run into the book's outputs even a notebook whose source differs from its git commit "
        "(refused otherwise; any run names what differs, and records it)",
    )


#: The example of ``ntpnb explore --help`` (a command that runs: a test checks it).
EXPLORE_EXAMPLE = "ntpnb explore 03 --profile quick -p toy_lr=0.05..5:log:5 -p toy_iters=5000 --seeds 2"


def _add_explore(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    """``ntpnb explore``: a chapter, its grid (``-p``), and the options of ``reproduce``."""
    what = "run a chapter over a grid of its parameters, each point at several seeds"
    exp = sub.add_parser(
        "explore",
        parents=parents,
        help=what,
        description=f"{what};\nthen a map of where each of the chapter's checks holds",
        epilog=f"example: {EXPLORE_EXAMPLE}\n(five steps over two decades, two seeds each)",
        formatter_class=argparse.RawDescriptionHelpFormatter,  # the example on one line
    )
    exp.add_argument("chapter", help="the notebook's name or unique prefix, e.g. 03 or 03_gd")
    _add_run_options(
        exp,
        param=(
            "NAME=VALUES",
            "an axis of the grid: a list V1,V2,... or a range LO..HI:log:N or LO..HI:lin:N (one or two "
            "axes); with one value, a fixed override of every point (repeatable)",
        ),
        out="the explore tree (default: outputs/explore/<chapter>/<what was asked>): its explore.json, "
        "a tree per point in points/<point>, the maps in maps/",
        seeds=f"run each point at the chapter's seed and the N - 1 seeds after it (default: {EXPLORE_SEEDS})",
    )


def _add_run_options(parser: argparse.ArgumentParser, param: tuple[str, str], out: str, seeds: str) -> None:
    """Add the options of a run (``reproduce``, ``explore``) to ``parser``.

    The profile, ``-p`` (``param``: its metavar and help), the output folder (``out``: its help),
    jobs, seeds (``seeds``: its help), scheduler and ``--force``.
    """
    parser.add_argument(
        "--profile",
        choices=PROFILE_NAMES,
        default="paper",
        help="the parameter values to run at: the papers' or the tests' smaller ones (ntpnb list shows "
        "them and each chapter's time at each; "
        "default: paper)",
    )
    parser.add_argument("-p", "--param", action="append", default=[], metavar=param[0], help=param[1])
    parser.add_argument("--out", help=out)
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        help="notebooks run in parallel, one kernel each (default: one per CPU core)",
    )
    parser.add_argument("--seeds", type=int, metavar="N", help=seeds)
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run every notebook and seed as a task of the Dask cluster at ADDRESS (e.g. tcp://host:8786), "
        "whose workers share this file system (needs dask[distributed])",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="execute even the notebooks unchanged (source, parameters, ntpnb) since their last success, "
        "and write into an --out folder that holds files ntpnb did not write",
    )


def _add_book(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    """``ntpnb book``: ``--run``, ``--run-missing`` and ``--no-pdf``."""
    what = "build the HTML book into <root>/_build/html (with --run DIR: DIR/_book/html)"
    book = sub.add_parser("book", parents=parents, help=what, description=what)
    book.add_argument(
        "--run",
        metavar="DIR",
        help="build the book of the run in the output folder DIR (e.g. outputs/runs/profile=quick) "
        "into DIR/_book/html, labelled by what ran (its run.json); of an explore tree (DIR/explore.json), "
        "its map page, its maps written into DIR/maps; default: the book's own outputs/",
    )
    book.add_argument(
        "--run-missing",
        action="store_true",
        help="first execute the notebooks the tree has not run, in its own setting "
        "(the book's: profile paper; another tree's: the profile and -p of its run.json; a notebook "
        "without a parameter its -p changes does not run: its page says why, and how to run it)",
    )
    book.add_argument(
        "--no-pdf",
        action="store_true",
        help="do not print the whole book to one PDF (its single-page edition, by Chromium: about 30 s)",
    )


def _add_other_commands(
    sub: argparse._SubParsersAction, named: argparse.ArgumentParser, rooted: argparse.ArgumentParser
) -> None:
    """``ntpnb list``, ``ntpnb compare`` and ``ntpnb benchmarks`` (the rest: python -m benchmarks)."""
    what = "list the notebooks and their parameters: what each means, its value at each profile"
    sub.add_parser("list", parents=[named, rooted], help=what, description=what)
    what = "compare the printed outputs of two runs (exit 1 if they differ)"
    compare = sub.add_parser("compare", help=what, description=what)
    compare.add_argument(
        "run_a", type=Path, help="an output folder of ntpnb reproduce (or of ntpnb explore: point by point)"
    )
    compare.add_argument("run_b", type=Path, help="another one")
    helped = argparse.ArgumentParser(add_help=False)  # its --help shows that of python -m benchmarks too
    what = "show this help message, with the options of python -m benchmarks, and exit"
    helped.add_argument("-h", "--help", action="store_true", help=what)
    what = "time the solvers: python -m benchmarks ARGS, from the project root"
    bench = sub.add_parser(
        "benchmarks", parents=[helped, rooted], help=what, description=what, add_help=False
    )
    bench.usage = f"{bench.format_usage().strip().partition(' ')[2]} [ARGS ...]"
    bench.set_defaults(parser=bench)  # unknown arguments go to python -m benchmarks (args.extra)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ntpnb", description=_plain_text(__doc__.split("\n")[0]))
    try:
        version = metadata.version("ntpnb")
    except metadata.PackageNotFoundError:  # run from a source tree
        version = "unknown (not installed)"
    parser.add_argument(
        "--version",
        action="version",
        version=f"ntpnb {version}",
        help="print the version of the installed ntpnb and exit",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    rooted = argparse.ArgumentParser(add_help=False)
    rooted.add_argument("--root", help="project root (default: found from here)")
    locking = argparse.ArgumentParser(add_help=False, parents=[rooted])
    what = "if another ntpnb command is using the output folder, stop at once instead of waiting"
    locking.add_argument("--no-wait", action="store_true", help=what)
    named = argparse.ArgumentParser(add_help=False)
    named.add_argument(
        "names", nargs="*", help="notebook names or unique prefixes, e.g. 01 or 03_gd (default: all)"
    )

    _add_reproduce(sub, [named, locking])
    _add_explore(sub, [locking])
    _add_book(sub, [locking])
    _add_other_commands(sub, named, rooted)
    return parser


def _cmd_compare(args: argparse.Namespace) -> int:
    """Compare two runs or explore trees: :func:`~ntpnb.book._compare.print_comparison`, its exit code."""
    from .book import print_comparison

    return print_comparison(args.run_a, args.run_b)


#: What each command runs.
_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "reproduce": _cmd_reproduce,
    "explore": _cmd_explore,
    "book": _cmd_book,
    "list": _cmd_list,
    "compare": _cmd_compare,
    "benchmarks": _cmd_benchmarks,
}
#: The exit status of an interrupted command (128 + SIGINT, as a shell reports it).
INTERRUPTED = 130
#: The exit status when the reader of the output went away (128 + SIGPIPE, as a shell reports it).
PIPE_CLOSED = 141


def _parse_command(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line ``ntpnb ARGV`` parsed: its arguments, the project root found (``args.root``).

    Raises
    ------
    _UsageError
        If the parser refuses it (an unknown command or option, a value of the wrong kind).
    NTPError
        If the project root cannot be found.
    """
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "benchmarks":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.extra = extra
    if "root" in args and not getattr(args, "help", False):  # benchmarks --help says why not
        args.root = find_project_root(args.root)
    return args


def _check_command(argv: Sequence[str]) -> argparse.Namespace | None:
    """Check the command line ``ntpnb ARGV`` as the command checks it before it runs anything; run nothing.

    The parser's checks (:func:`_parse_command`), then the command's own, by the functions the
    command calls: ``reproduce``, every input of the run (:func:`~ntpnb.runner._choice.check_run`:
    the notebooks, the profile, each ``-p`` in its domain, the seeds, ``--out`` and the setting of
    the tree it names); ``explore``, the grid and every point's run
    (:func:`~ntpnb.runner._explore.check_explore`); ``book``, the tree (``--run``:
    :func:`~ntpnb.book._trees.book_tree`) and, with ``--run-missing``, the run of its missing
    chapters (:func:`_missing_run`); ``compare``,
    both folders (:func:`~ntpnb.book._trees.run_folder`); ``list``, the names. A hint's command
    (the book's, the CLI's, the README's) is checked with it.

    Returns the parsed arguments (None for ``--help`` and ``--version``, which only print).

    Raises
    ------
    _UsageError
        If the parser refuses it.
    NTPError
        If the command would refuse it before running (the message it would print).
    """
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            args = _parse_command(argv)
    except SystemExit as exc:  # --help or --version: printed, then exit 0
        if exc.code not in (0, None):
            raise
        return None
    _CHECKS[args.command](args)
    return args


def _check_reproduce(args: argparse.Namespace) -> None:
    """Check a ``reproduce`` command line as the run checks its inputs (:func:`_check_command`)."""
    from .chapter import parse_overrides
    from .runner import check_run

    overrides = parse_overrides(args.param)
    # the command line, not the working tree: a chapter edited since its commit refuses no hint
    check_run(
        args.root, args.names, args.profile, overrides, args.out, args.jobs, args.seeds, args.force, True
    )


def _check_explore(args: argparse.Namespace) -> None:
    """Check an ``explore`` command line as the explore checks its grid (:func:`_check_command`)."""
    from .explore import split_parameters
    from .runner import check_explore

    axes, fixed = split_parameters(args.param)
    check_explore(
        args.root, args.chapter, axes, fixed, args.profile, args.out, args.jobs, args.seeds, args.force
    )


def _check_book(args: argparse.Namespace) -> None:
    """Check a ``book`` command line: its tree, the run of its missing chapters (:func:`_check_command`)."""
    from .book import book_tree, missing_notebooks
    from .runner import check_run

    tree = book_tree(args.root, args.run)
    missing = missing_notebooks(tree)
    if missing and args.run_missing:
        runnable, _, (profile, overrides, seeds) = _missing_run(tree, missing)
        if runnable:
            check_run(args.root, runnable, profile, overrides, tree.layout.root, None, seeds)


def _check_compare(args: argparse.Namespace) -> None:
    """Check a ``compare`` command line: both folders are runs or explore trees (:func:`_check_command`)."""
    from .book import run_folder
    from .explore import is_explore_tree

    for run in (args.run_a, args.run_b):
        if not is_explore_tree(Path(run)):
            run_folder(run)


def _check_list(args: argparse.Namespace) -> None:
    """Check a ``list`` command line: its names (:func:`_check_command`)."""
    from .runner import select_notebooks

    select_notebooks(args.root, args.names)


#: What each command checks before it runs (:func:`_check_command`); ``benchmarks`` checks nothing.
_CHECKS: dict[str, Callable[[argparse.Namespace], None]] = {
    "reproduce": _check_reproduce,
    "explore": _check_explore,
    "book": _check_book,
    "compare": _check_compare,
    "list": _check_list,
    "benchmarks": lambda args: None,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ntpnb`` console script."""
    try:
        args = _parse_command(argv)
        from .runner import STOP_SIGNALS, signals_handled  # once parsed: a --help loads no command

        # SIGTERM acts as a Ctrl-C; SIGINT is set too: a shell's background job inherits it ignored
        with signals_handled(STOP_SIGNALS, signal.default_int_handler):
            return int(_COMMANDS[args.command](args))
    except _UsageError as exc:  # as argparse reports it: the usage, the error, exit 2
        argparse.ArgumentParser.error(exc.parser, str(exc))
    except BrokenPipeError:  # ``ntpnb list | head``: the reader exited; stop quietly
        with suppress(OSError, ValueError):  # to the null device, so the last flush prints no error
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return PIPE_CLOSED
    except RunInterruptedError as exc:
        print(f"ntpnb: {exc}", file=sys.stderr)
        return INTERRUPTED
    except KeyboardInterrupt:
        print("ntpnb: interrupted; completed outputs kept; rerun to resume", file=sys.stderr)
        return INTERRUPTED
    except NTPError as exc:
        print(f"ntpnb: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file the pipeline could not read or write: one line, no traceback
        where = f": {exc.filename}" if exc.filename else ""
        print(f"ntpnb: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
