"""Where a check's decision changes across a grid: its boundaries, bracketed by the grid values either side.

On a line, a boundary lies between each pair of decided neighbours whose decisions differ (the
undecided points between them named); on a heatmap, along each axis at each value of the other
(:func:`boundaries`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._grid import Axis, Grid
from ._results import PointKey


@dataclass(frozen=True)
class Boundary:
    """Where a check's decision changes: between two grid values along one axis."""

    axis: str
    #: The adjacent decided grid values between which the decision changes (in the axis's order).
    lower: Any
    upper: Any
    #: The check holds at ``lower`` (and not at ``upper``).
    holds_below: bool
    #: The other axis's value on a heatmap; {} on a line.
    fixed: Mapping[str, Any] = field(default_factory=dict)
    #: The grid values between ``lower`` and ``upper`` where the check is undecided.
    undecided: tuple[Any, ...] = ()


def _line_boundaries(
    axis: Axis, decisions: Sequence[bool | None], fixed: Mapping[str, Any]
) -> list[Boundary]:
    """The boundaries along one line of the grid: between decided neighbours whose decisions differ."""
    found, previous = [], None  # the last decided index
    for i, decision in enumerate(decisions):
        if decision is None:
            continue
        if previous is not None and decisions[previous] != decision:
            between = tuple(axis.values[previous + 1 : i])
            found.append(
                Boundary(
                    axis.name,
                    axis.values[previous],
                    axis.values[i],
                    bool(decisions[previous]),
                    dict(fixed),
                    between,
                )
            )
        previous = i
    return found


def boundaries(grid: Grid, holds: Mapping[PointKey, bool | None]) -> tuple[Boundary, ...]:
    """Every boundary of a map: along a line; on a heatmap, along each axis at each value of the other."""
    axes = grid.axes
    if len(axes) == 1:
        return tuple(_line_boundaries(axes[0], [holds[(v,)] for v in axes[0].values], {}))
    first, second = axes
    found = []
    for y in second.values:  # along the first axis at each value of the second
        found += _line_boundaries(first, [holds[(x, y)] for x in first.values], {second.name: y})
    for x in first.values:
        found += _line_boundaries(second, [holds[(x, y)] for y in second.values], {first.name: x})
    return tuple(found)
