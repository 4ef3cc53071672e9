"""The generated reproducibility report, claims page and verdict fragment; the chapter claim table."""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys

import pytest
from threadpoolctl import threadpool_info

from ntpnb.book.report import (
    PLATFORM_TITLE,
    chapter_sections,
    heading_slug,
    read_tree,
    render_claims_page,
    render_report,
    write_report,
)
from ntpnb.chapter.claims import ClaimLog
from ntpnb.chapter.layout import output_layout
from ntpnb.chapter.platform import cpu_model
from ntpnb.chapter.registry import CLAIMS
from ntpnb.errors import ClaimCheckError

from conftest import ROOT


def test_claims_page_is_generated_from_the_registry_and_the_records(run):
    layout, _ = run
    page = render_claims_page(read_tree(layout))
    for cid, spec in CLAIMS.items():
        (row,) = [line for line in page.splitlines() if line.startswith(f"| {cid} |")]
        assert f"| {spec.statement} | {spec.where} | {spec.paper_value} |" in row
    a1 = next(line for line in page.splitlines() if line.startswith("| A1 |"))
    # where the run checked A1: its evidence, then its sanity check, each linked to its section
    demo = "/outputs/notebooks/07_demo.ipynb"
    evidence = f"[7 § Claim A1: the $\\mathcal{{H}}$ bound]({demo}#claim-a1-the--bound)"
    assert f"| {evidence}, [7 § Equality](/outputs/notebooks/07_demo.ipynb#equality)<br>" in a1
    assert "<br>sanity: [7 § Equality](/outputs/notebooks/07_demo.ipynb#equality)" in a1
    assert "| A3 |" in page and "not checked by any chapter yet |" in page
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


@pytest.fixture
def run(tmp_path, capsys):
    """A fake chapter run: two passing checks of A1 (one section each), one failing A2."""
    layout = output_layout(tmp_path / "outputs")
    log = ClaimLog("07_demo", "quick", layout.root)
    log.check("A1", "gap at random W", 0.25, ">", 0.0, digits=2)
    log.check("A1", "gap where softmax = p", 1e-15, "<", 1e-12, floor=1e-12)
    log.check("A1", "KL sum is non-negative", 0.1, ">=", 0.0, kind="sanity")
    assert not log.check("A2", "decay rate", -0.5, "~", -1.0, tol=0.02, paper="e^{-gamma}")
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
    assert sections[("A2", "decay rate")] == ("Equality", "equality-1")  # level 4: no anchor


def test_heading_slugs_are_those_of_myst():
    taken = set()
    assert heading_slug("Equality: only where the softmax matches $\\hat p_j$", taken) == (
        "equality-only-where-the-softmax-matches-"
    )
    assert heading_slug("The `ntpnb` *command*", taken) == "the-ntpnb-command"
    assert heading_slug("The `ntpnb` command", taken) == "the-ntpnb-command-1"


def test_report_lists_every_claim_with_its_status(run):
    layout, _ = run
    report = render_report(read_tree(layout))
    for cid in CLAIMS:
        assert re.search(rf"^\| \*\*{cid}\*\* \(", report, flags=re.M), cid
    a1 = next(line for line in report.splitlines() if line.startswith("| **A1**"))
    assert "| reproduced: holds at the one seed; 2 evidence, 1 sanity (quick) |" in a1
    assert "(/outputs/notebooks/07_demo.ipynb#claim-a1-the--bound)" in a1
    assert "(/outputs/notebooks/07_demo.ipynb#equality)" in a1
    a2 = next(line for line in report.splitlines() if line.startswith("| **A2**"))
    assert "(/outputs/notebooks/07_demo.ipynb#equality-1)" in a2
    assert "**check failed: the evidence fails at the one seed**; 1 evidence, 1 failed (quick)" in a2
    a3 = next(line for line in report.splitlines() if line.startswith("| **A3**"))
    assert "not tested (no check yet)" in a3
    n = len(CLAIMS)
    assert (
        f"**1 of {n} claims reproduced, {n - 2} not tested, 1 check failed**; 4 checks at the book's seed"
        in report
    )
    assert "The verdicts rest on one seed per chapter (the book's, 0)" in report
    assert "| *sanity:* KL sum is non-negative |" in report
    # every check, with our value, the requirement and the paper's value
    assert "| -0.5000 | = -1 ± 0.02 | e^\\{-gamma\\} | at the one seed | **fails** |" in report
    assert "| \\< 1e-12 | \\< 1e-12 |" in report


def test_report_flags_unregistered_claim_ids(tmp_path):
    layout = output_layout(tmp_path / "outputs")
    ClaimLog("08_other", "paper", layout.root).check("Z9", "x", 1.0, ">", 0.0)
    report = render_report(read_tree(layout))
    assert "missing from the registry: Z9" in report
    assert "| [Z9](/outputs/notebooks/08_other.ipynb) |" in report  # no executed notebook: the chapter


def test_report_without_any_run_lists_every_claim_as_unchecked(tmp_path):
    report = render_report(read_tree(output_layout(tmp_path / "outputs")))
    assert report.count("not tested (no check yet)") == len(CLAIMS)
    assert "No notebook has recorded a check yet" in report


def test_summary_is_the_chapter_claim_table(run):
    _, log = run
    table = log.summary()
    text = repr(table)
    assert text.splitlines()[0] == "Every check of this chapter: 3 passed, 1 failed"
    assert "PASS A1 (sanity) KL sum is non-negative: 0.1000 (required >= 0)" in text
    assert "FAIL A2   decay rate: -0.5000 (required = -1 ± 0.02)" in text
    html = table._repr_html_()
    assert html.startswith(
        '<details class="ntpnb-checks ntpnb-has-fail"><summary>Every check of this chapter'
    )
    assert html.count("<tr class=") == 4 and 'class="ntpnb-fail"' in html
    assert "<th>paper</th>" in html and "e^{-gamma}" in html


def test_report_gives_findings_and_qualifications_their_verdicts(tmp_path, capsys):
    layout = output_layout(tmp_path / "outputs")
    log = ClaimLog("08_other", "paper", layout.root)
    log.check("B11", "local correlation", 0.986, "~", 0.986, tol=0.002, kind="finding", paper="> 0.99")
    log.check("A5", "corr at the largest radius", 0.9999, ">", 0.999)
    log.qualify("A5", "measured up to B = 2400 only")
    log.check("A6", "norm grows", 1.0, ">", 0.0, kind="sanity")
    assert "[NOTE] A5 qualification: measured up to B = 2400 only" in capsys.readouterr().out
    report = render_report(read_tree(layout))
    line = {cid: next(ln for ln in report.splitlines() if ln.startswith(f"| **{cid}**")) for cid in CLAIMS}
    assert (
        "**does not reproduce: a finding established at the one seed**; 0 evidence, 1 finding (paper)<br>"
        "local correlation: 0.9860 at the one seed, against the paper's \\> 0.99" in line["B11"]
    )
    qualified = "reproduced with a qualification: holds at the one seed; 1 evidence (paper)"
    assert f"{qualified}<br>measured up to B = 2400 only" in line["A5"]
    assert "by construction: sanity checks only; 0 evidence, 1 sanity (paper)" in line["A6"]
    assert (
        f"**0 of {len(CLAIMS)} claims reproduced, 1 reproduced with a qualification, 1 does not reproduce, "
        f"1 by construction, {len(CLAIMS) - 3} not tested**" in report
    )


def test_verdict_summary_fragment(run, tmp_path):
    from ntpnb.book.report import render_verdict_summary

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
    empty = output_layout(tmp_path / "empty")
    assert "run `ntpnb reproduce`" in render_verdict_summary(read_tree(empty))


def test_every_page_labels_the_tree_by_its_run_record(run):
    """A -p run is labelled by what it ran (its run.json), not by its checks' profile alone."""
    from ntpnb.book.report import render_verdict_summary
    from ntpnb.chapter.outputs import RunRecord, write_run_record

    layout, _ = run
    write_run_record(layout.root, RunRecord("quick", {"n_g": "121"}, (3,), ("07_demo",)))
    label = "profile quick with n\\_g=121; seed 3"
    report = render_report(read_tree(layout, absent=["08_other"]))
    assert f"what ran: {label} (`paper` = " in report
    absent = "This tree has not run 08\\_other: the claims only that chapter checks are *not tested* in it."
    assert absent in report
    a1 = next(line for line in report.splitlines() if line.startswith("| **A1**"))
    assert "2 evidence, 1 sanity (quick; n\\_g=121) |" in a1
    assert "run at the `quick` profile with n\\_g=121, seeds 0." in report
    head = f"**Verdicts of the runs that built this book** ({label}): "
    assert render_verdict_summary(read_tree(layout)).startswith(head)
    assert f"those of the run this book shows: {label}." in render_claims_page(read_tree(layout))


# ------------------------------------------------------------------ the platform of the runs
PRESCOTT_1T = {"OPENBLAS_CORETYPE": "Prescott", "OPENBLAS_NUM_THREADS": "1"}


def _chapter_run_elsewhere(root, notebook: str, env: dict[str, str]) -> None:
    """A chapter's ClaimLog, run in another process with the environment ``env`` added."""
    script = (
        "from ntpnb.chapter.claims import ClaimLog\n"
        f"ClaimLog({notebook!r}, 'quick', {str(root)!r}).check('A1', 'gap', 0.25, '>', 0.0, digits=2)\n"
    )
    full = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"} | env
    subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=full, check=True, capture_output=True)


def test_the_report_shows_the_platform_each_run_recorded(tmp_path, monkeypatch):
    """The report renders what the runs recorded (their kernel and threads), not this process's."""
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    layout = output_layout(tmp_path / "outputs")
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
    layout = output_layout(tmp_path / "outputs")
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
    layout = output_layout(tmp_path / "outputs")
    assert "last run of these notebooks failed" not in render_report(read_tree(layout))
    layout.failed.mkdir()
    record = {"notebook": "02_demo", "date": "2026-01-02 03:04 UTC", "error": "ValueError: bad *input*"}
    (layout.failed / "02_demo.json").write_text(json.dumps(record))
    (layout.failed / "03_half.json").write_text('{"notebook": ')  # unreadable: skipped
    report = render_report(read_tree(layout))
    assert "The last run of these notebooks failed" in report
    assert "* `02_demo` (2026-01-02 03:04 UTC): ValueError: bad \\*input\\*" in report
    assert "03_half" not in report
