"""The ``ntpnb`` command: execute the notebooks, build the book, compare runs, time the solvers.

It sits on the runner (:mod:`ntpnb.runner`, ``reproduce``), the book build (:mod:`ntpnb.book`,
``book`` and ``compare``) and what they share (:mod:`ntpnb.chapter`). ``ntpnb COMMAND --help``
gives every option of a command, each with what it does; the README's quick start, examples.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from importlib import metadata
from pathlib import Path
from typing import Any

from .book import build_book, jupyter_book, missing_notebooks, verdicts
from .book.compare import add_arguments, print_comparison
from .book.trees import book_tree
from .chapter.claims import load_chapter_record
from .chapter.layout import DEFAULT_OUTPUT_DIRNAME, find_project_root, notebook_sources, output_layout
from .chapter.outputs import output_lock
from .chapter.parameters import (
    CHANGES,
    PROFILE_NAMES,
    RUN_PARAMETERS,
    parse_overrides,
    profile_parameters,
    read_parameters_cell,
)
from .errors import NTPError, PathError, RunInterruptedError
from .runner import DEFAULT_SEEDS, RunResult, reproduce, select_notebooks
from .runner.estimate import chapter_seconds, describe_seconds
from .runner.workers import STOP_SIGNALS, signals_handled


def _book_command(root: Path, tree: Path) -> str:
    """The command that builds the book of the output tree ``tree``: ``ntpnb book [--run DIR]``."""
    tree, book = tree.resolve(), (root / DEFAULT_OUTPUT_DIRNAME).resolve()
    if tree == book:
        return "ntpnb book  (the book of these outputs, in _build/html)"
    shown = tree.relative_to(root.resolve()) if tree.is_relative_to(root.resolve()) else tree
    return f"ntpnb book --run {shlex.quote(str(shown))}  (the book of this run, in its _book/html)"


def _cmd_reproduce(args: argparse.Namespace) -> int:
    root = find_project_root(args.root)
    results = reproduce(
        root,
        args.names,
        args.profile,
        args.out,
        overrides=parse_overrides(args.param),
        jobs=args.jobs,
        force=args.force,
        wait=not args.no_wait,
        seeds=args.seeds,
        scheduler=args.scheduler,
    )
    total = sum(r.seconds for r in results)
    crashed = [r for r in results if not r.completed]
    checked = [r for r in results if r.completed and not r.ok]
    for r in checked:
        where = "counted in the verdicts across seeds" if r.sweep else "at the book's seed"
        print(f"{r.label}: {r.error} ({where}):", file=sys.stderr)
        for line in r.failed_checks:
            print(f"  {line}", file=sys.stderr)
    if crashed:
        print(f"{len(crashed)} of {len(results)} runs failed ({total:.1f} s):", file=sys.stderr)
        for r in crashed:
            kept = f"executed notebook kept at {r.executed}" if r.executed else "no executed copy kept"
            print(f"  {r.label}: {r.error}\n    {kept}", file=sys.stderr)
    broken = _print_verdicts(results)
    failed_here = [r for r in checked if not r.sweep]
    executed = [r.executed for r in results if not r.sweep and r.completed and r.executed is not None]
    if not crashed and executed:
        print(f"next: {_book_command(root, executed[0].parent.parent)}")
    if crashed or failed_here or broken:
        return 1
    out = next(r.executed for r in results if not r.sweep).parent.parent
    cached = sum(r.cached for r in results)
    skipped = f", {cached} unchanged and not rerun" if cached else ""
    seeds = len({r.seed for r in results})
    runs = f"{len(results)} runs ({seeds} seeds)" if seeds > 1 else _count(len(results), "notebook")
    print(
        f"all {runs} completed ({total:.1f} s of notebook time{skipped}, "
        f"profile {args.profile}); outputs in {out}"
    )
    return 0


def _print_verdicts(results: Sequence[RunResult]) -> bool:
    """Print the verdicts across the seeds of the claims the run checked; whether a check is broken.

    Broken: a sanity check failed at some seed, or a claim's evidence held at no seed (the
    verdict ``check failed``). Claims whose verdict is negative are printed with their reasons.
    """
    books = [r for r in results if not r.sweep and r.completed and r.executed is not None]
    if not books or not any(r.sweep for r in results):
        return False
    layout = output_layout(books[0].executed.parent.parent)
    records = []
    for r in books:
        with suppress(PathError):
            records.append(load_chapter_record(layout.claims / f"{r.name}.json"))
    claims = list(dict.fromkeys(c.claim for record in records for c in record.checks))
    found = verdicts.sweep_verdicts(claims, verdicts.load_sweeps(layout, records))
    print(f"verdicts across the seeds: {verdicts.format_counts(verdicts.verdict_counts(found))}")
    for claim, verdict in found.items():
        if verdict.negative:
            print(f"  {claim}: {verdict.phrase}")
            for reason in verdict.reasons:
                print(f"    {reason}")
    return any(v.verdict == verdicts.CHECK_FAILED for v in found.values())


def _count(count: int, word: str) -> str:
    """``1 notebook``, ``3 notebooks``."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


#: reStructuredText inline markup of a docstring: ``code``, :role:`target`, *emphasis*.
_MARKUP = re.compile(r"``(.+?)``|:[a-z]+:`~?(.+?)`|(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])", re.DOTALL)


def plain_text(text: str) -> str:
    """``text`` without its reStructuredText inline markup, for a terminal (``code`` becomes code)."""
    return _MARKUP.sub(lambda m: next(g for g in m.groups() if g is not None), text)


def _cmd_book(args: argparse.Namespace) -> int:
    """Execute the tree's missing notebooks (with ``--run-missing``, in its setting), then build its book."""
    root, wait = find_project_root(args.root), not args.no_wait
    jupyter_book()  # a missing jupyter-book fails before any notebook runs
    tree = book_tree(root, args.run)
    missing = missing_notebooks(tree)
    if missing and args.run_missing:
        profile, overrides, seeds = tree.rerun_setting()
        print(f"ntpnb: executing the notebooks not run yet ({', '.join(missing)}): {tree.label()}")
        reproduce(root, missing, profile, tree.layout.root, overrides=overrides, wait=wait, seeds=seeds)
        tree = book_tree(root, args.run)  # its run record now names them
    with output_lock(tree.layout.root, wait=wait):
        return build_book(tree, pdf=not args.no_pdf)


def _cmd_benchmarks(args: argparse.Namespace) -> int:
    """``python -m benchmarks ARGS`` in the project root (the package lives there, not installed).

    ``ntpnb benchmarks -- --help`` passes on what follows ``--`` (here the benchmarks' own help);
    ``--help`` shows this command's help, then that of ``python -m benchmarks``.
    """
    if args.help:
        args.parser.print_help()
        print(f"\nevery other argument (all after --) goes to {BENCHMARKS}; its help:\n")
        print(plain_text(_benchmarks_help(args.root)), end="")
        args.parser.exit()
    passed = args.extra[1:] if args.extra[:1] == ["--"] else args.extra
    return subprocess.call(_benchmarks_command(passed), cwd=find_project_root(args.root))


def _cmd_list(args: argparse.Namespace) -> int:
    """Print the parameters of the notebooks ``args.names`` chooses, as ``reproduce`` chooses them."""
    root = find_project_root(args.root)
    width = min(shutil.get_terminal_size((LIST_WIDTH, 24)).columns, LIST_WIDTH)
    for source in select_notebooks(notebook_sources(root), args.names):
        print(source.stem)
        expected = {p: chapter_seconds(root, source.stem, p) for p in PROFILE_NAMES}
        by_source: dict[str, list[str]] = {}
        for profile, found in expected.items():
            if found is not None:
                by_source.setdefault(found[1], []).append(f"{profile} {describe_seconds(found[0])}")
        if by_source:
            known = "; ".join(f"{', '.join(times)} ({source})" for source, times in by_source.items())
            wrapped = textwrap.wrap(f"expected time at one seed: {known}", width - 1, subsequent_indent="   ")
            print("\n".join(f" {line}" for line in wrapped))
        cell = read_parameters_cell(source)
        meanings = {name: f"{p.meaning} ({p.domain.describe()})".lstrip() for name, p in cell.items()}
        known = source.stem in CHANGES  # a notebook without profiles shows no values
        per_profile = {p: profile_parameters(source, p) for p in PROFILE_NAMES} if known else {}
        for group in dict.fromkeys(p.group for name, p in cell.items() if name not in RUN_PARAMETERS):
            if group:
                print(f" {group}:")
            in_group = {
                profile: {k: v for k, v in values.items() if cell[k].group == group}
                for profile, values in per_profile.items()
            }
            for line in format_parameters(in_group, meanings, width):
                print(line)
    print("change one for a run: ntpnb reproduce NAME -p KEY=VALUE (outputs go to outputs/runs/)")
    return 0


#: The widest ``ntpnb list`` writes its lines (narrower on a narrower terminal).
LIST_WIDTH = 100


def format_parameters(
    per_profile: Mapping[str, Mapping[str, Any]], meanings: Mapping[str, str], width: int = LIST_WIDTH
) -> list[str]:
    """The lines of ``ntpnb list`` for one notebook: each parameter, its meaning, its values.

    ``per_profile`` holds values by profile, then name. Each parameter gets its name and meaning,
    wrapped at ``width`` and aligned after the names, then its values on the next line (one line
    per profile when they do not fit; a value is never split).

    Examples
    --------
    >>> for line in format_parameters({"paper": {"n": 9}, "quick": {"n": 3}}, {"n": "samples"}):
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


_NO_WAIT = "if another ntpnb command is using the output folder, stop at once instead of waiting"
_NAMES = "notebook names or unique prefixes, e.g. 01 or 03_gd (default: all)"


def _command(
    sub: argparse._SubParsersAction,
    name: str,
    what: str,
    func: Callable[[argparse.Namespace], int],
    *,
    root: bool = True,
    lock: bool = False,
    passes_on: bool = False,
) -> argparse.ArgumentParser:
    """The subcommand ``name``, run by ``func``, described by ``what``.

    With ``--root`` and, for ``lock``, ``--no-wait``. With ``passes_on``, unknown arguments go to
    ``python -m benchmarks`` (``args.extra``), as its usage and ``--help`` say.
    """
    command = sub.add_parser(name, help=what, description=what, add_help=not passes_on)
    if passes_on:
        what = "show this help message, with the options of python -m benchmarks, and exit"
        command.add_argument("-h", "--help", action="store_true", help=what)
    if lock:
        command.add_argument("--no-wait", action="store_true", help=_NO_WAIT)
    if root:
        command.add_argument("--root", help="project root (default: found from here)")
    if passes_on:
        command.usage = f"{command.format_usage().strip().partition(' ')[2]} [ARGS ...]"
    command.set_defaults(func=func, passed=passes_on, parser=command)
    return command


#: What ``ntpnb benchmarks`` runs, in the project root (where the package lives, not installed).
BENCHMARKS = "python -m benchmarks"


def _benchmarks_help(root: str | None) -> str:
    """The help of ``python -m benchmarks`` in the project at ``root`` (``--root``), or why not."""
    try:
        where = find_project_root(root)
    except NTPError as exc:
        return f"(its options cannot be shown: {exc})\n"
    command = _benchmarks_command(["--help"])
    proc = subprocess.run(command, cwd=where, capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not proc.stdout:
        why = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        return f"(its options cannot be shown: {BENCHMARKS} --help failed in {where}: {why})\n"
    return proc.stdout


def _benchmarks_command(args: Sequence[str]) -> list[str]:
    """:data:`BENCHMARKS` with ``args``, in this interpreter."""
    return [sys.executable, *BENCHMARKS.split()[1:], *args]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ntpnb", description=plain_text(__doc__.split("\n")[0]))
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

    rep = _command(
        sub, "reproduce", "execute notebooks with papermill (all by default)", _cmd_reproduce, lock=True
    )
    rep.add_argument("names", nargs="*", help=_NAMES)
    rep.add_argument(
        "--profile",
        choices=PROFILE_NAMES,
        default="paper",
        help="the parameter values to run at: the papers' or seconds-scale ones (ntpnb list shows them; "
        "default: paper)",
    )
    rep.add_argument(
        "-p",
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one parameter of the profile (repeatable); outputs go to outputs/runs/<overrides>",
    )
    rep.add_argument(
        "--out",
        help="output folder (default: <root>/outputs, the book's, for the paper profile without -p; "
        "outputs/runs/<what differs> for any other run, e.g. outputs/runs/profile=quick)",
    )
    rep.add_argument(
        "-j",
        "--jobs",
        type=int,
        help="notebooks run in parallel, one kernel each (default: one per CPU core)",
    )
    rep.add_argument(
        "--seeds",
        type=int,
        metavar="N",
        help="run each notebook at the book's seed and the N - 1 seeds after it, each into its own tree "
        f"(outputs/seeds/seed=S); the verdicts count every seed (default: {DEFAULT_SEEDS}, or 1 with -p)",
    )
    rep.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run every notebook and seed as a task of the Dask cluster at ADDRESS (e.g. tcp://host:8786), "
        "whose workers share this file system (needs dask[distributed])",
    )
    rep.add_argument(
        "--force",
        action="store_true",
        help="execute even the notebooks unchanged (source, parameters, ntpnb) since their last success",
    )

    what = "build the HTML book into <root>/_build/html (with --run DIR: DIR/_book/html)"
    book = _command(sub, "book", what, _cmd_book, lock=True)
    book.add_argument(
        "--run",
        metavar="DIR",
        help="build the book of the run in the output folder DIR (e.g. outputs/runs/profile=quick) "
        "into DIR/_book/html, labelled by what ran (its run.json); default: the book's own outputs/",
    )
    book.add_argument(
        "--run-missing",
        action="store_true",
        help="first execute the notebooks the tree has not run, in its own setting "
        "(the book's: profile paper; another tree's: the profile and -p of its run.json)",
    )
    book.add_argument(
        "--no-pdf",
        action="store_true",
        help="do not print the whole book to one PDF (its single-page edition, by Chromium: about 30 s)",
    )

    what = "list the notebooks and their parameters: what each means, its value at each profile"
    listed = _command(sub, "list", what, _cmd_list)
    listed.add_argument("names", nargs="*", help=_NAMES)
    what = "compare the printed outputs of two runs (exit 1 if they differ)"
    add_arguments(
        _command(sub, "compare", what, lambda args: print_comparison(args.run_a, args.run_b), root=False)
    )
    what = "time the solvers: python -m benchmarks ARGS, from the project root"
    _command(sub, "benchmarks", what, _cmd_benchmarks, passes_on=True)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ntpnb`` console script."""
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra and not args.passed:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.extra = extra
    try:
        # SIGTERM acts as a Ctrl-C; SIGINT is set too: a shell's background job inherits it ignored
        with signals_handled(STOP_SIGNALS, _interrupt):
            return int(args.func(args))
    except BrokenPipeError:
        return _reader_gone()
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


#: The exit status of an interrupted command (128 + SIGINT, as a shell reports it).
INTERRUPTED = 130
#: The exit status when the reader of the output went away (128 + SIGPIPE, as a shell reports it).
PIPE_CLOSED = 141


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _reader_gone() -> int:
    """Stop quietly when standard output is a pipe whose reader exited (``ntpnb list | head``).

    Standard output goes to the null device, so the interpreter's last flush prints no second error.
    """
    with suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return PIPE_CLOSED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
