"""The loss of Paper A in the split ``W = W* + delta + W_perp``, accurate relatively at any radius.

Both representations of the regularization path (:mod:`.regpath`, :mod:`.regpath_gram`)
evaluate the loss from ``L_delta``, the logits of ``delta`` (in F), and ``margins``, those of
``W_perp`` (``margin_jv = (e_z - e_v)^T W_perp h_j`` for any ``z`` in ``S_j``; 0 on the
supports). For context ``j`` with support ``S`` the softmax restricted
to ``S`` is ``s_z = p_z e^{D_z} / sum_z' p_z' e^{D_z'}`` with ``D`` the centered logits of
``delta`` on ``S`` (``W*`` and ``W_perp`` do not change in-support logit differences), and the
out-of-support tokens ``v`` enter through the exponents

    x_jv = a_jv + (delta h_j)_v - <p_j, Delta_j> - KL_in_j - margin_jv,

with ``a_jv`` the out-of-support logit of ``W*`` relative to its in-support normalizer
(:func:`star_exponents`). Then ``CE(W) - H = sum_j pi_j [KL_in_j + log(1 + sum_v e^{x_jv})]``,
evaluated with ``expm1``/``log1p``-type formulas that keep full relative accuracy however
small the terms are (:func:`split_loss`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy

from .ntp_data import NTPData

__all__ = ["SplitLoss", "split_loss", "star_exponents", "expm1_minus_x", "safe_norm", "NoConvergenceError"]


class NoConvergenceError(Exception):
    """Newton's method did not converge from the given start (the path solver then subdivides)."""


def safe_norm(x: np.ndarray) -> float:
    """Euclidean norm without underflow (``np.linalg.norm`` returns 0 below about 1e-154)."""
    scale = float(np.max(np.abs(x), initial=0.0))
    if scale == 0.0 or not np.isfinite(scale):
        return scale
    return scale * float(np.linalg.norm(x / scale))


def expm1_minus_x(x: np.ndarray) -> np.ndarray:
    """``e^x - 1 - x`` with full relative accuracy (a series near 0, ``expm1(x) - x`` beyond)."""
    small = np.abs(x) < 0.1
    xs = np.where(small, x, 0.0)
    series = 1 + xs / 11  # the first omitted term is below 1e-18 relative for |x| < 0.1
    for k in range(10, 2, -1):  # Horner form of x^2/2 (1 + x/3 (1 + x/4 (... (1 + x/11))))
        series = 1 + xs / k * series
    series = xs * xs / 2 * series
    with np.errstate(over="ignore"):
        direct = np.expm1(np.where(small, 0.0, x)) - np.where(small, 0.0, x)
    return np.where(small, series, direct)


def star_exponents(data: NTPData, W_star: np.ndarray) -> np.ndarray:
    """``a_jv``: the out-of-support logits of ``W*`` minus its in-support log-normalizer.

    ``(m, V)``, ``-inf`` on the supports (where it is not used).
    """
    mask = data.support_mask
    L_star = data.H @ W_star.T
    lse_in = scipy.special.logsumexp(np.where(mask, L_star, -np.inf), axis=1)
    return np.where(mask, -np.inf, L_star - lse_in[:, None])


@dataclass(frozen=True)
class SplitLoss:
    """``CE - H`` at one point of the split and the softmax it comes from, accurate relatively."""

    #: ``CE - H``.
    kl: float
    #: ``sum_j pi_j`` (out-of-support probability of context ``j``).
    out_mass: float
    #: ``(m, V)``: ``S(W h_j) - p_j``, entrywise relatively accurate.
    q_minus_p: np.ndarray
    #: ``(m, V)``: the softmax ``S(W h_j)`` itself (each entry relatively accurate).
    q: np.ndarray


def split_loss(data: NTPData, a: np.ndarray, L_delta: np.ndarray, margins: np.ndarray) -> SplitLoss:
    """The loss at ``W = W* + delta + W_perp`` from the logits of ``delta`` and the margins of ``W_perp``.

    Parameters
    ----------
    a
        :func:`star_exponents` of ``W*``.
    L_delta
        ``(m, V)``: the logits ``H delta^T``.
    margins
        ``(m, V)``: the margins of ``W_perp`` (0 on the supports).
    """
    mask = data.support_mask
    P, pi = data.P, data.pi
    Delta_bar = np.sum(np.where(mask, P * L_delta, 0.0), axis=1)
    D = np.where(mask, L_delta - Delta_bar[:, None], 0.0)
    E = np.sum(np.where(mask, P * expm1_minus_x(D), 0.0), axis=1)
    kl_in = np.log1p(E)
    s_minus_p = np.where(mask, P * np.expm1(D - kl_in[:, None]), 0.0)
    s = np.where(mask, P * np.exp(D - kl_in[:, None]), 0.0)
    x = a + L_delta - (Delta_bar + kl_in)[:, None] - margins
    x = np.where(mask, -np.inf, x)
    has_out = ~np.all(mask, axis=1)
    lse_x = np.full(data.m, -np.inf)
    lse_x[has_out] = scipy.special.logsumexp(x[has_out], axis=1)
    out = np.logaddexp(0.0, lse_x)
    omega = scipy.special.expit(lse_x)  # out-of-support mass of each context
    w = np.where(mask, 0.0, np.exp(x - out[:, None]))
    return SplitLoss(
        kl=float(pi @ (kl_in + out)),
        out_mass=float(pi @ omega),
        q_minus_p=np.where(mask, s_minus_p - omega[:, None] * s, w),
        q=np.where(mask, s * scipy.special.expit(-lse_x)[:, None], w),
    )
