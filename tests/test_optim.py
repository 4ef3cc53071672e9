"""First-order methods (ntpnb._optim): hand-computed steps, batching, recording, bad settings."""

from __future__ import annotations

import numpy as np
import pytest

from ntpnb import _optim as optim
from ntpnb import settings
from ntpnb.errors import InvalidDataError, SolverError

A = np.array([[2.0, -1.0], [0.5, 3.0]])
B = np.array([[1.0, 0.0], [-2.0, 1.0]])


def quadratic_grad(W):
    """Gradient of 0.5 ||W - B||^2 weighted entrywise by A^2 (batched or not)."""
    return A**2 * (W - B)


W0 = np.array([[0.3, -0.7], [1.1, 0.2]])


def test_gd_step_by_hand():
    g0 = A**2 * (W0 - B)
    W1 = W0 - 0.1 * g0
    g1 = A**2 * (W1 - B)
    W2 = W1 - 0.1 * g1
    trace = optim.run(
        quadratic_grad, W0, optim.gd(0.1), 2, record_at=np.array([0, 1, 2]), record=lambda W: {"iterates": W}
    )
    np.testing.assert_allclose(trace.iterates, [W0, W1, W2], rtol=0, atol=1e-15)
    np.testing.assert_allclose(trace.W, W2, rtol=0, atol=1e-15)


def test_sgd_is_the_gd_update_on_the_gradient_it_is_given():
    rng = np.random.default_rng(0)
    noises = rng.standard_normal((3, 2, 2))
    calls = iter(noises)
    trace = optim.run(lambda W: quadratic_grad(W) + next(calls), W0, optim.sgd(0.05), 3)
    W = W0.copy()
    for noise in noises:
        W = W - 0.05 * (quadratic_grad(W) + noise)
    np.testing.assert_allclose(trace.W, W, rtol=0, atol=1e-15)


def test_ngd_step_by_hand():
    g0 = A**2 * (W0 - B)
    W1 = W0 - 0.3 * g0 / np.sqrt(np.sum(g0**2))
    trace = optim.run(quadratic_grad, W0, optim.normalized_gd(0.3), 1)
    np.testing.assert_allclose(trace.W, W1, rtol=0, atol=1e-15)
    assert np.linalg.norm(trace.W - W0) == pytest.approx(0.3, rel=1e-14)


def test_ngd_with_eps_is_the_authors_step_by_hand():
    """``g / (||g|| + eps)``: the step of Paper B's code, shorter than lr where ||g|| is small."""
    eps = optim.AUTHORS_NGD_EPS
    g0 = A**2 * (W0 - B)
    W1 = W0 - 0.3 * g0 / (np.sqrt(np.sum(g0**2)) + eps)
    trace = optim.run(quadratic_grad, W0, optim.normalized_gd(0.3, eps=eps), 1)
    np.testing.assert_allclose(trace.W, W1, rtol=0, atol=1e-15)
    # a gradient of norm 1e-17 moves W by lr * 1e-17 / (1e-17 + eps), about 4% of lr: a stall
    tiny = optim.run(lambda W: np.full_like(W, 0.5e-17), W0, optim.normalized_gd(0.3, eps=eps), 1)
    step = np.linalg.norm(tiny.W - W0)
    assert step == pytest.approx(0.3 * 1e-17 / (1e-17 + eps), rel=1e-12)
    assert step < 0.05 * 0.3


def test_ngd_with_eps_stands_still_at_a_zero_gradient():
    trace = optim.run(quadratic_grad, B, optim.normalized_gd(0.1, eps=1e-16), 3)
    np.testing.assert_array_equal(trace.W, B)


def test_ngd_with_eps_rescales_an_overflowing_gradient():
    huge = np.array([[1e200, -1e200], [0.0, 1e200]])
    trace = optim.run(lambda W: huge, W0, optim.normalized_gd(0.1, eps=1e-16), 1)
    np.testing.assert_allclose(trace.W - W0, -0.1 * huge / np.linalg.norm(huge / 1e200) / 1e200, rtol=1e-15)


@pytest.mark.parametrize("size", [1e-150, 1e-170, 1e-300])
@pytest.mark.parametrize("eps", [0.0, 1e-320])
def test_ngd_step_is_lr_long_where_the_squared_norm_underflows(size, eps):
    """Entries of 1e-170 are representable, their squares are not: the step is still lr."""
    tiny = np.array([[size, -2 * size], [0.0, size]])
    trace = optim.run(lambda W: tiny, W0, optim.normalized_gd(0.1, eps=eps), 1)
    np.testing.assert_allclose(trace.W - W0, -0.1 * tiny / size / np.linalg.norm(tiny / size), rtol=1e-14)
    assert np.linalg.norm(trace.W - W0) == pytest.approx(0.1, rel=1e-14)


def test_optimizer_defaults_and_labels():
    assert optim.normalized_gd(0.1).eps == 0.0
    assert optim.adam(0.01).eps == 1e-8
    assert optim.Optimizer("adam", 0.01).eps == 1e-8
    assert optim.normalized_gd(0.1).label() == "NGD (lr 0.1)"
    assert optim.normalized_gd(0.1, eps=optim.AUTHORS_NGD_EPS).label() == "NGD (lr 0.1, eps 2.22e-16)"


def test_adam_steps_by_hand_with_bias_correction():
    lr, (b1, b2), eps = 0.01, (0.9, 0.99), 1e-8
    W, m, v = W0.copy(), np.zeros_like(W0), np.zeros_like(W0)
    for k in range(1, 4):
        g = quadratic_grad(W)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g**2
        m_hat, v_hat = m / (1 - b1**k), v / (1 - b2**k)
        W = W - lr * m_hat / (np.sqrt(v_hat) + eps)
    trace = optim.run(quadratic_grad, W0, optim.Optimizer("adam", lr, (b1, b2), eps), 3)
    np.testing.assert_allclose(trace.W, W, rtol=0, atol=1e-15)


def test_adam_first_step_is_lr_times_the_sign_of_the_gradient():
    """Bias correction makes the first step -lr g / (|g| + eps): about lr per coordinate."""
    trace = optim.run(quadratic_grad, W0, optim.adam(0.01), 1)
    g0 = quadratic_grad(W0)
    np.testing.assert_allclose(trace.W - W0, -0.01 * np.sign(g0), rtol=1e-6)


def test_ngd_normalizes_each_batch_element_separately():
    scales = np.array([1e-3, 1.0, 1e3])
    W0s = np.stack([W0, W0, W0])

    def grad(W):
        return scales[:, None, None] * quadratic_grad(W)

    trace = optim.run(grad, W0s, optim.normalized_gd(0.2), 1, batch_ndim=1)
    steps = np.linalg.norm((trace.W - W0s).reshape(3, -1), axis=1)
    np.testing.assert_allclose(steps, 0.2, rtol=1e-14)
    np.testing.assert_allclose(trace.W[0], trace.W[2], rtol=1e-14)  # the scale drops out


@pytest.mark.parametrize(
    "opt", [optim.gd(0.1), optim.normalized_gd(0.05), optim.adam(0.01)], ids=lambda o: o.name
)
def test_a_batched_run_equals_a_loop_of_single_runs(opt):
    rng = np.random.default_rng(1)
    batch = rng.standard_normal((2, 3, 2, 2))
    targets = rng.standard_normal((2, 3, 2, 2))

    def record(W):
        return {"norm": np.sqrt(np.sum(W**2, axis=(-2, -1))), "first": W[..., 0, 0]}

    grid = optim.log_grid(50, 10)
    batched = optim.run(
        lambda W: A**2 * (W - targets), batch, opt, 50, record=record, record_at=grid, batch_ndim=2
    )
    for i in range(2):
        for j in range(3):
            single = optim.run(
                lambda W, i=i, j=j: A**2 * (W - targets[i, j]),
                batch[i, j],
                opt,
                50,
                record=record,
                record_at=grid,
            )
            np.testing.assert_allclose(batched.W[i, j], single.W, rtol=1e-13, atol=1e-15)
            for name in ("norm", "first"):
                assert getattr(batched, name).shape == (grid.size, 2, 3)
                np.testing.assert_allclose(
                    getattr(batched, name)[:, i, j], getattr(single, name), rtol=1e-13, atol=1e-15
                )


def test_gd_converges_on_a_quadratic():
    trace = optim.run(quadratic_grad, W0, optim.gd(0.05), 2000)
    np.testing.assert_allclose(trace.W, B, atol=1e-8)


def test_recording_happens_on_the_grid_and_does_not_leak_the_iterate():
    seen = []

    def record(W):
        seen.append(W.copy())
        with pytest.raises(ValueError):
            W[0, 0] = 1.0  # the iterate handed to record is read-only
        return {"x": W[0, 0]}

    trace = optim.run(quadratic_grad, W0, optim.gd(0.1), 7, record=record, record_at=np.array([0, 3, 7]))
    assert list(trace.iterations) == [0, 3, 7]
    assert len(seen) == 3
    np.testing.assert_array_equal(seen[0], W0)
    np.testing.assert_array_equal(seen[-1], trace.W)
    assert trace.x[-1] == trace.W[0, 0]


def test_w0_is_not_modified():
    W = W0.copy()
    optim.run(quadratic_grad, W, optim.adam(0.1), 5)
    np.testing.assert_array_equal(W, W0)


def test_log_grid():
    grid = optim.log_grid(10_000, 60)
    assert grid[0] == 0 and grid[-1] == 10_000
    assert np.all(np.diff(grid) > 0)
    assert grid.size <= 60
    assert grid.dtype.kind == "i"
    # log-spaced: about as many points in each decade above the first few
    decades = np.histogram(grid[grid > 0], bins=[1, 10, 100, 1000, 10_001])[0]
    assert decades[1:].min() >= 10
    np.testing.assert_array_equal(optim.log_grid(0, 5), [0])
    np.testing.assert_array_equal(optim.log_grid(1, 5), [0, 1])


def test_lecun_init_is_seeded_with_the_right_scale():
    W1 = optim.lecun_init((200, 300), fan_in=300, seed=3)
    W2 = optim.lecun_init((200, 300), fan_in=300, seed=3)
    np.testing.assert_array_equal(W1, W2)
    assert W1.std() == pytest.approx(1 / np.sqrt(300), rel=0.02)
    assert not np.array_equal(W1, optim.lecun_init((200, 300), fan_in=300, seed=4))


@pytest.mark.parametrize(
    "make",
    [
        lambda: optim.gd(0.0),
        lambda: optim.gd(-1.0),
        lambda: optim.gd(float("nan")),
        lambda: optim.normalized_gd(float("inf")),
        lambda: optim.adam(0.01, betas=(1.0, 0.99)),
        lambda: optim.adam(0.01, betas=(0.9, -0.1)),
        lambda: optim.Optimizer("adam", 0.01, eps=0.0),
        lambda: optim.normalized_gd(0.1, eps=-1e-16),
        lambda: optim.normalized_gd(0.1, eps=float("nan")),
        lambda: optim.normalized_gd(0.1, eps=True),
        lambda: optim.Optimizer("rmsprop", 0.1),
    ],
)
def test_bad_settings_raise(make):
    with pytest.raises(InvalidDataError):
        make()


def test_bad_run_arguments_raise():
    with pytest.raises(InvalidDataError, match="n_iter"):
        optim.run(quadratic_grad, W0, optim.gd(0.1), -1)
    with pytest.raises(InvalidDataError, match="n_iter"):
        optim.run(quadratic_grad, W0, optim.gd(0.1), 2.5)
    with pytest.raises(InvalidDataError, match="record_at"):
        optim.run(quadratic_grad, W0, optim.gd(0.1), 5, record_at=np.array([0, 6]))
    with pytest.raises(InvalidDataError, match="record_at"):
        optim.run(quadratic_grad, W0, optim.gd(0.1), 5, record_at=np.array([3, 1]))
    with pytest.raises(InvalidDataError, match="shape"):
        optim.run(lambda W: np.zeros(3), W0, optim.gd(0.1), 5)
    with pytest.raises(InvalidDataError, match="batch"):
        optim.run(quadratic_grad, W0, optim.gd(0.1), 5, batch_ndim=2)
    with pytest.raises(InvalidDataError, match="non-finite"):
        optim.run(quadratic_grad, np.full((2, 2), np.nan), optim.gd(0.1), 5)
    with pytest.raises(InvalidDataError, match="Optimizer"):
        optim.run(quadratic_grad, W0, "gd", 5)
    with pytest.raises(InvalidDataError, match="n_points"):
        optim.log_grid(10, 1)


def test_ngd_zero_gradient_is_an_error_not_a_nan():
    with pytest.raises(SolverError, match="zero gradient"):
        optim.run(quadratic_grad, B, optim.normalized_gd(0.1), 3)
    with pytest.raises(SolverError, match=r"batch element \(1,\)"):
        optim.run(quadratic_grad, np.stack([W0, B]), optim.normalized_gd(0.1), 3, batch_ndim=1)


def test_divergence_is_reported():
    with pytest.raises(SolverError, match="diverged"):
        optim.run(lambda W: np.full_like(W, np.inf), W0, optim.gd(1.0), 3)


def test_ngd_non_finite_gradient_is_named():
    with pytest.raises(SolverError, match="non-finite gradient"):
        optim.run(lambda W: np.full_like(W, np.nan), W0, optim.normalized_gd(0.1), 3)


# ---------------------------------------------------------------------------------------------
# Guards: refused before allocating; normalized GD at overflowing or non-finite gradients


def test_log_grid_refuses_too_many_points_before_allocating():
    """1e7 recording points allocated 240 MB; now refused, naming the size and the limit."""
    with pytest.raises(InvalidDataError, match=r"n_points = 10000000 .*MAX_RECORD_POINTS = 100000"):
        optim.log_grid(10**9, 10**7)
    grid = optim.log_grid(10**9, settings.MAX_RECORD_POINTS)  # the limit itself is allowed
    assert grid[0] == 0 and grid[-1] == 10**9


@pytest.mark.parametrize("batch_ndim", [0, 1])
def test_normalized_gd_steps_by_lr_when_the_gradient_norm_overflows(batch_ndim):
    """Entries of 1e200 overflow ``sqrt(sum g^2)`` to inf, which would make the step a silent zero;
    it is ``lr`` along ``g`` (the norm computed as ``max|g| * ||g / max|g|||``)."""
    g = np.array([[3e200, -4e200], [1.0, 0.0]])  # row 0 overflows, row 1 does not
    W0 = np.zeros((2, 2)) if batch_ndim else np.zeros(2)
    grad = (lambda W: g) if batch_ndim else (lambda W: g[0])
    trace = optim.run(grad, W0, optim.normalized_gd(0.5), 1, batch_ndim=batch_ndim)
    expected = np.array([[-0.3, 0.4], [-0.5, 0.0]])
    np.testing.assert_allclose(trace.W, expected if batch_ndim else expected[0], rtol=1e-15)


@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_normalized_gd_names_a_non_finite_gradient_entry(bad):
    steps = []

    def grad(W):
        steps.append(1)
        return np.array([[1.0, 2.0], [bad if len(steps) == 3 else 1.0, 0.0]])

    with pytest.raises(
        SolverError, match=r"non-finite gradient entry \(batch element \(1,\)\) at iteration 2"
    ):
        optim.run(grad, np.zeros((2, 2)), optim.normalized_gd(0.1), 5, batch_ndim=1)


def test_run_checks_the_gradient_shape_at_every_step():
    """A gradient of shape (2,) for an iterate of shape (3, 2) broadcasts silently; at step 0 it
    was refused, at step 3 it was used."""
    calls = []

    def grad(W):
        calls.append(1)
        return W if len(calls) <= 3 else W[0]

    with pytest.raises(
        InvalidDataError, match=r"gradient at iteration 3 has shape \(2,\), the iterate \(3, 2\)"
    ):
        optim.run(grad, np.ones((3, 2)), optim.gd(0.1), 10)


# --- The compiled rules (ntpnb._optim_loops): the reference's arithmetic, compiled ---


@pytest.mark.parametrize(
    "opt",
    [
        optim.gd(0.1),
        optim.sgd(0.1),
        optim.normalized_gd(0.05),
        optim.normalized_gd(0.05, 1e-3),
        optim.adam(0.01),
    ],
    ids=lambda o: o.label(),
)
def test_compiled_rules_step_as_the_reference_bit_for_bit(opt):
    """The compiled step of every rule, from the same gradients, gives the reference's floats.

    Normalized GD's norm is summed in order by the compiled step, by einsum's lanes in the
    reference: its gradients here have exactly representable squares and sums (multiples of
    1/64 with few bits), so both norms are the same float.
    """
    from ntpnb import _optim_loops as optim_loops

    rng = np.random.default_rng(2)
    W = rng.standard_normal((3, 4))
    reference = W.copy()
    stepper = optim._Stepper(opt, W.shape, 0)
    powers = np.ones(2)
    state = (np.zeros(W.shape), np.zeros(W.shape), np.empty((2, W.shape[1])), powers)
    for _ in range(6):
        g = rng.integers(-64, 65, W.shape) / 64.0
        stepper.step(reference, g)
        powers *= opt.betas
        assert optim_loops.step(W, g, state, opt.compiled_rule, False) == (optim_loops.OK, 0)
        np.testing.assert_array_equal(W, reference)


def test_compiled_normalization_keeps_the_step_lr_long_at_every_scale():
    from ntpnb import _optim_loops as rules

    for size in (1e-300, 1e-170, 1.0, 1e200):
        G = size * np.array([[3.0, -4.0], [0.0, 0.0]])
        status, f, s = rules.normalization(G, 0.5, 0.0)
        assert status == rules.OK
        np.testing.assert_allclose((G / s) * f, [[0.3, -0.4], [0.0, 0.0]], rtol=1e-15)
    assert rules.normalization(np.zeros((2, 2)), 0.5, 0.0)[0] == rules.ZERO_GRADIENT
    assert rules.normalization(np.zeros((2, 2)), 0.5, 1e-16)[:2] == (rules.OK, 0.0)
    for bad in (np.inf, np.nan):
        assert rules.normalization(np.array([[1.0, bad]]), 0.5, 0.0)[0] == rules.NONFINITE_GRADIENT


def test_every_optimizer_has_a_rule_and_a_label():
    for name, rule in optim.RULES.items():
        opt = optim.Optimizer(name, 0.5)
        assert opt.rule is rule and opt.label().startswith(rule.label + " (lr 0.5")
        assert opt.eps == (rule.offset or 0.0)


def test_a_trace_is_read_by_attribute_and_names_what_it_recorded():
    trace = optim.run(quadratic_grad, W0, optim.gd(0.1), 3, record=lambda W: {"x": W[0, 0]}, record_at=[0, 3])
    assert trace.names == ("x",) and "x" in dir(trace)
    np.testing.assert_array_equal(trace.x, trace.values["x"])
    with pytest.raises(AttributeError, match=r"the run recorded no 'ce'; it recorded \['x'\]"):
        trace.ce  # noqa: B018 (the read is the test)


@pytest.mark.parametrize("name", ["W", "iterations", "seeds", "at", "names"])
def test_a_trace_refuses_a_recorded_name_that_would_hide_one_of_its_attributes(name):
    with pytest.raises(
        InvalidDataError, match=f"the recorded names \\['{name}'\\] are attributes of a Trace"
    ):
        optim.run(quadratic_grad, W0, optim.gd(0.1), 2, record=lambda W: {name: W})


def test_a_trace_of_several_seeds_is_read_one_seed_at_a_time():
    values = {"corr": np.arange(6.0).reshape(2, 3)}
    trace = optim.Trace(np.array([10]), values, W=np.zeros((2, 3, 4, 4)), seeds=(4, 1))
    one = trace.at(1)
    np.testing.assert_array_equal(one.corr, [3.0, 4.0, 5.0])
    assert one.W.shape == (3, 4, 4) and one.seeds == () and list(one.iterations) == [10]
    with pytest.raises(InvalidDataError, match=r"seed 7 was not run; the seeds run: \[4, 1\]"):
        trace.at(7)


def test_a_copied_trace_reads_the_same():
    import copy

    trace = optim.run(quadratic_grad, W0, optim.gd(0.1), 2, record=lambda W: {"x": W[0, 0]})
    np.testing.assert_array_equal(copy.copy(trace).x, trace.x)
