"""Paper A's experiments on text: pairs, timed decisions and certificates (ntpnb.linear.experiments._text)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ntpnb as ntp
from ntpnb import settings
from ntpnb.errors import InvalidDataError


def test_autoregressive_pairs_have_the_loss_and_gradient_of_the_distinct_contexts():
    windows = ntp.sliding_windows([0, 1, 2, 1, 0, 2, 2, 1, 0, 1], 4)
    contexts = ntp.prefix_contexts(windows, 3)
    H = ntp.joint_ntp_data(contexts, 5, np.random.default_rng(9)).H
    pairs = ntp.autoregressive_pairs(windows, contexts, H)
    assert pairs.m == len(windows) * 3
    W = np.random.default_rng(10).standard_normal((3, 5))
    distinct = contexts.ntp_data(H)
    assert ntp.ce_loss(pairs, W) == pytest.approx(ntp.ce_loss(distinct, W), abs=1e-12)
    np.testing.assert_allclose(ntp.ce_grad(pairs, W), ntp.ce_grad(distinct, W), atol=1e-12)
    with pytest.raises(InvalidDataError, match="one row per context"):
        ntp.autoregressive_pairs(windows, contexts, H[:-1])


def test_timed_separability_logs_every_decision(overparam_data):
    decide = ntp.TimedSeparability()
    assert decide(overparam_data) is ntp.is_separable(overparam_data) is True
    (entry,) = decide.log
    assert (entry.m, entry.d, entry.separable) == (overparam_data.m, overparam_data.d, True)
    assert entry.seconds >= 0 and entry.certificate >= settings.SEP_MARGIN_TOL


def _joint_text(n_chars: int, d: int) -> ntp.NTPData:
    ids = ntp.encode_text(ntp.stdlib_corpus(n_chars))
    joint = ntp.prefix_contexts(ntp.sliding_windows(ids.tolist(), 7), 27)
    return ntp.joint_ntp_data(joint, d, 0)


@pytest.mark.parametrize("d", [8, 40])
def test_timed_separability_by_newton_and_by_the_lp_agree_with_their_certificates(d):
    data = _joint_text(20, d)
    newton, lp = ntp.TimedSeparability(), ntp.TimedSeparability("lp")
    assert newton(data) is lp(data)
    for entry in (*newton.log, *lp.log):
        if entry.separable:
            assert entry.certificate >= settings.SEP_MARGIN_TOL
        else:
            assert entry.certificate <= settings.SEP_MARGIN_TOL
    assert newton.log[0].iterations > 0 and lp.log[0].iterations == 0
    with pytest.raises(InvalidDataError, match="method must be one of"):
        ntp.TimedSeparability("simplex")


def test_when_the_newton_continuation_ends_undecided_the_lp_decides(monkeypatch):
    from ntpnb.errors import SolverError
    from ntpnb.linear.experiments import _text as text

    def undecided(data):  # a margin too small for the continuation's systems
        raise SolverError("could not decide")

    monkeypatch.setattr(text, "decide_by_newton", undecided)
    data = _joint_text(20, 8)
    decide = ntp.TimedSeparability()
    assert decide(data) is ntp.is_separable(data, method="lp") is False
    (entry,) = decide.log
    assert entry.method.endswith("after the Newton continuation ended undecided")
    assert entry.certificate <= settings.SEP_MARGIN_TOL and entry.iterations == 0


def test_a_certificate_found_on_some_contexts_holds_for_all_of_them():
    data = _joint_text(20, 5)
    longest = np.flatnonzero(np.arange(data.m) >= data.m // 2)
    cert = ntp.certify_on_contexts(data, longest)
    assert cert is not None and cert.bound <= settings.SEP_MARGIN_TOL
    np.testing.assert_array_equal(cert.contexts, longest)
    assert not ntp.is_separable(data, method="lp")
    # two contexts alone are separable at d = 5: nothing follows for the whole problem
    assert ntp.certify_on_contexts(data, np.array([0, 1])) is None
    for bad in (np.array([0, 0]), np.array([], dtype=int), np.array([0.0, 1.0]), np.array([data.m])):
        with pytest.raises(InvalidDataError, match="contexts must"):
            ntp.certify_on_contexts(data, bad)


def test_length_slice_keeps_the_joint_embeddings():
    windows = ntp.sliding_windows([0, 1, 2, 1, 0, 2, 2, 1, 0, 1, 1, 2], 4)
    joint = ntp.prefix_contexts(windows, 3)
    at = ntp.length_slice(joint, 2, seed=0)
    full = ntp.joint_ntp_data(joint, 6, 0)
    np.testing.assert_array_equal(at(6).H, full.H[joint.lengths == 2])
    assert at(6).m == joint.m_by_length()[2]


def test_an_ambiguous_probe_counts_as_not_separable_and_is_logged_so(monkeypatch):
    """A slice separable only by a margin float64 cannot carry (W^mm out of reach): the search's
    threshold is the smallest d that float64 certifies, and the log says which probe was ambiguous."""
    from ntpnb.errors import NumericallyAmbiguousError, SolverError
    from ntpnb.linear.experiments import _text as text

    decide_by_newton, decide_separability = text.decide_by_newton, text.decide_separability

    def undecided_at_8(data):  # the continuation ends undecided, the LP takes over
        if data.d == 8:
            raise SolverError("could not decide")
        return decide_by_newton(data)

    def ambiguous_at_8(data, method="auto"):
        if data.d == 8:
            raise NumericallyAmbiguousError(
                "separable in exact arithmetic, but W^mm is beyond float64's reach"
            )
        return decide_separability(data, method)

    monkeypatch.setattr(text, "decide_by_newton", undecided_at_8)
    monkeypatch.setattr(text, "decide_separability", ambiguous_at_8)
    decide = ntp.TimedSeparability()
    assert decide(_joint_text(20, 8)) is False
    (entry,) = decide.log
    assert entry.ambiguous and entry.method == "ambiguous" and math.isnan(entry.certificate)
    assert decide(_joint_text(20, 40)) is True and not decide.log[-1].ambiguous
