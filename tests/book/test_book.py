"""The book builds from the executed notebooks with zero warnings, and refuses a broken one."""

from __future__ import annotations

import dataclasses
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from ntpnb.chapter.provenance import load_manifest, output_digests, write_manifest
from ntpnb.chapter.registry import CLAIMS

from conftest import build_book

pytestmark = pytest.mark.slow


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
        assert not re.search(r"\[(PASS|FAIL|FOUND|OPEN)\] [AB]\d", page), f"{name} prints a check line"
        blocks = re.findall(r'<details class="ntpnb-checks[^"]*"><summary>([^<]*)</summary>', page)
        sections = [b for b in blocks if b.startswith("Checks of this section: ")]
        assert len(sections) >= 2 and blocks[-1].startswith("Every check of this chapter: "), name
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
    chapter = (html / "06_attention.html").read_text()
    table = chapter[chapter.index('id="the-setting-side-by-side"') :]
    assert "<th" in table[: table.index("</table>")] and "official code" in table
    trials = json.loads((built_book / "outputs" / "claims" / "06_attention.json").read_text())
    shown = trials["parameters"]["n_trials"]
    named = rf'pasted-text">{shown}</span>[^<]{{0,40}}<code[^>]*><span class="pre">n_trials<'
    assert re.search(named, chapter), "the run's n_trials, beside its name"


def test_the_api_page_documents_every_public_name_from_its_docstring(built_book):
    """Every name of ``__all__`` of the public modules has an entry with its docstring's summary."""
    import ntpnb
    from ntpnb import attention, errors, optim

    page = (built_book / "_build" / "html" / "book" / "api.html").read_text()
    ids = set(re.findall(r'<dt class="sig sig-object py" id="([^"]+)"', page))
    modules = {"ntpnb": ntpnb, "ntpnb.attention": attention, "ntpnb.optim": optim, "ntpnb.errors": errors}
    documented_elsewhere = {"optim", "attention", *errors.__all__}  # their own sections
    for module_name, module in modules.items():
        for name in module.__all__:
            if (module is ntpnb and name in documented_elsewhere) or name.startswith("__"):
                continue
            assert f"{module_name}.{name}" in ids, f"{module_name}.{name} has no entry on the API page"
    for function in (ntpnb.ntp_svm, attention.graph_svm, optim.normalized_gd):
        # the longest run of the summary line's plain text: its docstring, not only its signature
        summary = function.__doc__.strip().splitlines()[0]
        plain = max(re.split(r"``[^`]*``|:\w+:`[^`]*`|['\"]", summary), key=len)
        assert plain.strip() in page, plain
    assert "ntpnb.settings.SVM_KKT_TOL" in ids  # every tolerance, with what it bounds


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
        assert ids <= set(CLAIMS), f"{path.stem} checks unregistered ids {sorted(ids - set(CLAIMS))}"


def test_chapter_sources_are_published_for_download(built_book):
    html = built_book / "_build" / "html"
    for source in (built_book / "notebooks").glob("*.md"):
        assert (html / "_sources" / "notebooks" / source.name).read_text() == source.read_text()
        assert (html / "_sources" / "outputs" / "notebooks" / f"{source.stem}.ipynb").is_file()


def test_a_notebook_with_an_error_fails_the_build(book_copy):
    path = book_copy / "outputs" / "notebooks" / "01_entropy_separability.ipynb"
    nb = json.loads(path.read_text())
    cell = next(c for c in nb["cells"] if c["cell_type"] == "code")
    cell["outputs"].append(
        {"output_type": "error", "ename": "ClaimCheckError", "evalue": "A2 broke", "traceback": []}
    )
    path.write_text(json.dumps(nb))
    # as if its run had written it so (its manifest vouches for it): the Sphinx extension catches it
    manifest = load_manifest(path)
    digests = {**manifest.outputs, **output_digests(book_copy / "outputs", [path])}
    write_manifest(path, dataclasses.replace(manifest, outputs=digests))
    for attempt in ("first build", "second build, nothing changed"):
        proc = build_book(book_copy)
        assert proc.returncode != 0, attempt
        assert "01_entropy_separability.ipynb: cell" in proc.stdout + proc.stderr, attempt
        assert "ClaimCheckError: A2 broke" in proc.stdout + proc.stderr, attempt
