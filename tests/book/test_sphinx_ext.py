"""The Sphinx extension: the check that refuses broken notebooks, table words kept whole, the scoreboard."""

from __future__ import annotations

import json

from docutils import nodes

from ntpnb._text import NO_BREAK_SPACE, group_thousands, number_pieces
from ntpnb.book._bibliography import SurnameSorting, folded
from ntpnb.book._executed import notebook_problems
from ntpnb.book._glossary import TERMS, first_uses
from ntpnb.book._scoreboard import badge_html, claims_html, glance_html, scoreboard_data
from ntpnb.book._term_links import link_first_uses
from ntpnb.book._words import (
    WORD_CLASS,
    WORD_JOINER,
    inline_myst_html,
    keep_closing_punctuation,
    keep_numbers_whole,
    keep_table_words,
    split_words,
    words_html,
)
from ntpnb.evidence._registry import CLAIMS
from ntpnb.evidence._verdicts import NOT_REPRODUCED, QUALIFIED, REPRODUCED, Verdict
from ntpnb.evidence._vocabulary import FAILS_AS_STATED


def write(tmp_path, outputs, metadata=None, source="x"):
    nb = {
        "cells": [{"cell_type": "code", "source": source, "metadata": {}, "outputs": outputs}],
        "metadata": metadata or {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(nb))
    return path


def test_clean_notebook_has_no_problems(tmp_path):
    path = write(tmp_path, [{"output_type": "stream", "name": "stdout", "text": "ok\n"}])
    assert notebook_problems(path) == []


def test_error_output_is_a_problem(tmp_path):
    error = {"output_type": "error", "ename": "ClaimCheckError", "evalue": "A2 failed", "traceback": []}
    (problem,) = notebook_problems(write(tmp_path, [error]))
    assert "cell 0 raised ClaimCheckError: A2 failed" in problem


def test_stderr_output_is_a_problem(tmp_path):
    warning = {"output_type": "stream", "name": "stderr", "text": "RuntimeWarning: overflow\n"}
    (problem,) = notebook_problems(write(tmp_path, [warning]))
    assert "stderr" in problem and "overflow" in problem


def test_papermill_exception_flag_is_a_problem(tmp_path):
    path = write(tmp_path, [], metadata={"papermill": {"exception": True}})
    assert notebook_problems(path) == ["papermill recorded an exception during execution"]


def test_the_concluding_list_of_failed_checks_is_no_problem(tmp_path):
    error = {"output_type": "error", "ename": "ClaimCheckError", "evalue": "2 checks failed", "traceback": []}
    flag = {"papermill": {"exception": True}}
    assert notebook_problems(write(tmp_path, [error], flag, source="claims.conclude()\n")) == []
    other = {"output_type": "error", "ename": "ValueError", "evalue": "bad", "traceback": []}
    problems = notebook_problems(write(tmp_path, [other], flag, source="claims.conclude()"))
    assert problems == ["papermill recorded an exception during execution", "cell 0 raised ValueError: bad"]


def test_a_figure_without_caption_or_alt_text_is_a_problem(tmp_path):
    image = {"output_type": "display_data", "data": {"image/png": ""}, "metadata": {}}
    source = 'show_figure(fig, "a1_gap", layout)'
    problems = notebook_problems(write(tmp_path, [image], source=source))
    assert problems == [
        "cell 0 shows a figure: no caption (cell metadata mystnb.figure.caption)",
        "cell 0 shows a figure: no name (cell metadata mystnb.figure.name)",
        "cell 0 shows a figure: no alt text (cell metadata mystnb.image.alt)",
    ]


# ------------------------------------------------------------------ words kept whole in tables
def test_a_word_a_browser_could_break_is_kept_whole():
    text = "token-priority graphs: d/m = 1/2, B4-B6 and -> (seeds 0-4)"
    pieces = split_words(text)
    assert "".join(p for p, _ in pieces) == text
    assert [p for p, keep in pieces if keep] == ["token-priority", "d/m", "1/2,", "B4-B6", "->", "0-4)"]
    assert split_words("plain words only") == [("plain words only", False)]
    assert words_html("a<b x-y") == 'a&lt;b <span class="ntpnb-word">x-y</span>'


def test_table_cells_keep_their_words_whole_but_not_their_math_or_code():
    entry = nodes.entry(
        "",
        nodes.paragraph(
            "",
            "",
            nodes.Text("not seed-independent: "),
            nodes.math("", "a-b"),
            nodes.literal("", "x/y"),
            nodes.strong("", "B4-B6"),
        ),
    )
    outside = nodes.paragraph("", "a well-known word outside a table")
    doctree = nodes.document("", "")
    doctree += [nodes.table("", nodes.tgroup("", nodes.tbody("", nodes.row("", entry)))), outside]
    keep_table_words(None, doctree, "page")
    kept = [n.astext() for n in doctree.findall(nodes.inline) if WORD_CLASS in n["classes"]]
    assert kept == ["seed-independent:", "B4-B6"]
    assert entry.astext() == "not seed-independent: a-bx/yB4-B6"  # the text itself is unchanged
    assert outside.astext() == "a well-known word outside a table" and not list(outside.findall(nodes.inline))


def test_inline_math_and_code_keep_the_punctuation_that_closes_them_on_their_line():
    paragraph = nodes.paragraph(
        "",
        "",
        nodes.Text("where ("),
        nodes.math("", "x"),
        nodes.Text("), and "),
        nodes.math("", "y"),
        nodes.Text(" holds; "),
        nodes.math("", "z"),
        nodes.Text("."),
        nodes.math("", "w"),
    )
    doctree = nodes.document("", "")
    doctree += paragraph
    keep_closing_punctuation(None, doctree, "page")
    kept = [n for n in paragraph.findall(nodes.inline) if WORD_CLASS in n["classes"]]
    assert [n.astext() for n in kept] == ["x),", "z."]
    assert all(isinstance(n[0], nodes.math) for n in kept)
    assert paragraph.astext() == "where (x), and y holds; z.w"  # the text itself is unchanged
    code = nodes.paragraph("", "", nodes.Text("in "), nodes.literal("", "a b"), nodes.Text("); then"))
    doctree += code
    keep_closing_punctuation(None, doctree, "page")
    assert code.astext() == f"in a b{WORD_JOINER}); then"  # joined: the code's own words still wrap
    assert not list(code.findall(nodes.inline))


def test_a_long_count_is_grouped_by_thousands_and_nothing_else_is():
    assert group_thousands("k = 1000000 and 100000 steps; 20000 vs 1000") == (
        "k = 1,000,000 and 100,000 steps; 20,000 vs 1000"
    )
    for kept in ("arXiv:2402.18551", "51,009", "12345.6", "0.000253", "commit d4df39f", "x12345", "2024"):
        assert group_thousands(kept) == kept


def test_a_number_range_or_quantity_a_line_could_break_inside_is_kept_whole():
    text = "(seeds 0-4), a 10-90% band, tol 1e-08, 19.4 GiB in 0.08 s; token-priority, d/m = 0.5, A1-A16"
    pieces = number_pieces(text)
    assert "".join(p for p, _ in pieces) == text
    assert [p for p, keep in pieces if keep] == ["0-4", "10-90%", "1e-08", "19.4 GiB", "0.08 s"]
    assert number_pieces("-0.154 and 2 apples") == [("-0.154 and 2 apples", False)]


def test_the_prose_keeps_its_numbers_whole_and_grouped_but_not_its_math_or_code():
    paragraph = nodes.paragraph(
        "",
        "",
        nodes.Text("at k = 1000000 (seeds 0-4), "),
        nodes.math("", "10-90"),
        nodes.literal("", "1e-08"),
    )
    doctree = nodes.document("", "")
    doctree += paragraph
    keep_numbers_whole(None, doctree, "page")
    kept = [n.astext() for n in paragraph.findall(nodes.inline) if WORD_CLASS in n["classes"]]
    assert kept == ["0-4"]
    assert paragraph.astext() == "at k = 1,000,000 (seeds 0-4), 10-901e-08"
    unit = nodes.paragraph("", "", nodes.Text("took 19.4 GiB"))
    doctree += unit
    keep_numbers_whole(None, doctree, "page")
    assert [n.astext() for n in unit.findall(nodes.inline)] == [f"19.4{NO_BREAK_SPACE}GiB"]


def test_each_terms_first_use_is_found_once_the_longest_form_first():
    texts = ["The separability LP is an LP; an LP again.", "KKT conditions, and CLARABEL's answer: KKT"]
    found = list(first_uses(texts))
    assert [(i, texts[i][s:e], term) for i, s, e, term in found] == [
        (0, "separability LP", "separability LP"),
        (0, "LP", "LP"),
        (1, "KKT", "KKT"),
        (1, "CLARABEL", "Clarabel"),
    ]
    # a term the page links itself is not linked again; a word inside another is no use
    assert [term for *_, term in first_uses(["pooled trials, a KKT residual"], {"pooled"})] == ["KKT"]
    assert list(first_uses(["unpooled, LPs, L-BFGS-Bx"])) == []
    assert {"KKT", "NNLS", "Clarabel", "L-BFGS", "LP", "separability LP"} <= set(TERMS)


class _Std:
    """The standard domain's glossary terms (lower case -> document, id), as Sphinx keeps them."""

    def __init__(self, terms):
        self._terms = {term.lower(): ("outputs/glossary", f"term-{term}") for term in terms}


class _Env:
    def __init__(self, docs, terms):
        self.all_docs, self._std = set(docs), _Std(terms)

    def get_domain(self, name):
        assert name == "std"
        return self._std


class _Builder:
    def get_relative_uri(self, source, target):
        return "glossary.html" if target != source else ""


class _App:
    def __init__(self, docs, terms=tuple(TERMS)):
        self.env, self.builder = _Env(docs, terms), _Builder()


def _page():
    doctree = nodes.document("", "")
    doctree += nodes.section("", nodes.title("", "KKT in a heading"))
    doctree += nodes.paragraph(
        "", "", nodes.Text("Solved by CLARABEL and verified by its KKT conditions; KKT")
    )
    doctree += nodes.raw(
        "", "<table><tr><td>a <code>NNLS</code> and a rate test</td></tr></table>", format="html"
    )
    doctree += nodes.paragraph(
        "", "", nodes.literal("", "NNLS in code"), nodes.Text(" then NNLS, a rate test.")
    )
    return doctree


def test_a_pages_first_use_of_each_term_links_the_glossary_in_its_text_and_its_own_html():
    doctree = _page()
    link_first_uses(_App({"outputs/glossary", "ch"}), doctree, "ch")
    refs = [(r["refuri"], r.astext()) for r in doctree.findall(nodes.reference)]
    assert refs == [
        ("glossary.html#term-Clarabel", "CLARABEL"),
        ("glossary.html#term-KKT", "KKT"),
        ("glossary.html#term-NNLS", "NNLS"),  # its first use outside code: after the table
    ]
    (raw,) = doctree.findall(nodes.raw)  # the table's own HTML: the page's first "rate test"
    assert raw.astext() == (
        "<table><tr><td>a <code>NNLS</code> and a "
        '<a class="reference internal" href="glossary.html#term-rate test">'
        '<span class="xref std std-term">rate test</span></a></td></tr></table>'
    )
    assert doctree.astext().count("KKT") == 3  # the prose's text itself is unchanged
    # a book without the glossary page (an explore tree's), and the glossary page itself: no links
    for docs, name in (({"ch"}, "ch"), ({"outputs/glossary"}, "outputs/glossary")):
        doctree = _page()
        link_first_uses(_App(docs), doctree, name)
        assert not list(doctree.findall(nodes.reference))


def test_on_the_single_page_each_document_links_its_own_first_uses():
    """The PDF prints the single page (singlehtml): each chapter in it links its terms, as its page."""
    from sphinx import addnodes

    doctree = nodes.document("", "")
    for name in ("ch1", "outputs/glossary", "ch2"):
        read = nodes.document("", "")  # the document as read, inlined as Sphinx's inline_all_toctrees
        text = nodes.Text("verified by its KKT conditions; KKT again")
        read += nodes.section("", nodes.paragraph("", "", text))
        part = addnodes.start_of_file(docname=name)
        part.children = read.children  # as Sphinx does it: the section's parent is still `read`
        doctree += part
    link_first_uses(_App({"outputs/glossary", "ch1", "ch2", "index"}), doctree, "index")
    linked = [(r.parent.parent.parent["docname"], r.astext()) for r in doctree.findall(nodes.reference)]
    assert linked == [("ch1", "KKT"), ("ch2", "KKT")]  # once per chapter, never in the glossary


def _own_link(term: str, shown: str) -> nodes.reference:
    """A page's own link to ``term`` (a ``{term}`` role as Sphinx resolves it), showing ``shown``."""
    inline = nodes.inline(shown, shown, classes=["xref", "std", "std-term"])
    return nodes.reference("", "", inline, internal=True, refuri=f"glossary.html#term-{term}")


def test_a_use_before_the_pages_own_link_to_its_term_is_linked_and_none_after():
    # the report's summary said "only sanity checks" well before its own {term} link did
    doctree = nodes.document("", "")
    doctree += nodes.raw("", "<p>A9: only sanity checks; a finding</p>", format="html")
    doctree += nodes.paragraph(
        "", "", nodes.Text("a row's kind: "), _own_link("sanity check", "sanity check"), nodes.Text(", ")
    )
    doctree += nodes.paragraph("", "", _own_link("finding", "findings"), nodes.Text(" then a sanity check"))
    link_first_uses(_App({"outputs/glossary", "report"}), doctree, "report")
    (raw,) = doctree.findall(nodes.raw)
    assert raw.astext() == (
        '<p>A9: only <a class="reference internal" href="glossary.html#term-sanity check">'
        '<span class="xref std std-term">sanity checks</span></a>; a '
        '<a class="reference internal" href="glossary.html#term-finding">'
        '<span class="xref std std-term">finding</span></a></p>'
    )
    refs = [(r["refuri"], r.astext()) for r in doctree.findall(nodes.reference)]
    assert refs == [  # the page's own two links, nothing after them
        ("glossary.html#term-sanity check", "sanity check"),
        ("glossary.html#term-finding", "findings"),
    ]


def test_the_references_sort_by_surname_with_accents_folded():
    import pybtex.database

    assert folded("Çakmak") == "cakmak" and folded("Candès") == "candes"
    bib = pybtex.database.parse_string(
        """@misc{z, author = {Zhang, Y.}, title = {Z}, year = {2024}}
        @misc{c, author = {Çakmak, Burak}, title = {C}, year = {2024}}
        @misc{a, author = {Cover, Thomas}, title = {A}, year = {1965}}""",
        "bibtex",
    )
    ordered = SurnameSorting().sort(list(bib.entries.values()))
    assert [entry.key for entry in ordered] == ["c", "a", "z"]


# ------------------------------------------------------------------ the scoreboard
def test_the_scoreboard_data_gives_each_claim_its_short_statement_verdict_and_card():
    results = {cid: Verdict(cid, REPRODUCED, "holds at all 5 seeds") for cid in CLAIMS}
    tallies = {"01_entropy": "27 checks across seeds 0-4: 27 hold"}
    data = scoreboard_data(results, {"A1": [("01_entropy", "claim-a1-the-bound"), ("05_over", "")]}, tallies)
    a1 = data["claims"][0]
    assert a1 == {
        "id": "A1",
        "paper": "A",
        "where": "Sec. 2",
        "short": CLAIMS["A1"].short,
        "verdict": REPRODUCED,
        "kind": "",
        "phrase": "reproduced: holds at all 5 seeds",
        "summary": "",
        "card": "claim-a1",
        "sections": [
            {"notebook": "01_entropy", "anchor": "claim-a1-the-bound"},
            {"notebook": "05_over", "anchor": ""},
        ],
    }
    assert [c["id"] for c in data["claims"]] == list(CLAIMS) and set(data["papers"]) == {"A", "B"}
    assert data["chapters"] == tallies  # each chapter's checks across the seeds, as the report says them
    # a verdict other than a plain reproduced carries its kind, in the badge and its title
    results["B10"] = Verdict("B10", NOT_REPRODUCED, "missed", kind=FAILS_AS_STATED, headline="ours $x$")
    b10 = next(c for c in scoreboard_data(results, {})["claims"] if c["id"] == "B10")
    assert (b10["kind"], b10["summary"]) == (FAILS_AS_STATED, "ours $x$")
    assert b10["phrase"] == f"does not reproduce ({FAILS_AS_STATED}): missed"
    badge = badge_html(b10, None)
    assert '<span class="ntpnb-badge-kind">fails as stated, holds under the authors&#39; code</span>' in badge


def test_the_glance_groups_a_papers_claims_by_verdict_each_other_than_reproduced_with_its_kind():
    def claim(cid, verdict, kind=""):
        return {"id": cid, "verdict": verdict, "kind": kind, "phrase": f"{verdict} ({kind})"}

    claims = [
        (claim("A1", REPRODUCED), "report.html#claim-a1"),
        (claim("A16", NOT_REPRODUCED, "a counterexample"), "report.html#claim-a16"),
        (claim("A2", REPRODUCED), None),
    ]
    html = str(glance_html(claims))
    lines = html.split("<dt ")[1:]
    assert [line.split(">", 1)[1].split("<", 1)[0] for line in lines] == [REPRODUCED, NOT_REPRODUCED]
    assert (
        '<a class="ntpnb-chip" href="report.html#claim-a1"' in lines[0] and 'chip-id">A2</span>' in lines[0]
    )
    assert '<span class="ntpnb-chip-kind">a counterexample</span>' in lines[1]
    assert "ntpnb-chip-kind" not in lines[0]  # a plain reproduced has no kind


def test_a_claims_summary_sentence_is_drawn_in_html_with_its_math_typeset_and_roles_as_their_text():
    html = str(inline_myst_html(r"local $\operatorname{corr}$ in {term}`pseudo sets <pseudo set>` & *a* <b>"))
    assert html == (
        'local <span class="math notranslate nohighlight">\\(\\operatorname{corr}\\)</span> in pseudo sets '
        "&amp; <em>a</em> &lt;b&gt;"
    )
    # its numbers as the pages keep theirs: a long count grouped, no line ending on "1.79e-" or "0-"
    html = str(inline_myst_html("at $k$ = 20000 the gap is -1.79e-06 over seeds 0-4 (19.4 GiB)"))
    assert html == (
        'at <span class="math notranslate nohighlight">\\(k\\)</span> = 20,000 the gap is '
        '-<span class="ntpnb-word">1.79e-06</span> over seeds <span class="ntpnb-word">0-4</span> '
        '(<span class="ntpnb-word">19.4\u00a0GiB</span>)'
    )


def test_a_scoreboard_line_is_the_badge_to_the_card_and_the_short_statement_on_the_page():
    claim = {
        "id": "B10",
        "where": "Fig. 5",
        "verdict": QUALIFIED,
        "phrase": "reproduced with a qualification: x",
    }
    claim["short"] = "An example claim: attention aligns with the pseudo-graph's SVM"
    listed = claims_html([(claim, "../outputs/report.html#claim-b10", "#the-checks"), (claim, None, None)])
    first, second = listed.removeprefix('<ul class="ntpnb-claims"><li>').split("</li><li>")
    badge = 'class="ntpnb-badge ntpnb-v-reproduced-with-a-qualification"'
    assert first.startswith(
        f'<a {badge} href="../outputs/report.html#claim-b10" '
        'title="B10 (Fig. 5): reproduced with a qualification: x"><span class="ntpnb-badge-id">B10</span>'
    )
    word = '<span class="ntpnb-word">pseudo-graph&#39;s</span>'
    short = f"An example claim: attention aligns with the {word} SVM"
    assert first.endswith(f'<a class="ntpnb-short" href="#the-checks">{short}</a>')
    assert second.startswith(f"<span {badge} title=")
    assert second.endswith(f'<span class="ntpnb-short">{short}</span></li></ul>')
    assert "ntpnb-badge-id" not in badge_html(claim, None, with_id=False)
