"""The whole book as one PDF: its single-page HTML edition, printed by headless Chromium.

``ntpnb book`` builds the HTML book, then, where Chromium and the ``playwright`` package are
installed (:func:`missing_printer`), the single-page edition of the same sources (Sphinx's
``singlehtml`` builder, which reuses the first build's doctrees) and prints it with Chromium
into the HTML book as :data:`PDF_NAME` (:func:`print_book`, run as ``python -m ntpnb.book.pdf``
in a process session of its own, so that a stopped build leaves no browser behind). Every page
of the PDF is footed with the run's execution line (:mod:`.footers`) and its page number. The
same browser takes the screenshot of a chapter that the README shows from the published book
(:data:`SCREENSHOT_NAME`): made by each build, never committed.

The HTML build is told that the PDF will be there through the environment variable
:data:`PDF_ENV`, so the introduction links it and each page's ``.pdf`` button downloads it
(:mod:`.sphinx_ext`); without a printer, neither does, and ``ntpnb book`` says why.

The browser test uses the same Chromium (:func:`chromium`, :data:`CHROMIUM_ARGS`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from ..chapter.outputs import atomic_path

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
#: The page format and margins of the PDF.
PAGE = {"format": "A4", "margin": {"top": "14mm", "bottom": "16mm", "left": "12mm", "right": "12mm"}}


def chromium() -> Path:
    """The Chromium executable: ``$NTPNB_CHROMIUM``, else Debian's."""
    return Path(os.environ.get(CHROMIUM_ENV) or DEFAULT_CHROMIUM)


def missing_printer() -> str | None:
    """Why this machine cannot print the book (no Chromium, no playwright), or None if it can."""
    if not chromium().is_file():
        return f"no Chromium at {chromium()} (apt-get install chromium, or set {CHROMIUM_ENV})"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[pdf]')"
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


#: The PDF's footer: the run's execution line, then the page number (Chromium fills the spans).
_FOOTER = (
    '<div style="font-size:7pt;color:#555;width:100%;margin:0 12mm;display:flex;'
    'justify-content:space-between;gap:2em"><span>{line}</span>'
    '<span style="white-space:nowrap"><span class="pageNumber"></span> / '
    '<span class="totalPages"></span></span></div>'
)


def _open(tab: Any, page: Path) -> None:
    """Open ``page`` in ``tab`` and wait until its math is typeset and its images decoded."""
    wait = LOAD_TIMEOUT * 1000  # milliseconds
    tab.goto(Path(page).resolve().as_uri(), wait_until="load", timeout=wait)
    started = "() => !window.MathJax || (MathJax.startup && MathJax.startup.promise)"
    tab.wait_for_function(started, timeout=wait)
    tab.evaluate("() => window.MathJax ? MathJax.startup.promise : null")
    tab.wait_for_function("() => [...document.images].every(i => i.complete)", timeout=wait)


def print_book(page: Path, pdf: Path, shot: tuple[Path, Path] | None = None) -> None:
    """Print the single page ``page`` to ``pdf`` (atomically) once its math and images are ready.

    ``shot``: a chapter's page and the PNG (written atomically) to save its screenshot as.
    """
    from html import escape

    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium()), args=list(CHROMIUM_ARGS))
        tab = browser.new_page()
        _open(tab, page)
        line = tab.evaluate("() => (document.querySelector('p.ntpnb-provenance') || {}).innerText || ''")
        footer = _FOOTER.format(line=escape(line))
        tab.emulate_media(media="print")
        with atomic_path(pdf) as tmp:
            tab.pdf(
                path=str(tmp),
                **PAGE,
                print_background=True,
                display_header_footer=True,
                header_template="<span></span>",
                footer_template=footer,
            )
        if shot is not None:  # what a reader of the chapter sees with its first figure mid-screen
            tab = browser.new_page()
            tab.set_viewport_size(SCREENSHOT_SIZE)
            _open(tab, shot[0])
            tab.evaluate("() => document.querySelector('figure')?.scrollIntoView({block: 'center'})")
            with atomic_path(shot[1]) as tmp:
                tab.screenshot(path=str(tmp))
        browser.close()


def main(argv: list[str] | None = None) -> int:
    """``python -m ntpnb.book.pdf PAGE PDF [CHAPTER PNG]``: print ``PAGE``; a screenshot of ``CHAPTER``."""
    args = [Path(a) for a in (sys.argv[1:] if argv is None else argv)]
    if len(args) not in (2, 4):
        print("usage: python -m ntpnb.book.pdf PAGE.html BOOK.pdf [CHAPTER.html SHOT.png]", file=sys.stderr)
        return 2
    print_book(args[0], args[1], (args[2], args[3]) if len(args) == 4 else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
