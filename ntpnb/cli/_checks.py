"""A command line checked as its command checks it before running anything, running nothing.

:func:`check_command` is how the commands the project prints (hints, the README's, the book's)
are tested: each is checked as the command would check it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
from collections.abc import Callable, Sequence
from pathlib import Path

from ._commands import checked_explore, checked_run, missing_run
from ._parser import parse_command


def check_command(argv: Sequence[str]) -> argparse.Namespace | None:
    """Check the command line ``ntpnb ARGV`` as the command checks it before it runs anything; run nothing.

    The parser's checks (:func:`parse_command`), then the command's own, by the functions the
    command calls: ``reproduce``, every input of the run (:func:`~ntpnb.runner._check.check_run`:
    the notebooks, the profile, each ``-p`` in its domain, the seeds, ``--out`` and the setting of
    the tree it names); ``explore``, the grid and every point's run
    (:func:`~ntpnb.runner._explore.check_explore`); ``book``, the tree (``--run``:
    :func:`~ntpnb.book._trees.book_tree`) and, with ``--run-missing``, the run of its missing
    chapters (:func:`missing_run`); ``compare``,
    both folders (:func:`~ntpnb.book._trees.run_folder`); ``list``, the names. A hint's command
    (the book's, the CLI's, the README's) is checked with it.

    Returns the parsed arguments (None for ``--help`` and ``--version``, which only print).

    Raises
    ------
    UsageError
        If the parser refuses it.
    NTPError
        If the command would refuse it before running (the message it would print).
    """
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            args = parse_command(argv)
    except SystemExit as exc:  # --help or --version: printed, then exit 0
        if exc.code not in (0, None):
            raise
        return None
    CHECKS[args.command](args)
    return args


def _check_reproduce(args: argparse.Namespace) -> None:
    """Check a ``reproduce`` command line as the run checks its inputs (:func:`check_command`).

    The command line, not the working tree: a chapter edited since its commit refuses no hint.
    """
    checked_run(args, True)


def _check_explore(args: argparse.Namespace) -> None:
    """Check an ``explore`` command line as the explore checks its grid (:func:`check_command`)."""
    checked_explore(args)


def _check_book(args: argparse.Namespace) -> None:
    """Check a ``book`` command line: its tree, the run of its missing chapters (:func:`check_command`)."""
    from ..book import book_tree, missing_notebooks
    from ..runner import check_run

    book = book_tree(args.root, args.run)
    missing = missing_notebooks(book)
    if missing and args.run_missing:
        runnable, _, (profile, overrides, seeds) = missing_run(book, missing)
        if runnable:
            check_run(args.root, runnable, profile, overrides, book.tree.root, None, seeds)


def _check_compare(args: argparse.Namespace) -> None:
    """Check a ``compare`` command line: both folders are runs or explore trees (:func:`check_command`)."""
    from ..book import run_folder
    from ..explore import is_explore_tree

    for run in (args.run_a, args.run_b):
        if not is_explore_tree(Path(run)):
            run_folder(run)


def _check_list(args: argparse.Namespace) -> None:
    """Check a ``list`` command line: its names (:func:`check_command`)."""
    from ..runner import select_notebooks

    select_notebooks(args.root, args.names)


#: What each command checks before it runs (:func:`check_command`); ``benchmarks`` checks nothing.
CHECKS: dict[str, Callable[[argparse.Namespace], None]] = {
    "reproduce": _check_reproduce,
    "explore": _check_explore,
    "book": _check_book,
    "compare": _check_compare,
    "list": _check_list,
    "benchmarks": lambda args: None,
}
