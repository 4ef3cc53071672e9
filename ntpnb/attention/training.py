"""Batched training of attention weights: many independent trials as one vectorized run.

The trial axis is an array axis: :func:`train` hands :func:`ntpnb.optim.run` (with
``batch_ndim=1``) the batched gradient, so normalized GD normalizes each trial's gradient by its
own norm. The gradient is :func:`~ntpnb.attention.fastgrad.gradient_function`'s: that of
:func:`~ntpnb.attention.model.gradient` with the problem's constants computed once, so a
log-loss step is about twenty numpy calls on arrays of a few thousand entries. The helpers
below compute the quantities the paper plots for all trials at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from .. import optim
from ..errors import InvalidDataError
from .fastgrad import gradient_function
from .model import Problem

__all__ = [
    "train",
    "training_gradient",
    "correlation",
    "stack_bases",
    "project_batched",
    "tracker",
]


def train(
    prob: Problem,
    optimizer: optim.Optimizer,
    n_iter: int,
    *,
    W0: np.ndarray | None = None,
    record: Callable[[np.ndarray], Mapping[str, np.ndarray]] | None = None,
    record_at: np.ndarray | None = None,
) -> optim.Trace:
    """Train ``W`` of shape ``(B, d, d)`` on the ``B`` stacked problems of ``prob`` at once.

    ``W0`` defaults to zeros (the paper's initialization of the ``W^cyc`` runs). See
    :func:`ntpnb.optim.run` for ``record`` and ``record_at``.
    """
    shape = (prob.B, prob.d, prob.d)
    W0 = np.zeros(shape) if W0 is None else np.asarray(W0, dtype=float)
    if W0.shape != shape:
        raise InvalidDataError(f"W0 must have shape {shape}, got {W0.shape}")
    return optim.run(
        training_gradient(prob, optimizer),
        W0,
        optimizer,
        n_iter,
        record=record,
        record_at=record_at,
        batch_ndim=1,
    )


def training_gradient(prob: Problem, optimizer: optim.Optimizer) -> Callable[[np.ndarray], np.ndarray]:
    """The gradient callable :func:`train` runs ``optimizer`` on (see :func:`gradient_function`)."""
    # normalized GD needs the gradient only up to a positive factor per trial: take the
    # rescaled one, which does not underflow when the attention saturates (squared and CE losses)
    return gradient_function(prob, rescaled=optimizer.name == "ngd" and prob.loss != "log")


def correlation(W: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """``<W, ref> / (||W|| ||ref||)`` per trial, for ``(..., d, d)`` arrays (0 where a norm is 0)."""
    num = np.sum(W * ref, axis=(-2, -1))
    den = np.linalg.norm(W, axis=(-2, -1)) * np.linalg.norm(ref, axis=(-2, -1))
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def stack_bases(bases: Sequence[np.ndarray]) -> np.ndarray:
    """Orthonormal bases of different dimensions (rows) padded with zero rows: ``(B, m_max, d*d)``."""
    if not bases:
        raise InvalidDataError("no bases to stack")
    p = bases[0].shape[1]
    m = max(1, max(b.shape[0] for b in bases))
    out = np.zeros((len(bases), m, p))
    for i, b in enumerate(bases):
        out[i, : b.shape[0]] = b
    return out


def project_batched(W: np.ndarray, bases: np.ndarray) -> np.ndarray:
    """``Pi_S(W)`` per trial, ``W`` ``(B, d, d)`` and stacked bases ``(B, m, d*d)``."""
    B, d, _ = W.shape
    coords = np.einsum("bmp,bp->bm", bases, W.reshape(B, d * d))
    return np.einsum("bmp,bm->bp", bases, coords).reshape(B, d, d)


def tracker(
    W_mm: np.ndarray, bases: np.ndarray | None = None, W_cyc: np.ndarray | None = None
) -> Callable[[np.ndarray], dict[str, np.ndarray]]:
    """A ``record`` callable for :func:`train`: per-trial curves of the paper's figures.

    It gives ``corr`` (with ``W_mm``), ``norm`` (of ``W``) and, with ``bases`` and ``W_cyc``,
    ``cyc_dist = ||Pi_Scyc(W) - W_cyc||``.
    """

    def record(W: np.ndarray) -> dict[str, np.ndarray]:
        out = {"corr": correlation(W, W_mm), "norm": np.linalg.norm(W, axis=(-2, -1))}
        if bases is not None and W_cyc is not None:
            out["cyc_dist"] = np.linalg.norm(project_batched(W, bases) - W_cyc, axis=(-2, -1))
        return out

    return record
