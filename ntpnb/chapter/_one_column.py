"""A figure's panels re-laid in one column, for a phone: the same axes, drawn again narrower.

:func:`one_column` moves each panel of a figure laid out on one grid (``plt.subplots``,
``plt.subplot_mosaic``, ``fig.add_gridspec``) to a row of its own, in reading order, in a
figure of the width given; the text keeps its size in points. Nothing is re-plotted: the axes,
their data, legends, colour bars and twins move as they are. What the layout cannot move (axes
placed by hand, nested grids, subfigures) is named instead (:class:`OneColumnError`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # matplotlib is imported by the functions that draw, not with the package
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.gridspec import SubplotSpec
    from matplotlib.legend import Legend
    from matplotlib.text import Text

#: The space, in inches, kept around a panel that only holds a legend (an axes turned off).
_LEGEND_ROOM = 0.25
#: The part of the figure's width that its title and a legend as wide as the figure may take.
_ROOM = 0.97
#: The margins, in inches, that constrained layout keeps either side of a column of panels.
_LAYOUT_PAD = 0.1
#: The tallest a panel's box may be, over its width, in the column (a free aspect; 4:5): stacked
#: panels read as a laptop's, without the page growing by a screen a panel.
TALLEST = 0.8
#: The largest part of its panel's area a legend may cover in the one-column layout.
CROWDED = 0.25


class OneColumnError(ValueError):
    """A figure whose panels :func:`one_column` cannot move: the message says why."""


@dataclass(frozen=True)
class _Cell:
    """A cell of the figure's grid and the axes drawn in it (twins share a cell)."""

    rows: range
    cols: range
    axes: tuple[Axes, ...]


def _cells(fig: Figure) -> list[_Cell]:
    """The cells of ``fig``'s one grid in reading order (by row, then column).

    Raises
    ------
    OneColumnError
        If the figure has subfigures, an axes placed by hand, or more than one grid.
    """
    if fig.subfigs:
        raise OneColumnError("it is made of subfigures")
    grids, cells = set(), {}
    for ax in fig.axes:
        spec = ax.get_subplotspec()
        if spec is None:
            if _colorbar_parents(ax):
                continue  # a colour bar the layout places beside its parent
            raise OneColumnError(f"an axes is placed by hand ({ax.get_label() or 'unlabelled'})")
        grids.add(id(spec.get_gridspec()))
        if spec.get_gridspec() is not spec.get_topmost_subplotspec().get_gridspec():
            raise OneColumnError("a panel sits in a nested grid")
        key = (spec.rowspan.start, spec.colspan.start, spec.rowspan.stop, spec.colspan.stop)
        cells.setdefault(key, []).append(ax)
    if len(grids) > 1:
        raise OneColumnError(f"its axes lie on {len(grids)} grids")
    ordered = sorted(cells)
    return [_Cell(range(k[0], k[2]), range(k[1], k[3]), tuple(cells[k])) for k in ordered]


def _cell_size(spec: SubplotSpec, rows: range, cols: range, size: tuple[float, float]) -> tuple[float, float]:
    """The width and height, in inches, of the cell ``rows`` x ``cols`` of ``spec``'s grid.

    ``size`` is the size of the grid, in inches.
    """
    grid = spec.get_gridspec()
    heights, widths = grid.get_height_ratios(), grid.get_width_ratios()
    heights = heights if heights is not None else [1.0] * grid.nrows
    widths = widths if widths is not None else [1.0] * grid.ncols
    w = size[0] * sum(widths[c] for c in cols) / sum(widths)
    h = size[1] * sum(heights[r] for r in rows) / sum(heights)
    return w, h


def _only_a_legend(ax: Axes) -> bool:
    """Whether ``ax`` is turned off and holds nothing but a legend (a panel lent to a legend)."""
    drawn = ax.lines or ax.collections or ax.patches or ax.images or ax.texts or ax.tables
    return not ax.axison and not drawn and ax.get_legend() is not None


def row_height(cell_width: float, cell_height: float, width: float) -> float:
    """The height of a panel ``cell_width`` x ``cell_height`` in inches given a row ``width`` wide.

    The height scales with the square root of the width's change: a panel that spanned the whole
    page keeps 70% of its height at half the width (a full-width panel squeezed to its aspect
    would leave no room between its ticks), one as wide as the row keeps its shape. In
    :func:`one_column` a panel's box is at most :data:`TALLEST` times as tall as it is wide.
    """
    return cell_height * math.sqrt(width / cell_width)


def _show_shared_labels(axes: list[Axes]) -> None:
    """Show the tick labels a shared axis hid on inner panels, and its label where a panel has none.

    Stacked in one column, no panel shares an edge with the one it shared an axis with.
    """
    for ax in axes:
        for axis, groups, side in (
            (ax.xaxis, ax.get_shared_x_axes(), "labelbottom"),
            (ax.yaxis, ax.get_shared_y_axes(), "labelleft"),
        ):
            siblings = [a for a in groups.get_siblings(ax) if a is not ax]
            if not siblings:
                continue
            ax.tick_params(axis=axis.axis_name, which="both", **{side: True})
            if not axis.get_label_text():
                labels = [(s.xaxis if axis.axis_name == "x" else s.yaxis).get_label_text() for s in siblings]
                axis.set_label_text(next((label for label in labels if label), ""))


#: A word of a text: characters up to a space, a math span ``$...$`` whole, spaces and all.
_WORD = re.compile(r"(?:[^\s$]|\$[^$]*\$|\$)+")


def wrap_to(text: Text, width: float, renderer) -> None:
    """Break ``text`` into lines at most ``width`` display pixels wide, between words (never in math).

    A single word wider than ``width`` keeps its line.
    """
    words = _WORD.findall(" ".join(text.get_text().split("\n")))
    if not words or text.get_window_extent(renderer).width <= width:
        return
    lines: list[str] = []
    for word in words:
        candidate = f"{lines[-1]} {word}" if lines else word
        text.set_text(candidate)
        if lines and text.get_window_extent(renderer).width <= width:
            lines[-1] = candidate
        else:
            lines.append(word)
    text.set_text("\n".join(lines))


def _set_columns(legend: Legend, ncols: int) -> None:
    """Rebuild ``legend`` in ``ncols`` columns: same entries, place, title and label colours.

    Matplotlib lays a legend's entries out once, when it is made (``set_ncols`` alone does not
    move them): the entries are laid out again from the legend's own handles.
    """
    title = legend.get_title()
    title_text, title_prop = title.get_text(), title.get_fontproperties()
    labels = [(text.get_text(), text.get_color()) for text in legend.texts]
    legend.set_ncols(ncols)
    legend._init_legend_box(legend.legend_handles, [label for label, _ in labels])
    legend._legend_box.set_offset(legend._findoffset)
    legend.set_title(title_text, prop=title_prop)
    for text, (_, color) in zip(legend.texts, labels, strict=True):
        text.set_color(color)


def fit_legend(legend: Legend, width: float, renderer, wrap: bool = True) -> None:
    """Make ``legend`` at most ``width`` display pixels wide: fewer columns, then its labels wrapped.

    A label wraps between words (:func:`wrap_to`; unless ``wrap`` is false); a single word wider
    than the room stays.
    """
    ncols = legend._ncols
    while ncols > 1 and legend.get_window_extent(renderer).width > width:
        ncols -= 1
        _set_columns(legend, ncols)
    extent = legend.get_window_extent(renderer).width
    if wrap and extent > width and legend.texts:
        widest = max(text.get_window_extent(renderer).width for text in legend.texts)
        for text in legend.texts:
            wrap_to(text, widest - (extent - width), renderer)


def _crowds(legend: Legend, box: tuple[float, float], renderer) -> bool:
    """Whether ``legend`` is wider than its panel's ``box`` (pixels) or covers over :data:`CROWDED` of it."""
    own = legend.get_window_extent(renderer)
    return own.width > box[0] or own.width * own.height > CROWDED * box[0] * box[1]


def _legend_height(legend: Legend, renderer) -> float:
    """The height, in inches, of the row of a panel lent to ``legend``."""
    return legend.get_window_extent(renderer).height / legend.get_figure().dpi + _LEGEND_ROOM


def _legend_panel(ax: Axes, legend: Legend, renderer) -> Axes:
    """Move ``ax``'s ``legend`` to a panel of its own (an axes turned off), fitted to the figure's width.

    Its entries are the panel's own artists where the legend shows them all (``ax.legend()``),
    else copies of the legend's handles. The new panel shares ``ax``'s place until it is placed.
    """
    fig = ax.get_figure()
    labels = [text.get_text() for text in legend.texts]
    handles, own = ax.get_legend_handles_labels()
    if own != labels:
        handles = legend.legend_handles
    title = legend.get_title().get_text() or None
    ncols, fontsize = legend._ncols, legend._fontsize
    legend.remove()
    holder = fig.add_subplot(ax.get_subplotspec())
    holder.axis("off")
    moved = holder.legend(handles, labels, loc="center", ncols=ncols, fontsize=fontsize, title=title)
    fit_legend(moved, _ROOM * fig.bbox.width, renderer)
    return holder


_Row = tuple[list["Axes"], float]  # the axes drawn in a row of the column, and its height in inches


def _fit_legends(fig: Figure, rows: list[_Row], boxes: list[tuple[float, float]], renderer) -> list[_Row]:
    """Fit each legend to the room it has; return the rows with those a legend needs.

    ``boxes`` is the size, in pixels, each row's panels will have. A figure legend, or a panel
    lent to a legend, fits the figure's width (:func:`fit_legend`). An axes legend keeps the
    columns that fit its panel; one still wider, or crowding the panel (:func:`_crowds`), moves
    to a row of its own under the panel (:func:`_legend_panel`).
    """
    fitted = []
    for (axes, height), box in zip(rows, boxes, strict=True):
        if len(axes) == 1 and _only_a_legend(axes[0]):
            fit_legend(axes[0].get_legend(), _ROOM * fig.bbox.width, renderer)
            fitted.append((axes, _legend_height(axes[0].get_legend(), renderer)))
            continue
        fitted.append((axes, height))
        for ax in axes:
            legend = ax.get_legend()
            if legend is None or not ax.axison:
                continue
            fit_legend(legend, box[0], renderer, wrap=False)
            if _crowds(legend, box, renderer):
                holder = _legend_panel(ax, legend, renderer)
                fitted.append(([holder], _legend_height(holder.get_legend(), renderer)))
    for legend in fig.legends:
        fit_legend(legend, _ROOM * fig.bbox.width, renderer)
    return fitted


def _place(fig: Figure, rows: list[_Row]) -> None:
    """Put each row's axes in its row of a one-column grid of ``fig``, the rows as tall as said."""
    from matplotlib.gridspec import GridSpec

    grid = GridSpec(len(rows), 1, figure=fig, height_ratios=[height for _, height in rows])
    for i, (axes, _) in enumerate(rows):
        for ax in axes:
            ax.set_subplotspec(grid[i, 0])


def _chrome_height(fig: Figure, renderer) -> float:
    """The height, in inches, of the figure's title and legends: what is not its grid."""
    parts = [fig._suptitle] if fig._suptitle is not None and fig._suptitle.get_text() else []
    parts += [legend for legend in fig.legends if legend.get_visible()]
    return sum(p.get_window_extent(renderer).height for p in parts) / fig.dpi


def _colorbar_parents(ax: Axes) -> list[Axes]:
    """The axes that colour bar ``ax`` stands beside (none if ``ax`` is no colour bar)."""
    info = getattr(ax, "_colorbar_info", None)
    return list(info["parents"]) if info else []


@dataclass(frozen=True)
class _Drawn:
    """How a cell's panels were last drawn, in inches: their box, and the room their decorations take."""

    width: float
    height: float
    extra_width: float  # tick labels, axis labels, colour bars beside the box
    extra_height: float  # tick labels, axis labels and titles above and below it


def _drawn(axes: tuple[Axes, ...], renderer) -> _Drawn:
    """How ``axes`` (one cell's, with their colour bars) were last drawn."""
    from matplotlib.transforms import Bbox

    fig = axes[0].get_figure()
    bars = [a for a in fig.axes if any(p in axes for p in _colorbar_parents(a))]
    whole = Bbox.union([a.get_tightbbox(renderer) for a in [*axes, *bars]])
    box = Bbox.union([a.get_window_extent(renderer) for a in axes])
    dpi = fig.dpi
    return _Drawn(
        box.width / dpi, box.height / dpi, (whole.width - box.width) / dpi, (whole.height - box.height) / dpi
    )


def _drawn_height(drawn: _Drawn, width: float) -> float:
    """The height, in inches, of a cell of panels with a fixed aspect, drawn ``width`` inches wide.

    Their decorations keep their size, the box its aspect.
    """
    room = max(width - drawn.extra_width, 0.25 * width)  # the box's width once the decorations are set
    return drawn.extra_height + drawn.height * room / drawn.width


def _heights(cells: list[_Cell], drawn: list[_Drawn], grid: tuple[float, float], width: float) -> list[float]:
    """The height of each cell's row, in inches, in a column ``width`` wide (see :func:`one_column`).

    ``drawn``: how each cell was drawn; ``grid``: the size of the grid, in inches.
    """
    heights = []
    for cell, how in zip(cells, drawn, strict=True):
        first = cell.axes[0]
        if len(cell.axes) == 1 and _only_a_legend(first):
            heights.append(_legend_height(first.get_legend(), first.get_figure().canvas.get_renderer()))
        elif any(ax.get_aspect() != "auto" for ax in cell.axes):
            heights.append(_drawn_height(how, width))
        else:
            w, h = _cell_size(first.get_subplotspec(), cell.rows, cell.cols, grid)
            box_width = width - max(d.extra_width for d in drawn) - _LAYOUT_PAD
            heights.append(min(row_height(w, h, width), how.extra_height + TALLEST * box_width))
    return heights


def one_column(fig: Figure, width: float) -> None:
    """Re-lay ``fig`` in place as one column of its panels, ``width`` inches wide, under constrained layout.

    ``fig`` must have been drawn (saved) as it is: its drawn sizes set the new ones. Each cell of
    the figure's grid becomes a row, in reading order, ``width`` wide and :func:`row_height`
    tall (its box at most :data:`TALLEST` as tall as wide); a panel with a fixed aspect keeps
    it, a panel that only holds a legend is as tall as the legend. Shared axes show their own
    tick labels; the title and axes titles wrap to the new width; legends fit, a crowding one
    under its panel (:func:`_fit_legends`). Where the panels' boxes will be is told from their
    decorations as last drawn, not drawn again.

    Raises
    ------
    OneColumnError
        If the figure has no axes on a grid, or axes :func:`_cells` cannot move.
    """
    cells = _cells(fig)
    if not cells:
        raise OneColumnError("it has no axes on a grid")
    renderer = fig.canvas.get_renderer()
    drawn = [_drawn(cell.axes, renderer) for cell in cells]
    old_width, old_height = fig.get_size_inches()
    chrome = _chrome_height(fig, renderer)
    heights = _heights(cells, drawn, (old_width, max(old_height - chrome, 0.1 * old_height)), width)
    rows = [(list(cell.axes), height) for cell, height in zip(cells, heights, strict=True)]
    _show_shared_labels([ax for cell in cells for ax in cell.axes])
    if type(fig.get_layout_engine()).__name__ != "ConstrainedLayoutEngine":
        fig.set_layout_engine("constrained")
    fig.set_size_inches(width, sum(heights) + chrome)
    # one column: every box as wide as the widest decorations leave room for
    box_width = (width - max(how.extra_width for how in drawn) - _LAYOUT_PAD) * fig.dpi
    boxes = [
        (box_width, (height - how.extra_height) * fig.dpi) for height, how in zip(heights, drawn, strict=True)
    ]
    if fig._suptitle is not None:
        wrap_to(fig._suptitle, _ROOM * fig.bbox.width, renderer)
    for cell in cells:
        for ax in cell.axes:
            wrap_to(ax.title, max(box_width, 0.5 * fig.bbox.width), renderer)
    rows = _fit_legends(fig, rows, boxes, renderer)
    _place(fig, rows)
    fig.set_size_inches(width, sum(height for _, height in rows) + _chrome_height(fig, renderer))
    if any(ax.get_aspect() != "auto" for ax in fig.axes):
        # constrained layout sizes a fixed-aspect panel's margins from its box as last drawn: set
        # the boxes in this layout once, so that drawing lays it out right the first time
        fig.get_layout_engine().execute(fig)
        for ax in fig.axes:
            ax.apply_aspect()
