"""Lemma 1 and the thresholds below it (chapter 4).

Above ``d = m`` both conditions hold and their solutions form affine families: a decoder with
any logits (:func:`decoder_with_logits`), measured against the conditions
(:func:`compatibility_violation`, :func:`separability_violation`). Below it a sweep of random
instances measures how often each holds (:func:`condition_curve`) and where the count of
unknowns against equations places compatibility (:func:`count_below_threshold`); instances that
fail a chosen condition are drawn by :func:`find_instance`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ...errors import GenerationError, InvalidDataError
from ...linalg import least_squares
from ...validation import as_count, as_float_array, as_generator
from ..constraints import ntp_constraints
from ..data import NTPData, check_decoder, require_data
from ..separability import is_separable
from ..subspace import embedding_rank, is_compatible
from ..thresholds import random_instance

__all__ = [
    "decoder_with_logits",
    "compatibility_violation",
    "separability_violation",
    "ConditionCurve",
    "condition_curve",
    "CountBelowThreshold",
    "count_below_threshold",
    "find_instance",
]


def decoder_with_logits(data: NTPData, L: ArrayLike) -> np.ndarray:
    """The minimum-norm ``W`` with ``H W^T = L`` (at the rank of ``H``, one rule).

    With ``H`` of full row rank every logit matrix ``L`` (``(m, V)``) is reached: Lemma 1.
    """
    require_data(data)
    L = as_float_array(L, "L", 2)
    if L.shape != (data.m, data.V):
        raise InvalidDataError(f"L must have shape (m, V) = ({data.m}, {data.V}), got {L.shape}")
    return least_squares(data.H, L, what="the embeddings H", rank=embedding_rank(data)).T


def compatibility_violation(data: NTPData, W: ArrayLike) -> float:
    """The largest residual of the compatibility equations (4) at ``W``."""
    W, cons = check_decoder(data, W), ntp_constraints(data)
    return float(np.abs(cons.eq @ W.ravel() - cons.eq_rhs).max())


def separability_violation(data: NTPData, W: ArrayLike) -> float:
    """The largest violation of Definition 2 at ``W``: ``max(|(6a)|, 1 - smallest (6b) margin)``."""
    W, cons = check_decoder(data, W), ntp_constraints(data)
    return float(max(np.abs(cons.eq @ W.ravel()).max(), 1 - (cons.ineq @ W.ravel()).min()))


@dataclass(frozen=True)
class ConditionCurve:
    """How often each condition holds along the grid of ``d`` of one sweep configuration.

    Attributes
    ----------
    x
        ``d / m`` at each grid point.
    n_trials
        Instances per grid point.
    compatible, separable
        The number of instances where the condition holds, at each grid point.
    """

    x: np.ndarray
    n_trials: int
    compatible: np.ndarray
    separable: np.ndarray

    def fraction(self, key: str) -> np.ndarray:
        """The fraction of instances where ``key`` (``"compatible"`` or ``"separable"``) holds."""
        if key not in ("compatible", "separable"):
            raise InvalidDataError(f"unknown condition {key!r}; use 'compatible' or 'separable'")
        return getattr(self, key) / self.n_trials


def condition_curve(grid: Sequence[dict], results: Sequence[Sequence[dict]], **where: int) -> ConditionCurve:
    """The points of a sweep (:func:`ntpnb.parallel.run_sweep` of ``condition_trial``) matching ``where``.

    ``where`` fixes some of ``m, V, S`` (e.g. ``V=5, S=2``); the grid points that match, in grid
    order, make the curve, with ``x = d / m``.

    Raises
    ------
    InvalidDataError
        If no grid point matches, or ``grid`` and ``results`` differ in length.
    """
    if len(grid) != len(results):
        raise InvalidDataError(f"grid and results differ in length: {len(grid)} and {len(results)}")
    idx = [i for i, p in enumerate(grid) if all(p[k] == v for k, v in where.items())]
    if not idx:
        raise InvalidDataError(f"no grid point has {where}")
    points = [results[i] for i in idx]
    counts = {
        key: np.array([sum(r[key] for r in trials) for trials in points])
        for key in ("compatible", "separable")
    }
    return ConditionCurve(
        x=np.array([grid[i]["d"] / grid[i]["m"] for i in idx]),
        n_trials=len(points[0]),
        **counts,
    )


@dataclass(frozen=True)
class CountBelowThreshold:
    """The count of unknowns against equations, ``d_count = ceil(m (S-1) / (V-1))``, on a sweep.

    Attributes
    ----------
    d_count
        The smallest ``d`` where the compatibility equations can be solvable.
    below_max
        The most compatible instances at any ``d < d_count`` of the grid (0 if none is below).
    at_count
        The compatible instances at the first grid ``d >= d_count``.
    all_from
        The first grid ``d`` where every instance is compatible.
    """

    d_count: int
    below_max: int
    at_count: int
    all_from: int


def count_below_threshold(curve: ConditionCurve, m: int, V: int, S: int) -> CountBelowThreshold:
    """Compatibility on the sweep ``curve`` of ``(m, V, S)`` against the count ``d_count``."""
    d_count = int(np.ceil(m * (S - 1) / (V - 1)))
    d_grid = np.rint(curve.x * m).astype(int)
    counts = curve.compatible
    below = d_grid < d_count
    return CountBelowThreshold(
        d_count=d_count,
        below_max=int(counts[below].max()) if np.any(below) else 0,
        at_count=int(counts[np.argmax(d_grid >= d_count)]),
        all_from=int(d_grid[np.argmax(counts == curve.n_trials)]),
    )


def find_instance(
    m: int,
    d: int,
    want_comp: bool,
    want_sep: bool,
    rng: np.random.Generator,
    tie: bool = False,
    tries: int = 200,
) -> NTPData:
    """The first random instance (``V = 5``, ``S = 2``) with the wanted pair of conditions.

    With ``tie``, odd contexts copy the embedding and support of the one before, with fresh
    probabilities: no ``W`` gives the two of a pair different log-odds, while their
    separability constraints coincide (separable but not compatible).

    Raises
    ------
    GenerationError
        If none of ``tries`` draws has the wanted conditions.
    """
    rng = as_generator(rng, "rng")
    for _ in range(as_count(tries, "tries")):
        data = random_instance(m, d, 5, 2, rng)
        if tie:  # odd contexts copy the embedding and support of the one before
            H, P = data.H.copy(), data.P.copy()
            H[1::2] = H[0:-1:2]
            Q = np.where(P[0:-1:2] > 0, rng.dirichlet(np.ones(5), size=m // 2), 0.0)
            P[1::2] = Q / Q.sum(axis=1, keepdims=True)
            data = NTPData(H=H, pi=data.pi, P=P)
        if (is_compatible(data), is_separable(data)) == (want_comp, want_sep):
            return data
    raise GenerationError(f"no instance with d = {d}: compatible {want_comp}, separable {want_sep}")
