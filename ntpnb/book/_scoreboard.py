"""The scoreboard: every claim's verdict badge and short statement, atop the introduction and each chapter.

``ntpnb book`` writes ``verdicts.json`` beside the report (:func:`scoreboard_data`): every claim's
short statement (:attr:`~ntpnb.evidence._registry.ClaimSpec.short`), its verdict as
:attr:`~ntpnb.evidence._verdicts.Verdict.phrase` words it (so the badges say what the report says,
word for word), the anchor of its card on the report (:func:`card_anchor`) and the sections of
each chapter that check it. The book's Sphinx extension (:func:`setup`) draws them: the
introduction's ``{ntpnb-scoreboard}`` directive lists every claim, grouped by paper; each chapter
page lists the claims it checks under its title. A badge carries the verdict in words (colour is
never the only signal) and opens the claim's card on the report; on a chapter, the short
statement links to the section that checks the claim.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from docutils import nodes
from markupsafe import Markup
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from .._templates import render_inline
from ..evidence._registry import CLAIMS, PAPERS
from ..evidence._verdicts import Verdict
from ..evidence._vocabulary import VERDICTS, verdict_words
from ._words import inline_myst_html, words_html

#: The file ``ntpnb book`` writes beside the report, and the extension reads.
SCOREBOARD_FILE = "verdicts.json"
#: Where the chapters' executed notebooks sit in the book's sources.
CHAPTERS = "outputs/notebooks/"
#: The report's page, where each claim has its card.
REPORT = "outputs/report"
#: The directive that shows both papers' verdicts at a glance (filled in once every chapter's
#: sections are known), and the one that lists every claim in plain words with its badge.
DIRECTIVE = "ntpnb-scoreboard"
CLAIMS_DIRECTIVE = "ntpnb-claims"
#: What each paper is about, in the headings of the scoreboard, the report and the claims page.
PAPER_TOPICS: Mapping[str, str] = {"A": "linear decoder", "B": "one-layer self-attention"}


def card_anchor(claim_id: str) -> str:
    """The anchor of the card of ``claim_id`` on the report: ``"claim-a1"``."""
    return f"claim-{claim_id.lower()}"


def scoreboard_data(
    results: Mapping[str, Verdict],
    places: Mapping[str, Sequence[tuple[str, str]]],
    chapters: Mapping[str, str] | None = None,
) -> dict:
    """Each claim's statement, verdict, kind, summary, card and ``places[claim]``; each chapter's counts.

    ``places[claim]`` holds the ``(notebook, anchor)`` of each section that checks the claim;
    ``chapters[notebook]`` what its checks came to across the seeds, in the report's words.
    """
    claims = []
    for cid, spec in CLAIMS.items():
        v = results[cid]
        where = [{"notebook": nb, "anchor": anchor} for nb, anchor in places.get(cid, [])]
        claims.append(
            {
                "id": cid,
                "paper": spec.paper,
                "where": spec.where,
                "short": spec.short,
                "verdict": v.verdict,
                "kind": v.kind,
                "phrase": v.phrase,
                "summary": v.summary,
                "card": card_anchor(cid),
                "sections": where,
            }
        )
    papers = {p: PAPER_TOPICS[p] for p in PAPERS}
    return {"papers": papers, "claims": claims, "chapters": dict(chapters or {})}


def badge_html(claim: Mapping[str, Any], link: str | None, with_id: bool = True) -> Markup:
    """A badge: the claim id (unless not ``with_id``), its verdict and kind in words, coloured by the verdict.

    ``claim`` holds the claim's ``id``, ``where``, ``verdict``, ``kind`` and ``phrase`` (the badge's
    tooltip); ``link`` is where the badge leads (None: nowhere). Its CSS class names the verdict:
    ``ntpnb-v-reproduced-with-a-qualification``.
    """
    title = f"{claim['id']} ({claim['where']}): {claim['phrase']}"
    return render_inline(
        "badge.html",
        id=claim["id"],
        verdict=claim["verdict"],
        kind=claim.get("kind", ""),
        title=title,
        link=link,
        with_id=with_id,
    )


def claims_html(claims: Sequence[tuple[Mapping[str, Any], str | None, str | None]]) -> Markup:
    """A list of claims, each its badge (linked to its card) and its short statement (linked or not).

    ``claims`` holds each claim (as :func:`scoreboard_data` gives it), the address of its card
    and the address its short statement links to (None: no link).
    """
    items = [
        {"badge": badge_html(claim, card), "short": words_html(claim["short"]), "section": section}
        for claim, card, section in claims
    ]
    return render_inline("claims.html", items=items)


def glance_html(claims: Sequence[tuple[Mapping[str, Any], str | None]]) -> Markup:
    """One paper's verdicts at a glance: the plain verdicts as id chips, each other claim with its kind.

    ``claims`` holds each claim (as :func:`scoreboard_data` gives it) and the address of its card.
    One line per verdict, in the order of :data:`~ntpnb.evidence._vocabulary.VERDICTS`.
    """
    lines = []
    for verdict in VERDICTS:
        own = [(c, card) for c, card in claims if c["verdict"] == verdict]
        if own:
            chips = [
                {"id": c["id"], "kind": c["kind"], "card": card, "title": c["phrase"]} for c, card in own
            ]
            lines.append({"verdict": verdict, "chips": chips})
    return render_inline("glance.html", lines=lines)


# -- Sphinx ------------------------------------------------------------------------------------


class Placeholder(SphinxDirective):
    """A directive drawn once the page is written: a container classed ``<directive name>-placeholder``."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        """The placeholder, replaced when the page is written."""
        return [nodes.container(classes=[f"{self.name}-placeholder"])]


def placeholders(doctree: nodes.document, name: str) -> list[nodes.container]:
    """The placeholders of directive ``name`` in ``doctree``."""
    return [n for n in doctree.findall(nodes.container) if f"{name}-placeholder" in n["classes"]]


def _single_page(app: Sphinx) -> bool:
    """Whether the book is written as one page (the edition the PDF is printed from)."""
    return app.builder.name == "singlehtml"


def _page_uri(app: Sphinx, fromdoc: str, target: str) -> str:
    """The address of page ``target`` from page ``fromdoc``: none on it, nor on the single page."""
    if target == fromdoc or _single_page(app):  # there every page's ids are on the one page
        return ""
    return app.builder.get_relative_uri(fromdoc, target)


def _section_uri(app: Sphinx, fromdoc: str, notebook: str, anchor: str) -> str:
    """The address, from page ``fromdoc``, of section ``anchor`` (a MyST slug) of chapter ``notebook``."""
    target = CHAPTERS + notebook
    slugs = app.env.metadata.get(target, {}).get("myst_slugs", {})
    node_id = slugs[anchor][1] if anchor in slugs else ""
    return _page_uri(app, fromdoc, target) + (f"#{node_id}" if node_id else "")


def _card_uri(app: Sphinx, fromdoc: str, claim: Mapping[str, Any]) -> str | None:
    """The address, from page ``fromdoc``, of the claim's card on the report (None: no report)."""
    if REPORT not in app.env.found_docs:
        return None
    return f"{_page_uri(app, fromdoc, REPORT)}#{claim['card']}"


def _chapter_claims(app: Sphinx, fromdoc: str, data: Mapping[str, Any], notebook: str) -> str:
    """The block of ``notebook``'s own claims, each linked to its card and its first section there.

    Then what the seeds show: each claim's summary sentence (the report's, word for word) and the
    chapter's checks counted across the seeds. Empty where the chapter checks no claim.
    """
    own = []
    for c in data["claims"]:
        if anchors := [s["anchor"] for s in c["sections"] if s["notebook"] == notebook]:
            own.append((c, _card_uri(app, fromdoc, c), _section_uri(app, fromdoc, notebook, anchors[0])))
    if not own:
        return ""
    sentences = [
        {
            "id": c["id"],
            "named": verdict_words(c["verdict"], c["kind"]),
            "sentence": inline_myst_html(c["summary"]),
        }
        for c, _, _ in own
        if c["summary"]
    ]
    counts = inline_myst_html(data.get("chapters", {}).get(notebook, ""))  # "seeds 0-4" kept whole
    return render_inline("chapter_verdicts.html", claims=claims_html(own), sentences=sentences, counts=counts)


def _chapter_pages(doctree: nodes.document, fromdoc: str) -> list[tuple[str, nodes.Element]]:
    """Each chapter in ``doctree`` and the node that holds it: the page, or each on the single page."""
    if fromdoc.startswith(CHAPTERS):
        return [(fromdoc.removeprefix(CHAPTERS), doctree)]
    return [
        (marker["docname"].removeprefix(CHAPTERS), marker)
        for marker in doctree.findall(addnodes.start_of_file)
        if marker["docname"].startswith(CHAPTERS)
    ]


def _under_title(page: nodes.Element, row: str) -> None:
    """Put the HTML ``row`` under the title of ``page``'s first section (none: nowhere)."""
    section = next(iter(page.findall(nodes.section)), None)
    if section is not None and isinstance(section[0], nodes.title):
        section.insert(1, nodes.raw("", row, format="html"))


def _fill(app: Sphinx, doctree: nodes.document, fromdoc: str) -> None:
    """Draw the scoreboard where the directive stands, and a chapter's own claims under its title.

    On the single page the PDF is printed from, every chapter's, each under its own title.
    """
    path = Path(app.srcdir) / "outputs" / SCOREBOARD_FILE
    if not path.is_file():  # ``ntpnb book`` wrote none
        for node in placeholders(doctree, DIRECTIVE):
            node.replace_self(
                nodes.paragraph(text="No run has recorded a verdict yet: run `ntpnb reproduce`.")
            )
        for node in placeholders(doctree, CLAIMS_DIRECTIVE):
            node.replace_self(nodes.paragraph(text=""))
        return
    data = json.loads(path.read_text(encoding="utf-8"))
    papers = []  # the introduction's: each paper at a glance; each paper's claims in plain words
    for paper, topic in data["papers"].items():
        claims = [(c, _card_uri(app, fromdoc, c)) for c in data["claims"] if c["paper"] == paper]
        papers.append(
            {
                "letter": paper,
                "topic": topic,
                "glance": glance_html(claims),
                "claims": claims_html([(c, card, None) for c, card in claims]),
            }
        )
    for directive, template in ((DIRECTIVE, "scoreboard.html"), (CLAIMS_DIRECTIVE, "claims_by_paper.html")):
        drawn = render_inline(template, papers=papers)
        for node in placeholders(doctree, directive):
            node.replace_self(nodes.raw("", drawn, format="html"))
    for notebook, page in _chapter_pages(doctree, fromdoc):  # the claims each chapter checks
        if row := _chapter_claims(app, fromdoc, data, notebook):
            _under_title(page, row)


def setup(app: Sphinx) -> None:
    """Register the scoreboard directive, the badges' stylesheet and the step that draws them."""
    app.add_directive(DIRECTIVE, Placeholder)
    app.add_directive(CLAIMS_DIRECTIVE, Placeholder)
    app.add_css_file("ntpnb-verdicts.css")
    app.connect("doctree-resolved", _fill)
