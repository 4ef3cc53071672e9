"""The measures of chapter 8's maps (ntpnb.explore._beyond_maps): each point's checks, against the runs made
directly."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import ntpnb as ntp
from ntpnb import _optim as optim
from ntpnb._statistics import trend_power, trend_pvalue
from ntpnb.attention._paper_experiments import acyclic_end, local_end
from ntpnb.chapter._parameters import read_parameters_cell
from ntpnb.evidence._samples import Sample
from ntpnb.explore import (
    AttentionSamplesMeasure,
    AttentionStepMeasure,
    Axis,
    ConditionsMeasure,
    Grid,
    HorizonMeasure,
    StepSizeMeasure,
    _beyond_maps,
    check_maps,
    run_grid,
)
from ntpnb.explore._beyond_maps import GAP_CHECKS
from ntpnb.linear._condition_thresholds import nested_instance
from ntpnb.linear.experiments._beyond import ConditionPoint

TINY = dict(K=4, d=4, n=2, T=3)  # Paper B's acyclic trials, small
FIG5 = dict(K=8, d=8, n=4, T=6)  # Paper B's Fig. 5 sizes (general data with a cycle)


def test_the_step_size_measure_checks_the_step_run_it_keeps(small_synthetic):
    data, lim, W0 = small_synthetic
    measure = StepSizeMeasure(data, lim, W0, 300, 50, 10, corr_level=0.5, dist_ratio_max=0.5)
    lr = 1 / ntp.smoothness(data, W0).bound
    corr, dist = measure({"gd_lr": lr}, 7)
    direct = ntp.step_run(data, lim, W0, lr, 300, 50, 10)
    assert list(measure.runs) == [lr] and measure.runs[lr].values == direct.values
    assert (corr.claim, corr.value, corr.relation, corr.target) == ("M1", direct.corr, ">", 0.5)
    assert dist.value == direct.dist_F / direct.dist_F0 and dist.relation == "<"
    assert corr.passed == (direct.corr > 0.5) and dist.passed == (dist.value < 0.5)


def test_a_grid_of_the_step_size_measure_maps_its_two_checks_in_order(small_synthetic):
    data, lim, W0 = small_synthetic
    measure = StepSizeMeasure(data, lim, W0, 100, 20, 5, corr_level=0.5, dist_ratio_max=0.5)
    grid = Grid((Axis("gd_lr", (0.5, 2.0), log=True),))
    maps = check_maps(run_grid(grid, (0,), measure))
    assert [m.what for m in maps] == [
        "corr(W_K, W^mm) at the budget",
        "||P_F(W_K) - W*|| / ||P_F(W_0) - W*|| at the budget",
    ]
    assert list(measure.runs) == [0.5, 2.0]
    assert maps[0].values[(2.0,)] == (measure.runs[2.0].corr,)


def test_the_horizon_measure_is_horizons_by_budget_on_the_recipes_instance_at_the_seed():
    measure = HorizonMeasure(1.5, 4, 2, [50, 200], 0.999, 10, samples_per_context=20)
    (check,) = measure({"m": 4}, 5)
    data = ntp.synthetic_instance(n=80, m=4, d=6, V=4, S=2, seed=5)
    lr = 1 / (2 * ntp.smoothness(data, np.zeros((4, 6))).bound)
    start = ntp.lecun_decoder(data, ntp.own_stream(5, 1))
    direct = ntp.horizons_by_budget(data, ntp.limits(data), start, lr, [50, 200], 0.999, 10)
    assert measure.runs[4] == direct
    assert check.what == "log10 of the steps to corr 0.999"
    assert check.value == direct[-1].log10_k and check.target == pytest.approx(np.log10(200))


def test_the_conditions_measure_checks_the_condition_point_and_skips_an_ambiguous_one(monkeypatch):
    draw = nested_instance(12, 14, 4, 2, np.random.default_rng(5))
    measure = ConditionsMeasure(draw, 200, gd_fast_ratio=1e-3)
    gap, gd = measure({"d": 2}, 0)
    direct = ntp.condition_point(draw, 2, 200)
    assert measure.runs[2] == direct
    assert not (direct.compatible and direct.separable)  # d = 2 of 12 contexts: below the thresholds
    assert gap.what == GAP_CHECKS[False] == "inf CE - H where a condition fails"
    assert (gap.value, gap.relation, gap.target) == (direct.gap, ">", 1e-9) and gap.passed
    assert (gd.value, gd.relation, gd.target) == (direct.gd_ratio, "<", 1e-3)
    # where both conditions hold, Proposition 1 predicts no gap: the check asks for none, and holds
    gap, _ = measure({"d": 14}, 0)
    both = ntp.condition_point(draw, 14, 200)
    assert both.compatible and both.separable
    assert (gap.what, gap.relation, gap.target) == (GAP_CHECKS[True], "<=", 1e-9) and gap.passed
    ambiguous = ConditionPoint(3, None, None, float("nan"), float("nan"), 0, "ambiguous")
    monkeypatch.setattr(_beyond_maps, "condition_point", lambda *_: ambiguous)
    assert measure({"d": 3}, 0) == [] and measure.runs[3] is ambiguous


def test_the_attention_step_measure_runs_every_seed_once_and_checks_each_seeds_trials():
    measure = AttentionStepMeasure(TINY, 3, 40, (0, 1), required=0.5)
    corr, stalled = measure({"lr": 0.01}, 1)
    assert measure({"lr": 0.01}, 0) and list(measure.runs) == [0.01]  # one training for both seeds
    direct = acyclic_end(lr=0.01, **TINY, n_trials=3, n_iter=40, seeds=(0, 1)).at(1)
    assert corr.value == pytest.approx(np.mean(direct.corr), rel=1e-12)
    assert corr.sample.test == "mean" and corr.target == 0.5
    assert stalled.sample.test == "rate" and stalled.relation == "==" and stalled.target == 0.0
    assert stalled.value == np.mean(direct.stalled)
    assert measure.trials(0.01) is measure.runs[0.01]


def test_the_attention_samples_measure_checks_each_loss_on_its_own_trials():
    losses = {"authors' loss": "squared_softmax", "paper's loss": "squared"}
    protocol = dict(init="uniform", threshold=0.01, exclusion_band=0.001, step_eps=optim.AUTHORS_NGD_EPS)
    measure = AttentionSamplesMeasure(losses, FIG5, 2, 0.1, 20, (3,), protocol, required=0.9, empty_rate=0.1)
    checks = measure({"n": 4}, 3)
    assert [(c.protocol, c.sample.test) for c in checks] == [
        (p, t) for p in losses for t in ("mean", "rate", "mean")
    ]
    for protocol_key, loss in losses.items():
        direct = local_end(loss, **FIG5, n_trials=2, lr=0.1, n_iter=20, seeds=(3,), **protocol).at(3)
        corr, nonempty, dist = (c for c in checks if c.protocol == protocol_key)
        assert corr.value == pytest.approx(np.mean(direct.corr_local), rel=1e-12)
        assert nonempty.value == np.mean(direct.nonempty) and nonempty.target == 0.1
        assert dist.value == pytest.approx(np.mean(direct.dist_local), rel=1e-12) and dist.target == 0.1
    assert set(measure.runs) == {(4, loss) for loss in losses.values()}


def test_the_attention_samples_measure_tests_the_rise_of_the_non_empty_rate_on_the_seeds_trials():
    losses = {"authors' loss": "squared_softmax"}
    protocol = dict(init="uniform", threshold=0.01, exclusion_band=0.001, step_eps=optim.AUTHORS_NGD_EPS)
    measure = AttentionSamplesMeasure(
        losses, FIG5, 3, 0.1, 20, (3, 4), protocol, required=0.9, empty_rate=0.1
    )
    pooled = measure.rise((4, 8), "squared_softmax", (3, 4))
    assert pooled.test == "trend" and pooled.size == 12
    # the seeds' samples one by one pool to the same trials, so to the same exact test
    by_seed = Sample.pooled([measure.rise((4, 8), "squared_softmax", (s,)) for s in (3, 4)])
    trials = [sorted(zip(s.covariates, s.values, strict=True)) for s in (by_seed, pooled)]
    assert trials[0] == trials[1]
    assert by_seed.trend_pvalue == pooled.trend_pvalue
    events = [measure.trials(n, "squared_softmax").nonempty for n in (4, 8)]
    assert pooled.trend_pvalue == trend_pvalue([int(e.sum()) for e in events], [6, 6], np.log([4, 8]))


def test_chapter_8s_try_it_with_fewer_m5_trials_shows_what_its_box_expects():
    """The box's command `-p m5_trials=...` at the book's seeds: the rise is not established, at low power."""
    source = Path(__file__).resolve().parents[2] / "notebooks" / "08_beyond.md"
    box = re.search(r"ntpnb reproduce 08 -p m5_trials=([0-9]+)`", source.read_text())
    assert box, "chapter 8's Try it box no longer runs m5_trials"
    cell = {name: p.value for name, p in read_parameters_cell(source).items()}
    protocol = dict(
        init="uniform",
        threshold=cell["m5_threshold"],
        exclusion_band=cell["m5_exclusion_band"],
        step_eps=optim.AUTHORS_NGD_EPS,
    )
    seeds = [cell["seed"] + i for i in range(cell["b_map_seeds"])]
    losses = {"authors' loss": "squared_softmax"}
    measure = AttentionSamplesMeasure(
        losses, FIG5, int(box.group(1)), cell["m5_lr"], cell["m5_iter"], seeds, protocol, 0.99, 0.03
    )
    ns = cell["m5_ns"]
    level = cell["m5_trend_level"]
    assert measure.rise(ns, "squared_softmax", seeds).trend_pvalue >= level  # not established
    ends = [measure.trials(n, "squared_softmax").nonempty for n in ns]
    rates, sizes = [e.mean() for e in ends], [e.size for e in ends]
    assert trend_power(rates, sizes, np.log(ns), level, rng=cell["seed"], n_sim=cell["m5_power_draws"]) < 0.5
