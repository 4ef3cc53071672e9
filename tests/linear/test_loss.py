"""Loss, gradient and entropy: finite differences, the lower bound, stability."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import ntpnb as ntp
from ntpnb.errors import InvalidDataError

from helpers import CHAPTER_INSTANCES, HALF, PROPERTY, instances, random_data


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
    counts = np.zeros((4, 5))
    np.add.at(counts, (contexts, tokens), 1.0)
    per_context = counts.sum(axis=1)
    data = ntp.NTPData(H=H, pi=per_context / 200, P=counts / per_context[:, None])
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


# ---------------------------------------------------------------------------------------------
# Huge logits: the common part cancels exactly


@pytest.mark.parametrize("size", [3e12, 1e17, 1e300])
def test_loss_gradient_and_softmax_are_exact_at_huge_tied_logits(size):
    """Tied huge logits (size, size, 0) give q = (1/2, 1/2, 0) exactly: CE = log 2, gradient 0."""
    W = np.array([[size], [size], [0.0]])
    assert ntp.ce_loss(HALF, W) == np.log(2.0)
    np.testing.assert_array_equal(ntp.ce_grad(HALF, W), 0.0)
    assert ntp.kl_divergence(HALF, W) == 0.0
    Q = ntp.softmax(ntp.logits(HALF, W))
    np.testing.assert_array_equal(Q, [[0.5, 0.5, 0.0]])


def test_kl_divergence_at_equal_huge_logits_is_that_of_the_uniform_softmax():
    """W = 1e300 everywhere gives equal logits, so q is uniform on the 3 tokens."""
    data = ntp.NTPData(H=[[1.0, 1.0]], pi=[1.0], P=[[0.5, 0.5, 0.0]])
    W = np.full((3, 2), 1e300)
    assert ntp.kl_divergence(data, W) == pytest.approx(np.log(1.5), rel=1e-15)
    assert ntp.ce_loss(data, W) == pytest.approx(np.log(3.0), rel=1e-15)


def test_huge_logits_with_a_gap_match_the_closed_form():
    """Logits (s + 2, s, s - 1) at s = 1e15 (exactly representable): the softmax of (2, 0, -1)."""
    s = 2.0**50
    data = ntp.NTPData(H=[[1.0]], pi=[1.0], P=[[0.2, 0.3, 0.5]])
    W = np.array([[s + 2], [s], [s - 1]])
    q = np.exp([2.0, 0.0, -1.0]) / np.exp([2.0, 0.0, -1.0]).sum()
    np.testing.assert_allclose(ntp.softmax(ntp.logits(data, W)), q[None], rtol=1e-15)
    assert ntp.ce_loss(data, W) == pytest.approx(-(data.P[0] @ np.log(q)), rel=1e-15)
    np.testing.assert_allclose(ntp.ce_grad(data, W).ravel(), q - data.P[0], rtol=1e-14)


def test_softmax_rejects_what_is_not_a_logit_matrix():
    with pytest.raises(
        InvalidDataError,
        match=r"logit matrix, got shape \(3,\); for one vector l use softmax\(l\[None\]\)\[0\]",
    ):
        ntp.softmax(np.zeros(3))
    with pytest.raises(InvalidDataError, match=r"got shape \(1, 2, 3\)"):
        ntp.softmax(np.zeros((1, 2, 3)))
    with pytest.raises(InvalidDataError, match="2-dimensional"):
        ntp.softmax([1.0, 2.0])
    with pytest.raises(InvalidDataError, match="non-finite"):
        ntp.softmax([[0.0, np.nan]])
    with pytest.raises(InvalidDataError, match="must be real"):
        ntp.softmax(np.array([[1.0 + 1.0j, 0.0]]))


def test_a_loss_beyond_the_float64_range_raises():
    """Logit differences above 1.8e308: CE overflows; a named error, never inf."""
    data = ntp.NTPData(H=[[1.0]], pi=[1.0], P=[[0.5, 0.5]])
    W = np.array([[1.7e308], [-1.7e308]])
    with pytest.raises(InvalidDataError, match="overflows float64"):
        ntp.ce_loss(data, W)
    with pytest.raises(InvalidDataError, match="overflows float64"):
        ntp.kl_divergence(data, W)
    np.testing.assert_array_equal(ntp.ce_grad(data, W).ravel(), [0.5, -0.5])


@PROPERTY
@given(
    offsets=st.lists(st.integers(-40, 40), min_size=2, max_size=6),
    k=st.integers(0, 52),
    probs=st.lists(st.integers(0, 5), min_size=6, max_size=6),
)
def test_property_loss_is_exact_at_huge_logits(offsets, k, probs):
    """Logits 2^k + o (exact in float64 for k <= 52 and small integers o) must give the same
    softmax, loss and gradient as the logits o: the huge common part cancels exactly."""
    V = len(offsets)
    p = np.array(probs[:V], dtype=float)
    assume(p.sum() > 0)
    data = ntp.NTPData(H=[[1.0]], pi=[1.0], P=[p / p.sum()])
    o = np.array(offsets, dtype=float)
    W = (2.0**k + o)[:, None]
    q = np.exp(o - o.max()) / np.exp(o - o.max()).sum()
    np.testing.assert_allclose(ntp.softmax(ntp.logits(data, W))[0], q, rtol=1e-13, atol=1e-300)
    support = data.P[0] > 0
    ce = -float(data.P[0, support] @ np.log(q[support]))
    assert ntp.ce_loss(data, W) == pytest.approx(ce, rel=1e-13, abs=1e-15)
    np.testing.assert_allclose(ntp.ce_grad(data, W).ravel(), q - data.P[0], rtol=1e-12, atol=1e-15)
    assert ntp.kl_divergence(data, W) == pytest.approx(ce - ntp.entropy(data), rel=1e-9, abs=1e-13)


@PROPERTY
@given(data=instances(), e=st.floats(0.0, 300.0))
def test_property_loss_is_finite_and_above_the_entropy_at_any_norm(data, e):
    W = 10.0**e * np.random.default_rng(0).standard_normal((data.V, data.d))
    assume(np.all(np.isfinite(data.H @ W.T)))
    ce, kl, H = ntp.ce_loss(data, W), ntp.kl_divergence(data, W), ntp.entropy(data)
    assert np.isfinite(ce) and np.isfinite(kl) and kl >= 0
    assert ce >= H - 1e-12 * max(1.0, ce)
    Q = ntp.softmax(ntp.logits(data, W))
    np.testing.assert_allclose(Q.sum(axis=1), 1.0, rtol=1e-15, atol=1e-15)
    assert np.all(np.isfinite(ntp.ce_grad(data, W)))


@pytest.mark.parametrize("name", CHAPTER_INSTANCES)
def test_kl_form_equals_the_direct_gap_on_the_chapter_instances(name):
    data = CHAPTER_INSTANCES[name]()
    rng = np.random.default_rng(0)
    H = ntp.entropy(data)
    for scale in (0.01, 1.0, 30.0):
        W = scale * rng.standard_normal((data.V, data.d))
        direct, kl = ntp.ce_loss(data, W) - H, ntp.kl_divergence(data, W)
        assert kl > 0
        assert direct == pytest.approx(kl, rel=1e-10, abs=1e-13)
