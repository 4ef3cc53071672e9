r"""Beyond Paper A's settings: the measurements of the maps of chapter 8.

Paper A's GD results assume a step ``eta <= 1/(2L)`` (App. F.1), an infinite horizon, and
compatible, separable data. This module measures what happens outside: the loss's smoothness
(:func:`smoothness`: the Hessian's largest eigenvalue at a point, the global bound, and its limit
along GD's path), GD at one step after a fixed budget (:func:`step_run`), GD's late-time orbit
in F at a step near ``2/L_inf`` (:func:`step_orbit`: converging, or cycling with a period and an
amplitude), the steps GD needs to reach a correlation with ``W^mm`` (:func:`steps_to_corr`,
measured or extrapolated at the logarithmic rate; :func:`horizons_by_budget`, the same
extrapolation from several budgets of one run), and a random instance's conditions and GD's gap
to ``inf CE`` at one ``d`` (:func:`condition_point`).

The Hessian of ``CE(W) = sum_j pi_j (lse(W h_j) - p_j^T W h_j)`` with respect to ``vec(W)``
(row-major, index ``(v, i)``) is ``sum_j pi_j (diag(s_j) - s_j s_j^T) kron h_j h_j^T`` with
``s_j`` the softmax of ``W h_j``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
from numpy.typing import ArrayLike

from ... import _optim as optim
from ... import settings
from ..._validation import as_count, as_float, as_float_array
from ...errors import InvalidDataError, NumericallyAmbiguousError
from .._compatibility import is_compatible
from .._condition_thresholds import NestedInstance, best_achievable_loss
from .._decoder_training import Limits, tracker, train
from .._descent import run_decoder
from .._loss import decoder_logits, entropy, kl_divergence, logit_divergence, logits, softmax
from .._ntp_data import NTPData, cached_per_data, frozen, require_data
from .._separability import is_separable
from ._curves import fit_line, gd_loss_curve, offset_from, trace_at

__all__ = [
    "Smoothness",
    "smoothness",
    "step_run",
    "StepOrbit",
    "step_orbit",
    "StepsToCorr",
    "steps_to_corr",
    "horizons_by_budget",
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


@cached_per_data
def _limit_mode(data: NTPData) -> tuple[float, np.ndarray]:
    """The Hessian's largest eigenvalue at the limit of GD's path, and its unit eigenvector.

    At the limit each softmax is ``p_j``; the eigenvector (``vec(W)``, row-major) lies in F, the
    Hessian's range there.
    """
    values, vectors = np.linalg.eigh(_hessian_at(data, np.asarray(data.P, dtype=float)))
    return float(values[-1]), frozen(vectors[:, -1])


def smoothness(data: NTPData, W0: ArrayLike) -> Smoothness:
    """The loss's smoothness at ``W0``, at the limit of GD's path, and its global bound.

    Raises
    ------
    InvalidDataError
        As :func:`ce_hessian`.
    """
    start = _largest(ce_hessian(data, W0))
    limit = _limit_mode(data)[0]
    bound = 0.5 * _largest(data.H.T @ (data.pi[:, None] * data.H))
    return Smoothness(start, limit, bound)


def _divergence(data: NTPData) -> Callable[[np.ndarray], dict]:
    """The record of :func:`step_run`: ``CE(W) - H`` alone, as :func:`tracker` computes it."""

    def record(W: np.ndarray) -> dict:
        return {"kl": logit_divergence(data, decoder_logits(data, W))}  # W: a run's checked iterate

    return record


def step_run(
    data: NTPData, lim: Limits, W0: ArrayLike, lr: float, n_iter: int, dense_iter: int, n_records: int
) -> optim.Trace:
    """GD with step ``lr`` from ``W0`` for ``n_iter`` steps (the compiled loops of :func:`ntpnb.train`).

    The loss is recorded at every step up to ``dense_iter`` and at ``n_records`` log-spaced steps
    after it, so an increase in the first ``dense_iter`` steps is seen at the step it happens.

    Returns
    -------
    optim.Trace
        Its recorded ``iterations``, final iterate ``W``, and: ``lr`` and ``n_iter`` (the step and the
        budget ``K``); ``corr``, ``dist_F`` and ``kl`` (``corr(W_K, W^mm)``, ``||P_F(W_K) - W*||`` and
        ``CE(W_K) - H`` at the budget); ``dist_F0`` and ``kl0`` (the same at ``W_0``); ``increases``
        and ``last_increase`` (how many times the loss rose from one recorded step to the next, and
        the last step at which it had risen, 0 for never: the oscillating phase, as far as the
        records see it); ``late_swing`` (the largest ``CE(W_k) - H`` over the last decade of the
        budget relative to its smallest: 1 for a loss still falling steadily, large for a loss that
        oscillates at the end).

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
    k, kl = trace.iterations, np.asarray(trace.kl)
    track = tracker(data, lim)
    start, end = track(np.asarray(W0, dtype=float)), track(trace.W)
    rises = np.flatnonzero(np.diff(kl) > 0)
    last_decade = kl[k >= n_iter / 10]
    ends = {
        "lr": lr,
        "n_iter": n_iter,
        "corr": float(end["corr"]),
        "dist_F": float(end["dist_F"]),
        "kl": float(kl[-1]),
        "dist_F0": float(start["dist_F"]),
        "kl0": float(kl[0]),
        "increases": int(rises.size),
        "last_increase": int(k[rises[-1] + 1]) if rises.size else 0,
        "late_swing": float(last_decade.max() / last_decade.min()) if last_decade.min() > 0 else np.inf,
    }
    return optim.Trace(k, MappingProxyType(ends), trace.W)


#: The periods :func:`step_orbit` tells apart: a period-doubling cascade's first three.
ORBIT_PERIODS: tuple[int, ...] = (2, 4, 8)


@dataclass(frozen=True)
class StepOrbit:
    """GD's late-time behaviour in F at one step (:func:`step_orbit`): converging, or on an orbit."""

    #: The step and the budget ``K``.
    lr: float
    n_iter: int
    #: The F-part's oscillation amplitude relative to ``||W*||``: the largest
    #: ``||P_F(W_{k+2}) - 2 P_F(W_{k+1}) + P_F(W_k)|| / 4`` over the last ``max(ORBIT_PERIODS)``
    #: steps. On a period-2 orbit, half the distance between its two points; for iterates that
    #: converge, the curvature of their drift alone (near 0).
    amplitude: float
    #: The same amplitude at the log-spaced steps ``k`` (the records), for a figure.
    k: np.ndarray = field(repr=False)
    amplitudes: np.ndarray = field(repr=False)
    #: ``||P_F(W_K) - P_F(W_{K-p})||`` over the orbit's size (the largest ``||P_F(W_K) -
    #: P_F(W_{K-i})||``, ``i <= max(ORBIT_PERIODS)``), for each ``p`` of :data:`ORBIT_PERIODS`.
    residuals: tuple[float, ...]
    #: 1 if the F-part converges (amplitude below ``settings.ORBIT_AMPLITUDE_RTOL``), else the
    #: smallest ``p`` of :data:`ORBIT_PERIODS` whose residual is below ``settings.ORBIT_PERIOD_RTOL``,
    #: 0 if none is (a longer period, or no orbit).
    period: int
    #: ``|cos|`` between ``P_F(W_K) - P_F(W_{K-1})`` and the top eigenvector of the Hessian at the
    #: limit (the mode that loses its stability at ``2/L_inf``).
    alignment: float
    #: ``CE(W_k) - H`` at ``k = K - 1`` and ``K`` (on a period-2 orbit the loss alternates).
    kl_last: tuple[float, float]


def _orbit_grid(n_iter: int, n_records: int) -> tuple[np.ndarray, np.ndarray]:
    """Where :func:`step_orbit` records: each log-spaced ``k`` with ``k + 1, k + 2``, and the last steps.

    Returns the grid and the log-spaced ``k`` whose triples it holds.
    """
    last = max(ORBIT_PERIODS)
    if n_iter < last + 2:
        raise InvalidDataError(f"the budget must be at least {last + 2} steps, got {n_iter}")
    starts = optim.log_grid(n_iter - 2, n_records)
    starts = starts[starts >= 1]
    grid = np.unique(np.concatenate([starts, starts + 1, starts + 2, np.arange(n_iter - last, n_iter + 1)]))
    return grid, starts


def _second_differences(F: np.ndarray) -> np.ndarray:
    """``||F_{k+2} - 2 F_{k+1} + F_k|| / 4`` of consecutive rows of ``F``."""
    return np.linalg.norm(F[2:] - 2 * F[1:-1] + F[:-2], axis=1) / 4


def _period(amplitude: float, residuals: tuple[float, ...]) -> int:
    """The period of :class:`StepOrbit` from its amplitude and residuals."""
    if amplitude < settings.ORBIT_AMPLITUDE_RTOL:
        return 1
    return next(
        (p for p, r in zip(ORBIT_PERIODS, residuals, strict=True) if r < settings.ORBIT_PERIOD_RTOL), 0
    )


def step_orbit(
    data: NTPData, lim: Limits, W0: ArrayLike, lr: float, n_iter: int, n_records: int
) -> StepOrbit:
    """GD with step ``lr`` from ``W0`` for ``n_iter`` steps: whether its F-part converges or cycles.

    Paper A's GD splits into two problems: in F-perp separable, logistic-regression-like; in F a
    soft-label problem with a finite minimizer ``W*`` whose Hessian's largest eigenvalue tends to
    ``L_inf`` (:func:`smoothness`). Past ``2/L_inf`` the minimizer is unstable and GD may
    period-double (Meng et al., 2024, for logistic regression on non-separable data). The
    F-parts of the iterates are recorded at ``n_records`` log-spaced steps (each with the two
    after it) and at the last ``max(ORBIT_PERIODS)`` steps; :class:`StepOrbit` says what they do.

    Raises
    ------
    InvalidDataError
        On a step that is not a positive finite number, or a budget shorter than 10 steps.
    SolverError
        If GD's iterates leave the floats (``ntpnb._optim``'s check).
    """
    lr = float(as_float(lr, "lr"))
    if not lr > 0:
        raise InvalidDataError(f"the step must be positive, got {lr}")
    n_iter = as_count(n_iter, "n_iter")
    grid, starts = _orbit_grid(n_iter, as_count(n_records, "n_records"))
    B, scale = lim.basis, float(np.linalg.norm(lim.W_star))

    def record(W: np.ndarray) -> dict:
        return {"f": B @ W.ravel(), "kl": kl_divergence(data, W)}

    trace = run_decoder(data, optim.gd(lr), n_iter, W0, record=record, record_at=grid)
    F, k = np.asarray(trace.f), trace.iterations
    at = np.searchsorted(k, starts)
    history = np.linalg.norm(F[at + 2] - 2 * F[at + 1] + F[at], axis=1) / 4 / scale
    tail = F[-(max(ORBIT_PERIODS) + 1) :]
    amplitude = float(_second_differences(tail).max() / scale)
    size = float(np.linalg.norm(tail[-1] - tail[:-1], axis=1).max())
    residuals = tuple(
        float(np.linalg.norm(tail[-1] - tail[-1 - p]) / size) if size > 0 else 0.0 for p in ORBIT_PERIODS
    )
    step = (tail[-1] - tail[-2]) @ B
    mode = _limit_mode(data)[1]
    alignment = float(abs(step @ mode) / np.linalg.norm(step)) if np.any(step) else 0.0
    kl = np.asarray(trace.kl)
    return StepOrbit(
        lr,
        n_iter,
        amplitude,
        frozen(starts),
        frozen(history),
        residuals,
        _period(amplitude, residuals),
        alignment,
        (float(kl[-2]), float(kl[-1])),
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
    #: The offset ``r_K = ||W_K - <W_K, u> u||``, ``u = W^mm / ||W^mm||``, at the end of the run.
    offset: float


def steps_to_corr(trace: optim.Trace, W_mm: ArrayLike, level: float) -> StepsToCorr:
    """When GD's ``corr(W_k, W^mm)`` reaches ``level``: measured, or extrapolated as chapter 4 does.

    ``1 - corr`` is set by the offset ``r_k`` of ``W_k`` from ``W^mm``'s line: ``corr`` reaches
    ``level`` at ``||W|| = r / sqrt(1 - level^2)``. With ``r`` as at the end of the run and the
    norm growing like ``growth * log k`` (fitted over the run's last decade, or the theory's
    ``||W^mm||``), that norm is reached at ``log k = log K + (need - ||W_K||) / growth``.

    Raises
    ------
    InvalidDataError
        If the trace has no ``corr``, ``norm`` or final iterate, fewer than two records in its last
        decade, a level outside (0, 1), or a norm that does not grow over the last decade.
    """
    level = float(as_float(level, "level"))
    if not 0 < level < 1:
        raise InvalidDataError(f"the level must lie in (0, 1), got {level}")
    k, corr, norm = trace.iterations, np.asarray(trace.corr), np.asarray(trace.norm)
    mm_norm = float(np.linalg.norm(W_mm))
    last = k >= k[-1] / 10
    if np.count_nonzero(last) < 2:
        raise InvalidDataError("the run's last decade holds fewer than two records: no growth to fit")
    growth, _ = fit_line(np.log(k[last]), norm[last])
    offset = float(offset_from(trace.W, W_mm))
    reached = np.flatnonzero(corr >= level)
    if reached.size:
        log10_k = float(np.log10(k[reached[0]]))
        return StepsToCorr(log10_k, True, log10_k, growth, mm_norm, float(corr[-1]), offset)
    if not growth > 0:
        raise InvalidDataError(f"the norm does not grow over the last decade (slope {growth:.3g})")
    need = offset / np.sqrt(1 - level**2)

    def log10_at(rate: float) -> float:
        return float((np.log(k[-1]) + (need - norm[-1]) / rate) / np.log(10))

    return StepsToCorr(log10_at(growth), False, log10_at(mm_norm), growth, mm_norm, float(corr[-1]), offset)


def horizons_by_budget(
    data: NTPData,
    lim: Limits,
    W0: ArrayLike,
    lr: float,
    budgets: ArrayLike,
    level: float,
    n_records: int,
) -> tuple[StepsToCorr, ...]:
    """:func:`steps_to_corr` from each budget of one GD run: how the extrapolation moves with the budget.

    GD with step ``lr`` runs from ``W0`` to the largest budget, recorded on the union of
    ``log_grid(b, n_records)`` over the budgets ``b``; the run seen up to ``b`` on its own grid
    (:func:`~ntpnb.linear.experiments._curves.trace_at`) is the run with budget ``b``. An
    extrapolation that keeps moving later as the budget grows (the offset from ``W^mm``'s line
    still growing) is a lower bound on the horizon, not an estimate of it.

    Raises
    ------
    InvalidDataError
        On budgets that are not strictly increasing whole numbers, and as :func:`steps_to_corr`.
    """
    budgets = np.asarray(budgets)
    if budgets.ndim != 1 or budgets.size == 0 or not np.issubdtype(budgets.dtype, np.integer):
        raise InvalidDataError(f"the budgets must be a non-empty list of whole numbers, got {budgets!r}")
    if budgets[0] < 1 or np.any(np.diff(budgets) <= 0):
        raise InvalidDataError(
            f"the budgets must be positive and strictly increasing, got {budgets.tolist()}"
        )
    grids = [optim.log_grid(int(b), as_count(n_records, "n_records")) for b in budgets]
    run = train(
        data,
        optim.gd(float(as_float(lr, "lr"))),
        int(budgets[-1]),
        W0=W0,
        record_at=np.unique(np.concatenate(grids)),
        lim=lim,
        keep_iterates=True,
    )
    return tuple(steps_to_corr(trace_at(run, grid), lim.W_mm, level) for grid in grids)


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
