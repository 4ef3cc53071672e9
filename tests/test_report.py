"""The claim registry, the chapter claim table and the generated reproducibility report."""

from __future__ import annotations

import json
import re

import pytest

from ntpnb.errors import ClaimCheckError, NTPError
from ntpnb.pipeline.claims import ClaimLog
from ntpnb.pipeline.paths import output_layout
from ntpnb.pipeline.registry import CLAIMS, claim_spec, sort_key
from ntpnb.pipeline.report import chapter_sections, heading_slug, load_records, render_report

from conftest import ROOT


def test_registry_holds_every_claim_of_both_papers_in_order():
    expected = [f"A{i}" for i in range(1, 16)] + [f"B{i}" for i in range(1, 12)]
    assert list(CLAIMS) == expected
    assert sorted(CLAIMS, key=sort_key) == expected
    for spec in CLAIMS.values():
        assert spec.where and spec.statement and spec.paper_value
        assert "|" not in spec.statement + spec.paper_value  # table cells
    with pytest.raises(NTPError, match="A1, A2"):
        claim_spec("C1")


def test_registry_matches_the_claims_page():
    rows = re.findall(r"^\| ([AB]\d+) \|", (ROOT / "book" / "claims.md").read_text(), flags=re.M)
    assert rows == list(CLAIMS)


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
    with pytest.raises(ClaimCheckError):
        log.check("A2", "decay rate", -0.5, "~", -1.0, tol=0.02, paper="e^{-gamma}")
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
    report = render_report(layout)
    for cid in CLAIMS:
        assert re.search(rf"^\| \*\*{cid}\*\* \(", report, flags=re.M), cid
    a1 = next(line for line in report.splitlines() if line.startswith("| **A1**"))
    assert "reproduced: 2 of 2 checks pass (+1 of 1 sanity checks) (quick)" in a1
    assert "(/outputs/notebooks/07_demo.ipynb#claim-a1-the--bound)" in a1
    assert "(/outputs/notebooks/07_demo.ipynb#equality)" in a1
    a2 = next(line for line in report.splitlines() if line.startswith("| **A2**"))
    assert "(/outputs/notebooks/07_demo.ipynb#equality-1)" in a2
    assert "**FAILED**: 0 of 1 checks pass" in a2
    a3 = next(line for line in report.splitlines() if line.startswith("| **A3**"))
    assert "not checked yet" in a3
    assert "**2 of 26 claims checked**, 1 with a failing check; 4 checks in all" in report
    assert "| *sanity check:* KL sum is non-negative |" in report
    # every check, with our value, the requirement and the paper's value
    assert "| -0.5000 | = -1 ± 0.02 | e^\\{-gamma\\} | **FAIL** |" in report
    assert "| \\< 1e-12 | \\< 1e-12 |" in report


def test_report_flags_unregistered_claim_ids(tmp_path):
    layout = output_layout(tmp_path / "outputs")
    ClaimLog("08_other", "paper", layout.root).check("Z9", "x", 1.0, ">", 0.0)
    report = render_report(layout)
    assert "missing from the registry: Z9" in report
    assert load_records(layout)[0].section is None  # no executed notebook: link to the chapter


def test_report_without_any_run_lists_every_claim_as_unchecked(tmp_path):
    report = render_report(output_layout(tmp_path / "outputs"))
    assert report.count("not checked yet") == len(CLAIMS)
    assert "No notebook has recorded a check yet" in report


def test_summary_is_the_chapter_claim_table(run):
    _, log = run
    table = log.summary()
    text = repr(table)
    assert text.splitlines()[0] == "3 of 4 claim checks pass"
    assert "PASS A1 (sanity) KL sum is non-negative: 0.1000 (required >= 0)" in text
    assert "FAIL A2   decay rate: -0.5000 (required = -1 ± 0.02)" in text
    html = table._repr_html_()
    assert html.count("<tr class=") == 4 and 'class="ntpnb-fail"' in html
    assert "<th>paper</th>" in html and "e^{-gamma}" in html


def test_the_report_names_the_notebooks_whose_last_run_failed(tmp_path):
    layout = output_layout(tmp_path / "outputs")
    assert "last run of these notebooks failed" not in render_report(layout)
    layout.failed.mkdir()
    record = {"notebook": "02_demo", "date": "2026-01-02 03:04 UTC", "error": "ValueError: bad *input*"}
    (layout.failed / "02_demo.json").write_text(json.dumps(record))
    (layout.failed / "03_half.json").write_text('{"notebook": ')  # unreadable: skipped
    report = render_report(layout)
    assert "The last run of these notebooks failed" in report
    assert "* `02_demo` (2026-01-02 03:04 UTC): ValueError: bad \\*input\\*" in report
    assert "03_half" not in report
