"""Certified separability by Newton's method on the squared-hinge problem (decide_by_newton,
decide_separability(data, method="newton"), ntpnb.linear._hinge_newton): agreement with the LP,
the certificates checked independently, the linear algebra against dense formulas, and errors on
bad input."""

from __future__ import annotations

import numpy as np
import pytest

import ntpnb as ntp
from ntpnb import settings
from ntpnb.errors import InvalidDataError, SolverError
from ntpnb.linear import _hinge_newton as hn
from ntpnb.linear._constraints import scaled_rows
from ntpnb.linear._separability import (
    certified_bound,
    decide_by_newton,
    decide_separability,
    verified_margin,
)

from helpers import random_data, text_data


def _instances():
    """Small instances on both sides of their threshold (m > d), random and from the text."""
    rng = np.random.default_rng(3)
    out = [
        ntp.random_instance(m, d, V, S, rng) for m, d, V, S in [(20, 4, 5, 2), (30, 6, 6, 1), (40, 10, 8, 3)]
    ]
    out += [ntp.random_instance(30, d, 5, 1, rng) for d in (3, 5, 8, 12)]
    out += [text_data(20, d) for d in (5, 10, 20, 30)]
    return out


@pytest.mark.parametrize("data", _instances(), ids=lambda x: f"m{x.m}-d{x.d}-V{x.V}")
def test_decisions_agree_with_the_lp_and_carry_their_certificate(data):
    newton = decide_by_newton(data)
    dec = newton.decision
    assert dec.separable is ntp.is_separable(data, method="lp")
    assert dec.resolution == settings.SEP_MARGIN_TOL
    H = scaled_rows(data.H)
    if dec.separable:
        assert newton.certificate is None and dec.bound == np.inf
        margin, unit = verified_margin(H, data.support_mask, dec.direction)
        assert margin == pytest.approx(dec.margin) and margin >= settings.SEP_MARGIN_TOL
        assert np.abs(unit).max() == 1.0
        W = dec.direction / margin  # smallest margin 1 in the LP's units: Definition 2 holds
        assert ntp.satisfies_definition_2(ntp.NTPData(H=H, pi=data.pi, P=data.P), W, 1e-6)
    else:
        C = newton.certificate
        assert dec.direction is None and dec.margin == 0.0
        assert certified_bound(H, data.support_mask, C) <= settings.SEP_MARGIN_TOL
        # the certificate, read independently: zero row sums, lambda >= 0, columns orthogonal
        # to the embeddings, and a positive total weight
        np.testing.assert_allclose(C.sum(axis=1), 0.0, atol=1e-9 * np.abs(C).max())
        assert C[~data.support_mask].max() <= 0 < -C[~data.support_mask].sum()
        assert np.abs(C.T @ H).max() <= 1e-9 * np.abs(C).max()


def test_a_separable_direction_is_verified_and_a_broken_one_is_not(overparam_data):
    data = overparam_data
    H = scaled_rows(data.H)
    W = ntp.separating_direction(ntp.NTPData(H=H, pi=data.pi, P=data.P))
    margin, unit = verified_margin(H, data.support_mask, W)
    L = H @ unit.T
    anchors = np.argmax(data.support_mask, axis=1)
    gaps = L[np.arange(data.m), anchors][:, None] - L
    assert margin == pytest.approx(gaps[~data.support_mask].min(), rel=1e-12)
    assert margin > 0
    # in-support logits made unequal: (6a) fails, so the margin does not count
    broken = W.copy()
    z = np.flatnonzero(data.support_mask[0])[-1]
    broken[z] += 1e-3 * np.abs(W).max() * np.sign(H[0])
    if data.support_mask[0].sum() > 1:
        assert verified_margin(H, data.support_mask, broken)[0] == -np.inf
    for bad in (np.zeros_like(W), np.full_like(W, np.nan)):
        assert verified_margin(H, data.support_mask, bad)[0] == -np.inf


def test_the_bound_of_an_exact_certificate_is_rounding_and_of_a_wrong_one_is_not():
    """Two contexts with the same embedding and different next tokens: no W separates them,
    and C = (e_0 - e_1, e_1 - e_0) has C^T H = 0 exactly."""
    H = np.array([[1.0, -0.5], [1.0, -0.5], [0.3, 1.0]])
    mask = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=bool)
    C = np.array([[1.0, -1.0, 0.0], [-1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    assert 0 < certified_bound(H, mask, C) <= 1e-13  # the rounding allowance alone
    wrong = C.copy()
    wrong[2] = [-1.0, 0.0, 1.0]  # adds h_3 to two columns: C^T H is no longer 0
    assert certified_bound(H, mask, wrong) > 0.1
    assert certified_bound(H, mask, np.zeros_like(C)) == np.inf  # no weight
    assert certified_bound(H, mask, np.full_like(C, np.nan)) == np.inf
    data = ntp.NTPData(H=H, pi=np.full(3, 1 / 3), P=mask.astype(float))
    dec = decide_separability(data, "newton")
    assert not dec.separable and not ntp.is_separable(data, method="lp")


def test_the_farkas_polish_completes_a_perturbed_certificate():
    data = text_data(20, 5)
    newton = decide_by_newton(data)
    assert not newton.decision.separable
    H, mask, C1 = scaled_rows(data.H), data.support_mask, newton.certificate
    rng = np.random.default_rng(0)
    C0 = C1 + 1e-6 * np.abs(C1).max() * rng.standard_normal(mask.shape)
    C0[~mask & (C1 == 0)] = 0.0  # keep the pattern
    assert certified_bound(H, mask, C0) > settings.SEP_MARGIN_TOL  # the perturbation breaks it
    C = hn.farkas_polish(H, mask, C0)
    assert C is not None and certified_bound(H, mask, C) <= settings.SEP_MARGIN_TOL
    assert hn.farkas_polish(H, mask, np.zeros(mask.shape)) is None or not np.any(
        hn.farkas_polish(H, mask, np.zeros(mask.shape))[~mask]
    )


def test_the_token_blocks_and_their_schur_complement_match_dense_formulas():
    rng = np.random.default_rng(1)
    H = rng.standard_normal((12, 4))
    prob = hn._Problem(H, np.eye(12, 3, dtype=bool) | np.eye(12, 3, -3, dtype=bool))
    rho = 7.0
    blocks = []
    for F in (np.array([0, 2, 5]), np.arange(1, 11), np.arange(12)):  # |F| < d, > d, = m
        blk = hn._token_inverse(prob, F, rho)
        assert (blk.Z is None) == (F.size > prob.d)
        K_F = H[F] @ H[F].T
        dense = np.linalg.inv(K_F + np.eye(F.size) / rho)
        x = rng.standard_normal(F.size)
        np.testing.assert_allclose(blk.apply(x), dense @ x, rtol=1e-9, atol=1e-9)
        blocks.append((F, dense))
    S = hn._assemble(12, [hn._token_inverse(prob, F, rho) for F, _ in blocks])
    expected = np.zeros((12, 12))
    for F, dense in blocks:
        expected[np.ix_(F, F)] += dense
    np.testing.assert_allclose(np.tril(S), np.tril(expected), rtol=1e-9, atol=1e-9)


def test_the_newton_step_is_the_exact_minimizer_on_a_fixed_active_set():
    """On one piece the objective is quadratic: the step lands where its gradient vanishes."""
    data = random_data(8, 3, 4, 2, 5)
    prob = hn._Problem(scaled_rows(data.H), data.support_mask)
    rng = np.random.default_rng(2)
    W, s, rho = rng.standard_normal((4, 3)), rng.standard_normal(8), 3.0
    E = hn._residuals(prob, W, s)
    active = prob.mask | (E > 0)
    dW, ds = hn._newton_step(prob, W, E, active, rho, {})
    W1, s1 = W + dW, s + ds
    E1 = hn._residuals(prob, W1, s1)
    AE = np.where(active, E1, 0.0)  # the gradient of the quadratic on the same piece
    np.testing.assert_allclose(W1 + rho * AE.T @ prob.H, 0.0, atol=1e-10)
    np.testing.assert_allclose(AE.sum(axis=1), 0.0, atol=1e-10)


def test_a_decision_the_continuation_cannot_reach_is_an_error_that_names_both_numbers(monkeypatch):
    data = text_data(20, 25)  # near the threshold of these 110 contexts: undecided at rho = 10
    monkeypatch.setattr(settings, "HINGE_RHO_MAX", settings.HINGE_RHO_START)
    with pytest.raises(SolverError, match=r"could not decide NTP-separability.*best .*best"):
        decide_separability(data, "newton")


def test_bad_input_is_refused():
    with pytest.raises(InvalidDataError):
        decide_separability(np.zeros((3, 3)), "newton")
    with pytest.raises(InvalidDataError):
        decide_by_newton(np.zeros((3, 3)))


def test_no_out_of_support_token_is_separable_at_once():
    data = ntp.NTPData(H=[[1.0, 0.0], [0.0, 1.0]], pi=[0.5, 0.5], P=[[0.5, 0.5], [0.2, 0.8]])
    newton = decide_by_newton(data)
    assert newton.decision.separable and newton.iterations == 0
    assert decide_separability(data, "newton").method == newton.decision.method
