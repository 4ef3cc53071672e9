"""Verdicts of claims from their checks at every seed of a sweep (ntpnb.book.verdicts)."""

from __future__ import annotations

import dataclasses
import re

import pytest

from ntpnb.book.verdicts import (
    BY_CONSTRUCTION,
    CHECK_FAILED,
    NOT_ESTABLISHED,
    NOT_REPRODUCED,
    NOT_TESTED,
    PARTIAL,
    QUALIFIED,
    REPRODUCED,
    Sweep,
    format_counts,
    load_sweeps,
    qualification_across,
    series_of,
    sweep_verdicts,
)
from ntpnb.chapter.claims import Artifact, ChapterRecord, Check, ClaimLog, Qualification
from ntpnb.chapter.layout import output_layout
from ntpnb.errors import InvalidDataError
from ntpnb.statistics import sample_of


def verdicts(claim_ids, checks, qualifications: list[Qualification] = ()):
    """The verdict of every id in ``claim_ids`` from the checks of one run (one seed)."""
    record = ChapterRecord("", "", tuple(checks), tuple(qualifications))
    return sweep_verdicts(claim_ids, [Sweep(record, {0: record})])


def check(
    kind="claim", passed=True, what="x", measured="1", paper="", claim="A1", value=1.0, sample=None, **kw
):
    return Check(claim, what, value, ">", 0.0, 0.0, paper, passed, "quick", kind, measured, sample, **kw)


def q(text, claim="A1", **numbers):
    return Qualification(claim, text, numbers)


@pytest.mark.parametrize(
    ("checks", "quals", "expected"),
    [
        ([check()], [], REPRODUCED),
        ([check(), check("sanity")], ["smaller n than the paper"], QUALIFIED),
        ([check(), check("finding")], [], NOT_REPRODUCED),
        ([check("finding")], ["q"], NOT_REPRODUCED),
        ([check("sanity")], [], BY_CONSTRUCTION),
        ([check("sanity")], ["q"], BY_CONSTRUCTION),  # a qualification is no evidence
        ([], [], NOT_TESTED),
        ([check(), check("sanity", passed=False)], [], CHECK_FAILED),
        ([check("finding", passed=False)], [], NOT_ESTABLISHED),
        ([check(), check("finding", passed=False)], [], REPRODUCED),  # listed as not established
        ([check(passed=False)], [], CHECK_FAILED),  # the evidence holds at no seed
    ],
)
def test_the_verdict_of_one_seed(checks, quals, expected):
    v = verdicts(["A1"], checks, [q(t) for t in quals])["A1"]
    assert v.verdict == expected
    assert v.phrase.startswith(expected)


def test_a_claim_with_sanity_checks_only_is_by_construction_in_those_words():
    v = verdicts(["A10"], [check("sanity", claim="A10")])["A10"]
    assert v.phrase == "by construction: sanity checks only"


def test_finding_reasons_quote_ours_and_the_papers():
    res = verdicts(
        ["B11"], [check("finding", what="local corr", measured="0.986", paper="> 0.99", claim="B11")]
    )
    assert res["B11"].reasons == ("local corr: ours 0.986 (at the one seed); the paper: > 0.99",)
    assert res["B11"].phrase == "does not reproduce: finding at the one seed"


def test_verdicts_of_every_id_and_counts():
    checks = [check(), check("finding", claim="A2")]
    res = verdicts(["A1", "A2", "A3", "A4"], checks, [q("only d = 2")])
    assert [v.verdict for v in res.values()] == [QUALIFIED, NOT_REPRODUCED, NOT_TESTED, NOT_TESTED]
    text = format_counts(res)
    assert (
        text
        == "0 of 4 claims reproduced, 1 reproduced with a qualification, 1 does not reproduce, 2 not tested"
    )
    partial = {c: dataclasses.replace(v, verdict=PARTIAL) for c, v in res.items() if c != "A1"}
    assert "3 hold at some seeds" in format_counts(res | partial)


def test_claim_log_records_kinds_and_qualifications(tmp_path):
    log = ClaimLog("demo", "quick", tmp_path)
    log.check("B11", "corr", 0.986, "~", 0.986, tol=1e-3, kind="finding", paper="> 0.99")
    log.check("B10", "x", 1.0, ">", 0.0)
    log.qualify("B10", "with the authors' loss at {corr:.3f}", corr=0.9512)
    res = verdicts(["B10", "B11"], log.checks, log.qualifications)
    assert res["B11"].verdict == NOT_REPRODUCED and res["B10"].verdict == QUALIFIED
    assert res["B10"].reasons == ("with the authors' loss at 0.951",)
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
    assert v.verdict == REPRODUCED and v.phrase == "reproduced: holds at 5 of 5 seeds"
    v = verdict_of(
        record(0, check()), record(1, check(passed=False)), record(2, check()), record(3, check(passed=False))
    )
    assert v.verdict == PARTIAL
    assert v.phrase == "holds at some seeds: holds at 2 of 4 seeds (failed at 1 and 3)"
    assert v.reasons == ("A1 x: failed at seed 1 and 3 (measured 1 and 1; required > 0)",)
    # the book's seed failing counts like any other
    assert verdict_of(record(0, check(passed=False)), record(1, check())).verdict == PARTIAL
    assert verdict_of(record(0, check(passed=False)), record(1, check(passed=False))).verdict == CHECK_FAILED


def test_a_sanity_check_must_hold_at_every_seed():
    v = verdict_of(record(0, check(), check("sanity")), record(1, check(), check("sanity", passed=False)))
    assert v.verdict == CHECK_FAILED
    assert v.reasons == ("A1 (sanity) x: failed at seed 1 (measured 1; required > 0)",)


def test_a_finding_decided_at_each_seed_must_hold_at_every_seed_to_be_established():
    held = [record(s, check("finding", measured=str(s), value=float(s))) for s in range(3)]
    v = verdict_of(*held)
    assert v.verdict == NOT_REPRODUCED
    assert v.phrase == "does not reproduce: finding at each of the 3 seeds"
    assert v.reasons == ("x: ours 0 to 2 over the seeds (at each of the 3 seeds)",)
    v = verdict_of(held[0], record(1, check("finding", passed=False)), held[2])
    assert v.verdict == NOT_ESTABLISHED
    assert v.reasons == ("finding not established: x (at 2 of 3 seeds (failed at 1): 0)",)


def test_a_seed_independent_check_is_decided_once_and_must_measure_the_same_at_every_seed():
    fixed = [record(s, check(), check("finding", measured="0.25", seed_independent=True)) for s in range(4)]
    v = verdict_of(*fixed)
    assert v.verdict == NOT_REPRODUCED and v.phrase == "does not reproduce: seed-independent finding"
    assert v.reasons[0] == "x: ours 0.25 (seed-independent)"
    fixed[2] = record(2, check(), check("finding", measured="0.26", seed_independent=True))
    v = verdict_of(*fixed)
    assert v.verdict == CHECK_FAILED  # its data were to be the same at every seed
    assert "declared seed-independent, but measured 0.25 and 0.26" in v.reasons[0]


def test_a_seed_independent_sample_is_decided_once_on_its_own_trials_not_pooled():
    """The same 200 draws at every seed: pooling them would count each draw five times."""

    def fixed(seed, values=(1,) * 160 + (0,) * 40):
        sample = sample_of("rate", values, establish=True)
        passed = sample.decide(">", 0.5, 0.0, "claim")
        c = Check(
            "A8",
            "share",
            0.8,
            ">",
            0.5,
            0.0,
            "",
            passed,
            "paper",
            "claim",
            sample.describe(0.5),
            sample,
            seed_independent=True,
        )
        return record(seed, c)

    books = [fixed(s) for s in range(5)]
    (series,) = series_of(sweep(*books))
    assert (
        series.pooled_sample.size == 200
        and series.decided == "seed-independent (200 trials, the same at 5 seeds)"
    )
    v = verdict_of(*books, claim="A8")
    assert v.verdict == REPRODUCED and v.phrase == "reproduced: seed-independent"
    low = [fixed(s, (1,) * 90 + (0,) * 110) for s in range(5)]  # 45%: "most draws" contradicted
    assert verdict_of(*low, claim="A8").verdict == NOT_REPRODUCED


def test_a_seed_independent_sanity_check_that_differs_between_seeds_fails():
    a = record(0, check(), check("sanity", measured="3", seed_independent=True))
    b = record(1, check(), check("sanity", measured="4", seed_independent=True))
    v = verdict_of(a, b)
    assert v.verdict == CHECK_FAILED
    assert "declared seed-independent, but measured 3 and 4" in v.reasons[0]


SPREAD = [0.987 + 0.02 * ((i % 2) * 2 - 1) for i in range(100)]  # mean 0.987, se 0.002 per seed


def stat(seed, kind="claim", relation=">", artifact=None, values=SPREAD, claim="B11"):
    sample = sample_of("mean", values)
    passed = sample.decide(relation, 0.99, 0.0, kind)
    measured = sample.describe(0.99)
    c = Check(
        claim, "mean corr", 0.987, relation, 0.99, 0.0, "> 0.99", passed, "paper", kind, measured, sample
    )
    c = Check(**{**c.__dict__, "artifact": artifact})
    return record(seed, c)


def test_a_statistical_check_is_decided_pooled_and_shows_no_count_of_seeds():
    # at each seed a mean of 0.987 ± 0.002 does not contradict "> 0.99"; pooled over 5 seeds
    # (se 0.0009) it does: the paper's number is contradicted
    v = sweep_verdicts(["B11"], [sweep(*(stat(s) for s in range(5)))])["B11"]
    assert v.verdict == NOT_REPRODUCED
    assert v.phrase == "does not reproduce: contradicted pooled over 5 seeds (500 trials)"
    # stated as a finding ("< 0.99"), the same data establish the shortfall, pooled only
    books = [stat(s, "finding", "<") for s in range(5)]
    assert not books[0].checks[0].passed and books[0].checks[0].result == "OPEN"
    v = sweep_verdicts(["B11"], [sweep(*books)])["B11"]
    assert v.verdict == NOT_REPRODUCED
    assert v.phrase == "does not reproduce: finding pooled over 5 seeds (500 trials)"
    assert v.reasons == (
        "mean corr: ours 0.987 ± 0.0009 (500 trials) (pooled over 5 seeds); the paper: > 0.99",
    )
    # one seed alone does not establish it
    assert sweep_verdicts(["B11"], [sweep(books[0])])["B11"].verdict == NOT_ESTABLISHED


def test_a_finding_that_the_authors_artifact_also_shows_qualifies_the_text():
    stored = Artifact("the authors' stored Fig. 6a (figures/x.pdf)", 0.9866, trials=100)
    books = [stat(s, "finding", "<", artifact=stored) for s in range(5)]
    v = sweep_verdicts(["B11"], [sweep(*books)])["B11"]
    assert v.verdict == QUALIFIED
    (reason,) = v.reasons
    assert "the paper > 0.99" in reason and "ours 0.987 ± 0.0009 (500 trials)" in reason
    assert "the authors' stored Fig. 6a (figures/x.pdf): 0.9866, consistent with ours" in reason
    # an artifact that shows another value leaves the finding standing, quoting all three
    far = Artifact("the authors' stored Fig. 6a (figures/x.pdf)", 0.995, trials=100)
    v = sweep_verdicts(["B11"], [sweep(*(stat(s, "finding", "<", artifact=far) for s in range(5)))])["B11"]
    assert v.verdict == NOT_REPRODUCED
    assert "0.995, not consistent with ours" in v.reasons[0] and "the paper: > 0.99" in v.reasons[0]


def test_an_artifact_is_compared_with_the_noise_of_a_mean_over_its_trials():
    sample = sample_of("mean", SPREAD * 5)  # se 0.0009; one trial's sd 0.02
    assert Artifact("a", 0.992, trials=100).consistent_with(sample)  # 5 se, but 2.4 sd/sqrt(100)
    assert not Artifact("a", 0.992).consistent_with(sample)  # an exact value: 5 se away
    assert Artifact("a", 0.992, precision=0.004).consistent_with(sample)


def test_a_count_check_is_a_rate_pooled_over_every_trial_of_every_seed():
    """B10: one trial of 100 with a non-empty sub-dataset at seeds 2 and 3."""

    def count(seed, events):
        sample = sample_of("rate", [1] * events + [0] * (100 - events))
        passed = sample.decide("<=", 0.0295, 0.0, "claim")
        c = Check(
            "B10",
            "rate of non-empty",
            events / 100,
            "<=",
            0.0295,
            0.0,
            "0",
            passed,
            "paper",
            "claim",
            sample.describe(0.0295),
            sample,
        )
        return record(seed, c)

    books = [count(s, 1 if s in (2, 3) else 0) for s in range(5)]
    v = sweep_verdicts(["B10"], [sweep(*books)])["B10"]
    assert v.verdict == REPRODUCED
    assert v.phrase == "reproduced: pooled over 5 seeds (500 trials)"
    (series,) = series_of(sweep(*books))
    assert series.ours() == "2 of 500 trials (0.4%; 98% interval 0.089% to 1.8%)"
    # a rate the data establish above what the claim allows contradicts it
    v = sweep_verdicts(["B10"], [sweep(*(count(s, 8) for s in range(5)))])["B10"]
    assert v.verdict == NOT_REPRODUCED


def test_a_statistical_check_that_misses_at_one_seed_but_holds_pooled_does_not_count_against_it():
    # the true mean sits above 0.99; one seed's sample falls below it by chance
    low = [0.985 + 0.01 * ((i % 2) * 2 - 1) for i in range(100)]
    high = [0.993 + 0.01 * ((i % 2) * 2 - 1) for i in range(100)]

    def mixed(seed, values, count_passed=True):
        (c,) = stat(seed, values=values, claim="B10").checks
        return record(seed, c, check(claim="B10", passed=count_passed))

    books = [mixed(0, low), *(mixed(s, high) for s in range(1, 5))]
    assert not books[0].checks[0].passed and books[0].checks[0].result == "OPEN"
    v = sweep_verdicts(["B10"], [sweep(*books)])["B10"]
    assert v.verdict == REPRODUCED
    assert v.phrase == "reproduced: holds at 5 of 5 seeds; pooled over 5 seeds (500 trials)"
    # a check decided seed by seed still counts at each seed
    books[2] = mixed(2, high, count_passed=False)
    v = sweep_verdicts(["B10"], [sweep(*books)])["B10"]
    assert v.verdict == PARTIAL
    assert v.phrase.startswith("holds at some seeds: holds at 4 of 5 seeds (failed at 2)")


def test_a_measurement_qualifies_a_claim_when_established_pooled_and_never_fails_it():
    # a drift of -0.04 ± 0.02 per seed: not established at one seed (z = 2), established over 5
    def measured(seed, change=-0.04):
        sample = sample_of("estimate", [change], [0.02])
        passed = sample.decide("<", 0.0, 0.0, "measurement")
        c = Check("A3", "drift", change, "<", 0.0, 0.0, "", passed, "paper", "measurement", "x", sample)
        return record(seed, check(claim="A3"), c)

    books = [measured(s) for s in range(5)]
    assert not books[0].checks[1].passed and books[0].checks[1].line.startswith("[OPEN] A3 (measurement)")
    v = sweep_verdicts(["A3"], [sweep(*books)])["A3"]
    assert v.verdict == QUALIFIED and v.counts["measurements"] == 1 and v.counts["failed"] == 0
    assert v.reasons == (
        "measurement established: drift (pooled over 5 seeds: -0.0400 ± 0.009 (5 estimates))",
    )
    # no drift: not established, listed as such; the claim stays reproduced
    v = sweep_verdicts(["A3"], [sweep(*(measured(s, 0.0) for s in range(5)))])["A3"]
    assert v.verdict == REPRODUCED and v.counts["failed"] == 0
    assert v.reasons[0].startswith("measurement not established: drift")
    # a measurement is no evidence
    alone = ChapterRecord("01_demo", "paper", books[0].checks[1:], (), None, 0, True, {"seed": 0})
    assert sweep_verdicts(["A3"], [sweep(alone)])["A3"].verdict == BY_CONSTRUCTION


def test_qualifications_quote_their_numbers_as_ranges_over_the_seeds():
    text = "corr {corr:.3f} at k = {k}, exponent {exponent:.2f}"
    books = [
        record(s, check(), quals=[q(text, corr=c, k=1000000, exponent=e)])
        for s, (c, e) in enumerate(
            [(0.953, 1.62), (0.960, 1.86), (0.958, 1.82), (0.959, 1.80), (0.948, 1.71)]
        )
    ]
    v = verdict_of(*books)
    assert v.verdict == QUALIFIED
    assert v.reasons == (
        "corr 0.948 to 0.960 at k = 1000000, exponent 1.62 to 1.86 (lowest to highest over the 5 seeds)",
    )
    # the same numbers at every seed print once
    same = [record(s, check(), quals=[q(text, corr=0.95, k=10, exponent=1.5)]) for s in range(3)]
    assert verdict_of(*same).reasons == ("corr 0.950 at k = 10, exponent 1.50",)


def test_qualifications_stated_at_other_seeds_only_are_named_with_their_seeds():
    v = verdict_of(record(0, check()), record(1, check(), quals=[q("only here")]))
    assert v.verdict == QUALIFIED and v.reasons == ("only here (at seed 1)",)
    made = [(1, q("{n} trials", n=3)), (4, q("{n} trials", n=5))]
    assert qualification_across(made, (0, 1, 2, 3, 4)) == "3 to 5 trials (at seeds 1 and 4)"


def test_a_qualification_refuses_fields_without_numbers_and_numbers_that_are_not_finite():
    with pytest.raises(InvalidDataError, match="fields"):
        Qualification("A1", "at {k} steps", {})
    with pytest.raises(InvalidDataError, match="fields"):
        Qualification("A1", "no fields", {"k": 3})
    with pytest.raises(InvalidDataError, match="not finite"):
        Qualification("A1", "at {k}", {"k": float("nan")})
    with pytest.raises(InvalidDataError, match="qualification"):
        Qualification("A1", "at {k:d}", {"k": 0.5})


def test_series_match_the_same_check_at_every_seed_and_show_its_spread():
    a = record(0, check(what="x", value=0.1, measured="0.10"), check(what="x", value=5.0, measured="5"))
    b = record(1, check(what="x", value=0.3, measured="0.30"), check(what="x", value=5.0, measured="5"))
    first, second = series_of(sweep(a, b))
    assert tuple(first.checks) == (0, 1) and first.spread() == ("0.10", "0.30")
    assert second.spread() is None  # the same value at every seed


NEGATIVE_WORDS = re.compile(r"does not|not established|fail|check failed|some seeds")


def test_no_verdict_pairs_a_negative_word_with_n_of_n():
    """Every verdict the constructed sweeps above give, read as a phrase and its reasons."""
    cases = [
        [stat(s, "finding", "<") for s in range(5)],
        [record(s, check(), check("finding", measured="2")) for s in range(5)],
        [record(s, check(), check("finding", seed_independent=True)) for s in range(5)],
        [record(s, check(passed=s != 3)) for s in range(5)],
        [record(s, check(), check("sanity", passed=s != 1)) for s in range(5)],
    ]
    for books in cases:
        v = verdict_of(*books, claim=books[0].checks[0].claim)
        assert v.negative
        for line in (v.phrase, *v.reasons):
            full = re.search(r"\b(\d+) of \1 seeds?\b", line)
            assert not (full and NEGATIVE_WORDS.search(line)), line


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
    from ntpnb.chapter.outputs import Manifest, write_manifest

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
