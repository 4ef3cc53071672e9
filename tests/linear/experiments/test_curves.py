"""Paper A's experiments: the curves of training runs and their summaries
(ntpnb.linear.experiments._curves), each against a second computation.
"""

from __future__ import annotations

import numpy as np
import pytest

import ntpnb as ntp
from ntpnb import _optim as optim
from ntpnb.errors import InvalidDataError
from ntpnb.linear.experiments._curves import SUMMARY_NAMES


def test_fit_line_recovers_a_line_and_agrees_with_lstsq():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(30)
    assert ntp.fit_line(x, 3.0 * x - 2.0) == pytest.approx((3.0, -2.0))
    y = rng.standard_normal(30)
    (slope, intercept), *_ = np.linalg.lstsq(np.c_[x, np.ones_like(x)], y, rcond=None)
    assert ntp.fit_line(x, y) == pytest.approx((slope, intercept), rel=1e-12)
    with pytest.raises(InvalidDataError, match="one length"):
        ntp.fit_line([1.0], [2.0])
    with pytest.raises(InvalidDataError, match="non-finite"):
        ntp.fit_line([1.0, 2.0], [np.inf, 1.0])


def test_decay_rate_of_an_exponential():
    gammas = np.linspace(0.0, 20.0, 41)
    assert ntp.decay_rate(gammas, 3.0 * np.exp(-1.7 * gammas)) == pytest.approx(-1.7, rel=1e-9)


def test_offset_from_is_the_part_orthogonal_to_a_direction():
    rng = np.random.default_rng(6)
    W, D = rng.standard_normal((5, 4, 3)), rng.standard_normal((4, 3))
    u = D.ravel() / np.linalg.norm(D)
    explicit = [np.linalg.norm(w.ravel() - (w.ravel() @ u) * u) for w in W]
    np.testing.assert_allclose(ntp.offset_from(W, D), explicit, rtol=1e-12)
    assert ntp.offset_from(2.5 * D, D) < 1e-12


def test_own_stream_is_not_the_data_stream_and_is_reproducible(toy):
    a = ntp.lecun_decoder(toy, ntp.own_stream(0, 1))
    b = ntp.lecun_decoder(toy, ntp.own_stream(0, 1))
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, ntp.lecun_decoder(toy, np.random.default_rng(0)))
    assert not np.allclose(a, ntp.lecun_decoder(toy, ntp.own_stream(0, 2)))
    # further replicates of a stream: reproducible, and independent of the stream itself
    np.testing.assert_array_equal(ntp.own_stream(0, 2, 1).random(3), ntp.own_stream(0, 2, 1).random(3))
    assert not np.allclose(ntp.own_stream(0, 2).random(3), ntp.own_stream(0, 2, 1).random(3))


def _hand_trace(norm, corr):
    k = np.array([0, 1, 10, 100, 1000])
    values = {name: np.linspace(1.0, 2.0, k.size) for name in SUMMARY_NAMES}
    values["norm"], values["corr"] = np.asarray(norm, float), np.asarray(corr, float)
    return optim.Trace(iterations=k, values=values)


def test_trace_summary_first_reaching_and_local_exponent():
    norm = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    trace = _hand_trace(norm, 1 - 0.3 * norm**-2.0)  # 1 - corr ~ ||W||^-2
    assert ntp.trace_summary(trace)["norm"] == 16.0
    assert ntp.trace_summary(trace, 10)["norm"] == 4.0
    with pytest.raises(InvalidDataError, match="not recorded"):
        ntp.trace_summary(trace, 5)
    assert ntp.first_reaching(trace, "norm", 3.0) == 10
    assert ntp.first_reaching(trace, "norm", 1.5, below=True) == 0
    assert ntp.first_reaching(trace, "norm", 100.0) == np.inf
    assert ntp.local_exponent(trace, 1, 1000) == pytest.approx(2.0, rel=1e-10)


@pytest.mark.parametrize("opt", [optim.gd(0.5), optim.adam(0.01)], ids=lambda o: o.name)
def test_a_long_run_seen_at_a_short_grid_is_the_short_run(toy, toy_limits, opt):
    """One run recorded on the union of two grids stands for the shorter run, float for float."""
    W0 = ntp.lecun_decoder(toy, np.random.default_rng(0))
    short_grid, long_grid = optim.log_grid(300, 12), optim.log_grid(2000, 12)
    union = np.union1d(short_grid, long_grid)
    long = ntp.train(toy, opt, 2000, W0=W0, record_at=union, lim=toy_limits, keep_iterates=True)
    short = ntp.train(toy, opt, 300, W0=W0, record_at=short_grid, lim=toy_limits, keep_iterates=True)
    seen = ntp.trace_at(long, short_grid)
    np.testing.assert_array_equal(seen.iterations, short.iterations)
    assert set(seen.values) == set(short.values)
    for name in short.values:
        np.testing.assert_array_equal(getattr(seen, name), getattr(short, name))
    np.testing.assert_array_equal(seen.W, short.W)
    with pytest.raises(InvalidDataError, match="recorded"):
        ntp.trace_at(long, [0, 3, 2001])
    with pytest.raises(InvalidDataError, match="iterates"):
        ntp.trace_at(ntp.train(toy, opt, 10, W0=W0, lim=toy_limits), [0, 10])


def test_gd_loss_curve_is_plain_gradient_descent(toy):
    curve = ntp.gd_loss_curve(toy, 50, [1, 10, 50])
    W = np.zeros((toy.V, toy.d))
    expected = []
    for k in range(1, 51):
        W = W - ntp.ce_grad(toy, W)
        if k in (1, 10, 50):
            expected.append(ntp.ce_loss(toy, W))
    # the compiled steps sum in another order than ce_grad: the same values to rounding
    np.testing.assert_allclose(curve, expected, rtol=1e-13, atol=0)
    assert np.all(np.diff(curve) < 0)


def test_rounding_spread_is_zero_for_gd_and_measures_the_one_ulp_run(toy):
    lim = ntp.limits(toy)
    W0 = ntp.lecun_decoder(toy, ntp.own_stream(0, 1))
    grid = np.union1d(optim.log_grid(2000, 20), [1000])
    for opt in (optim.gd(0.5), optim.adam(0.05, (0.9, 0.99))):
        ref = ntp.train(toy, opt, 2000, W0=W0, record_at=grid, lim=lim)
        spread = ntp.rounding_spread(toy, opt, W0, ref, 1000, lim)
        k = spread["k"]
        assert k[-1] == 1000 and np.array_equal(k, grid[grid <= 1000])
        moved = ntp.train(toy, opt, 1000, W0=np.nextafter(W0, np.inf), record_at=k, lim=lim)
        for name in SUMMARY_NAMES:
            expected = np.abs(getattr(moved, name) - getattr(ref, name)[: k.size]) / np.abs(
                getattr(ref, name)[: k.size]
            )
            np.testing.assert_array_equal(spread[name], expected)
        if opt.name == "gd":  # a contraction: rounding stays rounding
            assert max(spread[name].max() for name in SUMMARY_NAMES) < 1e-12
    with pytest.raises(InvalidDataError, match="not recorded at horizon = 999"):
        ntp.rounding_spread(toy, optim.gd(0.5), W0, ref, 999, lim)


def test_the_spread_at_k_is_its_record_and_beyond_the_horizon_the_last_decades_largest():
    k = np.array([1, 2, 5, 10, 20, 50, 100])
    spread = {"k": k, "kl": np.array([1.0, 2, 3, 9, 4, 5, 6]), "corr": np.arange(7.0) / 8}
    assert ntp.spread_at(spread, 5) == {"kl": 3.0, "corr": 0.25}
    # beyond the horizon 100: from the first record at or after 10, the largest
    assert ntp.spread_at(spread, 1000) == {"kl": 9.0, "corr": 0.75}
    with pytest.raises(InvalidDataError, match="iteration 7 was not recorded"):
        ntp.spread_at(spread, 7)


@pytest.mark.parametrize("steps", [[0, 5], [], [[1, 2]]])
def test_gd_loss_curve_names_steps_it_cannot_record(toy, steps):
    with pytest.raises(InvalidDataError, match="record_at"):
        ntp.gd_loss_curve(toy, 50, steps)


def test_toward_is_plus_one_at_the_target_minus_one_at_the_other_and_refuses_parallel_pairs():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 4))
    assert ntp.toward(a, a, b) == pytest.approx(1.0) and ntp.toward(3 * b, a, b) == pytest.approx(-1.0)
    assert abs(ntp.toward(a / np.linalg.norm(a) + b / np.linalg.norm(b), a, b)) < 1e-12  # halfway
    with pytest.raises(InvalidDataError, match="parallel"):
        ntp.toward(a, b, 2 * b)
    with pytest.raises(InvalidDataError, match="share a shape"):
        ntp.toward(a, b, b[:2])
    with pytest.raises(InvalidDataError, match="non-zero"):
        ntp.toward(0 * a, a, b)


def test_toward_stays_in_its_range_and_is_the_angles_chordal_distances():
    """Past the target, away from the other (a ratio of correlations exceeds 1 there), it stays in [-1, 1]."""
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 3, 4))
    u, v = a / np.linalg.norm(a), b / np.linalg.norm(b)
    beyond = 2 * u - v  # past a, on the far side from b
    assert (np.sum(beyond * u) / np.linalg.norm(beyond) - np.sum(beyond * v) / np.linalg.norm(beyond)) / (
        1 - np.sum(u * v)
    ) > 1
    for W in [beyond, -beyond, *rng.standard_normal((200, 3, 4))]:
        value = ntp.toward(W, a, b)
        # a second way: the chordal distance of an angle theta is 2 sin(theta / 2)
        chord = [2 * np.sin(np.arccos(np.clip(np.sum(W * x) / np.linalg.norm(W), -1, 1)) / 2) for x in (u, v)]
        assert -1 <= value <= 1
        assert value == pytest.approx((chord[1] - chord[0]) / (chord[1] + chord[0]), abs=1e-9)
        assert np.sign(value) == np.sign(np.sum(W * u) - np.sum(W * v))
    assert 0 < ntp.toward(beyond, a, b) < 1


def test_summary_table_names_each_quantity_in_math_a_column_per_run():
    gd = dict(zip(SUMMARY_NAMES, (0.0012731, 17.5, 0.97689, 0.99671, 0.041812), strict=True))
    adam = {name: 2 * value for name, value in gd.items()}
    table = ntp.summary_table({"GD": gd, "Adam": adam}).splitlines()
    assert table[0] == "| quantity | GD | Adam |"
    assert len(table) == 2 + len(SUMMARY_NAMES)  # the header, its rule, a row per quantity
    assert table[2] == r"| $\operatorname{CE}(W_k) - \mathcal{H}$ | 0.001273 | 0.002546 |"
    assert table[4].endswith("| 0.9769 | 1.954 |")  # four significant digits
    with pytest.raises(InvalidDataError, match="lacks \\['dist_F'\\]"):
        ntp.summary_table({"GD": {k: v for k, v in gd.items() if k != "dist_F"}})
    with pytest.raises(InvalidDataError, match="no run"):
        ntp.summary_table({})
