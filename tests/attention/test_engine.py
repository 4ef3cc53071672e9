"""The compiled step (ntpnb.attention._engine, ntpnb.attention._ngd_loops) against the numpy reference
over the token table (attention_instances.table_gradient): the same gradients and iterates to the
tolerances below (the kernels add in their own order, numpy pairwise or in lanes); and that
reference against the model's gradient, to rounding."""

from __future__ import annotations

import numpy as np
import pytest

from ntpnb import _optim as optim
from ntpnb.attention import _ngd_loops as kernels
from ntpnb.attention import (
    acyclic_dataset,
    as_token_data,
    general_dataset,
    identity_head,
    make_problem,
    random_embeddings,
    stack_problems,
    train,
)
from ntpnb.attention._engine import compiled_step
from ntpnb.attention._model import loss_and_grad
from ntpnb.errors import InvalidDataError, SolverError

from attention_instances import CASES, STACKED_SIZES, stacked_problem, table_gradient, w_mm

#: Stacks of trials of different (K, d, n, T): padded samples and positions, and rows of eight
#: or more terms (numpy's pairwise sums and einsum's blocks of eight).
SIZES = {
    "small": STACKED_SIZES,
    "long": ((10, 12, 3, 10), (10, 12, 5, 9), (10, 12, 2, 3)),
}
_stacked = stacked_problem

#: The compiled gradient against the reference: the largest difference over the largest entry of
#: the batch's gradient (measured: 7e-15; a trial's own gradient may be pure cancellation).
GRADIENT_RTOL = 1e-13
#: The same where the attention saturates (``W`` of scale 300): the squared loss's ``1 - c_y^T f``
#: then cancels, and the reference itself moves by 6e-6 of its largest entry between OpenBLAS
#: kernels (Haswell, SandyBridge), the compiled gradient lying within it.
SATURATED_RTOL = 1e-4
#: Runs against the reference, relative to the largest entry of the final iterates (measured: 4e-15
#: for GD and Adam over 800 steps, 4e-16 for normalized GD over 20).
RUN_RTOL = 1e-12
#: Steps of each compared run: normalized GD amplifies a difference in the last bit once it
#: oscillates at its step length (7e-10 after 50 steps here, 5e-3 after 800), as it would between
#: two orders of numpy's own sums; GD and Adam do not.
RUN_STEPS = {"exact": 20, "authors": 20, "gd": 800, "adam": 800}


@pytest.mark.parametrize("shape", [(1, 3), (7, 1), (130, 4)])
def test_the_kernels_add_in_index_order(shape):
    """The sums of the kernels: one term after another, whatever numpy does (pairwise, in lanes)."""
    rng = np.random.default_rng(shape[0])
    x, y = (rng.standard_normal(shape) * np.exp(rng.uniform(-30, 30, shape)) for _ in range(2))
    sums, dots = np.empty(shape[1]), np.empty(shape[1])
    kernels._lane_sums(x, sums)
    kernels._lane_dots(x, y, dots)
    want_sums, want_dots = x[0].copy(), x[0] * y[0]
    for i in range(1, shape[0]):
        want_sums += x[i]
        want_dots += x[i] * y[i]
    np.testing.assert_array_equal(sums, want_sums)
    np.testing.assert_array_equal(dots, want_dots)


@pytest.mark.parametrize("sizes", SIZES.values(), ids=SIZES.keys())
@pytest.mark.parametrize(("loss", "head"), CASES)
def test_compiled_gradient_is_the_reference_to_rounding(loss, head, sizes):
    prob = _stacked(loss, head, sizes)
    step = compiled_step(prob)
    assert step is not None
    reference = table_gradient(prob)
    rng = np.random.default_rng(3)
    for scale in (0.0, 0.3, 3.0, 30.0, 300.0):
        W = scale * rng.standard_normal((prob.B, prob.d, prob.d))
        want = reference(W)
        atol = (SATURATED_RTOL if scale > 100 else GRADIENT_RTOL) * np.abs(want).max()
        np.testing.assert_allclose(step.gradient_of(W), want, rtol=0, atol=atol)


OPTIMIZERS = {
    "exact": optim.normalized_gd(0.1),
    "authors": optim.normalized_gd(0.1, optim.AUTHORS_NGD_EPS),
    "gd": optim.gd(0.5),
    "adam": optim.adam(0.01),
}


@pytest.mark.parametrize("name", OPTIMIZERS)
@pytest.mark.parametrize(("loss", "head"), CASES)
def test_compiled_runs_are_the_reference_runs_to_rounding(loss, head, name):
    prob = _stacked(loss, head, SIZES["small"])
    opt, n_iter = OPTIMIZERS[name], RUN_STEPS[name]
    grid = optim.log_grid(n_iter, 12)
    W0 = np.random.default_rng(5).uniform(-0.3, 0.3, (prob.B, prob.d, prob.d))
    record = lambda W: {"iterates": W, "norm": np.linalg.norm(W, axis=(1, 2))}
    want = optim.run(table_gradient(prob), W0, opt, n_iter, record=record, record_at=grid, batch_ndim=1)
    assert compiled_step(prob) is not None
    got = train(prob, opt, n_iter, W0=W0, record=record, record_at=grid)
    np.testing.assert_array_equal(got.iterations, want.iterations)
    atol = RUN_RTOL * np.abs(want.W).max()
    np.testing.assert_allclose(got.iterates, want.iterates, rtol=0, atol=atol)
    np.testing.assert_allclose(got.norm, want.norm, rtol=RUN_RTOL)
    np.testing.assert_allclose(got.W, want.W, rtol=0, atol=atol)


@pytest.mark.parametrize("eps", [0.0, optim.AUTHORS_NGD_EPS], ids=["exact", "authors"])
def test_gradients_below_1e_154_step_as_the_reference_does(eps):
    """Far out along W^mm the log-loss gradient is about exp(-400): the squares of its entries
    underflow, and the step divides by the largest entry first, in both implementations."""
    problems, far = [], []
    for seed in range(3):
        E = random_embeddings(8, 8, seed)
        X, y, _ = acyclic_dataset(8, 4, 6, seed + 30)
        data = as_token_data(X, y, 8)
        problems.append(make_problem(E, identity_head(E), data))
        far.append(400.0 * w_mm(E, data))
    prob, far = stack_problems(problems), np.array(far)
    g = table_gradient(prob)(far)
    assert np.all(np.linalg.norm(g, axis=(1, 2)) < 1e-154) and np.all(np.abs(g).max(axis=(1, 2)) > 0)
    opt = optim.normalized_gd(0.5, eps)
    want = optim.run(table_gradient(prob), far, opt, 50, batch_ndim=1)
    assert compiled_step(prob) is not None
    got = train(prob, opt, 50, W0=far)
    np.testing.assert_allclose(got.W, want.W, rtol=0, atol=RUN_RTOL * np.abs(want.W).max())
    moved = np.linalg.norm(got.W - far, axis=(1, 2))
    if eps:  # a step of about lr ||g|| / eps, far below the rounding of W: the authors' rule stalls
        np.testing.assert_array_equal(moved, 0.0)
    else:  # fifty steps of length lr = 0.5, along directions that turn a little
        assert np.all(moved <= 25.0 + 1e-9) and np.all(moved > 20.0)


def test_a_zero_gradient_raises_the_references_error():
    """One sample whose input is its label alone: its attention is 1 whatever W, its gradient 0."""
    E = random_embeddings(4, 4, 0)
    data = as_token_data([[2]], [2], 4)
    prob = make_problem(E, identity_head(E), data)
    assert compiled_step(prob) is not None
    opt = optim.normalized_gd(0.1)
    with pytest.raises(SolverError) as want:
        optim.run(table_gradient(prob), np.zeros((1, 4, 4)), opt, 5, batch_ndim=1)
    with pytest.raises(SolverError) as got:
        train(prob, opt, 5, W0=np.zeros((1, 4, 4)))
    assert str(got.value) == str(want.value) and "zero gradient" in str(got.value)


def test_a_non_finite_gradient_raises_the_references_error():
    prob = _stacked("squared_softmax", "argmax", SIZES["small"])
    W0 = np.full((prob.B, prob.d, prob.d), 1e300)
    assert compiled_step(prob) is not None
    opt = optim.normalized_gd(0.1)
    with pytest.raises(SolverError) as want:
        optim.run(table_gradient(prob), W0, opt, 5, batch_ndim=1)
    with pytest.raises(SolverError) as got:
        train(prob, opt, 5, W0=W0)
    assert str(got.value) == str(want.value)


def test_train_runs_normalized_gd_on_the_compiled_step_and_reports_progress():
    prob = _stacked("log", "identity", SIZES["small"])
    opt = optim.normalized_gd(0.05)
    told = []
    assert compiled_step(prob) is not None
    train(prob, opt, 250, progress=lambda done, total: told.append((done, total)))
    dones = [done for done, _ in told]
    assert dones == sorted(dones) and told[-1] == (250, 250) and len(told) > 10
    assert {total for _, total in told} == {250}


def test_problems_without_a_compiled_step_train_on_the_reference():
    """A log-loss head with gamma unequal on a sample's label positions: no compiled step."""
    E = np.abs(random_embeddings(6, 8, 3))
    E /= np.linalg.norm(E, axis=1, keepdims=True)
    X, y = general_dataset(6, 5, 4, 23)
    prob = make_problem(E, E, as_token_data(X, y, 6), "log", "argmax")
    assert compiled_step(prob) is None
    opt = optim.normalized_gd(0.05)
    told = []
    trace = train(prob, opt, 40, progress=lambda done, total: told.append((done, total)))
    reference = optim.run(lambda W: loss_and_grad(W, prob)[1], np.zeros((1, 8, 8)), opt, 40, batch_ndim=1)
    np.testing.assert_array_equal(trace.W, reference.W)
    assert told[-1] == (40, 40) and [done for done, _ in told] == sorted(done for done, _ in told)


def test_training_on_the_compiled_step_rejects_bad_input():
    prob = _stacked("ce", "argmax", SIZES["small"])
    assert compiled_step(prob) is not None
    W0 = np.zeros((prob.B, prob.d, prob.d))
    with pytest.raises(InvalidDataError, match="Optimizer"):
        train(prob, "gd", 5, W0=W0)
    with pytest.raises(InvalidDataError, match="n_iter"):
        train(prob, optim.normalized_gd(0.1), -1, W0=W0)
    with pytest.raises(InvalidDataError, match="shape"):
        train(prob, optim.normalized_gd(0.1), 5, W0=W0[:1])
    with pytest.raises(InvalidDataError, match="non-finite"):
        train(prob, optim.normalized_gd(0.1), 5, W0=np.full(W0.shape, np.nan))
    with pytest.raises(InvalidDataError, match="record_at"):
        train(prob, optim.normalized_gd(0.1), 5, W0=W0, record_at=np.array([3, 2]))
    with pytest.raises(InvalidDataError, match="Problem"):
        train("not a problem", optim.normalized_gd(0.1), 5)


def test_compile_kernels_runs_every_loss(monkeypatch):
    """Every loss of the model has its compiled step run, so none waits for the compiler later."""
    from ntpnb.attention import _batched_training as batched_training
    from ntpnb.attention._model import LOSSES

    ran, train = [], batched_training.train

    def running(prob, optimizer, *args, **kwargs):
        assert compiled_step(prob) is not None
        ran.append((prob.loss, optimizer.rule.code))
        return train(prob, optimizer, *args, **kwargs)

    monkeypatch.setattr(batched_training, "train", running)
    batched_training.compile_kernels()
    codes = {rule.code for rule in optim.RULES.values()}
    assert sorted(ran) == sorted((loss, code) for loss in LOSSES for code in codes)


def _rel(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


@pytest.mark.parametrize(("loss", "head"), CASES)
@pytest.mark.parametrize("scale", [0.0, 1.0, 30.0])
def test_table_gradient_equals_the_model_gradient_to_rounding(loss, head, scale):
    prob = _stacked(loss, head)
    W = scale * np.random.default_rng(1).standard_normal((prob.B, prob.d, prob.d))
    ref = loss_and_grad(W, prob)[1]
    fast = table_gradient(prob)(W)
    assert _rel(fast, ref) < 1e-12
    for b in range(prob.B):  # every trial, not just the largest
        assert np.linalg.norm(fast[b] - ref[b]) <= 1e-12 * np.linalg.norm(ref[b])


@pytest.mark.parametrize("scale", [30.0, 200.0])
def test_saturated_log_loss_table_gradient_keeps_relative_accuracy(scale):
    """Along ``s W^mm`` the gradient is ~exp(-s): it must not be rounding noise in either form."""
    E = random_embeddings(8, 8, 7)
    X, y, _ = acyclic_dataset(8, 4, 6, 8)
    data = as_token_data(X, y, 8)
    prob = make_problem(E, identity_head(E), data)
    W = scale * w_mm(E, data)[None]
    ref = loss_and_grad(W, prob)[1]
    assert 0 < np.linalg.norm(ref) < 1e-3
    assert np.linalg.norm(table_gradient(prob)(W) - ref) <= 1e-12 * np.linalg.norm(ref)


def test_many_distinct_vectors_train_on_the_model_gradient():
    E = random_embeddings(6, 3, 0)  # 6 distinct vectors: a 6 x 6 table > n T d = 18 scores
    prob = make_problem(
        E, E, as_token_data(np.array([[0, 1, 2], [3, 4, 5]]), np.array([0, 3]), 6), "squared", "argmax"
    )
    assert compiled_step(prob) is None
    opt = optim.normalized_gd(0.05)
    reference = optim.run(lambda W: loss_and_grad(W, prob)[1], np.zeros((1, 3, 3)), opt, 20, batch_ndim=1)
    np.testing.assert_array_equal(train(prob, opt, 20).W, reference.W)


def test_training_runs_on_the_model_gradient():
    prob = _stacked("log", "identity")
    opt = optim.normalized_gd(0.05)
    trace = train(prob, opt, 30, record_at=np.array([30]))
    W = np.zeros((prob.B, prob.d, prob.d))
    for _ in range(30):
        g = loss_and_grad(W, prob)[1]
        W = W - 0.05 * g / np.linalg.norm(g, axis=(1, 2), keepdims=True)
    assert _rel(trace.W, W) < 1e-12
