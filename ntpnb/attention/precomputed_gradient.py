"""The training gradient with every per-problem constant computed once (what training runs).

:func:`gradient_function` returns :func:`~ntpnb.attention.model.gradient`, to rounding, as a function
of ``W`` alone, saving the per-call numpy overhead that dominates at the paper's sizes:

* **A token table.** With ``U_b`` (``k x d``) the distinct rows of trial ``b``, ``G_b = U_b W_b U_b^T``
  holds every score ``x_t^T W_b x_bar`` (one gather gives all samples'), and the gradient
  ``sum_{i,t} w_i a_it x_t x_bar_i^T`` is ``U_b^T A_b U_b``, ``A_b`` the ``bincount`` of the weighted
  score derivatives ``w_i a_it`` onto their (token, query) pairs.
* **Positions first.** With the position as the leading axis, the softmaxes' reductions are
  elementwise on ``(B, n)`` planes; the log-loss's two softmaxes (``s`` over the input, ``r`` over
  the label's positions) run stacked.
* **The log-loss's cheapest exact form.** Position ``t``'s score derivative is ``s_t`` off the
  label's positions and ``(r_t / gamma_t) sum_u s_u (gamma_u - gamma_t)`` on them
  (:func:`~ntpnb.attention.model.loss_and_grad`), i.e. ``-r_t S_off + (r_t / gamma_t) sum_{u on} s_u
  (gamma_u - gamma_t)``, ``S_off`` the attention off the label (positive terms, no cancellation).
  The second term is 0 when ``gamma`` is equal on a sample's label positions (``C E^T = I``) and
  computed only otherwise.

The other losses use the token table and :mod:`~ntpnb.attention.model`'s derivatives. With more
distinct vectors than the table pays for (``k^2 > n T d``) the reference itself runs. ``W`` is not
validated at each call; tests compare with the reference on every loss, head and scale.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..reproducible_products import dot_sum
from .model import Problem, _scores_grad, _weighted, gradient

__all__ = ["gradient_function"]


@dataclass(frozen=True)
class TokenTable:
    """Distinct vectors per trial and where each score lives in ``G = U W U^T``.

    Trial axis last: the products are elementwise multiply-adds over contiguous trials
    (:func:`ntpnb.reproducible_products.dot_sum`: the same rounding on every CPU and batch size).
    """

    #: ``(k, d, B)``: the distinct rows of each trial (zero-padded to a common ``k``).
    U: np.ndarray
    #: ``(B, n, T)`` flat index into ``G`` (laid out ``(k, k, B)``) of each position's score.
    index: np.ndarray

    @property
    def size(self) -> int:
        """Number of entries of ``G``."""
        return int(self.U.shape[0] ** 2 * self.U.shape[2])

    def scores(self, W: np.ndarray) -> np.ndarray:
        """``G = U W U^T``, laid out ``(k, k, B)``: every score of every trial."""
        U, d = self.U, self.U.shape[1]
        WL = np.ascontiguousarray(np.moveaxis(W, 0, -1))  # (d, d, B)
        UW = dot_sum((U[:, p, None], WL[None, p]) for p in range(d))  # (k, d, B)
        return dot_sum((UW[:, None, q], U[None, :, q]) for q in range(d))

    def weight_grad(self, index: np.ndarray, wdsc: np.ndarray) -> np.ndarray:
        """``sum w a_t x_t x_bar^T`` per trial ``(B, d, d)``, from score derivatives laid out as ``index``."""
        k, _, B = self.U.shape
        A = np.bincount(index.ravel(), weights=wdsc.ravel(), minlength=self.size).reshape(k, k, B)
        U = self.U
        UA = dot_sum((U[i, :, None], A[i, None]) for i in range(k))  # (d, k, B)
        grad = dot_sum((UA[:, j, None], U[None, j]) for j in range(k))  # (d, d, B)
        return np.ascontiguousarray(np.moveaxis(grad, -1, 0))


def token_table(prob: Problem) -> TokenTable:
    """The distinct vectors of each trial and where each score lives (:class:`TokenTable`)."""
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
    return TokenTable(U, index)


def uses_table(prob: Problem, table: TokenTable) -> bool:
    """Whether the token table pays for itself (``k^2 <= n T d``); else the reference runs."""
    _, n, T, d = prob.emb.shape
    return table.U.shape[0] ** 2 <= n * T * d


def gradient_function(prob: Problem) -> Callable[[np.ndarray], np.ndarray]:
    """``W -> gradient(W, prob)``, with the problem's constants computed once.

    Equal to :func:`~ntpnb.attention.model.gradient` up to rounding; ``W`` (``(B, d, d)``, finite) is
    not validated.
    """
    table = token_table(prob)
    if not uses_table(prob, table):  # many distinct vectors: the table costs more than it saves
        return lambda W: gradient(W, prob)
    if prob.loss == "log":
        return _log_loss_gradient(table, log_constants(prob, table))

    def grad(W: np.ndarray) -> np.ndarray:
        sc = np.take(table.scores(W), table.index)
        _, dsc = _scores_grad(sc, prob, with_loss=False)
        return table.weight_grad(table.index, _weighted(dsc, prob))

    return grad


@dataclass(frozen=True)
class LogConstants:
    """What the log-loss gradient needs besides ``W``, positions first (``(T, ...)`` arrays)."""

    #: ``(T, B, n)`` each position's score in the token table.
    index: np.ndarray
    #: ``(T, 2, B, n)`` ``index`` twice: the scores of both softmaxes.
    stacked: np.ndarray
    #: ``(T, 2, B, n)`` the softmaxes' additive masks: ``s`` over the input (0 or -inf), ``r =
    #: softmax(sc + log gamma)`` (``log gamma``).
    shift: np.ndarray
    #: ``(T, B, n)`` the sample weight on positions off the label, 0 elsewhere.
    off_w: np.ndarray
    #: ``(T, T, B, n)`` ``w (gamma_u - gamma_t) / gamma_t`` for ``t``, ``u`` on the label, 0 elsewhere.
    spread: np.ndarray
    #: Whether ``spread`` is 0 (``gamma`` equal on each sample's label positions, as under ``C E^T = I``).
    uniform: bool


def log_constants(prob: Problem, table: TokenTable) -> LogConstants:
    """The :class:`LogConstants` of a log-loss problem."""
    first = lambda a: np.ascontiguousarray(np.moveaxis(a, -1, 0))  # (B, n, T) -> (T, B, n)
    on = np.isfinite(prob.log_gamma)
    weights = prob.weights[None]
    index = first(table.index)
    stacked = np.ascontiguousarray(np.stack([index, index], axis=1))
    shift = np.stack([first(np.where(prob.mask, 0.0, -np.inf)), first(prob.log_gamma)], axis=1)
    off_w = first(prob.mask & ~on) * weights
    gamma = first(np.where(on, np.exp(np.where(on, prob.log_gamma, 0.0)), 0.0))
    on_t = first(on)
    pair = on_t[:, None] & on_t[None, :]
    diff = gamma[None, :] - gamma[:, None]
    spread = np.divide(diff, gamma[:, None], out=np.zeros_like(diff), where=pair) * weights
    return LogConstants(index, stacked, shift, off_w, spread, not np.any(spread))


def _log_loss_gradient(table: TokenTable, c: LogConstants) -> Callable[[np.ndarray], np.ndarray]:
    """The log-loss gradient, positions first (``(T, ...)`` arrays), as in the module docstring."""

    def grad(W: np.ndarray) -> np.ndarray:
        z = np.take(table.scores(W), c.stacked)
        z += c.shift
        z -= z.max(axis=0)
        np.exp(z, out=z)
        z /= z.sum(axis=0)
        s, r = z[:, 0], z[:, 1]
        wdsc = s * c.off_w
        wdsc -= r * wdsc.sum(axis=0)
        if not c.uniform:
            wdsc += r * np.einsum("tubn,ubn->tbn", c.spread, s)
        return table.weight_grad(c.index, wdsc)

    return grad
