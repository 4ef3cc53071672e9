"""Paper A's experiments: the entropy gap along rays and its search (ntpnb.linear.experiments._entropy),
each against a second computation.
"""

from __future__ import annotations

import numpy as np
import pytest

import ntpnb as ntp
from ntpnb.errors import InvalidDataError, NotSeparableError
from ntpnb.linear._constraints import NTPRows, ntp_constraints


def test_margins_are_the_svm_constraint_rows(toy, toy_limits):
    W = toy_limits.W_mm
    np.testing.assert_allclose(ntp.margins(toy, W), NTPRows(toy).margins(W.ravel()), atol=1e-12)
    assert ntp.margins(toy, W).min() == pytest.approx(1.0, abs=1e-9)  # W^mm: smallest margin 1
    with pytest.raises(InvalidDataError, match="shape"):
        ntp.margins(toy, np.zeros((2, 2)))


def test_tempering_exponent_recovers_a_known_beta(toy):
    raw = ntp.toy2d_instance(0, entropy=None)
    for beta in (0.4, 1.0, 2.5):
        P = np.where(raw.support_mask, raw.P, 0.0) ** beta
        tempered = ntp.NTPData(H=raw.H, pi=raw.pi, P=P / P.sum(axis=1, keepdims=True))
        assert ntp.tempering_exponent(tempered, raw) == pytest.approx(beta, rel=1e-10)
    assert 0 < ntp.tempering_exponent(toy, raw) < 1  # the paper's entropy flattens our draw
    other = ntp.synthetic_instance(seed=0)
    with pytest.raises(InvalidDataError, match="same supports"):
        ntp.tempering_exponent(toy, other)


def test_entropy_search_reaches_the_entropy_on_full_supports():
    full = ntp.synthetic_instance(n=200, m=4, d=6, V=3, S=3, seed=1)  # d > m, full supports
    rng = np.random.default_rng(0)
    search = ntp.entropy_search(full, 2, 300, rng)
    Ws = search.decoders
    assert len(Ws) == 2 and Ws[0].shape == (full.V, full.d)
    gaps = ntp.entropy_gaps(full, Ws)
    assert gaps.kl.max() < 1e-10
    # each start stopped where L-BFGS could not go further, before the limit
    assert search.limit == 300 and search.stalled.all() and (search.iterations > 0).all()
    # the same generator state gives the same decoders: the draws are the starts alone
    again = ntp.entropy_search(full, 2, 300, np.random.default_rng(0))
    np.testing.assert_array_equal(Ws[1], again.decoders[1])
    # a search cut short is not stalled: it might have gone further
    short = ntp.entropy_search(full, 2, 3, np.random.default_rng(0))
    assert not short.stalled.any() and (short.iterations == 3).all()


def test_random_decoders_have_log_uniform_norms(toy):
    Ws = ntp.random_decoders(toy, 500, np.random.default_rng(3))
    norms = np.linalg.norm(Ws, axis=(1, 2))
    assert Ws.shape == (500, toy.V, toy.d)
    assert 1e-2 <= norms.min() and norms.max() <= 1e3
    assert abs(np.mean(np.log10(norms)) - 0.5) < 0.2  # uniform in [-2, 3]


def test_entropy_gaps_direct_and_kl_agree(toy):
    Ws = ntp.random_decoders(toy, 50, np.random.default_rng(1))
    gaps = ntp.entropy_gaps(toy, Ws)
    assert np.all(gaps.kl >= 0)
    np.testing.assert_allclose(gaps.direct, gaps.kl, atol=1e-10 * max(1.0, gaps.kl.max()))
    # the rounding scale grows with the largest logit and is never below eps H
    assert np.all(gaps.rounding >= np.finfo(float).eps * ntp.entropy(toy))
    assert np.all(np.abs(gaps.direct - gaps.kl) <= 10 * gaps.rounding)
    big = ntp.entropy_gaps(toy, [1e4 * Ws[0], Ws[0]]).rounding
    assert big[0] > 1e3 * big[1] / 2


def test_gap_from_margins_is_the_kl_form_along_rays(toy):
    W_star, W_mm = ntp.finite_solution(toy), ntp.ntp_svm(toy)
    rng = np.random.default_rng(5)
    gammas = np.linspace(0.0, 30.0, 31)
    other = W_star + ntp.project_F_perp(toy, rng.standard_normal((toy.V, toy.d)))
    mixed = ntp.project_F_perp(toy, rng.standard_normal((toy.V, toy.d)))
    for W_p, W_d in ((W_star, W_mm), (other, W_mm), (W_star, mixed), (W_star, -mixed)):
        closed = ntp.gap_from_margins(toy, W_p, W_d, gammas)
        kl = ntp.gap_along_ray(toy, W_p, W_d, gammas)
        np.testing.assert_allclose(kl, closed, rtol=1e-9, atol=16 * np.finfo(float).eps)
    # a W_p that does not match the ratios is outside the formula: the two differ at gamma = 0
    off = ntp.gap_from_margins(toy, np.zeros_like(W_star), W_mm, [0.0])
    assert abs(off[0] - ntp.gap_along_ray(toy, np.zeros_like(W_star), W_mm, [0.0])[0]) > 1e-3


def test_gap_along_ray_and_its_rate(toy, toy_limits):
    gammas = np.linspace(0.0, 30.0, 61)
    gap = ntp.gap_along_ray(toy, toy_limits.W_star, toy_limits.W_mm, gammas)
    assert gap[7] == ntp.kl_divergence(toy, toy_limits.W_star + gammas[7] * toy_limits.W_mm)
    assert np.all(np.diff(gap) < 0)
    mu = ntp.margins(toy, toy_limits.W_mm).min()
    assert ntp.decay_rate(gammas, gap) == pytest.approx(-mu, abs=0.02)
    # Eq. (9): CE - H <= C e^{-gamma} along W* + gamma W^mm
    assert np.all(gap <= ntp.eq9_constant(toy, toy_limits.W_star) * np.exp(-gammas))
    with pytest.raises(InvalidDataError, match="fewer than two"):
        ntp.decay_rate(gammas, np.ones_like(gammas))


def test_star_exponents_are_the_out_of_support_logits_over_the_in_support_normalizer(toy, toy_limits):
    from ntpnb.linear._path_split import star_exponents

    x = star_exponents(toy, toy_limits.W_star)
    L = toy.H @ toy_limits.W_star.T
    # W* matches the in-support probabilities: e^{l_jz} / p_jz is one normalizer per row
    normalizer = np.exp(L[0][toy.support_mask[0]]).sum()
    np.testing.assert_allclose(np.exp(L[0][toy.support_mask[0]]) / normalizer, toy.P[0][toy.support_mask[0]])
    for j in range(toy.m):
        inside = toy.support_mask[j]
        expected = L[j] - np.log(np.exp(L[j][inside]).sum())
        np.testing.assert_allclose(x[j][~inside], expected[~inside], rtol=1e-12, atol=1e-12)
        assert np.all(x[j][inside] == -np.inf)


def test_zero_margin_ray_and_its_plateau(toy, toy_limits):
    ray = ntp.zero_margin_ray(toy, toy_limits.W_star)
    cons = ntp_constraints(toy)
    rows = np.flatnonzero((cons.ineq_context == ray.pair[0]) & (cons.ineq_token == ray.pair[1]))
    m = ntp.margins(toy, ray.D)
    assert ray.zero[rows].all() and abs(m[rows[0]]) < 1e-9
    assert ray.other_margin == pytest.approx(m[~ray.zero].min()) and ray.other_margin > 1 - 1e-6
    assert ray.residual < 1e-12
    # the plateau bounds CE - H from below along the ray and is its limit
    gammas = np.array([0.0, 5.0, 30.0, 60.0])
    gap = ntp.gap_along_ray(toy, toy_limits.W_star, ray.D, gammas)
    assert np.all(gap >= ray.plateau * (1 - 1e-9))
    assert gap[-1] / ray.plateau == pytest.approx(1.0, abs=1e-9)


def test_zero_margin_ray_raises_when_no_pair_admits_one():
    # d = 1, both contexts followed by token 1 alone: a zero margin on one context's pair
    # makes w_1 = w_2, so the other context's margin is 0 too, below the required 1
    data = ntp.NTPData(H=[[1.0], [2.0]], pi=[0.5, 0.5], P=[[1.0, 0.0], [1.0, 0.0]])
    with pytest.raises(NotSeparableError, match="no pair"):
        ntp.zero_margin_ray(data, np.zeros((2, 1)))


@pytest.mark.parametrize(
    "call",
    [
        lambda x: ntp.tempering_exponent(x, x),
        lambda x: ntp.random_decoders(x, 2, np.random.default_rng(0)),
        lambda x: ntp.lecun_decoder(x, np.random.default_rng(0)),
        lambda x: ntp.gd_loss_curve(x, 2, [0, 1]),
        lambda x: ntp.decoder_with_logits(x, np.zeros((2, 2))),
        lambda x: ntp.free_rows_draws(x, 2, 2, np.random.default_rng(0)),
        lambda x: ntp.cvxpy_path_point(x, 1.0),
    ],
)
def test_the_experiments_refuse_anything_but_ntp_data(call):
    """Each experiment a chapter calls is a door: it names the type it needs."""
    with pytest.raises(InvalidDataError, match="expected NTPData, got dict"):
        call({"H": [[1.0]]})
