"""Verdicts of claims from their checks (ntpnb.book.verdicts)."""

from __future__ import annotations

import pytest

from ntpnb.book.verdicts import (
    CHECK_FAILED,
    NOT_REPRODUCED,
    NOT_TESTED,
    QUALIFIED,
    REPRODUCED,
    VERDICTS,
    claim_verdict,
    format_counts,
    verdict_counts,
    verdicts,
)
from ntpnb.chapter.claims import Check, ClaimLog
from ntpnb.errors import InvalidDataError


def check(kind="claim", passed=True, what="x", measured="1", paper="", claim="A1"):
    return Check(claim, what, 1.0, ">", 0.0, 0.0, paper, passed, "quick", kind, measured)


@pytest.mark.parametrize(
    ("checks", "quals", "expected"),
    [
        ([check()], [], REPRODUCED),
        ([check(), check("sanity")], ["smaller n than the paper"], QUALIFIED),
        ([check(), check("finding")], [], NOT_REPRODUCED),
        ([check("finding")], ["q"], NOT_REPRODUCED),
        ([check("sanity")], [], NOT_TESTED),
        ([check("sanity")], ["q"], NOT_TESTED),  # a qualification is no evidence
        ([], [], NOT_TESTED),
        ([check(), check("sanity", passed=False)], [], CHECK_FAILED),
        ([check("finding", passed=False)], [], CHECK_FAILED),
    ],
)
def test_claim_verdict(checks, quals, expected):
    assert claim_verdict("A1", checks, quals).verdict == expected


def test_finding_reasons_quote_ours_and_the_papers():
    v = claim_verdict("B11", [check("finding", what="local corr", measured="0.986", paper="> 0.99")])
    assert v.reasons == ("local corr: measured 0.986; paper: > 0.99",)
    assert (v.evidence, v.findings, v.sanity, v.failed) == (0, 1, 0, 0)
    # a qualification the chapter states still shows, after the findings
    v = claim_verdict("B11", [check("finding", what="d", measured="9", paper="1")], ["means over 100 trials"])
    assert v.reasons == ("d: measured 9; paper: 1", "means over 100 trials")


def test_verdicts_of_every_id_and_counts():
    checks = [check(claim="A1"), check("finding", claim="A2"), check("sanity", claim="A3")]
    res = verdicts(["A1", "A2", "A3", "A4"], checks, [("A1", "only d = 2")])
    assert [v.verdict for v in res.values()] == [QUALIFIED, NOT_REPRODUCED, NOT_TESTED, NOT_TESTED]
    counts = verdict_counts(res)
    assert list(counts) == list(VERDICTS) and sum(counts.values()) == 4
    assert format_counts(counts) == (
        "0 of 4 claims reproduced, 1 reproduced with a qualification, 1 does not reproduce, 2 not tested"
    )
    two = dict(counts, **{NOT_REPRODUCED: 2})
    assert "2 do not reproduce" in format_counts(two)


def test_claim_log_records_kinds_and_qualifications(tmp_path):
    log = ClaimLog("demo", "quick", tmp_path)
    log.check("B11", "corr", 0.986, "~", 0.986, tol=1e-3, kind="finding", paper="> 0.99")
    log.qualify("B10", "with the authors' loss")
    res = verdicts(["B10", "B11"], log.checks, log.qualifications)
    assert res["B11"].verdict == NOT_REPRODUCED and res["B10"].verdict == NOT_TESTED
    with pytest.raises(InvalidDataError, match="non-empty"):
        log.qualify("B10", "  ")
