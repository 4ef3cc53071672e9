"""Regression tests for the adversarial inputs of issue 11 (wrong answers found by hostile input).

Each reproducer of the issue is one test here; the property-based tests over random instances
and scales are in tests/test_properties.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import ntpnb as ntp
from ntpnb import settings
from ntpnb.errors import SolverError
from ntpnb.linear.constraints import ntp_constraints
from ntpnb.linear.svm import _separability

from helpers import random_data


# ----------------------------------------------------------------------- 5. the separability LP
@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_phase_diagram_sized_instances_are_decided_with_a_certificate(seed):
    """Issue 11, item 5: m = 100, d = 16, V = 100, S = 4 (9600 inequalities). The old feasibility
    LP ran for minutes (seed 1) or failed with status 4 (seed 0); both are not separable."""
    data = ntp.synthetic_instance(n=500, m=100, d=16, V=100, S=4, seed=seed)
    sep = _separability(data)
    assert not sep.separable
    assert sep.dual_bound <= settings.SEP_MARGIN_TOL  # the multipliers certify it
    assert not ntp.is_separable(data)


def test_overparameterized_data_are_separable_without_an_lp():
    """d >= m (Lemma 1): the least-squares direction is verified, no LP is solved; all its
    margins are equal."""
    data = random_data(m=6, d=9, V=7, S=3, seed=1)
    sep = _separability(data)
    assert sep.separable and sep.method == "least squares"
    W = ntp.separating_direction(data)
    cons = ntp_constraints(data)
    np.testing.assert_allclose(cons.ineq @ W.ravel(), 1.0, rtol=1e-12)
    assert np.abs(cons.eq @ W.ravel()).max() < 1e-12


def test_separable_data_below_d_equals_m_are_certified_by_the_lp():
    data = ntp.synthetic_instance(n=500, m=30, d=20, V=30, S=3, seed=2)
    sep = _separability(data)
    assert sep.separable and sep.method == settings.LP_METHOD
    # an interior point of the optimal face: its margin is within the IPM's tolerance of t*
    assert sep.margin == pytest.approx(sep.dual_bound, rel=1e-6)
    W = ntp.separating_direction(data)
    cons = ntp_constraints(data)
    margins = cons.ineq @ W.ravel()
    assert margins.min() == pytest.approx(1.0, rel=1e-12)
    assert np.abs(cons.eq @ W.ravel()).max() < settings.LP_FEAS_TOL


def test_undecidable_data_raise_a_solver_error_that_says_what_to_do(monkeypatch):
    """No method can prove a margin below a tolerance of 0; the error names the remedies."""
    monkeypatch.setattr(settings, "SEP_MARGIN_TOL", 0.0)
    monkeypatch.setattr(settings, "LP_FALLBACK_METHODS", ())
    data = ntp.NTPData(H=[[1.0], [2.0]], pi=[0.5, 0.5], P=[[0.6, 0.4, 0.0], [0.0, 0.4, 0.6]])
    with pytest.raises(SolverError, match=r"could not decide NTP-separability.*LP_METHOD"):
        ntp.is_separable(data)


def test_a_failing_lp_method_falls_back_to_the_next(monkeypatch):
    monkeypatch.setattr(settings, "LP_METHOD", "highs-ipm")
    monkeypatch.setattr(settings, "LP_OPTIONS", {"highs-ipm": {"presolve": False, "maxiter": 1}})
    data = ntp.NTPData(H=[[1.0], [2.0]], pi=[0.5, 0.5], P=[[0.6, 0.4, 0.0], [0.0, 0.4, 0.6]])
    sep = _separability(data)
    assert not sep.separable and sep.method == "highs-ds"
