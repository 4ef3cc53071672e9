"""The end states that chapter 8's maps of Paper B measure (``acyclic_end``, ``local_end``): shapes,
determinism by seed, the same numbers as chapter 7's experiments at the paper's protocol, the
fallback where a gradient underflows, and refusals of bad input."""

from __future__ import annotations

import numpy as np
import pytest

from ntpnb import _optim as optim
from ntpnb.attention import acyclic_end, global_experiment, local_end, local_experiment
from ntpnb.errors import InvalidDataError, SolverError

FIG3 = dict(K=8, d=8, n=4, T=6)  # Paper B's Fig. 3 (and Fig. 5's sizes)
#: Chapter 7's protocol for Fig. 5 (the authors' settings).
AUTHORS = dict(init="uniform", threshold=0.01, exclusion_band=0.001, step_eps=optim.AUTHORS_NGD_EPS)
TINY = dict(K=4, d=4, n=2, T=3)  # an instance whose attention saturates float64 within 200 steps


def test_acyclic_end_shapes_and_the_seeds_rows():
    r = acyclic_end(lr=0.01, **FIG3, n_trials=3, n_iter=50, seeds=[4, 1])
    assert isinstance(r, optim.Trace) and r.seeds == (4, 1)
    assert set(r.values) == {"corr", "norm_ratio", "stalled"}
    assert all(v.shape == (2, 3) for v in r.values.values())
    assert set(r.at(1).values) == set(r.values) and r.at(1).corr.shape == (3,)
    np.testing.assert_array_equal(r.at(4).corr, r.corr[0])
    assert not r.corr.flags.writeable  # read-only: cached by the chapter's maps


def test_acyclic_end_is_the_paper_protocol_of_chapter_7_bit_for_bit():
    """B8's numbers: the final corr and norm of ``global_experiment("acyclic")`` at each seed."""
    kw = dict(lr=0.01, n_iter=300)
    r = acyclic_end(**FIG3, **kw, n_trials=4, seeds=[0, 3])
    for seed in (0, 3):
        g = global_experiment("acyclic", **FIG3, **kw, n_trials=4, seed=seed, init="uniform")
        np.testing.assert_array_equal(r.at(seed).corr, g.corr[-1])
        np.testing.assert_array_equal(r.at(seed).norm_ratio, g.norm[-1] / (0.01 * 300))
        assert not r.at(seed).stalled.any()


def test_acyclic_end_is_deterministic_and_each_seed_independent_of_the_others():
    kw = dict(lr=0.03, **FIG3, n_trials=3, n_iter=200)
    both = acyclic_end(**kw, seeds=[2, 5])
    again = acyclic_end(**kw, seeds=[2, 5])
    alone = acyclic_end(**kw, seeds=[5])
    for name in both.values:
        np.testing.assert_array_equal(getattr(both, name), getattr(again, name))
        np.testing.assert_array_equal(getattr(both.at(5), name), getattr(alone.at(5), name))
    other = acyclic_end(**{**kw, "init": "zero"}, seeds=[2])  # W(0) = 0: other numbers
    assert not np.array_equal(other.at(2).corr, both.at(2).corr)


def test_acyclic_end_stops_a_trial_whose_gradient_underflowed_where_the_exact_rule_fails():
    """A step of 3 saturates the softmax of trial 0 to float64 within 300 steps: its gradient is 0."""
    kw = dict(lr=3.0, **TINY, n_trials=4, n_iter=300, seeds=[0])
    with pytest.raises(SolverError, match="zero gradient"):
        acyclic_end(**kw, step_eps=0.0)  # exact normalization: the step is undefined there
    r = acyclic_end(**kw)
    stalled = r.at(0).stalled
    assert stalled[0] and not stalled[1:].all()
    # the stopped trial is aligned with W^mm, and its norm stopped growing
    assert r.at(0).corr[0] > 0.9999 and r.at(0).norm_ratio[0] < 0.9
    # below the underflow the default rule is the exact one: the same floats
    short = dict(kw, n_iter=100)
    np.testing.assert_array_equal(acyclic_end(**short).corr, acyclic_end(**short, step_eps=0.0).corr)


@pytest.mark.parametrize("loss", ["squared_softmax", "squared"])
def test_local_end_is_chapter_7s_fig5_protocol_bit_for_bit(loss):
    """B10's numbers under either loss: ``local_experiment``'s final values, per seed."""
    kw = dict(lr=0.1, n_iter=150, **AUTHORS)
    r = local_end(loss, **FIG3, **kw, n_trials=3, seeds=[1, 0])
    assert set(r.values) == {"corr_local", "corr_global", "nonempty", "dist_local"}
    assert all(v.shape == (2, 3) for v in r.values.values())
    for seed in (0, 1):
        e = local_experiment(loss, **FIG3, **kw, n_trials=3, seed=seed)
        got = r.at(seed)
        np.testing.assert_array_equal(got.corr_local, e.corr_local[-1])
        np.testing.assert_array_equal(got.corr_global, e.corr_global[-1])
        np.testing.assert_array_equal(got.nonempty, e.subset_sizes > 0)
        np.testing.assert_array_equal(got.dist_local, e.dist_local[-1])


def test_local_end_more_samples_give_pseudo_cycles_under_the_text_loss():
    """A case whose answer chapter 7 shows: with the text's loss the pseudo sub-datasets are not
    empty (B10's second protocol); an empty one has distance 0."""
    r = local_end("squared", **{**FIG3, "n": 8}, lr=0.1, n_iter=300, n_trials=6, seeds=[0], **AUTHORS)
    got = r.at(0)
    assert got.nonempty.any()
    assert np.all(got.dist_local[~got.nonempty] == 0)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"seeds": []}, "non-empty list of distinct seeds"),
        ({"seeds": [1, 1]}, "distinct seeds"),
        ({"seeds": [-1]}, "seed"),
        ({"seeds": 3}, "seeds"),
        ({"lr": 0.0}, "learning rate must be positive"),
        ({"lr": float("nan")}, "learning rate must be positive"),
        ({"n_iter": 0}, "n_iter"),
        ({"T": 9}, "distinct tokens"),
        ({"init": "normal"}, "unknown initialization"),
    ],
)
def test_acyclic_end_refuses_bad_input(change, message):
    kw = dict(lr=0.01, **FIG3, n_trials=2, n_iter=5, seeds=[0])
    with pytest.raises(InvalidDataError, match=message):
        acyclic_end(**{**kw, **change})


@pytest.mark.parametrize(
    ("loss", "change", "message"),
    [
        ("cubic", {}, "cubic"),
        ("squared", {"seeds": [0, 0]}, "distinct seeds"),
        ("squared", {"lr": -0.1}, "learning rate must be positive"),
        ("squared", {"n_trials": 0}, "n_trials"),
    ],
)
def test_local_end_refuses_bad_input(loss, change, message):
    kw = dict(lr=0.1, **FIG3, n_trials=2, n_iter=5, seeds=[0], **AUTHORS)
    with pytest.raises(InvalidDataError, match=message):
        local_end(loss, **{**kw, **change})


def test_seed_trials_refuses_a_seed_not_run():
    r = acyclic_end(lr=0.01, **FIG3, n_trials=2, n_iter=5, seeds=[0, 1])
    with pytest.raises(InvalidDataError, match=r"seed 7 was not run; the seeds run: \[0, 1\]"):
        r.at(7)
