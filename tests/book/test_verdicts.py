"""Verdicts of claims from their checks at every seed of a sweep (ntpnb.book.verdicts)."""

from __future__ import annotations

import pytest

from ntpnb.book.verdicts import (
    CHECK_FAILED,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTED,
    PARTIAL,
    QUALIFIED,
    REPRODUCED,
    VERDICTS,
    Sweep,
    format_counts,
    load_sweeps,
    series_of,
    sweep_verdicts,
    verdict_counts,
)
from ntpnb.chapter.claims import ChapterRecord, Check, ClaimLog, Qualification
from ntpnb.chapter.layout import output_layout
from ntpnb.chapter.statistical import sample_of
from ntpnb.errors import InvalidDataError


def verdicts(claim_ids, checks, qualifications: list[Qualification] = ()):
    """The verdict of every id in ``claim_ids`` from the checks of one run (one seed)."""
    record = ChapterRecord("", "", tuple(checks), tuple(qualifications))
    return sweep_verdicts(claim_ids, [Sweep(record, {0: record})])


def check(kind="claim", passed=True, what="x", measured="1", paper="", claim="A1", value=1.0, sample=None):
    return Check(claim, what, value, ">", 0.0, 0.0, paper, passed, "quick", kind, measured, sample)


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
        ([check("finding", passed=False)], [], INCONCLUSIVE),
        ([check(passed=False)], [], CHECK_FAILED),  # the evidence holds at no seed
    ],
)
def test_the_verdict_of_one_seed(checks, quals, expected):
    assert verdicts(["A1"], checks, [("A1", q) for q in quals])["A1"].verdict == expected


def test_finding_reasons_quote_ours_and_the_papers():
    res = verdicts(
        ["B11"], [check("finding", what="local corr", measured="0.986", paper="> 0.99", claim="B11")]
    )
    v = res["B11"]
    assert v.reasons == ("local corr: measured 0.986; paper: > 0.99",)
    assert (v.evidence, v.findings, v.sanity, v.failed) == (0, 1, 0, 0)
    # a qualification the chapter states still shows, after the findings
    finding = check("finding", what="d", measured="9", paper="1", claim="B11")
    v = verdicts(["B11"], [finding], [("B11", "means over 100 trials")])["B11"]
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
    assert "2 do not reproduce" in format_counts(dict(counts, **{NOT_REPRODUCED: 2}))
    assert "3 hold at some seeds" in format_counts(dict(counts, **{PARTIAL: 3}))


def test_claim_log_records_kinds_and_qualifications(tmp_path):
    log = ClaimLog("demo", "quick", tmp_path)
    log.check("B11", "corr", 0.986, "~", 0.986, tol=1e-3, kind="finding", paper="> 0.99")
    log.qualify("B10", "with the authors' loss")
    res = verdicts(["B10", "B11"], log.checks, log.qualifications)
    assert res["B11"].verdict == NOT_REPRODUCED and res["B10"].verdict == NOT_TESTED
    with pytest.raises(InvalidDataError, match="non-empty"):
        log.qualify("B10", "  ")


# -- across seeds -------------------------------------------------------------------------------


def record(seed, *checks, quals=()):
    return ChapterRecord("01_demo", "paper", tuple(checks), tuple(quals), None, seed, True, {"seed": seed})


def sweep(*records):
    return Sweep(records[0], {r.seed: r for r in records})


def verdict_of(*records, claim="A1"):
    return sweep_verdicts([claim], [sweep(*records)])[claim]


def test_a_claim_reproduces_only_when_its_evidence_holds_at_every_seed():
    v = verdict_of(*(record(s, check(), check("sanity")) for s in range(5)))
    assert v.verdict == REPRODUCED and v.across_seeds == "holds at 5 of 5 seeds"
    v = verdict_of(
        record(0, check()), record(1, check(passed=False)), record(2, check()), record(3, check(passed=False))
    )
    assert v.verdict == PARTIAL
    assert v.across_seeds == "holds at 2 of 4 seeds (failed at 1 and 3)"
    assert v.reasons == ("A1 x: failed at seed 1 and 3 (measured 1 and 1; required > 0)",)
    # the book's seed failing counts like any other
    assert verdict_of(record(0, check(passed=False)), record(1, check())).verdict == PARTIAL
    assert verdict_of(record(0, check(passed=False)), record(1, check(passed=False))).verdict == CHECK_FAILED


def test_a_sanity_check_must_hold_at_every_seed():
    v = verdict_of(record(0, check(), check("sanity")), record(1, check(), check("sanity", passed=False)))
    assert v.verdict == CHECK_FAILED
    assert v.reasons == ("A1 (sanity) x: failed at seed 1 (measured 1; required > 0)",)


def test_a_finding_must_hold_at_every_seed_or_it_is_inconclusive():
    held = [record(s, check("finding", measured=str(s), value=float(s))) for s in range(3)]
    v = verdict_of(*held)
    assert v.verdict == NOT_REPRODUCED
    assert v.reasons == ("x: measured 0 (at 3 seeds)",)
    v = verdict_of(held[0], record(1, check("finding", passed=False)), held[2])
    assert v.verdict == INCONCLUSIVE and v.reasons == ("x: holds at 2 of 3 seeds",)


def test_a_statistical_check_is_decided_pooled():
    # at each seed a mean of 0.987 ± 0.002 does not contradict "> 0.99"; pooled over 5 seeds
    # (se 0.0009) it does
    rng_values = [[0.987 + 0.02 * ((i % 2) * 2 - 1) for i in range(100)] for _ in range(5)]

    def stat(seed, kind="claim"):
        sample = sample_of("mean", rng_values[seed])
        passed = sample.decide(">", 0.99, 0.0, kind)
        c = Check("B11", "mean corr", 0.988, ">", 0.99, 0.0, "> 0.99", passed, "paper", kind, "0.988", sample)
        return record(seed, c)

    v = sweep_verdicts(["B11"], [sweep(*(stat(s) for s in range(5)))])["B11"]
    assert v.verdict == CHECK_FAILED  # the evidence is contradicted, pooled
    assert v.reasons[0].startswith("B11 mean corr: fails pooled over 5 seeds (0.987 ± 0.0009 (500 trials))")

    # stated as a finding ("< 0.99"), the same data establish the shortfall, pooled only
    def finding(seed):
        sample = sample_of("mean", rng_values[seed])
        passed = sample.decide("<", 0.99, 0.0, "finding")
        c = Check(
            "B11", "mean corr", 0.988, "<", 0.99, 0.0, "> 0.99", passed, "paper", "finding", "x", sample
        )
        return record(seed, c)

    books = [finding(s) for s in range(5)]
    assert not books[0].checks[0].passed  # one seed does not establish it
    v = sweep_verdicts(["B11"], [sweep(*books)])["B11"]
    assert v.verdict == NOT_REPRODUCED
    assert v.reasons == (
        "mean corr: measured 0.987 ± 0.0009 (500 trials) pooled over 5 seeds; paper: > 0.99",
    )
    # one seed alone: inconclusive
    assert sweep_verdicts(["B11"], [sweep(books[0])])["B11"].verdict == INCONCLUSIVE


def test_a_statistical_check_that_misses_at_one_seed_but_holds_pooled_does_not_count_against_it():
    # the true mean sits above 0.99; one seed's sample falls below it by chance
    low = [0.985 + 0.01 * ((i % 2) * 2 - 1) for i in range(100)]
    high = [0.993 + 0.01 * ((i % 2) * 2 - 1) for i in range(100)]

    def stat(seed, values, count_passed=True):
        sample = sample_of("mean", values)
        passed = sample.decide(">", 0.99, 0.0, "claim")
        c = Check("B10", "mean corr", 0.99, ">", 0.99, 0.0, "> 0.99", passed, "paper", "claim", "x", sample)
        return record(seed, c, check(claim="B10", passed=count_passed))

    books = [stat(0, low), *(stat(s, high) for s in range(1, 5))]
    assert not books[0].checks[0].passed
    v = sweep_verdicts(["B10"], [sweep(*books)])["B10"]
    assert v.verdict == REPRODUCED and v.across_seeds == "holds at 5 of 5 seeds"
    # a check decided seed by seed still counts at each seed
    books[2] = stat(2, high, count_passed=False)
    v = sweep_verdicts(["B10"], [sweep(*books)])["B10"]
    assert v.verdict == PARTIAL and v.across_seeds == "holds at 4 of 5 seeds (failed at 2)"


def test_a_measurement_qualifies_a_claim_when_established_pooled_and_never_fails_it():
    # a drift of -0.04 ± 0.02 per seed: not established at one seed (z = 2), established over 5
    def measured(seed, change=-0.04):
        sample = sample_of("estimate", [change], [0.02])
        passed = sample.decide("<", 0.0, 0.0, "measurement")
        c = Check("A4", "drift", change, "<", 0.0, 0.0, "", passed, "paper", "measurement", "x", sample)
        return record(seed, check(claim="A4"), c)

    books = [measured(s) for s in range(5)]
    assert not books[0].checks[1].passed and books[0].checks[1].line.startswith("[OPEN] A4 (measurement)")
    v = sweep_verdicts(["A4"], [sweep(*books)])["A4"]
    assert v.verdict == QUALIFIED and v.measurements == 1 and v.failed == 0
    assert v.reasons == ("drift: established pooled over 5 seeds (-0.0400 ± 0.009 (5 estimates))",)
    # no drift: not established, listed as such; the claim stays reproduced
    v = sweep_verdicts(["A4"], [sweep(*(measured(s, 0.0) for s in range(5)))])["A4"]
    assert v.verdict == REPRODUCED and v.failed == 0
    assert v.reasons == ("drift: not established pooled over 5 seeds (0.00 ± 0.009 (5 estimates))",)
    # a measurement is no evidence
    alone = ChapterRecord("01_demo", "paper", books[0].checks[1:], (), None, 0, True, {"seed": 0})
    assert sweep_verdicts(["A4"], [sweep(alone)])["A4"].verdict == NOT_TESTED


def test_qualifications_stated_at_other_seeds_only_are_named_with_their_seeds():
    v = verdict_of(record(0, check()), record(1, check(), quals=[("A1", "only here")]))
    assert v.verdict == QUALIFIED and v.reasons == ("only here (at seed 1)",)


def test_series_match_the_same_check_at_every_seed_and_show_its_spread():
    a = record(0, check(what="x", value=0.1, measured="0.10"), check(what="x", value=5.0, measured="5"))
    b = record(1, check(what="x", value=0.3, measured="0.30"), check(what="x", value=5.0, measured="5"))
    first, second = series_of(sweep(a, b))
    assert first.seeds == (0, 1) and first.spread() == ("0.10", "0.30")
    assert second.spread() is None  # the same value at every seed


def write(tree, rec):
    log_path = tree.claims / f"{rec.notebook}.json"
    log_path.write_text(rec.dump())


def test_load_sweeps_counts_only_the_seeds_that_differ_in_nothing_but_the_seed(tmp_path):
    layout = output_layout(tmp_path / "out")
    base = {"seed": 0, "n": 5, "output_dir": ".."}
    book = ChapterRecord("01_demo", "paper", (check(),), (), None, 0, True, base)
    write(layout, book)
    good = ChapterRecord("01_demo", "paper", (check(),), (), None, 1, True, dict(base, seed=1))
    other = ChapterRecord("01_demo", "paper", (check(),), (), None, 2, True, dict(base, seed=2, n=6))
    quick = ChapterRecord("01_demo", "quick", (check(),), (), None, 3, True, dict(base, seed=3))
    cut = ChapterRecord("01_demo", "paper", (check(),), (), None, 4, False, dict(base, seed=4))
    for rec in (good, other, quick, cut):
        write(output_layout(layout.seed_root(rec.seed)), rec)
    (output_layout(layout.seed_root(5)).claims / "01_demo.json").write_text("{not json")
    failed = output_layout(layout.seed_root(6))
    failed.failed.mkdir()
    (failed.failed / "01_demo.json").write_text('{"error": "ValueError: broken\\nmore"}')
    (loaded,) = load_sweeps(layout, [book])
    assert loaded.seeds == (0, 1)
    assert loaded.excluded[2] == "it ran with other parameters (n)"
    assert loaded.excluded[3] == "it ran at the quick profile, the book's seed at paper"
    assert loaded.excluded[4] == "the run did not reach its end"
    assert "cannot read the claim record" in loaded.excluded[5]
    assert loaded.excluded[6] == "its last run failed (ValueError: broken)"


def test_load_sweeps_sets_aside_a_seed_run_with_other_ntpnb_sources(tmp_path):
    from ntpnb.chapter.provenance import Manifest, write_manifest

    layout = output_layout(tmp_path / "out")
    base = {"seed": 0, "n": 5, "output_dir": ".."}
    book = ChapterRecord("01_demo", "paper", (check(),), (), None, 0, True, base)
    write(layout, book)
    write_manifest(layout.notebooks / "01_demo.ipynb", Manifest("k0", base, 1.0, {}, "new"))
    for seed, package in ((1, "new"), (2, "old"), (3, "")):
        tree = output_layout(layout.seed_root(seed))
        write(
            tree, ChapterRecord("01_demo", "paper", (check(),), (), None, seed, True, dict(base, seed=seed))
        )
        write_manifest(tree.notebooks / "01_demo.ipynb", Manifest(f"k{seed}", base, 1.0, {}, package))
    (loaded,) = load_sweeps(layout, [book])
    assert loaded.seeds == (0, 1, 3)  # an unknown package (an older manifest) is not a difference
    assert "ran with other ntpnb sources than the book's seed" in loaded.excluded[2]
