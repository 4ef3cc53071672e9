"""Loss, gradient and entropy: finite differences, the lower bound, stability."""

from __future__ import annotations

import numpy as np
import pytest

import ntpnb as ntp
from ntpnb.errors import InvalidDataError

from helpers import random_data


def test_entropy_of_a_known_distribution():
    data = ntp.NTPData(H=np.eye(2), pi=[0.25, 0.75], P=[[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]])
    assert ntp.entropy(data) == pytest.approx(0.25 * np.log(2))


def test_ce_loss_matches_the_sample_average():
    """Eq. (2) over distinct contexts equals the average -log q over the n raw samples."""
    rng = np.random.default_rng(0)
    H = rng.standard_normal((4, 3))
    contexts = rng.integers(4, size=200)
    tokens = rng.integers(5, size=200)
    contexts[:4] = np.arange(4)
    data = ntp.NTPData.from_samples(contexts, tokens, H, 5)
    W = rng.standard_normal((5, 3))
    logq = np.log(ntp.softmax(H @ W.T))
    assert ntp.ce_loss(data, W) == pytest.approx(-np.mean(logq[contexts, tokens]), rel=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_ce_grad_matches_central_finite_differences(seed):
    data = random_data(m=5, d=4, V=6, S=3, seed=seed)
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((data.V, data.d))
    G = ntp.ce_grad(data, W)
    eps = 1e-6
    fd = np.zeros_like(W)
    for idx in np.ndindex(W.shape):
        E = np.zeros_like(W)
        E[idx] = eps
        fd[idx] = (ntp.ce_loss(data, W + E) - ntp.ce_loss(data, W - E)) / (2 * eps)
    np.testing.assert_allclose(G, fd, rtol=1e-6, atol=1e-8)


def test_ce_is_at_least_the_entropy_on_many_random_W():
    data = random_data(m=6, d=4, V=7, S=3, seed=4)
    rng = np.random.default_rng(1)
    H = ntp.entropy(data)
    for scale in 10.0 ** np.arange(-3, 4):
        for _ in range(30):
            W = scale * rng.standard_normal((data.V, data.d))
            ce, kl = ntp.ce_loss(data, W), ntp.kl_divergence(data, W)
            assert ce > H
            assert kl > 0
            assert ce - H == pytest.approx(kl, rel=1e-9, abs=1e-12)


def test_ce_equals_the_entropy_where_softmax_matches_p():
    """With full supports and d >= m, W = log(P)^T (H^T)^+ gives softmax(W h_j) = p_j exactly."""
    rng = np.random.default_rng(2)
    m, d, V = 5, 7, 4
    P = rng.uniform(0.1, 1.0, size=(m, V))
    P /= P.sum(axis=1, keepdims=True)
    data = ntp.NTPData(H=rng.standard_normal((m, d)), pi=np.full(m, 1 / m), P=P)
    W = np.log(P).T @ np.linalg.pinv(data.H.T)
    np.testing.assert_allclose(ntp.softmax(ntp.logits(data, W)), P, atol=1e-12)
    assert ntp.ce_loss(data, W) == pytest.approx(ntp.entropy(data), abs=1e-12)
    assert ntp.kl_divergence(data, W) < 1e-12
    # any perturbation moves the loss strictly above the entropy
    assert ntp.ce_loss(data, W + 1e-3 * rng.standard_normal(W.shape)) > ntp.entropy(data) + 1e-9


def test_loss_and_gradient_are_stable_at_huge_norms():
    data = random_data(m=4, d=3, V=5, S=2, seed=5)
    W = 1e150 * np.random.default_rng(0).standard_normal((data.V, data.d))
    values = [ntp.ce_loss(data, W), ntp.kl_divergence(data, W)]
    assert all(np.isfinite(values))
    assert np.all(np.isfinite(ntp.ce_grad(data, W)))


def test_kl_divergence_resolves_gaps_below_rounding():
    """One-hot data (the in-support part vanishes exactly): the gap is log(1 + sum_v e^{-margin}),
    far below the rounding of CE, and kl_divergence keeps it to full relative precision."""
    data = ntp.NTPData(H=[[1.0, 0.0], [0.0, 1.0]], pi=[0.5, 0.5], P=[[1.0, 0.0], [0.0, 1.0]])
    W = 40.0 * np.eye(2)  # margin 40 for both contexts
    expected = np.log1p(np.exp(-40.0))  # = 4.248e-18, the KL of each context
    assert ntp.kl_divergence(data, W) == pytest.approx(expected, rel=1e-12)
    assert ntp.ce_loss(data, W) - ntp.entropy(data) == 0.0  # the naive difference is lost


@pytest.mark.parametrize(
    ("W", "message"),
    [
        (np.zeros((4, 3)), r"W must have shape \(V, d\) = \(5, 3\)"),
        (np.full((5, 3), np.nan), "W has a non-finite entry"),
        (np.full((5, 3), 1e308), "logits H W\\^T overflow"),
        (np.zeros(15), "W must be 2-dimensional"),
    ],
)
def test_bad_decoders_are_rejected(W, message):
    data = random_data(m=4, d=3, V=5, S=2, seed=6)
    for func in (ntp.ce_loss, ntp.ce_grad, ntp.kl_divergence):
        with pytest.raises(InvalidDataError, match=message):
            func(data, W)
