"""Claim checks come in two kinds: evidence for a paper, and sanity checks of code or setting."""

from __future__ import annotations

import json

import pytest

from ntpnb.chapter.claims import KINDS, ClaimLog
from ntpnb.errors import ClaimCheckError, InvalidDataError


def test_a_sanity_check_is_labelled_and_recorded_as_such(tmp_path, capsys):
    log = ClaimLog("demo", "quick", tmp_path)
    log.check("A1", "margin after polishing", 1.0, "~", 1.0, tol=1e-9, kind="sanity")
    log.check("A1", "gap", 0.5, ">", 0.0)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "[PASS] A1 (sanity) margin after polishing"
    assert lines[2] == "[PASS] A1 gap"  # a claim check prints as before
    kinds = [c["kind"] for c in json.loads(log.path.read_text())["checks"]]
    assert kinds == ["sanity", "claim"]


def test_a_failed_sanity_check_fails_the_run_at_its_end(tmp_path):
    log = ClaimLog("demo", "quick", tmp_path)
    assert log.check("A2", "residual", 1.0, "<", 1e-9, kind="sanity") is False
    with pytest.raises(ClaimCheckError, match=r"A2 \(sanity\) residual: measured 1.000; required < 1e-09"):
        log.conclude()


def test_an_unknown_kind_is_rejected(tmp_path):
    assert KINDS == ("claim", "sanity", "finding", "measurement")
    with pytest.raises(InvalidDataError, match="unknown kind"):
        ClaimLog("demo", "quick", tmp_path).check("A1", "x", 1.0, ">", 0.0, kind="evidence")
