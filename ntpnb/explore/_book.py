"""``ntpnb book --run TREE`` of an explore tree (a tree with ``explore.json``): its map page as the book.

The grid's results are read from the tree and verified (:func:`ntpnb.explore._read.load_explore`: a
damaged record is refused, naming it), its maps written under ``TREE/maps/``
(:func:`ntpnb.explore._folder.write_maps`), and the map page built as a book of one page into
``TREE/_book/html``, as any run's book is built (:func:`ntpnb.book._build.build_site`: atomically, warnings
are errors).
"""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

from ..book._build import book_config, build_site, jupyter_book
from ..book._progress import StepProgress
from ..book._trees import RUN_SITE_DIRNAME, root_option, shown
from ._folder import MAPS_DIRNAME, write_maps
from ._read import load_explore
from ._words import summary_lines

#: The map page's document in the staged book (``maps/maps.md``, its figures beside it).
MAP_PAGE_DOC = f"{MAPS_DIRNAME}/maps"


def stage_map_book(root: Path, maps: Path, title: str, source: Path) -> None:
    """Copy into ``source`` a book of one page: the maps in ``maps``, in the project's configuration."""
    source.mkdir()
    (source / "_config.yml").write_text(book_config(root, title), encoding="utf-8")
    (source / "_toc.yml").write_text(f"format: jb-book\nroot: {MAP_PAGE_DOC}\n", encoding="utf-8")
    ignore = shutil.ignore_patterns(".*", "__pycache__")
    shutil.copytree(root / "book", source / "book", ignore=ignore)  # the logo, the bibliography
    shutil.copytree(maps, source / MAPS_DIRNAME, ignore=ignore)


def build_explore_book(root: Path, tree: str | Path, pdf: bool = True) -> int:
    """Write the maps of the explore tree ``tree`` and build its book; the exit code.

    Call it holding the tree's output lock (``ntpnb book`` does), so it reads finished runs only.

    Raises
    ------
    NTPError
        If the tree's records are damaged (naming the file), the site folder cannot be
        written, or jupyter-book is not installed.
    """
    jupyter_book()  # installed, before anything is written
    root, tree = Path(root).resolve(), Path(tree).expanduser().resolve()
    results = load_explore(tree)
    print(f"ntpnb: the maps of {shown(tree)}: {results.title}")
    maps = tree / MAPS_DIRNAME
    write_maps(results, maps, progress=StepProgress("the maps", lambda line: None).at)
    for line in summary_lines(results):
        print(f"  {line}")
    print(f"ntpnb: wrote the maps into {shown(maps)}")
    title = f"ntpnb, a map of {results.title}"
    command = f"ntpnb book --run {shlex.quote(shown(tree))}{root_option(root)}"
    return build_site(
        tree / RUN_SITE_DIRNAME, lambda source: stage_map_book(root, maps, title, source), command, pdf
    )
