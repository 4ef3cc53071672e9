"""The parser of the ``ntpnb`` command line: its commands, their options and their help.

:func:`parse_command` parses a command line and finds the project root; a line the parser refuses
raises :class:`UsageError`, which :func:`~ntpnb.cli._main.main` reports as argparse does.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import NoReturn

from ..errors import NTPError
from ..records._places import DEFAULT_SEEDS, EXPLORE_SEEDS, find_project_root
from ..records._run import PROFILE_NAMES

#: What the ``ntpnb`` command does, the first line of its ``--help``.
DESCRIPTION = (
    "The ``ntpnb`` command: run the notebooks, explore grids, build the book, compare runs, time the solvers."
)

#: The exit status of ``ntpnb book`` and ``ntpnb reproduce --book`` when the book build failed: told
#: apart from a notebook or a check that failed (1) and a refused command line or an error (2).
BOOK_FAILED = 3
#: The end of ``ntpnb reproduce --help``: what its exit status says.
REPRODUCE_STATUS = (
    "exit status: 0 every notebook ran to its end, no check failed at the book's seed and no claim's "
    "verdict across the seeds is 'check failed'; 1 a notebook failed before its end (then no book is "
    "built), or a check failed so (each listed on stderr); 2 a refused command line or an error; "
    f"{BOOK_FAILED} with --book, every notebook ran to its end but the book build failed (its "
    "messages on stderr, after any failed check); 130 interrupted (rerun to resume)"
)
#: The end of ``ntpnb book --help``: what its exit status says.
BOOK_STATUS = (
    f"exit status: 0 the book is built; 2 a refused command line or an error; {BOOK_FAILED} the book "
    "build failed (its messages on stderr); 130 interrupted"
)

#: reStructuredText inline markup of a docstring: ``code``, :role:`target`, *emphasis*.
_MARKUP = re.compile(r"``(.+?)``|:[a-z]+:`~?(.+?)`|(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])", re.DOTALL)


def plain_text(text: str) -> str:
    """``text`` without its reStructuredText inline markup, for a terminal (``code`` becomes code)."""
    return _MARKUP.sub(lambda m: next(g for g in m.groups() if g is not None), text)


class UsageError(NTPError):
    """A command line its parser refuses; :func:`main` reports it as argparse does (usage, exit 2)."""

    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__(message)
        self.parser = parser


class _Parser(argparse.ArgumentParser):
    """An argument parser that raises :class:`UsageError` instead of exiting (its subparsers too)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(self, message)


def _add_reproduce(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    """``ntpnb reproduce``: its profile, ``-p``, output folder, jobs, seeds, scheduler and ``--force``."""
    what = "execute notebooks with papermill (all by default)"
    rep = sub.add_parser("reproduce", parents=parents, help=what, description=what, epilog=REPRODUCE_STATUS)
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
        "--book",
        action="store_true",
        help="then build the book of this run, as ntpnb book does (the book's own in _build/html, "
        "another run's in its folder's _book/html), unless a notebook failed before its end; "
        "e.g. ntpnb reproduce --profile quick --book, the whole book at the quick profile",
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
    book = sub.add_parser("book", parents=parents, help=what, description=what, epilog=BOOK_STATUS)
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
    parser = _Parser(prog="ntpnb", description=plain_text(DESCRIPTION))
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


def parse_command(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line ``ntpnb ARGV`` parsed: its arguments, the project root found (``args.root``).

    Raises
    ------
    UsageError
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
