"""The book builds from the executed notebooks with zero warnings, and refuses a broken one."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from html import unescape as html_unescape
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from ntpnb.book._trees import chapter_label
from ntpnb.evidence._registry import CLAIMS, MAPS
from ntpnb.evidence._vocabulary import REPRODUCED, verdict_words
from ntpnb.records._cache import output_digests
from ntpnb.records._manifest import load_manifest, write_manifest

from conftest import OWN_BOOK_ONLY, build_book

pytestmark = pytest.mark.slow


@OWN_BOOK_ONLY
def test_book_builds_without_warnings(built_book):
    log = (built_book / "_build" / "build.log").read_text()
    assert "WARNING" not in log
    html = built_book / "_build" / "html"
    assert (html / "index.html").exists()
    chapter = (html / "outputs" / "notebooks" / "01_entropy_separability.html").read_text()
    assert '<tr class="ntpnb-pass"><td>A2</td>' in chapter  # in a section's block of checks
    assert 'class="ntpnb-fail"' not in chapter and "ntpnb-has-fail" not in chapter
    assert "Proposition 1" in chapter
    assert "<img" in chapter  # the figures are rendered
    references = (html / "book" / "references.html").read_text()
    for author in ("Thrampoulidis", "Soudry", "Telgarsky", "Rosset"):
        assert author in references


def test_a_chapter_page_shows_its_checks_collapsed_and_ends_with_try_it(built_book):
    """Each section's checks are one collapsed block (their printed lines stay in the notebook)."""
    html = built_book / "_build" / "html" / "outputs" / "notebooks"
    for name in sorted(p.stem for p in (built_book / "notebooks").glob("*.md")):
        page = (html / f"{name}.html").read_text()
        assert not re.search(r"\[(PASS|FAIL|FOUND|OPEN)\] [ABM]\d", page), f"{name} prints a check line"
        blocks = re.findall(r'<details class="ntpnb-checks[^"]*"><summary>([^<]*)</summary>', page)
        sections = [b for b in blocks if b.startswith("Checks of this section: ")]
        assert len(sections) >= 2 and re.match(r"Every check of this chapter at seed \d+: ", blocks[-1]), name
        try_it = page.index('<p class="admonition-title">Try it</p>')
        box = re.sub(r"<[^>]+>", "", page[try_it : page.rindex("Every check of this chapter")])
        assert f"ntpnb reproduce {name[:2]} -p " in box, f"{name}: no ready command before its checks"


def test_chapters_are_numbered_across_the_parts_and_the_page_has_one_search_box(built_book):
    html = built_book / "_build" / "html"
    page = (html / "book" / "intro.html").read_text()
    nav = re.findall(r"toctree-l1[^>]*><a[^>]*>([^<]*)<", page)
    chapters = sorted(p.stem for p in (built_book / "notebooks").glob("*.md"))
    numbered = [title for title in nav if re.match(r"\d+\. ", title)]
    assert [int(t.split(".")[0]) for t in numbered] == list(range(1, len(chapters) + 1))
    assert page.count("search-button-field") == 1


def test_a_chapter_has_the_same_number_in_the_sidebar_its_title_and_the_report(built_book):
    html = built_book / "_build" / "html"
    intro = (html / "book" / "intro.html").read_text()
    report = (html / "outputs" / "report.html").read_text()
    for source in sorted((built_book / "notebooks").glob("*.md")):
        number, page = chapter_label(source.stem), f"outputs/notebooks/{source.stem}.html"
        assert re.search(rf'href="\.\./{re.escape(page)}">{number}\. ', intro), (source.stem, "sidebar")
        title = (html / page).read_text()
        assert f'<h1><span class="section-number">{number}. </span>' in title, (source.stem, "title")
        assert f"<summary>{number}. " in report, (source.stem, "the report's block of its checks")
        link = rf'{source.stem}\.html#[^"]*"><span[^>]*>{number} § '
        assert re.search(link, report), (source.stem, "the report's links to its sections")
    assert not re.search(r">0\d[ .§]", report), "a chapter named by its file's prefix on the report"


def test_math_is_served_by_the_book_itself(built_book):
    html = built_book / "_build" / "html"
    page = (html / "book" / "intro.html").read_text()
    scripts = re.findall(r'<script[^>]*src="([^"]*mathjax[^"]*)"', page)
    assert scripts == ["../_static/mathjax/tex-chtml.js?v=" + scripts[0].split("?v=")[1]], scripts
    assert (html / "_static" / "mathjax" / "tex-chtml.js").is_file()
    assert list((html / "_static" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))
    assert "cdn.jsdelivr" not in page and "https://cdn" not in page
    assert page.count("const THEBE_JS_URL") <= 1  # the theme's double declaration is gone


class _Anchors(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])


def parse(path: Path) -> _Anchors:
    parser = _Anchors()
    parser.feed(path.read_text())
    return parser


@dataclasses.dataclass
class _Figure:
    number: str = ""
    caption: str = ""


@dataclasses.dataclass
class _Image:
    alt: str | None
    src: str
    figure: _Figure | None


class _ChapterFigures(HTMLParser):
    """The images of a page's article and the ``<figure>`` (number, caption) each is inside."""

    def __init__(self):
        super().__init__()
        self.images: list[_Image] = []
        self.figures: list[_Figure] = []
        self._article = 0
        self._figure: _Figure | None = None
        self._spans: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        if tag == "article" and ("bd-article" in classes or self._article):
            self._article += 1
        elif not self._article:
            return
        elif tag == "figure":
            self._figure = _Figure()
            self.figures.append(self._figure)
        elif tag == "img":
            self.images.append(_Image(attrs.get("alt"), attrs.get("src") or "", self._figure))
        elif tag == "span":
            self._spans.append(" ".join(classes))

    def handle_endtag(self, tag):
        if tag == "article" and self._article:
            self._article -= 1
        elif tag == "figure":
            self._figure = None
        elif tag == "span" and self._spans:
            self._spans.pop()

    def handle_data(self, data):
        if self._figure is None:
            return
        if "caption-number" in self._spans:
            self._figure.number += data
        elif "caption-text" in self._spans:
            self._figure.caption += data


#: The file name myst-nb gives an output image (the hash of its bytes), which the HTML writer
#: makes its alt text when the cell gives none.
_HASH_NAME = re.compile(r"[0-9a-f]{32,}(\.\w+)?")


def test_every_figure_of_a_chapter_is_numbered_captioned_and_described(built_book):
    html = built_book / "_build" / "html" / "outputs" / "notebooks"
    pages = sorted(html.glob("*.html"))
    assert [p.stem for p in pages] == sorted(p.stem for p in (built_book / "notebooks").glob("*.md"))
    for page in pages:
        parser = _ChapterFigures()
        parser.feed(page.read_text())
        assert parser.images, f"{page.name} shows no figure"
        for image in parser.images:
            where = f"{page.name}: image {image.src[:60]!r}"
            assert image.figure is not None, f"{where} is not inside a <figure>"
            assert re.fullmatch(r"Fig\. \d+(\.\d+)*", image.figure.number.strip()), where
            assert len(image.figure.caption.split()) >= 5, f"{where}: caption {image.figure.caption!r}"
            alt = (image.alt or "").strip()
            assert len(alt.split()) >= 5 and not _HASH_NAME.search(alt), f"{where}: alt text {alt!r}"
        numbers = [f.number.strip() for f in parser.figures]
        assert len(set(numbers)) == len(numbers), f"{page.name}: figure numbers {numbers}"
        assert len(parser.figures) == len(parser.images), f"{page.name}: a figure with no image"


def test_tables_render_as_tables_and_parameters_show_their_values(built_book):
    """A cell's Markdown table is an HTML table (not lines of pipes); a glued parameter is filled."""
    html = built_book / "_build" / "html" / "outputs" / "notebooks"
    for page in sorted(html.glob("*.html")):
        text = page.read_text()
        assert not re.search(r"\|\s*-{3,}\s*\|", text), f"{page.name} shows a Markdown table as text"
    chapter = (html / "07_attention.html").read_text()
    table = chapter[chapter.index('id="the-setting-side-by-side"') :]
    assert "<th" in table[: table.index("</table>")] and "official code" in table
    trials = json.loads((built_book / "outputs" / "claims" / "07_attention.json").read_text())
    shown = trials["parameters"]["n_trials"]
    named = rf'pasted-text">{shown}</span>[^<]{{0,40}}<code[^>]*><span class="pre">n_trials<'
    assert re.search(named, chapter), "the run's n_trials, beside its name"


#: An entry of the API reference: its id (the name it is documented under).
API_ENTRY = r'<dt class="sig sig-object py" id="([^"]+)"'


def test_the_api_pages_document_every_public_name_once_from_its_docstring(built_book):
    """Every name of ``__all__`` of the public modules has one entry, on one page of the reference,
    with its docstring's summary; the reference's first page links to every page."""
    import ntpnb
    from ntpnb import attention, chapter, errors, explore, optim, statistics

    api = built_book / "_build" / "html" / "book" / "api"
    pages = {str(path.relative_to(api).with_suffix("")): path.read_text() for path in api.rglob("*.html")}
    index = (api.parent / "api.html").read_text()
    assert all(f'href="api/{name}.html"' in index for name in pages), "the first page links to each page"
    where: dict[str, list[str]] = {}
    for name, text in pages.items():
        for entry in re.findall(API_ENTRY, text):
            where.setdefault(entry, []).append(name)
    for module in (ntpnb, attention, optim, errors, statistics, chapter, explore):
        for name in module.__all__:
            if name.startswith("__") or name in ("optim", "attention"):  # a subpackage has its own pages
                continue
            # the errors are documented in ntpnb.errors, re-exported at the top level
            entry = f"errors.{name}" if module is ntpnb and name in errors.__all__ else name
            found = where.get(f"{module.__name__}.{entry}", [])
            assert len(found) == 1, f"{module.__name__}.{entry} is on {len(found)} API pages: {found}"
    for page, function in (
        ("linear/separability", ntpnb.ntp_svm),
        ("attention/svm", attention.solve_graph_svm),
        ("optim", optim.normalized_gd),
    ):
        # the longest run of the summary line's plain text: its docstring, not only its signature
        summary = function.__doc__.strip().splitlines()[0]
        plain = max(re.split(r"``[^`]*``|:\w+:`[^`]*`|['\"]", summary), key=len)
        assert plain.strip() in pages[page], plain
    assert 'id="ntpnb.settings.SVM_KKT_TOL"' in pages["settings"]  # every tolerance, with what it bounds
    # re-exported data reads its own comment, not its type's docstring
    assert "The methods of" in pages["linear/separability"]
    assert not any("Built-in immutable sequence" in text for text in pages.values())


def test_api_signatures_read_as_annotated_and_link_numpy_types(built_book):
    """``ArrayLike`` stays ``ArrayLike`` (linked to numpy's page of it), never numpy's expansion."""
    api = built_book / "_build" / "html" / "book" / "api"
    array_like = 'href="https://numpy.org/doc/stable/reference/typing.html#numpy.typing.ArrayLike"'
    linked = 0
    for page in sorted(api.rglob("*.html")):
        for entry, sig in re.findall(API_ENTRY + r">(.*?)</dt>", page.read_text(), re.S):
            shown = html_unescape(re.sub(r"<[^>]+>", "", sig))
            for expansion in ("_SupportsArray", "_NestedSequence", "numpy.typing", "~"):
                assert expansion not in shown, f"{page.name}: {entry} shows {expansion!r}: {shown}"
            linked += array_like in sig
    assert linked >= 30, f"only {linked} signatures link ArrayLike to numpy's documentation"


def test_report_links_to_the_sections_that_check_each_claim(built_book):
    html = built_book / "_build" / "html"
    report = html / "outputs" / "report.html"
    text = report.read_text()
    for cid in CLAIMS:
        assert f"<strong>{cid}</strong>" in text, cid
    section_links = [h for h in parse(report).links if "notebooks/" in h and "#" in h]
    assert section_links, "the report links to no chapter section"
    for href in section_links:
        parts = urlsplit(href)
        target = (report.parent / unquote(parts.path)).resolve()
        assert parts.fragment in parse(target).ids, f"{href}: no such section"


def test_the_report_gives_each_map_a_line_with_where_its_claims_stop_holding(built_book, quick_run):
    """Chapter 8 states a headline for every map; the report's list shows each, math typeset."""
    headlines = json.loads((quick_run / "claims" / "08_beyond.json").read_text())["headlines"]
    assert sorted(h["claim"] for h in headlines) == sorted(MAPS)
    report = (built_book / "_build" / "html" / "outputs" / "report.html").read_text()
    maps = report.split('id="beyond-the-papers-settings"', 1)[1].split("<details", 1)[0]
    items = re.findall(r"<li>(.*?)</li>", maps, re.S)
    assert len(items) == len(MAPS)
    for mid, item in zip(MAPS, items, strict=True):
        assert f'href="#map-{mid.lower()}"' in item, mid
        assert "not measured in this run" not in item, mid
        assert 'class="math notranslate nohighlight"' in item and "$" not in item, mid
    ids = re.findall(r'<details class="ntpnb-checks ntpnb-map" id="(map-m\d)"', report)
    assert ids == [f"map-{mid.lower()}" for mid in MAPS]  # each line's link has its target


#: The tags with which the book hides a cell's output (or shows it only when a reader opens it).
HIDDEN_OUTPUT = {"remove-output", "remove-cell", "remove-stdout", "hide-cell", "hide-output"}


def test_no_chapter_shows_printed_text(quick_run):
    """A chapter's visible outputs are figures, tables and sentences: no cell it shows prints text."""
    printing = {}
    for path in sorted((quick_run / "notebooks").glob("*.ipynb")):
        for index, cell in enumerate(json.loads(path.read_text())["cells"]):
            if cell["cell_type"] != "code" or HIDDEN_OUTPUT & set(cell["metadata"].get("tags", [])):
                continue
            streams = [
                o for o in cell["outputs"] if o["output_type"] == "stream" and "".join(o["text"]).strip()
            ]
            plain = [o for o in cell["outputs"] if set(o.get("data", {})) == {"text/plain"}]
            if streams or plain:
                printing.setdefault(path.stem, []).append(index)
    assert not printing, f"cells that show printed text, by chapter: {printing}"


#: What each of chapter 8's maps prints in its legend for the paper's own setting (M2's is a line of
#: the paper's m, which the quick profile's grid leaves out).
MAP_SETTINGS = {
    "m1_step_size": "the paper's step 0.5",
    "m3_conditions": "Figs. 3-5's d/m = 1.2",
    "m4_step": "Fig. 3's step 0.01",
    "m5_samples": "Fig. 5's n = 4",
}


def test_each_map_marks_the_papers_setting_and_says_what_its_markers_mean(quick_run):
    from pypdf import PdfReader

    for name, setting in MAP_SETTINGS.items():
        pages = PdfReader(quick_run / "figures" / f"{name}.pdf").pages
        text = " ".join(" ".join(page.extract_text().split()) for page in pages)
        # the paper's setting, the required value, and what the line and the markers mean
        assert setting in text, (name, text)
        assert "required" in text and "median of seeds" in text, name
        assert "holds" in text or "fails" in text, name


@OWN_BOOK_ONLY
def test_intro_quotes_the_verdict_counts_of_the_run(built_book):
    intro = (built_book / "_build" / "html" / "book" / "intro.html").read_text()
    text = re.sub(r"<[^>]+>", "", intro)
    head = r"Verdicts of the runs that built this book \(profile quick; seeds 0-2\)"  # its run.json
    match = re.search(rf"{head}: (\d+) of {len(CLAIMS)} claims reproduced", text)
    assert match, "the introduction shows no verdict counts"
    report = (built_book / "outputs" / "report.md").read_text()
    assert f"**{match.group(1)} of {len(CLAIMS)} claims reproduced" in report  # the report's counts


def test_every_checked_claim_id_is_in_the_registry(quick_run):
    for path in sorted((quick_run / "claims").glob("*.json")):
        ids = {c["claim"] for c in json.loads(path.read_text())["checks"]}
        known = set(CLAIMS) | set(MAPS)
        assert ids <= known, f"{path.stem} checks unregistered ids {sorted(ids - known)}"


def test_chapter_sources_are_published_for_download(built_book):
    html = built_book / "_build" / "html"
    for source in (built_book / "notebooks").glob("*.md"):
        assert (html / "_sources" / "notebooks" / source.name).read_text() == source.read_text()
        assert (html / "_sources" / "outputs" / "notebooks" / f"{source.stem}.ipynb").is_file()


def break_chapter_1(root: Path) -> None:
    """Give chapter 1's executed notebook in ``root/outputs`` an error, as if its run had written it."""
    path = root / "outputs" / "notebooks" / "01_entropy_separability.ipynb"
    nb = json.loads(path.read_text())
    cell = next(c for c in nb["cells"] if c["cell_type"] == "code")
    cell["outputs"].append(
        {"output_type": "error", "ename": "ClaimCheckError", "evalue": "A2 broke", "traceback": []}
    )
    path.write_text(json.dumps(nb))
    # its manifest vouches for it, so the tree's check (verify_tree) lets it through
    manifest = load_manifest(path)
    digests = {**manifest.outputs, **output_digests(root / "outputs", [path])}
    write_manifest(path, dataclasses.replace(manifest, outputs=digests))


def test_a_notebook_with_an_error_fails_the_build_before_sphinx_starts(book_copy):
    break_chapter_1(book_copy)
    for attempt in ("first build", "second build, nothing changed"):
        proc = build_book(book_copy)
        said = proc.stdout + proc.stderr
        assert proc.returncode != 0, attempt
        assert "executed notebook 01_entropy_separability.ipynb: cell" in said, attempt
        assert "ClaimCheckError: A2 broke" in said, attempt
        assert "the book build failed (no book)" in said, attempt
        assert not (book_copy / "_build").exists(), attempt  # no site folder: jupyter-book never ran


def test_the_sphinx_extension_fails_every_build_of_a_notebook_with_an_error(book_copy):
    """A build that ``ntpnb book`` does not start (``jupyter-book build``) fails on it too, each time."""
    break_chapter_1(book_copy)
    (book_copy / "_toc.yml").write_text("format: jb-book\nroot: outputs/notebooks/01_entropy_separability\n")
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    build = [str(jupyter_book), "build", str(book_copy), "-W", "-n", "--keep-going"]
    for attempt in ("first build", "second build, nothing changed"):  # the second reads no page again
        proc = subprocess.run(build, cwd=book_copy, capture_output=True, text=True)
        said = proc.stdout + proc.stderr
        assert proc.returncode != 0, attempt
        assert "executed notebook 01_entropy_separability.ipynb: cell" in said, attempt
        assert "ClaimCheckError: A2 broke" in said, attempt


_BADGE = re.compile(
    r'<(a|span) class="ntpnb-badge ntpnb-v-[a-z-]+"(?: href="([^"]*)")? title="([^"]*)">'
    r'<span class="ntpnb-badge-id">([AB]\d+)</span><span class="ntpnb-badge-verdict">([^<]*)</span>'
)


#: A chip of the introduction's glance: its claim id and its kind ("" for none).
_CHIP = re.compile(
    r'class="ntpnb-chip"[^>]*><span class="ntpnb-chip-id">([AB]\d+)</span>'
    r'(?: <span class="ntpnb-chip-kind">([^<]*)</span>)?'
)


def _badges(page: Path) -> dict[str, tuple[str | None, str, str]]:
    """Claim id -> (link, title, verdict) of every verdict badge of a built page."""
    return {m[3]: (m[1] or None, m[2], m[4]) for m in _BADGE.findall(page.read_text())}


def test_the_scoreboard_opens_the_introduction_and_each_chapter_with_the_reports_verdicts(built_book):
    """Every claim's badge and short statement on the introduction; each chapter's own under its
    title; the report's words; a badge opens the claim's card, a chapter's short statement its section."""
    html = built_book / "_build" / "html"
    data = json.loads((built_book / "outputs" / "verdicts.json").read_text())
    verdicts = {c["id"]: c for c in data["claims"]}
    report = html / "outputs" / "report.html"
    cards = parse(report).ids
    intro_page = html / "book" / "intro.html"
    intro = _badges(intro_page)
    assert set(intro) == set(CLAIMS)
    for cid, (link, title, verdict) in intro.items():
        assert verdict == verdicts[cid]["verdict"] and html_unescape(title).endswith(verdicts[cid]["phrase"])
        parts = urlsplit(link)  # the badge opens the claim's card on the report
        assert (intro_page.parent / unquote(parts.path)).resolve() == report, link
        assert parts.fragment == verdicts[cid]["card"] and parts.fragment in cards, link
    intro_text = html_unescape(re.sub(r"<[^>]+>", "", intro_page.read_text()))
    assert all(CLAIMS[cid].short in intro_text for cid in CLAIMS)  # on the page, not on hover only
    # at a glance: every claim a chip under its verdict, each verdict but reproduced with its kind
    chips = dict(_CHIP.findall(intro_page.read_text()))
    assert set(chips) == set(CLAIMS)
    for cid, kind in chips.items():
        assert html_unescape(kind) == verdicts[cid]["kind"], cid
        assert bool(kind) == (verdicts[cid]["verdict"] != REPRODUCED), cid
    text = html_unescape(re.sub(r"<[^>]+>", "", report.read_text())).replace("\u2019", "'")  # smart quotes
    for cid, claim in verdicts.items():  # the report says the same words, its badge then its basis
        named = verdict_words(claim["verdict"], claim["kind"])
        basis = claim["phrase"].removeprefix(named).removeprefix(": ")
        said = r"\s*".join(re.escape(x) for x in (claim["verdict"], claim["kind"], basis) if x)
        assert re.search(said, text), cid
    for page in sorted((html / "outputs" / "notebooks").glob("*.html")):
        own = {c["id"] for c in data["claims"] if any(s["notebook"] == page.stem for s in c["sections"])}
        found = _badges(page)
        assert set(found) == own, page.stem
        if not own:  # a chapter of maps only (beyond the papers) checks no claim: no badges
            continue
        text = page.read_text()
        first_heading = text.index("</h1>")
        assert text.index("ntpnb-chapter-verdicts") > first_heading, "the badges sit under the title"
        shorts = re.findall(r'<a class="ntpnb-short" href="([^"]*)">(.*?)</a>', text)
        ids = parse(page).ids
        for cid, (link, _, verdict) in found.items():
            assert verdict == verdicts[cid]["verdict"]
            assert link.endswith(f"report.html#{verdicts[cid]['card']}"), (page.stem, cid, link)
        for href, short in shorts:  # a short statement links to its section here
            assert href.startswith("#") and href[1:] in ids, (page.stem, short, href)
        assert len(shorts) == len(own), page.stem


def test_no_verdict_pairs_a_negative_word_with_n_of_n(built_book):
    """The report's and the claims page's verdict cells never say "does not reproduce: holds at 5 of 5"."""
    negative = re.compile(r"does not reproduce|not established|check failed|holds at some seeds|fails")
    for name in ("report", "claim_list"):
        for row in (built_book / "outputs" / f"{name}.md").read_text().splitlines():
            if not row.startswith("|"):
                continue
            for cell in row.split("|"):
                full = re.search(r"\b(\d+) of \1 seeds?\b", cell)
                assert not (full and negative.search(cell)), (name, cell)


#: A number as a page writes it: a sign, digits, a decimal part, an exponent; a percentage.
_NUMBER = re.compile(r"(?<![\w.])[-−]?\d+(?:\.\d+)?(?:e[+-]?\d+)?%?")


def _page_text(page: Path) -> str:
    """A built page's text: inline spans joined to their words (-<span>1.79e-06</span>), other tags
    dropped, entities read, white space folded."""
    text = re.sub(r"</?span[^>]*>", "", page.read_text())
    return " ".join(html_unescape(re.sub(r"<[^>]+>", " ", text)).split())


def test_every_number_of_a_summary_row_is_the_number_its_chapters_show(built_book):
    """Each summary row's numbers, rounded as the report shows them, stand on each chapter page that
    checks the claim: the chapter says the same numbers for the same instance and seeds."""
    html = built_book / "_build" / "html"
    data = json.loads((built_book / "outputs" / "verdicts.json").read_text())
    report = (built_book / "outputs" / "report.md").read_text()
    checked = 0
    for claim in data["claims"]:
        notebooks = dict.fromkeys(s["notebook"] for s in claim["sections"])
        if not claim["summary"] or not notebooks:
            continue
        row = next(line for line in report.splitlines() if line.startswith(f"| [**{claim['id']}**]"))
        numbers = set(_NUMBER.findall(row.rsplit(" | ", 1)[1]))
        for notebook in notebooks:
            text = _page_text(html / "outputs" / "notebooks" / f"{notebook}.html")
            text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)  # a page groups long counts: 20,000
            missing = sorted(n for n in numbers if not re.search(rf"(?<![\w.]){re.escape(n)}(?![\d])", text))
            assert not missing, (claim["id"], notebook, missing)
            checked += 1
    assert checked >= 10  # the quick book's claims that a chapter sums up
