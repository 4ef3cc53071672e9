"""The NTP cross-entropy loss, its gradient and its entropy lower bound (Paper A, Sec. 2).

Every function first subtracts each row's largest logit and works with the differences
``l_jv - max_v l_jv <= 0`` only, so a huge logit is never added to a small one: the loss, its
gradient and the softmax are exact to rounding for any finite logits (gradient descent drives
the norm of ``W`` to infinity on purpose). The logits ``H W^T`` themselves carry the usual
relative rounding of a matrix product.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidDataError
from ._ntp_data import NTPData, as_float_array, check_decoder, require_data


def logits(data: NTPData, W: ArrayLike) -> np.ndarray:
    """Logits ``l_jv = e_v^T W h_j`` of every context, shape ``(m, V)``.

    Raises
    ------
    InvalidDataError
        If ``data`` is not :class:`NTPData`, ``W`` has the wrong shape or non-finite entries,
        or the logits overflow.
    """
    return decoder_logits(data, check_decoder(data, W))


def decoder_logits(data: NTPData, W: np.ndarray) -> np.ndarray:
    """:func:`logits` of a decoder already checked for ``data`` (a finite float64 ``(V, d)`` array).

    Raises
    ------
    InvalidDataError
        If the logits overflow.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        L = data.H @ W.T
    if not np.all(np.isfinite(L)):
        raise InvalidDataError("the logits H W^T overflow; the norm of W is too large for float64")
    return L


def _shifted(L: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``D = L - rowmax(L)`` (entries <= 0, a 0 in each row) and ``log sum_v exp(D_jv)`` in [0, log V].

    A difference of two finite logits can overflow only when they differ by more than the float64
    range; the probability of the smaller one is then 0 to double precision, as ``exp(-inf)`` says.
    """
    with np.errstate(over="ignore"):
        D = L - L.max(axis=1, keepdims=True)
    return D, np.log(np.exp(D).sum(axis=1))


def softmax(L: ArrayLike) -> np.ndarray:
    """Row-wise softmax of an ``(m, V)`` logit matrix, exact to rounding for any finite logits.

    Raises
    ------
    InvalidDataError
        If ``L`` is not a 2-D array of finite real numbers (for one vector ``l``, use
        ``softmax(l[None])[0]``).
    """
    arr = as_float_array(L, "the logit matrix L", np.ndim(L) if isinstance(L, np.ndarray) else 2)
    if arr.ndim != 2:
        raise InvalidDataError(
            f"L must be an (m, V) logit matrix, got shape {arr.shape}; "
            "for one vector l use softmax(l[None])[0]"
        )
    if arr.shape[1] == 0:
        raise InvalidDataError(f"L must have at least one column (token), got shape {arr.shape}")
    D, lse = _shifted(arr)
    return np.exp(D - lse[:, None])


def entropy(data: NTPData) -> float:
    """Empirical conditional entropy ``H = -sum_j pi_j sum_{z in S_j} p_jz log p_jz`` (nats)."""
    require_data(data)
    P = data.P
    logP = np.log(P, where=data.support_mask, out=np.zeros_like(P))
    return float(-(data.pi @ (P * logP).sum(axis=1)))


def _finite(value: float, what: str) -> float:
    if not np.isfinite(value):
        raise InvalidDataError(f"{what} overflows float64: some logit differences exceed its range")
    return value


def ce_loss(data: NTPData, W: ArrayLike) -> float:
    """NTP cross-entropy ``CE(W) = -sum_j pi_j sum_{z in S_j} p_jz log S_z(W h_j)`` (Eq. (2)).

    Raises
    ------
    InvalidDataError
        On a bad ``data`` or ``W`` (see :func:`logits`), or if the loss exceeds the float64 range.
    """
    return _loss_from(data, *_shifted(logits(data, W)))


def ce_grad(data: NTPData, W: ArrayLike) -> np.ndarray:
    """Gradient of :func:`ce_loss`: ``sum_j pi_j (S(W h_j) - p_j) h_j^T``, shape ``(V, d)``."""
    return _grad_from(data, *_shifted(logits(data, W)))


def _loss_from(data: NTPData, D: np.ndarray, lse: np.ndarray) -> float:
    logq = np.where(data.support_mask, D - lse[:, None], 0.0)
    per_context = -(data.P * logq).sum(axis=1)
    return _finite(float(data.pi @ per_context), "the cross-entropy")


def _grad_from(data: NTPData, D: np.ndarray, lse: np.ndarray) -> np.ndarray:
    Q = np.exp(D - lse[:, None])  # the softmax
    return ((Q - data.P) * data.pi[:, None]).T @ data.H


def loss_and_grad(data: NTPData, W: ArrayLike) -> tuple[float, np.ndarray]:
    """:func:`ce_loss` and :func:`ce_grad` from one evaluation of the logits (the same floats)."""
    shifted = _shifted(logits(data, W))
    return _loss_from(data, *shifted), _grad_from(data, *shifted)


def kl_divergence(data: NTPData, W: ArrayLike) -> float:
    """``CE(W) - H = sum_j pi_j KL(p_j || S(W h_j))``, computed without cancellation.

    Each context's divergence is the sum of two non-negative parts: that of ``p_j`` from the
    softmax restricted to ``S_j`` (limited by the rounding of the logits, about 1e-16 times their
    size, and clipped at 0 from below), and ``-log`` of the mass the softmax puts on ``S_j``, all
    that is left when ``W`` satisfies the compatibility equations: ``log(1 + out-of-support
    odds)``, never forming ``1 + odds``, relatively accurate however small, where ``CE(W) - H``
    would drown in the rounding of ``CE`` (about 1e-16 times ``CE``). Both use logits shifted by
    the largest in-support and out-of-support logit, exact for huge logits.

    Raises
    ------
    InvalidDataError
        On a bad ``data`` or ``W`` (see :func:`logits`), or if the divergence exceeds the float64
        range.
    """
    return logit_divergence(data, logits(data, W))


def logit_divergence(data: NTPData, L: np.ndarray) -> float:
    """:func:`kl_divergence` from the logits ``L`` ``(m, V)`` of a decoder (:func:`decoder_logits`).

    Raises
    ------
    InvalidDataError
        If the divergence exceeds the float64 range.
    """
    mask = data.support_mask
    # in-support part: log-softmax restricted to S_j, from logits shifted by their max on S_j
    max_in = np.where(mask, L, -np.inf).max(axis=1)
    with np.errstate(over="ignore"):
        D_in = np.where(mask, L - max_in[:, None], -np.inf)
    lse_in = np.log(np.exp(D_in).sum(axis=1))  # in [0, log S_j]
    logP = np.log(data.P, where=mask, out=np.zeros_like(data.P))
    log_restricted = np.where(mask, D_in - lse_in[:, None], 0.0)
    in_support = (data.P * (logP - log_restricted)).sum(axis=1)
    # off-support part: log(1 + sum_{v not in S_j} e^{l_v} / sum_{z in S_j} e^{l_z})
    has_out = ~np.all(mask, axis=1)
    log_odds = np.full(data.m, -np.inf)
    if np.any(has_out):
        Lo, mo = L[has_out], mask[has_out]
        max_out = np.where(mo, -np.inf, Lo).max(axis=1)
        with np.errstate(over="ignore"):
            D_out = np.where(mo, -np.inf, Lo - max_out[:, None])
            gap = max_out - max_in[has_out]  # the largest out-of-support logit minus the in-support one
        log_odds[has_out] = gap + np.log(np.exp(D_out).sum(axis=1)) - lse_in[has_out]
    off_support = np.logaddexp(0.0, log_odds)  # log(1 + e^x), accurate for any x
    value = float(data.pi @ (np.maximum(in_support, 0.0) + off_support))
    return _finite(value, "the KL divergence")
