"""The split ``W = W* + delta + W_perp`` of the regularization path, shared by its two forms.

:mod:`._regpath` solves the path in either form, orthonormal bases (:class:`._regpath.PathStructure`)
or Gram coefficients (:class:`._regpath_gram.GramStructure`); both implement :class:`Split` and
evaluate the loss by :func:`split_loss`.

The loss in the split
---------------------
Both representations evaluate the loss from ``L_delta``, the logits of ``delta`` (in F), and
the margins of ``W_perp`` (``margin_jv = (e_z - e_v)^T W_perp h_j`` for any ``z`` in ``S_j``; 0
on the supports). For context ``j`` the softmax restricted to its support is ``s_z = p_z e^{D_z}
/ sum_z' p_z' e^{D_z'}`` with ``D`` the centered logits of ``delta`` on ``S_j``, and the
out-of-support tokens ``v`` enter through the exponents

    x_jv = a_jv + (delta h_j)_v - <p_j, Delta_j> - KL_in_j - margin_jv,

``a_jv`` the out-of-support logit of ``W*`` relative to its in-support normalizer
(:func:`star_exponents`). Then ``CE(W) - H = sum_j pi_j [KL_in_j + log(1 + sum_v e^{x_jv})]``,
evaluated by ``expm1``/``log1p``-type formulas of full relative accuracy however small the terms
(:func:`split_loss`).

Both forms also build on the closed-form orthonormal basis of ``1``-perp (:func:`helmert_basis`;
``R = 1-perp (x) rowspace(H)`` and each support's zero-sum directions) and take norms without
underflow (:func:`safe_norm`: ``||W*||``, the split's blocks, the KKT residuals).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy

from .._validation import FrozenArrays
from ._gram_blocks import NewtonFactors
from ._ntp_data import NTPData


def helmert_basis(V: int) -> np.ndarray:
    """Orthonormal basis ``(V, V - 1)`` of ``1``-perp, the vectors with zero sum, in closed form.

    Column ``k`` (``k = 1 .. V-1``) is ``(1, ..., 1, -k, 0, ..., 0) / sqrt(k (k + 1))`` with ``k``
    ones (the Helmert basis).
    """
    k = np.arange(1, V, dtype=float)
    Q = np.triu(np.ones((V, V - 1)))
    Q[np.arange(1, V), np.arange(V - 1)] = -k
    return Q / np.sqrt(k * (k + 1))


def safe_norm(x: np.ndarray, linear: Callable[[np.ndarray], np.ndarray] | None = None) -> float:
    """``||linear(x)||`` without underflow (``np.linalg.norm`` returns 0 below about 1e-154).

    ``x`` is scaled by its largest entry before the (linear) map ``linear`` is applied.
    """
    scale = float(np.max(np.abs(x), initial=0.0))
    if scale == 0.0 or not np.isfinite(scale):
        return scale
    return scale * float(np.linalg.norm(x / scale if linear is None else linear(x / scale)))


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
    """``a_jv`` (m, V): the out-of-support logits of ``W*`` less its in-support log-normalizer (or -inf)."""
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


@dataclass(frozen=True, eq=False)
class Split(FrozenArrays):
    """A representation of the split ``W = W* + delta + W_perp``: what the solver of :mod:`._regpath` asks.

    Coordinates ``theta``: ``n_f`` for the F part, then ``n_perp`` for the F-perp part. A
    representation gives ``evaluate(data, theta, hessian)`` (an :class:`Evaluation`),
    ``solve(ev, lam, rhs, ws, rtol)`` (``(Hess CE + lam I)^{-1} rhs``, columns), ``inner`` and
    ``block_norms`` (those of the matrices), ``logit_step`` (the largest change of a logit along
    ``x`` less its margins), ``matrices`` (``vec`` of the F part and of the F-perp part of the
    matrix with coordinates ``x``) and ``gradient_split`` (``vec(grad CE)`` and its projection on F).
    Its arrays are read-only (:class:`~ntpnb._validation.FrozenArrays`): it is cached and shared.
    """

    #: ``W*`` as a ``(V, d)`` matrix.
    W_star: np.ndarray
    #: ``(m, V)``: the exponents of ``W*`` (:func:`star_exponents`).
    a: np.ndarray
    #: The coordinates of ``W*`` (in F).
    w_star: np.ndarray
    #: ``||W*||``.
    w_star_norm: float
    #: Coordinates of the F block: ``dim F``.
    n_f: int
    #: Coordinates of the F-perp block.
    n_perp: int


@dataclass(frozen=True, eq=False)
class Evaluation:
    """The loss at a point of the split, its gradient in the coordinates, and what a solve reads."""

    loss: SplitLoss
    #: The gradient of CE in the coordinates.
    grad: np.ndarray
    #: Orthonormal form: ``(n, n)`` the Hessian (None unless asked) and ``(m, V, n)`` d logits / d theta.
    hess: np.ndarray | None = None
    jac: np.ndarray | None = None
    #: Gram form: ``(m, V)`` the coefficients of grad CE (``g^T H``) and of its projection on F, and
    #: ``pi_j q_jv``.
    g: np.ndarray | None = None
    g_f: np.ndarray | None = None
    pi_q: np.ndarray | None = None


@dataclass
class Workspace:
    """What one path computation keeps between Newton steps: the Gram form's last factors."""

    factors: NewtonFactors | None = None
