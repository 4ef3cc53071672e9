"""The NTP cross-entropy loss, its gradient and its entropy lower bound (Paper A, Sec. 2).

All functions use a log-sum-exp that subtracts the row maximum, so they stay exact at any
norm of ``W`` (gradient descent drives the norm to infinity on purpose).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from ..errors import InvalidDataError
from .data import NTPData, check_decoder

__all__ = [
    "logits",
    "log_softmax",
    "softmax",
    "entropy",
    "ce_loss",
    "ce_grad",
    "kl_divergence",
]


def logits(data: NTPData, W: ArrayLike) -> np.ndarray:
    """Logits ``l_jv = e_v^T W h_j`` of every context, shape ``(m, V)``.

    Raises
    ------
    InvalidDataError
        If ``W`` has the wrong shape or non-finite entries, or the logits overflow.
    """
    W = check_decoder(data, W)
    with np.errstate(over="ignore", invalid="ignore"):
        L = data.H @ W.T
    if not np.all(np.isfinite(L)):
        raise InvalidDataError("the logits H W^T overflow; the norm of W is too large for float64")
    return L


def log_softmax(L: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax of a logit matrix, computed stably."""
    return L - logsumexp(L, axis=1, keepdims=True)


def softmax(L: np.ndarray) -> np.ndarray:
    """Row-wise softmax of a logit matrix, computed stably."""
    return np.exp(log_softmax(L))


def entropy(data: NTPData) -> float:
    """Empirical conditional entropy ``H = -sum_j pi_j sum_{z in S_j} p_jz log p_jz`` (nats)."""
    P = data.P
    logP = np.log(P, where=data.support_mask, out=np.zeros_like(P))
    return float(-(data.pi @ (P * logP).sum(axis=1)))


def ce_loss(data: NTPData, W: ArrayLike) -> float:
    """NTP cross-entropy ``CE(W) = -sum_j pi_j sum_{z in S_j} p_jz log S_z(W h_j)`` (Eq. (2))."""
    logq = log_softmax(logits(data, W))
    per_context = -(np.where(data.support_mask, data.P * logq, 0.0)).sum(axis=1)
    return float(data.pi @ per_context)


def ce_grad(data: NTPData, W: ArrayLike) -> np.ndarray:
    """Gradient of :func:`ce_loss`: ``sum_j pi_j (S(W h_j) - p_j) h_j^T``, shape ``(V, d)``."""
    Q = softmax(logits(data, W))
    return ((Q - data.P) * data.pi[:, None]).T @ data.H


def kl_divergence(data: NTPData, W: ArrayLike) -> float:
    """``CE(W) - H = sum_j pi_j KL(p_j || S(W h_j))``, computed without cancellation.

    The divergence of each context splits into two non-negative parts: the divergence of
    ``p_j`` from the softmax restricted to ``S_j``, and ``-log`` of the mass the softmax puts
    on ``S_j``. The second part, which is all that is left when ``W`` satisfies the
    compatibility equations, is evaluated as ``log(1 + out-of-support odds)`` without forming
    ``1 + odds``, so it keeps its relative accuracy however small it is, where ``CE(W) - H``
    would drown in the rounding of ``CE`` (about 1e-16 times ``CE``). The first part is limited
    by the rounding of the logits themselves (about 1e-16 times their size) and is clipped at 0
    from below (it is non-negative in exact arithmetic).
    """
    L = logits(data, W)
    mask = data.support_mask
    lse_in = logsumexp(np.where(mask, L, -np.inf), axis=1)
    has_out = ~np.all(mask, axis=1)
    lse_out = np.full(data.m, -np.inf)
    lse_out[has_out] = logsumexp(np.where(mask, -np.inf, L)[has_out], axis=1)
    logP = np.log(data.P, where=mask, out=np.zeros_like(data.P))
    in_support = np.where(mask, data.P * (logP - (L - lse_in[:, None])), 0.0).sum(axis=1)
    off_support = np.logaddexp(0.0, lse_out - lse_in)  # log(1 + e^x), accurate for any x
    return float(data.pi @ (np.maximum(in_support, 0.0) + off_support))
