"""The generated pages: the reproducibility report, the claims page and the introduction's verdicts.

``ntpnb book`` calls :func:`write_report` before building, so these pages are always made from
the chapter records of the last runs (``claims/*.json`` of the tree and of its seed trees), never
by hand. For every claim id of the registry (:mod:`ntpnb.chapter.registry`) the report shows the
paper's statement and value, its verdict across the seeds (:mod:`.verdicts`), every check with our
values, tolerances and pass or fail, the run's setting, and a link to the chapter section that
made it (:func:`chapter_sections`); checks naming an id missing from the registry are listed apart.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt
from mdit_py_plugins.colon_fence import colon_fence_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin

from ..chapter.claims import CHECK_LINE, KINDS, ChapterRecord, Check, load_chapter_records
from ..chapter.layout import OutputLayout
from ..chapter.outputs import RunRecord, atomic_write_text, load_run_record
from ..chapter.platform import platform_section
from ..chapter.prose import markdown_table
from ..chapter.registry import CLAIMS, PAPERS, ClaimSpec, sort_key
from .executed import read_notebook
from .scoreboard import SCOREBOARD_FILE, scoreboard_data
from .trees import chapter_label, describe_run, visible
from .verdicts import (
    VERDICT_RULE,
    Sweep,
    Verdict,
    format_counts,
    format_seeds,
    load_sweeps,
    series_of,
    sweep_verdicts,
)

#: A check and the notebook whose run made it.
Made = tuple[str, Check]
#: Notebook -> (claim id, what) of each check it printed -> (heading, anchor) of the section above.
Sections = dict[str, dict[tuple[str, str], tuple[str, str]]]


def _setting(record: RunRecord | None, checks: Sequence[Check]) -> tuple[str, str]:
    """The run record's profile and ``-p`` overrides (``k=v, ...``); without one, the checks' profiles."""
    if record is None:
        return ", ".join(sorted({c.profile for c in checks})), ""
    return record.profile, record.overrides_text


#: The title of the report's section on the machines of the runs.
PLATFORM_TITLE = "Where the numbers were computed"


@dataclass(frozen=True)
class TreePages:
    """What the generated pages show of a tree, read once: its records, their verdicts and sections."""

    layout: OutputLayout
    #: The claim records at the book's seed, and each chapter's sweep over the seeds.
    records: list[ChapterRecord]
    sweeps: list[Sweep]
    #: Every claim id of the registry -> its verdict over the sweeps.
    results: dict[str, Verdict]
    #: Claim id -> every check of it, with its notebook, in the records' order.
    by_claim: dict[str, list[Made]]
    sections: Sections
    run: RunRecord | None
    #: What ran into the tree (:func:`~.trees.describe_run`), escaped for a page.
    label: str
    #: The chapters the tree has not run.
    absent: Sequence[str] = ()


def read_tree(layout: OutputLayout, absent: Sequence[str] = ()) -> TreePages:
    """Read the records of the tree ``layout`` (and of its seed trees) that the pages show."""
    records = load_chapter_records(layout.claims)
    sweeps = load_sweeps(layout, records)
    by_claim: dict[str, list[Made]] = defaultdict(list)
    for record in records:
        for check in record.checks:
            by_claim[check.claim].append((record.notebook, check))
    sections = {r.notebook: chapter_sections(layout.notebooks / f"{r.notebook}.ipynb") for r in records}
    run = load_run_record(layout.root)
    profiles = sorted({c.profile for r in records for c in r.checks})
    label = _escape(describe_run(run, profiles))
    return TreePages(
        layout, records, sweeps, sweep_verdicts(CLAIMS, sweeps), by_claim, sections, run, label, absent
    )


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


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>|$#])")


def _escape(text: str) -> str:
    """Plain text made safe for a MyST table cell (no emphasis, math, links or column breaks)."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def _phrase(verdict: Verdict) -> str:
    """The verdict's phrase in a table cell, in bold where it is negative."""
    return f"**{_escape(verdict.phrase)}**" if verdict.negative else _escape(verdict.phrase)


def _link(sections: Sections, made: Made, text: str | None = None) -> str:
    """A link to the section that made the check (else its chapter), as ``text`` or ``1 § <section>``."""
    notebook, check = made
    section = sections.get(notebook, {}).get((check.claim, check.what))
    target = f"/outputs/notebooks/{notebook}.ipynb" + (f"#{section[1]}" if section else "")
    if text is None:  # the chapter as the book numbers it, and the heading, its inline math kept
        heading = section[0] if section else ""
        parts = re.split(r"(\$[^$]+\$)", heading)
        title = "".join(p if p.startswith("$") and p.endswith("$") else _escape(p) for p in parts)
        text = _escape(chapter_label(notebook)) + (f" § {title}" if heading else "")
    return f"[{text}]({target})"


def absent_sentence(absent: Sequence[str]) -> str:
    """What the pages say, after a space, of chapters the tree has not run ("" when it ran them all)."""
    if not absent:
        return ""
    return (
        f" This tree has not run {format_seeds(_escape(n) for n in absent)}: the claims only "
        f"{'that chapter checks' if len(absent) == 1 else 'those chapters check'} are *not tested* in it."
    )


_PAPER_TITLES = {"A": "linear decoder", "B": "one-layer self-attention"}


def _paper_tables(header: Sequence[str], row: Callable[[str, ClaimSpec], list[str]], cite: bool) -> list[str]:
    """A section per paper with a table of its claims, one ``row`` each (``cite``: name the paper)."""
    lines = []
    for paper in PAPERS:
        lines += [
            f"## Paper {paper}: {_PAPER_TITLES[paper]}",
            "",
            *([f"{PAPERS[paper]}.", ""] if cite else []),
        ]
        lines.append(markdown_table(header, [row(c, s) for c, s in CLAIMS.items() if s.paper == paper]))
        lines.append("")
    return lines


def _chapter_table(
    sweep: Sweep, sections: Sections, titles: dict[str, str], run: RunRecord | None
) -> list[str]:
    """The section of the report's "Every check" on one chapter: each of its checks across the seeds."""
    notebook = sweep.book.notebook
    profile_name, overrides = _setting(run, sweep.book.checks)
    profile = f"`{profile_name}` profile" + (f" with {_escape(overrides)}" if overrides else "")
    rows = []
    for series in series_of(sweep):
        c = series.checks.get(sweep.seeds[0])
        if c is None:
            continue
        what = _escape(c.what) if c.kind == "claim" else f"*{c.kind}:* {_escape(c.what)}"
        claim = _link(sections, (notebook, c), _escape(c.claim))
        paper = _escape(c.paper) + (f"<br>{_escape(series.artifact_note())}" if c.artifact else "")
        decided = series.decided  # how it was decided across the seeds, with its spread
        values = series.spread() if not series.statistical else None
        if values:
            decided += f"; {values[0]} to {values[1]}"
        outcome = series.outcome
        strong = outcome == "fails" or (c.kind == "finding" and outcome == "established")
        result = f"**{outcome}**" if strong else outcome
        rows.append(
            [claim, what, _escape(series.ours()), _escape(c.required), paper, _escape(decided), result]
        )
    header = ["claim", "what was measured", "ours", "required", "the paper", "decided", "result"]
    return [
        f"### {_escape(chapter_label(notebook))}. {_escape(titles.get(notebook, notebook))}",
        "",
        f"{{doc}}`The chapter </outputs/notebooks/{notebook}>`, run at the {profile}, "
        f"seeds {format_seeds(sweep.seeds)}.",
        "",
        markdown_table(header, rows),
        "",
    ]


def render_report(tree: TreePages) -> str:
    """The report page (MyST markdown) of ``tree``."""
    layout, records, run, sections = tree.layout, tree.records, tree.run, tree.sections
    checks = sum(len(r.checks) for r in records)
    seeds = ""  # which seeds the verdicts rest on, and which records were set aside
    if tree.sweeps and {len(s.seeds) for s in tree.sweeps} == {1}:
        seeds = (
            f"The verdicts rest on one seed per chapter (the book's, "
            f"{format_seeds(sorted({s.seeds[0] for s in tree.sweeps}))}): no seed "
            "sweep was run (`ntpnb reproduce --seeds N`)."
        )
    elif tree.sweeps:
        per = ", ".join(f"{chapter_label(s.book.notebook)}: {format_seeds(s.seeds)}" for s in tree.sweeps)
        seeds = f"The verdicts rest on every seed each chapter ran at, the book's first ({per})."
    aside = [
        f"{s.book.notebook} seed {n}: {_escape(why)}" for s in tree.sweeps for n, why in s.excluded.items()
    ]
    if aside:
        seeds += " Not counted: " + "; ".join(aside) + "."

    def claim_row(cid: str, spec: ClaimSpec) -> list[str]:
        """A claim's row: its verdict, the counts of its checks, the run's setting, the reasons."""
        made, verdict = tree.by_claim.get(cid, []), tree.results[cid]
        where = "<br>".join(dict.fromkeys(_link(sections, m) for m in made))
        row = [f"**{cid}** ({spec.where})", spec.statement, spec.paper_value]
        if not made:
            return [*row, f"{verdict.verdict} (no check yet)", where]
        n = verdict.counts
        counts = [
            (n["findings"], "finding", "s"),
            (n["sanity"], "sanity", ""),
            (n["measurements"], "measurement", "s"),
            (n["failed"], "failed", ""),
        ]
        parts = [f"{n['evidence']} evidence", *(f"{k} {kind}{s * (k > 1)}" for k, kind, s in counts if k)]
        profile, overrides = _setting(run, [c for _, c in made])
        setting = f"{profile}; {overrides}" if overrides else profile
        result = f"{_phrase(verdict)}; {', '.join(parts)} ({_escape(setting)})"
        return [*row, result + "".join(f"<br>{_escape(r)}" for r in verdict.reasons), where]

    failures = []  # a warning naming the notebooks whose last run failed (their records in failed/)
    for path in sorted(layout.failed.glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(record, dict):
            error = _escape(str(record.get("error")))
            failures.append(f"* `{record.get('notebook')}` ({record.get('date')}): {error}")
    if failures:
        failures = [
            "```{warning}",
            "The last run of these notebooks failed. This page and their chapters show their last",
            "successful run, if any; the failed run's executed copy is in `outputs/failed/`.",
            "",
            *failures,
            "```",
            "",
        ]
    lines = [
        "# Reproducibility report",
        "",
        "This page is generated by `ntpnb book` from the claim records that the notebooks wrote",
        "when they ran (`outputs/claims/*.json` at the book's seed, `outputs/seeds/seed=S/claims/`",
        "at the further seeds of the sweep); nothing on it is typed by hand. Every claim of both",
        "papers is listed: one that no chapter checks yet, or whose check failed, says so. Each",
        "claim and the place in the paper are listed on {doc}`the claims page </outputs/claim_list>`.",
        "",
        f"**{format_counts(tree.results)}**; {checks} checks at the book's seed; "
        f"what ran: {tree.label} (`paper` = the papers' settings, "
        "`quick` = the seconds-scale test run)." + absent_sentence(tree.absent),
        "",
        seeds,
        "",
        "## The verdict rule",
        "",
        *(line for paragraph in VERDICT_RULE for line in (paragraph, "")),
        *failures,
        *_paper_tables(
            ["claim", "statement", "the paper reports", "verdict", "checked in"], claim_row, cite=False
        ),
        "## Every check",
        "",
        "Each row is one assertion a chapter made: our value (for a statistical or count check, its",
        "trials pooled over the seeds; otherwise as measured at the book's seed, rounded as printed),",
        "what it required, what the paper reports (and the authors' stored artifact, where one",
        "exists), how it was decided (pooled, seed-independent, or at how many seeds, with the",
        "smallest and largest value over them) and the result, by the rule above. The claim id links",
        "to the section of the chapter that makes the check. Rows marked *sanity* test the code or the",
        "setting, not the paper's claim; rows marked *finding* state that a paper's number is missed;",
        "rows marked *measurement* state a measurement of ours that qualifies the claim.",
        "",
    ]
    if not checks:
        lines += ["No notebook has recorded a check yet: run `ntpnb reproduce`.", ""]
    titles = {}  # chapter -> the text of its executed notebook's first "# " heading, without math marks
    for path in visible(sorted(layout.notebooks.glob("*.ipynb"))):
        cells = [c for c in read_notebook(path)["cells"] if c.get("cell_type") == "markdown"]
        title = next((text for cell in cells for level, text in _headings(cell) if level == 1), None)
        if title is not None:
            titles[path.stem] = re.sub(r"\$([^$]*)\$", r"\1", title)
    for sweep in tree.sweeps:
        if sweep.book.checks:
            lines += _chapter_table(sweep, sections, titles, run)
    lines += [
        f"## {PLATFORM_TITLE}",
        "",
        "The machine each chapter ran on, as its kernel recorded it when it ran (CPU, the BLAS",
        "libraries with the kernel and thread count threadpoolctl reports, library versions):",
        "runs on different CPUs or BLAS kernels can differ in their last digits, so compare these",
        "first when two reports disagree.",
        "",
        platform_section({r.notebook: r.platform for r in records}, what="chapter"),
    ]
    unknown = sorted(set(tree.by_claim) - set(CLAIMS), key=sort_key)
    if unknown:
        lines += [
            "```{warning}",
            f"Checks name claim ids missing from the registry: {', '.join(unknown)}.",
            "```",
            "",
        ]
    return "\n".join(lines)


def verdict_summary(results: Mapping[str, Verdict]) -> str:
    """One line of the verdict counts of ``results`` (every claim of the registry), overall and per paper."""
    per_paper = "; ".join(
        f"Paper {paper}: " + format_counts({c: v for c, v in results.items() if CLAIMS[c].paper == paper})
        for paper in PAPERS
    )
    return f"{format_counts(results)} ({per_paper})"


def render_verdict_summary(tree: TreePages) -> str:
    """The fragment the book's introduction includes: the verdict counts of the last runs."""
    if not any(r.checks for r in tree.records):
        return "No chapter has recorded a claim check yet: run `ntpnb reproduce`.\n"
    return (
        f"**Verdicts of the runs that built this book** ({tree.label}): "
        f"{verdict_summary(tree.results)}. Each claim's verdict, and the checks behind it, are in the "
        f"{{doc}}`/outputs/report`.{absent_sentence(tree.absent)}\n"
    )


_CLAIMS_INTRO = (
    "# The claims",
    "",
    "Every claim of the two papers that this book reproduces has an id. This page is generated by",
    "`ntpnb book` from the registry of claims (`ntpnb/chapter/registry.py`, the one place where a",
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


def render_claims_page(tree: TreePages) -> str:
    """The claims page (MyST markdown): every claim of the registry, where it is checked, its verdict."""
    by_claim, sections, results = tree.by_claim, tree.sections, tree.results

    def claim_row(cid: str, spec: ClaimSpec) -> list[str]:
        verdict, parts = results[cid], []
        for kind in ("claim", "finding", "sanity", "measurement"):  # links to the sections, evidence first
            links = list(
                dict.fromkeys(_link(sections, m) for m in by_claim.get(cid, []) if m[1].kind == kind)
            )
            if links:
                parts.append(("" if kind == "claim" else f"{kind}: ") + ", ".join(links))
        where = "<br>".join(parts) or "not checked by any chapter yet"
        return [cid, spec.statement, spec.where, spec.paper_value, where, _phrase(verdict)]

    header = ["id", "claim", "in the paper", "the paper reports", "checked in", "verdict"]
    lines = [
        *_CLAIMS_INTRO,
        f"The verdicts below are those of the run this book shows: {tree.label}."
        + absent_sentence(tree.absent),
        "",
        *_paper_tables(header, claim_row, cite=True),
    ]
    return "\n".join(lines)


def write_report(tree: TreePages) -> Path:
    """Write the report to ``<layout.root>/report.md`` and return its path.

    The verdict fragment ``verdicts.md``, the claims page ``claim_list.md`` and the scoreboard's
    data (:data:`~ntpnb.book.scoreboard.SCOREBOARD_FILE`) are written beside it.
    """
    # claim -> (notebook, anchor) of each section that checks it, evidence first ("": the chapter's top)
    places: dict[str, list[tuple[str, str]]] = {}
    for cid, made in tree.by_claim.items():
        for notebook, check in sorted(made, key=lambda m: KINDS.index(m[1].kind)):
            section = tree.sections.get(notebook, {}).get((check.claim, check.what))
            place = (notebook, section[1] if section else "")
            if place not in places.setdefault(cid, []):
                places[cid].append(place)
    root = tree.layout.root
    data = scoreboard_data(tree.results, places)
    atomic_write_text(root / SCOREBOARD_FILE, json.dumps(data, indent=1) + "\n")
    atomic_write_text(root / "verdicts.md", render_verdict_summary(tree))
    atomic_write_text(root / "claim_list.md", render_claims_page(tree))
    return atomic_write_text(root / "report.md", render_report(tree))
