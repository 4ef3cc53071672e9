"""Every built page scanned for what a reader must not see, and every figure read on a phone.

The scan's rules (:mod:`ntpnb.book._page_scan`) are tested on small pages first; then every page
of the book the suite built (``built_book``) is scanned, one case per chapter: a chapter whose
page still fails is marked ``xfail(strict=True)`` with what it fails, so that its fix turns its
case into a failure until the mark goes. Then the chapters are opened in Chromium at a phone's
width (390 x 844) and a laptop's (1366 x 768), every block opened, and each figure's smallest
text is computed from the record its image carries (:mod:`ntpnb.book._pictures`) and the width
it is shown at.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ntpnb.book._page_scan import (
    Finding,
    caption_parameters,
    figure_number_gaps,
    hidden_figures,
    over_precise_numbers,
    parse,
    raw_tex,
    scan_page,
    visible_figure_numbers,
)
from ntpnb.chapter._parameters import read_parameters_cell
from ntpnb.chapter._plotting import LEGIBLE_PIXELS, text_pixels

from .test_browser import book_pages, browser  # noqa: F401 (the browser fixture, shared)
from conftest import ROOT


def _figure(number: str, caption: str = "The gap falls.", closed: bool | None = None) -> str:
    figure = (
        f'<figure id="fig-{number}"><img alt="a" src="a.png"/><figcaption><p>'
        f'<span class="caption-number">Fig. {number} </span><span class="caption-text">{caption}</span>'
        "</p></figcaption></figure>"
    )
    if closed is None:
        return figure
    state = "" if closed else " open"
    summary = '<summary><p class="collapsed">Show code cell output</p><p class="expanded">Hide</p></summary>'
    return f"<details class='hide above-output'{state}>{summary}{figure}</details>"


CLEAN = f"""<html><head><title>1. A chapter</title></head><body><main>
<p>The loss is <span class="math notranslate nohighlight">\\(\\inf \\operatorname{{CE}}\\)</span>,
run with <span class="pasted-text">200</span> decoders; the code says <code>x = $HOME</code>.</p>
<div class="highlight"><pre>W = r"\\mathcal{{H}}"</pre></div>
<div class="math notranslate nohighlight">\\[\\tfrac12 \\operatorname{{KL}}\\]</div>
<script>var price = "$5";</script>
{_figure("1.1", "At <span class='pasted-text'>200</span> random decoders (<code>W_k</code>).")}
{_figure("1.2", closed=False)}
</main></body></html>"""

FAULTY = f"""<html><body><main>
<p>so $\\inf \\operatorname{{CE}} - \\mathcal{{H}} =</p>
<ul><li><p>\\tfrac12\\operatorname{{KL}}(p)$, the divergence.</p></li></ul>
{_figure("1.1", "At <code class='docutils literal'><span class='pre'>n_random_W</span></code> decoders.")}
{_figure("1.2", closed=True)}
{_figure("1.3")}
</main></body></html>"""


def test_a_clean_page_has_no_finding():
    assert scan_page(CLEAN, parameter_names={"n_random_W", "seed"}) == []
    assert visible_figure_numbers(parse(CLEAN)) == ["1.1", "1.2"]


def test_raw_tex_outside_math_and_code_is_found_once_a_passage():
    found = raw_tex(parse(FAULTY))
    assert [f.rule for f in found] == ["raw TeX", "raw TeX"]
    assert found[0].what == "$ \\inf \\operatorname \\mathcal"
    assert found[0].where.startswith("so $\\inf \\operatorname{CE}")
    assert found[1].what == "\\tfrac \\operatorname $"


def test_a_parameter_name_in_a_caption_is_found_and_other_code_is_not():
    page = parse(FAULTY)
    assert caption_parameters(page, {"n_random_W"}) == [
        Finding("parameter name in a caption", "Fig. 1.1", "`n_random_W`")
    ]
    assert caption_parameters(page, {"n_g"}) == []  # code that names no parameter


def test_a_figure_in_a_closed_block_is_found_and_leaves_a_gap_in_the_numbers():
    page = parse(FAULTY)
    closed = Finding("figure in a closed block", "Fig. 1.2", "'Show code cell output'")
    assert hidden_figures(page) == [closed]
    assert visible_figure_numbers(page) == ["1.1", "1.3"]
    assert figure_number_gaps(page) == [Finding("figure numbers", "Fig. 1.1 -> Fig. 1.3", "expected 1.2")]


def test_figure_numbers_start_at_one_and_never_repeat():
    first_hidden = f"<body>{_figure('2.1', closed=True)}{_figure('2.2')}{_figure('2.2')}</body>"
    assert [str(f) for f in figure_number_gaps(parse(first_hidden))] == [
        "figure numbers: Fig. 2.2: the first figure seen",
        "figure numbers: Fig. 2.2 -> Fig. 2.2: expected 2.3",
    ]


NUMBERS = """<html><body><main>
<p>ours 0.0333333 against 14.7 (numpy 1.26.4, arXiv:2402.18551, 100000 steps, 0.0500);
<span class="math notranslate nohighlight">\\(\\|W\\| = 24.5555\\)</span>;
measured &lt; 1e+00, = 0 ± 0, 0.00e+00</p>
<div class="highlight"><pre>@article{a, eprint = {2402.18551}}</pre></div>
<p>The docstring's example: <code>239.98</code> prints as <code>240</code>.</p>
<dt>EPS<em class="property"> = <span class="pre">2.220446049250313e-16</span></em></dt>
<div class="cell docutils container"><div class="cell_input docutils container">
<div class="highlight"><pre>lr = 0.0123456</pre></div></div>
<div class="cell_output docutils container"><div class="output stream"><div class="highlight">
<pre>kl at k = 100000: 0.00025871, 0.0002587</pre></div></div></div></div>
<script>var x = 0.123456;</script>
</main></body></html>"""


def test_numbers_with_more_than_four_digits_or_saying_nothing_are_found_in_prose_math_and_outputs():
    found = [(f.rule, f.what) for f in over_precise_numbers(parse(NUMBERS))]
    assert found == [
        ("over-precise number", "0.0333333"),
        ("over-precise number", "24.5555"),
        ("empty number", "< 1e+00"),
        ("empty number", "0 ± 0"),
        ("empty number", "0.00e+00"),
        ("over-precise number", "0.00025871"),  # four digits after the zeros (0.0002587) are fine
    ]
    assert over_precise_numbers(parse(CLEAN)) == []


def test_scan_page_applies_every_rule():
    rules = {f.rule for f in scan_page(FAULTY, parameter_names={"n_random_W"})}
    assert rules == {"raw TeX", "parameter name in a caption", "figure in a closed block", "figure numbers"}


# --- the built book -------------------------------------------------------------------------

CHAPTERS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.md"))

# In the book of 460b93a the scan found raw TeX in chapter 1's Section 1.3, parameter names in the
# captions of Figs. 1.1 (`n_random_W`), 2.1 (`B_top_mm`) and 4.1 (`S`), and Figs. 3.3, 3.4, 4.4, 5.2
# and 7.6 in closed outputs; every chapter's rewrite fixed its own, so every chapter must pass.


def _findings(html: Path, pages: list[Path], root: Path) -> list[str]:
    """Each finding on ``pages``, as ``page: finding``, a chapter's with its parameters' names."""
    lines = []
    for page in pages:
        rel = page.relative_to(html)
        names: tuple[str, ...] = ()
        if rel.parts[:2] == ("outputs", "notebooks"):
            names = tuple(read_parameters_cell(root / "notebooks" / f"{page.stem}.md"))
        lines += [f"{rel}: {finding}" for finding in scan_page(page.read_text(encoding="utf-8"), names)]
    return lines


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_chapter_page_shows_no_raw_tex_no_parameter_name_in_a_caption_and_every_figure(built_book, chapter):
    html = built_book / "_build" / "html"
    page = html / "outputs" / "notebooks" / f"{chapter}.html"
    assert page.is_file(), page
    findings = _findings(html, [page], built_book)
    assert not findings, "\n".join(findings)


@pytest.mark.slow
def test_no_other_page_shows_raw_tex_or_a_hidden_figure(built_book):
    html = built_book / "_build" / "html"
    pages = [p for p in book_pages(html) if p.relative_to(html).parts[:2] != ("outputs", "notebooks")]
    assert len(pages) >= 5, pages
    findings = _findings(html, pages, built_book)
    assert not findings, "\n".join(findings)


@pytest.mark.slow
def test_every_page_shows_each_number_to_at_most_four_significant_digits(built_book):
    """No page (a chapter, the report, the API reference) shows a decimal number to more than
    :data:`~ntpnb.book._page_scan.MAX_DIGITS` significant digits or a number that says nothing."""
    html = built_book / "_build" / "html"
    pages = book_pages(html)
    assert len(pages) >= 20, pages  # the chapters, the report, the pages about the book, the API's
    findings = [
        f"{page.relative_to(html)}: {finding}"
        for page in pages
        for finding in over_precise_numbers(parse(page.read_text(encoding="utf-8")))
    ]
    assert not findings, "\n".join(findings)


# --- figures on a phone --------------------------------------------------------------------

#: A phone's window and a laptop's: the figures' text is computed at both.
PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1366, "height": 768}

#: Each figure's image (and each animation's frame) as shown: its caption's number, the layout
#: shown (the phone's <source> or the image itself), the record of that layout (smallest text
#: and width, in points) and where the image lies against the page's column.
FIGURES = """() => {
    const column = document.querySelector('article.bd-article') || document.querySelector('main');
    const edge = column.getBoundingClientRect();
    return [...document.querySelectorAll('figure img, img[id^="_anim_img"]')].map(img => {
        const figure = img.closest('figure');
        const number = figure && figure.querySelector('.caption-number');
        const picture = img.closest('picture.ntpnb-picture');
        const source = picture && picture.querySelector('source');
        const phone = !!source && !!img.currentSrc &&
            new URL(source.srcset.trim().split(/\\s+/)[0], document.baseURI).href === img.currentSrc;
        const record = phone ? source : (img.dataset.textPoints ? img : picture);
        const box = img.getBoundingClientRect();
        return {
            figure: number ? number.textContent.trim() : (figure ? figure.id : img.id),
            layout: phone ? 'phone' : 'laptop',
            hasPhone: !!source,
            text: record && record.dataset.textPoints ? Number(record.dataset.textPoints) : null,
            widthPoints: record && record.dataset.widthPoints ? Number(record.dataset.widthPoints) : null,
            width: box.width,
            outside: box.left < edge.left - 1 || box.right > edge.right + 1,
        };
    });
}"""


def _shown_figures(tab, page: Path) -> list[dict]:
    """The figures of ``page`` loaded in ``tab`` at its window's size, blocks opened (:data:`FIGURES`)."""
    tab.goto(page.as_uri(), wait_until="load")
    tab.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
    tab.wait_for_function("() => [...document.images].every(i => i.complete)", timeout=15_000)
    return tab.evaluate(FIGURES)


@pytest.fixture(scope="module")
def figures_shown(browser, built_book) -> dict[tuple[str, int], list[dict]]:  # noqa: F811
    """Each chapter's figures as shown at :data:`PHONE` and :data:`LAPTOP` width, by (chapter, width).

    A tab a window, its chapters loaded in it one after another (each loaded at that window's
    size, as a reader on that screen opens it): a tab a page cost a renderer each.
    """
    html = built_book / "_build" / "html" / "outputs" / "notebooks"
    shown = {}
    for window in (PHONE, LAPTOP):
        tab = browser.new_page(viewport=window)
        for chapter in CHAPTERS:
            shown[(chapter, window["width"])] = _shown_figures(tab, html / f"{chapter}.html")
        tab.close()
    return shown


def _smallest_text(figure: dict) -> float | None:
    """The smallest text of a shown figure in CSS pixels; None if its image has no record."""
    if figure["text"] is None or not figure["widthPoints"]:
        return None
    return text_pixels(figure["text"], figure["widthPoints"], figure["width"])


@pytest.mark.slow
def test_every_figure_is_legible_on_a_phone_and_unchanged_on_a_laptop(figures_shown, record_property):
    """At 390 px each figure's smallest text is at least LEGIBLE_PIXELS and the figure fits the column;
    at 1366 px each shows its laptop layout (the saved figure) at full size, as legible."""
    problems, smallest = [], {}
    for (chapter, width), figures in figures_shown.items():
        assert figures, f"{chapter}: no figure at {width} px"
        for figure in figures:
            where = f"{chapter} at {width} px: {figure['figure']} ({figure['layout']} layout)"
            size = _smallest_text(figure)
            if size is None:
                problems.append(f"{where}: its image has no record of its text (not from show_figure?)")
                continue
            smallest[chapter, width] = min(size, smallest.get((chapter, width), size))
            if size < LEGIBLE_PIXELS:
                problems.append(f"{where}: smallest text {size:.1f} px < {LEGIBLE_PIXELS:g} px")
            if figure["outside"]:
                problems.append(f"{where}: {figure['width']:.0f} px wide, it leaves the column")
            if width == LAPTOP["width"] and figure["layout"] != "laptop":
                problems.append(f"{where}: a laptop shows the phone layout")
    summary = "; ".join(f"{c} at {w} px: {px:.1f} px" for (c, w), px in sorted(smallest.items()))
    record_property("smallest_figure_text", summary)
    print(f"\nsmallest figure text (CSS px): {summary}")
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_a_phone_shows_the_one_column_layout_where_the_laptop_one_would_be_too_small(figures_shown):
    """Every figure with a phone layout shows it at 390 px (the first test checks every text)."""
    shown = [f for (_, width), figures in figures_shown.items() if width == PHONE["width"] for f in figures]
    with_phone = [f for f in shown if f["hasPhone"]]
    assert with_phone, "no figure of the book has a phone layout"
    assert all(f["layout"] == "phone" for f in with_phone), [f["figure"] for f in with_phone]
