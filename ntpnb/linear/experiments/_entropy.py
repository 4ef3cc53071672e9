"""The entropy bound and Proposition 1 (chapter 1): how close the loss gets to ``H``.

A test of ``CE(W) >= H`` (claim A1) searches for decoders that beat it on the directly computed
gap, never on the KL form, non-negative by construction. Along rays ``W^p + gamma W^d`` the gap
decays at the rate of the smallest margin within the bound of Eq. (9), unless the direction
fails (6b), if only just: then it settles on a plateau.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy
from numpy.typing import ArrayLike

from ... import settings
from ..._validation import as_count, as_float_array, as_generator
from ...errors import InvalidDataError, NotSeparableError
from .._constraints import ntp_constraints
from .._loss import ce_loss, entropy, kl_divergence, logits, loss_and_grad
from .._max_margin import zero_margin_direction
from .._ntp_data import NTPData, check_decoder, require_data
from .._path_split import split_loss, star_exponents

__all__ = [
    "tempering_exponent",
    "EntropySearch",
    "entropy_search",
    "random_decoders",
    "EntropyGaps",
    "entropy_gaps",
    "margins",
    "gap_along_ray",
    "gap_from_margins",
    "eq9_constant",
    "ZeroMarginRay",
    "zero_margin_ray",
]


def tempering_exponent(tempered: NTPData, raw: NTPData) -> float:
    """The ``beta`` of ``p_tempered ~ p_raw^beta``: one least-squares slope through the origin.

    Fitted to the logs on the supports of all rows at once, each row's centered (its
    normalization is a constant).

    Raises
    ------
    InvalidDataError
        If the two data sets do not have the same supports.
    """
    require_data(tempered)
    require_data(raw)
    if tempered.P.shape != raw.P.shape or np.any(tempered.support_mask != raw.support_mask):
        raise InvalidDataError("tempering_exponent needs two data sets with the same supports")
    x, y = [], []
    for row_t, row_r in zip(tempered.P, raw.P, strict=True):
        on = row_r > 0
        x.append(np.log(row_r[on]) - np.log(row_r[on]).mean())
        y.append(np.log(row_t[on]) - np.log(row_t[on]).mean())
    x, y = np.concatenate(x), np.concatenate(y)
    return float(x @ y / (x @ x))


@dataclass(frozen=True)
class EntropySearch:
    """The decoders a search for ``CE(W) < H`` ended at (:func:`entropy_search`)."""

    #: The last iterate of each start.
    decoders: list[np.ndarray]
    #: The L-BFGS iterations each start took.
    iterations: np.ndarray
    #: The most any start could take.
    limit: int

    @property
    def stalled(self) -> np.ndarray:
        """Per start: whether it ended before the limit (as far down as the gap's rounding lets one see)."""
        return self.iterations < self.limit


def entropy_search(data: NTPData, n_starts: int, iters: int, rng: np.random.Generator) -> EntropySearch:
    """Where L-BFGS on ``CE(W) - H``, computed directly, ends from ``n_starts`` seeded starts.

    No stopping tolerance: ``iters`` iterations or until L-BFGS resolves no further decrease. The
    starts are Gaussian matrices scaled by ``10^u``, ``u`` uniform in ``[-1, 1]``: norms between
    about ``0.1`` and ``10`` times that of a standard Gaussian matrix.
    """
    n_starts, iters = as_count(n_starts, "n_starts"), as_count(iters, "iters")
    rng = as_generator(rng, "rng")
    starts = rng.standard_normal((n_starts, data.V, data.d))
    starts *= 10.0 ** rng.uniform(-1, 1, size=(n_starts, 1, 1))
    H, shape = entropy(data), (data.V, data.d)

    def gap_and_grad(w: np.ndarray) -> tuple[float, np.ndarray]:
        loss, grad = loss_and_grad(data, w.reshape(shape))
        return loss - H, grad.ravel()

    options = {"maxiter": iters, "gtol": 0.0, "ftol": 0.0}
    ends = [
        scipy.optimize.minimize(gap_and_grad, W0.ravel(), jac=True, method="L-BFGS-B", options=options)
        for W0 in starts
    ]
    return EntropySearch([res.x.reshape(shape) for res in ends], np.array([res.nit for res in ends]), iters)


def random_decoders(data: NTPData, count: int, rng: np.random.Generator) -> np.ndarray:
    """``(count, V, d)`` Gaussian decoders rescaled to norms log-uniform in ``[1e-2, 1e3]``."""
    require_data(data)
    count = as_count(count, "count")
    rng = as_generator(rng, "rng")
    G = rng.standard_normal((count, data.V, data.d))
    norms = 10.0 ** rng.uniform(-2, 3, size=count)
    return G * (norms / np.linalg.norm(G, axis=(1, 2)))[:, None, None]


@dataclass(frozen=True)
class EntropyGaps:
    """``CE(W) - H`` at several decoders, computed two ways."""

    #: A difference of two computed numbers, what a test of the bound must use (negative if the
    #: bound were false, or by rounding).
    direct: np.ndarray
    #: ``sum_j pi_j KL(p_j || S(W h_j))``: non-negative by construction and accurate however small.
    kl: np.ndarray
    #: ``eps * max(H, max_j |W h_j|)``, the scale of the rounding of ``direct`` (its terms are as
    #: large as the largest logit): below it ``direct`` is noise of either sign.
    rounding: np.ndarray


def entropy_gaps(data: NTPData, Ws: Sequence[np.ndarray] | np.ndarray) -> EntropyGaps:
    """The gap to the entropy at each decoder of ``Ws``, directly and in the KL form."""
    H = entropy(data)
    largest_logit = [np.abs(logits(data, W)).max() for W in Ws]
    return EntropyGaps(
        direct=np.array([ce_loss(data, W) - H for W in Ws]),
        kl=np.array([kl_divergence(data, W) for W in Ws]),
        rounding=settings.FLOAT64_EPS * np.maximum(H, largest_logit),
    )


def margins(data: NTPData, W: ArrayLike) -> np.ndarray:
    """The (6b) margins ``(e_{a_j} - e_v)^T W h_j`` of ``W``, one per pair ``v`` not in ``S_j``."""
    W = check_decoder(data, W)
    return ntp_constraints(data).ineq @ W.ravel()


def gap_along_ray(data: NTPData, W_p: ArrayLike, W_d: ArrayLike, gammas: ArrayLike) -> np.ndarray:
    """``CE(W_p + gamma W_d) - H`` (the KL form) at each ``gamma``."""
    W_p, W_d = check_decoder(data, W_p, "W_p"), check_decoder(data, W_d, "W_d")
    gammas = as_float_array(gammas, "gammas", 1)
    return np.array([kl_divergence(data, W_p + g * W_d) for g in gammas])


def gap_from_margins(data: NTPData, W_p: ArrayLike, W_d: ArrayLike, gammas: ArrayLike) -> np.ndarray:
    """``CE(W_p + gamma W_d) - H`` in closed form, for a ``W_p`` whose in-support softmax is ``p_j``.

    As for ``W*``, and ``W*`` plus any matrix of ``F-perp``; with ``W_d`` meeting (6a), only the
    out-of-support tokens contribute: ``sum_j pi_j log(1 + sum_{v not in S_j} exp(x_jv - gamma m_jv))``,
    ``x_jv`` the in-support share of ``v`` under ``W_p``, ``m_jv`` the (6b) margin of ``W_d``. The
    path's :func:`~ntpnb.linear._path_split.split_loss` with no F-part: an independent check of
    :func:`gap_along_ray`.
    """
    W_p, W_d = check_decoder(data, W_p, "W_p"), check_decoder(data, W_d, "W_d")
    gammas = as_float_array(gammas, "gammas", 1)
    cons = ntp_constraints(data)
    margin = np.zeros((data.m, data.V))  # 0 on the supports, as split_loss takes it
    margin[cons.ineq_context, cons.ineq_token] = margins(data, W_d)
    shares, no_f_part = star_exponents(data, W_p), np.zeros((data.m, data.V))
    return np.array([split_loss(data, shares, no_f_part, g * margin).kl for g in gammas])


def eq9_constant(data: NTPData, W_p: ArrayLike) -> float:
    """``C = V exp(||W^p|| M)``, ``M = sqrt(2) max_j ||h_j||``: the constant of Paper A, Eq. (9)."""
    W_p = check_decoder(data, W_p, "W_p")
    M = np.sqrt(2.0) * np.linalg.norm(data.H, axis=1).max()
    return data.V * np.exp(np.linalg.norm(W_p) * M)


@dataclass(frozen=True)
class ZeroMarginRay:
    """A direction that fails (6b) only just, and the plateau of the loss along ``W* + gamma D``."""

    #: ``(j, v)``: the context and out-of-support token whose margin is 0.
    pair: tuple[int, int]
    #: The minimum-norm matrix with (6a), margin 0 on ``pair`` and margins at least 1 on every other pair
    #: (:func:`~ntpnb.linear._max_margin.zero_margin_direction`).
    D: np.ndarray
    #: The pairs ``W*`` favours more that admit no such ``D`` (their zero margin forces others to 0).
    skipped: int
    #: Over the inequality rows of :func:`~ntpnb.linear._constraints.ntp_constraints`: where the margin of
    #: ``D`` is 0 (to :data:`~ntpnb.settings.ZERO_MARGIN_RTOL` relative to ``||D|| max_j ||h_j||``).
    zero: np.ndarray
    #: ``L = sum_j pi_j log(1 + sum of e^{x_jv} over the pairs where D's margin is 0)``: the limit of ``CE -
    #: H`` along the ray, and a lower bound at every ``gamma``.
    plateau: float
    #: ``max(|(6a) residuals of D|, |its zero margins|) / (||D|| max_j ||h_j||)``.
    residual: float
    #: The smallest margin of ``D`` on the other pairs.
    other_margin: float


def zero_margin_ray(data: NTPData, W_star: ArrayLike) -> ZeroMarginRay:
    """The zero-margin direction on the pair ``W*`` favours most (of those where one exists).

    Pairs are tried in decreasing order of ``x_{j,v}``, the logit of ``v`` minus the log-sum-exp
    of the in-support logits of ``j`` under ``W*``, so that the plateau is not small.

    Raises
    ------
    NotSeparableError
        If no pair admits a zero-margin direction.
    """
    W_star = check_decoder(data, W_star, "W_star")
    x, cons = star_exponents(data, W_star), ntp_constraints(data)
    pairs = sorted(zip(cons.ineq_context, cons.ineq_token, strict=True), key=lambda p: -x[p])
    skipped = 0
    for j, v in pairs:
        try:
            D = zero_margin_direction(data, j, v)
            break
        except NotSeparableError:  # this zero margin forces others to 0
            skipped += 1
    else:
        raise NotSeparableError("no pair admits a zero-margin direction")
    w, scale = D.ravel(), np.linalg.norm(D) * np.linalg.norm(data.H, axis=1).max()
    # margins are 0 to rounding or near 1 and above (zero_margin_direction): any cut between
    all_margins = cons.ineq @ w
    zero = np.abs(all_margins) <= settings.ZERO_MARGIN_RTOL * scale
    rows, tokens = cons.ineq_context[zero], cons.ineq_token[zero]
    kept = np.bincount(rows, np.exp(x[rows, tokens]), minlength=data.m)
    largest = max(np.abs(cons.eq @ w).max(initial=0.0), np.abs(all_margins[zero]).max())
    return ZeroMarginRay(
        pair=(int(j), int(v)),
        D=D,
        skipped=skipped,
        zero=zero,
        plateau=float(data.pi @ np.log1p(kept)),
        residual=float(largest / scale) if scale > 0 else 0.0,  # D = 0: every margin is 0
        other_margin=float(all_margins[~zero].min(initial=np.inf)),
    )
