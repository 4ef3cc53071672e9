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
from ntpnb.linear.thresholds import (
    best_achievable_loss,
    compatibility_threshold,
    condition_trial,
    cover_probability,
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
    assert best.n_vanishing == ntp.linear.constraints.ntp_constraints(overparam_data).ineq.shape[0]


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
