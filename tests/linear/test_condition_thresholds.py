"""Random instances, Cover's count, the compatibility count, and the best achievable loss."""

from __future__ import annotations

import itertools
import math
import time
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import binom

import ntpnb as ntp
from ntpnb import settings
from ntpnb.errors import InvalidDataError
from ntpnb.linear import _condition_thresholds as condition_thresholds
from ntpnb.linear._condition_thresholds import (
    best_achievable_loss,
    compatibility_rank_bound,
    compatibility_threshold,
    condition_trial,
    cover_probability,
    first_true,
    nested_instance,
    nested_trial,
    random_instance,
    recession_pairs,
    separability_count_heuristic,
)


def test_random_instance_shapes_and_supports():
    data = random_instance(7, 4, 6, 3, np.random.default_rng(0))
    assert (data.m, data.d, data.V) == (7, 4, 6)
    assert np.all(data.support_sizes == 3)
    np.testing.assert_allclose(data.pi, 1 / 7)
    with pytest.raises(InvalidDataError):
        random_instance(3, 2, 4, 5, np.random.default_rng(0))
    with pytest.raises(InvalidDataError):
        random_instance(0, 2, 4, 1, np.random.default_rng(0))
    with pytest.raises(InvalidDataError, match="d must be a positive integer"):
        random_instance(3, 0, 4, 1, np.random.default_rng(0))


def test_cover_probability_known_values():
    # m <= d: every dichotomy is separable; m = 2d: exactly one half (no bias)
    assert cover_probability(3, 3) == 1.0
    for d in (1, 2, 5, 10):
        assert cover_probability(2 * d, d) == pytest.approx(0.5, abs=1e-15)
    # m points on a line through the origin (d = 1): only the 2 sign patterns +- of one side
    assert cover_probability(4, 1) == 2 / 16
    # with a bias the dimension counts as d + 1
    assert cover_probability(6, 2, bias=True) == cover_probability(6, 3)


@pytest.mark.parametrize(("m", "d"), [(5, 2), (6, 3), (7, 2)])
def test_cover_probability_against_brute_force_enumeration(m, d):
    """Count the separable dichotomies of random points with an LP per labeling."""
    rng = np.random.default_rng(m * 10 + d)
    X = rng.standard_normal((m, d))
    separable = 0
    for signs in itertools.product([0, 1], repeat=m):
        P = np.zeros((m, 2))
        P[np.arange(m), signs] = 1.0
        separable += ntp.is_separable(ntp.NTPData(H=X, pi=np.full(m, 1 / m), P=P))
    assert separable == round(cover_probability(m, d) * 2**m)


def test_compatibility_count_matches_the_rank_of_the_system():
    """Compatible iff rank = n_eq; the rank never exceeds the count, and almost always equals it."""
    rng = np.random.default_rng(0)
    equal = total = 0
    for m, V, S in [(12, 5, 3), (10, 4, 2), (16, 3, 2)]:
        for d in range(1, m + 2):
            out = condition_trial({"m": m, "d": d, "V": V, "S": S}, rng)
            assert out["compatible"] == (out["rank"] == out["n_eq"])
            assert out["rank"] <= out["rank_bound"] <= min(out["n_eq"], (V - 1) * d)
            equal += out["rank"] == out["rank_bound"]
            total += 1
    assert equal >= total - 1
    assert compatibility_threshold(40, 10, 6) == pytest.approx(5 / 9)
    assert compatibility_threshold(40, 10, 1) == 0.0


def test_separability_heuristic_is_coverage_for_binary():
    assert separability_count_heuristic(2, 1) == 0.5
    assert separability_count_heuristic(10, 6) == pytest.approx(14 / 18)
    with pytest.raises(InvalidDataError):
        separability_count_heuristic(4, 4)


def test_best_loss_is_the_entropy_when_both_conditions_hold(overparam_data):
    best = best_achievable_loss(overparam_data)
    assert best.value == pytest.approx(ntp.entropy(overparam_data), abs=1e-7)
    assert best.n_vanishing == ntp.linear._constraints.ntp_constraints(overparam_data).ineq.shape[0]


def test_best_loss_below_threshold_matches_a_long_gradient_run():
    data = random_instance(12, 3, 4, 2, np.random.default_rng(5))
    assert not ntp.is_compatible(data)
    best = best_achievable_loss(data)
    assert best.gap_to_entropy > 1e-3
    W = np.zeros((data.V, data.d))
    for _ in range(20000):
        W -= 2.0 * ntp.ce_grad(data, W)
    ce = ntp.ce_loss(data, W)
    assert best.value <= ce + 1e-9
    assert ce - best.value < 1e-3
    assert abs(best.value - best.dual_value) < 1e-6


@pytest.mark.parametrize(("m", "d", "seed"), [(12, 4, 5), (20, 6, 1), (30, 5, 2)])
def test_best_loss_dual_from_the_primal_agrees_with_the_conic_solver(m, d, seed, monkeypatch):
    """Below both thresholds no pair vanishes: the corrected primal probabilities certify it."""
    data = random_instance(m, 3, d, 2, np.random.default_rng(seed))
    direct = best_achievable_loss(data)
    # the same instance through the LP and the conic solver (the route of vanishing pairs)
    monkeypatch.setattr(condition_thresholds, "_best_loss_no_vanishing_pair", lambda data: None)
    conic = best_achievable_loss(data)
    assert direct.n_vanishing == conic.n_vanishing == 0  # the LP finds no pair either
    assert direct.value == pytest.approx(conic.value, abs=1e-9)
    assert direct.dual_value == pytest.approx(conic.dual_value, abs=1e-7)
    assert direct.dual_value <= direct.value + 1e-12 and direct.dual_residual < 1e-12


def test_best_loss_with_vanishing_pairs_takes_the_lp_and_the_conic_solver(overparam_data):
    best = best_achievable_loss(overparam_data)
    assert best.n_vanishing > 0  # found by the LP; the primal's certificate needs none


def test_recession_pairs_of_a_one_hot_instance():
    """Separable one-hot data: every pair vanishes; two identical points with different labels: none."""
    sep = ntp.NTPData(H=[[1.0], [-1.0]], pi=[0.5, 0.5], P=[[1.0, 0.0], [0.0, 1.0]])
    assert recession_pairs(sep).all()
    assert best_achievable_loss(sep).value == pytest.approx(0.0, abs=1e-7)
    clash = ntp.NTPData(H=[[1.0], [1.0]], pi=[0.5, 0.5], P=[[1.0, 0.0], [0.0, 1.0]])
    assert not recession_pairs(clash).any()
    assert best_achievable_loss(clash).value == pytest.approx(math.log(2), abs=1e-7)


def _cover_rational(m: int, d: int, bias: bool = False) -> float:
    """The previous implementation: Cover's count in rational arithmetic (slow, exact)."""
    k_max = d + 1 if bias else d
    count = 2 * sum(math.comb(m - 1, k) for k in range(min(k_max, m)))
    return float(Fraction(count, 2**m))


@pytest.mark.parametrize("m", [1, 2, 3, 7, 30, 101, 500, 1200])
def test_cover_probability_equals_the_rational_sum(m):
    """Both are exact sums rounded once to float64, so they agree to the last bit (0 ulp)."""
    ds = sorted({1, 2, 3, m // 3 + 1, m // 2, m // 2 + 1, m - 1, m, m + 5} - {0})
    for d in ds:
        for bias in (False, True):
            assert ntp.cover_probability(m, d, bias) == _cover_rational(m, d, bias), (m, d, bias)


def test_cover_probability_is_fast_at_large_m_and_refuses_beyond_its_limit():
    """(20000, 10000) took 29 s; it is 1/2 exactly (sum_{k < 10000} C(19999, k) = 2^19998)."""
    start = time.perf_counter()
    assert ntp.cover_probability(20000, 10000) == 0.5
    upper, lower = ntp.cover_probability(20000, 10100), ntp.cover_probability(20000, 9900)
    assert time.perf_counter() - start < 10.0  # generous upper bound (about 0.1 s here)
    assert abs(upper + lower - 1.0) <= 2**-52  # P(X < 10100) = 1 - P(X < 9900), X ~ Bin(19999, 1/2)
    np.testing.assert_allclose(upper, binom.cdf(10099, 19999, 0.5), rtol=1e-10)  # scipy: ~1e-12 here
    with pytest.raises(
        InvalidDataError, match=r"m = 100001 points exceed ntpnb.settings.COVER_MAX_M = 100000"
    ):
        ntp.cover_probability(settings.COVER_MAX_M + 1, 10)
    with pytest.raises(InvalidDataError, match="bias must be True or False"):
        ntp.cover_probability(10, 2, bias=np.array([True, False]))


# ------------------------------------------------------------------------ nested draws in d
def test_nested_instance_at_its_largest_d_is_the_random_instance():
    """The same calls to the generator: the draw at d_max is random_instance's, bit for bit."""
    nested = nested_instance(9, 7, 6, 3, np.random.default_rng(4))
    flat = random_instance(9, 7, 6, 3, np.random.default_rng(4))
    np.testing.assert_array_equal(nested.at(7).H, flat.H)
    np.testing.assert_array_equal(nested.at(7).P, flat.P)
    assert nested.Z.shape == (9, 7)


def test_nested_instance_embeddings_are_rescaled_prefixes_with_one_support():
    nested = nested_instance(8, 6, 5, 2, np.random.default_rng(0))
    for d in range(1, 7):
        data = nested.at(d)
        np.testing.assert_array_equal(data.H, nested.Z[:, :d] / np.sqrt(d))
        np.testing.assert_array_equal(data.support_mask, nested.at(6).support_mask)
        assert nested.at(d) is data  # one object per d: what is derived from it is cached
    # the column span grows with d: the first d columns of H at d + 1 span H at d
    small, large = nested.at(3).H, nested.at(4).H[:, :3]
    np.testing.assert_allclose(small, large * np.sqrt(4 / 3), rtol=1e-15)
    with pytest.raises(InvalidDataError, match="S <= V"):
        nested_instance(8, 6, 3, 4, np.random.default_rng(0))
    with pytest.raises(InvalidDataError, match=r"numpy\.random\.Generator"):
        nested_instance(8, 6, 3, 2, 0)


@pytest.mark.parametrize(("m", "V", "S"), [(10, 2, 1), (12, 4, 1), (10, 4, 2), (9, 5, 3)])
def test_conditions_and_rank_are_monotone_along_a_nested_draw(m, V, S):
    """Decided at every d of several draws: False then True, and dim F never decreases."""
    rng = np.random.default_rng(m * 100 + V * 10 + S)
    for _ in range(4):
        draw = nested_instance(m, m + 2, V, S, rng)
        ds = range(1, m + 3)
        comp = [ntp.is_compatible(draw.at(d)) for d in ds]
        sep = [ntp.is_separable(draw.at(d)) for d in ds]
        rank = [ntp.linear._subspace.f_decomposition(draw.at(d)).dim for d in ds]
        for flags in (comp, sep):
            assert flags == sorted(flags), flags  # monotone: False ... False True ... True
            assert flags[-1]  # d > m: Lemma 1
        assert rank == sorted(rank)


def _decided_everywhere(point, seed):
    """The thresholds of one nested draw from a decision (the LP's) at every grid d."""
    draw = nested_instance(point["m"], point["d"][-1], point["V"], point["S"], np.random.default_rng(seed))
    comp = [ntp.is_compatible(draw.at(d)) for d in point["d"]]
    sep = [ntp.is_separable(draw.at(d)) for d in point["d"]]
    first = [flags.index(True) if True in flags else len(flags) for flags in (comp, sep)]
    return first, comp, sep


@pytest.mark.parametrize(
    "point",
    [
        {"m": 10, "V": 2, "S": 1, "d": tuple(range(1, 13))},
        {"m": 12, "V": 5, "S": 2, "d": tuple(range(1, 15))},
        {"m": 12, "V": 6, "S": 3, "d": tuple(range(2, 15, 2))},
        {"m": 14, "V": 4, "S": 2, "d": tuple(range(1, 12))},  # no d > m: thresholds may lie beyond
    ],
)
def test_nested_trial_finds_the_thresholds_of_the_full_sweep(point):
    """Bisection (and a guess anywhere) gives the first d of the decisions at every d."""
    for seed in range(5):
        (comp_from, sep_from), comp, sep = _decided_everywhere(point, seed)
        for extra in ({}, {"guess": point["d"][0]}, {"guess": point["d"][-1]}):
            trial = nested_trial({**point, **extra}, np.random.default_rng(seed))
            assert (trial.compatible_from, trial.separable_from) == (comp_from, sep_from)
            assert all(comp[i] == held for i, held in trial.compatible.items())
            assert all(sep[i] == held for i, held in trial.separable.items())
            assert len(trial.separable) < len(point["d"])  # fewer decisions than the sweep
            assert trial.n_eq == point["m"] * (point["S"] - 1)
            for i, rank in trial.rank.items():
                assert (rank == trial.n_eq) == trial.compatible[i]
                assert rank <= trial.rank_bound[i]


def test_nested_trial_rank_bounds_are_those_of_each_instance():
    point = {"m": 10, "V": 5, "S": 2, "d": (2, 4, 6, 9, 12)}
    trial = nested_trial(point, np.random.default_rng(3))
    draw = nested_instance(10, 12, 5, 2, np.random.default_rng(3))
    bounds = [int(compatibility_rank_bound(draw.at(d).support_mask, np.array([d]))[0]) for d in point["d"]]
    assert trial.rank_bound == tuple(bounds)


def test_nested_trial_bad_input():
    rng = np.random.default_rng(0)
    with pytest.raises(InvalidDataError, match="keys m, V, S, d"):
        nested_trial({"m": 5, "V": 3, "S": 1}, rng)
    with pytest.raises(InvalidDataError, match="increasing"):
        nested_trial({"m": 5, "V": 3, "S": 1, "d": (3, 2)}, rng)
    with pytest.raises(InvalidDataError, match="increasing"):
        nested_trial({"m": 5, "V": 3, "S": 1, "d": ()}, rng)
    with pytest.raises(InvalidDataError, match="d must be a positive integer"):
        nested_trial({"m": 5, "V": 3, "S": 1, "d": (0, 2)}, rng)
    with pytest.raises(InvalidDataError, match="guess must be a finite number"):
        nested_trial({"m": 5, "V": 3, "S": 1, "d": (1, 2), "guess": float("nan")}, rng)


def _first_true_by_scan(flags):
    return flags.index(True) if True in flags else len(flags)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 30, 37])
def test_first_true_is_the_linear_scan_with_few_calls(n):
    for threshold in range(n + 1):
        flags = [i >= threshold for i in range(n)]
        options = [{}, {"start": n - 1}, {"start": 0}]
        options += [{"guess": g} for g in range(n)] + [{"start": n - 1, "guess": g} for g in range(n)]
        for kwargs in options:
            calls = []

            def decide(i, calls=calls, flags=flags):
                calls.append(i)
                return flags[i]

            assert first_true(decide, n, **kwargs) == _first_true_by_scan(flags), kwargs
            assert len(calls) == len(set(calls))  # never twice the same index
            assert len(calls) <= 2 * math.ceil(math.log2(n + 1)) + 2
        exact = []
        first_true(
            lambda i, exact=exact, flags=flags: exact.append(i) or flags[i], n, guess=min(threshold, n - 1)
        )
        assert len(exact) <= 2  # an exact guess: the threshold and the index below it
