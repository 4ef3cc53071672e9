"""A grid's maps in words: where each check holds, its boundaries, the budget notes, values by point."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from .._digits import format_bound
from .._text import join_words
from ..errors import InvalidDataError
from ._boundaries import Boundary
from ._decide import CheckMap, check_maps
from ._grid import Axis, Grid, paper_settings
from ._results import GridResults


def value_text(axis: Axis, value: Any) -> str:
    """A grid value as ``-p`` takes it (the axis's own text)."""
    return dict(zip(axis.values, axis.texts(), strict=True)).get(value, str(value))


def _axis(grid: Grid, name: str) -> Axis:
    return next(axis for axis in grid.axes if axis.name == name)


#: A map's decision at a point in words, as the maps' pages, boundaries and legends say it.
DECISION_WORDS: Mapping[bool | None, str] = MappingProxyType(
    {True: "holds", False: "fails", None: "undecided"}
)


def _held(holds: bool) -> str:
    return DECISION_WORDS[holds]


def boundary_text(boundary: Boundary, grid: Grid, names: Mapping[str, str] | None = None) -> str:
    r"""``"at m = 20, between d = 5 (fails) and 10 (holds; undecided at 7)"``.

    ``names`` gives an axis the name a page shows (``{"lr": "$\eta$"}``); an axis it does not
    name is called by its parameter's name.
    """
    named = dict(names or {})
    axis = _axis(grid, boundary.axis)
    at = ", ".join(f"{named.get(k, k)} = {value_text(_axis(grid, k), v)}" for k, v in boundary.fixed.items())
    lower, upper = value_text(axis, boundary.lower), value_text(axis, boundary.upper)
    text = (
        f"between {named.get(axis.name, axis.name)} = {lower} ({_held(boundary.holds_below)}) and {upper} "
        f"({_held(not boundary.holds_below)}"
    )
    if boundary.undecided:
        text += f"; undecided at {join_words(value_text(axis, v) for v in boundary.undecided)}"
    return f"at {at}, {text})" if at else f"{text})"


def where_it_holds(check_map: CheckMap, grid: Grid) -> str:
    """``"holds at 3 of 9 points (0.01 to 0.1), fails at 5, undecided at 1"``, or everywhere / nowhere."""
    decisions = list(check_map.holds.values())
    n = len(decisions)
    held, failed = decisions.count(True), decisions.count(False)
    open_ = n - held - failed
    undecided = f", undecided at {open_}" if open_ else ""
    if held == n:
        return "holds at every point"
    if failed == n:
        return "fails at every point"
    if held == 0 and failed == 0:
        return "undecided at every point"
    where = ""
    if len(grid.axes) == 1:
        axis = grid.axes[0]
        texts = [value_text(axis, k[0]) for k, d in check_map.holds.items() if d]
        where = f" ({axis.name} = {join_words(texts)})" if texts else ""
    return f"holds at {held} of {n} points{where}, fails at {failed}{undecided}"


def boundary_summary(check_map: CheckMap, grid: Grid, names: Mapping[str, str] | None = None) -> str:
    """Its boundaries in words, or why it has none (``names``: as :func:`boundary_text`'s)."""
    if check_map.boundaries:
        return "; ".join(boundary_text(b, grid, names) for b in check_map.boundaries)
    decisions = set(check_map.holds.values())
    every = "every point" if None not in decisions else "every point where it is decided"
    if decisions - {None} == {True}:
        return f"no boundary: it holds at {every}"
    if decisions - {None} == {False}:
        return f"no boundary: it fails at {every}"
    if decisions == {None}:
        return "no boundary: it is decided at no point"
    return "no boundary found: undecided points lie between where it holds and where it fails"


def seed_means(check_map: CheckMap) -> dict[Any, float]:
    """Each point's value averaged over the seeds that made it, by the point's value (a line's map).

    NaN at a point where no seed made the check.

    Raises
    ------
    InvalidDataError
        If the map is over two axes (a point is then two values).
    """
    if any(len(key) != 1 for key in check_map.values):
        raise InvalidDataError(f"{check_map.what}: seed_means reads a map over one axis")
    return {key[0]: float(np.mean(v)) if v else math.nan for key, v in check_map.values.items()}


def format_by_point(values: Mapping[float, float], fmt: str) -> str:
    """``values`` (by grid value) as ``"v1, v2, ... at x1, x2, ..."``, in the grid values' order.

    Each value in the format ``fmt`` (``".3f"``, ``".0%"`` ...), each grid value as ``{:g}``.
    """
    keys = sorted(values)
    shown = ", ".join(format(values[k], fmt) for k in keys)
    return f"{shown} at {', '.join(f'{k:g}' for k in keys)}"


def summary_lines(results: GridResults, maps: Sequence[CheckMap] | None = None) -> list[str]:
    """One line per check: what it requires, where it holds, its boundary; then the budget notes.

    ``maps``: the results' :func:`check_maps`, where the caller has them already.
    """
    maps = check_maps(results) if maps is None else maps
    lines = [
        f"{m.label} {m.what} (required {m.required}): {where_it_holds(m, results.grid)}; "
        f"{boundary_summary(m, results.grid)}"
        for m in maps
    ]
    return lines + budget_notes(results, maps)


def budget_notes(results: GridResults, maps: Sequence[CheckMap]) -> list[str]:
    """Each check that fails at a point whose run was shorter than the paper's: the budget may be why.

    A map is a measurement at the budget each point ran: a failure at a point that stopped before
    the paper's iteration count (:attr:`~ntpnb.explore._results.GridResults.short`) may be the run's,
    not the claim's.
    """
    notes = []
    for m in maps:
        failing = [key for key, holds in m.holds.items() if holds is False and key in results.short]
        for budget in dict.fromkeys(results.short[key] for key in failing):
            at = [key for key in failing if results.short[key] == budget]
            points = "; ".join(
                ", ".join(
                    f"{a.name} = {value_text(a, v)}" for a, v in zip(results.grid.axes, key, strict=True)
                )
                for key in at
            )
            notes.append(
                f"{m.label} {m.what} fails at {len(at)} point{'s' * (len(at) != 1)} that ran {budget}: "
                f"{points}; a run that short may fail for want of iterations (the budget), not because "
                "the claim fails there"
            )
    return notes


def paper_words(grid: Grid, paper: Mapping[str, float]) -> str:
    """The sentence that names the paper's setting on a map's axes ("" where no axis has one).

    A setting a map does not draw (:func:`~._grid.paper_settings`) is named and said not drawn.
    """
    parts = [
        f"{axis.name} = {format_bound(at)}" + ("" if drawn else ", outside the grid's values (not drawn)")
        for axis, at, drawn in paper_settings(grid, paper)
    ]
    return f"Solid black: the paper's setting, {join_words(parts)}." if parts else ""
