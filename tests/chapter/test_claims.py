"""Claim checks: the relation is tested, the outcome printed and recorded; the chapter's end raises."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ntpnb._digits import format_number, format_relation, format_stable, format_stable_summary, stable_digits
from ntpnb.chapter._claims import ClaimLog
from ntpnb.errors import ClaimCheckError, InvalidDataError, PathError
from ntpnb.evidence._checks import KINDS
from ntpnb.records._run import load_chapter_run, load_chapter_runs


@pytest.fixture
def log(tmp_path):
    return ClaimLog("demo", "quick", tmp_path)


def read(log):
    return json.loads(log.path.read_text())


@pytest.mark.parametrize(
    ("value", "relation", "target", "tol", "passed"),
    [
        (0.5, ">", 0.0, 0.0, True),
        (0.0, ">", 0.0, 0.0, False),
        (0.0, ">=", 0.0, 0.0, True),
        (1e-13, "<", 1e-12, 0.0, True),
        (2e-12, "<=", 1e-12, 0.0, False),
        (-0.99, "~", -1.0, 0.02, True),
        (-0.97, "~", -1.0, 0.02, False),
        (0.5, "in", (0.025, 0.975), 0.0, True),
        (0.99, "in", (0.025, 0.975), 0.0, False),
        (1.0, "==", 1.0, 0.0, True),
    ],
)
def test_relations(log, value, relation, target, tol, passed):
    assert bool(log.check("X1", "a number", value, relation, target, tol=tol)) is passed
    (record,) = read(log)["checks"]
    assert record["passed"] is passed
    assert record["value"] == value


def test_check_prints_a_rounded_line_and_records_the_full_value(log, capsys):
    log.check("A2", "slope", -1.000123456, "~", -1.0, tol=0.02, paper="e^{-g}", digits=3)
    out = capsys.readouterr().out
    assert out.splitlines() == [
        "[PASS] A2 slope",
        "       measured -1.00; required = -1 ± 0.02; paper: e^{-g}",
    ]
    record = read(log)
    assert record["notebook"] == "demo"
    assert record["profile"] == "quick"
    assert record["checks"][0]["value"] == -1.000123456


def test_a_failed_check_does_not_stop_the_chapter_and_its_end_lists_every_failure(log, capsys):
    assert not log.check("A1", "gap", -0.1, ">", 0.0)
    assert log.check("A2", "rate", -1.0, "~", -1.0, tol=0.02)
    assert not log.check("A3", "slope", -0.5, "~", -1.0, tol=0.02, kind="sanity")
    assert read(log)["checks"][0]["passed"] is False
    assert read(log)["complete"] is False
    assert "[FAIL] A1 gap" in capsys.readouterr().out
    with pytest.raises(ClaimCheckError) as raised:
        log.conclude()
    message = str(raised.value)
    assert message.startswith("demo: 2 of 3 checks failed:")
    assert "A1 gap: measured -0.1000; required > 0 (relation >, value 0.0, tolerance 0)" in message
    assert (
        "A3 (sanity) slope: measured -0.5000; required = -1 ± 0.02 (relation ~, value -1.0, tolerance 0.02)"
        in message
    )
    assert "A2" not in message
    assert read(log)["complete"] is True  # written before it raised
    with pytest.raises(InvalidDataError, match="after the chapter concluded"):
        log.check("A4", "late", 1.0, ">", 0.0)


def test_a_chapter_whose_checks_pass_concludes_quietly(log, capsys):
    log.check("A1", "gap", 0.1, ">", 0.0)
    capsys.readouterr()
    log.conclude()
    assert capsys.readouterr().out == ""
    record = load_chapter_run(log.path)
    assert record.complete and not record.failed


def test_the_record_keeps_the_seed(tmp_path):
    log = ClaimLog("demo", "quick", tmp_path, seed=3)
    log.conclude()
    assert load_chapter_run(log.path).seed == 3
    with pytest.raises(InvalidDataError, match="seed must be an integer"):
        ClaimLog("demo", "quick", tmp_path, seed="3")


def test_a_new_log_starts_an_empty_record(tmp_path):
    ClaimLog("demo", "paper", tmp_path).check("A1", "x", 1.0, ">", 0.0)
    again = ClaimLog("demo", "paper", tmp_path)
    assert read(again)["checks"] == []


@pytest.mark.parametrize(("value", "relation"), [(float("nan"), ">"), (float("inf"), "<"), (1.0, "≈")])
def test_bad_checks_are_rejected(log, value, relation):
    with pytest.raises(InvalidDataError):
        log.check("A1", "x", value, relation, 0.0)


@pytest.mark.parametrize(
    ("spread", "digits"), [(0.0, 4), (1e-15, 4), (3.7e-5, 3), (1e-3, 2), (0.019, 1), (0.7, 1), (3.0, 1)]
)
def test_stable_digits_keep_a_guard_digit(spread, digits):
    assert stable_digits(spread) == digits


@pytest.mark.parametrize(
    ("x", "spread", "text"),
    [
        (239.98, 4e-4, "240"),
        (264.36, 4.8e-6, "264.4"),
        (0.9504, 1e-5, "0.9504"),
        (0.006122, 0.3, "0.006"),
        (2.342e-7, 0.7, "2e-07"),
        (3.709e-6, 3.7e-5, "3.71e-06"),
        (0.0999999, 0.01, "0.1"),  # rounded up into the next decade: still one digit
        (9.96, 0.01, "10"),
        (-0.9504, 1e-9, "-0.9504"),
        (0.0, 0.1, "0"),
    ],
)
def test_format_stable_prints_the_digits_a_spread_leaves(x, spread, text):
    assert format_stable(x, spread) == text


def test_format_stable_summary_prints_each_value_to_its_own_spread():
    values, spreads = {"kl": 0.0123456, "norm": 239.98}, {"kl": 1e-9, "norm": 4e-4, "corr": 0.1}
    assert format_stable_summary(values, spreads) == "kl 0.01235, norm 240"
    with pytest.raises(InvalidDataError, match="no spread for corr"):
        format_stable_summary({"corr": 0.5}, {"kl": 1e-9})


def test_format_number():
    assert format_number(-1.0001, 3) == "-1.00"
    assert format_number(0.1, 2) == "0.10"
    assert format_number(4e-15, 2) == "4.0e-15"
    assert format_number(3e-17, 3, floor=1e-12) == "< 1e-12"
    assert format_number(-3e-17, 3, floor=1e-12) == "< 1e-12"  # the sign is noise too
    assert format_number(7, 3) == "7"
    assert format_relation(0.65361, 4) == "= 0.6536"
    assert format_relation(3e-17, 3, floor=1e-12) == "< 1e-12"  # never "= < 1e-12"


def test_format_decade_gives_the_power_of_ten_above():
    from ntpnb._digits import format_decade

    assert format_decade(3.4e-5) == format_decade(2.1e-5) == "< 1e-04"
    assert format_decade(-0.042) == "< 0.1"
    assert format_decade(61.3) == "< 100"
    assert format_decade(0.0) == "0"
    # below a floor, zero included, only the floor is printed (the resolution of the measurement)
    assert format_decade(0.0, floor=1e-14) == format_decade(3e-16, floor=1e-14) == "< 1e-14"
    assert format_decade(3e-13, floor=1e-14) == "< 1e-12"
    with pytest.raises(InvalidDataError, match="power of ten"):
        format_decade(1.0, floor=3e-14)
    with pytest.raises(InvalidDataError):
        format_decade(float("nan"))


def test_a_bound_prints_as_given_to_at_most_four_digits_and_a_power_of_ten_plainly_near_one():
    from ntpnb._digits import format_bound, format_power

    assert [format_power(k) for k in (-4, -3, 0, 3, 4)] == ["1e-04", "0.001", "1", "1000", "1e+04"]
    assert [format_bound(b) for b in (1e-12, 0.05, 1.0, -1.0, 0.029513, 0.0)] == [
        "1e-12", "0.05", "1", "-1", "0.02951", "0",
    ]  # fmt: skip
    assert format_number(0.3, 4, floor=1.0) == "< 1"  # not "< 1e+00"


def test_the_required_value_prints_at_most_four_digits_and_an_exact_target_without_a_zero_tolerance(log):
    interval = log.check("A1", "interval", 0.5, "in", (0.025, 0.975))
    threshold = log.check("A2", "rate", 0.01, "<", 0.029513)
    exact = log.check("A3", "gap", 0.0, "~", 0.0, tol=0.0, kind="sanity")
    close = log.check("A3", "slope", -1.0, "~", -1.0, tol=0.02, kind="sanity")
    assert [o.check.required for o in (interval, threshold, exact, close)] == [
        "in [0.025, 0.975]", "< 0.02951", "= 0", "= -1 ± 0.02",
    ]  # fmt: skip


def test_the_record_is_dumped_and_loaded_as_one_type(log, tmp_path):
    log.check("A1", "interval", 0.5, "in", (0.025, 0.975), paper="p")
    log.check("A2", "gap", 3e-17, "<", 1e-12, floor=1e-12, kind="sanity")
    log.qualify("A1", "a stated limit at {k} steps, corr {corr:.3f}", k=np.int64(10), corr=np.float64(0.95))
    loaded = load_chapter_run(log.path)
    assert loaded == log.record
    assert loaded.checks[0].target == (0.025, 0.975) and loaded.checks[1].measured == "< 1e-12"
    (q,) = loaded.qualifications
    assert (q.claim, q.text, q.numbers) == (
        "A1",
        "a stated limit at {k} steps, corr {corr:.3f}",
        {"k": 10, "corr": 0.95},
    )
    assert q.rendered == "a stated limit at 10 steps, corr 0.950"
    assert load_chapter_runs(log.path.parent) == [loaded]
    assert load_chapter_runs(tmp_path / "nothing here") == []


def test_an_older_record_loads_with_the_defaults_it_lacks(tmp_path):
    old = {"claim": "A1", "what": "x", "value": 0.123456, "relation": ">", "target": 0.0, "tol": 0.0}
    path = tmp_path / "demo.json"
    path.write_text(json.dumps({"notebook": "demo", "profile": "paper", "checks": [dict(old, passed=True)]}))
    record = load_chapter_run(path)
    assert record.platform is None and record.qualifications == ()
    (check,) = record.checks
    assert (check.kind, check.paper, check.profile, check.measured) == ("claim", "", "paper", "0.1235")


@pytest.mark.parametrize("text", ["{", "[]", '{"checks": []}'])
def test_a_broken_record_is_named(tmp_path, text):
    path = tmp_path / "broken.json"
    path.write_text(text)
    with pytest.raises(PathError, match=r"broken\.json"):
        load_chapter_run(path)


# ----------------------------------------------------------------------------- kinds
# Claim checks come in two kinds: evidence for a paper, and sanity checks of code or setting.


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
    assert not log.check("A2", "residual", 1.0, "<", 1e-9, kind="sanity")
    with pytest.raises(ClaimCheckError, match=r"A2 \(sanity\) residual: measured 1.000; required < 1e-09"):
        log.conclude()


def test_an_unknown_kind_is_rejected(tmp_path):
    assert KINDS == ("claim", "sanity", "finding", "measurement")
    with pytest.raises(InvalidDataError, match="unknown kind"):
        ClaimLog("demo", "quick", tmp_path).check("A1", "x", 1.0, ">", 0.0, kind="evidence")


# ----------------------------------------------------------------------------- a range of decades
def format_decade_range(lo: float, hi: float) -> str:
    """``"between 1e-15 and 1e-13"``: the odd powers of ten that bracket ``[lo, hi]`` (used only here)."""
    lo, hi = float(lo), float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi) and 0.0 < lo <= hi):
        raise InvalidDataError(f"format_decade_range needs finite 0 < lo <= hi, got {lo} and {hi}")
    down = 2 * math.floor((math.log10(lo) - 1) / 2) + 1
    up = 2 * math.ceil((math.log10(hi) - 1) / 2) + 1
    return f"between 1e{down:+03.0f} and 1e{up:+03.0f}"


@pytest.mark.parametrize(
    ("lo", "hi", "text"),
    [
        (3e-15, 2e-14, "between 1e-15 and 1e-13"),
        (0.8e-14, 2.4e-14, "between 1e-15 and 1e-13"),
        (2e-16, 5e-16, "between 1e-17 and 1e-15"),
        (2.0, 9.0, "between 1e-01 and 1e+01"),
        (2.0, 30.0, "between 1e-01 and 1e+03"),
    ],
)
def test_format_decade_range_brackets_by_odd_powers_of_ten(lo, hi, text):
    assert format_decade_range(lo, hi) == text
    down, up = (float(s) for s in text.split()[1::2])
    assert down <= lo <= hi <= up


def test_format_decade_range_needs_an_ordered_positive_range():
    with pytest.raises(InvalidDataError, match="0 < lo <= hi"):
        format_decade_range(1e-3, 1e-4)
    with pytest.raises(InvalidDataError, match="0 < lo <= hi"):
        format_decade_range(0.0, 1.0)


def test_a_statement_says_a_negative_zero_as_zero(log):
    log.headline("A1", "{below:.2g} rounding units below it", below=np.maximum(0.0, -0.0))
    assert log.headlines[0].rendered == "0 rounding units below it"


def test_a_section_block_shows_the_checks_made_since_the_last_one_collapsed(log):
    log.check("A1", "gap", 0.5, ">", 0.0)
    log.qualify("A1", "small {n}", n=3)
    first = log.section()
    assert first.headline == "Checks of this section: 1 passed, 1 qualification"
    assert first._repr_html_().startswith('<details class="ntpnb-checks"><summary>Checks of this section')
    assert "<li><strong>A1</strong> small 3</li>" in first._repr_html_()
    assert log.section() is None  # nothing since: nothing to show
    log.check("A2", "rate", 0.5, "<", 0.0)
    log.check("A2", "rate", 0.5, "<", 0.0, kind="finding")
    second = log.section()
    assert [c.what for c in second.checks] == ["rate", "rate"]
    assert repr(second).splitlines()[0] == "Checks of this section: 1 failed, 1 decided across the seeds"
    assert "<td>decided across the seeds</td></tr>" in second._repr_html_()  # the row's result, in words
    assert "ntpnb-has-fail" in second._repr_html_()
    assert len(log.summary().checks) == 3  # the chapter's block has every check


def test_a_qualifications_math_is_typeset_in_its_table_never_printed_raw(log):
    text = "the threshold $d/m = 1/2$ holds as $m \\to \\infty$; at $m$ = {m} & <b>"
    log.qualify("A4", text, limit="size", m=16)
    html = log.section()._repr_html_()
    assert (
        "<li><strong>A4</strong> the threshold "
        '<span class="math notranslate nohighlight">\\(d/m = 1/2\\)</span> holds as '
        # the semicolon that closes the formula stays on its line
        '<span class="ntpnb-word"><span class="math notranslate nohighlight">'
        "\\(m \\to \\infty\\)</span>;</span> at "
        '<span class="math notranslate nohighlight">\\(m\\)</span> = 16 &amp; &lt;b&gt;</li>'
    ) in html
    assert "$" not in html
    log.qualify("A7", "far from its limit at $k$ = {k}", limit="horizon", k=1000000)
    assert (
        'at <span class="math notranslate nohighlight">\\(k\\)</span> = 1,000,000</li>'
        in log.section()._repr_html_()
    )
    # a number and its unit, and a range, are kept on one line (a phone broke "0.292 nats")
    log.qualify("A4", "from 2.337 to {low} nats at seeds 0-4", limit="size", low=0.292)
    assert (
        'from 2.337 to <span class="ntpnb-word">0.292\u00a0nats</span> at seeds '
        '<span class="ntpnb-word">0-4</span></li>'
    ) in log.section()._repr_html_()


def test_a_check_returns_whether_it_held_and_shows_nothing_as_a_cells_value(log):
    from IPython.core.formatters import DisplayFormatter

    outcome = log.check("A1", "gap", 0.5, ">", 0.0)
    assert outcome and not log.check("A1", "gap", -0.5, ">", 0.0)
    assert DisplayFormatter().format(outcome) == ({}, {})  # no stray "True" under the cell


# ----------------------------------------------------------------------------- failed lines, protocols
@pytest.mark.parametrize(
    ("value", "relation", "target", "tol", "printed"),
    [
        (1.0000665, "~", 1.0, 1e-6, "1.0001"),  # 4 digits would print 1.000, which holds
        (0.99999994, "==", 1.0, 0.0, "0.9999999"),
        (1.00001e-12, "<=", 1.000005e-12, 0.0, "1.00001e-12"),
        (-0.5, "~", -1.0, 0.02, "-0.5000"),  # 4 digits already show it
        (0.1 + 0.2, "<=", 0.3, 0.0, "0.30000000000000004"),  # only the float's own 17 digits
    ],
)
def test_a_failed_check_prints_the_digits_that_show_its_failure(
    log, capsys, value, relation, target, tol, printed
):
    assert not log.check("A2", "ratio", value, relation, target, tol=tol)
    line = capsys.readouterr().out.splitlines()[1]
    assert line.startswith(f"       measured {printed}; required")
    # the printed number itself violates the requirement; one digit fewer would not
    from ntpnb.evidence._checks import RELATIONS

    assert not RELATIONS[relation](float(printed), target, tol)


def test_a_passing_check_keeps_its_rounding(log, capsys):
    log.check("A2", "ratio", 1.0000004, "~", 1.0, tol=1e-6)
    assert "measured 1.000; required = 1 ± 1e-06" in capsys.readouterr().out


def test_a_check_under_a_protocol_names_it_and_an_undeclared_one_is_refused(log, capsys):
    from ntpnb.evidence._checks import CHECK_LINE

    log.check("B10", "mean corr", 0.995, ">", 0.99, protocol="paper's loss")
    log.check("B10", "mean corr", 0.995, ">", 0.99, kind="sanity", protocol="authors' loss")
    log.check("B10", "mean corr", 0.995, ">", 0.99)
    first, _, second, _, third, _ = capsys.readouterr().out.splitlines()
    assert first == "[PASS] B10 [paper's loss] mean corr"
    assert second == "[PASS] B10 (sanity) [authors' loss] mean corr"
    parsed = [
        CHECK_LINE.match(line).group("claim", "kind", "protocol", "what") for line in (first, second, third)
    ]
    assert parsed == [
        ("B10", None, "paper's loss", "mean corr"),
        ("B10", "sanity", "authors' loss", "mean corr"),
        ("B10", None, None, "mean corr"),
    ]
    assert load_chapter_run(log.path).checks[0].protocol == "paper's loss"
    with pytest.raises(
        InvalidDataError,
        match=r"protocol \[paper loss\] is not declared for it .*\[paper's loss\], \[authors' loss\]",
    ):
        log.check("B10", "mean corr", 0.995, ">", 0.99, protocol="paper loss")
    with pytest.raises(
        InvalidDataError, match=r"protocol \[every trial\] is not declared .*\(its protocols: none\)"
    ):
        log.check("A1", "gap", 0.5, ">", 0.0, protocol="every trial")
    assert [c.protocol for c in log.checks] == ["paper's loss", "authors' loss", ""]


def test_an_older_record_without_protocols_or_floors_loads():
    from ntpnb.evidence._checks import Check

    old = {
        "claim": "A4",
        "what": "p",
        "value": 0.5,
        "relation": ">",
        "target": 0.01,
        "tol": 0.0,
        "passed": True,
    }
    old["sample"] = {
        "test": "pvalue",
        "values": [0.5],
        "errors": [],
        "trials": 0,
        "level": 0.01,
        "establish": False,
    }
    check = Check.from_json(old, "paper")
    assert check.protocol == "" and check.sample.floors == ()
    with pytest.raises(InvalidDataError, match="not a protocol's key"):
        Check.from_json(dict(old, protocol="[x]"), "paper")


def test_a_maps_check_takes_its_declared_protocol_only(log, capsys):
    from ntpnb.chapter import sample_of
    from ntpnb.evidence._decide import decided_check

    sample = sample_of("mean", [0.995, 0.996, 0.994])
    log.check("M5", "mean corr", sample, ">", 0.99, kind="measurement", protocol="paper's loss")
    assert capsys.readouterr().out.startswith("[FOUND] M5 (measurement) [paper's loss] mean corr")
    assert decided_check("M5", "rate", 0.0, "<=", 0.1, protocol="authors' loss").protocol == "authors' loss"
    with pytest.raises(InvalidDataError, match=r"protocol \[every trial\] is not declared for it"):
        log.check("M5", "mean corr", sample, ">", 0.99, kind="measurement", protocol="every trial")
    with pytest.raises(InvalidDataError, match=r"protocol \[paper's loss\] is not declared .*none"):
        log.check("M1", "corr", sample, ">", 0.9, kind="measurement", protocol="paper's loss")


def test_a_check_glues_what_it_measured_so_the_prose_quotes_the_checks_own_number(tmp_path, monkeypatch):
    glued = {}
    monkeypatch.setattr("ntpnb.chapter._claims.glue_text", lambda name, text: glued.__setitem__(name, text))
    log = ClaimLog("demo", "quick", tmp_path, seed=0)
    log.check("A2", "decay rate", -1.00004, "~", -1.0, tol=0.02, glue="ch01_rate")
    assert glued == {"ch01_rate": "-1.000"}  # as its line prints it
    from ntpnb.evidence._samples import sample_of

    log.check("B8", "mean corr", sample_of("mean", [0.991, 0.993, 0.995]), ">", 0.99, glue="ch07_corr")
    assert glued["ch07_corr"] == "0.9930 ± 0.0012"  # a sample's estimate as a sentence quotes it
    log.check("A6", "norm grows", 1.0, ">", 0.0)
    assert len(glued) == 2  # nothing glued unless asked


@pytest.mark.parametrize(
    ("what", "paper"),
    [
        (r"decay rate of $\operatorname{CE} - \mathcal{H}", ""),  # its math left open
        (r"$|w_1 - w_5| / \lVert W^{\rm mm}\rVert$", ""),  # a bar would end the report's table cell
        ("gap", r"$\operatorname{CE} \to \mathcal{H}"),
    ],
)
def test_a_check_refuses_its_math_left_open_or_a_bar_inside_it(log, what, paper):
    with pytest.raises(InvalidDataError, match=r"must close each \$\.\.\.\$ of its math"):
        log.check("A1", what, 0.5, ">", 0.0, paper=paper)
    assert not log.checks  # nothing recorded
    typeset = log.check("A1", r"$\lvert w_1 - w_5\rvert / \lVert W^{\rm mm}\rVert$", 0.5, ">", 0.0)
    assert typeset and log.checks[0].what.startswith(r"$\lvert w_1")
