"""Every page of the built book, opened in headless Chromium as a reader with no network would.

Uses the book the suite already built (``built_book``), opened from ``file://`` URLs; every page
is visited once (:func:`visited`), at 1366 px, then resized to a phone's and a wide screen's
width, and the tests check what was collected. Needs Debian's ``chromium`` (``.ci/run`` installs
it) and the ``playwright`` package; where either is missing the tests are skipped and say why
(``NTPNB_REQUIRE_BROWSER=1``, set by ``.ci/run``, turns that skip into a failure). With
``NTPNB_SCREENSHOTS=DIR`` set, a full-page screenshot of every page is saved in ``DIR`` for a
person to look at (GitHub Actions keeps them as an artifact); without it none is taken, since
they are not checked and take most of the test's time.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from ntpnb.book._pdf import (
    CHROMIUM_ARGS,
    PDF_NAME,
    PRINT_WIDTH,
    SCREENSHOT_NAME,
    SCREENSHOT_SIZE,
    chromium,
    missing_printer,
)
from ntpnb.book._trees import describe_run
from ntpnb.evidence._registry import CLAIMS
from ntpnb.records._commit import source_commit
from ntpnb.records._tree import chapter_seeds, load_tree_record

from conftest import ROOT, made_once_value
from helpers import config_binder_url

pytestmark = pytest.mark.slow

#: Where the full-page screenshots go (relative to the project), or None: not taken.
SCREENSHOTS = ROOT / os.environ["NTPNB_SCREENSHOTS"] if os.environ.get("NTPNB_SCREENSHOTS") else None
SKIPPED_PAGES = {"index.html"}  # a redirect to book/intro.html (tested on its own)
#: The width every page is opened at (a laptop's), where the chapters' heights are measured.
WIDTH = 1366
#: The other widths each page is laid out at: a phone's and a wide screen's.
OTHER_WIDTHS = (390, 1920)
#: The width at which each page is laid out again with every block opened (its words and numbers
#: measured where a closed block hid them): a phone's, the narrowest.
OPENED_WIDTH = 390
#: Open every closed block of the page; the indices (among its ``<details>``) of those it opened.
OPEN_ALL = """() => [...document.querySelectorAll('details')].flatMap((d, i) => {
    if (d.open) return [];
    d.open = true;
    return [i];
})"""
#: The widths at which every table must fit its column without scrolling (on a phone it may
#: scroll inside its own box; paper cannot).
FITTING_WIDTHS = (1366, 1920, "print")

#: The report reads in five minutes: at most this tall (px, every block closed) at each width.
MAX_REPORT_HEIGHT = {1366: 12_000, 390: 25_000}
#: The first screen of a laptop and of a phone, by width: the introduction's scoreboard starts in it.
FIRST_SCREEN = {1366: 768, 390: 844}
#: Where both papers' verdicts at a glance must end on the introduction at WIDTH (1366 px).
GLANCE_SCREEN = 900
#: A chapter reads as a lecture: its page at most MAX_CHAPTER_HEIGHT px tall at WIDTH with every
#: block closed, and no stray output (a cell whose last expression left a bare True or False).
MAX_CHAPTER_HEIGHT = 15_000
#: ... and its first figure starts within its first three screens at WIDTH (768 px each).
FIRST_FIGURE_WITHIN = 3 * 768
MAX_STRAY_OUTPUTS = 0
#: An API page (book/api.html, book/api/**) at most this tall at WIDTH: one topic, not the package.
MAX_API_HEIGHT = 15_000
# what a {prf:ref} to a directive with `:nonumber:` shows when it is given no explicit text
EMPTY_REFERENCES = {"", "Assumption", "Definition", "Lemma", "Theorem", "Proposition", "Corollary"}
RAW_MARKUP = re.compile(r"\{(cite|prf:\w+|doc|ref|numref|eq|glue:?\w*)\}`|^```|^:::|^\{[a-z-]+\}", re.M)


@pytest.fixture(scope="module")
def browser():
    reason = missing_printer()
    if reason:
        if os.environ.get("NTPNB_REQUIRE_BROWSER"):
            pytest.fail(f"NTPNB_REQUIRE_BROWSER is set but {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium()), args=list(CHROMIUM_ARGS))
        yield browser
        browser.close()


def book_pages(html: Path) -> list[Path]:
    """Every HTML page of the book (not the theme's assets or the sources)."""
    pages = []
    for path in sorted(html.rglob("*.html")):
        rel = path.relative_to(html)
        if rel.parts[0] in {"_static", "_sources", "_images", "reports"} or str(rel) in SKIPPED_PAGES:
            continue
        pages.append(path)
    return pages


def save_screenshot(page, name: str, full_page: bool = False) -> None:
    """Save a screenshot of ``page`` as ``name.png`` in :data:`SCREENSHOTS`, if that is set."""
    if SCREENSHOTS is not None:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=full_page)


def visit(page, path: Path, name: str) -> dict:
    """Open ``path`` in the tab ``page``, wait for MathJax, and collect what the checks need.

    The visits share one tab, as a reader follows links: a tab of its own per page took 1.7 times
    the CPU on the quick book (a renderer process, and the theme's and MathJax's scripts compiled,
    anew for each page). Each visit starts on the screen at :data:`WIDTH` and ends on a blank page,
    so that what the page loads (and what its leaving aborts) is heard only while it is visited.
    """
    errors: list[str] = []
    listeners = {
        "console": lambda m: errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None,
        "pageerror": lambda e: errors.append(f"page error: {e}"),
        "requestfailed": lambda r: errors.append(f"request failed: {r.url} ({r.failure})"),
    }
    page.emulate_media(media="null")
    page.set_viewport_size({"width": WIDTH, "height": 900})
    for event, listener in listeners.items():
        page.on(event, listener)
    try:
        return _visit_page(page, path, name, errors)
    finally:
        page.goto("about:blank")
        for event, listener in listeners.items():
            page.remove_listener(event, listener)


def _visit_page(page, path: Path, name: str, errors: list[str]) -> dict:
    """:func:`visit`'s work in ``page``, whose listeners collect ``errors``."""
    page.goto(path.as_uri(), wait_until="load")
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:  # MathJax (if the page loads it) must start and finish typesetting
        page.wait_for_function(
            "() => !window.MathJax || (MathJax.startup && MathJax.startup.promise)", timeout=15_000
        )
        page.evaluate("() => window.MathJax ? MathJax.startup.promise : null")
    except PlaywrightTimeout:
        errors.append("MathJax did not start (its script is missing or could not be loaded)")
    try:  # images still decoding are not failures yet
        page.wait_for_function("() => [...document.images].every(i => i.complete)", timeout=15_000)
    except PlaywrightTimeout:
        pass  # the image check below names the ones that did not load
    found = page.evaluate(
        """() => ({
            text: (() => {  // the prose: code blocks may show markup on purpose
                const main = (document.querySelector('main') || document.body).cloneNode(true);
                main.querySelectorAll('pre, code, .highlight').forEach(e => e.remove());
                document.body.appendChild(main);  // innerText needs a rendered node
                const text = main.innerText;
                main.remove();
                return text;
            })(),
            mathSource: document.querySelectorAll('.math, span.math, div.math').length,
            typeset: document.querySelectorAll('mjx-container').length,
            mathErrors: [...document.querySelectorAll('mjx-merror')].map(e => e.textContent),
            images: [...document.images].map(i => ({src: i.src, ok: i.complete && i.naturalWidth > 0})),
            errorOutputs: document.querySelectorAll(
                '.output.error, .output.traceback, .cell_output .traceback').length,
            links: [...document.querySelectorAll('a[href]')].map(a => ({
                href: a.href, label: a.className + ' ' + a.textContent.trim(),
                text: a.textContent.trim(),
                internal: a.classList.contains('internal') && !a.querySelector('img, svg'),
            })),
            icons: [...document.querySelectorAll('link[rel~="icon"]')].map(l => l.href),
            printButtons: [...document.querySelectorAll('button')].filter(
                b => b.textContent.trim().startsWith('.pdf')).length,
            footer: [...document.querySelectorAll('p.ntpnb-provenance')].map(p => p.innerText.trim()),
            height: document.documentElement.scrollHeight,
            // cell results left bare on the page (a claim check as a cell's last expression)
            // a chapter's parameters cells on the page, its own and papermill's injected copy
            parameterCells: document.querySelectorAll(
                '.cell.tag_parameters, .cell.tag_injected-parameters').length,
            stray: [...document.querySelectorAll('.cell_output .output.text_plain')].filter(
                o => ['True', 'False'].includes(o.innerText.trim()) && o.checkVisibility()).length,
        })"""
    )
    # what went wrong loading the page as a reader opens it; a resize below may switch a picture's
    # source and abort the one still loading (net::ERR_ABORTED), which no reader sees
    found["errors"] = list(errors)
    save_screenshot(page, name.removesuffix(".html").replace("/", "__"), full_page=True)
    found["ids"] = set(page.evaluate("() => [...document.querySelectorAll('[id]')].map(e => e.id)"))
    found["tables"] = {WIDTH: page.evaluate(TABLES)}
    found["layout"] = {WIDTH: page.evaluate(LAYOUT)}
    for width in OTHER_WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        found["tables"][width] = page.evaluate(TABLES)
        found["layout"][width] = page.evaluate(LAYOUT)
    # on a phone with every block opened, as a reader opens a chapter's checks (then closed again)
    page.set_viewport_size({"width": OPENED_WIDTH, "height": 900})
    closed = page.evaluate(OPEN_ALL)
    found["opened"] = page.evaluate(LAYOUT)
    page.evaluate(
        "(closed) => closed.forEach(i => { document.querySelectorAll('details')[i].open = false; })", closed
    )
    # and as the PDF lays it out (ntpnb.book._pdf): the print stylesheet, a printed page's width
    page.emulate_media(media="print")
    page.set_viewport_size({"width": PRINT_WIDTH, "height": 900})
    found["tables"]["print"] = page.evaluate(TABLES)
    found["layout"]["print"] = page.evaluate(LAYOUT)
    return found


#: How each visible table of the page sits in its column: its own box (the nearest box that
#: scrolls sideways, else the table), whether that box leaves the column, whether the table is
#: wider than a box that does not scroll (clipped), or needs to scroll; and whether the whole
#: page is wider than the screen.
TABLES = """() => {
    const column = document.querySelector('article.bd-article') || document.querySelector('main');
    const edge = column.getBoundingClientRect();
    const scrolls = e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
    const tables = [...column.querySelectorAll('table')].filter(t => t.checkVisibility()).map(t => {
        let box = t;
        while (box !== column && !scrolls(box)) box = box.parentElement;
        if (box === column) box = null;
        const outer = (box || t).getBoundingClientRect();
        const head = t.querySelector('th, td');
        return {
            what: (t.className + ' ' + (head ? head.innerText : '')).trim().slice(0, 40),
            width: Math.round(t.scrollWidth),
            column: Math.round(edge.width),
            outside: outer.left < edge.left - 1 || outer.right > edge.right + 1,
            clipped: !box && t.scrollWidth > t.clientWidth + 1,
            scrolls: !!box && box.scrollWidth > box.clientWidth + 1,
        };
    });
    return {tables, pageWidth: document.documentElement.scrollWidth, screen: window.innerWidth};
}"""


#: At the width the page is laid out at: its height (every block closed), the words broken inside
#: a table's cells or a report card's field names (a word whose characters are laid out on two
#: lines), the lines of prose that start with the punctuation closing the line before, the
#: numbers, ranges and quantities of the prose laid out on two lines, where its
#: first visible figure starts, and where the scoreboard's first claim (its badge
#: and its short statement) ends, if the page has a scoreboard.
LAYOUT = """() => {
    const main = document.querySelector('main') || document.body;
    const broken = [];
    // a table's cells and a card's field names
    for (const cell of main.querySelectorAll('td, th, dt')) {
        if (!cell.checkVisibility()) continue;
        const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            for (const m of node.textContent.matchAll(/\\S+/g)) {
                const range = document.createRange();
                range.setStart(node, m.index);
                range.setEnd(node, m.index + m[0].length);
                const rects = [...range.getClientRects()].filter(r => r.width > 0);
                if (new Set(rects.map(r => Math.round(r.top))).size > 1) broken.push(m[0]);
            }
        }
    }
    // a line of prose that starts with the punctuation closing what ends the line before it
    // (math, a link, code): the text from the line's start to its next space
    const punctuationStarts = [];
    const prose = document.createTreeWalker(main, NodeFilter.SHOW_TEXT, {acceptNode: t =>
        t.parentElement.closest('pre, code, script, style, mjx-container, .highlight')
            ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
    for (let node = prose.nextNode(); node; node = prose.nextNode()) {
        const closing = node.textContent.match(/^[)\\]},.;:!?]+/);
        const before = node.previousSibling;
        if (!closing || !before || !node.parentElement.checkVisibility()) continue;
        const range = document.createRange();
        range.setStart(node, 0);
        range.setEnd(node, 1);
        const first = [...range.getClientRects()].find(r => r.width > 0);
        const rects = before.nodeType === Node.ELEMENT_NODE ? [...before.getClientRects()] : (() => {
            const r = document.createRange();
            r.selectNodeContents(before);
            return [...r.getClientRects()];
        })();
        const last = rects.filter(r => r.width > 0).pop();
        if (first && last && first.top >= last.top + last.height / 2) {
            punctuationStarts.push(node.textContent.split(/\\s/)[0]);
        }
    }
    // a number, range or quantity of the prose laid out on two lines ("1e-" / "08", "seeds 0-" / "4)")
    const brokenNumbers = [];
    const number = String.raw`\\d[\\d,]*(?:\\.\\d+)?(?:[eE][-+\u2212]?\\d+)?`;
    const unit = String.raw`(?:%|s|ms|min|GiB|MiB|GB|MB|kB|px|pt|nats?|bits?)(?![\\w])`;
    const dashRange = String.raw`(?:\\s?[-\u2013]\\s?${number})?`;
    const whole = new RegExp(String.raw`${number}${dashRange}(?:[\\s\u00a0]?${unit})?`, 'g');
    const numbers = document.createTreeWalker(main, NodeFilter.SHOW_TEXT, {acceptNode: t =>
        t.parentElement.closest('pre, code, script, style, mjx-container, .highlight')
            ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
    for (let node = numbers.nextNode(); node; node = numbers.nextNode()) {
        if (!node.parentElement.checkVisibility()) continue;
        for (const m of node.textContent.matchAll(whole)) {
            if (!/[-\u2013\\s\u00a0]/.test(m[0]) || /\\w/.test(node.textContent[m.index - 1] ?? '')) continue;
            const range = document.createRange();
            range.setStart(node, m.index);
            range.setEnd(node, m.index + m[0].length);
            const rects = [...range.getClientRects()].filter(r => r.width > 0);
            if (new Set(rects.map(r => Math.round(r.top))).size > 1) brokenNumbers.push(m[0]);
        }
    }
    const figure = [...main.querySelectorAll('figure, img')].find(e => e.checkVisibility());
    const glance = document.querySelector('.ntpnb-glance-papers');
    const chips = glance ? [...glance.querySelectorAll('.ntpnb-chip')] : [];
    return {
        height: document.documentElement.scrollHeight,
        broken,
        punctuationStarts,
        brokenNumbers,
        firstFigure: figure ? figure.getBoundingClientRect().top + window.scrollY : null,
        scoreboard: chips.length ? chips[0].getBoundingClientRect().bottom + window.scrollY : null,
        glance: glance ? glance.getBoundingClientRect().bottom + window.scrollY : null,
    };
}"""


@pytest.fixture(scope="module")
def visited(browser, built_book, tmp_path_factory) -> dict[str, dict]:
    """Every page of the book (by its path in the HTML book) and what :func:`visit` found there.

    Visited once per test session (minutes): under pytest-xdist the first worker to ask visits
    and stores what it found (a pickle in the shared folder), the others read it.
    """
    html = built_book / "_build" / "html"

    def visit_all() -> dict[str, dict]:
        pages = book_pages(html)
        assert len(pages) >= 6, [p.name for p in pages]
        tab = browser.new_page()  # each visit sets its window
        try:
            return {str(p.relative_to(html)): visit(tab, p, str(p.relative_to(html))) for p in pages}
        finally:
            tab.close()

    return made_once_value(tmp_path_factory, "visited", visit_all)


def _local_file(url: str) -> Path | None:
    parts = urlsplit(url)
    return Path(unquote(parts.path)) if parts.scheme == "file" else None


def test_every_page_reads_correctly_in_a_browser(browser, built_book, visited):
    html = built_book / "_build" / "html"
    problems: dict[str, list[str]] = {}
    seen = visited
    for name, found in visited.items():
        issues = list(found["errors"])
        if found["mathSource"] and not found["typeset"]:
            issues.append(f"{found['mathSource']} math elements but none typeset by MathJax")
        for marker in ("\\(", "\\[", "$$"):
            if marker in found["text"]:
                issues.append(f"raw TeX left in the page text: {marker!r}")
        issues += [f"TeX error: {e}" for e in found["mathErrors"]]
        issues += [f"image not loaded: {i['src']}" for i in found["images"] if not i["ok"]]
        if found["errorOutputs"] or "Traceback (most recent call last)" in found["text"]:
            issues.append("a cell shows an error or a traceback")
        issues += [f"unrendered markup: {m.group(0)!r}" for m in RAW_MARKUP.finditer(found["text"])]
        for link in found["links"]:
            if link["internal"] and link["text"] in EMPTY_REFERENCES:
                issues.append(f"cross-reference without its text: {link['text']!r} -> {link['href']}")
            target = _local_file(link["href"])
            if target is not None and not target.exists():
                issues.append(f"broken link to {target.relative_to(html)} ({link['label'][:40]})")
        # a favicon that the book serves (without one, the browser asks for /favicon.ico)
        icons = [_local_file(icon) for icon in found["icons"]]
        if not icons or not all(icon is not None and icon.is_file() for icon in icons):
            issues.append(f"no favicon the book serves: {found['icons']}")
        if issues:
            problems[name] = issues
    assert not problems, "\n".join(f"{page}: {issue}" for page, found in problems.items() for issue in found)

    # the book's front door (index.html) leads to the introduction, offline too
    page = browser.new_page()
    page.goto((html / "index.html").as_uri())
    page.wait_for_url("**/book/intro.html")
    page.close()

    # chapter pages: a Binder button on the chapter's Jupytext source; both downloads
    chapters = [n for n in seen if n.startswith("outputs/notebooks/")]
    assert chapters
    for name in chapters:
        stem = Path(name).stem
        hrefs = {link["href"] for link in seen[name]["links"]}
        assert config_binder_url(ROOT, f"notebooks/{stem}.md") in hrefs, name
        downloads = {Path(unquote(urlsplit(h).path)).name for h in hrefs if "/_sources/" in h}
        assert {f"{stem}.ipynb", f"{stem}.md"} <= downloads, (name, downloads)

    # the report lists every claim id of both papers
    report = seen["outputs/report.html"]["text"]
    missing = [cid for cid in CLAIMS if not re.search(rf"\b{cid}\b", report)]
    assert not missing, f"the report drops claims {missing}"
    if SCREENSHOTS is not None:
        assert len(list(SCREENSHOTS.glob("*.png"))) >= len(visited)


def test_no_table_overflows_its_column_on_a_phone_a_laptop_or_a_wide_screen(visited):
    """At every width a table stays inside its column (clipped nowhere); at 1366 and 1920 px it fits
    without scrolling; on a phone it may scroll inside its own box, and the page never scrolls sideways."""
    problems = []
    for name, found in visited.items():
        for width, laid in found["tables"].items():
            if laid["pageWidth"] > laid["screen"]:
                problems.append(f"{name} at {width} px: the page is {laid['pageWidth']} px wide")
            for table in laid["tables"]:
                size = f"{table['width']} px in a column of {table['column']}"
                where = f"{name} at {width} px: table {table['what']!r} ({size})"
                if table["outside"] or table["clipped"]:
                    problems.append(
                        f"{where} leaves its column" if table["outside"] else f"{where} is clipped"
                    )
                elif table["scrolls"] and width in FITTING_WIDTHS:
                    problems.append(f"{where} does not fit: it scrolls")
    assert not problems, "\n".join(problems)


def test_every_page_is_footed_with_when_from_which_commit_and_in_which_run_it_was_executed(
    built_book, visited
):
    record = load_tree_record(built_book / "outputs")
    seeds = chapter_seeds(built_book / "outputs", record)  # each chapter's, as the tree's files show
    label = describe_run(record, seeds=seeds)
    commit = r"(commit [0-9a-f]{7}( with uncommitted changes)?|commit not recorded)"
    when = r"\d{4}-\d\d-\d\d \d\d:\d\d( to (\d{4}-\d\d-\d\d )?\d\d:\d\d)? UTC"
    chapter = re.compile(rf"Executed {when} · {commit} · run: (?P<label>.+)")
    other = re.compile(
        rf"Chapters executed {when} · {commit}(, {commit})* · run: {re.escape(label)} · book built {when}"
    )
    recorded = bool(source_commit(ROOT).sha)  # the quick run ran from this checkout
    for name, found in visited.items():
        assert len(found["footer"]) == 1, (name, found["footer"])
        footer = found["footer"][0]
        pattern = chapter if name.startswith("outputs/notebooks/") else other
        matched = pattern.fullmatch(footer)
        assert matched, (name, footer)
        if pattern is chapter and Path(name).stem in seeds:  # a chapter's page: the seeds it ran at
            assert matched["label"] == describe_run(record, seeds={Path(name).stem: seeds[Path(name).stem]})
        assert not recorded or "commit not recorded" not in footer, (name, footer)


def test_the_introduction_links_the_book_as_one_pdf_the_pdf_buttons_download_it_and_a_screenshot_is_made(
    built_book, visited
):
    pdf = built_book / "_build" / "html" / PDF_NAME
    intro = {link["text"]: link["href"] for link in visited["book/intro.html"]["links"]}
    assert _local_file(intro["Download the whole book as one PDF"]) == pdf
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF") and data.rstrip().endswith(b"%%EOF")
    pages = len(re.findall(rb"/Type\s*/Page\b", data))
    assert pages > 10 * len(list((built_book / "notebooks").glob("*.md"))), pages  # every chapter in it
    # the screenshot of a chapter that the README shows, taken by the same build
    png = (built_book / "_build" / "html" / SCREENSHOT_NAME).read_bytes()
    size = {"width": int.from_bytes(png[16:20], "big"), "height": int.from_bytes(png[20:24], "big")}
    assert png.startswith(b"\x89PNG") and size == SCREENSHOT_SIZE, size
    for name, found in visited.items():
        buttons = [_local_file(link["href"]) for link in found["links"] if link["text"].startswith(".pdf")]
        assert set(buttons) <= {pdf} and not found["printButtons"], (name, "a .pdf button printing the page")
        assert buttons or not name.startswith("outputs/notebooks/"), (name, "no .pdf button")


def test_chapter_pages_read_as_lectures_short_and_without_stray_outputs(visited, record_property):
    """Measures every chapter page's height at 1366 px (blocks closed) and its visible stray outputs.

    Printed and recorded on every run, and asserted against MAX_CHAPTER_HEIGHT and MAX_STRAY_OUTPUTS.
    """
    chapters = {name: found for name, found in visited.items() if name.startswith("outputs/notebooks/")}
    assert chapters
    lines = [
        f"{Path(name).stem}: {found['height']} px, {found['stray']} stray" for name, found in chapters.items()
    ]
    summary = "; ".join(lines)
    record_property("chapter_pages", summary)
    print(f"\nchapter pages at {WIDTH} px (height, visible stray outputs): {summary}")
    missed = [
        line
        for line, found in zip(lines, chapters.values(), strict=True)
        if found["height"] > MAX_CHAPTER_HEIGHT or found["stray"] > MAX_STRAY_OUTPUTS
    ]
    assert not missed, f"over {MAX_CHAPTER_HEIGHT} px or with stray outputs: {missed}"


def test_each_chapters_first_figure_is_within_its_first_three_screens(visited, record_property):
    """A lecture shows its experiment early: the first figure's top at most FIRST_FIGURE_WITHIN px."""
    chapters = {
        Path(name).stem: found["layout"][WIDTH]["firstFigure"]
        for name, found in visited.items()
        if name.startswith("outputs/notebooks/")
    }
    assert chapters
    record_property("first_figures", chapters)
    print(f"\neach chapter's first figure (px from the top at {WIDTH} px): {chapters}")
    late = {name: y for name, y in chapters.items() if y is None or y > FIRST_FIGURE_WITHIN}
    assert not late, f"no figure within the first {FIRST_FIGURE_WITHIN} px: {late}"


def test_the_report_is_short_enough_to_read_with_its_blocks_closed(visited, record_property):
    """The report's height at a laptop's and a phone's width, printed, recorded and bounded."""
    heights = {w: visited["outputs/report.html"]["layout"][w]["height"] for w in (WIDTH, *OTHER_WIDTHS)}
    record_property("report_heights", heights)
    print(f"\nthe report's height (px) by width: {heights}")
    over = {w: h for w, h in heights.items() if h > MAX_REPORT_HEIGHT.get(w, h)}
    assert not over, f"the report is taller than {MAX_REPORT_HEIGHT} px: {over}"


def found_at_each_width(visited: dict[str, dict], key: str) -> dict[tuple[str, object], list[str]]:
    """(page, width) -> what :data:`LAYOUT` found under ``key`` there, where it found any."""
    return {
        (name, width): laid[key]
        for name, found in visited.items()
        for width, laid in found["layout"].items()
        if laid[key]
    }


def listed(found: dict[tuple[str, object], list[str]]) -> str:
    """One line a page and width: the first ten of what was found there."""
    return "\n".join(f"{name} at {width} px: {texts[:10]}" for (name, width), texts in found.items())


def test_no_word_is_broken_in_a_table_or_a_field_name_on_any_page_at_any_width(visited):
    """A cell's or a field name's words are compared with their rendered lines: none is on two lines,
    on a phone with every block opened too (a chapter's checks: "G-" / "test", "non-" / "empty")."""
    broken = found_at_each_width(visited, "broken") | found_opened(visited, "broken")
    assert not broken, listed(broken)
    assert any(found["layout"][WIDTH]["broken"] == [] for found in visited.values())  # it was measured


def found_opened(visited: dict[str, dict], key: str) -> dict[tuple[str, object], list[str]]:
    """(page, "390 opened") -> what :data:`LAYOUT` found under ``key`` with the page's blocks opened."""
    return {
        (name, f"{OPENED_WIDTH} opened"): f["opened"][key] for name, f in visited.items() if f["opened"][key]
    }


def test_no_line_starts_with_the_punctuation_that_closes_the_line_before_on_any_page_at_any_width(visited):
    """No line of prose starts with ``),`` or ``;`` cut from the math, link or code it closes (on a
    phone with the blocks opened too)."""
    starts = found_at_each_width(visited, "punctuationStarts") | found_opened(visited, "punctuationStarts")
    assert not starts, listed(starts)


def test_no_number_range_or_unit_breaks_across_lines_on_any_page_at_any_width(visited):
    """No line of prose ends inside a number (``1e-`` / ``08``), a range (``seeds 0-`` / ``4)``,
    ``10-`` / ``90%``) or before a number's unit (ntpnb.book._words keeps them whole); on a phone
    with every block opened too (a qualification's "0.292" / "nats" in a chapter's checks)."""
    broken = found_at_each_width(visited, "brokenNumbers") | found_opened(visited, "brokenNumbers")
    assert not broken, listed(broken)


def test_the_introductions_first_screen_shows_both_papers_verdicts_and_every_claim_below(visited):
    """At 1366 px both papers' verdicts at a glance end within the first GLANCE_SCREEN px; on a
    phone the first claim's verdict is on the first screen; every short statement is on the page."""
    intro = visited["book/intro.html"]
    for width, screen in FIRST_SCREEN.items():
        bottom = intro["layout"][width]["scoreboard"]
        assert bottom is not None and bottom <= screen, (
            width,
            bottom,
            "the verdicts are below the first screen",
        )
    glance = intro["layout"][WIDTH]["glance"]
    assert glance is not None and glance <= GLANCE_SCREEN, (
        glance,
        "both papers' verdicts do not fit the first screen",
    )
    missing = [cid for cid, spec in CLAIMS.items() if spec.short not in intro["text"]]
    assert not missing, f"the introduction does not show the short statements of {missing}"


def _card_links(found: dict) -> dict[str, tuple[Path | None, str]]:
    """Claim id -> (page, anchor) of each link of a page to a claim's card (``...#claim-a1``)."""
    cards = {}
    for link in found["links"]:
        parts = urlsplit(link["href"])
        if re.fullmatch(r"claim-[ab]\d+", parts.fragment):
            cards.setdefault(
                parts.fragment.removeprefix("claim-").upper(), (_local_file(link["href"]), parts.fragment)
            )
    return cards


def test_each_claims_card_is_reachable_from_the_summary_the_scoreboard_and_the_chapters(built_book, visited):
    """Follow the links to every claim's card: from the report's summary, the introduction's
    scoreboard, and the chapters that check the claim; each leads to the card's anchor."""
    html = built_book / "_build" / "html"
    report = html / "outputs" / "report.html"
    data = json.loads((built_book / "outputs" / "verdicts.json").read_text())
    checked_in = {c["id"]: {s["notebook"] for s in c["sections"]} for c in data["claims"]}
    sources = {"summary": "outputs/report.html", "scoreboard": "book/intro.html"}
    for where, name in sources.items():
        cards = _card_links(visited[name])
        assert set(cards) == set(CLAIMS), (where, sorted(set(CLAIMS) - set(cards)))
        for cid, (page, anchor) in cards.items():
            assert page == report and anchor in visited["outputs/report.html"]["ids"], (
                where,
                cid,
                page,
                anchor,
            )
    for cid, notebooks in checked_in.items():
        for notebook in notebooks:
            found = visited[f"outputs/notebooks/{notebook}.html"]
            page, anchor = _card_links(found).get(cid, (None, ""))
            assert page == report and anchor in visited["outputs/report.html"]["ids"], (notebook, cid)
            assert CLAIMS[cid].short in found["text"], (notebook, cid, "its short statement")


def test_api_pages_are_one_topic_each_and_short(visited, record_property):
    """Measures every API page's height at 1366 px (printed, recorded) against MAX_API_HEIGHT."""
    pages = visited.items()
    api = {name: found["height"] for name, found in pages if name.startswith(("book/api.", "book/api/"))}
    assert len(api) > 1, sorted(api)
    summary = "; ".join(f"{name.removeprefix('book/')}: {height} px" for name, height in api.items())
    record_property("api_pages", summary)
    print(f"\nAPI pages at {WIDTH} px: {summary}")
    tall = {name: height for name, height in api.items() if height > MAX_API_HEIGHT}
    assert not tall, f"API pages over {MAX_API_HEIGHT} px: {tall}"


def test_each_chapter_page_shows_one_parameters_cell_not_the_injected_copy_beside_it(visited):
    chapters = {name: found for name, found in visited.items() if name.startswith("outputs/notebooks/")}
    assert len(chapters) >= 7
    assert {
        name: found["parameterCells"] for name, found in chapters.items() if found["parameterCells"] != 1
    } == {}


def test_each_pages_first_use_of_a_term_links_the_glossary(browser, built_book):
    """The report's first screen links its terms to the book's glossary, and each page the first
    use of every term (a chapter naming KKT, say) once."""
    html = built_book / "_build" / "html"
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    page.goto((html / "outputs" / "report.html").as_uri(), wait_until="load")
    page.click('a[href$="glossary.html#term-pooled"] >> nth=0')
    page.wait_for_url("**/outputs/glossary.html#term-pooled", timeout=5_000)
    assert page.evaluate("() => document.getElementById('term-pooled') !== null")
    links = """() => [...document.querySelectorAll('article a[href*="glossary.html#term-"]')]
        .map(a => a.getAttribute('href').split('#')[1])"""
    for chapter in sorted((html / "outputs" / "notebooks").glob("*.html")):
        page.goto(chapter.as_uri(), wait_until="load")
        terms = page.evaluate(links)
        assert terms and len(terms) == len(set(terms)), (chapter.name, terms)  # each term once a page
    page.close()
