"""The measurements of chapter 8's maps (ntpnb.linear.experiments._beyond), against a second way."""

from __future__ import annotations

import re
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pytest

import ntpnb as ntp
from ntpnb import _optim as optim
from ntpnb import settings
from ntpnb.chapter._parameters import read_parameters_cell
from ntpnb.errors import InvalidDataError
from ntpnb.linear._condition_thresholds import nested_instance
from ntpnb.linear.experiments._beyond import ce_hessian


def test_the_hessian_is_the_gradients_finite_difference(small_synthetic):
    data, _, W0 = small_synthetic
    hessian = ce_hessian(data, W0)
    assert np.allclose(hessian, hessian.T)
    rng = np.random.default_rng(0)
    for _ in range(3):
        U = rng.standard_normal(W0.shape)
        h = 1e-5
        difference = (ntp.ce_grad(data, W0 + h * U) - ntp.ce_grad(data, W0 - h * U)) / (2 * h)
        assert hessian @ U.ravel() == pytest.approx(difference.ravel(), abs=1e-8)
    with pytest.raises(InvalidDataError, match="shape"):
        ce_hessian(data, W0.T)


def test_smoothness_below_its_bound_and_the_limit_is_the_hessian_far_along_gds_path(small_synthetic):
    data, lim, W0 = small_synthetic
    smooth = ntp.smoothness(data, W0)
    assert 0 < smooth.start <= smooth.bound and 0 < smooth.limit <= smooth.bound
    # the bound is half the largest eigenvalue of sum_j pi_j h_j h_j^T, computed otherwise
    second = sum(p * np.outer(h, h) for p, h in zip(data.pi, data.H, strict=True))
    assert smooth.bound == pytest.approx(np.linalg.norm(second, 2) / 2, rel=1e-12)
    # along W* + R W^mm the softmax tends to p_j, and the Hessian's top eigenvalue to the limit
    far = np.linalg.eigvalsh(ce_hessian(data, lim.W_star + 60 * lim.W_mm_unit * np.linalg.norm(lim.W_mm)))
    assert far[-1] == pytest.approx(smooth.limit, rel=1e-6)
    # a random W's Hessian never exceeds the bound
    rng = np.random.default_rng(1)
    for _ in range(5):
        W = 3 * rng.standard_normal(W0.shape)
        assert np.linalg.eigvalsh(ce_hessian(data, W))[-1] <= smooth.bound * (1 + 1e-12)


def test_a_step_run_is_trains_run_and_counts_the_rises_of_the_loss(small_synthetic):
    data, lim, W0 = small_synthetic
    smooth = ntp.smoothness(data, W0)
    run = ntp.step_run(data, lim, W0, 1 / smooth.bound, 500, 100, 20)
    trace = ntp.train(data, optim.gd(1 / smooth.bound), 500, W0=W0, lim=lim, n_records=20)
    end = ntp.trace_summary(trace)
    assert (run.corr, run.dist_F, run.kl) == pytest.approx((end["corr"], end["dist_F"], end["kl"]), rel=1e-9)
    assert run.increases == 0 and run.last_increase == 0  # below 2/L the loss descends
    wild = ntp.step_run(data, lim, W0, 20 / smooth.limit, 500, 100, 20)  # far above 2/L_inf
    assert wild.increases > 0 and wild.last_increase > 0 and wild.dist_F > run.dist_F
    with pytest.raises(InvalidDataError, match="positive"):
        ntp.step_run(data, lim, W0, -1.0, 10, 5, 5)


def _trace(k, corr, norm, W):
    values = {"corr": np.asarray(corr, float), "norm": np.asarray(norm, float)}
    return optim.Trace(iterations=np.asarray(k), values=MappingProxyType(values), W=W)


def test_steps_to_corr_measured_where_reached_else_extrapolated_at_the_log_rate():
    W_mm = np.array([[1.0, 0.0], [0.0, 0.0]])  # ||W^mm|| = 1
    k = np.array([1, 10, 100, 1000])
    # reached: the first recorded k at the level
    hit = ntp.steps_to_corr(_trace(k, [0.1, 0.5, 0.995, 0.999], [1, 2, 3, 4], W_mm), W_mm, 0.99)
    assert hit.measured and hit.log10_k == pytest.approx(2.0)
    # a constructed run: offset r = 1 off W^mm's line, norm growing by 2 per unit of log k
    norm = 2 * np.log(k) + 1
    W = np.array([[norm[-1], 0.0], [0.0, 0.0]])
    W[1, 1] = 1.0  # r = 1
    out = ntp.steps_to_corr(_trace(k, [0.1, 0.2, 0.3, 0.4], norm, W), W_mm, 0.99)
    need = 1 / np.sqrt(1 - 0.99**2)
    assert not out.measured and out.growth == pytest.approx(2.0)
    assert out.log10_k == pytest.approx((np.log(1000) + (need - norm[-1]) / 2.0) / np.log(10))
    assert out.log10_k_theory == pytest.approx((np.log(1000) + (need - norm[-1]) / 1.0) / np.log(10))
    with pytest.raises(InvalidDataError, match="level"):
        ntp.steps_to_corr(_trace(k, [0.1] * 4, norm, W), W_mm, 1.0)


def test_a_condition_point_is_chapter_fives_decisions_and_gap():
    draw = nested_instance(12, 14, 4, 2, np.random.default_rng(5))
    low, high = ntp.condition_point(draw, 2, 200), ntp.condition_point(draw, 14, 200)
    for point, d in ((low, 2), (high, 14)):
        data = draw.at(d)
        assert (point.compatible, point.separable) == (ntp.is_compatible(data), ntp.is_separable(data))
    assert not (low.compatible and low.separable)
    assert low.gap == pytest.approx(ntp.best_achievable_loss(draw.at(2)).gap_to_entropy)
    assert low.gap > 0 and 0 <= low.gd_ratio < 1
    assert high.compatible and high.separable and high.gap == 0.0 and high.n_vanishing > 0


def _gd_f_parts(data, lim, W0, lr, n_iter):
    """A plain numpy GD loop: the F-parts of every iterate (the second way)."""
    W, parts = np.array(W0, dtype=float), []
    for _ in range(n_iter):
        W = W - lr * ntp.ce_grad(data, W)
        parts.append(lim.basis @ W.ravel())
    return np.array(parts)


def test_step_orbit_converges_below_two_over_l_inf_and_period_doubles_above(small_synthetic):
    data, lim, W0 = small_synthetic
    critical = 2 / ntp.smoothness(data, W0).limit
    below = ntp.step_orbit(data, lim, W0, 0.9 * critical, 300, 20)
    assert below.period == 1 and below.amplitude < settings.ORBIT_AMPLITUDE_RTOL
    orbits = [ntp.step_orbit(data, lim, W0, f * critical, 300, 20) for f in (1.05, 1.2, 1.5)]
    for orbit in orbits:
        assert orbit.period == 2 and orbit.residuals[0] < settings.ORBIT_PERIOD_RTOL
        assert orbit.kl_last[0] != pytest.approx(orbit.kl_last[1], rel=1e-3)  # the loss alternates
    # just past the threshold the orbit runs along the mode that lost its stability
    assert orbits[0].alignment > 0.99 and below.alignment < 0.5
    # its amplitude grows with the step, and it has settled: the same a decade earlier
    assert orbits[0].amplitude < orbits[1].amplitude < orbits[2].amplitude
    assert orbits[0].amplitudes[-1] == pytest.approx(orbits[0].amplitude, rel=1e-2)
    # far above, no period of the cascade's first three
    assert ntp.step_orbit(data, lim, W0, 3 * critical, 300, 20).period == 0


def test_step_orbit_reads_the_f_parts_a_plain_gd_loop_computes(small_synthetic):
    data, lim, W0 = small_synthetic
    lr = 1.2 * 2 / ntp.smoothness(data, W0).limit
    orbit = ntp.step_orbit(data, lim, W0, lr, 300, 20)
    F = _gd_f_parts(data, lim, W0, lr, 300)
    tail = F[-9:]
    second = np.linalg.norm(tail[2:] - 2 * tail[1:-1] + tail[:-2], axis=1) / 4
    assert orbit.amplitude == pytest.approx(second.max() / np.linalg.norm(lim.W_star), rel=1e-6)
    k = orbit.k[-1]  # the amplitude history at a recorded k (F[i] is the iterate k = i + 1)
    history = np.linalg.norm(F[k + 1] - 2 * F[k] + F[k - 1]) / 4 / np.linalg.norm(lim.W_star)
    assert orbit.amplitudes[-1] == pytest.approx(history, rel=1e-6)
    with pytest.raises(InvalidDataError, match="positive"):
        ntp.step_orbit(data, lim, W0, 0.0, 300, 20)
    with pytest.raises(InvalidDataError, match="at least 10 steps"):
        ntp.step_orbit(data, lim, W0, lr, 9, 5)


def test_horizons_by_budget_are_the_shorter_runs_extrapolations(small_synthetic):
    data, lim, W0 = small_synthetic
    lr = 1 / (2 * ntp.smoothness(data, W0).bound)
    horizons = ntp.horizons_by_budget(data, lim, W0, lr, [200, 2000], 0.999, 20)
    for budget, horizon in zip((200, 2000), horizons, strict=True):
        alone = ntp.train(data, optim.gd(lr), budget, W0=W0, lim=lim, n_records=20, keep_iterates=True)
        direct = ntp.steps_to_corr(alone, lim.W_mm, 0.999)
        assert horizon.log10_k == pytest.approx(direct.log10_k, rel=1e-9)
        assert horizon.offset == pytest.approx(ntp.offset_from(alone.W, lim.W_mm), rel=1e-9)
    assert not horizons[0].measured
    for bad in ([2000, 200], [0, 10], [1.5, 3.0]):
        with pytest.raises(InvalidDataError, match="budgets"):
            ntp.horizons_by_budget(data, lim, W0, lr, bad, 0.999, 20)


@pytest.mark.parametrize("seed", ["book", 2])
def test_chapter_8s_try_it_further_past_the_threshold_shows_what_its_box_expects(seed):
    """The box's command `-p orbit_factors=...` at the chapter's settings: the change it announces.

    At the book's seed and at one whose orbit goes from period 2 to no short period without a
    period 4 between (the box says instances differ there): the amplitude grows along the row and
    the two largest steps keep no period up to 8, where the chapter's own row holds only
    converging runs and period-2 orbits.
    """
    source = Path(__file__).resolve().parents[3] / "notebooks" / "08_beyond.md"
    box = re.search(r"ntpnb reproduce 08 -p orbit_factors=([0-9.,]+)`", source.read_text())
    assert box, "chapter 8's Try it box no longer runs orbit_factors"
    factors = [float(f) for f in box.group(1).split(",")]
    cell = {name: p.value for name, p in read_parameters_cell(source).items()}
    seed = cell["seed"] if seed == "book" else seed
    data = ntp.synthetic_instance(n=cell["n"], m=cell["m"], d=cell["d"], V=cell["V"], S=cell["S"], seed=seed)
    lim = ntp.limits(data)
    W0 = ntp.lecun_decoder(data, ntp.own_stream(seed, 1))
    critical = 2 / ntp.smoothness(data, W0).limit

    def orbits(row):
        return [
            ntp.step_orbit(data, lim, W0, f * critical, cell["step_iter"], cell["n_records"]) for f in row
        ]

    tried = orbits(factors)
    amplitudes = [o.amplitude for o in tried]
    assert amplitudes == sorted(amplitudes) and len(set(amplitudes)) == len(amplitudes)
    assert [o.period for o in tried[-2:]] == [0, 0]  # no period up to 8 at the two largest
    assert {o.period for o in orbits(cell["orbit_factors"])} <= {1, 2}  # the chapter's own row
