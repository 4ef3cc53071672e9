"""The compiled training loops of the linear decoder (ntpnb.linear._descent, ntpnb.linear._decoder_loops).

Every optimizer, batched and unbatched, in both representations (the logit form for ``m <= d``,
the weight form otherwise), against the plain numpy reference ``optim.run`` with ``gradient_fn``
or ``sampled_gradient_fn``, to rounding; the kernels' pieces against numpy; the errors of the
reference loop; chunks, batches and recording grids that change no float.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import ntpnb as ntp
from ntpnb import _optim as optim
from ntpnb._reproducible_products import matmul
from ntpnb.errors import InvalidDataError, SolverError
from ntpnb.linear import _decoder_loops as kernels
from ntpnb.linear import _decoder_training as training
from ntpnb.linear import _descent as descent

from helpers import gradient_fn, random_data, sampled_gradient_fn

METHODS = [optim.gd(0.5), optim.normalized_gd(0.02), optim.adam(0.01, (0.9, 0.99))]
# Normalized GD and Adam amplify rounding once they oscillate at their step length: on these
# instances a last-bit change of W0 shows at 1e-8 in the reference itself after 100 steps of
# normalized GD (lr 0.05) and at 1e-3 after 1000 of Adam. Compared to rounding: shorter runs.
STEPS = 80
GRID = np.array([0, 1, 2, 7, 40, 80])


@pytest.fixture(scope="module", params=[(6, 9), (9, 4)], ids=["d>m", "d<m"])
def data(request):
    m, d = request.param
    return random_data(m=m, d=d, V=5, S=2, seed=4)


def _start(data, batch=()):
    return optim.lecun_init((*batch, data.V, data.d), data.d, np.random.default_rng(1))


def _record(W):
    return {"iterates": W, "norm": np.sqrt(np.sum(W * W, axis=(-2, -1)))}


def _assert_close(trace, reference, rtol=1e-10):
    np.testing.assert_array_equal(trace.iterations, reference.iterations)
    scale = np.abs(reference.iterates).max()
    np.testing.assert_allclose(trace.iterates, reference.iterates, rtol=0, atol=rtol * scale)
    np.testing.assert_allclose(trace.norm, reference.norm, rtol=rtol)
    np.testing.assert_allclose(trace.W, reference.W, rtol=0, atol=rtol * scale)


def _forms_run(monkeypatch):
    """The list to which every chunk of steps appends whether it ran in the logit form."""
    forms = []
    for cls in (descent._WeightForm, descent._LogitForm):

        def spy(self, n, real=cls.advance):
            forms.append(isinstance(self, descent._LogitForm))
            return real(self, n)

        monkeypatch.setattr(cls, "advance", spy)
    return forms


def test_the_form_follows_the_shapes(data, monkeypatch):
    forms = _forms_run(monkeypatch)
    W0 = np.zeros((data.V, data.d))
    for opt, batch_size in [(optim.gd(0.1), None), (optim.normalized_gd(0.1), None), (optim.adam(0.1), None)]:
        forms.clear()
        descent.run_decoder(data, opt, 2, W0, batch_size=batch_size)
        assert set(forms) == {opt.name != "adam" and data.m <= data.d}
    forms.clear()
    descent.run_decoder(data, optim.gd(0.1), 2, W0, batch_size=4)
    assert set(forms) == {False}


@pytest.mark.parametrize("batch", [(), (2, 3)], ids=["single", "batched"])
@pytest.mark.parametrize("opt", METHODS, ids=lambda o: o.name)
def test_full_batch_runs_match_the_numpy_reference(data, opt, batch):
    W0 = _start(data, batch)
    fast = descent.run_decoder(data, opt, STEPS, W0, record=_record, record_at=GRID)
    ref = optim.run(gradient_fn(data), W0, opt, STEPS, record=_record, record_at=GRID, batch_ndim=len(batch))
    _assert_close(fast, ref)
    assert fast.norm.shape == (GRID.size, *batch)


@pytest.mark.parametrize("sampling", descent.SAMPLING_KINDS)
@pytest.mark.parametrize("opt", [optim.sgd(0.5), optim.adam(0.01)], ids=lambda o: o.name)
def test_stochastic_runs_match_the_reference_with_the_same_draws(data, opt, sampling):
    W0 = _start(data, (2,))
    rng_fast, rng_ref = np.random.default_rng(7), np.random.default_rng(7)
    fast = descent.run_decoder(
        data, opt, STEPS, W0, record=_record, record_at=GRID, batch_size=3, sampling=sampling, seed=rng_fast
    )
    grad = sampled_gradient_fn(data, 3, rng_ref, sampling)
    ref = optim.run(grad, W0, opt, STEPS, record=_record, record_at=GRID, batch_ndim=1)
    _assert_close(fast, ref)
    # the same samples were drawn, no more: both generators are at the same state
    assert rng_fast.random() == rng_ref.random()


def test_draws_in_chunks_are_the_per_step_stream():
    """``rng.random((n, 2, b, B))`` is ``n`` pairs of calls ``rng.random((b, B))``."""
    chunk = np.random.default_rng(3).random((4, 2, 3, 5))
    rng = np.random.default_rng(3)
    steps = [[rng.random((3, 5)), rng.random((3, 5))] for _ in range(4)]
    np.testing.assert_array_equal(chunk, np.array(steps))


@pytest.mark.parametrize("opt", METHODS, ids=lambda o: o.name)
def test_trials_in_a_batch_get_the_floats_they_get_alone(data, opt):
    W0 = _start(data, (3,))
    batched = descent.run_decoder(data, opt, 60, W0, record=_record, record_at=GRID[GRID <= 60])
    for t in range(3):
        alone = descent.run_decoder(data, opt, 60, W0[t], record=_record, record_at=GRID[GRID <= 60])
        np.testing.assert_array_equal(batched.iterates[:, t], alone.iterates)


@pytest.mark.parametrize("opt", METHODS, ids=lambda o: o.name)
def test_chunks_and_grids_change_no_float(data, opt, monkeypatch):
    """A run recorded on a finer grid, in chunks of 7 steps, and its prefix are the same floats."""
    W0 = _start(data)
    sparse = descent.run_decoder(data, opt, 90, W0, record=_record, record_at=np.array([0, 30, 90]))
    monkeypatch.setattr(ntp.settings, "DESCENT_CHUNK_MACS", 7 * 2 * data.V * data.m * max(data.m, data.d))
    dense = descent.run_decoder(data, opt, 120, W0, record=_record, record_at=np.arange(0, 121, 5))
    np.testing.assert_array_equal(dense.iterates[[0, 6, 18]], sparse.iterates)
    prefix = descent.run_decoder(data, opt, 30, W0)
    np.testing.assert_array_equal(prefix.W, sparse.iterates[1])


def test_train_is_the_compiled_run_with_the_tracker():
    data = random_data(m=6, d=9, V=5, S=2, seed=4)  # d > m: separable, as train requires
    lim = training.limits(data)
    W0 = _start(data)
    trace = training.train(data, optim.adam(0.01), STEPS, W0=W0, record_at=GRID, lim=lim)
    grad, record = gradient_fn(data), training.tracker(data, lim)
    ref = optim.run(grad, W0, optim.adam(0.01), STEPS, record=record, record_at=GRID)
    for name in ("ce", "kl", "norm", "corr", "corr_corrected", "dist_F"):
        np.testing.assert_allclose(getattr(trace, name), getattr(ref, name), rtol=1e-10, atol=1e-13)


def test_progress_is_reported_at_every_record_and_at_the_end(data):
    calls = []
    report = lambda k, n: calls.append((k, n))
    descent.run_decoder(data, optim.gd(0.5), 40, _start(data), record_at=[0, 5, 40], progress=report)
    assert calls == [(0, 40), (5, 40), (40, 40)]


def test_progress_is_reported_between_records_after_its_interval(data, monkeypatch):
    monkeypatch.setattr(ntp.settings, "PROGRESS_SECONDS", 0.0)
    monkeypatch.setattr(ntp.settings, "DESCENT_CHUNK_MACS", 1)  # one step a chunk
    calls = []
    report = lambda k, n: calls.append(k)
    descent.run_decoder(data, optim.gd(0.5), 6, _start(data), record_at=np.array([0, 6]), progress=report)
    assert calls == [0, 1, 2, 3, 4, 5, 6]


# --- errors, as the reference loop raises them ------------------------------------------------


def _uniform_data(m: int, d: int) -> ntp.NTPData:
    """Every next-token distribution uniform over 4 tokens: at W = 0 the gradient is exactly 0."""
    H = np.random.default_rng(0).standard_normal((m, d))
    return ntp.NTPData(H=H, pi=np.full(m, 1 / m), P=np.full((m, 4), 0.25))


@pytest.mark.parametrize("m, d", [(3, 5), (5, 3)], ids=["logit form", "weight form"])
def test_normalized_gd_at_a_zero_gradient_raises_as_the_reference(m, d):
    data = _uniform_data(m, d)
    W0 = np.zeros((2, 4, d))
    W0[0] = 0.1  # a constant W shifts all logits alike: still a zero gradient
    W0[1] = np.random.default_rng(1).standard_normal((4, d))
    message = r"zero gradient \(batch element \(0,\)\) at iteration 0"
    with pytest.raises(SolverError, match=message):
        optim.run(gradient_fn(data), W0, optim.normalized_gd(0.1), 3, batch_ndim=1)
    with pytest.raises(SolverError, match=message):
        descent.run_decoder(data, optim.normalized_gd(0.1), 3, W0)
    # with an offset the step is zero, as in the reference
    still = descent.run_decoder(data, optim.normalized_gd(0.1, eps=1e-16), 3, W0[0])
    np.testing.assert_array_equal(still.W, W0[0])


def _run(data, opt=None, n_iter=5, W0=None, **kw):
    W0 = np.zeros((data.V, data.d)) if W0 is None else W0
    return descent.run_decoder(data, optim.gd(0.1) if opt is None else opt, n_iter, W0, **kw)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda d: _run(d, W0=np.zeros((d.d, d.V))), "W0 must have shape"),
        (lambda d: _run(d, W0=np.full((d.V, d.d), np.nan)), "non-finite"),
        (lambda d: _run(d, W0=np.zeros((0, d.V, d.d))), "empty"),
        (lambda d: _run(d, opt="gd"), "Optimizer"),
        (lambda d: _run(d, n_iter=-1), "n_iter"),
        (lambda d: _run(d, record_at=[0, 6]), "record_at"),
        (lambda d: _run(d, optim.sgd(0.1), batch_size=0), "batch_size"),
        (lambda d: _run(d, optim.sgd(0.1), batch_size=2, sampling="tokens"), "sampling"),
        (lambda d: _run(d, progress=3), "progress"),
        (lambda d: descent.run_decoder(d.H, optim.gd(0.1), 5, np.zeros((d.V, d.d))), "NTPData"),
    ],
)
def test_bad_input_is_named(data, call, match):
    with pytest.raises(InvalidDataError, match=match):
        call(data)


def test_compile_kernels_runs_every_form(monkeypatch):
    forms = _forms_run(monkeypatch)
    descent.compile_kernels()
    assert list(dict.fromkeys(forms)) == [True, False]


# --- the kernels' pieces ----------------------------------------------------------------------


def test_exp_is_within_an_ulp_of_numpy_over_the_whole_range():
    rng = np.random.default_rng(0)
    x = np.concatenate([-rng.exponential(3.0, 20_000), -rng.uniform(0, 745, 20_000), [0.0, -1e-300, -708.4]])
    ours = np.array([kernels.exp_nonpositive(v) for v in x])
    ref = np.exp(x)
    ulps = np.abs(ours - ref) / np.spacing(ref)
    assert ulps.max() <= 1.0
    assert kernels.exp_nonpositive(0.0) == 1.0
    assert kernels.exp_nonpositive(-745.0) == np.exp(-745.0)  # subnormal
    for below in (-746.0, -1e10, -np.inf):
        assert kernels.exp_nonpositive(below) == 0.0
    assert math.isfinite(kernels.exp_nonpositive(np.nan))  # NaN: the caller's iterate check


def test_exp_constants():
    """The table holds 2^(j/32) (within an ulp of numpy's exp2); ln2/32 is split so that its
    leading part times any integer up to 2^16 is exact (at least 30 trailing zero bits)."""
    j = np.arange(kernels._EXP_N)
    table = kernels._EXP_TABLE
    assert np.all(np.abs(table - np.exp2(j / 32)) <= np.spacing(table))
    np.testing.assert_allclose(table**32, 2.0**j, rtol=32 * 2.3e-16)
    bits = int(np.float64(kernels._LN2_N_HI).view(np.int64))
    assert bits & ((1 << 30) - 1) == 0
    assert kernels._LN2_N_HI + kernels._LN2_N_LO == math.log(2) / 32
    assert kernels._INV_LN2_N == 32 / math.log(2)


def test_exp_is_its_formula_with_separately_rounded_operations():
    """The compiled exp equals its formula evaluated by numpy, whose multiply and add are rounded
    one by one: the compiler fused no multiply-add (the floats would differ, on an FMA CPU)."""
    x = np.concatenate([-np.random.default_rng(1).exponential(4.0, 5000), [0.0, -745.0, -746.0]])
    k = (np.maximum(x, kernels._EXP_FLOOR) * kernels._INV_LN2_N + kernels._SHIFT) - kernels._SHIFT
    xc = np.maximum(x, kernels._EXP_FLOOR)
    r = (xc - k * kernels._LN2_N_HI) - k * kernels._LN2_N_LO
    p = np.full_like(r, kernels._C6)
    for c in (kernels._C5, kernels._C4, kernels._C3, kernels._C2):
        p = p * r + c
    p = (p * r) * r + r
    n = k.astype(np.int64)
    j = n & (kernels._EXP_N - 1)
    t = kernels._EXP_TABLE[j]
    scale = kernels._POW2[(n - j) // kernels._EXP_N + 54 - kernels._POW2_MIN]
    expected = ((t + t * p) * scale) * kernels._TWO_M54
    np.testing.assert_array_equal([kernels.exp_nonpositive(v) for v in x], expected)


@pytest.mark.parametrize("shape", [(1, 1, 1), (5, 7, 3), (10, 50, 60), (3, 4, 1)])
def test_matmul_adds_in_order_as_the_reproducible_products(shape):
    r, k, n = shape
    rng = np.random.default_rng(k)
    A, B = rng.standard_normal((r, k)), rng.standard_normal((k, n))
    out = np.empty((r, n))
    kernels.matmul_into(A, B, out)
    np.testing.assert_array_equal(out, matmul(A, B))  # the same floats, not only close
    np.testing.assert_allclose(out, A @ B, rtol=1e-12, atol=1e-12)


def test_softmax_residual_is_the_gradient_factor(data):
    W = 3.0 * np.random.default_rng(2).standard_normal((data.V, data.d))
    LT = np.ascontiguousarray((data.H @ W.T).T)
    ET = np.empty_like(LT)
    kernels.softmax_residual(LT, np.ascontiguousarray(data.P.T), data.pi, ET, np.empty((2, data.m)))
    np.testing.assert_allclose(ET @ data.H, ntp.ce_grad(data, W), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ET.sum(axis=0), 0.0, atol=1e-15)
