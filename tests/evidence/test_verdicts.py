"""Verdicts of claims from their checks at every seed of a sweep (ntpnb.evidence._verdicts)."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from ntpnb.chapter._claims import ClaimLog
from ntpnb.errors import InvalidDataError
from ntpnb.evidence._checks import Artifact, Check, Qualification
from ntpnb.evidence._samples import sample_of
from ntpnb.evidence._series import Sweep, series_of, statement_across
from ntpnb.evidence._verdicts import (
    BY_CONSTRUCTION,
    CHECK_FAILED,
    NOT_ESTABLISHED,
    NOT_REPRODUCED,
    NOT_TESTED,
    PARTIAL,
    QUALIFIED,
    REPRODUCED,
    format_counts,
    sweep_verdicts,
)
from ntpnb.evidence._vocabulary import (
    CONTRADICTED,
    COUNTEREXAMPLE,
    FAILS_AS_STATED,
    FINITE_SIZE,
    HORIZON,
    OVERSTATED,
    PROTOCOL_DIFFERS,
    STATED_LIMIT,
    VALUE_MISSED,
    describe_sample,
)
from ntpnb.records._places import output_tree
from ntpnb.records._run import ChapterRun, load_chapter_run
from ntpnb.records._sweep import load_sweeps


def verdicts(claim_ids, checks, qualifications: list[Qualification] = ()):
    """The verdict of every id in ``claim_ids`` from the checks of one run (one seed)."""
    record = ChapterRun("", "", tuple(checks), tuple(qualifications))
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
    assert v.phrase == "by construction (only sanity checks)"


def test_finding_reasons_quote_ours_and_the_papers():
    res = verdicts(
        ["B11"], [check("finding", what="local corr", measured="0.986", paper="> 0.99", claim="B11")]
    )
    assert res["B11"].reasons == ("local corr: 0.986 at the one seed, against the paper's > 0.99",)
    assert res["B11"].findings == res["B11"].reasons
    assert res["B11"].why == "local corr: 0.986 at the one seed, against the paper's > 0.99"
    assert res["B11"].phrase == "does not reproduce (a counterexample): a finding established at the one seed"


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
    return ChapterRun("01_demo", "paper", tuple(checks), tuple(quals), None, seed, True, {"seed": seed})


def sweep(*records):
    return Sweep(records[0], {r.seed: r for r in records})


def verdict_of(*records, claim="A1"):
    return sweep_verdicts([claim], [sweep(*records)])[claim]


def test_a_claim_reproduces_only_when_its_evidence_holds_at_every_seed():
    v = verdict_of(*(record(s, check(), check("sanity")) for s in range(5)))
    assert v.verdict == REPRODUCED and v.phrase == "reproduced: holds at all 5 seeds"
    v = verdict_of(
        record(0, check()), record(1, check(passed=False)), record(2, check()), record(3, check(passed=False))
    )
    assert v.verdict == PARTIAL
    assert v.phrase == "holds at some seeds (fails at some seeds): holds at 2 of 4 seeds (fails at 1 and 3)"
    assert v.reasons == v.failures == ("x: fails at seeds 1 and 3 (measured 1 and 1, required > 0)",)
    assert v.why == v.failures[0]
    # the book's seed failing counts like any other
    assert verdict_of(record(0, check(passed=False)), record(1, check())).verdict == PARTIAL
    assert verdict_of(record(0, check(passed=False)), record(1, check(passed=False))).verdict == CHECK_FAILED


def test_a_sanity_check_must_hold_at_every_seed():
    v = verdict_of(record(0, check(), check("sanity")), record(1, check(), check("sanity", passed=False)))
    assert v.verdict == CHECK_FAILED
    assert v.reasons == ("sanity check x: fails at seed 1 (measured 1, required > 0)",)
    assert v.phrase == "check failed (a sanity check fails): A1 (sanity) fails"


def test_a_finding_decided_at_each_seed_must_hold_at_every_seed_to_be_established():
    held = [record(s, check("finding", measured=str(s), value=float(s))) for s in range(3)]
    v = verdict_of(*held)
    assert v.verdict == NOT_REPRODUCED
    assert v.phrase == "does not reproduce (a counterexample): a finding established at all 3 seeds"
    assert v.reasons == ("x: [0, 2] at all 3 seeds, required > 0",)
    v = verdict_of(held[0], record(1, check("finding", passed=False)), held[2])
    assert v.verdict == NOT_ESTABLISHED
    assert (
        v.phrase == "not established (a finding not established): a finding not established at 2 of 3 seeds "
        "(fails at 1)"
    )
    assert v.reasons == ("finding not established: x > 0; ours [0, 2] at 2 of 3 seeds (fails at 1)",)


def test_a_seed_independent_check_is_decided_once_and_must_measure_the_same_at_every_seed():
    fixed = [record(s, check(), check("finding", measured="0.25", seed_independent=True)) for s in range(4)]
    v = verdict_of(*fixed)
    assert v.verdict == NOT_REPRODUCED
    assert (
        v.phrase
        == "does not reproduce (a counterexample): a finding established once, the same at every seed"
    )
    assert v.reasons[0] == "x: 0.25, once, the same at every seed, required > 0"
    fixed[2] = record(2, check(), check("finding", measured="0.26", seed_independent=True))
    v = verdict_of(*fixed)
    assert v.verdict == CHECK_FAILED  # its data were to be the same at every seed
    assert "declared the same at every seed, but measured 0.25 and 0.26" in v.reasons[0]


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
            describe_sample(sample, 0.5),
            sample,
            seed_independent=True,
        )
        return record(seed, c)

    books = [fixed(s) for s in range(5)]
    (series,) = series_of(sweep(*books))
    assert series.pooled_sample.size == 200 and series.decided == "once, on 200 trials the same at every seed"
    v = verdict_of(*books, claim="A8")
    assert v.verdict == REPRODUCED and v.phrase == "reproduced: holds once, on data the same at every seed"
    low = [fixed(s, (1,) * 90 + (0,) * 110) for s in range(5)]  # 45%: "most draws" contradicted
    assert verdict_of(*low, claim="A8").verdict == NOT_REPRODUCED


def test_a_seed_independent_sanity_check_that_differs_between_seeds_fails():
    a = record(0, check(), check("sanity", measured="3", seed_independent=True))
    b = record(1, check(), check("sanity", measured="4", seed_independent=True))
    v = verdict_of(a, b)
    assert v.verdict == CHECK_FAILED
    assert "declared the same at every seed, but measured 3 and 4" in v.reasons[0]


SPREAD = [0.987 + 0.02 * ((i % 2) * 2 - 1) for i in range(100)]  # mean 0.987, se 0.002 per seed


def stat(seed, kind="claim", relation=">", artifact=None, values=SPREAD, claim="B11"):
    sample = sample_of("mean", values)
    passed = sample.decide(relation, 0.99, 0.0, kind)
    measured = describe_sample(sample, 0.99)
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
    assert v.phrase == (
        "does not reproduce (short of the paper's value): missed (contradicted at the 1% level) on 500 "
        "trials pooled over 5 seeds"
    )
    # stated as a finding ("< 0.99"), the same data establish the shortfall, pooled only
    books = [stat(s, "finding", "<") for s in range(5)]
    assert not books[0].checks[0].passed and books[0].checks[0].result == "OPEN"
    v = sweep_verdicts(["B11"], [sweep(*books)])["B11"]
    assert v.verdict == NOT_REPRODUCED
    assert v.phrase == (
        "does not reproduce (short of the paper's value): a finding established on 500 trials pooled "
        "over 5 seeds"
    )
    assert v.findings == (
        "mean corr: 0.9870 ± 0.0009 on 500 trials pooled over 5 seeds, against the paper's > 0.99",
    )
    # established pooled only: every seed's own sample is named as not bearing it out
    (marginal,) = v.marginal
    assert marginal.startswith(
        "mean corr: established pooled (0.9870 ± 0.0009); alone, seeds 0, 1, 2, 3 and 4"
    )
    # one seed alone does not establish it
    assert sweep_verdicts(["B11"], [sweep(books[0])])["B11"].verdict == NOT_ESTABLISHED


def test_a_bound_missed_by_the_estimate_never_holds_whatever_the_tests_power():
    """B11: "> 0.99" against a mean of 0.987. One seed's test cannot contradict the bound, five
    seeds' can: the verdict is the same, only how sure it is changes."""
    one = sweep_verdicts(["B11"], [sweep(stat(0))])["B11"]
    five = sweep_verdicts(["B11"], [sweep(*(stat(s) for s in range(5)))])["B11"]
    assert one.verdict == five.verdict == NOT_REPRODUCED
    assert one.phrase == (
        "does not reproduce (short of the paper's value): missed (within the test's noise at the 1% level) "
        "on 100 trials at the one seed"
    )
    assert "missed (contradicted at the 1% level) on 500 trials" in five.phrase
    (evidence,) = one.evidence
    assert (
        evidence.outcome == "missed"
        and "(on the estimate; a 1% mean test says how sure)" in evidence.required
    )
    assert evidence.certainty == "within the test's noise at the 1% level"
    # an estimate on the bound's side holds, however unsure: the card says how sure
    above = [0.991 + 0.02 * ((i % 2) * 2 - 1) for i in range(100)]
    v = sweep_verdicts(["B11"], [sweep(stat(0, values=above))])["B11"]
    assert v.verdict == REPRODUCED and v.why.endswith("(within the test's noise at the 1% level)")


def test_an_artifact_explains_a_finding_and_qualifies_a_bound_only_its_own_figure_misses_too():
    stored = Artifact("the authors' stored Fig. 6a (figures/x.pdf)", 0.9866, trials=100)
    books = [stat(s, "finding", "<", artifact=stored) for s in range(5)]
    v = sweep_verdicts(["B11"], [sweep(*books)])["B11"]
    assert v.verdict == NOT_REPRODUCED and not v.qualifications
    (explained,) = v.explanations
    assert explained == (
        "mean corr: the authors' stored Fig. 6a (figures/x.pdf): 0.9866, consistent with ours"
    )
    # evidence whose estimate misses the bound that the authors' own figure misses too, and agrees
    # with it: the text overstates its own figure (qualified), and the bound still reads missed
    books = [stat(s, artifact=stored) for s in range(5)]
    v = sweep_verdicts(["B11"], [sweep(*books)])["B11"]
    assert (v.verdict, v.kind) == (QUALIFIED, OVERSTATED)
    (evidence,) = v.evidence
    assert evidence.outcome == "missed"
    (deciding,) = v.deciding
    figure = "the authors' stored Fig. 6a (figures/x.pdf): 0.9866"
    assert f"the paper's own figure misses it too ({figure}), and ours agrees" in deciding
    assert not any("0.9866" in note for note in v.notes)  # said once, where it decides
    # an artifact that meets the bound our estimate misses: the text is ours to miss, not overstated
    met = Artifact("the authors' stored Fig. 6a (figures/x.pdf)", 0.9905, trials=100, precision=0.004)
    v = sweep_verdicts(["B11"], [sweep(*(stat(s, artifact=met) for s in range(5)))])["B11"]
    assert (v.verdict, v.kind) == (NOT_REPRODUCED, VALUE_MISSED)
    # an artifact that shows another value leaves the finding standing, quoting all three
    far = Artifact("the authors' stored Fig. 6a (figures/x.pdf)", 0.995, trials=100)
    v = sweep_verdicts(["B11"], [sweep(*(stat(s, "finding", "<", artifact=far) for s in range(5)))])["B11"]
    assert v.verdict == NOT_REPRODUCED and not v.explanations
    assert "0.995, not consistent with ours" in v.reasons[0] and "the paper's > 0.99" in v.reasons[0]


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
            describe_sample(sample, 0.0295),
            sample,
        )
        return record(seed, c)

    books = [count(s, 1 if s in (2, 3) else 0) for s in range(5)]
    v = sweep_verdicts(["B10"], [sweep(*books)])["B10"]
    assert v.verdict == REPRODUCED
    assert v.phrase == "reproduced: holds on 500 trials pooled over 5 seeds"
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
    assert v.phrase == "reproduced: holds at all 5 seeds and on 500 trials pooled over 5 seeds"
    # a check decided seed by seed still counts at each seed
    books[2] = mixed(2, high, count_passed=False)
    v = sweep_verdicts(["B10"], [sweep(*books)])["B10"]
    assert v.verdict == PARTIAL
    assert v.phrase.startswith(
        "holds at some seeds (fails at some seeds): holds at 4 of 5 seeds (fails at 2)"
    )


def test_a_measurement_is_shown_beyond_the_paper_and_never_qualifies_or_fails_a_claim():
    # a drift of -0.04 ± 0.02 per seed: not established at one seed (z = 2), established over 5
    def measured(seed, change=-0.04):
        sample = sample_of("estimate", [change], [0.02])
        passed = sample.decide("<", 0.0, 0.0, "measurement")
        c = Check("A3", "drift", change, "<", 0.0, 0.0, "", passed, "paper", "measurement", "x", sample)
        return record(seed, check(claim="A3"), c)

    books = [measured(s) for s in range(5)]
    assert not books[0].checks[1].passed and books[0].checks[1].line.startswith("[OPEN] A3 (measurement)")
    v = sweep_verdicts(["A3"], [sweep(*books)])["A3"]
    # established: beside the claim, not its qualification (A3 was "qualified" by two such)
    assert v.verdict == REPRODUCED and v.counts["measurements"] == 1 and v.counts["failed"] == 0
    assert v.qualifications == () and v.marginal == ()
    assert v.beyond == v.reasons == ("drift: -0.040 ± 0.009 on 5 estimates pooled over 5 seeds",)
    # no drift: not established, listed as such; the claim stays reproduced
    v = sweep_verdicts(["A3"], [sweep(*(measured(s, 0.0) for s in range(5)))])["A3"]
    assert v.verdict == REPRODUCED and v.counts["failed"] == 0
    assert v.reasons[0].startswith("measurement not established: drift")
    # a measurement is no evidence
    alone = ChapterRun("01_demo", "paper", books[0].checks[1:], (), None, 0, True, {"seed": 0})
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
        "corr [0.948, 0.960] at k = 1000000, exponent [1.62, 1.86] (lowest to highest over the 5 seeds)",
    )
    # the same numbers at every seed print once
    same = [record(s, check(), quals=[q(text, corr=0.95, k=10, exponent=1.5)]) for s in range(3)]
    assert verdict_of(*same).reasons == ("corr 0.950 at k = 10, exponent 1.50",)


def test_qualifications_stated_at_other_seeds_only_are_named_with_their_seeds():
    v = verdict_of(record(0, check()), record(1, check(), quals=[q("only here")]))
    assert v.verdict == QUALIFIED and v.reasons == ("only here (at seed 1)",)
    made = [(1, q("{n} trials", n=3)), (4, q("{n} trials", n=5))]
    assert statement_across(made, (0, 1, 2, 3, 4)) == "[3, 5] trials (at seeds 1 and 4)"


def test_a_qualification_refuses_fields_without_numbers_and_numbers_that_are_not_finite():
    with pytest.raises(InvalidDataError, match="fields"):
        Qualification("A1", "at {k} steps", {})
    with pytest.raises(InvalidDataError, match="fields"):
        Qualification("A1", "no fields", {"k": 3})
    with pytest.raises(InvalidDataError, match="not finite"):
        Qualification("A1", "at {k}", {"k": float("nan")})
    with pytest.raises(InvalidDataError, match="statement"):
        Qualification("A1", "at {k:d}", {"k": 0.5})
    with pytest.raises(InvalidDataError, match="must be a Sample of a test in"):
        Qualification("A1", "p {p}", {}, {"p": sample_of("pvalue", [0.5])})
    with pytest.raises(InvalidDataError, match="differ"):
        Qualification("A1", "at {k}", {"k": 1}, {"k": sample_of("mean", [1, 2])})


def test_a_headline_quotes_its_numbers_as_ranges_and_its_samples_pooled_over_the_seeds(tmp_path):
    """B11: the summary's sentence, with the pooled mean of every seed's trials."""
    books = []
    for seed in range(5):
        log = ClaimLog("07_attention", "paper", tmp_path / str(seed), seed=seed)
        log.check("B11", "mean corr", sample_of("mean", SPREAD), ">", 0.99)
        log.headline(
            "B11",
            "mean local correlation {corr} after {steps} steps, against the paper's $> 0.99$",
            corr=sample_of("mean", SPREAD),
            steps=2000 + seed,
        )
        books.append(log.record)
    v = sweep_verdicts(["B11"], [sweep(*books)])["B11"]
    assert v.headline == (
        "mean local correlation 0.9870 ± 0.0009 after [2000, 2004] steps, against the paper's $> 0.99$"
    )
    assert v.summary == v.headline and v.why != v.headline  # the why stays on the card
    assert ChapterRun.from_json(json.loads(books[0].dump())).headlines == books[0].headlines
    log = ClaimLog("07_attention", "paper", tmp_path / "x")
    log.headline("B11", "once")
    with pytest.raises(InvalidDataError, match="already has a headline"):
        log.headline("B11", "twice")
    with pytest.raises(InvalidDataError, match="a claim or a map of the registry, not 'X1'"):
        log.headline("X1", "neither a claim nor a map")


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
    layout = output_tree(tmp_path / "out")
    base = {"seed": 0, "n": 5, "output_dir": ".."}
    book = ChapterRun("01_demo", "paper", (check(),), (), None, 0, True, base)
    write(layout, book)
    good = ChapterRun("01_demo", "paper", (check(),), (), None, 1, True, dict(base, seed=1))
    other = ChapterRun("01_demo", "paper", (check(),), (), None, 2, True, dict(base, seed=2, n=6))
    quick = ChapterRun("01_demo", "quick", (check(),), (), None, 3, True, dict(base, seed=3))
    cut = ChapterRun("01_demo", "paper", (check(),), (), None, 4, False, dict(base, seed=4))
    for rec in (good, other, quick, cut):
        write(output_tree(layout.seed_root(rec.seed)), rec)
    (output_tree(layout.seed_root(5)).claims / "01_demo.json").write_text("{not json")
    failed = output_tree(layout.seed_root(6))
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
    from ntpnb.records._manifest import Manifest, write_manifest

    layout = output_tree(tmp_path / "out")
    base = {"seed": 0, "n": 5, "output_dir": ".."}
    book = ChapterRun("01_demo", "paper", (check(),), (), None, 0, True, base)
    write(layout, book)
    write_manifest(layout.notebooks / "01_demo.ipynb", Manifest("k0", base, 1.0, {}, "new"))
    for seed, package in ((1, "new"), (2, "old"), (3, "")):
        tree = output_tree(layout.seed_root(seed))
        write(tree, ChapterRun("01_demo", "paper", (check(),), (), None, seed, True, dict(base, seed=seed)))
        write_manifest(tree.notebooks / "01_demo.ipynb", Manifest(f"k{seed}", base, 1.0, {}, package))
    (loaded,) = load_sweeps(layout, [book])
    assert loaded.seeds == (0, 1, 3)  # an unknown package (an older manifest) is not a difference
    assert "ran with other ntpnb sources than the book's seed" in loaded.excluded[2]


# -- protocols, marginal checks, instances, the words ------------------------------------------


def mean_check(
    seed, claim, what, values, target=0.99, kind="claim", relation=">", protocol="", artifact=None
):
    """A statistical check of ``values`` (one seed's trials) against ``target``."""
    sample = sample_of("mean", values)
    passed = sample.decide(relation, target, 0.0, kind)
    return Check(
        claim,
        what,
        sample.estimate()[0],
        relation,
        target,
        0.0,
        f"> {target:g}",
        passed,
        "paper",
        kind,
        describe_sample(sample, target),
        sample,
        artifact=artifact,
        protocol=protocol,
    )


HIGH = [0.995 + 0.004 * ((i % 2) * 2 - 1) for i in range(100)]  # mean 0.995: "> 0.99" holds
LOW = [0.946 + 0.02 * ((i % 2) * 2 - 1) for i in range(100)]  # mean 0.946: contradicted


def test_a_claim_with_protocols_is_decided_as_the_paper_states_it_and_explained_by_the_code():
    """B10: the loss the paper states misses the paper's number; the authors' code's loss gives it."""
    books = [
        record(
            s,
            mean_check(s, "B10", "mean corr", HIGH, protocol="authors' loss"),
            mean_check(s, "B10", "mean corr", LOW, protocol="paper's loss"),
            check(claim="B10", what="common"),
        )
        for s in range(5)
    ]
    # the same check under two protocols is two series
    assert len(series_of(sweep(*books))) == 3
    v = verdict_of(*books, claim="B10")
    papers, authors = v.protocols
    assert (papers.key, papers.verdict) == ("paper's loss", NOT_REPRODUCED)
    assert (authors.key, authors.verdict) == ("authors' loss", REPRODUCED)
    assert authors.words.startswith("the loss the authors' code trains")
    assert papers.why == (
        "[paper's loss] mean corr: 0.9460 ± 0.0009 on 500 trials pooled over 5 seeds, "
        "against the paper's > 0.99 (contradicted at the 1% level)"
    )
    # the claim's verdict is the stated protocol's; the authors' code explains it, in words
    assert v.verdict == NOT_REPRODUCED and v.basis == papers.basis
    assert not any("decided under" in q for q in v.qualifications)
    (explained,) = v.explanations
    assert explained.startswith(
        "under [authors' loss] (the loss the authors' code trains, $(1-\\mathrm{softmax}(Ef_W(X))_y)^2$, "
        "which the paper does not state): reproduced, [authors' loss] mean corr: 0.99500 ± 0.00018"
    )
    assert v.why == papers.why
    # both protocols' evidence is listed, each with its protocol
    assert [(e.protocol, e.outcome) for e in v.evidence] == [
        ("authors' loss", "holds"),
        ("paper's loss", "missed"),
        ("", "holds"),
    ]
    # where the protocols agree there is nothing to qualify or explain
    same = [
        record(
            s,
            *(mean_check(s, "B10", "mean corr", HIGH, protocol=p) for p in ("authors' loss", "paper's loss")),
        )
        for s in range(3)
    ]
    v = verdict_of(*same, claim="B10")
    assert v.verdict == REPRODUCED and [p.verdict for p in v.protocols] == [REPRODUCED, REPRODUCED]
    assert not v.explanations
    # the stated protocol holds and the authors' does not: a qualification that names it
    flipped = [
        record(
            s,
            mean_check(s, "B10", "mean corr", LOW, protocol="authors' loss"),
            mean_check(s, "B10", "mean corr", HIGH, protocol="paper's loss"),
        )
        for s in range(5)
    ]
    v = verdict_of(*flipped, claim="B10")
    assert v.verdict == QUALIFIED and v.protocols[1].verdict == NOT_REPRODUCED
    assert v.qualifications[0].startswith(
        "decided under [paper's loss] (reproduced); under [authors' loss]: does not reproduce"
    )
    # no check names a protocol: one verdict, no split
    assert verdict_of(record(0, check(claim="B10")), claim="B10").protocols == ()


def test_an_artifact_explains_a_missed_number_only_under_the_authors_protocol():
    """B11: the authors' (filtered) figure explains a miss of the filtered trials, not of every trial."""
    stored = Artifact("the authors' stored Fig. 6a", 0.9866, trials=100)
    values = [0.987 + 0.02 * ((i % 2) * 2 - 1) for i in range(100)]

    def books(protocol):
        return [
            record(
                s,
                check(claim="B11", what="local above global"),
                mean_check(s, "B11", "mean corr", values, 0.99, "finding", "<", protocol, stored),
            )
            for s in range(5)
        ]

    authors = verdict_of(*books("authors' filter"), claim="B11")
    assert [(p.key, p.verdict) for p in authors.protocols] == [
        ("every trial", REPRODUCED),
        ("authors' filter", NOT_REPRODUCED),
    ]
    # the stated protocol holds: the authors' miss qualifies it, and their figure explains that miss
    assert authors.verdict == QUALIFIED
    assert "under [authors' filter]: does not reproduce" in authors.qualifications[0]
    assert authors.explanations == (
        "under [authors' filter]: [authors' filter] mean corr: the authors' stored Fig. 6a: 0.9866, "
        "consistent with ours",
    )
    # under the stated protocol the same figure explains nothing: it is quoted beside the finding
    stated = verdict_of(*books("every trial"), claim="B11")
    assert stated.verdict == NOT_REPRODUCED and not stated.explanations
    assert "(the authors' stored Fig. 6a: 0.9866, consistent with ours)" in stated.findings[0]
    # a protocol-free check follows every protocol, the authors' too: their figure explains it
    v = verdict_of(*books(""), claim="B11")
    assert v.verdict == NOT_REPRODUCED
    assert v.explanations == ("mean corr: the authors' stored Fig. 6a: 0.9866, consistent with ours",)


def test_a_check_that_holds_pooled_but_not_at_some_seeds_alone_is_marginal():
    """B11's global distance: q = 0.020 pooled; seeds 2 and 3 alone give a smaller q."""
    weak = [0.985 + 0.01 * ((i % 2) * 2 - 1) for i in range(100)]  # alone: "> 0.99" contradicted
    books = [record(s, mean_check(s, "B11", "mean corr", weak if s in (2, 3) else HIGH)) for s in range(5)]
    assert [c.result for r in books for c in r.checks] == ["PASS", "PASS", "OPEN", "OPEN", "PASS"]
    v = verdict_of(*books, claim="B11")
    assert v.verdict == REPRODUCED  # marginal is said beside the verdict, not in it
    assert v.marginal == (
        "mean corr: holds pooled (0.9910 ± 0.0004); alone, seeds 2 and 3 do not bear it out "
        "(0.9850 ± 0.0010, 0.9850 ± 0.0010)",
    )
    # every seed bears it out: nothing marginal
    assert (
        verdict_of(
            *(record(s, mean_check(s, "B11", "mean corr", HIGH)) for s in range(3)), claim="B11"
        ).marginal
        == ()
    )


def instance_check(seed, value, target=0.8):
    sample = sample_of("instances", [value], establish=True)  # "the ratio exceeds 0.8"
    passed = sample.decide(">", target, 0.0, "claim")
    return Check(
        "A15",
        "ratio",
        value,
        ">",
        target,
        0.0,
        "",
        passed,
        "paper",
        "claim",
        describe_sample(sample, target),
        sample,
    )


def test_an_instances_check_is_decided_over_the_seeds_and_not_at_one():
    one = record(0, instance_check(0, 0.9), check(claim="A15", what="other"))
    assert one.checks[0].result == "OPEN" and "not decided alone" in one.checks[0].measured
    v = verdict_of(one, claim="A15")
    assert v.verdict == QUALIFIED  # the other evidence holds; this one cannot be decided here
    assert v.qualifications[0].startswith("not decided by this run: ratio")
    assert v.evidence[0].outcome == "not decided"
    assert verdict_of(record(0, instance_check(0, 0.9)), claim="A15").verdict == NOT_ESTABLISHED
    values = (0.90, 0.86, 0.96, 0.92, 0.88)
    v = verdict_of(*(record(s, instance_check(s, x)) for s, x in enumerate(values)), claim="A15")
    assert v.verdict == REPRODUCED and v.basis == "holds on 5 instances pooled over 5 seeds"
    assert v.marginal == ()  # every seed's line is open (one instance), but none could decide alone
    assert "5 instances from 0.86 to 0.96" in v.evidence[0].ours
    # one instance far below the others: the spread between instances leaves "> 0.8" unestablished,
    # with the mean on its side: not decided (more instances may decide it), never "fails"
    spread = (0.90, 0.86, 0.96, 0.92, 0.60)
    v = verdict_of(*(record(s, instance_check(s, x)) for s, x in enumerate(spread)), claim="A15")
    assert v.verdict == NOT_ESTABLISHED and v.evidence[0].outcome == "not decided"
    # the mean on the wrong side: the strict difference is missed
    below = (0.70, 0.76, 0.66, 0.82, 0.60)
    v = verdict_of(*(record(s, instance_check(s, x)) for s, x in enumerate(below)), claim="A15")
    assert v.verdict == NOT_REPRODUCED and v.evidence[0].outcome == "missed"


def test_p_values_capped_at_one_are_noted_as_testing_nothing():
    def capped(seed):
        sample = sample_of("pvalue", [1.0])
        passed = sample.decide(">", 0.01, 0.0, "sanity")
        return record(
            seed,
            check(claim="A3"),
            Check(
                "A3",
                "nested vs independent",
                1.0,
                ">",
                0.01,
                0.0,
                "",
                passed,
                "paper",
                "sanity",
                "p = 1",
                sample,
            ),
        )

    v = verdict_of(*(capped(s) for s in range(5)), claim="A3")
    assert v.verdict == REPRODUCED
    assert v.notes == (
        "A3 (sanity) nested vs independent: every p-value is 1, so Fisher's method can reject nothing "
        "and the check tests nothing (a p-value capped by a correction, min(1, k p), is no input for it)",
    )


def test_why_is_one_sentence_chosen_by_the_stated_rule():
    quoted = check(what="with the paper", paper="> 0", measured="2")
    v = verdict_of(*(record(s, check(what="first"), quoted) for s in range(3)))
    assert v.why == "with the paper: 2 at all 3 seeds, against the paper's > 0"  # the first quoting the paper
    v = verdict_of(*(record(s, check(what="first"), check(what="second")) for s in range(3)))
    assert v.why == "first: 1 at all 3 seeds, required > 0"  # else the first evidence check
    v = verdict_of(*(record(s, check("sanity", what="identity")) for s in range(2)))
    assert (
        v.why == "only checks of the code and setting, which a false claim would pass too: "
        "identity: 1 at all 2 seeds"
    )
    v = verdict_of(
        record(0, check(what="holds"), check(what="breaks")),
        record(1, check(what="holds"), check(what="breaks", passed=False)),
    )
    assert v.verdict == PARTIAL and v.why == "breaks: fails at seed 1 (measured 1, required > 0)"
    for verdict in (v, verdict_of(*(record(s, quoted) for s in range(3)))):
        assert (
            ";" not in verdict.why
            and "(paper)" not in verdict.phrase
            and "seed-independent" not in verdict.phrase
        )


def test_verdict_words_need_no_code():
    """No profile tags, no "seed-independent" beside "k of N"; the evidence as data for a card."""
    fixed = check("claim", what="corpus", measured="7", seed_independent=True)
    v = verdict_of(*(record(s, check(value=float(s), measured=str(s)), fixed) for s in range(5)))
    assert v.phrase == "reproduced: holds at all 5 seeds and once, on data the same at every seed"
    first, once = v.evidence
    assert (first.what, first.ours, first.spread, first.decided, first.outcome) == (
        "x",
        "0",
        "[0, 4] over the 5 seeds",
        "at all 5 seeds",
        "holds",
    )
    assert (first.notebook, first.required, first.kind, first.protocol) == ("01_demo", "> 0", "claim", "")
    assert once.decided == "once, the same at every seed"


# -- the kinds of a verdict, decided by rule ---------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "checks", "quals", "kind"),
    [
        ("A7", [check(claim="A7")], [Qualification("A7", "far from the limit", limit="horizon")], HORIZON),
        ("A4", [check(claim="A4")], [Qualification("A4", "at m = 30", limit="size")], FINITE_SIZE),
        ("A8", [check(claim="A8")], [Qualification("A8", "on 84% of the draws")], STATED_LIMIT),
        ("A7", [check(claim="A7")], [], ""),  # the same claim, nothing qualifies it: plain
        # the horizon before a stated limit, whatever their order
        (
            "A7",
            [check(claim="A7")],
            [Qualification("A7", "a"), Qualification("A7", "b", limit="horizon")],
            HORIZON,
        ),
        ("A16", [check(claim="A16"), check("finding", claim="A16")], [], COUNTEREXAMPLE),
    ],
)
def test_a_verdicts_kind_comes_from_its_evidence_never_from_the_claim(claim, checks, quals, kind):
    v = verdicts([claim], checks, quals)[claim]
    assert v.kind == kind
    assert v.phrase.startswith(f"{v.verdict} ({kind})" if kind else f"{v.verdict}:")
    if kind in (HORIZON, FINITE_SIZE, STATED_LIMIT):  # the qualifications that give the kind decide
        limit = {HORIZON: "horizon", FINITE_SIZE: "size", STATED_LIMIT: ""}[kind]
        assert v.deciding == tuple(x.text for x in quals if x.limit == limit) and v.deciding


def test_a_statistical_shortfall_is_a_missed_value_and_an_exact_finding_a_counterexample():
    exact = verdicts(["A16"], [check("finding", claim="A16")])["A16"]
    assert (exact.verdict, exact.kind) == (NOT_REPRODUCED, COUNTEREXAMPLE)
    sampled = sample_of("mean", [0.5, 0.6, 0.55, 0.52, 0.58] * 20)
    pooled = check("finding", claim="B8", value=0.55, sample=sampled)
    v = verdicts(["B8"], [pooled])["B8"]
    assert (v.verdict, v.kind) == (NOT_REPRODUCED, VALUE_MISSED)


def test_a_qualifications_limit_is_only_one_the_claims_statement_takes(tmp_path):
    log = ClaimLog("demo", "quick", tmp_path, seed=0)
    log.qualify("A7", "GD is far from its limit at k = {k}", limit="horizon", k=10**6)
    assert log.qualifications[0].limit == "horizon"
    with pytest.raises(InvalidDataError, match="A8: a qualification of limit 'horizon', but its statement"):
        log.qualify("A8", "far from it", limit="horizon")  # Fig. 1's example takes no limit
    with pytest.raises(InvalidDataError, match="A4: a qualification of limit 'horizon'"):
        log.qualify("A4", "far from it", limit="horizon")  # Remark 1 takes a size to its limit
    with pytest.raises(InvalidDataError, match="limit is one of"):
        Qualification("A7", "x", limit="forever")
    # a record keeps the limit, and an old record without one reads as a stated limit
    (kept,) = load_chapter_run(log.path).qualifications
    assert kept.limit == "horizon"
    data = json.loads(log.path.read_text())
    del data["qualifications"][0]["limit"]
    log.path.write_text(json.dumps(data))
    assert load_chapter_run(log.path).qualifications[0].limit == ""


def test_a_protocol_that_turns_a_holding_claim_negative_names_its_kind_and_the_other_way_round():
    def under(protocol, value):
        return check(claim="B10", value=value, protocol=protocol, passed=value > 0)

    holds_as_stated = verdicts(["B10"], [under("paper's loss", 1.0), under("authors' loss", -1.0)])["B10"]
    assert (holds_as_stated.verdict, holds_as_stated.kind) == (QUALIFIED, PROTOCOL_DIFFERS)
    assert holds_as_stated.deciding[0].startswith(
        "decided under [paper's loss] (reproduced); under [authors'"
    )
    fails_as_stated = verdicts(["B10"], [under("paper's loss", -1.0), under("authors' loss", 1.0)])["B10"]
    assert fails_as_stated.verdict == CHECK_FAILED  # the evidence holds at no seed, as the paper states it
    sampled = {
        key: sample_of("mean", [mean + 0.001 * (i % 3) for i in range(60)])
        for key, mean in (("paper's loss", 0.95), ("authors' loss", 0.995))
    }
    stat_checks = [
        Check(
            "B10",
            "mean corr",
            0.0,
            ">",
            0.99,
            0.0,
            "> 0.99",
            s.decide(">", 0.99, 0.0, "claim"),
            "paper",
            sample=s,
            protocol=key,
        )
        for key, s in sampled.items()
    ]
    v = verdicts(["B10"], stat_checks)["B10"]
    assert (v.verdict, v.kind) == (NOT_REPRODUCED, FAILS_AS_STATED)
    assert any(d.startswith("under [authors' loss]") for d in v.deciding)  # the card names both


def test_one_decision_is_said_once_no_line_pairs_a_negative_outcome_with_not_contradicted():
    from ntpnb.book._report import check_item

    sample = sample_of("mean_quantile", [1.0] * 50 + [2.0] * 50, trials=10)
    contradicted = Check("B10", "distance", 0.0, "~", 0.0, 0.0, "0", False, "paper", sample=sample)
    (summary,) = verdicts(["B10"], [contradicted])["B10"].evidence
    line = check_item(summary)
    assert summary.outcome == CONTRADICTED and "not contradicted" not in line
    assert line.endswith("; contradicted on 100 trials at the one seed")
