"""The attention model's gradient in compiled loops, for training: the numpy reference's, faster.

A gradient is two or three calls of the kernels of :mod:`~ntpnb.attention._ngd_loops` with numpy's
exponential between them (:class:`CompiledStep`); :func:`ntpnb.attention._batched_training.train` steps
by it with the optimizer's compiled step (:mod:`ntpnb._optim_loops`, any rule of
:data:`ntpnb._optim.RULES`) in :func:`ntpnb._optim.run`'s loop.
The kernels compute the model's gradient over each trial's token table (:func:`token_table`: scores
gathered from ``U W U^T`` over the distinct vectors ``U``), the operations of a numpy reference
(tests/attention_instances.py ``table_gradient``) with sums added in their own order: its gradients
and :func:`ntpnb._optim.run`'s iterates on it to rounding (tests/attention/test_engine.py states the
tolerances). Normalized GD amplifies rounding once it runs long: runs of hundreds of steps part from
the reference's, as they would under another order of numpy's own sums.

:func:`compiled_step` returns ``None`` where the token table costs more than it saves (many distinct
vectors), and for the log-loss with ``gamma`` unequal on a sample's label positions (a head other
than ``C E^T = I``); ``train`` then runs :func:`ntpnb._optim.run` on
the gradient of :func:`~ntpnb.attention._model.loss_and_grad`.
"""

from __future__ import annotations

import numpy as np

from ._model import Problem


def _last(a: np.ndarray, dtype: type = np.float64) -> np.ndarray:
    """A writable, contiguous copy of ``a`` with its first (trial) axis moved last."""
    return np.array(np.moveaxis(np.asarray(a), 0, -1), dtype=dtype, order="C")


def token_table(prob: Problem) -> tuple[np.ndarray, np.ndarray]:
    """The distinct vectors of each trial and where each score lives in ``G = U W U^T``.

    ``U`` ``(k, d, B)``: the distinct rows (inputs and queries) of each trial, zero-padded to a common
    ``k``; ``index`` ``(B, n, T)``: each position's flat index ``(token * k + query) * B + b`` in ``G``.
    """
    B, n, T, d = prob.emb.shape
    rows = np.concatenate([prob.emb.reshape(B, n * T, d), prob.query], axis=1)
    tables, ids = [], np.empty((B, n * T + n), dtype=np.int64)
    for b in range(B):
        U, inverse = np.unique(rows[b], axis=0, return_inverse=True)
        tables.append(U)
        ids[b] = inverse.reshape(-1)
    k = max(U.shape[0] for U in tables)
    U = np.zeros((k, d, B))
    for b, table in enumerate(tables):
        U[: table.shape[0], :, b] = table
    token, query = ids[:, : n * T].reshape(B, n, T), ids[:, n * T :]
    index = (token * k + query[..., None]) * B + np.arange(B)[:, None, None]
    return U, index


class CompiledStep:
    """One stacked problem's constants and scratch, trial axis last, and its compiled gradient.

    A subclass's ``run(WL)`` fills :attr:`grad` ``(d, d, B)`` with the gradient at ``WL`` (``W``
    trial axis last).
    """

    def __init__(self, U: np.ndarray, index: np.ndarray) -> None:
        from . import (
            _ngd_loops as ngd_loops,  # compiled by numba when first needed: imported here, not at the top
        )

        self.kernels = ngd_loops
        self.U = np.ascontiguousarray(U)
        self.UT = np.ascontiguousarray(np.swapaxes(self.U, 0, 1))
        k, d, B = self.U.shape
        self.B, self.d = B, d
        self.tok = _last(index // B // k, np.int64)  # (n, T, B) token row of each position
        rows = (index // B % k)[:, :, 0]  # (B, n) table row of each sample's query
        # the query rows of each trial, in increasing order (zero rows pad them to m)
        queries = [np.unique(r) for r in rows]
        m = max(q.size for q in queries)
        self.Uq = np.zeros((m, d, B))
        qry = np.empty(rows.shape, dtype=np.int64)  # (B, n) query row of each sample
        for b, q in enumerate(queries):
            self.Uq[: q.size, :, b] = self.U[q, :, b]
            qry[b] = np.searchsorted(q, rows[b])
        self.qry = _last(qry, np.int64)  # (n, B)
        self.UW = np.empty((k, d, B))
        self.G = np.empty((k, m, B))
        self.A = np.empty((k, m, B))
        self.UA = np.empty((d, m, B))
        self.grad = np.empty((d, d, B))
        self.lanes = np.empty((3, B))  # per-trial scratch of the kernels
        self.table = tuple(getattr(self, name) for name in self.kernels.TABLE_ARRAYS)

    def gradient_of(self, W: np.ndarray) -> np.ndarray:
        """The gradient ``(B, d, d)`` at ``W`` ``(B, d, d)``: that of the numpy reference."""
        self.run(_last(W))
        return np.ascontiguousarray(np.moveaxis(self.grad, -1, 0))


class _LogStep(CompiledStep):
    """The log-loss with ``gamma`` uniform on the label positions (``C E^T = I``)."""

    def __init__(self, prob: Problem, U: np.ndarray, index: np.ndarray) -> None:
        super().__init__(U, index)
        # the softmaxes' additive masks, (2, n, T, B): s over the input (0 or -inf), r = softmax(sc +
        # log gamma) (log gamma); the sample weight on positions off the label (n, T, B)
        self.shift = _last(np.stack([np.where(prob.mask, 0.0, -np.inf), prob.log_gamma], axis=1))
        self.off_w = _last((prob.mask & ~np.isfinite(prob.log_gamma)) * prob.weights[..., None])
        self.z = np.empty(self.shift.shape)
        self.wdsc = np.empty(self.off_w.shape)

    def run(self, WL: np.ndarray) -> None:
        kernels, z = self.kernels, self.z
        kernels.shifted_logits(WL, self.table, self.shift, z, self.lanes)
        np.exp(z, out=z)
        kernels.log_gradient(z, self.off_w, self.wdsc, self.table, self.lanes[0])


class _HeadStep(CompiledStep):
    """The losses on the head's output: squared, cross-entropy, squared softmax."""

    def __init__(self, prob: Problem, U: np.ndarray, index: np.ndarray) -> None:
        super().__init__(U, index)
        B, n, T, d = prob.emb.shape
        K = prob.C.shape[1]
        self.loss = self.kernels.HEAD_LOSSES.index(prob.loss)
        self.mask = _last(prob.mask, np.bool_)
        # the attention softmax's additive mask, (1, n, T, B): 0 on the input, -inf at padding
        self.shift = _last(np.where(prob.mask, 0.0, -np.inf)[:, None])
        self.emb = _last(prob.emb)  # (n, T, d, B)
        self.C = _last(prob.C)  # (K, d, B)
        self.labels = _last(prob.labels, np.int64)
        self.weights = _last(prob.weights)
        self.z = np.empty((1, n, T, B))
        self.f = np.empty((n, d, B))
        self.gf = np.empty((n, d, B))
        self.classes = np.empty((n, K, B))
        self.wdsc = np.empty((n, T, B))
        self.work = np.empty((max(d, K, T), B))
        self.work2 = np.empty((max(d, K, T), B))
        self.head = tuple(getattr(self, name) for name in self.kernels.HEAD_ARRAYS)

    def run(self, WL: np.ndarray) -> None:
        kernels, z, classes = self.kernels, self.z, self.classes
        kernels.shifted_logits(WL, self.table, self.shift, z, self.lanes)
        np.exp(z, out=z)
        z = z[0]
        if self.loss:  # the cross-entropy and the squared softmax loss: the class probabilities
            kernels.head_logits(z, self.emb, self.f, self.C, classes, self.lanes)
            np.exp(classes, out=classes)
        kernels.head_gradient(self.loss, z, classes, self.head, self.table, self.lanes)


def compiled_step(prob: Problem) -> CompiledStep | None:
    """The compiled gradient and step of ``prob``; ``None`` where there is none (module docstring)."""
    U, index = token_table(prob)
    _, n, T, d = prob.emb.shape
    if U.shape[0] ** 2 > n * T * d:  # many distinct vectors: the table costs more than it saves
        return None
    if prob.loss != "log":
        return _HeadStep(prob, U, index)
    on = np.isfinite(prob.log_gamma)
    gamma = np.exp(np.where(on, prob.log_gamma, 0.0))
    uniform = np.where(on, gamma, -np.inf).max(axis=-1) == np.where(on, gamma, np.inf).min(axis=-1)
    return _LogStep(prob, U, index) if uniform.all() else None
