"""The generated reproducibility report, claims page and verdict fragment; the chapter claim table."""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import re
import subprocess
import sys

import pytest
from markupsafe import escape
from threadpoolctl import threadpool_info

from ntpnb.book._report import (
    MAPS_TITLE,
    NO_MAP_HEADLINE,
    PLATFORM_TITLE,
    chapter_sections,
    claim_card,
    heading_slug,
    read_tree,
    render_claims_page,
    render_report,
    run_line,
    write_report,
)
from ntpnb.chapter._claims import ClaimLog
from ntpnb.errors import ClaimCheckError, InvalidDataError, NTPError
from ntpnb.evidence._registry import CLAIMS, MAPS, PAPERS, _maps
from ntpnb.evidence._samples import sample_of
from ntpnb.evidence._series import Sweep
from ntpnb.evidence._verdicts import NOT_REPRODUCED, QUALIFIED, REPRODUCED, ProtocolVerdict
from ntpnb.evidence._vocabulary import VERDICT_RULE
from ntpnb.records._places import output_tree
from ntpnb.records._platform import cpu_model
from ntpnb.records._run import ChapterRun
from ntpnb.records._tree import TreeRecord

from conftest import ROOT


def test_claims_page_is_generated_from_the_registry_and_the_records(run):
    layout, _ = run
    page = render_claims_page(read_tree(layout))
    for cid, spec in CLAIMS.items():
        (row,) = [line for line in page.splitlines() if line.startswith(f"| **{cid}** <br>")]
        statement = f"{spec.statement}<br>*The paper reports:* {spec.paper_value}"
        assert f"| **{cid}** <br>{spec.where} | {statement} |" in row
        assert f'href="report.html#claim-{cid.lower()}"' in row  # its badge opens its card
    a1 = next(line for line in page.splitlines() if line.startswith("| **A1**"))
    # where the run checked A1: its evidence's sections, each linked (its sanity check's section is
    # one of them: not repeated)
    demo = "/outputs/notebooks/07_demo.ipynb"
    evidence = f"[7 § Claim A1: the $\\mathcal{{H}}$ bound]({demo}#claim-a1-the--bound)"
    assert f"<br>{evidence}, [7 § Equality](/outputs/notebooks/07_demo.ipynb#equality) |" in a1
    assert "sanity:" not in a1
    assert 'class="ntpnb-badge ntpnb-v-reproduced"' in a1
    assert "| **A3**" in page and "not checked by any chapter yet |" in page
    assert page.count(":class: ntpnb-claim-list") == len(PAPERS)  # a table per paper, styled to fit
    write_report(read_tree(layout))
    assert (layout.root / "claim_list.md").read_text() == page


def test_introduction_lists_every_chapter():
    intro = (ROOT / "book" / "intro.md").read_text().split("## Chapters", 1)[1].split("\n## ", 1)[0]
    for path in sorted((ROOT / "notebooks").glob("*.md")):
        assert f"{{doc}}`/outputs/notebooks/{path.stem}`" in intro, path.stem


def executed_notebook(path, cells):
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb))


def md(text):
    return {"cell_type": "markdown", "source": text, "metadata": {}}


def code(printed):
    out = {"output_type": "stream", "name": "stdout", "text": printed}
    return {"cell_type": "code", "source": "", "metadata": {}, "outputs": [out]}


#: The failing check's words, its math typeset on the pages (the paper's too), as a chapter writes it.
DECAY = r"decay rate of $\operatorname{CE} - \mathcal{H}$"


@pytest.fixture
def run(tmp_path, capsys):
    """A fake chapter run: two passing checks of A1 (one section each), one failing A2."""
    layout = output_tree(tmp_path / "outputs")
    log = ClaimLog("07_demo", "quick", layout.root)
    log.check("A1", "gap at random W", 0.25, ">", 0.0, digits=2)
    log.check("A1", "gap where softmax = p", 1e-15, "<", 1e-12, floor=1e-12)
    log.check("A1", "KL sum is non-negative", 0.1, ">=", 0.0, kind="sanity")
    assert not log.check("A2", DECAY, -0.5, "~", -1.0, tol=0.02, paper=r"$e^{-\gamma}$")
    with pytest.raises(ClaimCheckError):
        log.conclude()
    printed = capsys.readouterr().out.split("[")
    lines = ["[" + p for p in printed if p]
    executed_notebook(
        layout.notebooks / "07_demo.ipynb",
        [
            md("# A demo chapter\n\nIntro."),
            md("## Claim A1: the $\\mathcal{H}$ bound\n\n```python\n# not a heading\n```"),
            code(lines[0]),
            md("### Equality"),
            code(lines[1] + lines[2]),
            md("## Claim A2\n\n#### Too deep for an anchor\n\n## Equality"),
            code(lines[3]),
        ],
    )
    return layout, log


def test_chapter_sections_finds_the_heading_above_each_check(run):
    layout, _ = run
    sections = chapter_sections(layout.notebooks / "07_demo.ipynb")
    assert sections[("A1", "gap at random W")] == (
        "Claim A1: the $\\mathcal{H}$ bound",
        "claim-a1-the--bound",
    )
    assert sections[("A1", "gap where softmax = p")] == ("Equality", "equality")
    assert sections[("A1", "KL sum is non-negative")] == ("Equality", "equality")  # "A1 (sanity) ..."
    assert sections[("A2", DECAY)] == ("Equality", "equality-1")  # level 4: no anchor


def test_heading_slugs_are_those_of_myst():
    taken = set()
    assert heading_slug("Equality: only where the softmax matches $\\hat p_j$", taken) == (
        "equality-only-where-the-softmax-matches-"
    )
    assert heading_slug("The `ntpnb` *command*", taken) == "the-ntpnb-command"
    assert heading_slug("The `ntpnb` command", taken) == "the-ntpnb-command-1"


def _summary_row(report: str, cid: str) -> str:
    """The row of ``cid`` in the report's summary table."""
    head = f"| [**{cid}**](#claim-{cid.lower()}) |"
    return next(line for line in report.splitlines() if line.startswith(head))


def _plain(text: str) -> str:
    """A short statement as the pages write it (its star escaped for MyST)."""
    return text.replace("*", "\\*")


def _card(report: str, cid: str) -> str:
    """The card of ``cid`` on the report: from its anchor to the next card's (or section's) heading."""
    start = report.index(f"(claim-{cid.lower()})=\n### {cid}: {_plain(CLAIMS[cid].short)}\n")
    ends = [i for i in (report.find("\n(claim-", start + 1), report.find("\n## ", start)) if i > 0]
    return report[start : min(ends)]


def test_report_opens_with_the_verdicts_then_a_card_per_claim(run):
    layout, _ = run
    report = render_report(read_tree(layout))
    first, _, rest = report.partition("\n(claim-a1)=\n")
    n = len(CLAIMS)
    # the first screen: the counts, what ran in one line, the summary; no file path, no seed list
    # (the summary links every card: no right-hand contents)
    assert first.startswith(
        "---\nhtml_theme.sidebar_secondary.remove: true\n---\n\n# Reproducibility report\n\n"
        f"**1 of {n} claims reproduced, {n - 2} not tested, 1 check failed.** "
        "What ran: the quick test settings, seed 0 for every chapter, commit not recorded.\n"
    )
    assert "outputs/" not in first and "seeds/" not in first and ".json" not in first
    assert first.index(":class: ntpnb-summary") < first.index("| claim | in plain words | verdict | why |")
    for cid, spec in CLAIMS.items():  # each claim: a row in plain words, linked to its card below
        assert f'| {_plain(spec.short)} | <span class="ntpnb-badge' in _summary_row(report, cid)
        assert _card(report, cid)
    assert rest.index("## Every check") < rest.index("## The verdict rule") < rest.index("## What ran")
    assert "## The verdict rule" not in first and VERDICT_RULE[0] in rest


def test_report_lists_every_claim_with_its_status(run):
    layout, _ = run
    report = render_report(read_tree(layout))
    a1 = _summary_row(report, "A1")
    title = "A1 (Sec. 2): reproduced: holds at the one seed"
    assert f'<span class="ntpnb-badge ntpnb-v-reproduced" title="{title}">' in a1
    assert "| gap at random W: 0.25 at the one seed, required \\> 0 |" in a1  # why: the decisive evidence
    card = _card(report, "A1")
    assert "reproduced</span></span> holds at the one seed; checked in [7 § " in card
    assert card.count('class="ntpnb-badge ') == 1  # one verdict badge a card
    assert "\nOurs\n: gap at random W: 0.25 at the one seed, required \\> 0\n" in card
    summary = "2 evidence checks: 2 hold; 1 sanity check: holds (they test the code or the setting, "
    summary += "never the claim)."
    assert f"\nChecks\n: <details><summary>{summary}</summary>\n" in card
    assert "\n  - gap at random W: ours 0.25; required \\> 0; holds at the one seed\n" in card
    assert "(/outputs/notebooks/07_demo.ipynb#claim-a1-the--bound); [7 § Equality]" in card
    assert "(quick)" not in report and "(paper)" not in report  # no profile tags
    a2 = _card(report, "A2")
    assert "the evidence holds at no seed</span></span> the evidence fails at the one seed" in a2
    assert "<summary>1 evidence check: fails.</summary>" in a2
    assert f"  - {DECAY}: ours -0.5000; required = -1 ± 0.02; fails at the one seed\n" in a2  # math kept
    failed = f"{DECAY}: fails at seed 0 (measured -0.5000, required = -1 ± 0.02)"
    assert f"\nDecided by\n: {failed}\n" in a2 and "\nOurs\n" not in a2  # why, said once
    assert "\nFailed\n" not in a2  # what decides is not said twice
    assert "(/outputs/notebooks/07_demo.ipynb#equality-1)" in a2
    assert "check failed" in _summary_row(report, "A2")
    a3 = _card(report, "A3")
    assert (
        'not tested</span><span class="ntpnb-badge-kind">no chapter of this run checks it</span></span>\n'
        in a3
    )
    assert "Not tested (no chapter of this run checks them): A3, A4," in report
    assert "The run: profile quick, as its claim records say" in report
    assert "; 4 checks at the book's seed." in report
    assert "The verdicts rest on one seed per chapter (the book's, 0)" in report
    # every check, collapsed, with our value, the requirement and the paper's value
    block = '<details class="ntpnb-checks ntpnb-chapter-checks ntpnb-has-fail"><summary>7. A demo chapter'
    assert block in report
    # its summary: what the chapter's claims did (one that does not hold named), then its checks
    tally = "4 checks across seed 0: 3 hold, 1 fails"  # each outcome in its own word, as the chapter says it
    assert f"<span>(claims: 1 reproduced, 1 check failed (A2); {tally})</span>" in report
    assert "| *sanity:* KL sum is non-negative |" in report
    assert f"| {DECAY} | -0.5000 | = -1 ± 0.02 | $e^{{-\\gamma}}$ | at the one seed | **fails** |" in report
    assert "| \\< 1e-12 | \\< 1e-12 |" in report


def test_report_flags_unregistered_claim_ids(tmp_path):
    layout = output_tree(tmp_path / "outputs")
    ClaimLog("08_other", "paper", layout.root).check("Z9", "x", 1.0, ">", 0.0)
    report = render_report(read_tree(layout))
    assert "missing from the registry: Z9" in report and "(claim-z9)" not in report
    assert "| [Z9](/outputs/notebooks/08_other.ipynb) |" in report  # no executed notebook: the chapter


def test_report_without_any_run_lists_every_claim_as_unchecked(tmp_path):
    report = render_report(read_tree(output_tree(tmp_path / "outputs")))
    not_checked = '<span class="ntpnb-badge-kind">no chapter of this run checks it</span></span>\n'
    assert report.count(not_checked) == len(CLAIMS)
    assert report.count('class="ntpnb-badge ntpnb-v-not-tested"') == 2 * len(CLAIMS)  # summary and card
    assert "No notebook has recorded a check yet" in report
    assert "What ran: nothing yet." in report


def test_summary_is_the_chapter_claim_table(run):
    _, log = run
    table = log.summary()
    text = repr(table)
    assert text.splitlines()[0] == "Every check of this chapter: 3 passed, 1 failed"
    assert "PASS A1 (sanity) KL sum is non-negative: 0.1000 (required ≥ 0)" in text
    assert f"FAIL A2   {DECAY}: -0.5000 (required = -1 ± 0.02)" in text  # a terminal prints the TeX
    html = table._repr_html_()
    assert html.startswith(
        '<details class="ntpnb-checks ntpnb-chapter-checks ntpnb-has-fail">'
        "<summary>Every check of this chapter"
    )
    assert html.count("<tr class=") == 4 and 'class="ntpnb-fail"' in html
    assert "<th>paper</th>" in html and "$" not in html  # the math typeset, as MathJax reads it
    assert '<td><span class="math notranslate nohighlight">\\(e^{-\\gamma}\\)</span></td>' in html
    assert (
        'decay rate of <span class="math notranslate nohighlight">\\(\\operatorname{CE} - \\mathcal{H}\\)'
        in html
    )


def test_report_gives_findings_and_qualifications_their_verdicts(tmp_path, capsys):
    layout = output_tree(tmp_path / "outputs")
    log = ClaimLog("08_other", "paper", layout.root)
    log.check("B11", "local correlation", 0.986, "~", 0.986, tol=0.002, kind="finding", paper="> 0.99")
    log.check("A5", "corr at the largest radius", 0.9999, ">", 0.999)
    log.qualify("A5", "measured up to B = 2400 only")
    log.check("A6", "norm grows", 1.0, ">", 0.0, kind="sanity")
    assert "[NOTE] A5 qualification: measured up to B = 2400 only" in capsys.readouterr().out
    report = render_report(read_tree(layout))
    b11 = _card(report, "B11")
    assert (
        'does not reproduce</span><span class="ntpnb-badge-kind">a counterexample</span></span> a finding'
        in b11
    )
    finding = "local correlation: 0.9860 at the one seed, against the paper's \\> 0.99"
    assert f"\nDecided by\n: {finding}\n" in b11
    assert f"| {finding} |" in _summary_row(report, "B11")
    a5 = _card(report, "A5")
    assert 'ntpnb-badge-kind">a stated limit of the evidence</span></span> holds at the one seed' in a5
    assert "\nDecided by\n: measured up to B = 2400 only\n" in a5
    a6 = _card(report, "A6")
    assert 'ntpnb-badge-kind">only sanity checks</span></span> checked in ' in a6
    assert "\nChecks\n: 1 sanity check: holds (they test the code or the setting, never the claim).\n" in a6
    sanity_only = "<br>sanity: [8](/outputs/notebooks/08_other.ipynb) |"  # a section of sanity checks only
    a6_row = next(
        ln for ln in render_claims_page(read_tree(layout)).splitlines() if ln.startswith("| **A6**")
    )
    assert a6_row.endswith(sanity_only)
    assert (
        f"**0 of {len(CLAIMS)} claims reproduced, 1 reproduced with a qualification, 1 does not reproduce, "
        f"1 by construction, {len(CLAIMS) - 3} not tested.**" in report
    )


def test_verdict_summary_fragment(run, tmp_path):
    from ntpnb.book._report import render_verdict_summary

    layout, _ = run
    text = render_verdict_summary(read_tree(layout))
    n_a = sum(c.paper == "A" for c in CLAIMS.values())
    n_b = len(CLAIMS) - n_a
    # no run.json in this hand-made tree: labelled by its records' profile, saying so
    label = "profile quick, as its claim records say (it has no run.json, the record of what ran"
    assert text.startswith(f"**Verdicts of the runs that built this book** ({label}")
    assert f"): 1 of {len(CLAIMS)} claims" in text
    per_paper = f"(Paper A: 1 of {n_a} claims reproduced, {n_a - 2} not tested, 1 check failed; "
    assert per_paper + f"Paper B: 0 of {n_b}" in text
    write_report(read_tree(layout))
    assert (layout.root / "verdicts.md").read_text() == text
    empty = output_tree(tmp_path / "empty")
    assert "run `ntpnb reproduce`" in render_verdict_summary(read_tree(empty))


def test_every_page_labels_the_tree_by_its_run_record(run):
    """A -p run is labelled by what it ran (its run.json), not by its checks' profile alone."""
    from ntpnb.book._report import render_verdict_summary
    from ntpnb.records._tree import TreeRecord, write_tree_record

    layout, _ = run
    write_tree_record(layout.root, TreeRecord("quick", {"n_g": "121"}, (3,), ("07_demo",)))
    label = "profile quick with n\\_g=121; seed 3"
    report = render_report(read_tree(layout, absent=["08_other"]))
    assert f"The run: {label}; 4 checks at the book's seed." in report
    assert "What ran: the quick test settings with n\\_g=121, seed 0 for chapter 7, commit not" in report
    absent = "This tree has not run 08\\_other: the claims only that chapter checks are *not tested* in it."
    assert report.count(absent) == 2  # on the first screen and in what ran
    head = f"**Verdicts of the runs that built this book** ({label}): "
    assert render_verdict_summary(read_tree(layout)).startswith(head)
    assert f"those of the run this book shows: {label}." in render_claims_page(read_tree(layout))


# ------------------------------------------------------------------ the platform of the runs
PRESCOTT_1T = {"OPENBLAS_CORETYPE": "Prescott", "OPENBLAS_NUM_THREADS": "1"}


def _chapter_run_elsewhere(root, notebook: str, env: dict[str, str]) -> None:
    """A chapter's ClaimLog, run in another process with the environment ``env`` added."""
    script = (
        "from ntpnb.chapter._claims import ClaimLog\n"
        f"ClaimLog({notebook!r}, 'quick', {str(root)!r}).check('A1', 'gap', 0.25, '>', 0.0, digits=2)\n"
    )
    full = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"} | env
    subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=full, check=True, capture_output=True)


def test_the_report_shows_the_platform_each_run_recorded(tmp_path, monkeypatch):
    """The report renders what the runs recorded (their kernel and threads), not this process's."""
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    layout = output_tree(tmp_path / "outputs")
    _chapter_run_elsewhere(layout.root, "07_demo", PRESCOTT_1T)
    recorded = json.loads((layout.claims / "07_demo.json").read_text())["platform"]
    assert recorded["openblas_coretype"] == "Prescott"
    assert recorded["thread_env"]["OPENBLAS_NUM_THREADS"] == "1"
    assert all(lib["num_threads"] == 1 for lib in recorded["threadpools"] if lib["user_api"] == "blas")
    if any(lib["internal_api"] == "openblas" for lib in threadpool_info()) and platform.machine() == "x86_64":
        kernels = {
            lib["architecture"] for lib in recorded["threadpools"] if lib["internal_api"] == "openblas"
        }
        assert kernels <= {"Prescott", "Katmai"}  # the kernel the run really used
    page = render_report(read_tree(layout))
    section = page.split(f"## {PLATFORM_TITLE}", 1)[1]
    assert "Every chapter (07_demo) ran on:" in section
    assert "| `OPENBLAS_CORETYPE` | Prescott |" in section
    assert "`OPENBLAS_NUM_THREADS=1`" in section
    assert f"| CPU | {cpu_model()} |" in section
    assert f"numpy {recorded['packages']['numpy']}" in section


def test_the_report_says_where_two_runs_differ(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    layout = output_tree(tmp_path / "outputs")
    _chapter_run_elsewhere(layout.root, "07_demo", PRESCOTT_1T)
    _chapter_run_elsewhere(layout.root, "08_demo", {"OPENBLAS_NUM_THREADS": "1"})
    (layout.claims / "09_old.json").write_text(
        json.dumps({"notebook": "09_old", "profile": "quick", "checks": []})
    )
    section = render_report(read_tree(layout)).split(f"## {PLATFORM_TITLE}", 1)[1]
    differ = re.search(r"The chapters ran on 2 different platforms; they differ in: (.*)\.\n", section)
    assert differ and "`OPENBLAS_CORETYPE`" in differ.group(1) and "CPU" not in differ.group(1)
    assert "Chapter 07_demo:" in section and "Chapter 08_demo:" in section
    assert "No platform recorded (an older run): 09_old." in section


def test_the_report_names_the_notebooks_whose_last_run_failed(tmp_path):
    layout = output_tree(tmp_path / "outputs")
    assert "last run of these notebooks failed" not in render_report(read_tree(layout))
    layout.failed.mkdir()
    record = {"notebook": "02_demo", "date": "2026-01-02 03:04 UTC", "error": "ValueError: bad *input*"}
    (layout.failed / "02_demo.json").write_text(json.dumps(record))
    (layout.failed / "03_half.json").write_text('{"notebook": ')  # unreadable: skipped
    report = render_report(read_tree(layout))
    assert "The last run of these notebooks failed" in report
    assert "* `02_demo` (2026-01-02 03:04 UTC): ValueError: bad \\*input\\*" in report
    assert "03_half" not in report


def test_what_ran_is_one_line_that_says_compactly_where_chapters_differ(tmp_path):
    tree = read_tree(output_tree(tmp_path / "outputs"))

    def sweep(notebook: str, seeds: range) -> Sweep:
        records = {s: ChapterRun(notebook, "paper", seed=s, complete=True) for s in seeds}
        return Sweep(records[seeds[0]], records)

    five = [sweep(f"0{i}_chapter", range(5)) for i in (1, 2, 3, 5)]
    tree = dataclasses.replace(tree, sweeps=five, commits=("commit 460b93a",))
    assert run_line(tree) == "the papers' settings, seeds 0-4 for every chapter, commit 460b93a"
    tree = dataclasses.replace(tree, sweeps=[sweep("01_chapter", range(2)), sweep("02_other", range(2, 5))])
    expected = "seeds 0 and 1 for chapter 1, seeds 2-4 for chapter 2, commit 460b93a"
    assert run_line(tree) == f"the papers' settings, {expected}"
    run = TreeRecord("paper", {"n": "3"}, (0, 1, 2, 3, 4), ())
    tree = dataclasses.replace(tree, run=run, sweeps=[*five, sweep("07_attention", range(1))])
    expected = "seeds 0-4 for chapters 1-3 and 5, seed 0 for chapter 7, commit 460b93a"
    assert run_line(tree) == f"the papers' settings with n=3, {expected}"


def test_a_card_shows_each_field_of_the_verdict_in_its_own_words(run):
    """Protocols with their own verdicts, measurements beside the claim, marginal seeds, notes."""
    layout, _ = run
    tree = read_tree(layout)
    sub = [
        ProtocolVerdict(
            "authors' loss", "the loss the authors' code trains", REPRODUCED, "holds on 500 trials", "a"
        ),
        ProtocolVerdict(
            "paper's loss", "the loss the paper states", NOT_REPRODUCED, "contradicted", "corr: 0.94"
        ),
    ]
    verdict = dataclasses.replace(
        tree.results["A1"],
        verdict=QUALIFIED,
        qualifications=("decided under [authors' loss] (reproduced); under [paper's loss]: ...",),
        beyond=("drift of the threshold: -0.042 ± 0.009",),
        explanations=("under [authors' loss] (the loss $(1-p_y)^2$): reproduced, 0.994",),
        marginal=("global distance: holds pooled (q = 0.020); alone, seeds 2 and 3 do not bear it out",),
        notes=("the authors' stored Fig. 5a: 0.995, consistent with ours", "a second note"),
        protocols=tuple(sub),
    )
    tree = dataclasses.replace(tree, results={**tree.results, "A1": verdict})
    card = "\n".join(claim_card(tree, "A1", CLAIMS["A1"]))
    assert (
        "\nProtocols\n: - \\[authors' loss\\] the loss the authors' code trains: *reproduced: holds" in card
    )
    assert (
        "\n  - \\[paper's loss\\] the loss the paper states: *does not reproduce: contradicted*; corr: 0.94\n"
        in card
    )
    assert card.count('class="ntpnb-badge ') == 1  # the protocols' verdicts in words, one badge a card
    assert (
        "\nQualification\n: decided under \\[authors' loss\\] (reproduced); under \\[paper's loss\\]: ...\n"
        in card
    )
    # a protocol's words quoted in a sentence keep their math typeset, the rest is plain words
    assert "\nExplanation\n: under \\[authors' loss\\] (the loss $(1-p_y)^2$): reproduced, 0.994\n" in card
    # what a reader checks second, in one collapsed block: the measurements beyond the paper (never
    # a qualification), the marginal seeds, then the notes
    summary = "beyond the paper: 1; marginal seeds: 1; notes: 2"
    assert f"\nMore\n: <details><summary>{summary}</summary>\n" in card
    assert "  - *Beyond the paper:* drift of the threshold: -0.042 ± 0.009\n" in card
    assert "  - *Marginal seeds:* global distance: holds pooled (q = 0.020); alone, seeds 2 and 3" in card
    notes = "  - *Notes:* the authors' stored Fig. 5a: 0.995, consistent with ours\n  - *Notes:* a second"
    assert notes in card
    fields = ["The paper", "Protocols", "Checks", "Qualification", "More"]
    assert [card.index(f"\n{name}\n: ") for name in fields] == sorted(
        card.index(f"\n{n}\n: ") for n in fields
    )


def test_a_claim_with_protocols_shows_each_protocols_verdict_on_its_card_and_its_checks(tmp_path):
    layout = output_tree(tmp_path / "outputs")
    log = ClaimLog("07_attention", "paper", layout.root)
    log.check("B10", "mean local corr", 0.995, ">", 0.99, protocol="authors' loss")
    log.check("B10", "mean local corr", 0.94, ">", 0.99, protocol="paper's loss")
    report = render_report(read_tree(layout))
    card = _card(report, "B10")
    # decided as the paper states it (its loss); the authors' code's loss explains it
    assert "the evidence holds at no seed</span></span> the evidence fails at the one seed" in card
    papers, authors = (f"\\[{key}\\] {words}" for key, words in CLAIMS["B10"].protocols.items())
    assert f"\nProtocols\n: - {papers}: *check failed (the evidence holds at no seed): " in card
    assert f"\n  - {authors}: *reproduced: holds at the one seed*" in card
    assert card.count('class="ntpnb-badge ') == 1
    assert "\nExplanation\n: under \\[authors' loss\\] (the loss the authors' code trains" in card
    assert "| \\[authors' loss\\] mean local corr | 0.9950 |" in report  # every check names its protocol
    assert "| \\[paper's loss\\] mean local corr | 0.9400 |" in report


def test_a_maps_checks_count_in_no_verdict_and_the_report_lists_each_map_apart(tmp_path):
    layout = output_tree(tmp_path / "outputs")
    log = ClaimLog("08_beyond", "paper", layout.root)
    log.check("M1", "grid spans 2/L", 0.01, "<=", 0.1, kind="sanity")
    log.check(
        "M1", "distance ratio above 2/L_inf", sample_of("instances", [0.5]), ">", 0.1, kind="measurement"
    )
    log.check("A6", "norm grows", 1.0, ">", 0.0)
    with pytest.raises(InvalidDataError, match=r"map M1: .* kind 'claim'"):
        log.check("M1", "corr", 0.9, ">", 0.5)  # a map's number is never evidence
    with pytest.raises(InvalidDataError, match="kind 'finding'"):
        log.check("M2", "corr", sample_of("instances", [0.9]), ">", 0.5, kind="finding")
    log.headline("M1", "the finite part ends at {far:.2g} of its start above $2/L_\\infty$", far=4.321)
    tree = read_tree(layout)
    assert set(tree.results) == set(CLAIMS)  # no verdict for a map
    report = render_report(tree)
    assert f"**1 of {len(CLAIMS)} claims reproduced, {len(CLAIMS) - 1} not tested.**" in report
    assert "missing from the registry" not in report
    maps = report.split(f"## {MAPS_TITLE}\n", 1)[1].split("\n## ", 1)[0]
    # one line per map, before the blocks: what it varies, its claims, and where they stop holding
    lines = [line for line in maps.split("<details", 1)[0].splitlines() if line.startswith("- ")]
    assert len(lines) == len(MAPS)
    m1 = '- <a href="#map-m1">**M1**</a> (varies the step $\\eta$; [A6](#claim-a6), [A7](#claim-a7), '
    m1 += "[A12](#claim-a12)): the finite part ends at 4.3 of its "
    assert lines[0].startswith(m1)
    for mid, line in zip(list(MAPS)[1:], lines[1:], strict=True):  # no headline recorded: it says so
        assert line.startswith(f'- <a href="#map-{mid.lower()}">**{mid}**</a> ')
        assert line.endswith(f"): {NO_MAP_HEADLINE}")
    for mid, spec in MAPS.items():  # each map a block, closed, its counts in its summary
        assert f'<details class="ntpnb-checks ntpnb-map" id="map-{mid.lower()}">' in maps
        assert f"<summary>{escape(f'{mid}: {spec.title} (Paper {spec.paper})')} <span>(" in maps
    m1 = maps.split('id="map-m1"', 1)[1].split('id="map-m2"', 1)[0]
    counts = "1 measurement: not decided (ours, beyond the paper); 1 sanity check: holds (they test the code"
    assert f"<span>({counts}" in m1
    assert "distance ratio above 2/L\\_inf: not decided, 0.500 (1 instance" in m1
    assert "1 sanity check: holds (they test the code or the setting, never the claim)" in m1
    assert "[A6](#claim-a6)" in m1 and "Drawn in\n: [8](/outputs/notebooks/08_beyond.ipynb)" in m1
    m4 = maps.split('id="map-m4"', 1)[1]
    assert "<span>(not measured in this run)</span>" in m4
    assert "Findings\n: not measured: no chapter of this run draws this map" in m4
    assert "Beyond the papers" not in render_claims_page(tree)  # the claims page lists claims only


def test_the_registry_refuses_a_map_without_its_papers_claims():
    spec = MAPS["M1"]
    assert {m.paper for m in MAPS.values()} == {"A", "B"}
    with pytest.raises(NTPError, match="claims of Paper A"):
        _maps((dataclasses.replace(spec, claims=("B7",)),))
    with pytest.raises(NTPError, match="an M id"):
        _maps((dataclasses.replace(spec, id="X1"),))


def test_the_seeds_the_verdicts_rest_on_are_said_once_when_every_chapter_ran_at_the_same():
    from ntpnb.book._report import _seeds_lines
    from ntpnb.evidence._series import Sweep
    from ntpnb.records._run import ChapterRun

    def sweep(name: str, seeds: tuple[int, ...]) -> Sweep:
        records = {s: ChapterRun(name, "paper", seed=s, complete=True) for s in seeds}
        return Sweep(records[seeds[0]], records)

    same = [sweep("01_a", (0, 1, 2)), sweep("02_b", (0, 1, 2))]
    assert (
        _seeds_lines(same)[0]
        == "The verdicts rest on every chapter's runs at seeds 0, 1 and 2, the book's first."
    )
    mixed = [sweep("01_a", (0, 1, 2)), sweep("02_b", (0, 1))]
    assert _seeds_lines(mixed)[0].startswith(
        "The verdicts rest on every seed each chapter ran at, the book's first ("
    )


#: A MyST term role as a chapter's headline writes it (braces doubled in a format string):
#: ``{{term}}`pooled``` or ``{{term}}`rounding units <rounding unit>```.
TERM_ROLE = re.compile(r"\{\{?term\}\}?`([^`<]+?)(?:\s*<([^>`]+)>)?`")


def test_the_glossary_page_defines_every_term_once_and_every_term_a_page_links():
    from ntpnb.book._glossary import GLOSSARY_DOC, GLOSSARY_LABEL, TERMS, glossary_directive, glossary_page

    lines = glossary_directive().split("\n")
    assert lines[0] == "```{glossary}" and lines[-1] == "```"
    assert [line for line in lines if line in TERMS] == list(TERMS)  # each term once, unindented
    page = glossary_page()
    assert page.startswith(f"({GLOSSARY_LABEL})=\n# Glossary") and glossary_directive() in page
    # the book-wide terms: the methods and solvers the chapters name, the tests the cards name
    assert {"KKT", "NNLS", "Clarabel", "L-BFGS", "LP", "separability LP", "mean test", "rate test"} <= set(
        TERMS
    )
    assert f"file: {GLOSSARY_DOC}" in (ROOT / "_toc.yml").read_text(encoding="utf-8")
    sources = [*sorted((ROOT / "notebooks").glob("*.md")), ROOT / "ntpnb" / "book" / "_report.py"]
    linked = {
        (m.group(2) or m.group(1)).strip(): source.name
        for source in sources
        for m in TERM_ROLE.finditer(source.read_text(encoding="utf-8"))
    }
    assert {"pooled", "standard error", "rounding unit", "docstring starts"} <= set(linked)
    assert {term: where for term, where in linked.items() if term not in TERMS} == {}


def test_b10s_card_cites_where_the_paper_fixes_its_loss_and_what_app_d_explains(tmp_path):
    layout = output_tree(tmp_path / "outputs")
    log = ClaimLog("07_attention", "paper", layout.root)
    log.check("B10", "mean local corr", 0.94, ">", 0.99, protocol="paper's loss")
    card = _card(render_report(read_tree(layout)), "B10")
    stated = card.split("\nAs stated\n: ", 1)[1].split("\n", 1)[0]
    assert "Assumption 1 (Sec. 3.3)" in stated and r"\ell(y, v) = \ell(c_y^\top v)" in stated
    assert "App. D explains Fig. 5" in stated and "authors' code trains" in stated
    assert card.index("\nThe paper\n") < card.index("\nAs stated\n") < card.index("\nDecided by\n")
