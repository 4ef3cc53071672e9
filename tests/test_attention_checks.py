"""The measurements chapter 6 makes with Paper B's model: convexity probes, the authors' filter,
means over trials and the trials that carry them."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ntpnb import attention as att
from ntpnb.errors import InvalidDataError


@pytest.fixture(scope="module")
def general():
    rng = np.random.default_rng(0)
    E = att.random_embeddings(6, 8, rng)
    data = att.as_token_data(*att.general_dataset(6, 6, 4, rng), 6)
    return E, data


def test_midpoint_gaps_tell_the_convex_risk_from_the_nonconvex_one(general):
    E, data = general
    convex = att.make_problem(E, att.identity_head(E), data)
    squared = att.make_problem(E, att.tied_head(E), data, "squared", "argmax")
    rng = np.random.default_rng(1)
    assert att.midpoint_gaps(convex, 100, 3.0, rng).max() <= 1e-12  # Lemma 3
    assert att.midpoint_gaps(squared, 100, 3.0, rng).max() > 1e-3  # the test has teeth


def test_midpoint_gaps_are_the_definition_on_one_pair(general):
    E, data = general
    prob = att.make_problem(E, att.identity_head(E), data)
    gaps = att.midpoint_gaps(prob, 1, 2.0, np.random.default_rng(5))
    again = np.random.default_rng(5)
    W1, W2 = 2.0 * again.standard_normal((1, 8, 8)), 2.0 * again.standard_normal((1, 8, 8))
    value = lambda W: att.loss_value(W, prob)[0]
    assert gaps[0] == pytest.approx(value((W1 + W2) / 2) - (value(W1) + value(W2)) / 2, abs=1e-14)


def test_second_differences_along_s_cyc_are_positive(general):
    E, data = general
    cyc = att.solve_cyclic_correction(E, data, att.token_priority_graphs(data))
    assert cyc.dim > 0
    prob = att.make_problem(E, att.identity_head(E), cyc.subdataset.data)
    second = att.second_differences(prob, cyc.basis, 20, np.random.default_rng(2))
    assert second.shape == (20,) and second.min() > 0


def test_mean_and_error_is_the_standard_error_of_the_mean():
    x = np.random.default_rng(3).standard_normal(40)
    mean, se = att.mean_and_error(x)
    assert mean == pytest.approx(x.mean()) and se == pytest.approx(stats.sem(x))
    with pytest.raises(InvalidDataError, match="at least 2"):
        att.mean_and_error(np.ones(1))


def test_largest_carrying_names_the_trials_that_make_the_sum():
    values = np.array([0.0, 5.0, 1.0, 40.0, 2.0, 52.0])
    carrying = att.largest_carrying(values, 0.9)
    np.testing.assert_array_equal(carrying, [5, 3])  # 92 of 100
    assert values[carrying].sum() >= 0.9 * values.sum()
    assert att.largest_carrying(np.zeros(4)).size == 0


def test_the_authors_filter_and_final_means():
    r = att.local_experiment("ce", K=8, d=8, n=4, T=6, n_trials=3, lr=0.1, n_iter=100, seed=2, threshold=1e-2)
    best = np.maximum(r.corr_local[-1], r.corr_combined)
    np.testing.assert_array_equal(r.kept(2.0), r.local_svm_norm == 0)  # nothing reaches 2
    np.testing.assert_array_equal(r.kept(-2.0), np.ones(3, bool))
    np.testing.assert_array_equal(r.kept(0.5), ~((best < 0.5) & (r.local_svm_norm > 0)))
    assert r.final_mean("corr_local") == r.corr_local[-1].mean()
