"""The batched experiments of Figs. 3-6 at toy scale: shapes, references, trial independence, and
the same results on every joblib backend."""

from __future__ import annotations

import dataclasses

import joblib
import numpy as np
import pytest

from benchmarks.attention import trial_problems
from ntpnb import optim
from ntpnb.attention import global_experiment, local_experiment, stack_problems, train, train_trials
from ntpnb.errors import InvalidDataError

GENERAL = dict(K=6, d=8, n=6, T=4)


def assert_same_results(a, b):
    """Every field of two experiment results equal bit for bit."""
    for field in dataclasses.fields(a):
        np.testing.assert_array_equal(getattr(a, field.name), getattr(b, field.name), err_msg=field.name)


def test_global_experiment_shapes_and_references():
    r = global_experiment("general", K=6, d=8, n=6, T=4, n_trials=3, lr=0.01, n_iter=300, seed=0)
    assert r.corr.shape == (r.iterations.size, 3) and r.W.shape == (3, 8, 8)
    assert np.all(r.cyc_dims > 0) and np.all(np.abs(r.svm_gaps) < 1e-7)
    # W^mm is orthogonal to W^cyc in every trial (Lemma 2), and the GD reference is near W^cyc
    assert np.all(np.abs(np.sum(r.W_mm * r.W_cyc, axis=(1, 2))) < 1e-9)
    assert r.corr[-1].mean() > r.corr[1].mean()
    # trial independence: the first trial alone gives the same curves
    alone = global_experiment("general", K=6, d=8, n=6, T=4, n_trials=1, lr=0.01, n_iter=300, seed=0)
    np.testing.assert_allclose(alone.corr[:, 0], r.corr[:, 0], rtol=1e-9)


def test_acyclic_experiment_has_no_cyclic_part():
    r = global_experiment("acyclic", K=8, d=8, n=4, T=6, n_trials=2, lr=0.01, n_iter=100, seed=1)
    assert np.all(r.cyc_dims == 0) and np.all(r.cyc_dist == 0)


@pytest.mark.parametrize("loss", ["squared", "ce"])
def test_local_experiment_runs(loss):
    r = local_experiment(loss, K=8, d=8, n=4, T=6, n_trials=2, lr=0.1, n_iter=200, seed=2)
    assert r.corr_local.shape == r.corr_global.shape == (r.iterations.size, 2)
    assert np.all(np.isfinite(r.dist_local)) and np.all(r.n_selected >= 1)


def test_unknown_kind_raises():
    with pytest.raises(InvalidDataError, match="kind"):
        global_experiment("cyclic", K=6, d=8, n=6, T=4, n_trials=1, lr=0.01, n_iter=10, seed=0)


@pytest.mark.parametrize("n_chunks", [2, 3, 7])
def test_training_in_chunks_is_bit_for_bit_one_batched_run(n_chunks):
    """The split of the trials among workers changes nothing, not even the rounding.

    On general data normalized GD amplifies rounding (benchmarks/attention.py): two runs whose
    starts differ by 1e-15 are ~7e-4 apart (relative) after 2000 steps: only equal arithmetic passes.
    """
    problems = trial_problems("general", 7)
    opt, grid = optim.normalized_gd(0.01), optim.log_grid(2000, 20)
    whole = train(stack_problems(problems), opt, 2000, record=lambda W: {"W": W}, record_at=grid)
    chunked = train_trials(problems, opt, 2000, record_at=grid, n_chunks=n_chunks)
    np.testing.assert_array_equal(chunked.iterations, whole.iterations)
    np.testing.assert_array_equal(chunked["W"], whole["W"])
    np.testing.assert_array_equal(chunked.W, whole.W)


def test_train_trials_rejects_bad_input():
    with pytest.raises(InvalidDataError, match="no problems"):
        train_trials([], optim.normalized_gd(0.01), 10)
    with pytest.raises(InvalidDataError, match="n_chunks"):
        train_trials(trial_problems("general", 1), optim.normalized_gd(0.01), 10, n_chunks=0)


def test_global_experiment_is_the_same_on_processes_and_on_a_dask_cluster(dask_client):
    run = lambda: global_experiment("general", **GENERAL, n_trials=5, lr=0.01, n_iter=1500, seed=4)
    serial = run()
    with joblib.parallel_config(backend="loky", n_jobs=2):
        processes = run()
    with joblib.parallel_config(backend="dask"):
        cluster = run()
    assert_same_results(serial, processes)
    assert_same_results(serial, cluster)


def test_local_experiment_is_the_same_on_processes():
    run = lambda: local_experiment("ce", K=8, d=8, n=4, T=6, n_trials=4, lr=0.1, n_iter=300, seed=5)
    serial = run()
    with joblib.parallel_config(backend="loky", n_jobs=2):
        assert_same_results(serial, run())
