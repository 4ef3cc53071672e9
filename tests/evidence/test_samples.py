"""Statistical claim checks (ntpnb.statistics.Sample): a sample tested at one seed and pooled over a sweep."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
import scipy.stats

from ntpnb._statistics import trend_pvalue, wilson_interval
from ntpnb.chapter._claims import ClaimLog
from ntpnb.errors import InvalidDataError
from ntpnb.evidence._checks import Artifact, Check
from ntpnb.evidence._samples import DEFAULT_LEVEL, Sample, sample_of
from ntpnb.evidence._vocabulary import (
    OUTCOMES,
    certainty_words,
    count_words,
    describe_sample,
    how_tested,
    quote_sample,
    requirement_words,
)
from ntpnb.records._run import load_chapter_run


def test_the_mean_test_uses_the_mean_and_its_standard_error():
    s = sample_of("mean", [1.0, 2.0, 3.0, 4.0])
    mean, se = s.estimate()
    assert mean == 2.5
    assert se == pytest.approx(np.std([1, 2, 3, 4], ddof=1) / 2)
    assert describe_sample(s, 0.0) == "2.5 ± 0.6 (4 trials)"  # its digits set by its error


def test_a_mean_quantile_sample_estimates_the_mean_of_its_trials():
    """Its estimate is the trials' mean (its check compares a bootstrap quantile instead)."""
    s = sample_of("mean_quantile", [1.0, 2.0, 3.0, 4.0], trials=2)
    mean, se = s.estimate()
    assert mean == 2.5
    assert se == pytest.approx(np.std([1, 2, 3, 4], ddof=1) / 2)
    assert describe_sample(s, 0.0).startswith("q = ")


@pytest.mark.parametrize(
    ("kind", "relation", "target", "holds"),
    [
        ("claim", ">", 0.99, False),  # 0.988 below the bound: missed, though the test cannot tell
        ("claim", ">", 0.987, True),  # above it, within the test's noise: holds
        ("claim", ">", 0.992, False),  # below, contradicted
        ("finding", "<", 0.99, False),  # 0.988 + 0.0023 > 0.99: not established
        ("finding", "<", 0.991, True),
        ("claim", "~", 0.987, True),
        ("claim", "<", 0.986, False),  # above "< 0.986": missed
        ("claim", "<=", 0.988, True),
    ],
)
def test_a_claims_bound_is_decided_on_the_estimate_and_findings_hold_only_when_established(
    kind, relation, target, holds
):
    s = Sample("estimate", (0.988,), (0.001,))
    assert s.decide(relation, target, 0.0, kind) is holds


@pytest.mark.parametrize(
    ("target", "certainty"),
    [
        (0.99, "within the test's noise at the 1% level"),
        (0.987, "within the test's noise at the 1% level"),
        (0.992, "contradicted at the 1% level"),
        (0.98, "established at the 1% level"),
    ],
)
def test_how_sure_a_bound_is_comes_from_the_test(target, certainty):
    s = Sample("estimate", (0.988,), (0.001,))
    assert certainty_words(s, ">", target) == certainty
    assert certainty_words(s, "~", target) == ""  # a consistency is not a bound
    assert how_tested(s, "claim", ">") == "on the estimate; a 1% estimate test says how sure"
    assert how_tested(s, "claim", "~") == "a two-sided 1% estimate test"


def test_more_trials_never_turn_a_missed_bound_into_one_that_holds():
    """The same estimate below "> 0.99" at 100 and at 10,000 trials: missed both times; only how
    sure changes (a decision that flipped with the sample's size would be decided by power)."""
    few = sample_of("mean", [0.989 + 0.01 * ((i % 2) * 2 - 1) for i in range(100)])
    many = sample_of("mean", [0.989 + 0.01 * ((i % 2) * 2 - 1) for i in range(10_000)])
    assert not few.decide(">", 0.99, 0.0, "claim") and not many.decide(">", 0.99, 0.0, "claim")
    assert certainty_words(few, ">", 0.99).startswith("within") and certainty_words(
        many, ">", 0.99
    ).startswith("contradicted")
    rate = sample_of("rate", [1] * 4 + [0] * 96)  # 4%: above "<= 3%" at any size
    assert not rate.decide("<=", 0.03, 0.0, "claim") and certainty_words(rate, "<=", 0.03).startswith(
        "within"
    )


def test_estimates_pool_by_inverse_variance():
    a = sample_of("estimate", [1.0], [1.0])
    b = sample_of("estimate", [4.0], [2.0])
    pooled = Sample.pooled([a, b])
    value, se = pooled.estimate()
    assert value == pytest.approx((1 * 1 + 4 * 0.25) / 1.25)
    assert se == pytest.approx(math.sqrt(1 / 1.25))


def test_means_pool_every_trial():
    pooled = Sample.pooled([sample_of("mean", [1, 2]), sample_of("mean", [3, 4, 5])])
    assert pooled.values == (1.0, 2.0, 3.0, 4.0, 5.0)
    assert pooled.estimate()[0] == 3.0


def test_samples_of_different_tests_or_levels_do_not_pool():
    with pytest.raises(InvalidDataError, match="cannot pool"):
        Sample.pooled([sample_of("mean", [1, 2]), sample_of("mean", [1, 2], level=0.05)])


def test_the_quantile_test_places_a_papers_mean_among_ours():
    rng = np.random.default_rng(1)
    values = rng.exponential(1.0, size=300)
    s = sample_of("mean_quantile", values, trials=100)
    assert s.quantile_of(values.mean()) == pytest.approx(0.5, abs=0.05)
    assert s.decide("~", values.mean(), 0.0, "claim")
    # far below every mean of 100 of our trials: the finding "our means exceed it" holds
    assert s.decide(">", 0.5, 0.0, "finding")
    assert not s.decide("~", 0.5, 0.0, "claim")
    with pytest.raises(InvalidDataError, match="takes a relation"):
        s.decide("<", 0.5, 0.0, "claim")
    # the resampled means are drawn once, seeded, and are those the quantile counts
    assert s.bootstrap_means is s.bootstrap_means and s.bootstrap_means.size == 20_000
    assert s.quantile_of(1.0) == np.mean(s.bootstrap_means <= 1.0)
    for other in (sample_of("mean", values), sample_of("rate", [0, 1])):  # only this test resamples means
        with pytest.raises(InvalidDataError, match=f"a '{other.test}' test has no bootstrap means"):
            other.quantile_of(2.0)


def test_how_often_a_true_bound_is_missed_and_a_false_one_is_caught():
    """The error rates of the rule, simulated with normal trials (sd 0.01, 100 trials: se 0.001).

    A true mean three standard errors above "> 0.99" is missed when its estimate falls below the
    bound: probability Phi(-3) = 0.13%. At the bound itself the rule is a coin (one half): the
    card then says "within the test's noise". A false claim five standard errors below is missed.
    """
    rng = np.random.default_rng(2026)
    target, sd, n, runs = 0.99, 0.01, 100, 4000

    def missed(mean, trials):
        return sum(
            not sample_of("mean", rng.normal(mean, sd, trials)).decide(">", target, 0.0, "claim")
            for _ in range(runs)
        )

    p = float(scipy.stats.norm.cdf(-3))
    assert missed(target + 3 * sd / math.sqrt(n), n) / runs < p + 5 * math.sqrt(p / runs)
    assert abs(missed(target, n) / runs - 0.5) < 5 * math.sqrt(0.25 / runs)
    assert missed(target - 5 * sd / math.sqrt(n), n) == runs  # held with probability Phi(-5) = 3e-7


def test_a_finding_that_is_not_there_is_recorded_about_level_of_the_time():
    rng = np.random.default_rng(7)
    runs = 4000
    false = sum(
        sample_of("mean", rng.normal(1.0, 1.0, 50)).decide("<", 1.0, 0.0, "finding") for _ in range(runs)
    )
    assert false / runs < DEFAULT_LEVEL + 5 * math.sqrt(DEFAULT_LEVEL / runs)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (("mode", (1.0, 2.0)), "unknown statistical test"),
        (("mean", (1.0,)), "at least 2 values"),
        (("mean", (1.0, float("nan"))), "finite"),
        (("estimate", (1.0,), ()), "one positive standard error"),
        (("estimate", (1.0,), (0.0,)), "one positive standard error"),
        (("mean", (1.0, 2.0), (0.1, 0.1)), "takes no standard errors"),
        (("mean_quantile", (1.0, 2.0), (), 0), "test's trials must be a positive integer, got 0"),
        (("mean_quantile", (1.0, 2.0), (), 2.5), "test's trials must be a positive integer, got 2.5"),
        (("mean", (1.0, 2.0), (), 5), r"a 'mean' test takes no trials \(only 'mean_quantile'\), got 5"),
        (("mean", (1.0, 2.0), (), 0, 0.7), "level must lie in"),
        (("mean", ("a", 2.0)), "must be numbers"),
        (("rate", (0.0, 0.5)), "one 0 or 1 per trial"),
        (("trend", (0.0, 0.5), (), 0, 0.01, False, (), (1.0, 2.0)), "one 0 or 1 per trial"),
        (("trend", (0.0, 1.0), (), 0, 0.01, False, (), (1.0,)), "one covariate per trial"),
        (("trend", (0.0, 1.0)), "one covariate per trial"),
        (("trend", (0.0, 1.0), (), 0, 0.01, False, (), (2.0, 2.0)), "at least two values"),
        (("rate", (0.0, 1.0), (), 0, 0.01, False, (), (1.0, 2.0)), "takes no covariates"),
        (("mean", (1.0, 2.0), (), 0, 0.01, 1), "establish must be True or False"),
    ],
)
def test_bad_samples_are_refused(args, match):
    with pytest.raises(InvalidDataError, match=match):
        Sample(*args)


def test_a_statistical_check_is_recorded_with_its_sample_and_does_not_fail_the_chapter(tmp_path, capsys):
    log = ClaimLog("demo", "quick", tmp_path, seed=2)
    sample = sample_of("mean", [0.95, 0.96, 0.97])
    assert not log.check("B8", "mean corr", sample, ">", 0.99)
    out = capsys.readouterr().out
    assert "[OPEN] B8 mean corr" in out and "[FAIL]" not in out
    assert "required > 0.99 (on the estimate; a 1% mean test says how sure)" in out
    assert not log.record.failed  # decided pooled over the seeds, not here
    log.conclude()  # does not raise
    (check,) = load_chapter_run(log.path).checks
    assert check.sample == sample and check.basis == "pooled"
    assert json.loads(log.path.read_text())["checks"][0]["sample"]["test"] == "mean"
    # a statistical sanity check (a test of our design) is decided pooled too
    assert ClaimLog("demo", "quick", tmp_path).check("B8", "x", sample, ">", 0.9, kind="sanity")
    with pytest.raises(InvalidDataError, match="needs a number or a Sample"):
        ClaimLog("demo", "quick", tmp_path).check("B8", "x", [1.0, 2.0], ">", 0.9)
    with pytest.raises(InvalidDataError, match="no floor"):
        ClaimLog("demo", "quick", tmp_path).check("B8", "x", sample, ">", 0.9, floor=1e-12)


def test_a_measurement_is_statistical_and_open_until_established(tmp_path, capsys):
    log = ClaimLog("demo", "quick", tmp_path, seed=0)
    weak = sample_of("estimate", [-0.04], [0.02])  # z = 2 < 2.33: not established here
    assert not log.check("A4", "drift", weak, "<", 0.0, kind="measurement")
    out = capsys.readouterr().out
    assert "[OPEN] A4 (measurement) drift" in out and "[FAIL]" not in out
    assert "required < 0 (to be established by a one-sided 1% estimate test)" in out
    strong = sample_of("estimate", [-0.04], [0.01])
    assert log.check("A4", "drift", strong, "<", 0.0, kind="measurement")
    assert not log.record.failed
    log.conclude()  # a measurement never fails a run
    with pytest.raises(InvalidDataError, match="check a Sample"):
        ClaimLog("demo", "quick", tmp_path).check("A4", "drift", -0.04, "<", 0.0, kind="measurement")
    with pytest.raises(InvalidDataError, match="takes a relation in"):
        ClaimLog("demo", "quick", tmp_path).check("A4", "x", weak, "~", 0.0, kind="measurement")


def test_a_rate_counts_events_over_trials_with_wilsons_interval():
    s = sample_of("rate", [1, 1] + [0] * 498)
    assert s.estimate()[0] == pytest.approx(0.004)
    # the interval at the test's level on each side is the two-sided Wilson interval at 1 - 2 level
    assert s.rate_interval() == pytest.approx(wilson_interval(2, 500, confidence=0.98), rel=1e-12)
    assert describe_sample(s, 0.0) == "2 of 500 trials (0.4%; 98% interval 0.089% to 1.8%)"
    # a claim "the rate is at most r" fails only when the interval lies above r
    assert s.decide("<=", 0.03, 0.0, "claim") and not s.decide("<=", 0.0005, 0.0, "claim")
    # a finding "the rate exceeds r" holds only when the interval lies above r
    assert s.decide(">", 0.0005, 0.0, "finding") and not s.decide(">", 0.002, 0.0, "finding")
    # "never": any event is a counterexample
    assert not s.decide("==", 0.0, 0.0, "claim")
    assert sample_of("rate", [0] * 50).decide("==", 0.0, 0.0, "claim")
    assert sample_of("rate", [0] * 50).rate_interval()[0] == 0.0


def _trend_trials(counts, trials, covariates):
    """0/1 events with ``counts[g]`` of ``trials`` events at ``covariates[g]``, and the covariates."""
    events = [float(i < k) for k in counts for i in range(trials)]
    return events, [x for x in covariates for _ in range(trials)]


def test_a_trend_sample_pools_the_seeds_trials_in_one_exact_test():
    """M5: a rare event whose rate rises with n, 30 trials per n at each of five seeds."""
    covariates = np.log([4.0, 16.0, 32.0])
    per_seed = [(0, 2, 4), (0, 2, 3), (1, 1, 4), (0, 3, 4), (0, 2, 3)]
    seeds = [
        sample_of(
            "trend", *_trend_trials(c, 30, covariates)[:1], covariates=_trend_trials(c, 30, covariates)[1]
        )
        for c in per_seed
    ]
    pooled = Sample.pooled(seeds)
    assert pooled.size == 450 and count_words(pooled) == "450 trials"
    # the pooled statistic is the exact test on the pooled counts
    totals = np.sum(per_seed, axis=0)
    p = pooled.statistic(0.01)[0]
    assert p == trend_pvalue(totals, [150] * 3, covariates) and p < 0.01
    # no seed alone establishes the rise, and Fisher's combination of their p-values does not
    # either: the discrete p-values are larger than uniform, and combining them loses power
    alone = [s.statistic(0.01)[0] for s in seeds]
    assert min(alone) > 0.01
    assert scipy.stats.combine_pvalues(alone).pvalue > 10 * p
    # a measurement that the rate rises holds when the pooled p falls below the significance
    assert pooled.decide("<", 0.01, 0.0, "measurement") and not seeds[0].decide("<", 0.01, 0.0, "measurement")
    assert describe_sample(pooled, 0.01) == f"exact trend test's one-sided p = {p:.3g} (450 trials)"
    assert how_tested(pooled, "measurement", "<") == "the seeds' trials pooled in one exact trend test"
    assert certainty_words(pooled, "<", 0.01) == ""
    with pytest.raises(InvalidDataError, match="no estimate to quote"):
        quote_sample(pooled)
    with pytest.raises(InvalidDataError, match="not with a 'trend' test"):
        pooled.consistent_with(0.1)
    # a fall is no rise, and pools only with trend samples
    falling = sample_of(
        "trend",
        *_trend_trials((6, 3, 0), 30, covariates)[:1],
        covariates=_trend_trials((6, 3, 0), 30, covariates)[1],
    )
    assert falling.statistic(0.01)[0] > 0.99 and not falling.decide("<", 0.01, 0.0, "finding")
    with pytest.raises(InvalidDataError, match="cannot pool"):
        Sample.pooled([falling, sample_of("rate", falling.values)])
    with pytest.raises(InvalidDataError, match="no trend p-value"):
        _ = sample_of("rate", falling.values).trend_pvalue


def test_a_trend_check_is_recorded_with_its_covariates(tmp_path, capsys):
    events, covariates = _trend_trials((0, 2, 6), 20, [1.0, 2.0, 3.0])
    log = ClaimLog("demo", "quick", tmp_path, seed=0)
    sample = sample_of("trend", events, covariates=covariates)
    assert log.check("M5", "exact trend test (p-value)", sample, "<", 0.01, kind="measurement")
    assert "[FOUND] M5 (measurement) exact trend test (p-value)" in capsys.readouterr().out
    (check,) = load_chapter_run(log.path).checks
    assert check.sample == sample and check.sample.covariates == tuple(covariates)


def test_a_true_null_trend_is_found_at_most_at_its_level():
    """One rate at every covariate: the pooled trend measurement is recorded at most ``level`` of the time."""
    rng = np.random.default_rng(11)
    covariates = np.repeat([1.0, 2.0, 3.0], 30)
    found = [
        sample_of("trend", (rng.random(90) < 0.1).astype(float), covariates=covariates).decide(
            "<", 0.05, 0.0, "measurement"
        )
        for _ in range(600)
    ]
    assert np.mean(found) <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 600)


def test_the_mean_quantile_of_a_target_at_an_atom_is_its_mid_rank():
    """Distances that are often exactly 0: the paper's 0 is not extreme when most means are 0."""
    s = sample_of("mean_quantile", [0.0] * 99 + [1.0], trials=10)
    share_zero = (1 - 0.01) ** 10  # a mean of 10 trials is 0 when none drew the 1
    assert s.quantile_of(0.0) == pytest.approx(share_zero / 2, abs=0.01)
    assert s.decide("~", 0.0, 0.0, "claim")
    assert sample_of("mean_quantile", [0.0, 0.0], trials=3).quantile_of(0.0) == 0.5


def test_a_claim_of_a_strict_difference_must_be_established():
    """Merely not contradicted, "A exceeds B" would pass when they are equal."""
    noisy = sample_of("mean", [-0.5, 0.6, -0.4, 0.5])  # mean 0.05, se 0.29
    assert noisy.decide(">", 0.0, 0.0, "claim")  # not contradicted...
    strict = sample_of("mean", [-0.5, 0.6, -0.4, 0.5], establish=True)
    assert not strict.decide(">", 0.0, 0.0, "claim")  # ...but not established
    assert how_tested(strict, "claim", ">").startswith("to be established")
    clear = sample_of("mean", [1.0, 1.1, 0.9, 1.0], establish=True)
    assert clear.decide(">", 0.0, 0.0, "claim")
    with pytest.raises(InvalidDataError, match="cannot pool"):
        Sample.pooled([noisy, strict])


def test_a_stored_value_is_consistent_within_the_noise_of_its_own_mean_and_its_reading(tmp_path):
    s = sample_of("mean", [0.98, 0.99, 1.0, 0.99] * 25)  # mean 0.99, sd 0.008, se 0.0008
    assert Artifact("a figure", 0.99).consistent_with(s)
    assert not Artifact("a figure", 0.985).consistent_with(s)  # an exact value, 6 se away
    # a mean of 10 trials: sd/sqrt(10) = 0.0026
    assert Artifact("a figure", 0.985, trials=10).consistent_with(s)
    assert Artifact("a figure", 0.985, precision=0.004).consistent_with(s)
    heavy = sample_of("mean_quantile", [0.0] * 90 + [5.0] * 10, trials=100)
    assert Artifact("a figure", 0.5).consistent_with(heavy)
    assert not Artifact("a figure", 2.0).consistent_with(heavy)
    log, stored = ClaimLog("demo", "quick", tmp_path), Artifact("a figure", 0.5)
    with pytest.raises(InvalidDataError, match="compared with a mean, not with a rate"):
        log.check("B8", "x", sample_of("rate", [0, 1]), "<", 0.5, artifact=stored)
    # a record read back from disk passes the same door (an artifact beside a rate, edited by hand)
    log.check("B8", "x", sample_of("mean", [0.4, 0.5]), "<", 0.6, artifact=stored)
    entry = json.loads(log.path.read_text())["checks"][0]
    entry["sample"] = dataclasses.asdict(sample_of("rate", [0, 1]))
    with pytest.raises(InvalidDataError, match="compared with a mean, not with a rate"):
        Check.from_json(entry)
    with pytest.raises(InvalidDataError, match="finite value"):
        Artifact("a figure", float("nan"))
    with pytest.raises(InvalidDataError, match="trials must be a whole number >= 0"):
        Artifact("a figure", 0.5, trials=-1)


def test_p_values_of_a_test_run_at_each_seed_pool_by_fishers_method():
    one = sample_of("pvalue", [0.2])
    assert one.statistic(0.01)[0] == pytest.approx(0.2) and describe_sample(one, 0.01) == "p = 0.2 (1 test)"
    pooled = Sample.pooled([sample_of("pvalue", [p]) for p in (0.2, 0.05, 0.5)])
    # scipy's combine_pvalues is the reference
    assert pooled.statistic(0.01)[0] == pytest.approx(
        scipy.stats.combine_pvalues([0.2, 0.05, 0.5]).pvalue, rel=1e-12
    )
    assert describe_sample(pooled, 0.01).startswith("Fisher's combined p = ")
    # a claim "the model fits" (p above the level) fails when the combined p falls below it
    assert pooled.decide(">", 0.01, 0.0, "claim")
    small = Sample.pooled([sample_of("pvalue", [p]) for p in (0.02, 0.03, 0.05)])
    assert not small.decide(">", 0.01, 0.0, "claim")
    # a rejection (p below the significance) is established on the combined p
    assert small.decide("<", 0.01, 0.0, "finding") and not pooled.decide("<", 0.01, 0.0, "finding")
    with pytest.raises(InvalidDataError, match="p-values in"):
        sample_of("pvalue", [0.0])


def test_a_p_value_at_its_monte_carlo_floor_makes_fishers_combination_a_bound():
    """A4: each seed's G-test p is 1/(n_mc + 1); the combined p is at most what it computes."""
    floor = 1 / 10_000
    at_floor = Sample.pooled([sample_of("pvalue", [floor], floors=[floor]) for _ in range(5)])
    p = at_floor.statistic(1e-3)[0]
    assert p == pytest.approx(scipy.stats.combine_pvalues([floor] * 5).pvalue, rel=1e-12)  # 2.05e-15
    assert at_floor.at_floor == 5
    assert (
        describe_sample(at_floor, 1e-3)
        == "Fisher's combined p ≤ 2.05e-15 (5 tests, 5 at their Monte Carlo floor)"
    )
    # rounded up, so the printed bound is a bound: 2.0500...e-15 at 2 digits is "≤ 2.1e-15"
    assert describe_sample(at_floor, 1e-3, 2).startswith("Fisher's combined p ≤ 2.1e-15")
    assert float(describe_sample(at_floor, 1e-3, 1).split("≤ ")[1].split()[0]) >= p
    # Fisher's combination increases with each p: a smaller true p gives a smaller combination
    smaller = Sample.pooled([sample_of("pvalue", [floor / 10]) for _ in range(5)]).statistic(1e-3)[0]
    assert smaller < p
    # the decision is made on the Monte Carlo p-values, which are valid as they are
    assert at_floor.decide("<", 1e-3, 0.0, "finding")
    # a p above its floor is a point value; without floors nothing is a bound
    one = sample_of("pvalue", [0.2], floors=[floor])
    assert describe_sample(one, 0.01) == "p = 0.2 (1 test)" and one.at_floor == 0
    assert (
        describe_sample(sample_of("pvalue", [floor], floors=[floor]), 0.01)
        == "p ≤ 0.0001 (1 test, at its Monte Carlo floor)"
    )
    assert "≤" not in describe_sample(sample_of("pvalue", [floor]), 0.01)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"test": "pvalue", "values": (0.5,), "floors": (0.1, 0.1)}, "one number in"),
        ({"test": "pvalue", "values": (0.5,), "floors": (0.0,)}, "one number in"),
        ({"test": "pvalue", "values": (1e-5,), "floors": (1e-4,)}, "lies below its floor"),
        ({"test": "mean", "values": (0.5, 0.6), "floors": (0.1, 0.1)}, "takes no floors"),
    ],
)
def test_bad_floors_are_refused(kwargs, match):
    with pytest.raises(InvalidDataError, match=match):
        Sample(**kwargs)


def test_floors_pool_only_with_floors():
    with pytest.raises(InvalidDataError, match="cannot pool"):
        Sample.pooled([sample_of("pvalue", [0.5], floors=[1e-4]), sample_of("pvalue", [0.5])])


def test_p_values_capped_at_one_are_flagged_as_vacuous():
    """Bonferroni's min(1, k p) at every seed: Fisher's combination is 1 whatever the data."""
    capped = Sample.pooled([sample_of("pvalue", [1.0]) for _ in range(5)])
    assert capped.vacuous and capped.statistic(0.01)[0] == 1.0
    assert (
        describe_sample(capped, 0.01)
        == "Fisher's combined p = 1 (5 tests, every p is 1: it can reject nothing)"
    )
    assert not sample_of("pvalue", [1.0, 0.3]).vacuous and not sample_of("mean", [1.0, 1.0]).vacuous


def test_one_instance_is_not_decided_and_says_so():
    one = sample_of("instances", [0.9])
    assert not one.decidable and count_words(one) == "1 instance"
    assert not one.decide(">", 0.5, 0.0, "claim") and not one.decide("<", 0.5, 0.0, "finding")
    assert (
        describe_sample(one, 0.5) == "0.900 (1 instance: not decided alone, only over the seeds' instances)"
    )
    assert not one.consistent_with(0.9)
    with pytest.raises(InvalidDataError, match="at least 2 instances"):
        one.instance_intervals()
    two = Sample.pooled([one, sample_of("instances", [0.8])])
    assert two.decidable and two.quantile() == pytest.approx(scipy.stats.t.ppf(0.99, 1))


def test_the_instances_interval_covers_the_mean_at_its_stated_rate():
    """Normal instances: the 98% t interval covers the true mean about 98% of the time, and a
    new instance falls in the prediction interval about 98% of the time."""
    rng = np.random.default_rng(56)
    runs, n, mean, sd = 4000, 5, 0.9, 0.05
    covered = predicted = 0
    fails = 0
    for _ in range(runs):
        s = sample_of("instances", rng.normal(mean, sd, n))
        (low, high), (new_low, new_high) = s.instance_intervals()
        covered += low <= mean <= high
        predicted += new_low <= rng.normal(mean, sd) <= new_high
        # a true bound on its boundary: the test calls it contradicted at its level
        fails += certainty_words(s, ">", mean).startswith("contradicted")
    level = 1 - 2 * DEFAULT_LEVEL
    bound = 5 * math.sqrt(level * (1 - level) / runs)
    assert abs(covered / runs - level) < bound and abs(predicted / runs - level) < bound
    assert fails / runs < DEFAULT_LEVEL + 5 * math.sqrt(DEFAULT_LEVEL / runs)
    # a normal quantile in place of t (the "mean" test on 5 values) would contradict far more often
    z_fails = sum(
        certainty_words(sample_of("mean", rng.normal(mean, sd, n)), ">", mean).startswith("contradicted")
        for _ in range(runs)
    )
    assert z_fails / runs > 2 * DEFAULT_LEVEL


def test_instances_that_differ_widen_the_interval_beyond_the_error_within_one():
    """A15: seeds 0-4 give 0.86-0.96, seed 7 gives 0.78; each ratio's own error is 0.013."""
    within = Sample.pooled([sample_of("estimate", [v], [0.013]) for v in (0.86, 0.90, 0.96, 0.92, 0.78)])
    between = Sample.pooled([sample_of("instances", [v]) for v in (0.86, 0.90, 0.96, 0.92, 0.78)])
    (low, high), (new_low, new_high) = between.instance_intervals()
    half_within = within.quantile() * within.estimate()[1]
    assert high - low > 4 * 2 * half_within  # the instances' spread, not the error within one
    assert new_low < 0.78 < 0.96 < new_high  # a new seed's value may lie anywhere among them
    text = describe_sample(between, 0.8)
    assert text == (
        "0.884 (98% interval 0.769 to 0.999; 5 instances from 0.78 to 0.96; a new instance 0.603 to 1.16)"
    )
    # agreement with 0.78 (seed 7's own value) is contradicted by the error within an instance,
    # not by the spread between instances
    assert not within.decide("~", 0.78, 0.0, "claim") and between.decide("~", 0.78, 0.0, "claim")


def test_an_instances_check_at_one_seed_prints_open_and_why_never_fail(tmp_path, capsys):
    log = ClaimLog("demo", "quick", tmp_path, seed=7)
    assert not log.check(
        "A15", "ratio on this seed's instance", sample_of("instances", [0.78]), "~", 0.9, tol=0.05
    )
    out = capsys.readouterr().out
    assert out.startswith("[OPEN] A15 ratio on this seed's instance")
    assert "measured 0.780 (1 instance: not decided alone, only over the seeds' instances)" in out
    assert "1% instances test)" in out
    log.conclude()  # decided over the seeds, never here


def test_a_median_sample_is_quoted_with_its_quartiles_and_decided_by_the_exact_quantile_test():
    values = [0.0, 0.0, 0.1, 0.3, 0.5, 0.6, 2.0, 9.0, 40.0]  # heavy-tailed: the mean is 5.8
    s = sample_of("median", values)
    assert s.statistic(0.0) == (0.5, pytest.approx(float("nan"), nan_ok=True))
    assert quote_sample(s) == "median 0.5 (quartiles 0.1 to 2)"
    assert describe_sample(s, 0.0) == "median 0.5 (quartiles 0.1 to 2; 9 trials)"
    # a second method: the binomial test of how many values lie above the target
    from scipy.stats import binomtest

    for target in (-0.5, 0.05, 0.5, 3.0, 50.0):
        above = sum(v > target for v in values)
        below = sum(v < target for v in values)
        greater = binomtest(above, above + below, 0.5, alternative="greater").pvalue if above + below else 1.0
        assert s.decide(">", target, 0.0, "finding") == (greater < s.level)
    assert s.decide(">", 0.0, 0.0, "claim") and not s.decide(">", 1.0, 0.0, "claim")  # on the estimate
    pooled = Sample.pooled([s, sample_of("median", [0.2, 0.4])])
    assert pooled.size == 11 and pooled.test == "median"
    with pytest.raises(InvalidDataError, match="stored value"):  # a stored mean is not compared with a median
        from ntpnb.evidence._checks import Artifact, Check

        Check("B11", "x", 0.5, ">", 0.0, 0.0, "", True, "paper", sample=s, artifact=Artifact("fig", 0.4))


@pytest.mark.parametrize(
    "test", ["mean", "estimate", "mean_quantile", "rate", "pvalue", "instances", "median"]
)
@pytest.mark.parametrize("kind", ["claim", "sanity", "finding", "measurement"])
@pytest.mark.parametrize("relation", [">", "<", "~"])
def test_a_requirement_says_how_a_check_is_tested_never_how_it_came_out(test, kind, relation):
    values = {"estimate": ([0.5], [0.1]), "rate": ([0, 1, 0],), "pvalue": ([0.3, 0.4],)}.get(
        test, ([0.1, 0.5, 0.9],)
    )
    sample = Sample(test, *values, trials=10 if test == "mean_quantile" else 0)
    words = requirement_words(relation, 0.5, 0.0, sample, kind)
    for outcome in OUTCOMES:
        assert f" {outcome}" not in f" {words}".replace("to be established", "")


def test_a_rate_that_must_be_zero_is_tested_on_its_count():
    never = sample_of("rate", [0] * 900)
    assert requirement_words("==", 0.0, 0.0, never, "claim") == (
        "= 0 (on the count of trials: any one is a counterexample)"
    )
    assert never.decide("==", 0.0, 0.0, "claim") and not sample_of("rate", [0] * 899 + [1]).decide(
        "==", 0.0, 0.0, "claim"
    )
