"""First-order training of the linear decoder through compiled loops: ``optim.run`` for Paper A's loss.

:func:`run_decoder` computes what :func:`ntpnb._optim.run` computes on the gradient of Eq. (2)
of Paper A (or on stochastic gradients: :data:`SAMPLING_KINDS`), to rounding, with the same
records, checks and errors, in chunks of steps inside the compiled loops of :mod:`._decoder_loops`:
in their *logit form* for full-batch GD and normalized GD with ``m <= d`` (``K = H H^T`` then
has full rank for embeddings in general position, so the gradient's norm is well conditioned),
else in their *weight form*. Trials (leading batch axes of ``W0``) run in one call, each with the floats it
gets alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .. import _optim as optim
from .. import settings
from .._validation import as_count, as_generator, read_only_view
from ..errors import InvalidDataError
from ._ntp_data import NTPData, require_data

Array = np.ndarray

#: The kinds of stochastic gradient (footnote 8 of Paper A): (context, token) pairs of the
#: per-sample loss (1), or distinct contexts with their whole next-token distribution (Eq. (2)).
SAMPLING_KINDS: tuple[str, ...] = ("sequences", "contexts")


class _WeightForm:
    """Steps on the iterate itself (any rule): full-batch, or with ``batch_size`` samples a step."""

    def __init__(
        self,
        data: NTPData,
        W0: Array,
        optimizer: optim.Optimizer,
        batch_size: int | None = None,
        rng: np.random.Generator | None = None,
        sampling: str = "sequences",
    ) -> None:
        # compiled by numba when first needed: imported here, not at the top
        from . import _decoder_loops as decoder_loops

        self.loops = decoder_loops
        self.data, self.opt, self.W = data, optimizer, W0
        self.M = np.zeros_like(W0)
        self.Q = np.zeros_like(W0)
        self.powers = np.ones(2)  # [b1^k, b2^k] after k steps
        # writable C-ordered float copies: one compiled signature for every array a kernel takes
        own = (np.array(a, dtype=float, order="C") for a in (data.H, data.H.T, data.P.T, data.pi, data.P))
        self.H, self.HT, self.PT, self.pi, self.P = own
        self.batch_size, self.rng, self.sequences = batch_size or 0, rng, sampling == "sequences"
        self.LT = np.empty((W0.shape[0], data.V, 0)) if batch_size else self.batched(W0, self.HT)
        self.macs_per_step = 2 * W0.shape[0] * (batch_size or data.m) * data.V * data.d

    def batched(self, A: Array, B: Array) -> Array:
        """``A[t] @ B`` for each trial ``t`` (``A`` of shape ``(b, r, k)``), by the compiled product."""
        out = np.empty((A.shape[0], A.shape[1], B.shape[1]))
        for t in range(A.shape[0]):
            self.loops.matmul_into(A[t], B, out[t])
        return out

    def advance(self, n: int) -> tuple[int, int, int]:
        # contexts j ~ pi and tokens z ~ p_j (-1: none) of the next n steps, (n, trials, batch_size),
        # from rng.random((n, 2, trials, B)) (contexts, then tokens; contexts alone for "contexts"):
        # the first index whose cumulative probability exceeds its draw
        shape = (n, self.W.shape[0], self.batch_size)
        contexts = tokens = np.full(shape, -1, dtype=np.int64)
        if self.batch_size:
            u = self.rng.random((n, 1 + self.sequences, *shape[1:]))
            contexts = np.minimum(
                np.searchsorted(np.cumsum(self.data.pi), u[:, 0], side="right"), self.data.m - 1
            )
            if self.sequences:
                below = u[:, 1][..., None] >= np.cumsum(self.data.P, axis=1)[contexts]
                tokens = np.minimum(below.sum(axis=-1), self.data.V - 1)
        return self.loops.weight_steps(
            self.W, self.M, self.Q, self.LT, self.H, self.HT, self.PT, self.pi, self.P, contexts, tokens,
            self.opt.compiled_rule, self.powers,
        )  # fmt: skip

    def iterate(self) -> Array:
        return self.W


class _LogitForm(_WeightForm):
    """Full-batch GD or normalized GD on the logits; the iterate (``W`` stays ``W0``) formed where asked."""

    def __init__(self, data: NTPData, W0: Array, optimizer: optim.Optimizer) -> None:
        super().__init__(data, W0, optimizer)
        self.K = np.empty((data.m, data.m))
        self.loops.matmul_into(self.H, self.HT, self.K)
        self.S = np.zeros_like(self.LT)
        self.macs_per_step = W0.shape[0] * data.V * data.m * data.m

    def advance(self, n: int) -> tuple[int, int, int]:
        return self.loops.logit_steps(
            self.LT, self.S, self.K, self.H, self.PT, self.pi, self.opt.compiled_rule, n
        )

    def iterate(self) -> Array:
        return self.W - self.batched(self.S, self.H)


def _checked_batch(batch_size: int | None, sampling: str) -> int | None:
    """``batch_size`` as a count (None: full batch), with ``sampling`` one of :data:`SAMPLING_KINDS`."""
    if batch_size is None:
        return None
    if sampling not in SAMPLING_KINDS:
        raise InvalidDataError(f"unknown sampling {sampling!r}; expected one of {SAMPLING_KINDS}")
    return as_count(batch_size, "batch_size")


@dataclass(frozen=True, eq=False)
class DecoderRun:
    """The settings of one run of the linear decoder, each checked once: what the compiled loops trust.

    Made by :func:`checked_run`; :func:`descend` takes the steps.
    """

    #: The training set (an :class:`NTPData`).
    data: NTPData
    optimizer: optim.Optimizer
    n_iter: int
    #: The initial iterates, a writable C-ordered float64 array ``(trials, V, d)``.
    W: Array
    #: The leading (batch) axes of ``W0``, whose trials ``W`` lays out in one axis.
    batch_shape: tuple[int, ...]
    #: Samples a step of a stochastic gradient (None: the full-batch gradient).
    batch_size: int | None
    sampling: str
    rng: np.random.Generator


def checked_run(
    data: NTPData,
    optimizer: optim.Optimizer,
    n_iter: int,
    W0: ArrayLike,
    *,
    batch_size: int | None = None,
    sampling: str = "sequences",
    seed: int | np.random.Generator = 0,
) -> DecoderRun:
    """The settings of :func:`run_decoder` checked, for ``data`` its caller checked (an :class:`NTPData`).

    Raises
    ------
    InvalidDataError
        As :func:`run_decoder`, on bad settings or ``W0``.
    """
    W, n_iter = optim.check_run(optimizer, W0, n_iter, shape=(data.V, data.d), batch_ndim=None)
    batch_size = _checked_batch(batch_size, sampling)
    rng = as_generator(seed)
    trials = np.ascontiguousarray(W.reshape(-1, data.V, data.d))
    return DecoderRun(data, optimizer, n_iter, trials, W.shape[:-2], batch_size, sampling, rng)


def _form(run: DecoderRun) -> _LogitForm | _WeightForm:
    """The representation the run steps in: the logit form where it is the smaller state, else the weights.

    GD and normalized GD (rules without moments) move ``W`` along the rows of ``H``: for
    ``m <= d`` the logits are the smaller state.
    """
    data, optimizer = run.data, run.optimizer
    if run.batch_size is None and not optimizer.rule.moments and data.m <= data.d:
        return _LogitForm(data, run.W, optimizer)
    return _WeightForm(data, run.W, optimizer, run.batch_size, run.rng, run.sampling)


def descend(
    run: DecoderRun,
    record: Callable[[Array], Mapping[str, Array | float]] | None = None,
    record_at: ArrayLike | None = None,
    progress: optim.ProgressHook | None = None,
) -> optim.Trace:
    """Take the steps of ``run`` in the compiled loops, recording as :func:`ntpnb._optim.run` records.

    Raises
    ------
    InvalidDataError, SolverError
        As :func:`run_decoder`.
    """
    shape = (*run.batch_shape, run.data.V, run.data.d)
    recorder = optim.Recorder(run.n_iter, record, record_at, run.optimizer.label(), progress)
    form = _form(run)
    chunk = max(1, settings.DESCENT_CHUNK_MACS // max(1, form.macs_per_step))

    def current() -> Array:
        return read_only_view(form.iterate().reshape(shape))

    def advance(k: int, n: int) -> None:
        status, step, trial = form.advance(n)
        if status != optim.OK:
            raise optim.gradient_error(status, k + step, trial, run.batch_shape)

    recorder.drive(advance, current, chunk)
    return recorder.trace(form.iterate().reshape(shape))


def run_decoder(
    data: NTPData,
    optimizer: optim.Optimizer,
    n_iter: int,
    W0: ArrayLike,
    *,
    record: Callable[[Array], Mapping[str, Array | float]] | None = None,
    record_at: ArrayLike | None = None,
    batch_size: int | None = None,
    sampling: str = "sequences",
    seed: int | np.random.Generator = 0,
    progress: optim.ProgressHook | None = None,
) -> optim.Trace:
    """Train the linear decoder on ``data`` from ``W0``: :func:`ntpnb._optim.run`, compiled.

    Parameters
    ----------
    data
        The training set (its loss, Eq. (2) of Paper A).
    W0
        Initial decoder, ``(V, d)`` or ``(..., V, d)`` for independent trials (not modified).
    record, record_at, progress
        As in :func:`ntpnb._optim.run`.
    batch_size, sampling, seed
        Stochastic gradients with ``batch_size`` samples a step of a kind of :data:`SAMPLING_KINDS`,
        drawn from ``seed`` (``rng.random((2, *batch, B))`` a step: contexts ``j ~ pi``, then tokens
        ``z ~ p_j``; contexts alone for ``"contexts"``); None (default): the full-batch gradient.

    Returns
    -------
    Trace
        As :func:`ntpnb._optim.run` returns it on the same settings, to rounding.

    Raises
    ------
    InvalidDataError
        On data that are not an :class:`NTPData`, bad settings, or as :func:`ntpnb._optim.check_run`
        (``W0`` of shape ``(..., V, d)``).
    SolverError
        As :func:`ntpnb._optim.run`.
    """
    require_data(data)
    run = checked_run(data, optimizer, n_iter, W0, batch_size=batch_size, sampling=sampling, seed=seed)
    return descend(run, record, record_at, progress)


def compile_kernels() -> None:
    """Compile (or load from numba's cache) every kernel :func:`run_decoder` uses."""
    data = NTPData(H=np.eye(2), pi=[0.5, 0.5], P=[[0.5, 0.5], [0.25, 0.75]])
    W0 = np.zeros((2, 2))
    run_decoder(data, optim.gd(0.1), 2, W0)  # logit form (m <= d)
    run_decoder(data, optim.adam(0.1), 2, W0)  # weight form (and sampled gradients: one signature)
