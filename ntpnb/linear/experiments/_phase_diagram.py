"""Lemma 1 and the thresholds below it (chapter 5).

Above ``d = m`` a decoder reaches any logits (:func:`decoder_with_logits`); below it sweeps of
random draws nested in ``d`` measure how often each condition holds (:func:`nested_sweep`,
:func:`nested_curve`), against the count of unknowns and equations (:func:`count_below_threshold`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..._linalg import least_squares
from ..._parallel import parallel_map, run_sweep, seeded_trial, trial_generators
from ..._statistics import fisher_pvalue
from ..._validation import as_count, as_float_array, as_generator
from ...errors import GenerationError, InvalidDataError
from .._compatibility import is_compatible
from .._condition_thresholds import NestedTrial, condition_trial, nested_trial, random_instance
from .._constraints import ntp_constraints
from .._ntp_data import NTPData, check_decoder, require_data
from .._separability import is_separable
from .._subspace import embedding_rank

__all__ = [
    "decoder_with_logits",
    "compatibility_violation",
    "separability_violation",
    "ConditionCurve",
    "nested_sweep",
    "nested_curve",
    "DesignComparison",
    "NestedVsIndependent",
    "nested_vs_independent",
    "CountBelowThreshold",
    "count_below_threshold",
    "find_instance",
]


def decoder_with_logits(data: NTPData, L: ArrayLike) -> np.ndarray:
    """The minimum-norm ``W`` with ``H W^T = L``: with ``H`` of full row rank, any ``L`` (Lemma 1)."""
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
    """How often each condition holds along the grid of ``d`` of one sweep configuration."""

    #: ``d / m`` at each grid point.
    x: np.ndarray
    #: Instances per grid point.
    n_trials: int
    #: The number of instances where each condition holds, at each grid point.
    compatible: np.ndarray
    separable: np.ndarray

    def fraction(self, key: str) -> np.ndarray:
        """The fraction of instances where ``key`` (``"compatible"`` or ``"separable"``) holds."""
        if key not in ("compatible", "separable"):
            raise InvalidDataError(f"unknown condition {key!r}; use 'compatible' or 'separable'")
        return getattr(self, key) / self.n_trials


def nested_sweep(
    points: Sequence[Mapping[str, Any]], n_draws: int, seed: int = 0, n_pilot: int = 4
) -> list[list[NestedTrial]]:
    """``run_sweep(nested_trial, points, n_draws, seed)``: the same draws and thresholds, in fewer decisions.

    The first ``n_pilot`` draws of every point are searched by bisection, the others start from
    the median of their separability thresholds (the point's ``guess``, unless it has one): two
    or three decisions instead of five or six.

    Raises
    ------
    InvalidDataError
        If ``n_draws`` or ``n_pilot`` is not a positive integer, or as
        :func:`~ntpnb.linear._condition_thresholds.nested_trial`.
    """
    points = list(points)
    n_draws, n_pilot = as_count(n_draws, "n_draws"), as_count(n_pilot, "n_pilot")
    seeds = trial_generators(seed, len(points), n_draws)
    n_first = min(n_pilot, n_draws)

    def draws(part: slice, k: int) -> list[list[NestedTrial]]:  # the draws part (k of them) per point
        jobs = [(p, ss) for p, per in zip(points, seeds, strict=True) for ss in per[part]]
        trials = parallel_map(functools.partial(seeded_trial, nested_trial), jobs, 16)
        return [trials[i * k : (i + 1) * k] for i in range(len(points))]

    pilot = draws(slice(n_first), n_first)
    for i, point in enumerate(points):
        grid = tuple(point["d"])
        inside = [grid[t.separable_from] for t in pilot[i] if t.separable_from < len(grid)]
        if "guess" not in point and inside:
            points[i] = {**point, "guess": float(np.median(inside))}
    rest = draws(slice(n_first, None), n_draws - n_first)
    return [first + later for first, later in zip(pilot, rest, strict=True)]


def nested_curve(grid: Sequence[int], m: int, trials: Sequence[NestedTrial]) -> ConditionCurve:
    """How often each condition holds along ``grid`` over the draws of :func:`nested_sweep`.

    The count at ``i`` is the number of draws whose first index is at most ``i``: binomial, as
    with independent draws, but non-decreasing across ``d``.

    Raises
    ------
    InvalidDataError
        If there are no trials or a trial's first index is outside ``0 .. len(grid)``.
    """
    grid = np.array([as_count(d, "d") for d in grid])
    m = as_count(m, "m")
    if not trials:
        raise InvalidDataError("nested_curve needs at least one trial")
    counts = {}
    for key in ("compatible", "separable"):
        first = np.array([getattr(t, f"{key}_from") for t in trials])
        if np.any((first < 0) | (first > grid.size)):
            raise InvalidDataError(
                f"first indices of {key} must lie in 0 .. {grid.size}, got {first.tolist()}"
            )
        counts[key] = np.array([int(np.count_nonzero(first <= i)) for i in range(grid.size)])
    return ConditionCurve(x=grid / m, n_trials=len(trials), **counts)


def crossing_point(curve: ConditionCurve, key: str, level: float = 0.5) -> int | None:
    """The grid index next to where the fraction of ``key`` first reaches ``level``, nearest ``level``.

    Of the two grid points between which :func:`ntpnb.statistics.crossing` interpolates, the one
    whose fraction is nearer ``level`` (the later on a tie): where the curve is most uncertain.
    None if it never reaches ``level``.

    Raises
    ------
    InvalidDataError
        If ``key`` is not ``"compatible"`` or ``"separable"``.
    """
    frac = curve.fraction(key)
    above = np.flatnonzero(frac >= level)
    if above.size == 0:
        return None
    i = int(above[0])
    return i - 1 if i > 0 and level - frac[i - 1] < frac[i] - level else i


#: The conditions a sweep decides, in the order the chapter compares them.
CONDITIONS: tuple[str, ...] = ("compatible", "separable")


@dataclass(frozen=True)
class DesignComparison:
    """One condition of one configuration where its nested curve is nearest 1/2: the two designs' counts."""

    V: int
    S: int
    #: ``"compatible"`` or ``"separable"``.
    condition: str
    #: The grid index of the nested curve (:func:`crossing_point`).
    index: int
    #: The dimension the independent instances were drawn at.
    d: int
    #: Nested draws, of ``n``, where the condition holds at ``index``.
    nested: int
    #: Independent instances, of ``n``, where it holds at ``d``.
    independent: int
    #: Draws of each design.
    n: int

    @property
    def pvalue(self) -> float:
        """Fisher's exact two-sided p-value that the two counts share one probability (uncorrected)."""
        return fisher_pvalue(self.nested, self.n, self.independent, self.n)


@dataclass(frozen=True)
class NestedVsIndependent:
    """The comparisons of :func:`nested_vs_independent`, and the ambiguous independent draws replaced."""

    rows: tuple[DesignComparison, ...]
    #: Numerically ambiguous independent draws, each replaced by a fresh draw.
    ambiguous: int

    def pvalues(self, condition: str) -> list[float]:
        """The p-values of one condition's comparisons, one per configuration: independent draws.

        Raises
        ------
        InvalidDataError
            If ``condition`` is not ``"compatible"`` or ``"separable"``.
        """
        if condition not in CONDITIONS:
            raise InvalidDataError(f"unknown condition {condition!r}; use 'compatible' or 'separable'")
        return [row.pvalue for row in self.rows if row.condition == condition]


def nested_vs_independent(
    points: Sequence[Mapping[str, Any]],
    curves: Sequence[ConditionCurve],
    n_draws: int,
    seed: int = 0,
    offset: int = 0,
) -> NestedVsIndependent:
    """Each nested curve against ``n_draws`` independent instances where it is nearest 1/2.

    For every configuration (a point of :func:`nested_sweep`, ``{"m", "V", "S", "d"}``, with its
    :func:`nested_curve`) and every condition it decides (compatibility only where there are
    equations, ``S > 1``), the grid index nearest 1/2 (:func:`crossing_point`); at its ``d``
    (plus ``offset``: 0 compares the designs, another value draws the independent instances
    elsewhere, a difference the comparison must find), ``n_draws`` independent instances
    (:func:`~ntpnb.linear._condition_thresholds.condition_trial`, one ``run_sweep`` from
    ``seed`` over the distinct ``(V, S, d)`` in sorted order). The rows of one condition come
    from independent draws (one configuration each), so their p-values combine by Fisher's
    method; the two conditions of a configuration share its nested draws.

    Raises
    ------
    InvalidDataError
        If points and curves differ in number, a point lacks a key, ``n_draws`` differs from
        a curve's draws, or ``offset`` is not an integer or takes a dimension below 1.
    """
    points, curves = list(points), list(curves)
    n_draws = _checked_design(points, curves, n_draws, offset)
    where = _crossings(points, curves, offset)
    counts, ambiguous = _independent_counts(where, n_draws, seed)
    curve_of = {(p["V"], p["S"]): c for p, c in zip(points, curves, strict=True)}
    rows = tuple(
        DesignComparison(
            V,
            S,
            condition,
            i,
            d,
            int(getattr(curve_of[V, S], condition)[i]),
            counts[V, S, d, condition],
            n_draws,
        )
        for (V, S, condition), (_, i, d) in where.items()
    )
    return NestedVsIndependent(rows, ambiguous)


def _checked_design(
    points: list[Mapping[str, Any]], curves: list[ConditionCurve], n_draws: int, offset: int
) -> int:
    """``n_draws`` checked against the points and curves of :func:`nested_vs_independent`."""
    if len(points) != len(curves):
        raise InvalidDataError(f"{len(points)} points but {len(curves)} curves")
    if not all(isinstance(p, Mapping) and {"m", "V", "S", "d"} <= set(p) for p in points):
        raise InvalidDataError("every point needs the keys m, V, S and d")
    n_draws = as_count(n_draws, "n_draws")
    if sizes := sorted({c.n_trials for c in curves} - {n_draws}):
        raise InvalidDataError(
            f"the independent design draws as many instances as the nested one: n_draws = {n_draws}, "
            f"but a nested curve has {sizes[0]} draws"
        )
    if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)):
        raise InvalidDataError(f"offset must be an integer, got {offset!r}")
    return n_draws


def _crossings(
    points: list[Mapping[str, Any]], curves: list[ConditionCurve], offset: int
) -> dict[tuple[int, int, str], tuple[int, int, int]]:
    """``(V, S, condition) -> (m, grid index, independent d)``: where each nested curve is nearest 1/2."""
    where = {}
    for point, curve in zip(points, curves, strict=True):
        for condition in CONDITIONS if point["S"] > 1 else ("separable",):
            if (i := crossing_point(curve, condition)) is not None:
                d = tuple(point["d"])[i] + offset
                if d < 1:
                    raise InvalidDataError(f"offset {offset} takes d = {tuple(point['d'])[i]} to {d} < 1")
                where[point["V"], point["S"], condition] = (point["m"], i, d)
    return where


def _independent_counts(
    where: Mapping[tuple[int, int, str], tuple[int, int, int]], n_draws: int, seed: int
) -> tuple[dict[tuple[int, int, int, str], int], int]:
    """How many of ``n_draws`` independent draws meet each condition at each crossing; the ambiguous."""
    grid = [
        {"m": m, "d": d, "V": V, "S": S}
        for V, S, d, m in sorted({(V, S, d, m) for (V, S, _), (m, _, d) in where.items()})
    ]
    counts, ambiguous = {}, 0
    if grid:
        for p, per in zip(grid, run_sweep(condition_trial, grid, n_draws, seed=seed), strict=True):
            ambiguous += sum(r["ambiguous"] for r in per)
            for condition in CONDITIONS:
                counts[p["V"], p["S"], p["d"], condition] = sum(r[condition] for r in per)
    return counts, ambiguous


@dataclass(frozen=True)
class CountBelowThreshold:
    """The count of unknowns against equations, ``d_count = ceil(m (S-1) / (V-1))``, on a sweep."""

    #: The smallest ``d`` where the compatibility equations can be solvable.
    d_count: int
    #: The most compatible instances at any ``d < d_count`` of the grid (0 if none is below).
    below_max: int
    #: The compatible instances at the first grid ``d >= d_count``.
    at_count: int
    #: The first grid ``d`` where every instance is compatible.
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
    probabilities (separable but not compatible).

    Raises
    ------
    GenerationError
        If none of ``tries`` draws has the wanted conditions.
    """
    rng = as_generator(rng, "rng")
    for _ in range(as_count(tries, "tries")):
        data = random_instance(m, d, 5, 2, rng)
        if tie:
            H, P = data.H.copy(), data.P.copy()
            H[1::2] = H[0:-1:2]
            Q = np.where(P[0:-1:2] > 0, rng.dirichlet(np.ones(5), size=m // 2), 0.0)
            P[1::2] = Q / Q.sum(axis=1, keepdims=True)
            data = NTPData(H=H, pi=data.pi, P=P)
        if (is_compatible(data), is_separable(data)) == (want_comp, want_sep):
            return data
    raise GenerationError(f"no instance with d = {d}: compatible {want_comp}, separable {want_sep}")
