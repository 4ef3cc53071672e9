"""The page of a grid's maps (MyST markdown): what was explored, a summary table, then each map.

The page an explore tree's book shows (``ntpnb book --run TREE``) and ``maps/maps.md``:
:func:`map_page`. Every number on it comes from the grid's records (:mod:`._decide`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from statistics import median

from .._digits import format_number
from .._markdown import escape_markdown, escape_markdown_but_math, markdown_table
from .._text import join_words, value_range
from ..evidence._vocabulary import DECISION_WORDS
from ._decide import CheckMap, check_maps
from ._grid import Grid
from ._grid import value_text as parameter_text
from ._results import GridResults
from ._words import boundary_summary, budget_notes, paper_words, value_text, where_it_holds

#: How a check's decision at a point is made, as the page states it (the book's rule).
DECISION_RULE = (
    "The decision at a point is the book's verdict rule: a check decided at each seed holds where it "
    "holds at every seed; a statistical or count check is decided on its trials pooled over the seeds; "
    "a check whose data do not depend on the seed is decided once. A point is undecided where a seed's "
    "run is missing or did not complete, or where the pooled trials cannot decide. A boundary is "
    "bracketed by the grid values on either side of it."
)


def _axes_words(results: GridResults) -> str:
    parts = []
    for axis in results.grid.axes:
        spec = f" = `{axis.spec}`" if axis.spec else ""
        values = ", ".join(axis.texts())
        scale = ", log scale" if axis.log else ""
        parts.append(f"`{axis.name}`{spec} ({values}{scale})")
    return " and ".join(parts)


def _heading(results: GridResults) -> str:
    if results.title:
        return results.title
    return f"Where the checks hold across {' and '.join(a.name for a in results.grid.axes)}"


def _explored(results: GridResults) -> str:
    """The paragraph saying what was explored."""
    chapter = f"chapter `{results.chapter}`" if results.chapter else "a chapter's experiment, in process"
    profile = f" at the {results.profile} profile" if results.profile else ""
    n = len(results.seeds)
    seeds = f"seed{'s' * (n != 1)} {join_words(results.seeds)}"
    fixed = ", ".join(f"`{k}={parameter_text(v)}`" for k, v in sorted(results.fixed.items()))
    fixed = f"; fixed: {fixed}" if fixed else ""
    points = math.prod(results.grid.shape())
    return (
        f"Explored: {chapter}{profile}, at {seeds}, over {_axes_words(results)}{fixed}: "
        f"{points} point{'s' * (points != 1)}, each at every seed."
    )


def _number(value: float) -> str:
    return format_number(value, 3)


def _point_table(check_map: CheckMap, grid: Grid) -> str:
    """A table of a map's numbers: each point's median, range, passing seeds and decision."""
    names = [a.name for a in grid.axes]
    head = [*names, "median", "range over the seeds", "passes at", "decision"]
    rows = []
    for key, decision in check_map.holds.items():
        values = check_map.values[key]
        point = [escape_markdown(value_text(axis, v)) for axis, v in zip(grid.axes, key, strict=True)]
        if values:
            passed = round(check_map.share[key] * len(values))
            low, high = _number(min(values)), _number(max(values))
            spread = value_range(low, high) if low != high else ""
            cells = [_number(median(values)), spread, f"{passed} of {len(values)} seeds"]
        else:
            cells = ["", "", "not made"]
        rows.append([*point, *cells, DECISION_WORDS[decision]])
    return markdown_table([escape_markdown(h) for h in head], rows)


def _caption(check_map: CheckMap, grid: Grid, n_seeds: int, paper: Mapping[str, float]) -> str:
    if len(grid.axes) == 1:
        drawn = (
            f"The median over the {n_seeds} seeds (filled where the check holds, open where it fails, "
            "grey where undecided), their range (band) and each seed's value (faint points); dashed, "
            "the required value; shaded, the brackets of its boundaries; below, the share of seeds at "
            "which it passes."
        )
    else:
        drawn = (
            f"The median over the {n_seeds} seeds; hatched, the cells where the check fails (dotted: "
            "undecided); in each cell, the seeds at which it passes; orange, its boundaries (dashed "
            "across undecided cells)."
        )
    if setting := paper_words(grid, paper):
        drawn = f"{drawn} {escape_markdown(setting)}"
    return (
        f"{escape_markdown(check_map.label)} {escape_markdown_but_math(check_map.what)}, "
        f"required {escape_markdown(check_map.required)} "
        f"({check_map.basis}). {drawn} It {escape_markdown(where_it_holds(check_map, grid))}; "
        f"{escape_markdown(boundary_summary(check_map, grid))}."
    )


def _map_section(index: int, check_map: CheckMap, results: GridResults, figure: str | None) -> list[str]:
    lines = [
        f"## {index}. {escape_markdown(check_map.label)}: {escape_markdown_but_math(check_map.what)}",
        "",
    ]
    caption = _caption(check_map, results.grid, len(results.seeds), results.paper)
    if figure:
        alt = (
            f"Map of {check_map.label} {check_map.what} over "
            f"{' and '.join(a.name for a in results.grid.axes)}: {where_it_holds(check_map, results.grid)}"
        )
        lines += [
            f"```{{figure}} {figure}",
            f":name: map-{check_map.slug}",
            f":alt: {alt.replace(chr(10), ' ')}",
            "",
            caption,
            "```",
        ]
    else:
        lines.append(caption)
    return [*lines, "", _point_table(check_map, results.grid), ""]


def _summary_table(results: GridResults, maps: Sequence[CheckMap]) -> str:
    """The table summing up every map: its check, what it requires, where it holds, its boundary."""
    rows = [
        [
            escape_markdown(m.label),
            escape_markdown_but_math(m.what),
            *(
                escape_markdown(cell)
                for cell in (m.required, where_it_holds(m, results.grid), boundary_summary(m, results.grid))
            ),
        ]
        for m in maps
    ]
    return markdown_table(["claim", "what", "required", "where it holds", "boundary"], rows)


def map_page(results: GridResults, figures: Mapping[str, str], maps: Sequence[CheckMap] | None = None) -> str:
    """The MyST page of ``results``' maps: what was explored, a summary table, then each map.

    ``figures``: each map's figure (a path relative to the page) by its :attr:`CheckMap.slug`;
    a map without one is shown by its caption and numbers. ``maps``: the results'
    :func:`~ntpnb.explore._decide.check_maps`, where the caller has them already.
    """
    maps = check_maps(results) if maps is None else maps
    lines = [f"# {escape_markdown(_heading(results))}", "", _explored(results), "", DECISION_RULE, ""]
    if results.notes:
        lines += ["Runs not counted (their points are undecided):", ""]
        lines += [f"- {escape_markdown(note)}" for note in results.notes] + [""]
    if not maps:
        lines += ["No run of this grid made a check.", ""]
        return "\n".join(lines)
    lines += [_summary_table(results, maps), ""]
    if budget := budget_notes(results, maps):
        lines += ["Where a failure may be the budget, not the claim:", ""]
        lines += [f"- {escape_markdown_but_math(note)}" for note in budget] + [""]
    for index, m in enumerate(maps, 1):
        lines += _map_section(index, m, results, figures.get(m.slug))
    return "\n".join(lines)
