"""What made chapters stop at seeds they were never run at, fixed: each instance rebuilt from its seed.

* A primal-dual active-set run that oscillates (most random instances with ``m = 2 d``) settles at
  a larger proximal weight; the old method stopped ("did not converge in 100 iterations").
* A Gram block that a joining row makes singular is not "updated" into a bogus inverse (chapter 6
  at seed 106: the exact equations of the right active set failed their verification forever).
* When the active-set method fails, the cvxpy reference answers, verified, and says so (chapter 5
  at seed 7: the nested-vs-independent comparison stopped on a separable instance of margin 1.5e-5).
* A sweep's numerically ambiguous draw is replaced and counted, never raised (chapter 5 at seed 100).
"""

from __future__ import annotations

import numpy as np
import pytest

import ntpnb as ntp
from ntpnb import settings
from ntpnb.errors import GenerationError, NumericallyAmbiguousError, SolverError
from ntpnb.linear import _active_set as active_set
from ntpnb.linear import _condition_thresholds as condition_thresholds
from ntpnb.linear import _gram_blocks as gram_blocks
from ntpnb.linear._active_set import SOLVER_NAME as FAST_SOLVER_NAME
from ntpnb.linear._condition_thresholds import condition_trial, decided_draw, nested_instance, nested_trial
from ntpnb.linear._ntp_data import normalized


def sweep_generator(seed: int, n_points: int, point: int, trial: int) -> np.random.Generator:
    """The generator of one trial of ``run_sweep``/``nested_sweep`` (``ntpnb._parallel``'s spawning)."""
    return np.random.default_rng(np.random.SeedSequence(seed).spawn(n_points)[point].spawn(trial + 1)[trial])


def chapter5_seed7_instance() -> ntp.NTPData:
    """Chapter 5 at seed 7, paper profile: the independent draw of (V, S, d) = (2, 1, 15) that stopped it.

    Trial 1 of the comparison's first point, ``run_sweep(condition_trial, ..., seed=7 + 6)``:
    separable with normalized margin 1.5e-5, ``W^mm`` just beyond the reach check.
    """
    return ntp.random_instance(30, 15, 2, 1, sweep_generator(13, 1, 0, 1))


def chapter5_seed100_draw() -> tuple[dict, np.random.Generator]:
    """Chapter 5 at seed 100: the nested draw (V, S) = (10, 6), trial 5, ambiguous at d = 24."""
    point = {"m": 30, "V": 10, "S": 6, "d": tuple(range(1, 37))}
    return point, sweep_generator(100, 6, 5, 5)


# ---------------------------------------------------------------------------- the active-set method
def test_an_oscillating_active_set_run_settles_at_a_larger_proximal_weight(monkeypatch):
    """A random instance with m = 2 d: at the first proximal weight the method's run oscillates
    (the old method: "did not converge in 87 iterations"); at a larger weight it settles, and the
    answer is the verified W^mm that the cvxpy reference finds too."""
    data = ntp.random_instance(40, 20, 6, 2, np.random.default_rng(2))
    failed = []
    run = active_set._Subproblem.pdas

    def counted(self, active, max_iter):
        try:
            return run(self, active, max_iter)
        except active_set._RunFailedError:
            failed.append(self.ridge)
            raise

    monkeypatch.setattr(active_set._Subproblem, "pdas", counted)
    sol = active_set.solve_active_set(normalized(data)[0])
    assert failed, "no run failed: the instance no longer exercises the larger weight"
    assert sol.passes() and sol.solver == FAST_SOLVER_NAME
    ref = ntp.solve_ntp_svm(data, method="cvxpy")
    scaled = ntp.solve_ntp_svm(data)
    np.testing.assert_allclose(scaled.W, ref.W, atol=1e-7 * np.abs(ref.W).max())


def test_a_run_that_fails_at_the_largest_weight_ends_the_method(monkeypatch):
    monkeypatch.setattr(settings, "ACTIVE_SET_PROX_CEILING", settings.ACTIVE_SET_PROX_RIDGE)
    data = ntp.random_instance(40, 20, 6, 2, np.random.default_rng(2))
    with pytest.raises(SolverError, match="failed at its largest weight"):
        active_set.solve_active_set(normalized(data)[0])


def test_a_block_made_singular_by_a_joining_row_is_not_updated():
    """Eight contexts in eight dimensions, then a ninth: the bordered block is singular, and its
    one-row Schur complement is rounding alone. The old update accepted it (9 of these 20 draws)."""
    for seed in range(20):
        rng = np.random.default_rng(seed)
        H = rng.standard_normal((12, 8)) / np.sqrt(8)
        K = H @ H.T
        old = gram_blocks.gram_block(K, H, np.arange(8))
        assert gram_blocks.update_block(K, old, np.arange(9), 0.0) is None
        kept = gram_blocks.update_block(K, gram_blocks.gram_block(K, H, np.arange(6)), np.arange(7), 0.0)
        np.testing.assert_allclose(kept.P @ K[:7, :7], np.eye(7), atol=1e-9)  # a resolved one is


# ---------------------------------------------------------------------------- the verified fallback
def test_the_reference_answers_when_the_active_set_method_fails_on_a_chapter_instance():
    data = chapter5_seed7_instance()
    with pytest.raises(SolverError):
        active_set.solve_active_set(normalized(data)[0])
    sol = ntp.solve_ntp_svm(data)
    assert sol.solver == settings.QP_SOLVER and sol.passes()
    assert "active-set method" in sol.fallback_from
    assert ntp.is_separable(data)  # the reach check's NTP-SVM is the same verified fallback


def test_both_failures_are_named_when_the_fallback_fails_too(monkeypatch):
    def fail(data, max_iter=settings.ACTIVE_SET_MAX_ITER):
        raise SolverError("the active-set method cycled after 3 iterations (simulated)")

    def fail_too(cons, infeasible):
        raise SolverError("CLARABEL returned status 'optimal_inaccurate' on the NTP-SVM (simulated)")

    monkeypatch.setattr(active_set, "solve_active_set", fail)
    monkeypatch.setattr(active_set, "solve_reference", fail_too)
    data = ntp.random_instance(8, 10, 6, 3, np.random.default_rng(12))
    with pytest.raises(SolverError, match=r"cycled after 3 .*; and the fallback: CLARABEL returned"):
        ntp.solve_ntp_svm(data)


# ---------------------------------------------------------------------------- ambiguous draws
def test_a_chapter_draw_that_is_ambiguous_is_replaced_and_counted_in_its_sweep():
    """The draw that stopped chapter 5 at seed 100: separable with margin 1.2e-5, W^mm beyond
    float64's reach by every method. Its sweep counts it and goes on with a fresh draw."""
    point, rng = chapter5_seed100_draw()
    draw = nested_instance(30, 36, 10, 6, chapter5_seed100_draw()[1])  # the same draw
    with pytest.raises(NumericallyAmbiguousError, match="beyond float64's reach"):
        ntp.is_separable(draw.at(24))
    trial = nested_trial(point, rng)
    assert trial.ambiguous >= 1
    assert 0 <= trial.separable_from < len(point["d"])


@pytest.fixture
def ambiguous_first(monkeypatch):
    """``is_separable`` of the sweeps raises NumericallyAmbiguousError at its first call only."""
    calls = []
    decide = condition_thresholds.is_separable

    def first_ambiguous(data):
        calls.append(data)
        if len(calls) == 1:
            raise NumericallyAmbiguousError("NTP-separability is numerically ambiguous (simulated)")
        return decide(data)

    monkeypatch.setattr(condition_thresholds, "is_separable", first_ambiguous)
    return calls


def test_condition_trial_replaces_an_ambiguous_draw_by_the_next_one(ambiguous_first):
    point = {"m": 10, "d": 6, "V": 5, "S": 2}
    rng = np.random.default_rng(0)
    got = condition_trial(point, rng)
    assert got["ambiguous"] == 1
    replay = np.random.default_rng(0)
    ntp.random_instance(10, 6, 5, 2, replay)  # the draw that was ambiguous
    second = ntp.random_instance(10, 6, 5, 2, replay)
    assert got["separable"] == ntp.is_separable(second) and got["compatible"] == ntp.is_compatible(second)
    assert np.array_equal(ambiguous_first[1].H, second.H)


def test_nested_trial_replaces_an_ambiguous_draw_by_the_next_one(ambiguous_first, monkeypatch):
    point = {"m": 10, "V": 5, "S": 2, "d": (2, 4, 6, 8, 10, 12)}
    got = nested_trial(point, np.random.default_rng(0))
    monkeypatch.undo()
    replay = np.random.default_rng(0)
    nested_instance(10, 12, 5, 2, replay)
    expected = nested_trial(point, replay)  # the search on the second draw alone
    assert got.ambiguous == 1 and expected.ambiguous == 0
    assert (got.separable_from, got.compatible_from) == (expected.separable_from, expected.compatible_from)


def test_decided_draw_gives_up_after_its_redraws():
    def always():
        raise NumericallyAmbiguousError("ambiguous (simulated)")

    with pytest.raises(GenerationError, match=f"{settings.SWEEP_MAX_REDRAWS + 1} draws in a row"):
        decided_draw(always, "a test sweep")
    assert decided_draw(lambda: 3, "a test sweep") == (3, 0)
