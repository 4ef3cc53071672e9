r"""Beyond Paper A's settings: the measurements of the maps of chapter 8.

Paper A's GD results assume a step ``eta <= 1/(2L)`` (App. F.1), an infinite horizon, and
compatible, separable data. This module measures what happens outside: the loss's smoothness
(:func:`smoothness`: the Hessian's largest eigenvalue at a point, the global bound, and its limit
along GD's path), GD at one step after a fixed budget (:func:`step_run`), the steps GD needs to
reach a correlation with ``W^mm`` (:func:`steps_to_corr`, measured or extrapolated at the
logarithmic rate), and a random instance's conditions and GD's gap to ``inf CE`` at one ``d``
(:func:`condition_point`).

The Hessian of ``CE(W) = sum_j pi_j (lse(W h_j) - p_j^T W h_j)`` with respect to ``vec(W)``
(row-major, index ``(v, i)``) is ``sum_j pi_j (diag(s_j) - s_j s_j^T) kron h_j h_j^T`` with
``s_j`` the softmax of ``W h_j``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ... import _optim as optim
from ..._validation import as_count, as_float, as_float_array
from ...errors import InvalidDataError, NumericallyAmbiguousError
from .._compatibility import is_compatible
from .._condition_thresholds import NestedInstance, best_achievable_loss
from .._decoder_training import Limits, tracker
from .._descent import run_decoder
from .._loss import entropy, kl_divergence, logits, softmax
from .._ntp_data import NTPData, require_data
from .._separability import is_separable
from ._curves import fit_line, gd_loss_curve, offset_from

__all__ = [
    "Smoothness",
    "smoothness",
    "StepRun",
    "step_run",
    "StepsToCorr",
    "steps_to_corr",
    "ConditionPoint",
    "condition_point",
]


def _hessian_at(data: NTPData, S: np.ndarray) -> np.ndarray:
    """The Hessian of CE where context ``j``'s softmax is ``S[j]`` (``(m, V)``), ``(V d, V d)``."""
    curvature = data.pi[:, None, None] * (
        np.einsum("jv,vw->jvw", S, np.eye(data.V)) - S[:, :, None] * S[:, None, :]
    )
    n = data.V * data.d
    return np.einsum("jvw,ji,jk->viwk", curvature, data.H, data.H).reshape(n, n)


def ce_hessian(data: NTPData, W: ArrayLike) -> np.ndarray:
    """The Hessian of ``CE`` at ``W`` with respect to ``W`` flattened row-major, ``(V d, V d)``.

    Raises
    ------
    InvalidDataError
        If ``data`` is not an :class:`~ntpnb.linear._ntp_data.NTPData` or ``W`` is not a finite
        ``(V, d)`` matrix.
    """
    require_data(data)
    W = as_float_array(W, "W", 2)
    if W.shape != (data.V, data.d):
        raise InvalidDataError(f"W must have shape (V, d) = {(data.V, data.d)}, got {W.shape}")
    return _hessian_at(data, softmax(logits(data, W)))


def _largest(matrix: np.ndarray) -> float:
    """The largest eigenvalue of a symmetric matrix."""
    return float(np.linalg.eigvalsh(matrix)[-1])


@dataclass(frozen=True)
class Smoothness:
    """The smoothness of the loss, measured three ways (each the Hessian's largest eigenvalue)."""

    #: At the start ``W_0``.
    start: float
    #: The limit along GD's path ``W* + R W^mm``, ``R -> inf``: each softmax at ``p_j`` (zero
    #: off the support), the curvature the F-part keeps while ``P_F(W_k) -> W*``.
    limit: float
    #: The global bound ``lambda_max(H^T diag(pi) H) / 2`` (a softmax's Hessian is at most 1/2).
    bound: float


def smoothness(data: NTPData, W0: ArrayLike) -> Smoothness:
    """The loss's smoothness at ``W0``, at the limit of GD's path, and its global bound.

    Raises
    ------
    InvalidDataError
        As :func:`ce_hessian`.
    """
    start = _largest(ce_hessian(data, W0))
    limit = _largest(_hessian_at(data, np.asarray(data.P, dtype=float)))
    bound = 0.5 * _largest(data.H.T @ (data.pi[:, None] * data.H))
    return Smoothness(start, limit, bound)


@dataclass(frozen=True)
class StepRun:
    """GD at one step after a fixed budget (:func:`step_run`)."""

    #: The step and the budget.
    lr: float
    n_iter: int
    #: ``corr(W_K, W^mm)``, ``||P_F(W_K) - W*||`` and ``CE(W_K) - H`` at the budget ``K``.
    corr: float
    dist_f: float
    kl: float
    #: ``||P_F(W_0) - W*||`` and ``CE(W_0) - H``.
    dist_f0: float
    kl0: float
    #: How many times the loss rose from one recorded step to the next, and the last step at
    #: which it had risen (0: never): the oscillating phase, as far as the records see it.
    increases: int
    last_increase: int
    #: The largest ``CE(W_k) - H`` over the last decade of the budget relative to its smallest:
    #: 1 for a loss still falling steadily, large for a loss that oscillates at the end.
    late_swing: float


def _divergence(data: NTPData) -> Callable[[np.ndarray], dict]:
    """The record of :func:`step_run`: ``CE(W) - H`` alone, as :func:`tracker` computes it."""

    def record(W: np.ndarray) -> dict:
        return {"kl": kl_divergence(data, W)}

    return record


def step_run(
    data: NTPData, lim: Limits, W0: ArrayLike, lr: float, n_iter: int, dense_iter: int, n_records: int
) -> StepRun:
    """GD with step ``lr`` from ``W0`` for ``n_iter`` steps (the compiled loops of :func:`ntpnb.train`).

    The loss is recorded at every step up to ``dense_iter`` and at ``n_records`` log-spaced steps
    after it, so an increase in the first ``dense_iter`` steps is seen at the step it happens.

    Raises
    ------
    InvalidDataError
        On a step that is not a positive finite number, or bad counts.
    SolverError
        If GD's iterates leave the floats (``ntpnb._optim``'s check).
    """
    lr = float(as_float(lr, "lr"))
    if not lr > 0:
        raise InvalidDataError(f"the step must be positive, got {lr}")
    n_iter, n_records = as_count(n_iter, "n_iter"), as_count(n_records, "n_records")
    dense = np.arange(1, min(as_count(dense_iter, "dense_iter"), n_iter) + 1)
    record_at = np.unique(np.concatenate([dense, optim.log_grid(n_iter, n_records)]))
    # at every record the loss alone (the tracker's other numbers cost as much again): they are
    # read at the start and the end only
    trace = run_decoder(data, optim.gd(lr), n_iter, W0, record=_divergence(data), record_at=record_at)
    k, kl = trace.iterations, np.asarray(trace["kl"])
    track = tracker(data, lim)
    start, end = track(np.asarray(W0, dtype=float)), track(trace.W)
    rises = np.flatnonzero(np.diff(kl) > 0)
    last_decade = kl[k >= n_iter / 10]
    return StepRun(
        lr=lr,
        n_iter=n_iter,
        corr=float(end["corr"]),
        dist_f=float(end["dist_F"]),
        kl=float(kl[-1]),
        dist_f0=float(start["dist_F"]),
        kl0=float(kl[0]),
        increases=int(rises.size),
        last_increase=int(k[rises[-1] + 1]) if rises.size else 0,
        late_swing=float(last_decade.max() / last_decade.min()) if last_decade.min() > 0 else np.inf,
    )


@dataclass(frozen=True)
class StepsToCorr:
    """The steps GD needs to reach ``corr(W_k, W^mm) >= level`` (:func:`steps_to_corr`)."""

    #: ``log10`` of the steps: measured if the run reached the level, else extrapolated.
    log10_k: float
    measured: bool
    #: The same extrapolated at the theory's rate of the norm, ``||W^mm||`` per unit of ``log k``
    #: (the measured ``log10_k`` where the run reached the level).
    log10_k_theory: float
    #: The norm's growth per unit of ``log k`` fitted over the last decade, and ``||W^mm||``.
    growth: float
    mm_norm: float
    #: ``corr(W_K, W^mm)`` at the end of the run.
    corr: float


def steps_to_corr(trace: optim.Trace, W_mm: ArrayLike, level: float) -> StepsToCorr:
    """When GD's ``corr(W_k, W^mm)`` reaches ``level``: measured, or extrapolated as chapter 4 does.

    ``1 - corr`` is set by the offset ``r_k`` of ``W_k`` from ``W^mm``'s line: ``corr`` reaches
    ``level`` at ``||W|| = r / sqrt(1 - level^2)``. With ``r`` as at the end of the run and the
    norm growing like ``growth * log k`` (fitted over the run's last decade, or the theory's
    ``||W^mm||``), that norm is reached at ``log k = log K + (need - ||W_K||) / growth``.

    Raises
    ------
    InvalidDataError
        If the trace has no ``"corr"``, ``"norm"`` or iterate, fewer than two records in its last
        decade, a level outside (0, 1), or a norm that does not grow over the last decade.
    """
    level = float(as_float(level, "level"))
    if not 0 < level < 1:
        raise InvalidDataError(f"the level must lie in (0, 1), got {level}")
    k, corr, norm = trace.iterations, np.asarray(trace["corr"]), np.asarray(trace["norm"])
    mm_norm = float(np.linalg.norm(W_mm))
    last = k >= k[-1] / 10
    if np.count_nonzero(last) < 2:
        raise InvalidDataError("the run's last decade holds fewer than two records: no growth to fit")
    growth, _ = fit_line(np.log(k[last]), norm[last])
    reached = np.flatnonzero(corr >= level)
    if reached.size:
        log10_k = float(np.log10(k[reached[0]]))
        return StepsToCorr(log10_k, True, log10_k, growth, mm_norm, float(corr[-1]))
    if not growth > 0:
        raise InvalidDataError(f"the norm does not grow over the last decade (slope {growth:.3g})")
    need = float(offset_from(trace.W, W_mm)) / np.sqrt(1 - level**2)

    def log10_at(rate: float) -> float:
        return float((np.log(k[-1]) + (need - norm[-1]) / rate) / np.log(10))

    return StepsToCorr(log10_at(growth), False, log10_at(mm_norm), growth, mm_norm, float(corr[-1]))


@dataclass(frozen=True)
class ConditionPoint:
    """A random instance at one ``d``: its conditions, ``inf CE - H`` and GD's gap to ``inf CE``."""

    d: int
    #: The conditions (None: numerically ambiguous, see ``ambiguous``).
    compatible: bool | None
    separable: bool | None
    #: Proposition 1's gap ``inf CE - H``: certified by a primal and a dual method where a
    #: condition fails, 0 by Proposition 1 where both hold (nan where ambiguous).
    gap: float
    #: ``CE(W_K) - inf CE`` of GD (step 1, from zero) after the budget, relative to step 1.
    gd_ratio: float
    #: How many (context, out-of-support token) pairs' probabilities tend to 0 at the infimum
    #: (0: the infimum is attained; every such pair where both conditions hold).
    n_vanishing: int = 0
    #: The error's first words where a decision was numerically ambiguous ("" otherwise).
    ambiguous: str = ""


def condition_point(draw: NestedInstance, d: int, gd_steps: int) -> ConditionPoint:
    """A nested random draw (chapter 5's) at ``d``: its conditions, ``inf CE - H`` and GD's gap.

    The conditions are chapter 5's decisions (:func:`~ntpnb.linear._compatibility.is_compatible`,
    :func:`~ntpnb.linear._separability.is_separable`), ``inf CE`` its certified
    :func:`~ntpnb.linear._condition_thresholds.best_achievable_loss` where a condition fails. A
    numerically ambiguous decision is returned as such (the caller counts it), never raised.
    """
    data = draw.at(as_count(d, "d"))
    try:
        compatible, separable = is_compatible(data), is_separable(data)
        if compatible and separable:
            inf_ce, vanishing = entropy(data), int(np.count_nonzero(~data.support_mask))
        else:
            best = best_achievable_loss(data)
            inf_ce, vanishing = best.value, best.n_vanishing
    except NumericallyAmbiguousError as exc:
        return ConditionPoint(d, None, None, float("nan"), float("nan"), 0, str(exc).split(":")[0])
    curve = gd_loss_curve(data, gd_steps, np.array([1, gd_steps])) - inf_ce
    ratio = float(max(curve[-1], 0.0) / curve[0]) if curve[0] > 0 else 0.0
    return ConditionPoint(d, compatible, separable, float(inf_ce - entropy(data)), ratio, vanishing)
