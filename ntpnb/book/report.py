"""The reproducibility report: one page, generated from the claim records of the last runs.

``ntpnb book`` calls :func:`write_report` before building, so the *Reproducibility report* page
is always made from the chapter records (``outputs/claims/*.json``,
:func:`~ntpnb.chapter.claims.load_chapter_records`), never by hand. For every claim id of the
registry (:mod:`ntpnb.chapter.registry`) it shows the paper's statement and value, our values,
tolerances, pass or fail, the run's profile, and a link to the chapter section that checks it
(read from the executed notebook, :func:`chapter_sections`). Unchecked and failed claims are
listed as such; checks naming an id missing from the registry are listed apart.
"""

from __future__ import annotations

import functools
import json
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin

from ..chapter.atomic import atomic_write_text
from ..chapter.claims import ChapterRecord, Check, load_chapter_records
from ..chapter.layout import OutputLayout
from ..chapter.platform import platform_section
from ..chapter.provenance import RunRecord, load_run_record
from ..chapter.registry import CLAIMS, PAPERS, sort_key
from .executed import read_notebook
from .trees import describe_run, visible
from .verdicts import (
    CHECK_FAILED,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    PARTIAL,
    Series,
    Sweep,
    Verdict,
    format_counts,
    format_seeds,
    load_sweeps,
    series_of,
    sweep_verdicts,
    verdict_counts,
)

__all__ = [
    "REPORT_DOCNAME",
    "CLAIMS_PAGE_DOCNAME",
    "render_claims_page",
    "chapter_sections",
    "record_sections",
    "claim_verdicts",
    "render_report",
    "write_report",
    "verdict_summary",
    "render_verdict_summary",
]

#: The report's place in the book, relative to the project root (``_toc.yml`` lists it).
REPORT_DOCNAME = "outputs/report"
#: The claims page's place in the book (also generated, from the registry and the records).
CLAIMS_PAGE_DOCNAME = "outputs/claim_list"


#: A check and the notebook whose run made it.
Made = tuple[str, Check]
#: Notebook -> (claim id, what) of each check it printed -> (heading, anchor) of the section above.
Sections = dict[str, dict[tuple[str, str], tuple[str, str]]]


#: Verdicts the report sets in bold: the claim does not (or not always) hold.
_STRONG = (NOT_REPRODUCED, CHECK_FAILED, PARTIAL, INCONCLUSIVE)


def _setting(record: RunRecord | None, checks: Sequence[Check]) -> tuple[str, str]:
    """The profile the checks ran with, and its ``-p`` overrides as ``k=v, ...`` ("" for none).

    From the tree's run record; without one (an older tree), the profiles the checks name.
    """
    if record is None:
        return ", ".join(sorted({c.profile for c in checks})), ""
    return record.profile, ", ".join(f"{k}={v}" for k, v in sorted(record.overrides.items()))


def run_setting(record: RunRecord | None, checks: Sequence[Check]) -> str:
    """``quick``, or ``paper; n_g=121``: the profile and ``-p`` overrides the checks ran with."""
    profile, overrides = _setting(record, checks)
    return f"{profile}; {overrides}" if overrides else profile


def _claim_result(verdict: Verdict, checks: Sequence[Check], record: RunRecord | None = None) -> str:
    """The result cell of one claim: its verdict, across how many seeds, the checks, the reasons."""
    if not checks:
        return f"{verdict.verdict} (no check yet)"
    label = f"**{verdict.verdict}**" if verdict.verdict in _STRONG else verdict.verdict
    across = f": {verdict.across_seeds}" if verdict.across_seeds else ""
    parts = [f"{verdict.evidence} evidence"]
    if verdict.findings:
        parts.append(f"{verdict.findings} finding{'s' * (verdict.findings > 1)}")
    if verdict.sanity:
        parts.append(f"{verdict.sanity} sanity")
    if verdict.measurements:
        parts.append(f"{verdict.measurements} measurement{'s' * (verdict.measurements > 1)}")
    if verdict.failed:
        parts.append(f"{verdict.failed} failed")
    cell = f"{label}{across}; {', '.join(parts)} ({_escape(run_setting(record, checks))})"
    if verdict.reasons:
        cell += "".join(f"<br>{_escape(reason)}" for reason in verdict.reasons)
    return cell


#: The title of the report's section on the machines of the runs.
PLATFORM_TITLE = "Where the numbers were computed"


def _made(records: Sequence[ChapterRecord]) -> list[Made]:
    """Every check of ``records`` with its notebook, in the records' order."""
    return [(r.notebook, c) for r in records for c in r.checks]


def _by_claim(records: Sequence[ChapterRecord]) -> dict[str, list[Made]]:
    by_claim: dict[str, list[Made]] = defaultdict(list)
    for made in _made(records):
        by_claim[made[1].claim].append(made)
    return by_claim


def claim_verdicts(layout: OutputLayout) -> dict[str, Verdict]:
    """The verdict of every claim of the registry from the records under ``layout``, at every seed."""
    return sweep_verdicts(CLAIMS, load_sweeps(layout, load_chapter_records(layout.claims)))


_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_CHECK_LINE = re.compile(r"^\[(?:PASS|FAIL)\] (\S+) (?:\(\w+\) )?(.*)$")  # "A1 (sanity) what"
#: the book's ``myst_heading_anchors``: headings down to this level get an anchor
ANCHOR_LEVELS = 3
_SLUG_CLEAN = re.compile(r"[^\w\u4e00-\u9fff\- ]")


@functools.cache
def _inline_parser() -> MarkdownIt:
    """CommonMark with dollar math, as the book's MyST parses a heading."""
    return MarkdownIt("commonmark").use(dollarmath_plugin)


def heading_title_text(heading: str) -> str:
    """The text MyST makes a heading's anchor from: its plain text and inline code, no math."""
    (inline,) = _inline_parser().parseInline(heading)
    return "".join(c.content for c in inline.children or [] if c.type in ("text", "code_inline"))


def heading_slug(heading: str, taken: set[str]) -> str:
    """The anchor MyST gives ``heading`` (GitHub-style slug, ``-1``, ``-2``... if ``taken``)."""
    slug = _SLUG_CLEAN.sub("", heading_title_text(heading).lower().replace(" ", "-"))
    unique, i = slug, 1
    while unique in taken:
        unique, i = f"{slug}-{i}", i + 1
    taken.add(unique)
    return unique


def chapter_sections(executed: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """Map (claim id, what) of each printed check line to the section above it.

    The section, as (heading text, anchor), is the nearest level-2 or 3 heading (those with an
    anchor) before the cell printing ``[PASS] <claim> <what>``. A missing notebook gives ``{}``.
    """
    if not executed.exists():
        return {}
    nb = read_notebook(executed)
    found: dict[tuple[str, str], tuple[str, str]] = {}
    taken: set[str] = set()
    section: tuple[str, str] | None = None
    for cell in nb.get("cells", []):
        source = "".join(cell.get("source", ""))
        if cell.get("cell_type") == "markdown":
            in_fence = False
            for line in source.splitlines():
                if line.lstrip().startswith(("```", "~~~", ":::")):
                    in_fence = not in_fence
                match = None if in_fence else _HEADING.match(line)
                if match and len(match.group(1)) <= ANCHOR_LEVELS:
                    slug = heading_slug(match.group(2), taken)
                    if len(match.group(1)) > 1:
                        section = (match.group(2), slug)
            continue
        for out in cell.get("outputs", []):
            text = "".join(out.get("text", "")) if out.get("output_type") == "stream" else ""
            for line in text.splitlines():
                match = _CHECK_LINE.match(line)
                if match and section is not None:
                    found.setdefault((match.group(1), match.group(2)), section)
    return found


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>|$#])")


def _escape(text: str) -> str:
    """Plain text made safe for a MyST table cell (no emphasis, math, links or column breaks)."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def record_sections(layout: OutputLayout, records: Sequence[ChapterRecord]) -> Sections:
    """Where the checks of ``records`` are printed: :func:`chapter_sections` of each notebook."""
    return {r.notebook: chapter_sections(layout.notebooks / f"{r.notebook}.ipynb") for r in records}


def _section(sections: Sections, made: Made) -> tuple[str, str] | None:
    notebook, check = made
    return sections.get(notebook, {}).get((check.claim, check.what))


def _target(sections: Sections, made: Made) -> str:
    """The address of the section that printed the check (the chapter, if it is not found)."""
    target = f"/outputs/notebooks/{made[0]}.ipynb"
    section = _section(sections, made)
    return f"{target}#{section[1]}" if section else target


def _link(sections: Sections, made: Made) -> str:
    """A short link to the section that made the check: ``01 § <section>``."""
    number = made[0].split("_", 1)[0]
    section = _section(sections, made)
    heading = f" § {_escape_text(section[0])}" if section else ""
    return f"[{_escape(number)}{heading}]({_target(sections, made)})"


def _escape_text(text: str) -> str:
    """Like :func:`_escape`, but inline math (``$...$``) is kept, to be typeset."""
    parts = re.split(r"(\$[^$]+\$)", text)
    return "".join(p if p.startswith("$") and p.endswith("$") else _escape(p) for p in parts)


def _plain(heading: str) -> str:
    return re.sub(r"\$([^$]*)\$", r"\1", heading)


def _chapter_titles(layout: OutputLayout) -> dict[str, str]:
    titles = {}
    for path in visible(sorted(layout.notebooks.glob("*.ipynb"))):
        nb = read_notebook(path)
        for cell in nb.get("cells", []):
            if cell.get("cell_type") != "markdown":
                continue
            match = re.search(r"^# (.+)$", "".join(cell.get("source", "")), flags=re.MULTILINE)
            if match:
                titles[path.stem] = _plain(match.group(1).strip())
                break
    return titles


def run_label(layout: OutputLayout, profiles: Sequence[str]) -> str:
    """What ran into the tree ``layout``, from its run record (``run.json``), as the pages say it."""
    return describe_run(load_run_record(layout.root), profiles)


def absent_sentence(absent: Sequence[str]) -> str:
    """What the pages say of chapters the tree has not run (an empty text when it ran them all)."""
    if not absent:
        return ""
    return (
        f"This tree has not run {format_seeds(_escape(n) for n in absent)}: the claims only "
        f"{'that chapter checks' if len(absent) == 1 else 'those chapters check'} are *not tested* in it."
    )


_PAPER_TITLES = {"A": "linear decoder", "B": "one-layer self-attention"}


def load_failures(layout: OutputLayout) -> list[dict[str, object]]:
    """The records of the notebooks whose last run failed (``<output>/failed/*.json``).

    ``ntpnb reproduce`` writes one when a notebook fails and removes it on its next success; the
    outputs in place are those of its last successful run.
    """
    failures = []
    for path in sorted(layout.failed.glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(record, dict):
            failures.append(record)
    return failures


def _failures_note(layout: OutputLayout) -> list[str]:
    failures = load_failures(layout)
    if not failures:
        return []
    lines = [
        "```{warning}",
        "The last run of these notebooks failed. This page and their chapters show their last",
        "successful run, if any; the failed run's executed copy is in `outputs/failed/`.",
        "",
    ]
    for f in failures:
        lines.append(f"* `{f.get('notebook')}` ({f.get('date')}): {_escape(str(f.get('error')))}")
    return [*lines, "```", ""]


#: The verdict rule, as the report and the claims page state it.
VERDICT_RULE = (
    "A claim's verdict follows from its checks at every seed of the sweep: *reproduced* when every",
    "check that a false claim would fail passes at every seed (a statistical check also on its",
    "samples pooled over the seeds); *reproduced with a qualification* when the chapter states a",
    "limit of that evidence (the qualification is quoted); *holds at some seeds* when the evidence",
    "holds at some seeds only (the seeds that failed are named); *does not reproduce* when a check",
    "records a finding, the claim measured not to hold, and the finding holds at every seed or",
    "pooled over them (our number and the paper's are quoted; the check pins our number, so a",
    "change is seen); *inconclusive* when a finding holds at some seeds only; *not tested* when a",
    "claim has only sanity checks of the code, or none; *check failed* when a sanity check failed",
    "at some seed, the evidence holds at no seed, or a statistical check fails pooled. A",
    "*measurement* (a statement of ours beyond the paper, such as how a threshold the paper leaves",
    "open moves with the size) is decided on its samples pooled over the seeds; when established it",
    "qualifies the claim, and otherwise it is listed as not established.",
)


def _seeds_sentence(sweeps: Sequence[Sweep]) -> str:
    """Which seeds the verdicts rest on, and which records were set aside, in a sentence or two."""
    counted = sorted({len(s.seeds) for s in sweeps})
    if not sweeps:
        return ""
    book = sorted({s.book_seed for s in sweeps})
    if counted == [1]:
        text = (
            f"The verdicts rest on one seed per chapter (the book's, {format_seeds(book)}): no seed "
            "sweep was run (`ntpnb reproduce --seeds N`)."
        )
    else:
        per = ", ".join(f"{s.book.notebook.split('_', 1)[0]}: {format_seeds(s.seeds)}" for s in sweeps)
        text = f"The verdicts rest on every seed each chapter ran at, the book's first ({per})."
    aside = [
        f"{s.book.notebook} seed {seed}: {_escape(why)}" for s in sweeps for seed, why in s.excluded.items()
    ]
    if aside:
        text += " Not counted: " + "; ".join(aside) + "."
    return text


def _across(series: Series) -> str:
    """The cells of one check across the seeds: at how many it held, and its spread or pooled value."""
    n = len(series.seeds)
    held = f"{n - len(series.failed_seeds)} of {n}"
    if series.failed_seeds:
        held += f" (failed at {format_seeds(series.failed_seeds)})"
    if series.statistical:
        outcome = "holds" if series.pooled_passed() else "**fails**"
        spread = f"pooled: {_escape(series.pooled_measured())}, {outcome}"
    else:
        values = series.spread()
        spread = f"{_escape(values[0])} to {_escape(values[1])}" if values else ""
    return f"{held} | {spread}"


def render_report(layout: OutputLayout, absent: Sequence[str] = ()) -> str:
    """The report page (MyST markdown) for the records under ``layout`` and its seed sweep.

    ``absent`` names the project's chapters that the tree has not run (the page says so).
    """
    records = load_chapter_records(layout.claims)
    made = _made(records)
    sections = record_sections(layout, records)
    titles = _chapter_titles(layout)
    by_claim = _by_claim(records)
    sweeps = load_sweeps(layout, records)

    results = sweep_verdicts(CLAIMS, sweeps)
    counts = verdict_counts(results)
    profiles = sorted({c.profile for _, c in made})
    run = load_run_record(layout.root)
    lines = [
        "---",
        "html_theme.sidebar_secondary.remove: true",  # the tables need the page's full width
        "---",
        "",
        "# Reproducibility report",
        "",
        "This page is generated by `ntpnb book` from the claim records that the notebooks wrote",
        "when they ran (`outputs/claims/*.json` at the book's seed, `outputs/seeds/seed=S/claims/`",
        "at the further seeds of the sweep); nothing on it is typed by hand. Every claim of both",
        "papers is listed: one that no chapter checks yet, or whose check failed, says so. Each",
        f"claim and the place in the paper are listed on {{doc}}`the claims page </{CLAIMS_PAGE_DOCNAME}>`.",
        "",
        f"**{format_counts(counts, len(CLAIMS))}**; {len(made)} checks at the book's seed; what ran: "
        f"{_escape(describe_run(run, profiles))} (`paper` = the papers' settings, `quick` = the "
        "seconds-scale test run)." + (f" {absent_sentence(absent)}" if absent else ""),
        "",
        _seeds_sentence(sweeps),
        "",
        *VERDICT_RULE,
        "",
    ]
    lines += _failures_note(layout)
    for paper in PAPERS:
        lines += [f"## Paper {paper}: {_PAPER_TITLES[paper]}", ""]
        lines += [
            "| claim | statement | the paper reports | verdict | checked in |",
            "|---|---|---|---|---|",
        ]
        for cid, spec in CLAIMS.items():
            if spec.paper != paper:
                continue
            checks = by_claim.get(cid, [])
            result = _claim_result(results[cid], [c for _, c in checks], run)
            where = "<br>".join(dict.fromkeys(_link(sections, m) for m in checks))
            lines.append(
                f"| **{cid}** ({spec.where}) | {spec.statement} | {spec.paper_value} | {result} | {where} |"
            )
        lines.append("")

    lines += [
        "## Every check",
        "",
        "Each row is one assertion a chapter made: the value it measured at the book's seed (rounded",
        "as printed), what it required (the tolerance), what the paper reports, and the result; then",
        "at how many seeds of the sweep it held, and the smallest and largest value it measured over",
        "them (for a statistical check, its samples pooled over the seeds and the test's outcome).",
        "The claim id links to the section of the chapter that makes the check. Rows marked *sanity*",
        "test the code or the setting (an invariant that holds by construction), not the paper's",
        "claim; rows marked *finding* record a claim measured not to hold; rows marked",
        "*measurement* state a measurement of ours that qualifies the claim (decided pooled).",
        "",
    ]
    if not made:
        lines += ["No notebook has recorded a check yet: run `ntpnb reproduce`.", ""]
    for sweep in sweeps:
        record = sweep.book
        if not record.checks:
            continue
        notebook = record.notebook
        profile_name, overrides = _setting(run, record.checks)
        profile = f"`{profile_name}` profile" + (f" with {_escape(overrides)}" if overrides else "")
        title = _escape(titles.get(notebook, notebook))
        lines += [
            f"### {_escape(notebook.split('_', 1)[0])}. {title}",
            "",
            f"{{doc}}`The chapter </outputs/notebooks/{notebook}>`, run at the {profile}, "
            f"seeds {format_seeds(sweep.seeds)}.",
            "",
            "| claim | what was measured | ours | required | the paper | result | seeds | across seeds |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for series in series_of(sweep):
            c = series.checks.get(sweep.book_seed)
            if c is None:
                continue
            result = "pass" if c.passed else "**FAIL**"
            what = _escape(c.what) if c.kind == "claim" else f"*{c.kind}:* {_escape(c.what)}"
            claim = f"[{_escape(c.claim)}]({_target(sections, (notebook, c))})"
            lines.append(
                f"| {claim} | {what} | {_escape(c.measured)} "
                f"| {_escape(c.required)} | {_escape(c.paper)} | {result} | {_across(series)} |"
            )
        lines.append("")

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

    unknown = sorted({c.claim for _, c in made} - set(CLAIMS), key=sort_key)
    if unknown:
        lines += [
            "```{warning}",
            f"Checks name claim ids missing from the registry: {', '.join(unknown)}.",
            "```",
            "",
        ]
    return "\n".join(lines)


def verdict_summary(layout: OutputLayout) -> str:
    """One line of verdict counts of the records under ``layout``, overall and per paper."""
    results = claim_verdicts(layout)
    per_paper = "; ".join(
        f"Paper {paper}: "
        + format_counts(verdict_counts({c: v for c, v in results.items() if CLAIMS[c].paper == paper}))
        for paper in PAPERS
    )
    return f"{format_counts(verdict_counts(results), len(CLAIMS))} ({per_paper})"


def render_verdict_summary(layout: OutputLayout, absent: Sequence[str] = ()) -> str:
    """The fragment the book's introduction includes: the verdict counts of the last runs."""
    made = _made(load_chapter_records(layout.claims))
    if not made:
        return "No chapter has recorded a claim check yet: run `ntpnb reproduce`.\n"
    profiles = sorted({c.profile for _, c in made})
    absent_text = f" {absent_sentence(absent)}" if absent else ""
    return (
        f"**Verdicts of the runs that built this book** ({_escape(run_label(layout, profiles))}): "
        f"{verdict_summary(layout)}. Each claim's verdict, and the checks behind it, are in the "
        f"{{doc}}`/outputs/report`.{absent_text}\n"
    )


_CLAIMS_INTRO = (
    "# The claims",
    "",
    "Every claim of the two papers that this book reproduces has an id. This page is generated by",
    "`ntpnb book` from the registry of claims (`ntpnb/chapter/registry.py`, the one place where a",
    "claim's statement and the paper's value are written) and from the records of the last runs,",
    "which say where each claim is checked and at how many seeds it holds.",
    "",
    "A chapter that checks a claim prints a line `[PASS] <id> ...` with the measured value and the",
    "tolerance, and records it in `outputs/claims/<chapter>.json`. A check that fails prints",
    "`[FAIL]` and the chapter goes on: every check runs and every figure is drawn, and the chapter",
    "ends with one error that lists every failed check, which fails the run at the book's seed.",
    "Lines `[PASS] <id> (sanity) ...` are sanity checks of the code or of our instances: they must",
    "hold at every seed, but they are not evidence for the claim. Lines `[PASS] <id> (finding) ...`",
    "record a claim measured not to hold, with our number and the paper's; lines",
    "`[NOTE] <id> qualification: ...` state a limit of the evidence; lines",
    "`[PASS] <id> (measurement) ...` (or `[OPEN]`, not established at that seed) state a",
    "measurement of ours beyond the paper that qualifies the claim, decided over every seed.",
    "Every chapter also runs at",
    "further seeds (`outputs/seeds/`), and the",
    "{doc}`reproducibility report </outputs/report>` gives each claim its verdict from the records",
    "of every seed: reproduced, reproduced with a qualification, holds at some seeds, does not",
    "reproduce, inconclusive, or not tested.",
    "",
)


def _where_checked(sections: Sections, checks: Sequence[Made]) -> str:
    """Links to the sections that check a claim, evidence first, each kind named."""
    if not checks:
        return "not checked by any chapter yet"
    parts = []
    for kind in ("claim", "finding", "sanity", "measurement"):
        label = "" if kind == "claim" else f"{kind}: "
        links = list(dict.fromkeys(_link(sections, m) for m in checks if m[1].kind == kind))
        if links:
            parts.append(label + ", ".join(links))
    return "<br>".join(parts)


def render_claims_page(layout: OutputLayout, absent: Sequence[str] = ()) -> str:
    """The claims page (MyST markdown): every claim of the registry, where it is checked, its verdict."""
    records = load_chapter_records(layout.claims)
    by_claim, sections = _by_claim(records), record_sections(layout, records)
    results = sweep_verdicts(CLAIMS, load_sweeps(layout, records))
    label = _escape(run_label(layout, sorted({c.profile for r in records for c in r.checks})))
    lines = [*_CLAIMS_INTRO, f"The verdicts below are those of the run this book shows: {label}. "]
    lines[-1] = (lines[-1] + absent_sentence(absent)).rstrip()
    lines.append("")
    for paper in PAPERS:
        lines += [f"## Paper {paper}: {_PAPER_TITLES[paper]}", "", f"{PAPERS[paper]}.", ""]
        lines += [
            "| id | claim | in the paper | the paper reports | checked in | verdict |",
            "|---|---|---|---|---|---|",
        ]
        for cid, spec in CLAIMS.items():
            if spec.paper == paper:
                where = _where_checked(sections, by_claim.get(cid, []))
                verdict = results[cid]
                across = f": {verdict.across_seeds}" if verdict.across_seeds else ""
                lines.append(
                    f"| {cid} | {spec.statement} | {spec.where} | {spec.paper_value} | {where} "
                    f"| {verdict.verdict}{across} |"
                )
        lines.append("")
    return "\n".join(lines)


def write_report(layout: OutputLayout, absent: Sequence[str] = ()) -> Path:
    """Write the report to ``<layout.root>/report.md`` and return its path.

    The introduction's verdict fragment ``verdicts.md`` and the claims page ``claim_list.md``
    (:func:`render_claims_page`) are written beside it. ``absent`` names the project's chapters
    the tree has not run (each page says so).
    """
    atomic_write_text(layout.root / "verdicts.md", render_verdict_summary(layout, absent))
    atomic_write_text(layout.root / "claim_list.md", render_claims_page(layout, absent))
    return atomic_write_text(layout.root / "report.md", render_report(layout, absent))
