"""The batched experiments of Figs. 3-6 at toy scale: shapes, references, and trial independence."""

from __future__ import annotations

import numpy as np
import pytest

from ntpnb.attention import global_experiment, local_experiment
from ntpnb.errors import InvalidDataError


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
