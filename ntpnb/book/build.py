"""``ntpnb book``: check the tree, write the generated pages, build the HTML book atomically.

A book is built from one output tree (:mod:`.trees`; an unrun chapter gets a page saying so).
First every record the book reads is checked (:func:`.trees.verify_tree`: a damaged one is refused in one
line naming it and the command that remakes it); then the generated pages are written into the
tree (:mod:`.report`, :mod:`.benchmarks_page`); then jupyter-book builds the book atomically
(:mod:`.site`) with ``-W -n --keep-going``, so any warning fails the build (:mod:`.sphinx_ext`
warns about every broken notebook).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..errors import NTPError
from .benchmarks_page import write_benchmarks_page
from .report import verdict_summary, write_report
from .site import (
    HTML_DIRNAME,
    build_messages,
    disk_errno,
    run_owned,
    site_error,
    stage_sources,
    staging,
    swap_in,
)
from .trees import BookTree, shown, verify_tree

__all__ = ["jupyter_book", "missing_notebooks", "build_book"]


def jupyter_book() -> Path:
    """The ``jupyter-book`` command installed beside this Python.

    Raises
    ------
    NTPError
        If it is not installed.
    """
    jb = Path(sys.executable).parent / "jupyter-book"
    if not jb.exists():
        raise NTPError(f"jupyter-book is not installed next to {sys.executable}; install ntpnb[book]")
    return jb


def missing_notebooks(tree: BookTree) -> list[str]:
    """The chapters of the project that have no executed copy in ``tree``."""
    return [name for name in tree.chapters() if not (tree.layout.notebooks / f"{name}.ipynb").is_file()]


def _missing_message(tree: BookTree, missing: list[str]) -> str:
    everything = len(missing) == len(tree.chapters())
    what = "no executed notebooks" if everything else "no executed notebook for " + ", ".join(missing)
    first = (
        f"{what} in {shown(tree.layout.notebooks)} ({tree.label()}); run `{tree.reproduce_command(missing)}`"
    )
    if tree.own or tree.record is not None:
        first += f" first, or `{tree.book_command()} --run-missing`"
    else:  # its setting is unknown: --run-missing could not know it either
        first += " first, with the --profile and -p it ran with (it has no run.json to say)"
    lines = [first]
    for name in missing:
        record = tree.layout.failed / f"{name}.json"
        if record.is_file():
            lines.append(f"  the last run of {name} failed; see {record} and {record.with_suffix('.ipynb')}")
    return "\n".join(lines)


def build_book(tree: BookTree) -> int:
    """Check ``tree``, write its generated pages, then build its book; the exit code.

    Call it holding ``tree``'s output lock (``ntpnb book`` does), so it reads finished runs only.

    Raises
    ------
    NTPError
        If a chapter has no executed copy (naming the command that makes it), a record is
        damaged (naming it and the command that remakes it), the site folder cannot be written,
        or jupyter-book is not installed.
    """
    jb = jupyter_book()
    missing = missing_notebooks(tree)
    if missing and (tree.own or len(missing) == len(tree.chapters())):
        raise NTPError(_missing_message(tree, missing))
    verify_tree(tree)
    layout = tree.layout
    print(f"ntpnb: the book of {shown(layout.root)}: {tree.label()}")
    if missing:
        print(
            f"ntpnb: {shown(layout.root)} has not run {', '.join(missing)}: their pages say so "
            f"(`{tree.book_command()} --run-missing` runs them in its setting)"
        )
    print(f"ntpnb: wrote the reproducibility report {shown(write_report(layout, missing))}")
    print(f"ntpnb: verdicts of the last runs: {verdict_summary(layout)}")
    print(f"ntpnb: wrote the benchmarks page {shown(write_benchmarks_page(layout, own=tree.own))}")
    return _build_site(tree, jb, {name: _placeholder(tree, name) for name in missing})


def _placeholder(tree: BookTree, name: str) -> str:
    """The page of chapter ``name``, which ``tree`` has not run: its source's title, and how to run it."""
    try:
        lines = (tree.root / "notebooks" / f"{name}.md").read_text(encoding="utf-8").splitlines()
    except OSError:
        lines = []
    title = next((line[2:].strip() for line in lines if line.startswith("# ")), name)
    return (
        f"# {title}\n\n"
        "```{note}\n"
        f"This chapter has not run into the tree this book shows (`{shown(tree.layout.root)}`: "
        f"{tree.label()}). Run it with `{tree.reproduce_command([name])}`, then build the book again.\n"
        "```\n"
    )


def _build_site(tree: BookTree, jb: Path, placeholders: dict[str, str]) -> int:
    """Build the book of ``tree`` in a staging folder of its site and swap it in when complete.

    ``placeholders`` are the pages of the chapters the tree has not run.
    """
    site = tree.site
    target = site / HTML_DIRNAME
    title = None if tree.own else f"ntpnb, a run of {tree.label()}"
    try:
        with staging(site) as stage:
            stage_sources(tree.root, tree.layout, stage.source, placeholders, title=title)
            command = [str(jb), "build", str(stage.source), "--path-output", str(stage.path), "-W", "-n"]
            code, output = run_owned([*command, "--keep-going"], stage.path)
            if code != 0:
                errno_ = disk_errno(output, stage.path)
                if errno_ is not None:
                    raise site_error(site, OSError(errno_, os.strerror(errno_)), tree.book_command())
                print("\n".join(build_messages(output)), file=sys.stderr)
                kept = f"the last complete book in {shown(target)} is kept" if target.is_dir() else "no book"
                print(f"ntpnb: the book build failed ({kept}); its messages are above", file=sys.stderr)
                return code
            swap_in(stage, target)
    except OSError as exc:
        raise site_error(site, exc, tree.book_command()) from None
    print(f"ntpnb: the book is at {shown(target / 'index.html')}")
    return 0
