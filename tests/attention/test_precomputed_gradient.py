"""The training gradient (ntpnb.attention.precomputed_gradient: token table, positions first)
against the reference gradient."""

from __future__ import annotations

import numpy as np
import pytest

from ntpnb import optim
from ntpnb.attention import (
    acyclic_dataset,
    as_token_data,
    general_dataset,
    gradient_function,
    graph_svm,
    identity_head,
    make_problem,
    random_embeddings,
    stack_problems,
    train,
)
from ntpnb.attention.model import gradient

from attention_instances import CASES, stacked_problem


def _stacked(loss, head):
    """Trials of different n and T, so the stack has padded samples and positions."""
    return stacked_problem(loss, head)


def _rel(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


@pytest.mark.parametrize(("loss", "head"), CASES)
@pytest.mark.parametrize("scale", [0.0, 1.0, 30.0])
def test_training_gradient_equals_the_reference_to_rounding(loss, head, scale):
    prob = _stacked(loss, head)
    W = scale * np.random.default_rng(1).standard_normal((prob.B, prob.d, prob.d))
    ref = gradient(W, prob)
    fast = gradient_function(prob)(W)
    assert _rel(fast, ref) < 1e-12
    for b in range(prob.B):  # every trial, not just the largest
        assert np.linalg.norm(fast[b] - ref[b]) <= 1e-12 * np.linalg.norm(ref[b])


def test_log_loss_with_unequal_gamma_on_the_label_positions():
    """A head with ``c_y^T x_t`` positive but different for different tokens: the second term."""
    problems = []
    for seed in range(3):
        E = np.abs(random_embeddings(6, 8, seed))  # nonnegative: c_y^T x_t > 0 with C = E
        E /= np.linalg.norm(E, axis=1, keepdims=True)
        X, y = general_dataset(6, 5, 4, seed + 20)
        problems.append(make_problem(E, E, as_token_data(X, y, 6), "log", "none"))
    prob = stack_problems(problems)
    gamma = np.exp(prob.log_gamma[np.isfinite(prob.log_gamma)])
    assert np.ptp(gamma) > 0.1  # the case the identity head never reaches
    for scale in (0.0, 1.0, 20.0):
        W = scale * np.random.default_rng(2).standard_normal((prob.B, prob.d, prob.d))
        assert _rel(gradient_function(prob)(W), gradient(W, prob)) < 1e-12


@pytest.mark.parametrize("scale", [30.0, 200.0])
def test_saturated_log_loss_training_gradient_keeps_relative_accuracy(scale):
    """Along ``s W^mm`` the gradient is ~exp(-s): it must not be rounding noise in either form."""
    E = random_embeddings(8, 8, 7)
    X, y, _ = acyclic_dataset(8, 4, 6, 8)
    data = as_token_data(X, y, 8)
    prob = make_problem(E, identity_head(E), data)
    W = scale * graph_svm(E, data)[None]
    ref = gradient(W, prob)
    assert 0 < np.linalg.norm(ref) < 1e-3
    assert np.linalg.norm(gradient_function(prob)(W) - ref) <= 1e-12 * np.linalg.norm(ref)


def test_many_distinct_vectors_fall_back_to_the_reference():
    E = random_embeddings(6, 3, 0)  # 6 distinct vectors: a 6 x 6 table > n T d = 18 scores
    prob = make_problem(
        E, E, as_token_data(np.array([[0, 1, 2], [3, 4, 5]]), np.array([0, 3]), 6), "squared", "none"
    )
    W = np.random.default_rng(0).standard_normal((1, 3, 3))
    assert np.array_equal(gradient_function(prob)(W), gradient(W, prob))


def test_training_runs_on_the_training_gradient():
    prob = _stacked("log", "identity")
    opt = optim.normalized_gd(0.05)
    trace = train(prob, opt, 30, record_at=np.array([30]))
    W = np.zeros((prob.B, prob.d, prob.d))
    for _ in range(30):
        g = gradient(W, prob)
        W = W - 0.05 * g / np.linalg.norm(g, axis=(1, 2), keepdims=True)
    assert _rel(trace.W, W) < 1e-12
