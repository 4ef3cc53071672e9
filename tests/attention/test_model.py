"""The attention model: heads, losses, analytic gradients against finite differences, batching."""

from __future__ import annotations

import numpy as np
import pytest

from ntpnb import _optim as optim
from ntpnb import settings
from ntpnb._reproducible_products import matvec, vecmat
from ntpnb.attention import (
    acyclic_dataset,
    as_token_data,
    general_dataset,
    identity_head,
    lemma1_excess_risk,
    loss_and_grad,
    make_problem,
    random_embeddings,
    solve_graph_svm,
    stack_problems,
    tied_head,
    token_priority_graphs,
    train,
)
from ntpnb.attention._model import _softmax, check_head
from ntpnb.errors import HeadAssumptionError, InvalidDataError, NotRealizableError, RankAmbiguousError

from attention_instances import CASES, w_mm, with_condition


def attention_output(W, prob):
    """Softmax probabilities ``s`` ``(B, n, T)`` and the model's outputs ``f_W(X) = X^T s`` ``(B, n, d)``."""
    scores = matvec(prob.emb, matvec(np.asarray(W, dtype=float)[:, None], prob.query))  # X W x_bar
    s, _ = _softmax(scores, prob.mask)
    return s, vecmat(s, prob.emb)


def _instance(seed=0, K=6, d=8, n=5, T=4):
    E = random_embeddings(K, d, seed)
    X, y = general_dataset(K, n, T, seed + 1)
    return E, as_token_data(X, y, K)


@pytest.mark.parametrize(("loss", "head"), CASES)
@pytest.mark.parametrize("scale", [0.1, 1.0, 5.0])
def test_gradient_matches_finite_differences(loss, head, scale):
    E, data = _instance()
    C = identity_head(E) if head == "identity" else tied_head(E)
    prob = make_problem(E, C, data, loss, head)
    rng = np.random.default_rng(1)
    W = scale * rng.standard_normal((1, 8, 8))
    _, G = loss_and_grad(W, prob)
    for _ in range(3):
        D = rng.standard_normal((1, 8, 8))
        h = 1e-6
        fd = (loss_and_grad(W + h * D, prob)[0] - loss_and_grad(W - h * D, prob)[0]) / (2 * h)
        assert abs(fd[0] - np.sum(G * D)) <= 1e-6 * max(1.0, abs(fd[0]))


def test_model_output_is_a_convex_combination_of_the_inputs():
    E, data = _instance()
    prob = make_problem(E, identity_head(E), data)
    s, f = attention_output(np.random.default_rng(2).standard_normal((1, 8, 8)), prob)
    np.testing.assert_allclose(s.sum(axis=-1), 1.0)
    X0 = E[data.sequence(0)]
    np.testing.assert_allclose(f[0, 0], X0.T @ s[0, 0, : len(X0)])


def test_log_loss_is_minus_log_of_attention_on_the_label():
    E, data = _instance()
    prob = make_problem(E, identity_head(E), data)
    W = np.random.default_rng(3).standard_normal((1, 8, 8))
    s, _ = attention_output(W, prob)
    on_label = np.sum(s[0] * ((data.tokens == data.labels[:, None]) & data.mask), axis=1)
    np.testing.assert_allclose(loss_and_grad(W, prob)[0][0], -np.log(on_label).mean())


def test_log_loss_stays_exact_when_the_softmax_saturates():
    E, data = _instance()
    prob = make_problem(E, identity_head(E), data)
    W = 300.0 * np.random.default_rng(4).standard_normal((1, 8, 8))
    L, G = loss_and_grad(W, prob)
    assert np.all(np.isfinite(L)) and np.all(np.isfinite(G))


def test_batched_equals_one_by_one():
    problems, Ws = [], []
    for seed in range(4):
        E, data = _instance(seed, n=3 + seed, T=3 + seed % 2)
        problems.append(make_problem(E, tied_head(E), data, "ce", "argmax"))
        Ws.append(np.random.default_rng(seed).standard_normal((1, 8, 8)))
    L, G = loss_and_grad(np.concatenate(Ws), stack_problems(problems))
    for b, (p, W) in enumerate(zip(problems, Ws, strict=True)):
        Lb, Gb = loss_and_grad(W, p)
        np.testing.assert_allclose(L[b], Lb[0], rtol=1e-12)
        np.testing.assert_allclose(G[b], Gb[0], rtol=1e-10, atol=1e-14)
    trace = train(stack_problems(problems), optim.normalized_gd(0.05), 30, record_at=np.array([30]))
    for b, p in enumerate(problems):
        alone = train(p, optim.normalized_gd(0.05), 30, record_at=np.array([30]))
        np.testing.assert_allclose(trace.W[b], alone.W[0], rtol=1e-9, atol=1e-12)


def test_heads_and_their_assumptions():
    E = random_embeddings(5, 8, 0)
    C = identity_head(E)
    np.testing.assert_allclose(C @ E.T, np.eye(5), atol=1e-12)
    check_head(tied_head(E), E, "argmax")
    with pytest.raises(HeadAssumptionError, match="Assumption 4"):
        check_head(E, E, "identity")
    with pytest.raises(HeadAssumptionError, match="Assumption 3"):
        check_head(-E, E, "argmax")
    with pytest.raises(HeadAssumptionError, match="full row rank"):
        identity_head(random_embeddings(9, 8, 0))
    with pytest.raises(InvalidDataError, match="shape"):
        check_head(C[:, :3], E)
    with pytest.raises(InvalidDataError, match="unknown head assumption"):
        check_head(C, E, "maybe")


def test_bad_problems_raise_named_errors():
    E, data = _instance()
    with pytest.raises(InvalidDataError, match="unknown loss"):
        make_problem(E, identity_head(E), data, "hinge")
    with pytest.raises(InvalidDataError, match="rows"):
        make_problem(E[:4], identity_head(E[:4]), data)
    with pytest.raises(InvalidDataError, match=r"c_y\^T x_t >= 0"):
        make_problem(E, tied_head(E), data, "log", "argmax")  # tied head: e_y^T e_x < 0 occurs
    off = as_token_data([[0, 1]], [2], 6, require_realizable=False)
    with pytest.raises(NotRealizableError):
        make_problem(E, identity_head(E), off, "log")
    prob = make_problem(E, identity_head(E), data)
    with pytest.raises(InvalidDataError, match="shape"):
        loss_and_grad(np.zeros((1, 7, 7)), prob)
    with pytest.raises(InvalidDataError, match="non-finite"):
        loss_and_grad(np.full((1, 8, 8), np.inf), prob)


@pytest.mark.parametrize("scale", [1.0, 30.0, 200.0])
def test_saturated_log_loss_gradient_keeps_relative_accuracy(scale):
    """Two independent stable forms agree where the textbook s - r is pure rounding.

    Along ``s W^mm`` of acyclic data every label wins by a margin ``>= s``: the gradient is of
    order ``exp(-s)``, far below the rounding of ``s_y - 1``.
    """
    from ntpnb.attention._convex import log_loss_features

    E = random_embeddings(8, 8, 7)
    X, y, _ = acyclic_dataset(8, 4, 6, 8)
    data = as_token_data(X, y, 8)
    prob = make_problem(E, identity_head(E), data)
    W = scale * w_mm(E, data)[None]
    L, G = loss_and_grad(W, prob)
    f, g, _ = log_loss_features(E, data).value_grad_hess(W.ravel())
    assert np.linalg.norm(G.ravel() - g) <= 1e-9 * np.linalg.norm(g)
    assert abs(L[0] - f) <= 1e-9 * f


def test_saturated_ce_gradient_is_not_rounding_noise():
    """At a saturated W the gradient is tiny; it must still match finite differences."""

    E = random_embeddings(8, 8, 9)
    X, y, _ = acyclic_dataset(8, 4, 6, 10)
    data = as_token_data(X, y, 8)
    prob = make_problem(E, tied_head(E), data, "ce", "argmax")
    W = 40.0 * w_mm(E, data)[None]
    _, G = loss_and_grad(W, prob)
    D = -G / np.linalg.norm(G)
    h = 1e-3
    fd = (loss_and_grad(W + h * D, prob)[0] - loss_and_grad(W - h * D, prob)[0])[0] / (2 * h)
    # the loss itself is O(1) here, so its differences resolve only ~1e-13 / h
    assert abs(fd - np.sum(G * D)) <= 1e-9 + 1e-6 * abs(fd)
    assert np.sum(G * D) < 0


def test_squared_softmax_loss_is_the_squared_gap_of_the_class_probability():
    """``(1 - softmax(C f)_y)^2`` computed from the model output, one sample at a time."""
    E, data = _instance(3, K=8, n=4, T=6)
    C = tied_head(E)
    prob = make_problem(E, C, data, "squared_softmax", "argmax")
    W = np.random.default_rng(4).standard_normal((1, 8, 8))
    _, f = attention_output(W, prob)
    z = f[0] @ C.T
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    expected = np.mean((1 - p[np.arange(data.n), data.labels]) ** 2)
    assert abs(loss_and_grad(W, prob)[0][0] - expected) <= 1e-14


def test_reference_loss_can_be_divided_by_the_whole_data_set():
    from ntpnb.attention import as_token_data, make_problem, random_embeddings, tied_head

    E = random_embeddings(5, 6, 0)
    data = as_token_data(np.array([[1, 2, 0], [2, 1, 0]]), np.array([1, 2]), 5)
    W = np.random.default_rng(1).standard_normal((1, 6, 6))
    mean = make_problem(E, tied_head(E), data, "ce", "argmax")
    by_four = make_problem(E, tied_head(E), data, "ce", "argmax", divide_by=4)
    np.testing.assert_allclose(loss_and_grad(W, by_four)[1], loss_and_grad(W, mean)[1] * 2 / 4, rtol=1e-14)
    with pytest.raises(InvalidDataError, match="divide_by"):
        make_problem(E, tied_head(E), data, "ce", "argmax", divide_by=1)


# ---------------------------------------------------------------------------------------------
# Heads of ill-conditioned or scaled embeddings: exact, or refused with the reason


def test_identity_head_of_an_ill_conditioned_E_is_exact():
    # condition 1.8e5: E E^T has condition 3e10, and (E E^T)^{-1} E missed C E^T = I by 4e-7
    E = with_condition(random_embeddings(6, 8, 0), 1.8e5)
    C = identity_head(E)
    assert np.abs(C @ E.T - np.eye(6)).max() <= settings.HEAD_IDENTITY_TOL
    E7 = with_condition(random_embeddings(6, 8, 0), 1e7)
    assert np.abs(identity_head(E7) @ E7.T - np.eye(6)).max() <= settings.HEAD_IDENTITY_TOL


def test_identity_head_refuses_what_float64_cannot_decide():
    with pytest.raises(HeadAssumptionError, match="full row rank"):
        identity_head(random_embeddings(9, 8, 0))
    E = random_embeddings(6, 8, 0)
    E[5] = E[4] + 1e-17  # rank 5 up to rounding: a clear gap
    with pytest.raises(HeadAssumptionError, match="full row rank"):
        identity_head(E)
    with pytest.raises(RankAmbiguousError, match="embeddings E"):  # no clear gap anywhere
        identity_head(with_condition(random_embeddings(6, 8, 0), 1e10))


def test_heads_are_scale_invariant():
    E = random_embeddings(6, 8, 0)
    for scale in (1e-100, 1e-5, 1e4, 1e100):
        check_head(identity_head(scale * E), scale * E, "identity")
        check_head(tied_head(scale * E), scale * E, "argmax")  # an absolute margin test fails at 1e-10 < 1e-9


@pytest.mark.parametrize(("loss", "head"), CASES)
def test_losses_at_many_w_are_the_losses_one_w_at_a_time(loss, head):
    """The batch axis changes no sum: one batched call gives the same floats."""
    from ntpnb.attention import losses_at

    from attention_instances import general_instance

    E, data = general_instance(4)
    C = identity_head(E) if head == "identity" else tied_head(E)
    prob = make_problem(E, C, data, loss, head)
    rng = np.random.default_rng(1)
    Ws = rng.standard_normal((60, 8, 8)) * np.exp(rng.uniform(-3, 4, (60, 1, 1)))
    one_by_one = [loss_and_grad(W[None], prob)[0][0] for W in Ws]
    np.testing.assert_array_equal(losses_at(Ws, prob), one_by_one)
    with pytest.raises(InvalidDataError, match="one problem"):
        losses_at(Ws, stack_problems([prob, prob]))
    with pytest.raises(InvalidDataError, match="shape"):
        losses_at(Ws[:, :4], prob)


def _logistic_excess_by_definition(W, E, C, data):
    """``L(W) - L_*`` for ``l(u) = log(1 + e^-u)`` as Lemma 1 writes it: two risks, subtracted."""
    loss = lambda u: np.log1p(np.exp(-u))
    total = 0.0
    for i in range(data.n):
        X, q, y = E[data.sequence(i)], E[data.query[i]], data.labels[i]
        scores = X @ W @ q
        s = np.exp(scores - scores.max())
        total += loss(C[y] @ (X.T @ (s / s.sum()))) - loss(C[y] @ E[y])
    return total / data.n


def test_lemma1_excess_risk_is_the_difference_of_the_two_risks():
    rng = np.random.default_rng(3)
    E = random_embeddings(8, 8, rng)
    data = as_token_data(*acyclic_dataset(8, 4, 6, rng)[:2], 8)
    Ws = rng.standard_normal((6, 8, 8))
    for C in (tied_head(E), identity_head(E), rng.standard_normal((8, 8))):  # any head
        ours = lemma1_excess_risk(Ws, E, C, data)
        direct = [_logistic_excess_by_definition(W, E, C, data) for W in Ws]
        np.testing.assert_allclose(ours, direct, rtol=1e-9)


def test_lemma1_excess_risk_is_positive_under_assumption_3_and_vanishes_along_w_mm():
    """Lemma 1 with a general head: ``L(W) > L_*`` and ``L(s W^mm) -> L_*`` at the margins' rate."""
    rng = np.random.default_rng(5)
    E = random_embeddings(8, 8, rng)
    data = as_token_data(*acyclic_dataset(8, 4, 6, rng)[:2], 8)
    C = tied_head(E)
    Ws = rng.standard_normal((200, 8, 8)) * np.exp(rng.uniform(-3, 3, (200, 1, 1)))
    assert np.all(lemma1_excess_risk(Ws, E, C, data) > 0)
    W_mm = solve_graph_svm(E, token_priority_graphs(data)).W
    s = np.array([1.0, 10.0, 30.0, 60.0])
    ray = lemma1_excess_risk(s[:, None, None] * W_mm, E, C, data)
    assert np.all(ray > 0) and np.all(np.diff(ray) < 0)  # still exact far below rounding of L itself
    pairs = [(y, x) for i, y in enumerate(data.labels) for x in data.sequence(i)]
    spread = max(C[y] @ (E[y] - E[x]) for y, x in pairs)  # the largest score gap
    assert np.all(ray <= (data.lengths.max() - 1) * np.exp(-s) * spread)
    # a head that breaks Assumption 3 (c_y^T e_y the smallest score) puts L(W) below "L_*"
    assert np.all(lemma1_excess_risk(Ws, E, -C, data) < 0)


def test_lemma1_excess_risk_refuses_bad_input():
    E = random_embeddings(4, 4, 0)
    data = as_token_data([[0, 1, 2]], [1], 4)
    with pytest.raises(InvalidDataError, match="shape of E"):
        lemma1_excess_risk(np.zeros((1, 4, 4)), E, E[:3], data)
    with pytest.raises(InvalidDataError, match=r"Ws must have shape \(m, 4, 4\)"):
        lemma1_excess_risk(np.zeros((4, 4)), E, E, data)
    with pytest.raises(InvalidDataError, match="non-finite"):
        lemma1_excess_risk(np.full((1, 4, 4), np.nan), E, E, data)
