"""A grid of settings of a chapter: its axes, its points and their names.

A minimal version of the contract's ``grid.py`` (no parsing of ``-p`` ranges, no domains): the
points of a grid, in axis order with the last axis fastest, and the label that names each.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Axis:
    """One parameter of a chapter and the values it takes in a grid."""

    #: A parameter of the chapter.
    name: str
    #: Python values, as the parameter takes them (int, float, bool, str).
    values: tuple[Any, ...]
    #: As written: ``"0.01..10:log:9"`` or ``"0.1,0.5,1"`` (``""`` in process).
    spec: str = ""
    #: Drawn on a log scale.
    log: bool = False

    def texts(self) -> tuple[str, ...]:
        """Each value as ``-p NAME=TEXT`` takes it."""
        return tuple(str(value) for value in self.values)


@dataclass(frozen=True)
class Grid:
    """One or two axes: a map is a line or a heatmap."""

    axes: tuple[Axis, ...]

    def points(self) -> list[dict[str, Any]]:
        """Every point, the product of the axes in their order, the last axis fastest."""
        names = [axis.name for axis in self.axes]
        return [
            dict(zip(names, values, strict=True))
            for values in itertools.product(*(a.values for a in self.axes))
        ]

    def shape(self) -> tuple[int, ...]:
        """How many values each axis has."""
        return tuple(len(axis.values) for axis in self.axes)


def point_label(point: Mapping[str, Any]) -> str:
    """``"gd_lr=0.01,m=20"``: a point's folder and page name."""
    return ",".join(f"{name}={value}" for name, value in point.items())
