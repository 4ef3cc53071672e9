"""The scoreboard: one verdict badge per claim, atop the introduction and atop each chapter.

``ntpnb book`` writes ``verdicts.json`` beside the report (:func:`scoreboard_data`): every claim's
verdict as :attr:`~ntpnb.book.verdicts.Verdict.phrase` words it, so the badges say what the
report and the claims page say, word for word, and the sections of each chapter that check it.
The book's Sphinx extension (:func:`setup`) draws the badges: the introduction's
``{ntpnb-scoreboard}`` directive shows every claim, grouped by paper; each chapter page gets the
badges of the claims it checks under its title. A badge carries the verdict in words (colour is
never the only signal) and links to the section that checks the claim.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from ..chapter.registry import CLAIMS, PAPERS
from .verdicts import Verdict

#: The file ``ntpnb book`` writes beside the report, and the extension reads.
SCOREBOARD_FILE = "verdicts.json"
#: Where the chapters' executed notebooks sit in the book's sources.
CHAPTERS = "outputs/notebooks/"
#: The directive that shows every claim's badge (filled in once every chapter's sections are known).
DIRECTIVE = "ntpnb-scoreboard"


def scoreboard_data(results: Mapping[str, Verdict], places: Mapping[str, Sequence[tuple[str, str]]]) -> dict:
    """Each claim's verdict and ``places[claim]``, the ``(notebook, anchor)`` of the sections checking it."""
    claims = []
    for cid, spec in CLAIMS.items():
        v = results[cid]
        where = [{"notebook": nb, "anchor": anchor} for nb, anchor in places.get(cid, [])]
        claims.append(
            {
                "id": cid,
                "paper": spec.paper,
                "where": spec.where,
                "verdict": v.verdict,
                "phrase": v.phrase,
                "sections": where,
            }
        )
    return {"papers": dict(PAPERS), "claims": claims}


def badges_html(claims: Sequence[tuple[Mapping[str, Any], str | None]]) -> str:
    """A row of badges, each the claim id and its verdict in words, coloured by the verdict, linked.

    ``claims`` pairs each claim with its link (None: no link).
    """
    badges = []
    for claim, link in claims:
        title = html.escape(f"{claim['id']} ({claim['where']}): {claim['phrase']}", quote=True)
        inner = (
            f'<span class="ntpnb-badge-id">{html.escape(claim["id"])}</span>'
            f'<span class="ntpnb-badge-verdict">{html.escape(claim["verdict"])}</span>'
        )
        # the verdict's CSS class: "ntpnb-v-reproduced-with-a-qualification"
        classes = "ntpnb-badge ntpnb-v-" + claim["verdict"].replace(" ", "-")
        if link is None:
            badges.append(f'<span class="{classes}" title="{title}">{inner}</span>')
        else:
            link = html.escape(link, quote=True)
            badges.append(f'<a class="{classes}" href="{link}" title="{title}">{inner}</a>')
    return "".join(badges)


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


def _section_uri(app: Sphinx, fromdoc: str, notebook: str, anchor: str) -> str:
    """The address, from page ``fromdoc``, of section ``anchor`` (a MyST slug) of chapter ``notebook``."""
    target = CHAPTERS + notebook
    slugs = app.env.metadata.get(target, {}).get("myst_slugs", {})
    node_id = slugs[anchor][1] if anchor in slugs else ""
    page = "" if target == fromdoc else app.builder.get_relative_uri(fromdoc, target)
    return page + (f"#{node_id}" if node_id else "")


def _fill(app: Sphinx, doctree: nodes.document, fromdoc: str) -> None:
    """Draw the scoreboard where the directive stands, and a chapter's own badges under its title."""
    path = Path(app.srcdir) / "outputs" / SCOREBOARD_FILE
    if not path.is_file():  # ``ntpnb book`` wrote none
        for node in placeholders(doctree, DIRECTIVE):
            node.replace_self(
                nodes.paragraph(text="No run has recorded a verdict yet: run `ntpnb reproduce`.")
            )
        return
    data = json.loads(path.read_text(encoding="utf-8"))
    rows = []  # the introduction's table: a row of badges per paper
    for paper, title in data["papers"].items():
        claims = [  # each linked to the first section that checks it
            (c, _section_uri(app, fromdoc, **c["sections"][0]) if c["sections"] else None)
            for c in data["claims"]
            if c["paper"] == paper
        ]
        rows.append(
            f'<tr><th scope="row">Paper {html.escape(paper)}<br><span class="ntpnb-paper-title">'
            f"{html.escape(title)}</span></th><td>{badges_html(claims)}</td></tr>"
        )
    table = f'<table class="ntpnb-scoreboard"><tbody>{"".join(rows)}</tbody></table>'
    for node in placeholders(doctree, DIRECTIVE):
        node.replace_self(nodes.raw("", table, format="html"))
    if fromdoc.startswith(CHAPTERS):
        notebook = fromdoc.removeprefix(CHAPTERS)
        own = []  # the claims it checks, each linked to its first section here that does
        for c in data["claims"]:
            if anchors := [s["anchor"] for s in c["sections"] if s["notebook"] == notebook]:
                own.append((c, _section_uri(app, fromdoc, notebook, anchors[0])))
        section = next(iter(doctree.findall(nodes.section)), None)
        if own and section is not None and isinstance(section[0], nodes.title):
            row = f'<div class="ntpnb-chapter-verdicts">{badges_html(own)}</div>'
            section.insert(1, nodes.raw("", row, format="html"))


def setup(app: Sphinx) -> None:
    """Register the scoreboard directive, the badges' stylesheet and the step that draws them."""
    app.add_directive(DIRECTIVE, Placeholder)
    app.add_css_file("ntpnb-verdicts.css")
    app.connect("doctree-resolved", _fill)
