"""A grid of settings of a chapter: its axes, their values checked in their domains, its points.

``ntpnb explore CHAPTER -p NAME=VALUES ...`` runs a chapter at every point of a grid. Each ``-p``
is read by :func:`parse_axis` (:func:`split_parameters` sorts them):

=============================  =====================================================================
``NAME=V``                     one value: a fixed override of every point (as ``ntpnb reproduce -p``)
``NAME=V1,V2,...``             a list: an axis (a comma inside brackets or quotes belongs to its
                               value: ``configs=[[2,1]],[[5,2]]`` is two values)
``NAME=LO..HI:log:N``          ``N >= 2`` values from ``LO > 0`` to ``HI``, evenly spaced in log
``NAME=LO..HI:lin:N``          ``N >= 2`` values from ``LO`` to ``HI``, evenly spaced
=============================  =====================================================================

A range's values are rounded to 6 significant digits, so that they print as they are and name
their folders so (``0.01..10:log:4`` is 0.01, 0.1, 1, 10). For a whole-number parameter they are
then rounded to the nearest integer, and a range that rounds two values to one integer is
refused (``m=2..4:lin:5``: ask for at most 3 values), so every point is a setting of its own.
A log range is drawn on a log scale, a lin range on a linear one; a list on a log scale when all
its values are numbers > 0 spanning two decades or more (the largest at least 100 times the
smallest), else on a linear one.

A grid has one or two axes: a map of a check is a line or a heatmap (:class:`Grid`).
:func:`checked_grid` reads every value of every axis in its parameter's domain exactly as
``-p`` is read (:func:`~ntpnb.chapter._parameters.apply_overrides`), before anything runs. The
seeds are not an axis: every point runs at the same seeds (``--seeds``).

This package never imports the runner: a chapter's kernel draws maps of grids too.
"""

from __future__ import annotations

import ast
import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .._validation import is_real
from ..chapter._domains import Domain
from ..chapter._parameters import (
    apply_overrides,
    is_range_text,
    parse_overrides,
    read_parameters_cell,
    split_values,
)
from ..errors import InvalidDataError, NTPError
from ..records._places import folder_name

#: Significant digits a range's values keep.
RANGE_DIGITS = 6
#: How many axes a grid may have: a map is a line (one) or a heatmap (two).
MAX_AXES = 2
#: A list is drawn on a log scale when its largest value is at least this many times its smallest.
LOG_SPAN = 100.0
#: ``LO..HI:log:N`` or ``LO..HI:lin:N`` (LO and HI are checked as numbers afterwards).
_RANGE = re.compile(r"^(?P<lo>.+?)\.\.(?P<hi>[^:]+):(?P<scale>[^:]*):(?P<n>[^:]*)$")
_RANGE_EXAMPLE = "write LO..HI:log:N or LO..HI:lin:N, e.g. -p toy_lr=0.01..10:log:9"


def value_text(value: Any) -> str:
    """``value`` as ``-p NAME=TEXT`` takes it: a text as it is, anything else as its ``repr``."""
    return value if isinstance(value, str) else repr(value)


@dataclass(frozen=True)
class Axis:
    """One parameter of a chapter and the values a grid gives it."""

    #: A parameter of the chapter.
    name: str
    #: Python values, as the parameter takes them (int, float, bool, str).
    values: tuple[Any, ...]
    #: As written: ``"0.01..10:log:9"`` or ``"0.1,0.5,1"`` (``""`` in process).
    spec: str = ""
    #: Drawn on a log scale (a log range; a list by the module's rule).
    log: bool = False

    def texts(self) -> tuple[str, ...]:
        """Each value as ``-p NAME=TEXT`` takes it (:func:`value_text`)."""
        return tuple(value_text(value) for value in self.values)

    def numeric(self) -> bool:
        """Whether every value is a number (never a flag nor a text): the axis has positions."""
        return all(is_real(v) for v in self.values)

    def covers(self, value: float) -> bool:
        """Whether ``value`` lies between the smallest and the largest of a numeric axis's values."""
        return self.numeric() and bool(self.values) and min(self.values) <= value <= max(self.values)

    def nearest(self, value: float) -> Any:
        """The axis's value nearest ``value``: by ratio on a log axis, by difference otherwise.

        The first in the axis's order of two as near.

        Raises
        ------
        InvalidDataError
            If the axis's values are not numbers, or on a log axis if they or ``value`` are not
            all positive.
        """
        if not self.numeric() or not self.values:
            raise InvalidDataError(f"axis {self.name}: no nearest value among {list(self.values)}")
        if not self.log:
            return min(self.values, key=lambda v: abs(v - value))
        if value <= 0 or min(self.values) <= 0:
            raise InvalidDataError(f"axis {self.name}: a log axis's values and {value} must be positive")
        return min(self.values, key=lambda v: abs(math.log(v / value)))


@dataclass(frozen=True)
class Grid:
    """One or two axes (a map is a line or a heatmap); the points are their product."""

    axes: tuple[Axis, ...]

    def points(self) -> list[dict[str, Any]]:
        """Every point, by parameter name: the product of the axes in their order, the last fastest."""
        names = [axis.name for axis in self.axes]
        return [
            dict(zip(names, values, strict=True))
            for values in itertools.product(*(a.values for a in self.axes))
        ]

    def shape(self) -> tuple[int, ...]:
        """How many values each axis has."""
        return tuple(len(axis.values) for axis in self.axes)


def paper_settings(grid: Grid, paper: Mapping[str, float]) -> list[tuple[Axis, float, bool]]:
    """Each numeric axis of ``grid`` that ``paper`` gives a value, that value, and whether a map draws it.

    A line's axis reaches out to the setting; a heatmap's cells span the grid's values only, so
    there a setting outside them is not drawn.
    """
    return [
        (axis, paper[axis.name], len(grid.axes) == 1 or axis.covers(paper[axis.name]))
        for axis in grid.axes
        if axis.name in paper and axis.numeric()
    ]


def point_label(point: Mapping[str, Any]) -> str:
    """``gd_lr=0.01,m=20``: the name of a point's folder and page (:func:`value_text` of each value)."""
    return folder_name({name: value_text(value) for name, value in point.items()})


def _literal(text: str) -> Any:
    """The Python literal ``text`` stands for, else the text itself (a bare word)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


def parse_axis(text: str) -> Axis:
    """The axis ``-p NAME=VALUES`` asks for: a list, a log or a linear range (the module's grammar).

    One value gives a one-valued axis (a fixed override: :func:`split_parameters`). The values
    are Python values read as literals (a bare word is a text); :func:`checked_grid` reads them
    in their parameter's domain.

    Raises
    ------
    NTPError
        On a missing ``=``, an empty value, or a range that is not ``LO..HI:log|lin:N`` with
        numbers ``LO < HI``, ``N >= 2`` (and ``LO > 0`` for a log range).
    """
    name, text = next(iter(parse_overrides([text]).items()))
    if not text:
        raise NTPError(f"-p {name}= gives no value: write {name}=V, {name}=V1,V2,... or a range")
    if is_range_text(text):
        return _range_axis(name, text)
    items = split_values(text)
    if "" in items:
        where = items.index("") + 1
        raise NTPError(
            f"-p {name}={text}: value {where} of {len(items)} is empty (two commas, or one at an end)"
        )
    values = tuple(_literal(item) for item in items)
    return Axis(name, values, text, log=_spans_decades(values))


def _range_axis(name: str, text: str) -> Axis:
    """The axis of ``-p NAME=LO..HI:SCALE:N`` (:func:`parse_axis`)."""
    written = f"-p {name}={text}"
    match = _RANGE.match(text.strip())
    if match is None:
        raise NTPError(f"{written} is not a range: {_RANGE_EXAMPLE}")
    try:
        lo, hi = float(match["lo"]), float(match["hi"])
    except ValueError:
        raise NTPError(f"{written}: LO and HI must be numbers; {_RANGE_EXAMPLE}") from None
    scale, count = match["scale"].strip(), match["n"].strip()
    if scale not in ("log", "lin"):
        raise NTPError(f"{written}: the scale is {scale!r}, neither log nor lin; {_RANGE_EXAMPLE}")
    if not count.isdigit() or int(count) < 2:
        raise NTPError(
            f"{written}: N = {count!r} is not a whole number >= 2 (a range has two values or more)"
        )
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
        raise NTPError(f"{written}: LO = {lo:g} must be below HI = {hi:g}, both finite")
    if scale == "log" and lo <= 0:
        raise NTPError(f"{written}: a log range needs LO > 0 (it is {lo:g}); use lin, or a list")
    n = int(count)
    if scale == "log":
        raw = [math.exp(math.log(lo) + (math.log(hi) - math.log(lo)) * i / (n - 1)) for i in range(n)]
    else:
        raw = [lo + (hi - lo) * i / (n - 1) for i in range(n)]
    values = tuple(float(f"{v:.{RANGE_DIGITS}g}") for v in (lo, *raw[1:-1], hi))
    return Axis(name, values, text.strip(), log=scale == "log")


def is_range(axis: Axis) -> bool:
    """Whether ``axis`` was written as a range (``LO..HI:log:N`` or ``LO..HI:lin:N``)."""
    return bool(_RANGE.match(axis.spec.strip()))


def _spans_decades(values: Sequence[Any]) -> bool:
    """Whether a list is drawn on a log scale: numbers > 0, the largest >= :data:`LOG_SPAN` x the smallest."""
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(numbers) != len(values) or not numbers or min(numbers) <= 0:
        return False
    return max(numbers) >= LOG_SPAN * min(numbers)


def split_parameters(pairs: Sequence[str]) -> tuple[tuple[Axis, ...], dict[str, str]]:
    """The axes and the fixed overrides that ``-p`` options ``pairs`` ask for, in their order.

    A ``-p`` with one value (neither a list nor a range) is a fixed override, its text as written.

    Raises
    ------
    NTPError
        On a bad ``-p`` (:func:`parse_axis`) or one name given twice.
    """
    parse_overrides(pairs)  # refuses a bad pair, or a name given twice, as reproduce does
    axes, fixed = [], {}
    for pair in pairs:
        axis = parse_axis(pair)
        if len(axis.values) == 1 and not is_range(axis):
            fixed[axis.name] = axis.spec
        else:
            axes.append(axis)
    return tuple(axes), fixed


def _check_axes(axes: Sequence[Axis], fixed: Mapping[str, str]) -> None:
    """Refuse a grid of no axis or more than :data:`MAX_AXES`, a name twice, ``seed``, a one-valued axis."""
    names = [axis.name for axis in axes]
    if not axes:
        raise NTPError(
            "explore needs an axis: a -p with several values, e.g. -p NAME=V1,V2 or -p NAME=0.01..10:log:9 "
            "(for one setting, use ntpnb reproduce -p)"
        )
    if len(axes) > MAX_AXES:
        raise NTPError(
            f"a grid has one or two axes (a map is a line or a heatmap), not {len(axes)} "
            f"({', '.join(names)}): give all but two of them a single value"
        )
    for name in names:
        if names.count(name) > 1 or name in fixed:
            raise NTPError(f"parameter {name!r} is given twice")
        if name == "seed":
            raise NTPError(
                "seed is not an axis: every point runs at the same seeds, --seeds N of them from the "
                "chapter's seed (or from -p seed=S)"
            )
    for axis in axes:
        if len(axis.values) < 2:
            raise NTPError(f"the axis {axis.name} has {len(axis.values)} value(s); an axis needs two or more")


def _whole_number(domain: Domain | None) -> bool:
    """Whether ``domain`` holds whole numbers (``int``, with bounds, or None)."""
    inner = domain.item if domain is not None and domain.kind == "optional" else domain
    return inner is not None and inner.kind == "int"


def _rounded(axis: Axis) -> Axis:
    """A range's values rounded to whole numbers; NTPError if two round to one."""
    values = tuple(round(v) for v in axis.values)
    if len(set(values)) < len(values):
        raise NTPError(
            f"-p {axis.name}={axis.spec}: {axis.name} is a whole number, and the range's values "
            f"{', '.join(f'{v:g}' for v in axis.values)} round to {', '.join(map(str, values))}, "
            "some twice; ask for fewer values, or a list"
        )
    return replace(axis, values=values)


def checked_grid(source: Path, profile: str, axes: Sequence[Axis], fixed: Mapping[str, str]) -> Grid:
    """The grid of ``axes`` over the chapter ``source`` at ``profile`` with ``fixed`` overrides, checked.

    Every value of every axis, with the fixed overrides, is read in its parameter's domain as
    ``-p`` is (:func:`~ntpnb.chapter._parameters.apply_overrides`); a range over a whole-number
    parameter is rounded first (the module's rule). Writes nothing.

    Raises
    ------
    NTPError
        On no axis or more than two, a name given twice, ``seed`` as an axis, an unknown
        parameter (with the nearest name), ``profile`` or ``output_dir`` (each has its option), a
        value outside its parameter's domain (naming the parameter, the value and the domain), or
        two values of an axis that are one setting.
    """
    fixed = dict(fixed)
    _check_axes(axes, fixed)
    apply_overrides(source, profile, fixed)  # the fixed ones first, named as reproduce names them
    cell = read_parameters_cell(source)
    checked = []
    for axis in axes:
        if axis.name in cell and _whole_number(cell[axis.name].domain) and is_range(axis):
            axis = _rounded(axis)
        values = []
        for text in axis.texts():
            try:
                values.append(apply_overrides(source, profile, {**fixed, axis.name: text})[axis.name])
            except NTPError as exc:
                raise NTPError(
                    f"{exc} (a value of -p {axis.name}={axis.spec or ','.join(axis.texts())})"
                ) from None
        labels = [point_label({axis.name: v}) for v in values]
        twice = sorted({label for label in labels if labels.count(label) > 1})
        if twice:
            raise NTPError(f"-p {axis.name}={axis.spec}: the same value twice ({', '.join(twice)})")
        log = axis.log if is_range(axis) else axis.log or _spans_decades(values)
        checked.append(Axis(axis.name, tuple(values), axis.spec, log))
    return Grid(tuple(checked))
