"""The figure of a check's map, in the book's style (:func:`draw_map`).

A line: the median over the seeds with their range and every seed's value, the required value,
the pass share below; a heatmap: the median, failing cells hatched, the boundaries drawn between
cells. :mod:`._folder` writes every map's figure.

A map names what it shows as a reader reads it (:class:`MapLabels`): its panel's title in words,
each axis by its quantity in math, the paper's own setting and the bounds it states marked
(:class:`Mark`), extrapolated points drawn as such, and a legend that says what its band,
markers and lines mean. On a log scale a value at or below zero, which the scale cannot show, is
drawn at the axis and said so, never dropped.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import median
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .._digits import format_bound
from ..chapter._plotting import COLORS, MIN_TEXT_POINTS, PHONE_WIDTH, use_style
from ..evidence._vocabulary import DECISION_WORDS
from ._boundaries import Boundary
from ._decide import CheckMap
from ._grid import Axis, Grid, paper_settings
from ._results import PointKey

if TYPE_CHECKING:  # matplotlib is imported by the functions that draw, not with the package
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


#: The width of a map's figure, in inches: shown at its own size it is legible on a phone.
MAP_WIDTH: float = PHONE_WIDTH
#: Where a check holds, fails, or is undecided: marker face colours of a line's points.
_DECISION_FACE = {True: COLORS[0], False: "white", None: "0.75"}
#: The marker of a measured point, of an extrapolated one, and of one drawn at a log axis.
_MEASURED, _EXTRAPOLATED, _AT_AXIS = "o", "^", "v"
#: What the legend says of a value a log scale cannot show.
AT_AXIS_NOTE = "≤ 0, drawn at the axis"
#: The legend's entries for the seeds, the decisions and the boundaries (:func:`_legend_handles`),
#: each with what it means in a caption (:func:`legend_words`), in the order a caption says them.
LEGEND_WORDS: Mapping[str, str] = MappingProxyType(
    {
        "median of seeds": "the line is the median over the seeds",
        "range of seeds": "the band, their range",
        "each seed": "a faint point, one seed's value",
        DECISION_WORDS[True]: f"a filled marker, the map's requirement {DECISION_WORDS[True]} at that point",
        DECISION_WORDS[False]: f"an open marker, it {DECISION_WORDS[False]} there",
        DECISION_WORDS[None]: f"a grey marker, {DECISION_WORDS[None]} (the seeds' runs do not decide it)",
        "extrapolated": "a triangle, a value extrapolated beyond the runs",
        AT_AXIS_NOTE: "a triangle on the axis, a value at or below zero, which the log scale cannot show",
        "decision changes": "a grey span, where the decision changes between the grid points on its sides",
    }
)
#: The legend's words for a required value (``"required > 0.9"``): its line dashed, or a band.
REQUIRED_PREFIX = "required"


@dataclass(frozen=True)
class Mark:
    """A labelled value of a map's parameter: the paper's own setting, or a bound it states."""

    #: Where, in the parameter's units.
    at: float
    #: What it is, as the legend says it (math in ``$...$``).
    label: str
    #: The paper's own setting (drawn solid black); else a bound or a reference (dotted).
    paper: bool = False
    #: The axis it marks on a heatmap ("" : the first; a line has one).
    axis: str = ""
    #: The line style of a bound (``":"``, ``"-."``, ``"--"``): two bounds on one map told apart.
    ls: str = ":"

    def style(self) -> dict[str, Any]:
        """How its line is drawn: the paper's setting solid black, a bound in its style."""
        return (
            {"color": "k", "ls": "-", "lw": 1.4}
            if self.paper
            else {"color": COLORS[5], "ls": self.ls, "lw": 1.4}
        )


@dataclass(frozen=True)
class MapLabels:
    """How a map's panel names what it shows (:func:`draw_map`): words and math, not check strings.

    Every field is optional: by default a map is titled by its check, its value axis by what the
    check measures and each parameter axis by its name.
    """

    #: The panel's title, in words.
    title: str = ""
    #: The value axis: the quantity in math, e.g. ``r"$\operatorname{corr}(W_K, W^{\rm mm})$"``.
    value: str = ""
    #: Each parameter axis's quantity in math, by its name, e.g. ``{"lr": r"step $\eta$"}``.
    axes: Mapping[str, str] = field(default_factory=dict)
    #: The paper's setting and the bounds it states, each drawn and labelled.
    marks: tuple[Mark, ...] = ()
    #: The points whose values are extrapolated, not measured (drawn as such).
    extrapolated: frozenset[PointKey] = frozenset()
    #: A log value scale (True), a linear one (False), or a log one where the values are positive
    #: and span two decades (None).
    log_values: bool | None = None

    def axis_label(self, axis: Axis) -> str:
        """The label of ``axis``: its quantity in math, else its name."""
        return self.axes.get(axis.name, axis.name)


def paper_marks(grid: Grid, paper: Mapping[str, float]) -> tuple[Mark, ...]:
    """A mark of the paper's setting on each axis where a map draws it (:func:`~._grid.paper_settings`)."""
    return tuple(
        Mark(at, f"the paper's {axis.name} = {format_bound(at)}", paper=True, axis=axis.name)
        for axis, at, drawn in paper_settings(grid, paper)
        if drawn
    )


def _positions(axis: Axis) -> list[float]:
    """Where an axis's values are drawn: the values if numbers, else their places."""
    return [float(v) for v in axis.values] if axis.numeric() else list(range(len(axis.values)))


def _spans_decades(values: Sequence[float]) -> bool:
    finite = [v for v in values if math.isfinite(v)]
    return bool(finite) and min(finite) > 0 and max(finite) / min(finite) >= 100


def _draw_required(ax: Axes, check_map: CheckMap, log_y: bool) -> None:
    """The required value (a line, labelled to 3 digits) or interval (a band, labelled as printed)."""
    target, relation = check_map.target, check_map.relation
    if relation in ("in", "~") or target is None:
        label = f"required {check_map.required.split(',')[0]}"
    else:
        label = f"required {relation} {float(target):.3g}"
    style = {"color": "k", "ls": "--", "lw": 1.2, "label": label}
    if relation == "in" or relation == "~":
        low, high = tuple(target) if relation == "in" else (target - check_map.tol, target + check_map.tol)
        if log_y and low <= 0:
            low = high / 1e3
        ax.axhspan(low, high, color="k", alpha=0.08, label=label)
    elif target is not None and (not log_y or float(target) > 0):
        ax.axhline(float(target), **style)


#: TeX that MathJax reads but matplotlib's mathtext does not, and what mathtext reads for it.
_MATHTEXT = (
    (re.compile(r"\\[lr]Vert\b"), r"\\Vert"),
    (re.compile(r"\\[lr]vert\b"), "|"),
    (re.compile(r"\\(le|ge)\b"), r"\\\1q"),
)
#: A space inside inline math, kept while the text is wrapped (a line never breaks inside math).
_MATH_SPACE = "\x00"


def _plot_text(text: str) -> str:
    """A check's words (their math in ``$...$``, as the book writes it) as matplotlib draws them."""
    for tex, mathtext in _MATHTEXT:
        text = tex.sub(mathtext, text)
    return text


def _wrapped(text: str, width: int = 42) -> str:
    """``text`` in lines of about ``width`` characters, each piece of inline math on one line."""
    parts = _plot_text(text).split("$")
    kept = "$".join(p.replace(" ", _MATH_SPACE) if i % 2 else p for i, p in enumerate(parts))
    lines = textwrap.wrap(kept, width, break_long_words=False, break_on_hyphens=False)
    return "\n".join(lines).replace(_MATH_SPACE, " ")


def fit_title(ax: Axes, width: int = 34) -> None:
    """Wrap the left title of a map's panel (:func:`draw_map`) anew to ``width`` characters.

    ``width``: 34 fits a panel half the page wide at the title's 10 pt.
    """
    title = ax.get_title(loc="left").replace("\n", " ")
    ax.set_title(_wrapped(title, width), loc="left", fontsize=10)


def _draw_line(ax: Axes, check_map: CheckMap, grid: Grid, share_ax: Axes | None, labels: MapLabels) -> None:
    """A map over one axis (:func:`draw_map`): its seeds, points, requirement, boundaries and marks."""
    axis = grid.axes[0]
    xs, keys = _positions(axis), [(v,) for v in axis.values]
    values = [check_map.values[k] for k in keys]
    flat = [v for vs in values for v in vs]
    log_y = _spans_decades(flat) if labels.log_values is None else labels.log_values
    _draw_seeds(ax, xs, values, log_y)
    for x, k in zip(xs, keys, strict=True):
        if check_map.values[k]:
            _draw_point(
                ax, x, median(check_map.values[k]), check_map.holds[k], k in labels.extrapolated, log_y
            )
    _draw_required(ax, check_map, log_y)
    panels = [ax] if share_ax is None else [ax, share_ax]
    for b in check_map.boundaries:
        low, high = (xs[axis.values.index(v)] for v in (b.lower, b.upper))
        for panel in panels:
            panel.axvspan(low, high, color="0.5", alpha=0.15, lw=0)
    for mark in labels.marks:
        for panel in panels:
            _draw_mark(panel, mark, mark.at, label=panel is ax)
    ax.set(ylabel=labels.value or _wrapped(check_map.what, 30), yscale="log" if log_y else "linear")
    legend = {
        "handles": _legend_handles(ax, check_map, keys, labels, log_y),
        "ncol": 2,
        "fontsize": MIN_TEXT_POINTS,
    }
    if share_ax is not None:  # its own figure: the legend under it, off its data
        ax.figure.legend(loc="outside lower center", **legend)
    else:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), **legend)
    if share_ax is not None:
        share = [check_map.share[k] for k in keys]
        share_ax.plot(xs, share, "s-", color=COLORS[1], ms=4)
        share_ax.set(ylim=(-0.08, 1.08), yticks=[0, 1], ylabel="share of\nseeds passing")
    bottom = share_ax if share_ax is not None else ax
    bottom.set_xlabel(labels.axis_label(axis))
    for panel in panels:
        if axis.log and axis.numeric() and min(xs) > 0:
            panel.set_xscale("log")
        if not axis.numeric():
            panel.set_xticks(xs, axis.texts())


def _draw_point(
    ax: Axes, x: float, value: float, holds: bool | None, extrapolated: bool, log_y: bool
) -> None:
    """A point's median: its face says the decision, its shape measured or extrapolated.

    On a log scale a median at or below zero is drawn at the bottom of the axis (pointing down).
    """
    face = _DECISION_FACE[holds]
    style = {"ms": 6, "mfc": face, "mec": COLORS[0], "zorder": 3, "clip_on": False}
    if log_y and value <= 0:
        ax.plot([x], [0.0], _AT_AXIS, transform=ax.get_xaxis_transform(), **style)
    else:
        ax.plot([x], [value], _EXTRAPOLATED if extrapolated else _MEASURED, **style)


def _draw_mark(ax: Axes, mark: Mark, at: float, label: bool) -> None:
    """A vertical line at ``at``: the paper's setting solid black, a bound dotted; labelled once."""
    ax.axvline(at, label=mark.label if label else None, zorder=2.5, **mark.style())


def _legend_handles(
    ax: Axes, check_map: CheckMap, keys: Sequence[PointKey], labels: MapLabels, log_y: bool
) -> list[Any]:
    """What the legend explains: the median, band and seeds, each marker drawn, then the lines drawn."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    made = [k for k in keys if check_map.values[k]]
    seeds = max((len(check_map.values[k]) for k in made), default=0)
    handles: list[Any] = [Line2D([], [], color=COLORS[0], label="median of seeds")]
    if seeds > 1:
        handles.append(Patch(color=COLORS[0], alpha=0.2, lw=0, label="range of seeds"))
        handles.append(Line2D([], [], ls="", marker=".", color=COLORS[0], alpha=0.5, label="each seed"))
    point = {"ls": "", "ms": 6, "mec": COLORS[0]}
    for decision in dict.fromkeys(check_map.holds[k] for k in made):
        face = _DECISION_FACE[decision]
        handles.append(Line2D([], [], marker=_MEASURED, mfc=face, label=DECISION_WORDS[decision], **point))
    if any(k in labels.extrapolated for k in made):
        handles.append(Line2D([], [], marker=_EXTRAPOLATED, mfc="0.9", label="extrapolated", **point))
    if log_y and any(median(check_map.values[k]) <= 0 for k in made):
        handles.append(Line2D([], [], marker=_AT_AXIS, mfc="0.9", label=AT_AXIS_NOTE, **point))
    if check_map.boundaries:
        handles.append(Patch(color="0.5", alpha=0.15, lw=0, label="decision changes"))
    drawn, texts = ax.get_legend_handles_labels()
    return handles + [h for h, text in zip(drawn, texts, strict=True) if not text.startswith("_")]


def _draw_seeds(ax: Axes, xs: Sequence[float], values: Sequence[Sequence[float]], log_y: bool) -> None:
    """The seeds' values at each position ``xs``: their range as a band, their median, each as a point.

    On a log scale a value at or below zero is left out of the band, line and points: its
    median's marker is drawn at the axis (:func:`_draw_point`), and the legend says so.
    """
    drawn = [(x, vs) for x, vs in zip(xs, values, strict=True) if vs]
    if not drawn:
        return
    color = COLORS[0]
    dx, dv = zip(*drawn, strict=True)

    def shown(v: float) -> float:
        return math.nan if log_y and v <= 0 else v

    low, high = [shown(min(v)) for v in dv], [shown(max(v)) for v in dv]
    ax.fill_between(dx, low, high, color=color, alpha=0.2, lw=0)
    ax.plot(dx, [shown(median(v)) for v in dv], color=color)
    seeds_x = [x for x, vs in drawn for _ in vs]
    ax.scatter(seeds_x, [shown(v) for vs in dv for v in vs], s=10, color=color, alpha=0.35, lw=0)


def _draw_heatmap(ax: Axes, check_map: CheckMap, grid: Grid, labels: MapLabels) -> Any:
    import matplotlib.colors as mcolors
    import numpy as np

    xa, ya = grid.axes
    grid_values = np.full((len(ya.values), len(xa.values)), np.nan)
    for (x, y), vs in check_map.values.items():
        if vs:
            grid_values[ya.values.index(y), xa.values.index(x)] = median(vs)
    finite = grid_values[np.isfinite(grid_values)]
    log_values = _spans_decades(list(finite)) if labels.log_values is None else labels.log_values
    norm = mcolors.LogNorm() if log_values else None
    mesh = ax.pcolormesh(np.ma.masked_invalid(grid_values), norm=norm, cmap="viridis")
    _mark_cells(ax, check_map, xa, ya)
    for b in check_map.boundaries:
        _draw_cell_boundary(ax, b, xa, ya)
    ax.set_xticks(
        [i + 0.5 for i in range(len(xa.values))], xa.texts(), rotation=45 if len(xa.values) > 4 else 0
    )
    ax.set_yticks([j + 0.5 for j in range(len(ya.values))], ya.texts())
    ax.set(xlabel=labels.axis_label(xa), ylabel=labels.axis_label(ya))
    ax.grid(False)
    for mark in labels.marks:
        _draw_cell_mark(ax, mark, xa, ya)
    if labels.marks:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2, fontsize=MIN_TEXT_POINTS)
    return mesh


def _cell_position(axis: Axis, at: float) -> float:
    """Where the value ``at`` lies on a heatmap's axis of cells (interpolated, log if the axis is)."""
    import numpy as np

    values = np.array([float(v) for v in axis.values])
    scale = np.log if axis.log and values.min() > 0 and at > 0 else (lambda v: v)
    return float(np.interp(scale(at), scale(values), np.arange(len(values)))) + 0.5


def _draw_cell_mark(ax: Axes, mark: Mark, xa: Axis, ya: Axis) -> None:
    """A mark on a heatmap: a line across the cells at its value along its axis (:class:`Mark`)."""
    along = ya if mark.axis == ya.name else xa
    if not along.numeric():
        return
    at = _cell_position(along, mark.at)
    if along is xa:
        ax.axvline(at, label=mark.label, **mark.style())
    else:
        ax.axhline(at, label=mark.label, **mark.style())


def _mark_cells(ax: Axes, check_map: CheckMap, xa: Axis, ya: Axis) -> None:
    """Hatch each heatmap cell where the check fails or is undecided; on small grids, write its passes."""
    from matplotlib.patches import Rectangle

    for (x, y), decision in check_map.holds.items():
        i, j = xa.values.index(x), ya.values.index(y)
        if decision is not True:  # fails: hatched; undecided: hatched grey
            hatch, edge = ("///", "white") if decision is False else ("..", "0.4")
            ax.add_patch(Rectangle((i, j), 1, 1, fill=False, hatch=hatch, edgecolor=edge, lw=0))
        n = len(check_map.values[(x, y)])
        if n and len(xa.values) <= 8:
            passed = round(check_map.share[(x, y)] * n)
            ax.text(
                i + 0.5,
                j + 0.5,
                f"{passed}/{n}",
                ha="center",
                va="center",
                fontsize=9.5,
                color="k",
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "alpha": 0.7, "lw": 0},
            )


def _draw_cell_boundary(ax: Axes, boundary: Boundary, xa: Axis, ya: Axis) -> None:
    """A boundary on the heatmap: the cell edges between its bracketing values (dashed if they are apart)."""
    along = xa if boundary.axis == xa.name else ya
    low, high = along.values.index(boundary.lower), along.values.index(boundary.upper)
    ls = "-" if high - low == 1 else "--"
    if boundary.axis == xa.name:
        j = ya.values.index(boundary.fixed[ya.name])
        for edge in range(low + 1, high + 1):
            ax.plot([edge, edge], [j, j + 1], color="#D55E00", lw=2.5, ls=ls)
    else:
        i = xa.values.index(boundary.fixed[xa.name])
        for edge in range(low + 1, high + 1):
            ax.plot([i, i + 1], [edge, edge], color="#D55E00", lw=2.5, ls=ls)


def legend_labels(fig: Figure) -> list[str]:
    """The entries of every legend of ``fig`` (its own and its panels'), each once, in order."""
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes)]
    texts = [text.get_text() for legend in legends if legend is not None for text in legend.get_texts()]
    return list(dict.fromkeys(texts))


def legend_words(fig: Figure) -> str:
    """What each entry of ``fig``'s map legends means, for its caption: one sentence, in the maps' words.

    The seeds, the decisions and the boundaries (:data:`LEGEND_WORDS`, in its order), the required
    value, and the marked settings (the other entries, which name themselves); ``""`` for a figure
    without a legend.
    """
    entries = legend_labels(fig)
    clauses = [words for entry, words in LEGEND_WORDS.items() if entry in entries]
    if any(entry.startswith(REQUIRED_PREFIX) for entry in entries):
        clauses.append("dashed (or a shaded band), the value the map requires")
    if any(entry not in LEGEND_WORDS and not entry.startswith(REQUIRED_PREFIX) for entry in entries):
        clauses.append("the other lines, the settings the legend names (solid black: the paper's own)")
    return f"In the legend, {'; '.join(clauses)}." if clauses else ""


def shared_legend(fig: Figure, ncol: int = 4) -> None:
    """One legend under ``fig`` for all its maps' panels: each entry once, the panels' own removed.

    For a figure of several maps drawn with ``ax`` (:func:`draw_map`), whose legends repeat. At
    most ``ncol`` columns, fewer where the legend would be wider than the figure (a run that
    draws more entries, a value at or below zero say, must not widen the figure past the page).
    """
    entries: dict[str, Any] = {}
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is not None:
            for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True):
                entries.setdefault(text.get_text(), handle)
            legend.remove()
    renderer = fig.canvas.get_renderer()
    for columns in range(min(ncol, max(1, len(entries))), 0, -1):
        shared = fig.legend(  # narrow columns: fewer rows under the maps, within the page's width
            list(entries.values()),
            list(entries),
            loc="outside lower center",
            ncol=columns,
            fontsize=MIN_TEXT_POINTS,
            columnspacing=1.0,
            handlelength=1.8,
        )
        if columns == 1 or shared.get_window_extent(renderer).width <= fig.bbox.width:
            return
        shared.remove()


def draw_map(
    check_map: CheckMap, grid: Grid, ax: Axes | None = None, labels: MapLabels | None = None
) -> Figure:
    """The figure of one check's map, in the book's style (:func:`~ntpnb.chapter._plotting.use_style`).

    Over one axis: the median over the seeds (markers filled where the check holds, open where it
    fails, grey where undecided; a triangle where extrapolated), the seeds' range as a band, each
    seed's value as a faint point, the required value dashed (an interval shaded), the
    boundaries' brackets shaded, the marks of ``labels`` (the paper's setting solid, a bound
    dotted), a legend saying what each means, and below, the share of seeds at which it passes.
    Over two: a heatmap of the median, cells where it fails hatched (undecided: dotted), each
    cell's passing seeds ``k/n``, the boundaries drawn between cells (dashed across undecided
    cells), the marks as lines across the cells. Log axes where the axis is log; a log value
    scale where ``labels`` asks for one, else where the values are positive and span two decades
    or more (a value at or below zero then drawn at the axis).

    Given ``ax``, the map is drawn into it (a line without its share panel); the figure is ``ax``'s.
    ``labels``: the title, the axes' quantities and the marks (:class:`MapLabels`).
    """
    import matplotlib.pyplot as plt

    use_style()
    labels = MapLabels() if labels is None else labels
    heat = len(grid.axes) == 2
    share_ax = None
    if ax is None:
        if heat:
            fig, ax = plt.subplots(figsize=(MAP_WIDTH, MAP_WIDTH * 1.05))
        else:
            fig, (ax, share_ax) = plt.subplots(
                2, 1, figsize=(MAP_WIDTH, 3.9), sharex=True, gridspec_kw={"height_ratios": (3, 1)}
            )
    fig = ax.figure
    if heat:
        mesh = _draw_heatmap(ax, check_map, grid, labels)
        value = f"{labels.value}, median over the seeds" if labels.value else "median value"
        fig.colorbar(mesh, ax=ax, location="top", label=value, shrink=0.9)
    else:
        _draw_line(ax, check_map, grid, share_ax, labels)
    if share_ax is not None:  # its own figure: room for the legend below
        width, height = fig.get_size_inches()
        fig.set_size_inches(width, height + 0.2 * math.ceil(len(fig.legends[0].get_texts()) / 2))
    title = labels.title or f"{check_map.label} {check_map.what}"
    ax.set_title(_wrapped(title), loc="left", fontsize=10)
    return fig
