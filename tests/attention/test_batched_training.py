"""Batched training (ntpnb.attention._batched_training): trials split in chunks train bit for bit as one
batched run."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from benchmarks.attention import trial_problems
from ntpnb import _optim as optim
from ntpnb.attention import _batched_training as batched_training
from ntpnb.attention import stack_problems, train, train_trials
from ntpnb.attention._engine import compiled_step
from ntpnb.attention._paper_experiments import initial_weights
from ntpnb.errors import InvalidDataError


def _chunks(monkeypatch, n_chunks):
    """Split the trials as ``n_chunks`` workers would (run here one after another)."""
    monkeypatch.setattr(batched_training, "active_workers", lambda: n_chunks)


def test_train_trials_from_w0_in_chunks_is_bit_for_bit_one_batched_run(monkeypatch):
    problems = trial_problems("general", 5)
    W0 = initial_weights("uniform", 5, 8, seed=1)
    opt, grid = optim.normalized_gd(0.01), optim.log_grid(300, 10)
    whole = train(stack_problems(problems), opt, 300, W0=W0, record=lambda W: {"iterates": W}, record_at=grid)
    _chunks(monkeypatch, 3)
    chunked = train_trials(problems, opt, 300, record_at=grid, W0=W0)
    np.testing.assert_array_equal(chunked.iterates, whole.iterates)
    np.testing.assert_array_equal(chunked.W, whole.W)
    with pytest.raises(InvalidDataError, match="W0"):
        train_trials(problems, opt, 10, W0=W0[:2])


@pytest.mark.parametrize("n_chunks", [2, 3, 7])
def test_training_in_chunks_is_bit_for_bit_one_batched_run(n_chunks, monkeypatch):
    """The split of the trials among workers changes nothing, not even the rounding.

    On general data normalized GD amplifies rounding (benchmarks/attention.py): two runs whose
    starts differ by 1e-15 are ~7e-4 apart (relative) after 2000 steps: only equal arithmetic passes.
    """
    problems = trial_problems("general", 7)
    opt, grid = optim.normalized_gd(0.01), optim.log_grid(2000, 20)
    whole = train(stack_problems(problems), opt, 2000, record=lambda W: {"iterates": W}, record_at=grid)
    _chunks(monkeypatch, n_chunks)
    chunked = train_trials(problems, opt, 2000, record_at=grid)
    np.testing.assert_array_equal(chunked.iterations, whole.iterations)
    np.testing.assert_array_equal(chunked.iterates, whole.iterates)
    np.testing.assert_array_equal(chunked.W, whole.W)


def test_train_trials_rejects_bad_input():
    with pytest.raises(InvalidDataError, match="no problems"):
        train_trials([], optim.normalized_gd(0.01), 10)


def test_the_compiled_or_numpy_path_is_decided_once_for_all_trials(monkeypatch):
    """A trial's floats do not depend on the trials that share its chunk.

    The compiled step and the numpy gradient agree only to rounding, which normalized GD amplifies;
    one trial here has no compiled step (distinct embeddings in every position), so a chunk that
    holds it would run on numpy and a chunk without it compiled, were the path decided per chunk.
    """
    problems = trial_problems("general", 4)
    last = problems[3]
    noise = 1e-3 * np.random.default_rng(0).standard_normal(last.emb.shape)
    problems[3] = dataclasses.replace(last, emb=last.emb + noise)
    assert compiled_step(problems[3]) is None and compiled_step(stack_problems(problems[:2])) is not None
    opt, grid = optim.normalized_gd(0.01), optim.log_grid(2000, 20)
    _chunks(monkeypatch, 1)
    whole = train_trials(problems, opt, 2000, record_at=grid)
    _chunks(monkeypatch, 2)
    chunked = train_trials(problems, opt, 2000, record_at=grid)
    np.testing.assert_array_equal(chunked.iterates, whole.iterates)
