"""The whole book's PDF: who can print it, the single page it is printed from, and the book it is.

The unit tests check the pieces that need no browser: the outline's levels, the bookmarks written
into a PDF at its named destinations, and the prints repeated until the contents' page numbers
are those printed. The slow tests read the PDF of the book the suite built (``built_book``, the
quick profile) with ``pypdf`` and compare it with that book's HTML pages: its bookmarks (every
page and section, in order), each page of the book starting a printed page with its title, no
heading alone at a page's foot, the contents' page numbers, nothing printed that a reader cannot
use (a "Show code" button, the API reference), every figure printed, and its length.
"""

from __future__ import annotations

import json
import logging
import os
import re
import unicodedata
from dataclasses import dataclass, field
from functools import cached_property
from html.parser import HTMLParser
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
import yaml
from pypdf import PdfReader, PdfWriter

from ntpnb.book._pdf import (
    CHROMIUM_ENV,
    CSS_PIXEL_PT,
    FIGURE_MARK,
    LEFT_OUT,
    MARGINS_MM,
    MAX_FLOAT_PRINTS,
    MAX_PRINTS,
    PDF_NAME,
    chromium,
    figures_to_float,
    float_figures,
    missing_printer,
    outline_levels,
    print_numbered,
    single_page,
    text_area_pt,
    with_outline,
)
from ntpnb.errors import NTPError

from conftest import ROOT, made_once_value

# Chromium's trailer counts fewer objects than it writes, which pypdf reports and reads past
logging.getLogger("pypdf").setLevel(logging.ERROR)

#: The most pages the quick-profile book may print to. The quick book has the paper book's text
#: and figures (its runs are shorter, not its pages): 118 pages when this was first written, the
#: five-seed paper book 124 (the HTML edition printed: 300); since every folded table of checks
#: prints open, the one-seed paper book prints 162.
MAX_PAGES = 180
#: Where the page's text ends above the footer (points from the bottom: the bottom margin).
BODY_BOTTOM = MARGINS_MM["bottom"] / 25.4 * 72
#: Chromium prints a CSS pixel as 0.75 pt; a page laid out wider than the paper is scaled down.
PIXEL = 0.75


def test_without_chromium_the_book_says_why_it_has_no_pdf(tmp_path, monkeypatch):
    monkeypatch.setenv(CHROMIUM_ENV, str(tmp_path / "no-chromium"))
    assert chromium() == tmp_path / "no-chromium"
    remedy = f"(apt-get install chromium, or set {CHROMIUM_ENV})"
    assert missing_printer() == f"no Chromium at {tmp_path / 'no-chromium'} {remedy}"


def test_the_single_page_is_printed_from_the_folders_root_where_its_links_resolve(tmp_path):
    site = tmp_path / "singlehtml"
    (site / "book").mkdir(parents=True)
    (site / "book" / "intro.html").write_text('<img src="_images/a.png">')  # the book's root: book/intro
    page = single_page(site, ROOT)
    assert page.parent == site and page.read_text() == '<img src="_images/a.png">'


@pytest.mark.parametrize("value", ["", None])
def test_chromium_defaults_to_debians(monkeypatch, value):
    if value is None:
        monkeypatch.delenv(CHROMIUM_ENV, raising=False)
    else:
        monkeypatch.setenv(CHROMIUM_ENV, value)
    assert str(chromium()) == "/usr/bin/chromium"


# --- the outline and the contents' page numbers, without a browser ---------------------------------

#: An outline as the page script returns it: the introduction, then two parts.
OUTLINE = [
    {"id": "intro", "title": "Introduction", "depth": 0},
    {"id": "intro-why", "title": "Why", "depth": 1},
    {"part": "Paper A"},
    {"id": "ch1", "title": "1. One", "depth": 0},
    {"id": "s1-1", "title": "1.1. Its section", "depth": 1},
    {"id": "s1-1-1", "title": "1.1.1. Its subsection", "depth": 2},
    {"id": "ch2", "title": "2. Two", "depth": 0},
    {"part": "About this book"},
    {"id": "report", "title": "Report", "depth": 0},
]
#: The page (from 0) of each of its headings.
PAGES = {"intro": 1, "intro-why": 1, "ch1": 2, "s1-1": 2, "s1-1-1": 3, "ch2": 4, "report": 5}


def a_pdf(pages: int, destinations: dict[str, int]) -> bytes:
    """A PDF of ``pages`` blank A4 pages with a named destination on each given page (from 0)."""
    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=595.92, height=842.88)
    for name, page in destinations.items():
        writer.add_named_destination(name, page)
    out = BytesIO()
    writer.write(out)
    return out.getvalue()


def flat_outline(reader: PdfReader) -> list[tuple[int, Any, int]]:
    """The outline of ``reader``'s PDF, flattened: ``(level, bookmark, page from 0)`` in order."""
    found = []

    def walk(items, level):
        for item in items:
            if isinstance(item, list):
                walk(item, level + 1)
            else:
                found.append((level, item, reader.get_destination_page_number(item)))

    walk(reader.outline, 0)
    return found


def bookmarks(pdf: bytes) -> list[tuple[int, str, int]]:
    """The outline of ``pdf``: ``(level, title, page from 0)``."""
    return [(level, item.title, page) for level, item, page in flat_outline(PdfReader(BytesIO(pdf)))]


def test_the_outline_puts_each_page_under_its_part_and_the_introduction_before_them():
    assert outline_levels(OUTLINE) == [
        (0, "Introduction", "intro"),
        (1, "Why", "intro-why"),
        (0, "Paper A", None),
        (1, "1. One", "ch1"),
        (2, "1.1. Its section", "s1-1"),
        (3, "1.1.1. Its subsection", "s1-1-1"),
        (1, "2. Two", "ch2"),
        (0, "About this book", None),
        (1, "Report", "report"),
    ]


def test_bookmarks_are_written_at_their_headings_and_a_part_at_its_first_page():
    pdf = with_outline(a_pdf(6, PAGES), OUTLINE)
    assert bookmarks(pdf) == [
        (0, "Introduction", 1),
        (1, "Why", 1),
        (0, "Paper A", 2),
        (1, "1. One", 2),
        (2, "1.1. Its section", 2),
        (3, "1.1.1. Its subsection", 3),
        (1, "2. Two", 4),
        (0, "About this book", 5),
        (1, "Report", 5),
    ]
    reader = PdfReader(BytesIO(pdf))
    assert len(reader.pages) == 6 and reader.page_mode == "/UseOutlines"  # opens with its bookmarks


def test_a_heading_without_a_destination_is_named_not_bookmarked_elsewhere():
    pages = {k: v for k, v in PAGES.items() if k != "s1-1"}
    with pytest.raises(NTPError, match=r"no destination for the headings 1\.1\. Its section$"):
        with_outline(a_pdf(6, pages), OUTLINE)


class FakeTab:
    """A browser tab whose prints put each destination on the page ``layout(fills)`` says.

    ``fills`` counts the times page numbers were written into its contents.
    """

    def __init__(self, layout):
        self.layout, self.fills, self.prints, self.filled = layout, 0, 0, []

    def pdf(self, **options):
        self.prints += 1
        return a_pdf(8, self.layout(self.fills))

    def evaluate(self, script, argument):
        assert "ntpnb-print-page-number" in script
        self.fills += 1
        self.filled.append(argument)


def test_the_book_is_printed_again_once_its_contents_have_their_page_numbers():
    tab = FakeTab(lambda fills: PAGES)
    pdf = print_numbered(tab, ["intro", "ch1", "ch2"])
    assert tab.prints == 2 and tab.filled == [{"intro": 2, "ch1": 3, "ch2": 5}]  # numbered from 1
    assert len(PdfReader(BytesIO(pdf)).pages) == 8


def test_contents_whose_numbers_move_the_pages_are_printed_until_they_agree_or_refused():
    # the numbers push chapter 2 a page on once (the contents grew), then it stays
    tab = FakeTab(lambda fills: PAGES | {"ch2": 4 + min(fills, 1)})
    print_numbered(tab, ["ch1", "ch2"])
    assert tab.prints == 3 and tab.filled == [{"ch1": 3, "ch2": 5}, {"ch1": 3, "ch2": 6}]
    # a page that moves at every print
    tab = FakeTab(lambda fills: PAGES | {"ch2": 4 + fills})
    with pytest.raises(NTPError, match=f"did not settle in {MAX_PRINTS} prints"):
        print_numbered(tab, ["ch1", "ch2"])
    assert tab.prints == MAX_PRINTS


def test_a_contents_entry_without_a_destination_is_named():
    tab = FakeTab(lambda fills: {"ch1": 2})
    with pytest.raises(NTPError, match=r"no destination for the contents' entries ch2$"):
        print_numbered(tab, ["ch1", "ch2"])


def test_a_figure_floats_only_where_it_left_the_page_before_it_more_than_half_blank():
    top, bottom = text_area_pt()
    half = (top - bottom) / 2
    found = {
        "fig-a": (3, top),  # pushed to the top of page 3 ...
        FIGURE_MARK + "fig-a": (2, bottom + half + 10),  # ... leaving page 2 blank below its text
        "fig-b": (5, top - 40),  # a heading went with it
        FIGURE_MARK + "fig-b": (4, top - 20),
        "fig-c": (7, top),  # page 6 is full enough
        FIGURE_MARK + "fig-c": (6, bottom + half - 10),
        "fig-d": (8, 400.0),  # on its own page, mid-page
        FIGURE_MARK + "fig-d": (8, 420.0),
    }
    moves = figures_to_float(found, ["fig-a", "fig-b", "fig-c", "fig-d", "fig-missing"])
    assert [m["id"] for m in moves] == ["fig-a", "fig-b"]
    assert moves[0]["blank"] == pytest.approx((half + 10) / CSS_PIXEL_PT)


class FloatTab:
    """A tab whose prints leave the page before ``fig`` half blank until ``fig`` moved ``moves`` times."""

    def __init__(self, moves: int):
        self.moves, self.prints, self.moved, self.printed_pages = moves, 0, [], []

    def pdf(self, **options):
        self.prints += 1
        mark_page = 1 if len(self.moved) < self.moves else 2  # its text ends on the page before it
        return a_pdf(4, {"fig": 2, FIGURE_MARK + "fig": mark_page})  # each at the top of its page

    def evaluate(self, script, argument):
        if "ntpnb-print-skip" in script:  # the pages of the book the next print holds
            self.printed_pages.append(argument)
            return len(argument)
        assert "ntpnb-print-before-" in script
        self.moved.append(argument)
        return [m["id"] for m in argument]


def test_figures_float_until_no_page_is_left_half_blank_before_one():
    tab = FloatTab(moves=1)
    float_figures(tab, ["fig"])
    assert tab.prints == 2 and len(tab.moved) == 1
    # the second print holds the page of the book where the figure moved; then the page is whole
    assert tab.printed_pages == [["fig"], []]
    tab = FloatTab(moves=99)  # a figure that never settles: at most MAX_FLOAT_PRINTS prints
    float_figures(tab, ["fig"])
    assert tab.prints == MAX_FLOAT_PRINTS and tab.printed_pages[-1] == []


# --- the quick-profile book's PDF ---------------------------------------------------------------


def normal(text: str) -> str:
    """``text`` as compared: ligatures and math letters as plain letters, whitespace as one space."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


#: Elements without an end tag.
VOID = {"area", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}


class _Headings(HTMLParser):
    """The ``h1``-``h3`` of a page's article (each as its text around any math, in pieces), and the
    numbers of its figures and tables ("Fig. 3.3")."""

    def __init__(self):
        super().__init__()
        self.headings: list[tuple[int, list[str]]] = []
        self.figures: list[str] = []
        self._article = False
        self._heading: str | None = None  # the tag of the heading being read
        self._skip = 0  # depth inside a heading's math or link sign
        self._caption = 0  # depth inside a caption's number
        self._number = ""

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        self._article |= tag == "article" and "bd-article" in classes
        if not self._article or tag in VOID:
            return
        if self._skip or self._caption:
            self._skip += bool(self._skip)
            self._caption += bool(self._caption)
        elif self._heading and ("math" in classes or "headerlink" in classes):
            self._skip = 1
            self.headings[-1][1].append("")
        elif re.fullmatch("h[1-3]", tag):
            self.headings.append((int(tag[1]), [""]))
            self._heading = tag
        elif tag == "span" and "caption-number" in classes:
            self._caption, self._number = 1, ""

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if self._skip:
            self._skip -= 1
        elif self._caption:
            self._caption -= 1
            if not self._caption:
                self.figures.append(normal(self._number))
        elif tag == self._heading:
            self._heading = None
        elif tag == "article":
            self._article = False

    def handle_data(self, data):
        if self._caption:
            self._number += data
        elif self._heading and not self._skip:
            self.headings[-1][1][-1] += data


def page_headings(html: Path) -> _Headings:
    parser = _Headings()
    parser.feed(html.read_text(encoding="utf-8"))
    return parser


def same_title(printed: str, pieces: list[str]) -> bool:
    """Whether the bookmark ``printed`` is the heading ``pieces`` (its text around any math, in order)."""
    words = [normal(piece) for piece in pieces if normal(piece)]
    if len(pieces) == 1:
        return normal(printed) == words[0]
    at = 0
    for word in words:
        at = normal(printed).find(word, at)
        if at < 0:
            return False
        at += len(word)
    return True


@dataclass(frozen=True)
class PrintedPage:
    """What one printed page holds, read from the PDF once: its text, its text runs and images."""

    raw: str  # its text as pypdf extracts it
    #: Each text run: its height above the page's foot in points, its text (normalised), its scale.
    runs: list[tuple[float, str, float]]
    images: list[float]  # the height of each image's top
    height: float  # the page's height in points
    #: The named destination of each link in the book the page holds (``"term-KKT"``), in order.
    links: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return normal(self.raw)


def read_page(page) -> PrintedPage:
    """The :class:`PrintedPage` of a pypdf page: one pass over its content stream."""
    runs, images = [], []

    def text(text, cm, tm, font, size):
        if text.strip():
            runs.append((cm[3] * tm[5] + cm[5], normal(text), cm[0]))

    def image(operator, operands, cm, tm):
        if operator == b"Do":  # an image (or a form) drawn into the unit square that cm maps
            images.append(max(cm[5], cm[5] + cm[3]))

    raw = page.extract_text(visitor_text=text, visitor_operand_before=image)
    return PrintedPage(raw, runs, images, float(page.mediabox.height), internal_links(page))


def internal_links(page) -> list[str]:
    """The named destinations a pypdf page's links go to (Chromium names them by the HTML ids)."""
    found = []
    for annotation in page.get("/Annots") or []:
        link = annotation.get_object()
        if link.get("/Subtype") == "/Link" and link.get("/Dest") is not None:
            found.append(str(link["/Dest"]).lstrip("/"))
    return found


@dataclass
class Printed:
    """The book's PDF (its outline and pages, each read once), and the HTML book it was printed from."""

    #: ``(level, title, page from 0, top)`` of each bookmark.
    outline: list[tuple[int, str, int, float]]
    pages: list[PrintedPage]
    root: Path  # the book's sources

    @classmethod
    def read(cls, pdf: Path, root: Path) -> Printed:
        reader = PdfReader(pdf)
        outline = [
            (level, str(item.title), page, float(item["/Top"])) for level, item, page in flat_outline(reader)
        ]
        return cls(outline, [read_page(page) for page in reader.pages], root)

    @property
    def html(self) -> Path:
        return self.root / "_build" / "html"

    @cached_property
    def texts(self) -> list[str]:
        return [page.text for page in self.pages]

    def expected(self) -> list[tuple[int, list[str]]]:
        """The bookmarks the HTML book implies: ``(level, heading's pieces)``.

        The first page (its title is the book's: "Introduction") and its sections, then each part
        of ``_toc.yml`` and, under it, each page that is not left out and its sections and
        subsections (``h1``-``h3``), in order.
        """
        toc = yaml.safe_load((self.root / "_toc.yml").read_text(encoding="utf-8"))
        root = page_headings(self.html / f"{toc['root']}.html").headings
        found = [(0, ["Introduction"])] + [(level - 1, pieces) for level, pieces in root[1:]]
        for part in toc["parts"]:
            found.append((0, [part["caption"]]))
            for chapter in part["chapters"]:
                if chapter["file"].startswith(LEFT_OUT):
                    continue
                headings = page_headings(self.html / f"{chapter['file']}.html").headings
                found += [(level, pieces) for level, pieces in headings]
        return found

    def chapter_starts(self) -> list[tuple[Path, int]]:
        """Each chapter's HTML page and the printed page (from 0) its title starts on."""
        starts = {normal(title): page for title, page, _ in self.pages_of_the_book()}
        found = []
        for chapter in sorted((self.html / "outputs" / "notebooks").glob("*.html")):
            title = normal("".join(page_headings(chapter).headings[0][1]))
            found.append((chapter, next(p for t, p in starts.items() if t.endswith(title))))
        return found

    def pages_of_the_book(self) -> list[tuple[str, int, float]]:
        """``(title, page from 0, top)`` of the introduction and every page in a part."""
        page_level, found = 0, []  # the introduction's, then a part's pages'
        for level, title, page, top in self.outline:
            if level == 0 and title != "Introduction":
                page_level = 1
            elif level == page_level:
                found.append((title, page, top))
        return found


@pytest.fixture(scope="session")
def printed(tmp_path_factory, built_book) -> Printed:
    """The PDF of the suite's book, read once a session (a minute of one core: the workers of
    pytest-xdist share it); skipped where none can be printed (failed, with NTPNB_REQUIRE_BROWSER)."""
    pdf = built_book / "_build" / "html" / PDF_NAME
    reason = missing_printer()
    if reason and not pdf.exists():
        if os.environ.get("NTPNB_REQUIRE_BROWSER"):
            pytest.fail(f"NTPNB_REQUIRE_BROWSER is set but {reason}")
        pytest.skip(reason)
    return made_once_value(tmp_path_factory, "printed", lambda: Printed.read(pdf, built_book))


@pytest.mark.slow
def test_the_bookmarks_are_every_page_and_section_of_the_book_in_order(printed):
    found = [(level, title) for level, title, _, _ in printed.outline]
    expected = printed.expected()
    shown = [(level, " ".join(p for p in pieces if p.strip())) for level, pieces in expected]
    assert len(found) == len(expected), (found, shown)
    for (level, title), (want_level, pieces), want in zip(found, expected, shown, strict=True):
        assert level == want_level and same_title(title, pieces), ((level, title), want)
    # and they are in reading order
    pages = [page for _, _, page, _ in printed.outline]
    assert pages == sorted(pages)


@pytest.mark.slow
def test_each_page_of_the_book_starts_a_printed_page_with_its_title(printed):
    book = printed.pages_of_the_book()
    assert len(book) >= 12, book  # the introduction, seven chapters, the pages about the book
    for title, page, top in book:
        height = printed.pages[page].height
        assert top > 0.9 * height, (title, page + 1, top)  # its bookmark at the top of a page
        if title == "Introduction":  # its heading is the book's title, which the title page shows
            continue
        runs, images = printed.pages[page].runs, printed.pages[page].images
        own = [y for y, text, _ in runs if y > 0.8 * height and text in normal(title)]
        assert own, (title, page + 1)
        above = [text for y, text, _ in runs if y > max(own) + 1] + [y for y in images if y > max(own)]
        assert not above, (title, page + 1, above)  # the first thing printed on it


@pytest.mark.slow
def test_no_heading_is_left_alone_at_the_foot_of_a_page(printed):
    lonely, checked = [], 0
    for _, title, page, top in printed.outline:
        runs, images = printed.pages[page].runs, printed.pages[page].images
        own = [y for y, text, _ in runs if top - 80 < y <= top + 1 and text in normal(title)]
        if not own:  # a part's bookmark is its first page's; the introduction's heading is not printed
            continue
        below = [y for y, _, _ in runs if BODY_BOTTOM < y < min(own) - 1]
        below += [y for y in images if BODY_BOTTOM < y < min(own) - 1]  # a figure
        checked += 1
        if not below:
            lonely.append((title, page + 1))
    assert checked > 40 and not lonely, (checked, lonely)


NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\. ")


def _key(title: str) -> str:
    """A contents entry's key: its section number, else its title."""
    match = NUMBERED.match(normal(title))
    return match.group(1) if match else normal(title)


@pytest.mark.slow
def test_the_contents_give_each_page_and_chapter_section_the_page_it_starts_on(printed):
    intro = next(page for _, title, page, _ in printed.outline if title == "Introduction")
    assert intro > 0 and printed.texts[0].find("Contents") >= 0
    contents = {}
    lines = "\n".join(printed.pages[p].raw for p in range(intro)).splitlines()
    for line in lines:
        match = re.fullmatch(r"(.*\S)\s+(\d+)", normal(line))
        if match:
            contents[_key(match.group(1))] = int(match.group(2))
    wanted = {}
    for title, page, _ in printed.pages_of_the_book():
        wanted[_key(title)] = page + 1
    for _, title, page, _ in printed.outline:
        number = NUMBERED.match(normal(title))
        if number and number.group(1).count(".") == 1:  # "1.2. ...": a chapter's section
            wanted[_key(title)] = page + 1
    assert len(wanted) > 40, wanted
    assert {key: contents.get(key) for key in wanted} == wanted
    for key, number in wanted.items():  # the page numbered is the one the heading is printed on
        title = next(t for _, t, p, _ in printed.outline if _key(t) == key and p + 1 == number)
        start = " ".join(normal(title).split()[:2])  # "3.3. Claim": what follows may be math
        assert key == "Introduction" or start in printed.texts[number - 1], (title, number)


@pytest.mark.slow
def test_nothing_prints_that_a_reader_of_paper_cannot_use_and_no_figure_is_lost(printed):
    text = "\n".join(printed.texts)
    assert not re.search(r"(Show|Hide) code", text)
    # the API reference stays in the HTML book (every page of it, however many it has)
    api = sorted(p for prefix in LEFT_OUT for p in printed.html.glob(f"{prefix}*.html"))
    api += sorted(p for prefix in LEFT_OUT for p in printed.html.glob(f"{prefix}*/**/*.html"))
    assert api
    titles = {normal(title) for _, title, _, _ in printed.outline}
    for page in api:
        title = normal("".join(page_headings(page).headings[0][1]))
        assert title not in titles and title not in text, (page, title)
    # every figure of the chapters, the ones whose cell output is collapsed in the HTML included
    figures = []
    for chapter in sorted((printed.html / "outputs" / "notebooks").glob("*.html")):
        figures += page_headings(chapter).figures
    assert len(figures) > 20, figures
    assert [f for f in figures if f not in text] == []


@pytest.mark.slow
def test_the_book_fits_its_pages_and_its_page_count(printed, record_property):
    pages = len(printed.pages)
    record_property("pdf_pages", pages)
    assert pages <= MAX_PAGES
    # nothing was wider than the paper: Chromium shrinks the whole book to fit a page that is
    # (a rounding of a hundredth of a pixel shrinks it by 2e-5)
    scales = [scale for page in printed.pages for _, _, scale in page.runs]
    assert sum(abs(s / PIXEL - 1) < 0.001 for s in scales) > 0.99 * len(scales), set(scales)


def _bibliography() -> dict[str, tuple[str, str]]:
    """Each entry of the book's bibliography by key: its first author's surname and its year."""
    import pybtex.database

    bib = pybtex.database.parse_file(ROOT / "book" / "references.bib")
    return {
        key: (" ".join(entry.persons["author"][0].last_names), entry.fields["year"])
        for key, entry in bib.entries.items()
    }


def _cited() -> set[str]:
    """The keys the chapters and the book's pages cite."""
    cited = set()
    for source in [*sorted((ROOT / "notebooks").glob("*.md")), *sorted((ROOT / "book").glob("*.md"))]:
        for keys in re.findall(r"\{cite(?::\w+)?\}`([^`]+)`", source.read_text()):
            cited.update(k.strip() for k in keys.split(","))
    return cited


#: The fewest references the list's last printed page may hold, where the list takes two pages.
MIN_LAST_REFERENCES = 6
#: A label of another style than the text's: pybtex's alpha (``[Thr24]``, ``[CLO24]``).
ALPHA_LABEL = re.compile(r"\[[A-Z][A-Za-z]{1,4}\+?\d\d\]")


@pytest.mark.slow
def test_the_references_are_cited_and_listed_in_one_style_sorted_by_surname(printed):
    """The text cites ``[Surname, 2024]``, the list labels each entry so, prints no label of another
    style, and lists them in the order of the first author's surname, accents set aside."""
    from bs4 import BeautifulSoup

    from ntpnb.book._bibliography import folded

    text = normal("\n".join(printed.texts))
    bib, cited = _bibliography(), _cited()
    assert cited and cited <= set(bib)
    for key in cited:  # each citation in the author-year style
        surname, year = bib[key]
        assert re.search(rf"\[{re.escape(normal(surname))}(?: et al\.| and [^,\]]+)?, {year}\]", text), key
    assert not ALPHA_LABEL.search(text), ALPHA_LABEL.search(text)
    page = BeautifulSoup(
        (printed.html / "book" / "references.html").read_text(encoding="utf-8"), "html.parser"
    )
    labels = [normal(label.get_text()).strip("[]") for label in page.select("article .citation .label")]
    assert len(labels) == len(bib)
    for label in labels:  # the list's labels in the text's style, each printed
        assert re.fullmatch(r"\S+( et al\.| and [^,]+)?, \d{4}[a-z]?", label), label
        assert f"[{label}]" in text, label
    firsts = [folded(label.split()[0].rstrip(",")) for label in labels]
    assert firsts == sorted(firsts), firsts
    # the list's last printed page holds all of it, or more than its last few entries
    on_last = sum(f"[{label}]" in normal(printed.texts[-1]) for label in labels)
    assert on_last == len(labels) or on_last >= MIN_LAST_REFERENCES, on_last


@pytest.mark.slow
def test_every_block_of_checks_prints_its_table_and_nothing_asks_to_click(printed):
    """Each section's checks, each chapter's every check and the report's every check print their tables;
    the verdict rule prints in full; no printed line tells a reader of paper to click."""
    text = normal("\n".join(printed.texts))
    header = "claim what paper ours required result"
    sections = text.count("Checks of this section:")
    assert sections >= 7 and text.count(header) >= sections
    chapters = len(printed.chapter_starts())
    every = [m.end() for m in re.finditer(r"Every check of this chapter at seed \d+:", text)]
    assert len(every) == chapters
    assert all(header in text[at : at + 400] for at in every), "a chapter's every check printed no table"
    report = text[text.rindex("Every assertion of every chapter") :]
    assert report.count("claim what was measured ours required") >= chapters  # a table per chapter
    assert normal("How a check is decided.") in text
    assert not re.search(r"click", text, re.IGNORECASE)


#: How much of a page's text area may be left blank, but where a page of the book ends.
MAX_BLANK = 0.5
#: The top of a printed page's text area (points from the page's foot): below the top margin.
BODY_TOP = (297 - MARGINS_MM["top"]) / 25.4 * 72


@pytest.mark.slow
def test_no_page_is_more_than_half_blank_but_where_a_page_of_the_book_ends(printed):
    """A figure too tall for the rest of its page floats past the text after it (ntpnb.book._pdf): only a
    page of the book's last printed page (and the title page and contents) may end high up."""
    starts = sorted({page for _, page, _ in printed.pages_of_the_book()})
    blank = []
    for number, page in enumerate(printed.pages):
        if number < starts[0] or number + 1 in starts or number + 1 == len(printed.pages):
            continue
        if any(y > BODY_BOTTOM for y in page.images):
            continue  # a figure's page (an image's top is known, not its foot)
        lowest = min([y for y, _, _ in page.runs if BODY_BOTTOM < y < BODY_TOP + 2] + [BODY_TOP])
        used = (BODY_TOP - lowest) / (BODY_TOP - BODY_BOTTOM)
        if used < 1 - MAX_BLANK:
            blank.append((number + 1, round(used, 2), " ".join(printed.texts[number].split()[:8])))
    assert blank == []


@pytest.mark.slow
def test_no_blocks_title_is_left_alone_at_the_foot_of_a_page(printed):
    """The title of a block printed open (a dropdown, a block of checks) has its body under it on its page."""
    from ntpnb.book._pdf import destinations

    found = destinations((printed.html / PDF_NAME).read_bytes())
    titles = {name: at for name, at in found.items() if name.startswith("ntpnb-print-block-")}
    assert len(titles) > 20
    alone = []
    for name, (page, top) in titles.items():
        runs, images = printed.pages[page].runs, printed.pages[page].images
        below = [y for y, _, _ in runs if BODY_BOTTOM < y < top - 30] + [
            y for y in images if BODY_BOTTOM < y < top
        ]
        if not below:
            alone.append((page + 1, name))
    assert alone == []


@pytest.mark.slow
def test_each_figures_caption_starts_on_its_figures_page(printed):
    """A numbered figure's caption ("Fig. 2.1 ...") starts on the page its figure is printed on: the
    paper book printed Fig. 2.1 alone on a page, its caption at the top of the next."""
    from bs4 import BeautifulSoup

    from ntpnb.book._pdf import destinations

    found = destinations((printed.html / PDF_NAME).read_bytes())
    apart, checked = [], 0
    for chapter in sorted((printed.html / "outputs" / "notebooks").glob("*.html")):
        soup = BeautifulSoup(chapter.read_text(encoding="utf-8"), "html.parser")
        for figure in soup.select("article figure[id]"):
            number = figure.select_one(".caption-number")
            if number is None or figure["id"] not in found:
                continue  # an unnumbered figure, or one not printed (in a block the print hides)
            page, label = found[figure["id"]][0], normal(number.get_text())
            checked += 1
            if not any(text == label for _, text, _ in printed.pages[page].runs):
                apart.append((label, page + 1))
    assert checked >= 20, checked
    assert apart == []


@pytest.mark.slow
def test_the_pdf_prints_nothing_the_page_hides(printed):
    """A folded cell's printout (hide-cell, hide-output: the HTML hides it behind a click) is not printed."""
    from bs4 import BeautifulSoup

    text = normal("\n".join(printed.texts))
    hidden = []
    for chapter in sorted((printed.html / "outputs" / "notebooks").glob("*.html")):
        soup = BeautifulSoup(chapter.read_text(encoding="utf-8"), "html.parser")
        for block in soup.select("details.hide .cell_output"):
            lines = [normal(line) for line in block.get_text().splitlines() if len(normal(line)) > 25]
            hidden += [(chapter.stem, line) for line in lines[:2]]
    assert hidden, "no chapter hides a printout: the test checks nothing"
    assert [(chapter, line) for chapter, line in hidden if line in text] == []


def glossary_links(page: Path) -> set[str]:
    """The glossary entries an HTML page of the book links (``"term-KKT"``)."""
    from ntpnb.book._page_scan import parse

    found = parse(page.read_text(encoding="utf-8")).select('a[href*="glossary.html#term-"]')
    return {a["href"].rpartition("#")[2] for a in found}


@pytest.mark.slow
def test_each_chapter_in_print_links_the_glossary_terms_its_page_links(printed):
    """The print links each term's first use in every chapter, as the chapter's page does (not
    once in the whole book: the single page Sphinx prints holds every chapter)."""
    starts = sorted({page for _, page, _ in printed.pages_of_the_book()})
    unlinked = {}
    for chapter, start in printed.chapter_starts():
        end = next((page for page in starts if page > start), len(printed.pages))
        printed_links = {link for page in printed.pages[start:end] for link in page.links}
        if missing := glossary_links(chapter) - printed_links:
            unlinked[chapter.stem] = sorted(missing)
    assert any(glossary_links(chapter) for chapter, _ in printed.chapter_starts())  # it checks something
    assert unlinked == {}


@pytest.mark.slow
def test_the_pdf_prints_no_name_from_the_code(printed):
    """The printed text names nothing the code defines, but what the pages show as code (a cell's
    source, a command, the API the prose cites)."""
    from ntpnb.book._code_names import chapter_parameter_names, defined_names, found_names
    from ntpnb.book._page_scan import code_texts, parse

    names = defined_names() | chapter_parameter_names(ROOT / "notebooks")
    as_code: set[str] = set()
    for page in printed.html.rglob("*.html"):
        for content in code_texts(parse(page.read_text(encoding="utf-8"))):
            as_code |= {word for _, _, word in found_names(content, names)}
    found: dict[str, list[int]] = {}
    for number, page_text in enumerate(printed.texts):
        for _, _, word in found_names(page_text, names - as_code):
            found.setdefault(word, []).append(number + 1)
    assert found == {}


#: A printed page with fewer words than this holds a figure, or is where a page of the book starts
#: or ends (its title page, its last lines); any other is a page the print wasted. About a hundred
#: words: a page of code (a chapter's parameters) prints fewer words on its lines than prose.
MIN_WORDS = 80


@pytest.mark.slow
def test_no_page_between_a_pages_first_and_last_prints_fewer_than_a_hundred_words(printed):
    starts = sorted({page for _, page, _ in printed.pages_of_the_book()})
    short = []
    for number in range(starts[0] + 1, len(printed.pages)):
        if number in starts or number + 1 in starts or number + 1 == len(printed.pages):
            continue  # a page of the book's first or last printed page
        images = printed.pages[number].images
        words = len(printed.texts[number].split())
        if words < MIN_WORDS and not images:
            short.append((number + 1, words, " ".join(printed.texts[number].split()[:8])))
    assert short == []


@pytest.mark.slow
def test_each_chapter_prints_its_claims_badges_under_its_title(printed):
    verdicts = json.loads((printed.root / "outputs" / "verdicts.json").read_text(encoding="utf-8"))
    missing, checked = [], 0
    for chapter, page in printed.chapter_starts():
        own = [c for c in verdicts["claims"] if any(s["notebook"] == chapter.stem for s in c["sections"])]
        # the badge (its id and verdict in words), then the claim in short, on the chapter's first page
        text = " ".join(printed.texts[page : page + 2])
        missing += [(chapter.stem, c["id"]) for c in own if normal(f"{c['id']} {c['verdict']}") not in text]
        checked += len(own)
    assert checked >= 20 and missing == []


def _shown_code(chapter: Path) -> list[list[str]]:
    """The longer lines of each code cell a chapter prints (a folded cell's code is left out)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(chapter.read_text(encoding="utf-8"), "html.parser")
    blocks = []
    for cell in soup.select("div.cell_input"):
        injected = "tag_injected-parameters" in cell.parent.get("class", [])
        if not injected and cell.find_parent("details", class_="hide") is None:
            # lines a page's text can be searched for (not a lone ")")
            blocks.append([normal(line) for line in cell.get_text().splitlines() if len(normal(line)) > 10])
    return blocks


@pytest.mark.slow
def test_no_code_box_is_split_across_printed_pages(printed):
    split, boxes = [], 0
    for chapter, page in printed.chapter_starts():
        for lines in _shown_code(chapter):
            first = next(n for n in range(page, len(printed.pages)) if lines[0] in printed.texts[n])
            last = next(n for n in range(first, len(printed.pages)) if lines[-1] in printed.texts[n])
            boxes += 1
            if first != last:
                split.append((chapter.stem, lines[0], first + 1, last + 1))
            page = last
    assert boxes >= 5 and split == []
