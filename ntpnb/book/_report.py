"""The generated pages: the reproducibility report, the claims page and the introduction's verdicts.

``ntpnb book`` calls :func:`write_report` before building, so these pages are always made from
the chapter records of the last runs (``claims/*.json`` of the tree and of its seed trees) and
the registry of claims (:mod:`ntpnb.evidence._registry`), never by hand.

The report opens with the verdicts: what ran, in one line, and a summary of every claim of the
registry (its short statement, its verdict (:mod:`ntpnb.evidence._verdicts`) as a badge, and why). Then one
card per claim (:func:`claim_card`): the paper's statement and value, the evidence with our
values across the seeds, qualifications, findings and measurements beyond the paper, each a
sentence, and links to the chapter sections that check it (:func:`chapter_sections`). Then every
check of every chapter, each chapter's table collapsed; the verdict rule; what ran, in full (the
records read, the seeds, what was not counted or not tested); and the machines of the runs.
Checks naming an id missing from the registry are listed apart.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt
from mdit_py_plugins.colon_fence import colon_fence_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin

from .._markdown import escape_markdown, escape_markdown_but_math, markdown_table
from .._templates import render
from .._text import join_words, value_range
from ..evidence._checks import CHECK_LINE, KINDS, Check
from ..evidence._registry import CLAIMS, MAPS, PAPERS, ClaimSpec, MapSpec, sort_key
from ..evidence._series import Series, Sweep, series_of
from ..evidence._verdicts import (
    CheckSummary,
    ProtocolVerdict,
    Verdict,
    format_counts,
    headlines_across,
    sweep_verdicts,
)
from ..evidence._vocabulary import (
    BY_CONSTRUCTION,
    CONSISTENT,
    CONTRADICTED,
    ESTABLISHED,
    FAILS,
    MISSED,
    NOT_TESTED,
    POSITIVE,
    VERDICT_RULE,
    VERDICTS,
    chapter_tally,
    checks_count,
    counted_verdict,
    seeds_span,
    span,
)
from ..records._files import atomic_write_text
from ..records._places import OutputTree
from ..records._platform import platform_section
from ..records._run import ChapterRun, failed_runs, load_chapter_runs
from ..records._sweep import load_sweeps
from ..records._tree import TreeRecord, chapter_seeds, load_tree_record
from ._executed import read_notebook
from ._footers import read_footers
from ._glossary import GLOSSARY_LABEL
from ._scoreboard import PAPER_TOPICS, SCOREBOARD_FILE, badge_html, card_anchor, scoreboard_data
from ._trees import chapter_label, describe_run, visible
from ._words import inline_myst_html

#: A check and the notebook whose run made it.
Made = tuple[str, Check]
#: Notebook -> (claim id, what) of each check it printed -> (heading, anchor) of the section above.
Sections = dict[str, dict[tuple[str, str], tuple[str, str]]]

#: The title of the report's section on the machines of the runs.
PLATFORM_TITLE = "Where the numbers were computed"
#: The profiles of ``ntpnb reproduce``, in words.
PROFILE_WORDS: Mapping[str, str] = {"paper": "the papers' settings", "quick": "the quick test settings"}


@dataclass(frozen=True)
class TreePages:
    """What the generated pages show of a tree, read once: its records, their verdicts and sections."""

    tree: OutputTree
    #: The claim records at the book's seed, and each chapter's sweep over the seeds.
    records: list[ChapterRun]
    sweeps: list[Sweep]
    #: Every claim id of the registry -> its verdict over the sweeps.
    results: dict[str, Verdict]
    #: Claim id -> every check of it, with its notebook, in the records' order.
    by_claim: dict[str, list[Made]]
    #: Claim id -> each of its checks across the seeds, in the records' order.
    series: dict[str, list[Series]]
    sections: Sections
    run: TreeRecord | None
    #: What ran into the tree (:func:`~._trees.describe_run`), escaped for a page.
    label: str
    #: Chapter -> the text of its executed notebook's title, without math marks.
    titles: dict[str, str]
    #: The commits the chapters ran from, as their manifests say (``"commit 460b93a"``).
    commits: tuple[str, ...] = ()
    #: The chapters the tree has not run.
    absent: Sequence[str] = ()
    #: The notebooks whose last run failed, as their records in ``failed/`` say.
    failed: tuple[ChapterRun, ...] = ()
    #: Map id -> its headline across the seeds (its line in the report's maps section).
    map_headlines: Mapping[str, str] = field(default_factory=dict)

    @property
    def check_count(self) -> int:
        """How many checks the chapters made at the book's seed."""
        return sum(len(r.checks) for r in self.records)


def read_tree(tree: OutputTree, absent: Sequence[str] = ()) -> TreePages:
    """Read the records of the tree ``tree`` (and of its seed trees) that the pages show."""
    records = load_chapter_runs(tree.claims)
    sweeps = load_sweeps(tree, records)
    by_claim, series = _by_claim(records, sweeps)
    sections = {r.notebook: chapter_sections(tree.notebooks / f"{r.notebook}.ipynb") for r in records}
    run = load_tree_record(tree.root)
    profiles = sorted({c.profile for r in records for c in r.checks})
    label = escape_markdown(describe_run(run, profiles, chapter_seeds(tree.root, run)))
    titles = _chapter_titles(tree)
    executions = read_footers(tree).executions.values()
    commits = tuple(dict.fromkeys(e.commit.describe() for e in executions))
    results = sweep_verdicts(CLAIMS, sweeps)
    heads = headlines_across(sweeps)
    return TreePages(
        tree,
        records,
        sweeps,
        results,
        by_claim,
        series,
        sections,
        run,
        label,
        titles,
        commits,
        absent,
        failed_runs(tree),
        {mid: heads[mid] for mid in MAPS if mid in heads},
    )


def _by_claim(
    records: Sequence[ChapterRun], sweeps: Sequence[Sweep]
) -> tuple[dict[str, list[Made]], dict[str, list[Series]]]:
    """Claim id -> its checks (with their notebooks) at the book's seed, and -> its series over the seeds."""
    by_claim: dict[str, list[Made]] = defaultdict(list)
    for record in records:
        for check in record.checks:
            by_claim[check.claim].append((record.notebook, check))
    series: dict[str, list[Series]] = defaultdict(list)
    for sweep in sweeps:
        for s in series_of(sweep):
            series[s.first.claim].append(s)
    return by_claim, series


def _chapter_titles(tree: OutputTree) -> dict[str, str]:
    """Chapter -> the text of its executed notebook's first-level title, without math marks."""
    titles = {}
    for path in visible(sorted(tree.notebooks.glob("*.ipynb"))):
        cells = [c for c in read_notebook(path)["cells"] if c.get("cell_type") == "markdown"]
        title = next((text for cell in cells for level, text in _headings(cell) if level == 1), None)
        if title is not None:
            titles[path.stem] = re.sub(r"\$([^$]*)\$", r"\1", title)
    return titles


#: the book's ``myst_heading_anchors``: headings down to this level get an anchor
ANCHOR_LEVELS = 3
_SLUG_CLEAN = re.compile(r"[^\w\u4e00-\u9fff\- ]")


#: CommonMark with dollar math and colon fences, as the book's MyST finds and parses a heading.
_PARSER = MarkdownIt("commonmark").use(dollarmath_plugin).use(colon_fence_plugin)


def heading_slug(heading: str, taken: set[str]) -> str:
    """The anchor MyST gives ``heading`` (GitHub-style slug, ``-1``, ``-2``... if ``taken``).

    MyST makes it from the heading's plain text and inline code, without its math.
    """
    (inline,) = _PARSER.parseInline(heading)
    text = "".join(c.content for c in inline.children or [] if c.type in ("text", "code_inline"))
    slug = _SLUG_CLEAN.sub("", text.lower().replace(" ", "-"))
    unique, i = slug, 1
    while unique in taken:
        unique, i = f"{slug}-{i}", i + 1
    taken.add(unique)
    return unique


def _headings(cell: dict) -> list[tuple[int, str]]:
    """The level and text of each heading of a markdown cell, as MyST finds them (none in a fence)."""
    tokens = _PARSER.parse("".join(cell.get("source", "")))
    return [
        (int(t.tag[1:]), inline.content)
        for t, inline in itertools.pairwise(tokens)
        if t.type == "heading_open"
    ]


def chapter_sections(executed: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """Map (claim id, what) of each printed check line to the section above it.

    The section, as (heading text, anchor), is the nearest level-2 or 3 heading (those with an
    anchor) before the cell printing ``[PASS] <claim> <what>``. A missing notebook gives ``{}``.
    """
    if not executed.exists():
        return {}
    found: dict[tuple[str, str], tuple[str, str]] = {}
    taken: set[str] = set()
    section: tuple[str, str] | None = None
    for cell in read_notebook(executed)["cells"]:
        if cell.get("cell_type") == "markdown":
            for level, heading in _headings(cell):
                if level <= ANCHOR_LEVELS:
                    slug = heading_slug(heading, taken)
                    if level > 1:
                        section = (heading, slug)
            continue
        for out in cell.get("outputs", []):
            text = "".join(out.get("text", "")) if out.get("output_type") == "stream" else ""
            for line in text.splitlines():
                match = CHECK_LINE.match(line)
                if match and section is not None:
                    found.setdefault((match["claim"], match["what"]), section)
    return found


def _link(sections: Sections, made: Made, text: str | None = None) -> str:
    """A link to the section that made the check (else its chapter), as ``text`` or ``1 § <section>``."""
    notebook, check = made
    section = sections.get(notebook, {}).get((check.claim, check.what))
    target = f"/outputs/notebooks/{notebook}.ipynb" + (f"#{section[1]}" if section else "")
    if text is None:  # the chapter as the book numbers it, and the heading, its inline math kept
        heading = section[0] if section else ""
        title = escape_markdown_but_math(heading)
        text = escape_markdown(chapter_label(notebook)) + (f" § {title}" if heading else "")
    return f"[{text}]({target})"


def absent_sentence(absent: Sequence[str]) -> str:
    """What the pages say, after a space, of chapters the tree has not run ("" when it ran them all)."""
    if not absent:
        return ""
    return (
        f" This tree has not run {join_words(escape_markdown(n) for n in absent)}: the claims only "
        f"{'that chapter checks' if len(absent) == 1 else 'those chapters check'} are *not tested* in it."
    )


def _chapters_words(notebooks: Sequence[str]) -> str:
    """``"chapter 7"``, ``"chapters 1-5"``: chapters by the numbers the book gives them."""
    labels = [chapter_label(n) for n in notebooks]
    names = span(map(int, labels)) if all(x.isdigit() for x in labels) else join_words(labels)
    return f"chapter{'s' * (len(labels) != 1)} {names}"


def run_line(pages: TreePages) -> str:
    """What ran, in one line: ``"the papers' settings, seeds 0-4 for every chapter, commit 460b93a"``."""
    run = pages.run
    profiles = [run.profile] if run else sorted({s.book.profile for s in pages.sweeps})
    setting = " and ".join(PROFILE_WORDS.get(p, f"profile {p}") for p in profiles) or "nothing yet"
    if run and run.overrides:
        setting += f" with {run.overrides_text}"
    if run and run.interactive:
        setting = f"an interactive run (not ntpnb reproduce) at {setting}"
    groups: dict[tuple[int, ...], list[str]] = {}
    for sweep in pages.sweeps:
        groups.setdefault(tuple(sorted(sweep.seeds)), []).append(sweep.book.notebook)
    if len(groups) == 1 and not pages.absent:  # a partial run names its chapters
        ((seeds, _),) = groups.items()
        parts = [f"{seeds_span(seeds)} for every chapter"]
    else:
        parts = [f"{seeds_span(seeds)} for {_chapters_words(nbs)}" for seeds, nbs in groups.items()]
    return escape_markdown(", ".join([setting, *parts, *pages.commits]))


def _badge(
    cid: str, verdict: Verdict | ProtocolVerdict, link: str | None = None, with_id: bool = False
) -> str:
    """The verdict's badge with its kind (:func:`~._scoreboard.badge_html`), inline HTML in a MyST page."""
    claim = {
        "id": cid,
        "where": CLAIMS[cid].where if cid in CLAIMS else "",
        "verdict": verdict.verdict,
        "kind": verdict.kind,
        "phrase": verdict.phrase,
    }
    badge = badge_html(claim, link, with_id=with_id)
    return badge.replace("|", "&#124;")  # in a table's row, a bar ends the cell


def _summary(pages: TreePages) -> list[str]:
    """The summary table: every claim, in plain words, its verdict as a badge, and why."""
    rows = []
    for cid, spec in CLAIMS.items():
        verdict = pages.results[cid]
        why = _why(verdict)
        rows.append(
            [f"[**{cid}**](#{card_anchor(cid)})", escape_markdown(spec.short), _badge(cid, verdict), why]
        )
    return [
        "In the *why* column *[a, b]* is a number's range over the seeds, and *x ± s* is an estimate",
        "{term}`pooled` over the seeds' trials with its {term}`standard error`; these terms and the",
        f"others the report uses are defined in the book's {{ref}}`glossary <{GLOSSARY_LABEL}>`.",
        "",
        ":::{table}",
        ":class: ntpnb-summary",
        "",
        markdown_table(["claim", "in plain words", "verdict", "why"], rows),
        ":::",
        "",
    ]


def _why(verdict: Verdict) -> str:
    """The summary's sentence for a claim (MyST): the chapter's headline, else the verdict's why."""
    if verdict.headline:
        return verdict.headline.replace("|", "\\|")  # MyST already; a bar would end the cell
    if verdict.verdict == NOT_TESTED:
        return "no chapter of this run checks it"
    return escape_markdown_but_math(verdict.why)


def _details(summary: str, body: str, classes: str = "", id: str = "", count: str = "") -> list[str]:
    """A collapsed block of the page (``details.md``), as lines: ``summary`` and ``count`` are text.

    ``count``'s numbers and ranges stay whole on a narrow screen (``seeds 0-4``), as the page's do.
    """
    shown = inline_myst_html(count) if count else ""
    return render("details.md", summary=summary, body=body, classes=classes, id=id, count=shown).split("\n")


def _links(pages: TreePages, cid: str) -> str:
    """Links to every chapter section that checks ``cid``, evidence first."""
    made = sorted(pages.by_claim.get(cid, []), key=lambda m: KINDS.index(m[1].kind))
    return "; ".join(dict.fromkeys(_link(pages.sections, m) for m in made))


def check_item(check: CheckSummary) -> str:
    """One check in a sentence: what, ours (its range over the seeds), required, its outcome and how decided.

    ``"mean corr: ours 0.945 ± 0.003 (500 trials); required > 0.99 (on the estimate; ...); missed
    on 500 trials pooled over 5 seeds, contradicted at the 1% level"``.
    """
    what = f"[{check.protocol}] {check.what}" if check.protocol else check.what
    spread = f" ({check.spread})" if check.spread else ""
    sure = f", {check.certainty}" if check.certainty else ""
    outcome = f"{check.outcome} {check.decided}{sure}"
    return f"{what}: ours {check.ours}{spread}; required {check.required}; {outcome}"


def _evidence(verdict: Verdict) -> list[str]:
    """The card's checks: how many of each kind and how they came out, then each in a sentence.

    Evidence and findings listed; sanity checks and measurements counted (every check is in the
    chapter's table below).
    """
    counts = [
        checks_count(kind, [c.outcome for c in verdict.checks if c.kind == kind])
        for kind in KINDS
        if any(c.kind == kind for c in verdict.checks)
    ]
    line = "; ".join(counts) + "."
    listed = [c for c in verdict.checks if c.kind in ("claim", "finding")]
    if not listed:
        return [escape_markdown(line)]
    items = [
        f"- {'*finding:* ' if c.kind == 'finding' else ''}{escape_markdown_but_math(check_item(c))}"
        for c in listed
    ]
    return _details(line, "\n".join(items))


def _protocols(verdict: Verdict) -> list[str]:
    """The verdict under each protocol, the deciding one first, in words (a card has one badge).

    Each line: the key, its words, the verdict with its kind and basis, and why.
    """
    return [
        f"- \\[{escape_markdown(p.key)}\\] {p.words}: *{escape_markdown(p.phrase)}*; "
        f"{escape_markdown_but_math(p.why)}"
        for p in verdict.protocols
    ]


#: The card's fields of sentences, in order: the verdict's attribute and the field's name.
SENTENCES: tuple[tuple[str, str], ...] = (
    ("failures", "Failed"),
    ("findings", "Finding"),
    ("explanations", "Explanation"),
    ("qualifications", "Qualification"),
)
#: The card's fields shown collapsed, in one block: what a reader checks second (a measurement
#: beyond the paper is in no verdict).
ASIDES: tuple[tuple[str, str], ...] = (
    ("beyond", "Beyond the paper"),
    ("marginal", "Marginal seeds"),
    ("notes", "Notes"),
)


def _sentences(items: Sequence[str]) -> list[str]:
    """One sentence as it is, several as a list; plain words but the math a protocol's words quote."""
    if len(items) == 1:
        return [escape_markdown_but_math(items[0])]
    return [f"- {escape_markdown_but_math(item)}" for item in items]


def _asides(verdict: Verdict) -> list[str]:
    """A verdict's measurements beyond the paper, marginal seeds and notes, in one collapsed block.

    None of them: empty.
    """
    parts = [(name, getattr(verdict, attribute)) for attribute, name in ASIDES if getattr(verdict, attribute)]
    if not parts:
        return []
    counts = "; ".join(f"{name.lower()}: {len(items)}" for name, items in parts)
    body = [f"- *{name}:* {escape_markdown_but_math(item)}" for name, items in parts for item in items]
    return _details(counts, "\n".join(body))


def claim_card(pages: TreePages, cid: str, spec: ClaimSpec) -> list[str]:
    """The card of ``cid``: one verdict badge with its kind, the paper's claim, what decides, the evidence.

    Then every failure, finding, qualification, marginal check, measurement beyond the paper and
    note of the verdict in a sentence (each once: what decides is not repeated), and links to
    the chapter sections that check the claim.
    """
    verdict = pages.results[cid]
    fields = [
        ("The paper", [f"{escape_markdown(spec.where)}: {spec.statement}; it reports {spec.paper_value}."])
    ]
    if spec.caveat:
        fields.append(("As stated", [f"{spec.caveat}."]))
    if verdict.deciding:
        fields.append(("Decided by", _sentences(verdict.deciding)))
    said = set(verdict.deciding)
    if verdict.why and verdict.why not in verdict.reasons and not any(verdict.why in d for d in said):
        fields.append(("Ours", [escape_markdown_but_math(verdict.why)]))
    if verdict.protocols:
        fields.append(("Protocols", _protocols(verdict)))
    if verdict.checks:
        fields.append(("Checks", _evidence(verdict)))
    for attribute, name in SENTENCES:
        if items := [i for i in getattr(verdict, attribute) if i not in said]:
            fields.append((name + "s" * (len(items) > 1), _sentences(items)))
    if asides := _asides(verdict):
        fields.append(("More", asides))
    checked = _links(pages, cid)  # none: the verdict's kind says so
    lines = [
        f"({card_anchor(cid)})=",
        f"### {cid}: {escape_markdown(spec.short)}",
        "",
        "::::{container} ntpnb-card",
        " ".join(x for x in (_badge(cid, verdict), _header_words(verdict.basis, checked)) if x),
        "",
    ]
    for term, text in fields:
        lines += [term, f": {text[0]}", *(f"  {line}" if line else "" for line in text[1:]), ""]
    return [*lines, "::::", ""]


def _header_words(basis: str, checked: str) -> str:
    """What follows a card's badge: how it was decided (unless its kind says so), where it is checked."""
    return "; ".join(x for x in (escape_markdown(basis), f"checked in {checked}" if checked else "") if x)


def _cards(pages: TreePages) -> list[str]:
    """A section per paper with the card of each of its claims."""
    lines = []
    for paper in PAPERS:
        lines += [f"## Paper {paper}: {PAPER_TOPICS[paper]}", "", f"{PAPERS[paper]}.", ""]
        for cid, spec in CLAIMS.items():
            if spec.paper == paper:
                lines += claim_card(pages, cid, spec)
    return lines


#: The title of the report's section on the maps beyond the papers' settings.
MAPS_TITLE = "Beyond the papers' settings"


def map_finding(series: Series) -> str:
    """A map's measurement in a sentence: ``"what: established, 0.93 ± 0.01 ...; required > 0.5 (...)"``.

    The requirement follows a semicolon, since it carries an aside in brackets (how it is tested).
    """
    return f"{series.name}: {series.outcome}, {series.quote()}; required {series.first.required}"


#: What a map's line in the report says when no chapter of the run stated its headline.
NO_MAP_HEADLINE = "not measured in this run"


def _claim_links(claim_ids: Sequence[str]) -> str:
    """``"[A6](#claim-a6), [A7](#claim-a7)"``: links to the claims' cards."""
    return ", ".join(f"[{c}](#{card_anchor(c)})" for c in claim_ids)


def _map_rows(pages: TreePages) -> list[str]:
    """One line per map: the quantity it varies, the claims it leaves, and where they stop holding.

    Where they stop holding is the map's headline, as the chapter that draws it stated it across
    the seeds (:meth:`~ntpnb.chapter.ClaimLog.headline`). A list, not a table: a row reads at the
    page's full width on a phone.
    """
    lines = [
        {
            "id": mid.lower(),
            "map": mid,
            "parameter": spec.parameter,
            "claims": _claim_links(spec.claims),
            "where": pages.map_headlines.get(mid, NO_MAP_HEADLINE),
        }
        for mid, spec in MAPS.items()
    ]
    return render("map_lines.md", lines=lines).splitlines()


def _maps_section(pages: TreePages) -> list[str]:
    """The maps of the registry: a line per map (:func:`_map_rows`), then each map in a collapsed block.

    A map's numbers are measurements beyond the papers: they count in no verdict (the section
    says so, and the blocks' counts).
    """
    series = [s for mid in MAPS for s in pages.series.get(mid, [])]
    summary = f"The {len(MAPS)} maps in full: what each leaves, varies and measured"
    body = []
    for mid, spec in MAPS.items():
        body += _map_block(pages, mid, spec)
    block = _details(summary, "\n".join(body), "ntpnb-checks ntpnb-maps", count=_map_counts(series))
    intro = "Where a paper's assumption does not hold: measurements of ours, in no verdict above."
    return [f"## {MAPS_TITLE}", "", intro, "", *_map_rows(pages), "", *block, ""]


def _map_counts(series: Sequence[Series]) -> str:
    """A map's block when closed: its measurements and sanity checks, counted in their outcomes' words."""
    parts = [
        checks_count(kind, [s.outcome for s in series if s.first.kind == kind])
        for kind in ("measurement", "sanity")
        if any(s.first.kind == kind for s in series)
    ]
    return "; ".join(parts) if parts else "not measured in this run"


def _map_block(pages: TreePages, mid: str, spec: MapSpec) -> list[str]:
    """One map as a collapsed block: its counts when closed; the assumption, variation and findings open."""
    series = pages.series.get(mid, [])
    found = [f"- {escape_markdown_but_math(map_finding(s))}" for s in series if s.first.kind == "measurement"]
    sanity = [s.outcome for s in series if s.first.kind == "sanity"]
    if sanity:
        found.append(f"- {escape_markdown(checks_count('sanity', sanity))}")
    fields = [
        ("The paper assumes", [spec.assumption]),
        ("Varied", [spec.varied]),
        ("Claims", [_claim_links(spec.claims)]),
        ("Findings", ["", *found] if found else ["not measured: no chapter of this run draws this map"]),
    ]
    if series:
        fields.append(("Drawn in", [_links(pages, mid)]))
    title = f"{mid}: {spec.title} (Paper {spec.paper})"
    lines = []
    for term, text in fields:
        lines += [term, f": {text[0]}", *(f"  {line}" for line in text[1:]), ""]
    body = "\n".join(lines).rstrip("\n")
    block = _details(title, body, "ntpnb-checks ntpnb-map", f"map-{mid.lower()}", _map_counts(series))
    return [*block, ""]


def _artifact_words(series: Series) -> str:
    """The authors' stored value beside ours, briefly: ``"authors' stored: 0.9886, consistent"``."""
    agrees = series.artifact_agrees()
    if agrees is None:
        return ""
    agreement = CONSISTENT if agrees else f"not {CONSISTENT}"
    return f"authors' stored: {series.first.artifact.shown}, {agreement}"  # type: ignore[union-attr]


#: The outcomes that say a check went against what it asks (a table shows them in bold).
_AGAINST = frozenset({FAILS, MISSED, CONTRADICTED})


def _check_row(pages: TreePages, notebook: str, series: Series, check: Check) -> list[str]:
    """The row of one check's ``series`` in its chapter's table (``check``: at the sweep's first seed).

    Parameters
    ----------
    pages
        The tree's pages, whose sections the claim id links to.
    notebook
        The chapter that made the check.
    series
        The check across the seeds.
    check
        The check at the sweep's first seed.

    Returns
    -------
    list of str
        The cells: claim, what was measured, ours, required, the paper, decided, result.
    """
    what = escape_markdown_but_math(series.name)
    what = what if check.kind == "claim" else f"*{check.kind}:* {what}"
    paper = "; ".join(
        x for x in (escape_markdown_but_math(check.paper), escape_markdown(_artifact_words(series))) if x
    )
    decided = series.decided  # how it was decided across the seeds, with its spread
    values = series.spread() if not series.statistical else None
    if values:
        decided += f"; {value_range(*values)}"
    outcome = series.outcome
    strong = outcome in _AGAINST or (check.kind == "finding" and outcome == ESTABLISHED)
    return [
        _link(pages.sections, (notebook, check), escape_markdown(check.claim)),
        what,
        escape_markdown(series.ours()),
        escape_markdown(check.required),
        paper,
        escape_markdown(decided),
        f"**{outcome}**" if strong else outcome,
    ]


def _chapter_claims_words(pages: TreePages, notebook: str) -> str:
    """What the claims a chapter checks (its badges) did, by verdict; one that does not hold named.

    ``"claims: 1 reproduced with a qualification, 1 does not reproduce (A16)"``; "" for a chapter
    that checks no claim of the registry (its checks are of maps).
    """
    own = [cid for cid in CLAIMS if any(nb == notebook for nb, _ in pages.by_claim.get(cid, []))]
    parts = []
    for name in VERDICTS:
        if ids := [cid for cid in own if pages.results[cid].verdict == name]:
            named = "" if name in POSITIVE or name == BY_CONSTRUCTION else f" ({join_words(ids)})"
            parts.append(counted_verdict(len(ids), name) + named)
    return "claims: " + ", ".join(parts) if parts else ""


def chapter_checks_tally(sweep: Sweep) -> str:
    """A chapter's checks across its seeds, as the report's block and the chapter's page both say it."""
    outcomes = [s.outcome for s in series_of(sweep) if s.checks.get(sweep.seeds[0]) is not None]
    return chapter_tally(outcomes, sweep.seeds)


def _chapter_checks(pages: TreePages, sweep: Sweep) -> list[str]:
    """One chapter's checks across the seeds: a collapsed block opening to their table.

    Its summary says what the chapter's claims did, then how its checks came out across the seeds.
    """
    notebook = sweep.book.notebook
    shown = [
        (s, s.checks[sweep.seeds[0]]) for s in series_of(sweep) if s.checks.get(sweep.seeds[0]) is not None
    ]
    rows = [_check_row(pages, notebook, series, check) for series, check in shown]
    against = any(series.outcome in _AGAINST for series, _ in shown)
    header = ["claim", "what was measured", "ours", "required", "the paper", "decided", "result"]
    title = f"{chapter_label(notebook)}. {pages.titles.get(notebook, notebook)}"
    checks = chapter_checks_tally(sweep)
    claims = _chapter_claims_words(pages, notebook)
    count = f"{claims}; {checks}" if claims else checks
    body = f"{{doc}}`The chapter </outputs/notebooks/{notebook}>`.\n\n{markdown_table(header, rows)}"
    classes = "ntpnb-checks ntpnb-chapter-checks" + " ntpnb-has-fail" * against
    return [*_details(title, body, classes, count=count), ""]


def _failures(failed: Sequence[ChapterRun]) -> list[str]:
    """A warning naming the notebooks whose last run failed (their records in ``failed/``)."""
    if not failed:
        return []
    return [
        "```{warning}",
        "The last run of these notebooks failed. This page and their chapters show their last",
        "successful run, if any; the failed run's executed copy is in `outputs/failed/`.",
        "",
        *(f"* `{f.notebook}` ({f.date}): {escape_markdown(f.error)}" for f in failed),
        "```",
        "",
    ]


def _seeds_lines(sweeps: Sequence[Sweep]) -> list[str]:
    """The paragraph on the seeds the verdicts rest on: one per chapter, or every chapter's seeds."""
    if sweeps and {len(s.seeds) for s in sweeps} == {1}:
        return [
            "The verdicts rest on one seed per chapter (the book's, "
            f"{join_words(sorted({s.seeds[0] for s in sweeps}))}): no seed sweep was run "
            "(`ntpnb reproduce --seeds 5` runs each chapter at the book's seed and four more).",
            "",
        ]
    if sweeps and len({s.seeds for s in sweeps}) == 1:  # every chapter at the same seeds: said once
        seeds = sweeps[0].seeds
        return [
            f"The verdicts rest on every chapter's runs at seeds {join_words(seeds)}, the book's first.",
            "",
        ]
    if sweeps:
        per = "; ".join(f"{_chapters_words([s.book.notebook])}: {join_words(s.seeds)}" for s in sweeps)
        return [f"The verdicts rest on every seed each chapter ran at, the book's first ({per}).", ""]
    return []


def _left_out_lines(pages: TreePages) -> list[str]:
    """The runs not counted, the claims not tested and the checks of unknown claim ids, if any."""
    lines = []
    aside = [
        f"{_chapters_words([s.book.notebook])} at seed {n}: {escape_markdown(why)}"
        for s in pages.sweeps
        for n, why in s.excluded.items()
    ]
    if aside:
        lines += ["Not counted: " + "; ".join(aside) + ".", ""]
    untested = [cid for cid, v in pages.results.items() if v.verdict == NOT_TESTED]
    if untested:
        lines += [f"Not tested (no chapter of this run checks them): {', '.join(untested)}.", ""]
    unknown = sorted(set(pages.by_claim) - set(CLAIMS) - set(MAPS), key=sort_key)
    if unknown:
        lines += [
            "```{warning}",
            f"Checks name claim ids missing from the registry: {', '.join(unknown)}.",
            "```",
            "",
        ]
    return lines


def _what_ran(pages: TreePages) -> list[str]:
    """What ran, in full: the records read, each chapter's seeds, what was not counted or not tested."""
    return [
        "## What ran",
        "",
        "`ntpnb book` writes this page from the notebooks' claim records (`outputs/claims/`, at",
        "further seeds `outputs/seeds/seed=S/claims/`) and the registry of claims",
        "(`ntpnb/evidence/_registry.py`, also on {doc}`the claims page </outputs/claim_list>`);",
        "nothing on it is typed by hand.",
        f"The run: {pages.label}; {pages.check_count} checks at the book's seed."
        + absent_sentence(pages.absent),
        *_seeds_lines(pages.sweeps),
        "",
        *_left_out_lines(pages),
    ]


def _report_head(pages: TreePages) -> list[str]:
    """The report's top: the counts, the summary, failed runs and the claims' cards."""
    return [
        # the summary is the page's table of contents: the article takes the theme's right column
        "---",
        "html_theme.sidebar_secondary.remove: true",
        "---",
        "",
        "# Reproducibility report",
        "",
        f"**{format_counts(pages.results)}.** What ran: {run_line(pages)}." + absent_sentence(pages.absent),
        "",
        *_summary(pages),
        *_failures(pages.failed),
        "Below, each claim's card: the paper's statement and value, our evidence across the seeds,",
        "the sections that check it; then the verdict rule.",
        "",
        *_cards(pages),
        *_maps_section(pages),
    ]


def _every_check(pages: TreePages) -> list[str]:
    """The section of every check: a table per chapter, or a line saying none was recorded."""
    lines = [
        "## Every check",
        "",
        "Every assertion of every chapter, a table per chapter (a value {term}`pooled` or at the",
        "book's seed; a row's kind: {term}`sanity check`, {term}`finding`, {term}`measurement`); a",
        "claim id links to the section that checks it.",
        "",
    ]
    if not pages.check_count:
        lines += ["No notebook has recorded a check yet: run `ntpnb reproduce`.", ""]
    for sweep in pages.sweeps:
        if sweep.book.checks:
            lines += _chapter_checks(pages, sweep)
    return lines


def _rule_and_platforms(pages: TreePages) -> list[str]:
    """The verdict rule in full, what ran, and the machines the chapters ran on."""
    return [
        "## The verdict rule",
        "",
        "One rule gives every verdict on this page, from the checks' records at every seed.",
        "",
        *_details(
            "The rule in full: how a check is decided, the kinds of check, protocols, the verdict of a "
            "claim, what a chapter prints",
            "\n\n".join(VERDICT_RULE),
            "ntpnb-checks",
        ),
        "",
        *_what_ran(pages),
        f"## {PLATFORM_TITLE}",
        "",
        "Each chapter's machine as its kernel recorded it (CPU, BLAS kernel and threads, versions):",
        "other CPUs or kernels can change the last digits, so compare these first when two reports",
        "disagree.",
        "",
        *_details(
            "The platforms of the runs",
            platform_section({r.notebook: r.platform for r in pages.records}, what="chapter").rstrip("\n"),
            "ntpnb-checks",
        ),
        "",
    ]


def render_report(pages: TreePages) -> str:
    """The report page (MyST markdown) of ``tree`` (its terms are the book's glossary's)."""
    sections = [*_report_head(pages), *_every_check(pages), *_rule_and_platforms(pages)]
    return "\n".join(sections)


def verdict_summary(results: Mapping[str, Verdict]) -> str:
    """One line of the verdict counts of ``results`` (every claim of the registry), overall and per paper."""
    per_paper = "; ".join(
        f"Paper {paper}: " + format_counts({c: v for c, v in results.items() if CLAIMS[c].paper == paper})
        for paper in PAPERS
    )
    return f"{format_counts(results)} ({per_paper})"


def render_verdict_summary(pages: TreePages) -> str:
    """The fragment the book's introduction includes: the verdict counts of the last runs."""
    if not pages.check_count:
        return "No chapter has recorded a claim check yet: run `ntpnb reproduce`.\n"
    return (
        f"**Verdicts of the runs that built this book** ({pages.label}): "
        f"{verdict_summary(pages.results)}. A badge opens the claim's card in the {{doc}}`/outputs/report`: "
        "the paper's statement and value, ours across the seeds, how the verdict was decided, and the "
        f"chapter sections that check it.{absent_sentence(pages.absent)}\n"
    )


_CLAIMS_INTRO = (
    "# The claims",
    "",
    "Every claim of the two papers that this book reproduces has an id. This page is generated by",
    "`ntpnb book` from the registry of claims (`ntpnb/evidence/_registry.py`, the one place where a",
    "claim's statement and the paper's value are written) and from the records of the last runs,",
    "which say where each claim is checked and what its verdict is.",
    "",
    "A chapter that checks a claim prints one line per check, `[PASS] <id> ...` with the measured",
    "value, what it requires and the paper's number, and records it in",
    "`outputs/claims/<chapter>.json`; `<id> (sanity)`, `<id> (finding)` and `<id> (measurement)`",
    "name the kinds of check that are not evidence, and `[NOTE] <id> qualification: ...` states a",
    "limit of the evidence. Every chapter also runs at further seeds (`outputs/seeds/`), and the",
    "{doc}`reproducibility report </outputs/report>` gives each claim its verdict from the records",
    "of every seed, by one rule, which the report states in full. What the lines print:",
    "",
    VERDICT_RULE[-1],
    "",
)


def render_claims_page(pages: TreePages) -> str:
    """The claims page (MyST markdown): every claim of the registry, where it is checked, its verdict."""
    by_claim, sections, results = pages.by_claim, pages.sections, pages.results

    def claim_row(cid: str, spec: ClaimSpec) -> list[str]:
        parts, shown = [], set()
        for kind in KINDS:  # links to the sections, evidence first, each section once
            made = [m for m in by_claim.get(cid, []) if m[1].kind == kind]
            links = [link for link in dict.fromkeys(_link(sections, m) for m in made) if link not in shown]
            shown.update(links)
            if links:
                parts.append(("" if kind == "claim" else f"{kind}: ") + ", ".join(links))
        where = parts or ["not checked by any chapter yet"]
        badge = _badge(cid, results[cid], f"report.html#{card_anchor(cid)}")
        return [
            render("stacked.md", parts=[f"**{cid}** ", escape_markdown(spec.where)]),
            render("stacked.md", parts=[spec.statement, f"*The paper reports:* {spec.paper_value}"]),
            render("stacked.md", parts=[badge, *where]),
        ]

    lines = [
        *_CLAIMS_INTRO,
        f"The verdicts below are those of the run this book shows: {pages.label}."
        + absent_sentence(pages.absent),
        "",
    ]
    header = ["claim", "statement", "verdict; checked in"]
    for paper in PAPERS:
        rows = [claim_row(c, s) for c, s in CLAIMS.items() if s.paper == paper]
        lines += [f"## Paper {paper}: {PAPER_TOPICS[paper]}", "", f"{PAPERS[paper]}.", ""]
        lines += [":::{table}", ":class: ntpnb-claim-list", "", markdown_table(header, rows), ":::", ""]
    return "\n".join(lines)


def write_report(pages: TreePages) -> Path:
    """Write the report to ``<pages.tree.root>/report.md`` and return its path.

    The verdict fragment ``verdicts.md``, the claims page ``claim_list.md`` and the scoreboard's
    data (:data:`~ntpnb.book._scoreboard.SCOREBOARD_FILE`) are written beside it.
    """
    # claim -> (notebook, anchor) of each section that checks it, evidence first ("": the chapter's top)
    places: dict[str, list[tuple[str, str]]] = {}
    for cid, made in pages.by_claim.items():
        for notebook, check in sorted(made, key=lambda m: KINDS.index(m[1].kind)):
            section = pages.sections.get(notebook, {}).get((check.claim, check.what))
            place = (notebook, section[1] if section else "")
            if place not in places.setdefault(cid, []):
                places[cid].append(place)
    root = pages.tree.root
    tallies = {s.book.notebook: chapter_checks_tally(s) for s in pages.sweeps if s.book.checks}
    data = scoreboard_data(pages.results, places, tallies)
    atomic_write_text(root / SCOREBOARD_FILE, json.dumps(data, indent=1) + "\n")
    atomic_write_text(root / "verdicts.md", render_verdict_summary(pages))
    atomic_write_text(root / "claim_list.md", render_claims_page(pages))
    return atomic_write_text(root / "report.md", render_report(pages))
