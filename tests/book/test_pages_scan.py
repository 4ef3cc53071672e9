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

from ntpnb.book._code_names import chapter_parameter_names, defined_names, found_names
from ntpnb.book._glossary import first_uses
from ntpnb.book._page_scan import (
    ASCII_MATH,
    Finding,
    ascii_math,
    bracket_balance,
    caption_parameters,
    code_names,
    figure_number_gaps,
    hidden_figures,
    nested_bracket,
    nested_brackets,
    over_precise_numbers,
    parse,
    raw_tex,
    read_texts,
    repeated_words,
    scan_page,
    unbalanced_brackets,
    ungrouped_counts,
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


WORDS = """<html><body><main>
<p>The run of <span class="math notranslate nohighlight">\\(W_k\\)</span> ends at corr_corrected 0.97
(<code class="docutils literal">ntpnb-active-set</code>), as <code>ntp.trace_at</code> computes.</p>
<figure><figcaption><p>Fig. 7.5 (<code>squared_softmax</code> loss)</p></figcaption></figure>
<div class="cell docutils container"><div class="cell_input docutils container">
<div class="highlight"><pre>trace = ntp.trace_at(run, grid)  # n_iter steps</pre></div></div>
<div class="cell_output docutils container"><div class="output stream highlight"><pre>dist_F 0.26</pre></div>
<table><tr><td>2 (<code>ntpnb-hinge-newton</code>)</td></tr></table></div></div>
<div class="highlight"><pre>ntpnb reproduce 04 -p n_iter=10</pre></div>
<table><tr><td>the code: <code>data.support_mask</code></td><td>stopped before n_iter</td></tr></table>
</main></body></html>"""


def test_a_code_name_is_found_in_what_a_reader_reads_but_not_in_code():
    names = {"corr_corrected", "ntpnb-active-set", "trace_at", "squared_softmax", "n_iter", "dist_F"}
    names |= {"ntpnb-hinge-newton", "support_mask"}
    found = [f.what for f in code_names(parse(WORDS), names)]
    # prose, a caption's code, a cell's printout and its table's code, a prose table's words; not
    # the prose's citation of the API, a cell's source, a command or the notation's code column
    assert found == ["corr_corrected", "squared_softmax", "dist_F", "ntpnb-hinge-newton", "n_iter"]
    assert not any("W_k" in text for text in read_texts(parse(WORDS)))  # math is not read as words


ASCII = """<html><body><main>
<p>The limit <span class="math notranslate nohighlight">\\(\\lVert W_k\\rVert \\to \\infty\\)</span>
is typeset;
circular windows: largest H_{t+1} - H_t, as <code>W_k</code> in code.</p>
<table class="ntpnb-claim-table"><tr><td>||w_1 - w_5|| / ||W^mm||</td><td>mean corr(W, W~mm) at the end</td>
<td>H_t >= H_{t+1} (Remark 2)</td><td><span class="math">\\(W^\\star\\)</span> at the end</td></tr></table>
<div class="cell docutils container"><div class="cell_input docutils container">
<div class="highlight"><pre>W_star = limits.W_mm  # W* and W^mm</pre></div></div>
<div class="cell_output docutils container"><div class="output stream highlight">
<pre>[PASS] A8 $\\lVert w_1 - w_5\\rVert$ (W^mm's rows)</pre></div></div></div>
<h2>GD drives CE - H to 0 and P_F(W_k) -> W*</h2>
<p>A sub-dataset of 3-4 tokens, claims A1-A16, d/m = 1/2, x * y, seeds 0-4 and 01_entropy.</p>
</main></body></html>"""


def test_ascii_math_is_found_in_words_a_reader_reads_but_not_in_math_code_or_printed_lines():
    found = [(f.rule, f.what) for f in ascii_math(parse(ASCII))]
    # the prose, the cells of a table of checks, a heading; not the math, the inline code, the
    # cell's source, its printed line (terminal text) or plain words with hyphens and stars
    assert found == [
        ("ASCII math", "H_{ H_t"),
        ("ASCII math", "|| w_1 w_5 ^mm"),
        ("ASCII math", "~mm"),
        ("ASCII math", "H_t >= H_{"),
        ("ASCII math", "CE - H P_F W_k -> W*"),
    ]
    assert ascii_math(parse(CLEAN)) == [] and ascii_math(parse(WORDS)) == []


@pytest.mark.parametrize(
    "text",
    [
        "||W_B|| = B",
        "W^d meeting (6)",
        "CE^T = I",
        "L(W) - L*",
        "e^{-s}",
        "w_1 = w_5",
        "m_t",
        "W^inf",
        "x <= 1",
    ],
)
def test_each_kind_of_ascii_math_is_a_finding(text):
    assert ASCII_MATH.search(text), text


@pytest.mark.parametrize(
    "text",
    ["sub-dataset", "A1-A16", "seeds 0-4", "≤ 0.01", "n_iter", "01_entropy", "<-> both", "Fig. 3*", "1/2"],
)
def test_plain_words_and_numbers_are_no_ascii_math(text):
    assert not ASCII_MATH.search(text), text


def test_a_word_written_twice_in_a_row_is_found_but_not_math_or_numbers_twice():
    page = parse(
        "<body><p>Adam's direction the the limit</p><p>corr with <span class='math'>\\(x\\)</span> "
        "<span class='math'>\\(y\\)</span> and 0 0</p><td>that that</td></body>"
    )
    assert [(f.rule, f.what) for f in repeated_words(page)] == [
        ("repeated word", "the"),
        ("repeated word", "that"),
    ]


def test_brackets_balance_an_interval_may_mix_them_and_a_brace_closes_a_brace():
    assert bracket_balance("(a [b] (c, d]) {e}") is None
    assert bracket_balance("f(x), (its rise (p = 0.06)") == "'(' is not closed"
    assert bracket_balance("a) b") == "')' closes nothing"
    assert bracket_balance("{a)") == "')' closes nothing"
    page = parse("<body><p>in (0.5, 1]</p><p>(two (nested) fine)</p><li>open (here</li></body>")
    assert [f.what for f in unbalanced_brackets(page)] == ["'(' is not closed"]
    assert unbalanced_brackets(parse("<body><p>math <span class='math'>\\((a\\)</span> ok</p></body>")) == []


def test_a_round_bracket_inside_a_round_one_is_found_but_not_an_equations_number_or_an_interval():
    # chapter 8 printed "under that loss (its rise with n is established (exact trend test ...))"
    assert nested_bracket("samples under that loss (its rise with n is established (exact trend test))") == 56
    assert nested_bracket("(a [b (c)])") == 6  # a square bracket between them opens no new level
    for clean in (
        "(see Eq. (2)) ok",
        "(Eqs. (3)-(4) hold)",
        "(a) and (b)",
        "in (0.5, 1] then (c)",
        "[a (b) c]",
    ):
        assert nested_bracket(clean) is None, clean
    page = parse(
        "<body><p>fine (a) (b)</p><li>nested (a (b))</li>"
        "<p>math (<span class='math'>\\(f(x)\\)</span>)</p></body>"
    )
    assert [f.what for f in nested_brackets(page)] == ["(b))"]


COUNTS = """<html><body><main>
<p>the whole corpus (51009 contexts) at k = 1000000, k = 1,000,000, in 2024 (arXiv:2402.18551,
numpy 1.26.4, seed 12345, commit 1234567, issue #12345, 100_000, 0.000123, 12345.6)</p>
<div class="cell docutils container"><div class="cell_input docutils container">
<div class="highlight"><pre>n_iter = 100000</pre></div></div>
<div class="cell_output docutils container"><div class="output stream highlight">
<pre>GD at k = 10000: corr 0.91</pre></div></div></div>
<p>Run <code class="docutils literal">ntpnb reproduce 04 -p n_iter=100000</code>.</p>
<table><tr><td>500</td><td>10000</td><td>3.16e+03</td></tr></table>
<p>math: <span class="math notranslate nohighlight">\\(k = 100000\\)</span> and
<span class="math notranslate nohighlight">\\(k = 1{,}000{,}000, W_{12}, 2^{-1074}, 1.23456\\)</span></p>
</main></body></html>"""


def test_a_count_of_five_digits_or_more_is_found_ungrouped_but_not_a_year_an_identifier_or_code():
    found = [f.what for f in ungrouped_counts(parse(COUNTS))]
    # the prose's, a cell's printout and a table's; not a year, an identifier, a version, a seed,
    # a commit, a grouped or a decimal number, a cell's source or a command the prose cites
    # and a count in math (its TeX), not one grouped there with {,}, an index, a power or a decimal
    assert found == ["51009", "1000000", "10000", "10000", "100000"]
    assert ungrouped_counts(parse(CLEAN)) == []


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


#: The pages of the API reference besides ``book/api/``: its overview and Sphinx's indexes of names.
API_PAGES = frozenset({"api.html", "py-modindex.html", "genindex.html", "search.html"})


def reader_pages(html: Path) -> list[Path]:
    """The book's pages but the API reference's and its indexes (the code's own words)."""
    return [
        page
        for page in book_pages(html)
        if page.relative_to(html).parts[:2] != ("book", "api") and page.name not in API_PAGES
    ]


def page_code_names(html: Path, pages: list[Path]) -> dict[str, list[Finding]]:
    """The code names (:func:`~ntpnb.book._page_scan.code_names`) on each of ``pages``, by page."""
    names = defined_names() | chapter_parameter_names(ROOT / "notebooks")
    found = {}
    for page in pages:
        if page.relative_to(html).parts[:2] == ("book", "api") or page.name in API_PAGES:
            continue  # the API reference and its indexes are the code's own
        found[str(page.relative_to(html))] = code_names(parse(page.read_text(encoding="utf-8")), names)
    return found


@pytest.mark.slow
def test_no_page_shows_a_name_from_the_code(built_book, record_property):
    """No prose, heading, table, caption or cell output names what the code defines (``corr_corrected``,
    ``ntpnb-active-set``)."""
    html = built_book / "_build" / "html"
    found = page_code_names(html, book_pages(html))
    assert len(found) >= 12, sorted(found)
    counts = {page: len(findings) for page, findings in found.items() if findings}
    record_property("code_names_by_page", counts)
    shown = [f"{page}: {f}" for page, findings in found.items() for f in findings]
    assert not shown, "\n".join(shown)


@pytest.mark.slow
def test_no_page_shows_math_typed_in_ascii(built_book, record_property):
    """No prose, heading, table (a chapter's checks, the report's cards) or caption shows math typed in
    ASCII (``||W^mm||``, ``H_{t+1}``, ``>=``): a check's words, like the prose, typeset it. The API
    reference and its indexes are the code's own words, as for :func:`page_code_names`."""
    html = built_book / "_build" / "html"
    pages = [
        page
        for page in book_pages(html)
        if page.relative_to(html).parts[:2] != ("book", "api") and page.name not in API_PAGES
    ]
    assert len(pages) >= 12, pages  # the chapters, the report, the claims page, the pages about the book
    findings = {
        str(page.relative_to(html)): ascii_math(parse(page.read_text(encoding="utf-8"))) for page in pages
    }
    record_property("ascii_math_by_page", {page: len(f) for page, f in findings.items() if f})
    shown = [f"{page}: {f}" for page, found in findings.items() for f in found]
    assert not shown, "\n".join(shown)


@pytest.mark.slow
def test_no_figure_shows_a_name_from_the_code(built_book):
    """A figure's title, labels and legend (the text of its saved PDF) name nothing the code defines."""
    from pypdf import PdfReader

    names = defined_names() | chapter_parameter_names(ROOT / "notebooks")
    figures = sorted((built_book / "outputs" / "figures").glob("*.pdf"))
    assert len(figures) > 20
    found = []
    for figure in figures:
        text = " ".join(page.extract_text() for page in PdfReader(figure).pages)
        found += [f"{figure.name}: {word}" for _, _, word in found_names(text, names)]
    assert not found, found


@pytest.mark.slow
def test_no_page_repeats_a_word_or_leaves_a_bracket_open(built_book):
    """A word written twice in a row ("the the") and a bracket that does not close, in every page's prose."""
    html = built_book / "_build" / "html"
    findings = []
    for page in book_pages(html):
        parsed = parse(page.read_text(encoding="utf-8"))
        findings += [
            f"{page.relative_to(html)}: {f}" for f in [*repeated_words(parsed), *unbalanced_brackets(parsed)]
        ]
    assert not findings, "\n".join(findings)


#: Where a term's use is not linked on a page (ntpnb.book._term_links): a heading, code, math, a
#: block's summary line, another link.
_UNLINKED = frozenset({"h1", "h2", "h3", "code", "pre", "kbd", "script", "style", "summary", "mjx-container"})


def unlinked_first_uses(page) -> list[str]:
    """The terms whose first use on ``page`` (in its article's text, where a use is linked) is
    not a link to the glossary: a use inside another link, a heading, code or math is skipped."""
    article = page.find("article") or page
    texts, linked = [], []
    for text in article.find_all(string=True):
        parents = list(text.parents)
        if any(p.name in _UNLINKED or "math" in (p.get("class") or ()) for p in parents):
            continue
        link = next((p for p in parents if p.name == "a"), None)
        if link is not None and "glossary.html#term-" not in link.get("href", ""):
            continue
        texts.append(str(text))
        linked.append(link is not None)
    return [term for index, _, _, term in first_uses(texts) if not linked[index]]


@pytest.mark.slow
def test_each_terms_first_use_on_a_page_is_its_link_to_the_glossary(built_book):
    """On every page but the glossary and the API reference, a term's first use links its entry:
    the report's "only sanity checks" and its cards' "finding" were left plain because the
    page linked those terms further down itself."""
    html = built_book / "_build" / "html"
    pages = [page for page in reader_pages(html) if page.name != "glossary.html"]
    found = {
        str(p.relative_to(html)): unlinked_first_uses(parse(p.read_text(encoding="utf-8"))) for p in pages
    }
    assert {page: terms for page, terms in found.items() if terms} == {}


@pytest.mark.slow
def test_no_page_nests_a_round_bracket_in_another(built_book):
    """No passage of prose opens an aside in round brackets inside another (chapter 8 did, "(... (p =
    ...))"), on every page but the API reference's (its signatures' defaults: ``= (1.0,))``)."""
    html = built_book / "_build" / "html"
    findings = [
        f"{page.relative_to(html)}: {f}"
        for page in reader_pages(html)
        for f in nested_brackets(parse(page.read_text(encoding="utf-8")))
    ]
    assert not findings, "\n".join(findings)


@pytest.mark.slow
def test_no_page_shows_a_long_count_ungrouped(built_book):
    """Every count of five digits or more a reader reads is grouped by thousands (``51,009 contexts``),
    on every page but the API reference's (the code's own constants)."""
    html = built_book / "_build" / "html"
    pages = reader_pages(html)
    assert len(pages) >= 12, pages
    findings = [
        f"{page.relative_to(html)}: {f}"
        for page in pages
        for f in ungrouped_counts(parse(page.read_text(encoding="utf-8")))
    ]
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
