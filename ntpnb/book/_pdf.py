"""The whole book as one PDF: its single-page HTML edition, printed by headless Chromium as a book.

``ntpnb book`` builds the HTML book, then, where Chromium and the ``playwright`` and ``pypdf``
packages are installed (:func:`missing_printer`), the single-page edition of the same sources
(Sphinx's ``singlehtml`` builder, which reuses the first build's doctrees) and prints it with
Chromium into the HTML book as :data:`PDF_NAME` (:func:`print_book`, run as ``python -m
ntpnb.book._pdf`` in a process session of its own, so that a stopped build leaves no browser
behind). The same browser takes the screenshot of a chapter that the README shows from the
published book (:data:`SCREENSHOT_NAME`): made by each build, never committed.

The printed book is the HTML book made for paper: a title page with the contents, each with its
page number; every page of the book (the introduction, a chapter, the report, ...) starting a
printed page; the API reference left out (:data:`LEFT_OUT`; it stays in the HTML book); bookmarks
(the PDF's outline) for the parts, pages, sections and subsections; every page footed with the
run's execution line (:mod:`._footers`) and its page number. The single page is made a book by a
script (:func:`prepare`, ``print/prepare.js``) and the print stylesheet ``static/ntpnb-print.css``
(which every page of the HTML book links, so a page printed from a browser prints the same way):
what the screen keeps one click away prints open (a cell's output, a figure, a dropdown's prose,
a block of checks, the verdict rule) or not at all (the code of a collapsed cell, buttons).
Chromium cannot number pages in the text it prints, so the contents' numbers come from a first
print's named destinations (:func:`print_numbered`), and the bookmarks are written into the final
print with ``pypdf`` (:func:`with_outline`).

The HTML build is told that the PDF will be there through the environment variable
:data:`PDF_ENV`, so the introduction links it and each page's ``.pdf`` button downloads it
(:mod:`.sphinx_ext`); without a printer, neither does, and ``ntpnb book`` says why.

The browser test uses the same Chromium (:func:`chromium`, :data:`CHROMIUM_ARGS`).
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from io import BytesIO
from pathlib import Path
from typing import Any

from .._extras import install_advice
from .._templates import render_inline
from ..errors import NTPError
from ..evidence._vocabulary import plural
from ..records._files import atomic_path
from ._progress import PRINTER_PREFIX

#: The PDF's file name, at the root of the HTML book.
PDF_NAME = "ntpnb.pdf"
#: The environment variable through which ``ntpnb book`` tells the HTML build where its PDF will be.
PDF_ENV = "NTPNB_BOOK_PDF"
#: The environment variable naming the Chromium executable (default :data:`DEFAULT_CHROMIUM`).
CHROMIUM_ENV = "NTPNB_CHROMIUM"
#: Debian's Chromium (``apt-get install chromium``).
DEFAULT_CHROMIUM = Path("/usr/bin/chromium")
#: Chromium's options: no sandbox (root in a container), no GPU, and nothing that reaches the
#: network (the machine, like a reader's, may have none).
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
#: How long the single page may take to load and typeset its math (seconds).
LOAD_TIMEOUT = 300
#: The chapter whose first figure the screenshot shows, and the screenshot's name in the HTML book.
SCREENSHOT_CHAPTER = "03_gd_implicit_bias"
SCREENSHOT_NAME = "screenshot.png"
#: The screenshot's size: a laptop's window.
SCREENSHOT_SIZE = {"width": 1366, "height": 900}
#: The PDF's margins (mm) on its A4 paper (210 mm wide), and its page format as Chromium takes it.
MARGINS_MM = {"top": 14, "bottom": 16, "left": 12, "right": 12}
PAGE = {"format": "A4", "margin": {side: f"{mm}mm" for side, mm in MARGINS_MM.items()}}
#: A CSS pixel in points, as Chromium prints it (96 pixels to the inch).
CSS_PIXEL_PT = 0.75
#: The width of a printed page's text in CSS pixels (96 to the inch), at which the book is laid out.
PRINT_WIDTH = round((210 - MARGINS_MM["left"] - MARGINS_MM["right"]) / 25.4 * 96)


def chromium() -> Path:
    """The Chromium executable: ``$NTPNB_CHROMIUM``, else Debian's."""
    return Path(os.environ.get(CHROMIUM_ENV) or DEFAULT_CHROMIUM)


def missing_printer() -> str | None:
    """Why this machine cannot print the book (no Chromium, no playwright or pypdf), or None if it can."""
    if not chromium().is_file():
        return f"no Chromium at {chromium()} (apt-get install chromium, or set {CHROMIUM_ENV})"
    for module, package in (("playwright.sync_api", "playwright"), ("pypdf", "pypdf")):
        try:
            importlib.import_module(module)
        except ImportError:
            return f"the {package} package is not installed: {install_advice('pdf')}"
    return None


def single_page(site: Path, source: Path) -> Path:
    """The single-page edition in ``site`` (a ``singlehtml`` output folder) of the book in ``source``.

    Sphinx writes it as ``<root_doc>.html`` (``root:`` of the book's ``_toc.yml``) but with links
    relative to the folder's root (where a book whose first page is ``index`` has it); a copy
    beside ``index.html``, which this returns, resolves them.
    """
    import yaml  # installed with jupyter-book, which builds the book

    root_doc = yaml.safe_load((source / "_toc.yml").read_text(encoding="utf-8"))["root"]
    page = site / "whole-book.html"
    page.write_bytes((site / f"{root_doc}.html").read_bytes())
    return page


def say(phase: str) -> None:
    """Tell ``ntpnb book``, which reads this process's output, where the print is (:mod:`._progress`)."""
    print(f"{PRINTER_PREFIX}{phase}", flush=True)


def _open(tab: Any, page: Path) -> None:
    """Open ``page`` in ``tab`` and wait until its math is typeset and its images decoded."""
    wait = LOAD_TIMEOUT * 1000  # milliseconds
    tab.goto(Path(page).resolve().as_uri(), wait_until="load", timeout=wait)
    started = "() => !window.MathJax || (MathJax.startup && MathJax.startup.promise)"
    tab.wait_for_function(started, timeout=wait)
    tab.evaluate("() => window.MathJax ? MathJax.startup.promise : null")
    tab.wait_for_function("() => [...document.images].every(i => i.complete)", timeout=wait)


#: The documents the printed book leaves out (prefixes of their names): the API reference, which
#: stays in the HTML book.
LEFT_OUT = ("book/api",)
#: The script that makes the single page a book (:func:`prepare`).
PREPARE_SCRIPT = Path(__file__).parent / "print" / "prepare.js"
#: How many times the book may be printed until its contents' page numbers are those of the print.
MAX_PRINTS = 3
#: The script that moves a figure after the text that follows it (:func:`float_figures`).
FLOAT_SCRIPT = Path(__file__).parent / "print" / "float.js"
#: The id of a figure's marker (the empty block before it, where the text before it ends) is
#: this prefix and the figure's id (``print/prepare.js``).
FIGURE_MARK = "ntpnb-print-before-"
#: How much of a page's text area (its height) may stay blank before a figure that did not fit.
MAX_BLANK = 0.5
#: How far below the top of its page's text area (points) a figure that did not fit on the page
#: before starts: room for a heading that went with it.
NEAR_TOP = 80
#: How many prints may move figures before the contents are numbered (:func:`float_figures`).
MAX_FLOAT_PRINTS = 8
#: The script that leaves the settled pages of the book out of the next print (:func:`float_figures`).
ONLY_PAGES_SCRIPT = Path(__file__).parent / "print" / "only_pages.js"


def prepare(tab: Any) -> dict[str, Any]:
    """Make the single page open in ``tab`` a book to print (:data:`PREPARE_SCRIPT`); its outline.

    The documents of :data:`LEFT_OUT` are removed, each page of the book marked to start a printed
    page, and the theme's printed contents replaced by the book's, with an empty slot for each
    entry's page number; each figure gets a marker before it (:data:`FIGURE_MARK`). Returns
    ``{"outline": [...], "contents": [ids], "figures": [ids]}``: the outline's entries in reading
    order (``{"part": caption}``, or ``{"id", "title", "depth"}`` with depth 0 for a page's
    title, 1 for its sections, 2 for theirs), the ids of the contents' entries and the figures'.
    """
    return tab.evaluate(PREPARE_SCRIPT.read_text(encoding="utf-8"), list(LEFT_OUT))


def destinations(pdf: bytes) -> dict[str, tuple[int, float | None]]:
    """Each named destination of ``pdf`` (an id in the page it was printed from): its page (from 0), top."""
    from pypdf import PdfReader

    reader = PdfReader(BytesIO(pdf))
    found = {}
    for name, dest in reader.named_destinations.items():
        top = dest.get("/Top")
        found[name.removeprefix("/")] = (reader.get_destination_page_number(dest), top)
    return found


def outline_levels(outline: list[dict[str, Any]]) -> list[tuple[int, str, str | None]]:
    """The outline's entries as ``(level, title, id)``: a part at level 0 and its pages beneath it.

    A part has no id of its own: it points where its first page does. A page before the first
    part (the introduction) is at level 0.
    """
    levels, in_part = [], False
    for entry in outline:
        if "part" in entry:
            levels.append((0, entry["part"], None))
            in_part = True
        else:
            levels.append((entry["depth"] + in_part, entry["title"], entry["id"]))
    return levels


def with_outline(pdf: bytes, outline: list[dict[str, Any]]) -> bytes:
    """``pdf`` with the bookmarks of ``outline`` (:func:`prepare`'s), each at its heading.

    Raises
    ------
    NTPError
        If a heading of the outline has no named destination in ``pdf``.
    """
    from pypdf import PdfWriter
    from pypdf.generic import Fit

    found = destinations(pdf)
    levels = outline_levels(outline)
    missing = [title for _, title, id_ in levels if id_ is not None and id_ not in found]
    if missing:
        raise NTPError(f"the PDF has no destination for the headings {', '.join(missing)}")
    writer = PdfWriter(BytesIO(pdf), incremental=True)  # appends the outline: nothing else is rewritten
    parents: list[Any] = []
    for i, (level, title, id_) in enumerate(levels):
        if id_ is None:  # a part: where its first page is
            id_ = next(j for _, _, j in levels[i + 1 :] if j is not None)
        page, top = found[id_]
        del parents[level:]
        item = writer.add_outline_item(
            title=title,
            page_number=page,
            parent=parents[-1] if parents else None,
            fit=Fit.xyz(top=top),
            is_open=level == 0,  # the parts open, showing their pages
        )
        parents.append(item)
    writer.page_mode = "/UseOutlines"
    out = BytesIO()
    writer.write(out)
    return out.getvalue()


def text_area_pt() -> tuple[float, float]:
    """The top and bottom of a printed page's text area, in points from the page's foot (A4)."""
    height = 297 / 25.4 * 72
    return height - MARGINS_MM["top"] / 25.4 * 72, MARGINS_MM["bottom"] / 25.4 * 72


def figures_to_float(
    found: dict[str, tuple[int, float | None]], figures: list[str]
) -> list[dict[str, float | str]]:
    """The figures of a print (its destinations ``found``) that left the page before them half blank.

    A figure floats when it starts near the top of its page (within :data:`NEAR_TOP`) and its
    marker, where the text before it ends, is on the page before, more than :data:`MAX_BLANK` of
    whose text area is left blank. Each as ``{"id": figure, "blank": height in CSS pixels}``.
    """
    top, bottom = text_area_pt()
    moves: list[dict[str, float | str]] = []
    for figure in figures:
        mark = found.get(FIGURE_MARK + figure)
        if figure not in found or mark is None or found[figure][1] is None or mark[1] is None:
            continue
        (page, starts), (mark_page, ends) = found[figure], mark
        blank = ends - bottom  # type: ignore[operator]
        if mark_page == page - 1 and starts > top - NEAR_TOP and blank > MAX_BLANK * (top - bottom):
            moves.append({"id": figure, "blank": blank / CSS_PIXEL_PT})
    return moves


def float_figures(tab: Any, figures: list[str], **options: Any) -> None:
    """Print ``tab`` until no figure leaves the page before it half blank, moving those that do.

    Each print's figures that did (:func:`figures_to_float`) are moved after the text that follows
    them (:data:`FLOAT_SCRIPT`), as far as fills their blank, and the book printed again; at most
    :data:`MAX_FLOAT_PRINTS` prints (a figure that cannot move stays where it is). A print after
    the first holds only the pages of the book in which a figure moved (:data:`ONLY_PAGES_SCRIPT`):
    the others are settled, since a page of the book starts a printed page and its figures stay
    in it. (Measured on the quick book's 130 pages: the same moves and the same final pages, the
    prints after the first 3-12 s instead of 21-25 s each.) The page is left whole again.
    """
    move, only = (path.read_text(encoding="utf-8") for path in (FLOAT_SCRIPT, ONLY_PAGES_SCRIPT))
    for n in range(1, MAX_FLOAT_PRINTS + 1):
        moves = figures_to_float(destinations(tab.pdf(**options)), figures)
        moved = tab.evaluate(move, moves) if moves else []
        if not moved or n == MAX_FLOAT_PRINTS:
            break
        pages = tab.evaluate(only, moved)
        held = plural(pages, "page")
        say(f"floating the figures: print {n + 1}, of the {held} of the book where one moved")
    tab.evaluate(only, [])


def print_numbered(tab: Any, contents: list[str], **options: Any) -> bytes:
    """Print ``tab`` until the page numbers in its contents (the ids ``contents``) are those printed.

    The first print finds each entry's page; the numbers are
    written into the contents (whose length they do not change: the slots have a fixed width)
    and the book printed again, until a print agrees with its contents.

    Raises
    ------
    NTPError
        If the numbers do not settle within :data:`MAX_PRINTS` prints, or an entry has no page.
    """
    shown: dict[str, int] | None = None
    for n in range(1, MAX_PRINTS + 1):
        say(f"print {n} of at most {MAX_PRINTS} (until the contents' page numbers are the print's)")
        pdf = tab.pdf(**options)
        found = destinations(pdf)
        missing = [id_ for id_ in contents if id_ not in found]
        if missing:
            raise NTPError(f"the PDF has no destination for the contents' entries {', '.join(missing)}")
        pages = {id_: found[id_][0] + 1 for id_ in contents}
        if pages == shown:
            return pdf
        tab.evaluate(_FILL_PAGE_NUMBERS, pages)
        shown = pages
    raise NTPError(f"the contents' page numbers did not settle in {MAX_PRINTS} prints of the book")


#: Writes each contents entry's page number into its slot.
_FILL_PAGE_NUMBERS = """(pages) => {
    for (const slot of document.querySelectorAll('.ntpnb-print-page-number'))
        slot.textContent = String(pages[slot.dataset.target] ?? '');
}"""


def print_book(page: Path, pdf: Path, shot: tuple[Path, Path] | None = None) -> None:
    """Print the single page ``page`` to ``pdf`` (atomically) as a book, once its math and images are ready.

    The book (:func:`prepare`) has each of its pages on a new printed page, a contents with page
    numbers (:func:`print_numbered`) and bookmarks for its parts, pages and sections
    (:func:`with_outline`). ``shot``: a chapter's page and the PNG (written atomically) to save its
    screenshot as.
    """
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium()), args=list(CHROMIUM_ARGS))
        tab = browser.new_page()
        say("loading the single page in Chromium, its math typeset and its images decoded")
        _open(tab, page)
        line = tab.evaluate("() => (document.querySelector('p.ntpnb-provenance') || {}).innerText || ''")
        footer = render_inline("pdf_footer.html", line=line)
        say("laying the page out as a book: its contents, a printed page per page of the book")
        book = prepare(tab)  # before the print media: the page is laid out for print once
        tab.emulate_media(media="print")
        options = {
            **PAGE,
            "print_background": True,
            "display_header_footer": True,
            "header_template": render_inline("pdf_header.html"),
            "footer_template": footer,
        }
        say("floating the figures: print 1, of the whole book")
        float_figures(tab, book["figures"], **options)
        printed = print_numbered(tab, book["contents"], **options)
        say("writing the bookmarks")
        with atomic_path(pdf) as tmp:
            Path(tmp).write_bytes(with_outline(printed, book["outline"]))
        if shot is not None:  # what a reader of the chapter sees with its first figure mid-screen
            say("the screenshot of a chapter")
            tab = browser.new_page()
            tab.set_viewport_size(SCREENSHOT_SIZE)
            _open(tab, shot[0])
            tab.evaluate("() => document.querySelector('figure')?.scrollIntoView({block: 'center'})")
            with atomic_path(shot[1]) as tmp:
                tab.screenshot(path=str(tmp))
        browser.close()


def main(argv: list[str] | None = None) -> int:
    """``python -m ntpnb.book._pdf PAGE PDF [CHAPTER PNG]``: print ``PAGE``; a screenshot of ``CHAPTER``."""
    # Chromium's trailer counts fewer objects than it writes, which pypdf reports and reads past
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    args = [Path(a) for a in (sys.argv[1:] if argv is None else argv)]
    if len(args) not in (2, 4):
        print("usage: python -m ntpnb.book._pdf PAGE.html BOOK.pdf [CHAPTER.html SHOT.png]", file=sys.stderr)
        return 2
    try:
        print_book(args[0], args[1], (args[2], args[3]) if len(args) == 4 else None)
    except NTPError as exc:
        print(f"ERROR: the book's PDF: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
