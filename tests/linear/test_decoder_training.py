"""Training the linear decoder (ntpnb.linear._decoder_training): gradients, sampling, records, limits."""

from __future__ import annotations

import numpy as np
import pytest

import ntpnb as ntp
from ntpnb import _optim as optim
from ntpnb.errors import InvalidDataError
from ntpnb.linear import _decoder_training as training
from ntpnb.linear._descent import SAMPLING_KINDS

from helpers import gradient_fn, random_data, sampled_gradient_fn


@pytest.fixture(scope="module")
def data():
    return random_data(m=5, d=7, V=6, S=3, seed=3)  # d > m: compatible and separable


@pytest.fixture(scope="module")
def lim(data):
    return training.limits(data)


def test_gradient_fn_matches_ce_grad_single_and_batched(data):
    grad = gradient_fn(data)
    rng = np.random.default_rng(0)
    Ws = 3.0 * rng.standard_normal((2, 3, data.V, data.d))
    G = grad(Ws)
    assert G.shape == Ws.shape
    for idx in np.ndindex(2, 3):
        np.testing.assert_allclose(G[idx], ntp.ce_grad(data, Ws[idx]), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(grad(Ws[0, 0]), ntp.ce_grad(data, Ws[0, 0]), rtol=1e-12, atol=1e-14)


def test_gradient_fn_is_finite_at_huge_norms(data):
    grad = gradient_fn(data)
    W = 1e6 * np.random.default_rng(1).standard_normal((data.V, data.d))
    np.testing.assert_allclose(grad(W), ntp.ce_grad(data, W), atol=1e-12)


@pytest.mark.parametrize("sampling", SAMPLING_KINDS)
def test_sampled_gradients_are_unbiased(data, sampling):
    """The mean of many stochastic gradients is the full gradient (within Monte Carlo error)."""
    W = np.random.default_rng(2).standard_normal((data.V, data.d))
    sampled = sampled_gradient_fn(data, batch_size=4000, seed=0, sampling=sampling)
    mean = np.mean([sampled(W) for _ in range(25)], axis=0)  # 1e5 samples
    full = ntp.ce_grad(data, W)
    # per-sample gradients have entries of order 1: Monte Carlo error ~ 1 / sqrt(1e5) ~ 3e-3
    np.testing.assert_allclose(mean, full, atol=0.02)
    assert np.abs(mean - full).max() < 0.2 * np.abs(full).max()


def test_context_sampling_vanishes_where_sequence_sampling_does_not():
    """At a W whose softmax matches every p_j, only the context-sampled gradient is zero."""
    data = ntp.NTPData(H=np.eye(2), pi=[0.5, 0.5], P=[[0.25, 0.75], [0.5, 0.5]])
    W = np.log(data.P).T  # softmax(W e_j) = p_j exactly
    ctx = sampled_gradient_fn(data, 8, seed=0, sampling="contexts")
    seq = sampled_gradient_fn(data, 8, seed=0, sampling="sequences")
    np.testing.assert_allclose(ctx(W), 0.0, atol=1e-15)
    assert np.abs(seq(W)).max() > 0.01


def test_sampled_gradients_batched_shape_and_seeded(data):
    Ws = np.zeros((3, data.V, data.d))
    g1 = sampled_gradient_fn(data, 5, seed=7)(Ws)
    g2 = sampled_gradient_fn(data, 5, seed=7)(Ws)
    assert g1.shape == Ws.shape
    np.testing.assert_array_equal(g1, g2)
    assert not np.allclose(g1[0], g1[1])  # each batch element draws its own samples


def test_bad_sampling_is_named_by_train(data, lim):
    with pytest.raises(InvalidDataError, match="sampling"):
        training.train(data, optim.sgd(0.1), 5, batch_size=5, sampling="tokens", lim=lim)
    with pytest.raises(InvalidDataError, match="batch_size"):
        training.train(data, optim.sgd(0.1), 5, batch_size=0, lim=lim)


def test_tracker_values_by_hand(data):
    lim = training.limits(data)
    rng = np.random.default_rng(4)
    W = rng.standard_normal((data.V, data.d)) + 5 * lim.W_mm
    rec = training.tracker(data, lim)(W)
    Wmm = lim.W_mm
    assert rec["kl"] == pytest.approx(ntp.ce_loss(data, W) - ntp.entropy(data), rel=1e-8)
    assert rec["ce"] == pytest.approx(ntp.ce_loss(data, W), rel=1e-12)
    assert rec["norm"] == pytest.approx(np.linalg.norm(W))
    assert rec["corr"] == pytest.approx(np.sum(W * Wmm) / np.linalg.norm(W) / np.linalg.norm(Wmm))
    D = W - lim.W_star
    assert rec["corr_corrected"] == pytest.approx(np.sum(D * Wmm) / np.linalg.norm(D) / np.linalg.norm(Wmm))
    assert rec["dist_F"] == pytest.approx(np.linalg.norm(ntp.project_F(data, W) - lim.W_star))
    batched = training.tracker(data, lim)(np.stack([W, 2 * W]))
    assert batched["norm"].shape == (2,)
    assert batched["corr"][1] == pytest.approx(rec["corr"])


def test_the_loss_and_norm_record_is_ce_and_the_frobenius_norm(data):
    W = np.random.default_rng(5).standard_normal((data.V, data.d))
    rec = ntp.loss_and_norm(data)(W)
    assert rec == {"ce": ntp.ce_loss(data, W), "norm": np.linalg.norm(W)}
    trace = ntp.run_decoder(data, optim.gd(0.5), 20, W, record=ntp.loss_and_norm(data), record_at=[20])
    assert trace.ce[-1] == pytest.approx(ntp.ce_loss(data, trace.W), rel=1e-12)
    with pytest.raises(InvalidDataError, match="expected NTPData"):
        ntp.loss_and_norm(W)


def test_train_default_init_is_lecun_and_seeded(data, lim):
    t1 = training.train(data, optim.gd(0.5), 0, seed=11, lim=lim)
    t2 = training.train(data, optim.gd(0.5), 0, seed=11, lim=lim)
    np.testing.assert_array_equal(t1.W, t2.W)
    np.testing.assert_array_equal(t1.W, optim.lecun_init((data.V, data.d), data.d, np.random.default_rng(11)))


def test_train_batched_trials_equal_single_runs(data, lim):
    W0 = np.stack([optim.lecun_init((data.V, data.d), data.d, s) for s in range(3)])
    batched = training.train(data, optim.normalized_gd(0.05), 200, W0=W0, n_records=8, lim=lim)
    for s in range(3):
        single = training.train(data, optim.normalized_gd(0.05), 200, W0=W0[s], n_records=8, lim=lim)
        for name in ("ce", "kl", "norm", "corr", "corr_corrected", "dist_F"):
            np.testing.assert_allclose(
                getattr(batched, name)[:, s], getattr(single, name), rtol=1e-10, atol=1e-13
            )


def test_train_rejects_a_wrong_initialization(data, lim):
    with pytest.raises(InvalidDataError, match="W0"):
        training.train(data, optim.gd(0.5), 5, W0=np.zeros((data.d, data.V)), lim=lim)


@pytest.mark.parametrize(
    "opt", [optim.gd(0.5), optim.normalized_gd(0.02), optim.adam(0.01)], ids=lambda o: o.name
)
def test_every_method_decreases_the_loss_and_grows_the_norm(data, lim, opt):
    trace = training.train(data, opt, 3000, seed=0, n_records=10, lim=lim)
    assert trace.kl[-1] < 0.1 * trace.kl[0]
    assert trace.norm[-1] > 2 * trace.norm[0]


def test_gd_direction_approaches_the_svm_solution(data, lim):
    """Theorem 2 on a small instance: GD's direction and F-part approach W^mm and W*.

    The limits come from the verified QP solver and the linear solve, independently of the
    training loop, so a wrong limit would keep these numbers away from 1 and 0. Directional
    convergence is slow (1 - corr falls like a power of 1 / log k), hence the 0.98.
    """
    trace = training.train(data, optim.gd(0.5), 20_000, seed=0, n_records=10, lim=lim)
    assert trace.corr[-1] > 0.98
    assert trace.corr_corrected[-1] > 0.98
    assert np.all(np.diff(trace.corr[3:]) > 0)
    assert trace.dist_F[-1] < 1e-3 * trace.dist_F[0]
    assert np.all(np.diff(trace.norm[3:]) > 0)


def test_normalized_gd_aligns_but_its_f_part_stalls_at_the_step_size(data, lim):
    """NGD's steps keep length lr, so P_F(W_k) hovers at a distance of order lr from W*."""
    small, large = (
        training.train(data, optim.normalized_gd(lr), 20_000, seed=0, n_records=10, lim=lim)
        for lr in (0.05, 0.2)
    )
    assert small.corr[-1] > 0.98 and large.corr[-1] > 0.98
    assert small.dist_F[-1] < 0.5 * large.dist_F[-1]


def test_limits_are_computed_once_per_data_set_not_per_iteration(data, monkeypatch):
    calls = {"svm": 0, "star": 0}
    real_svm, real_star = training.ntp_svm, training.finite_solution

    def counting_svm(d):
        calls["svm"] += 1
        return real_svm(d)

    def counting_star(d):
        calls["star"] += 1
        return real_star(d)

    monkeypatch.setattr(training, "ntp_svm", counting_svm)
    monkeypatch.setattr(training, "finite_solution", counting_star)
    lim = training.limits(data)
    for opt in (optim.gd(0.5), optim.normalized_gd(0.05)):  # every run on the data takes them handed on
        training.train(data, opt, 500, n_records=40, lim=lim)
    assert calls == {"svm": 1, "star": 1}
