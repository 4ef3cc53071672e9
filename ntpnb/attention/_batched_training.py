"""Batched training of attention weights: many independent trials as one vectorized run.

:func:`train` runs any optimizer on the compiled step of :mod:`~ntpnb.attention._engine`, and problems
without a compiled step on :func:`ntpnb._optim.run` (``batch_ndim=1``: each trial normalized by its own
norm). :func:`train_trials` runs one batch per worker of joblib's active
backend (:func:`ntpnb._parallel.parallel_map`) with the same results. The helpers compute the paper's plotted
quantities for all trials at once.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from types import MappingProxyType

import numpy as np

from .. import _optim as optim
from .._direction import correlation
from .._parallel import active_workers, parallel_map
from .._validation import as_ordered, frozen, read_only_view
from ..errors import InvalidDataError
from ._engine import CompiledStep, compiled_step
from ._model import Problem, check_problem, loss_and_grad, stack_problems

__all__ = [
    "train",
    "train_trials",
    "correlation",
]


def train(
    prob: Problem,
    optimizer: optim.Optimizer,
    n_iter: int,
    *,
    W0: np.ndarray | None = None,
    record: Callable[[np.ndarray], Mapping[str, np.ndarray]] | None = None,
    record_at: np.ndarray | None = None,
    progress: optim.ProgressHook | None = None,
    compiled: bool = True,
) -> optim.Trace:
    """Train ``W`` of shape ``(B, d, d)`` on the ``B`` stacked problems of ``prob`` at once.

    ``W0`` defaults to zeros; ``record``, ``record_at`` as for :func:`ntpnb._optim.run`. Any optimizer
    runs on the compiled step where the problem has one (:func:`~ntpnb.attention._engine.compiled_step`)
    and ``compiled`` is true, in :func:`ntpnb._optim.run`'s loop (its records and errors; the step of
    :mod:`ntpnb._optim_loops`, a trial per column), else on :func:`ntpnb._optim.run` of the model's
    gradient (the two agree to rounding). ``progress`` is told ``(steps done, n_iter)``
    (:class:`ntpnb._optim.Recorder`), and at the end.

    Raises
    ------
    InvalidDataError
        If ``prob`` is not a :class:`Problem`; as :func:`ntpnb._optim.check_run` for ``optimizer``,
        ``n_iter`` and ``W0`` (shape ``(B, d, d)``); and as :func:`ntpnb._optim.run`.
    """
    check_problem(prob)
    shape = (prob.B, prob.d, prob.d)
    W0, n_iter = optim.check_run(optimizer, np.zeros(shape) if W0 is None else W0, n_iter, shape=shape)
    step = compiled_step(prob) if compiled else None
    if step is None:
        grad = lambda W: loss_and_grad(W, prob)[1]
        return optim.run(
            grad, W0, optimizer, n_iter, record=record, record_at=record_at, batch_ndim=1, progress=progress
        )
    recorder = optim.Recorder(n_iter, record, record_at, optimizer.label(), progress)
    trace = _run_compiled(prob, step, optimizer, W0, recorder)
    if progress is not None:
        progress(n_iter, n_iter)
    return trace


def _run_compiled(
    prob: Problem, step: CompiledStep, optimizer: optim.Optimizer, W0: np.ndarray, recorder: optim.Recorder
) -> optim.Trace:
    """:func:`train`'s loop on the compiled gradient and :func:`ntpnb._optim_loops.step`, a trial per column.

    ``W0`` ``(B, d, d)`` is checked; the recorder drives one step a call and keeps its records.

    Raises
    ------
    SolverError
        :func:`ntpnb._optim.gradient_error`, when normalized GD meets a zero or non-finite gradient.
    """
    from .. import (
        _optim_loops as optim_loops,  # compiled by numba when first needed: imported here, not at the top
    )

    rule, betas = optimizer.compiled_rule, np.array(optimizer.betas)
    WL, columns = np.array(np.moveaxis(W0, 0, -1), order="C"), (prob.d * prob.d, prob.B)  # trial axis last
    # Adam's moments, the rule's scratch and [b1^k, b2^k]
    state = (np.zeros(columns), np.zeros(columns), np.empty((2, prob.B)), np.ones(2))
    current = lambda: read_only_view(np.ascontiguousarray(np.moveaxis(WL, -1, 0)))

    def advance(k: int, _n: int) -> None:  # one step a call: drive's chunk is 1
        step.run(WL)
        state[3][:] *= betas
        status, trial = optim_loops.step(WL.reshape(columns), step.grad.reshape(columns), state, rule, True)
        if status != optim.OK:  # nothing moved
            raise optim.gradient_error(status, k, trial, (prob.B,))

    recorder.drive(advance, current)
    return recorder.trace(np.ascontiguousarray(np.moveaxis(WL, -1, 0)))


def _train_chunk(
    chunk: tuple[Sequence[Problem], np.ndarray],
    optimizer: optim.Optimizer,
    n_iter: int,
    record_at: np.ndarray | None,
    compiled: bool,
    progress: optim.ProgressHook | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One batched run over ``problems`` from ``W0``: (recorded iterations, recorded ``W``, final ``W``)."""
    problems, W0 = chunk
    prob = stack_problems(problems)
    record = lambda W: {"iterates": W}
    trace = train(
        prob,
        optimizer,
        n_iter,
        W0=W0,
        record=record,
        record_at=record_at,
        progress=progress,
        compiled=compiled,
    )
    return trace.iterations, trace.iterates, trace.W


def train_trials(
    problems: Sequence[Problem],
    optimizer: optim.Optimizer,
    n_iter: int,
    *,
    record_at: np.ndarray | None = None,
    W0: np.ndarray | None = None,
    progress: optim.ProgressHook | None = None,
) -> optim.Trace:
    """Train every trial from ``W0`` (default 0): :func:`train` on chunks of trials, through joblib.

    The trials (single-trial or batched problems with the same ``d``) are split into
    :func:`ntpnb._parallel.active_workers` consecutive chunks (at most one per trial; one when nothing
    is configured), each one batched run through :func:`ntpnb._parallel.parallel_map`:
    bit for bit the same results for any chunking (tests/attention/test_batched_training.py) and
    backend (test_paper_experiments.py). ``optimizer``, ``n_iter``, ``record_at`` as for
    :func:`train`; ``W0`` ``(B, d, d)``; ``progress`` is told ``(steps done, n_iter)`` step by step
    for one chunk, once at the end for several.

    Returns
    -------
    optim.Trace
        ``iterates`` ``(n_records, B, d, d)``, the recorded iterates; ``W`` the final ones ``(B, d, d)``.

    Raises
    ------
    InvalidDataError
        If there are no problems, or as :func:`train`.
    """
    problems = as_ordered(problems, "problems")
    if not problems:
        raise InvalidDataError("no problems to train")
    for prob in problems:
        check_problem(prob)
    B, d = sum(p.B for p in problems), problems[0].d
    shape = (B, d, d)
    W0, _ = optim.check_run(optimizer, np.zeros(shape) if W0 is None else W0, n_iter, shape=shape)
    starts = np.cumsum([0] + [p.B for p in problems])
    bounds = np.linspace(0, len(problems), min(active_workers(), len(problems)) + 1).round().astype(int)
    chunks = [(problems[a:b], W0[starts[a] : starts[b]]) for a, b in itertools.pairwise(bounds)]
    # the compiled step or the numpy gradient, decided once for all trials: the two agree to rounding
    # only, so a trial's floats must not depend on the trials that share its chunk
    compiled = compiled_step(stack_problems(problems)) is not None
    task = partial(_train_chunk, optimizer=optimizer, n_iter=n_iter, record_at=record_at, compiled=compiled)
    if len(chunks) == 1:
        runs = [task(chunks[0], progress=progress)]
    else:
        runs = parallel_map(task, chunks)
        if progress is not None:
            progress(n_iter, n_iter)
    W_hist = frozen(np.concatenate([r[1] for r in runs], axis=1), order="K")
    W_final = frozen(np.concatenate([r[2] for r in runs], axis=0), order="K")
    return optim.Trace(iterations=runs[0][0], values=MappingProxyType({"iterates": W_hist}), W=W_final)


def stack_bases(bases: Sequence[np.ndarray]) -> np.ndarray:
    """Orthonormal bases of different dimensions (rows) padded with zero rows: ``(B, m_max, d*d)``."""
    p = bases[0].shape[1]
    m = max(1, max(b.shape[0] for b in bases))
    out = np.zeros((len(bases), m, p))
    for i, b in enumerate(bases):
        out[i, : b.shape[0]] = b
    return out


def project_batched(W: np.ndarray, bases: np.ndarray) -> np.ndarray:
    """``Pi_S(W)`` per trial, ``W`` ``(B, d, d)`` (or records of them) and stacked bases ``(B, m, d*d)``."""
    if W.ndim > 3:
        return np.array([project_batched(w, bases) for w in W])
    B, d, _ = W.shape
    coords = np.einsum("bmp,bp->bm", bases, W.reshape(B, d * d))
    return np.einsum("bmp,bm->bp", bases, coords).reshape(B, d, d)


def compile_kernels() -> None:
    """Compile (or load from numba's cache) every kernel :func:`train` uses: each loss, each rule."""
    from ._model import identity_head, make_problem, tied_head
    from ._token_data import as_token_data

    E = np.eye(3)
    data = as_token_data([[0, 1], [1, 2]], [1, 2], 3)
    problems = [make_problem(E, identity_head(E), data)]
    problems += [
        make_problem(E, tied_head(E), data, loss, "argmax") for loss in ("squared", "ce", "squared_softmax")
    ]
    for prob in problems:  # every loss here has a compiled step
        for optimizer in (optim.gd(0.1), optim.normalized_gd(0.1), optim.adam(0.1)):
            train(prob, optimizer, 2)
