"""A map's figure as a reader reads it (ntpnb.explore._draw): the paper's setting, math, a legend."""

from __future__ import annotations

import math

import matplotlib
import pytest

from ntpnb.explore import (
    Axis,
    Grid,
    MapLabels,
    Mark,
    check_maps,
    draw_map,
    point_check,
    run_grid,
    shared_legend,
)
from ntpnb.explore._draw import AT_AXIS_NOTE, paper_marks

matplotlib.use("Agg")

STEPS = Grid((Axis("lr", (0.1, 1.0, 10.0, 100.0), log=True),))
LABELS = MapLabels(
    title="The norm's growth per step",
    value=r"$\|W_k\| / k$",
    axes={"lr": r"step $\eta$"},
    marks=(Mark(0.5, "the paper's step", paper=True), Mark(14.7, r"its bound $1/(2L)$")),
    extrapolated=frozenset({(10.0,)}),
    log_values=True,
)


def growth(point, seed):
    """A check whose value is 0 at the largest step (a log scale cannot show it)."""
    value = 0.0 if point["lr"] == 100.0 else point["lr"] * (1 + seed / 10)
    return [point_check("A2", r"$\lVert W_k\rVert / k$ after the budget", value, "<", 2.0)]


@pytest.fixture
def figure():
    import matplotlib.pyplot as plt

    (check_map,) = check_maps(run_grid(STEPS, (0, 1, 2), growth))
    fig = draw_map(check_map, STEPS, labels=LABELS)
    yield fig
    plt.close(fig)


def legend_texts(fig) -> list[str]:
    legends = [*fig.legends, *(a.get_legend() for a in fig.axes if a.get_legend())]
    return [t.get_text() for legend in legends for t in legend.get_texts()]


def vertical_lines(ax, labelled: bool = True) -> dict[str, float]:
    """The vertical lines of ``ax`` (x constant from the bottom to the top of the axes), by label.

    ``labelled``: only those the legend names.
    """
    found = {}
    for line in ax.get_lines():
        xs, ys = line.get_xdata(), line.get_ydata()
        named = not line.get_label().startswith("_")
        if len(xs) == 2 and xs[0] == xs[1] and list(ys) == [0, 1] and (named or not labelled):
            found[line.get_label()] = float(xs[0])
    return found


def test_a_map_marks_the_papers_setting_and_its_bound_on_every_panel(figure):
    top, share = figure.axes[:2]
    lines = vertical_lines(top)
    assert lines["the paper's step"] == 0.5 and lines[r"its bound $1/(2L)$"] == 14.7
    assert sorted(vertical_lines(share, labelled=False).values()) == [
        0.5,
        14.7,
    ]  # the share panel marks them too
    paper = next(line for line in top.get_lines() if line.get_label() == "the paper's step")
    assert paper.get_linestyle() == "-" and paper.get_color() == "k"  # solid black: the paper's


def test_a_map_names_its_axes_by_the_quantity_in_math_and_its_panel_in_words(figure):
    top, share = figure.axes[:2]
    assert share.get_xlabel() == r"step $\eta$" and top.get_ylabel() == r"$\|W_k\| / k$"
    assert top.get_title(loc="left") == "The norm's growth per step"
    assert "value" not in top.get_ylabel() and "lr" not in share.get_xlabel()


def test_a_maps_legend_explains_its_band_markers_and_lines(figure):
    texts = legend_texts(figure)
    for entry in ("median of seeds", "range of seeds", "each seed", "holds", "fails", "extrapolated"):
        assert entry in texts, texts
    assert "required < 2" in texts and "the paper's step" in texts and "decision changes" in texts


def test_extrapolated_points_are_drawn_as_such_and_a_zero_on_a_log_axis_at_the_axis(figure):
    top = figure.axes[0]
    points = [line for line in top.get_lines() if line.get_marker() in ("o", "^", "v")]
    assert len(points) == 4  # every point drawn: none dropped
    by_marker = {line.get_marker(): line for line in points}
    assert float(by_marker["^"].get_xdata()[0]) == 10.0  # extrapolated
    at_axis = by_marker["v"]
    assert float(at_axis.get_xdata()[0]) == 100.0 and at_axis.get_transform() == top.get_xaxis_transform()
    assert AT_AXIS_NOTE in legend_texts(figure)
    assert top.get_yscale() == "log"
    assert all(math.isfinite(float(v)) for line in points for v in line.get_ydata())


def test_a_map_without_labels_names_its_value_by_the_check_not_value():
    import matplotlib.pyplot as plt

    (check_map,) = check_maps(run_grid(STEPS, (0, 1), growth))
    fig = draw_map(check_map, STEPS)
    try:
        # the check's math as matplotlib's mathtext reads it (no \lVert), each piece on one line
        assert fig.axes[0].get_ylabel() == "$\\Vert W_k\\Vert / k$ after the\nbudget"
        title = fig.axes[0].get_title(loc="left")
        assert all(line.count("$") % 2 == 0 for line in title.splitlines()), title
        fig.canvas.draw()  # the math is laid out: mathtext reads all of it
        assert "≤ 0, drawn at the axis" not in legend_texts(fig)  # a linear scale shows 0
        assert not [line for line in fig.axes[0].get_lines() if line.get_marker() == "v"]
    finally:
        plt.close(fig)


def test_a_heatmap_marks_the_papers_setting_along_its_axis_and_names_its_axes():
    import matplotlib.pyplot as plt

    grid = Grid((Axis("lr", (0.1, 1.0, 10.0), log=True), Axis("m", (2, 4, 8))))
    results = run_grid(grid, (0,), lambda p, s: [point_check("A2", "gap", p["lr"] * p["m"], "<", 5.0)])
    labels = MapLabels(
        axes={"lr": r"$\eta$", "m": "$m$"},
        marks=(Mark(1.0, "the paper's step", paper=True), Mark(4, "the paper's $m$", paper=True, axis="m")),
    )
    fig = draw_map(check_maps(results)[0], grid, labels=labels)
    try:
        ax = fig.axes[0]
        assert ax.get_xlabel() == r"$\eta$" and ax.get_ylabel() == "$m$"
        assert vertical_lines(ax) == {"the paper's step": 1.5}  # the middle cell's centre
        horizontal = [line for line in ax.get_lines() if line.get_label() == "the paper's $m$"]
        assert [float(y) for y in horizontal[0].get_ydata()] == [1.5, 1.5]
        assert "the paper's step" in legend_texts(fig)
    finally:
        plt.close(fig)


def test_the_papers_setting_is_marked_on_a_line_and_inside_a_heatmaps_grid_only():
    line = paper_marks(STEPS, {"lr": 0.5, "m": 3})  # m: no axis of this grid
    assert line == (Mark(0.5, "the paper's lr = 0.5", paper=True, axis="lr"),)
    assert paper_marks(STEPS, {"lr": 1000.0})[0].at == 1000.0  # a line's axis reaches out to it
    heat = Grid(
        (
            Axis("lr", (0.1, 1.0, 10.0), log=True),
            Axis("m", (2, 4, 8)),
        )
    )
    assert [m.axis for m in paper_marks(heat, {"lr": 1000.0, "m": 4})] == ["m"]
    assert paper_marks(Grid((Axis("loss", ("ce", "sq")),)), {"loss": 1.0}) == ()


def test_shared_legend_puts_each_entry_once_under_a_figure_of_several_maps():
    import matplotlib.pyplot as plt

    (check_map,) = check_maps(run_grid(STEPS, (0, 1, 2), growth))
    fig, axes = plt.subplots(1, 2)
    try:
        for ax in axes:
            draw_map(check_map, STEPS, ax=ax, labels=LABELS)
        shared_legend(fig)
        assert [ax.get_legend() for ax in axes] == [None, None] and len(fig.legends) == 1
        texts = legend_texts(fig)
        assert len(texts) == len(set(texts)) and "the paper's step" in texts and "holds" in texts
    finally:
        plt.close(fig)


def test_shared_legend_takes_fewer_columns_rather_than_widen_the_figure():
    import matplotlib.pyplot as plt

    from ntpnb.chapter import PAGE_WIDTH

    fig, axes = plt.subplots(1, 2, figsize=(PAGE_WIDTH, 3.9))
    try:
        for i, ax in enumerate(axes):  # long entries: four columns of them are wider than the page
            for k in range(5):
                ax.plot([0, 1], [k, k], label=f"a long legend entry number {k} of panel {i}")
            ax.legend()
        shared_legend(fig)
        (legend,) = fig.legends
        renderer = fig.canvas.get_renderer()
        assert legend.get_window_extent(renderer).width <= fig.bbox.width
        assert 1 <= legend._ncols < 4  # fewer than asked, at least one
        assert len(legend_texts(fig)) == 10
    finally:
        plt.close(fig)


def test_a_maps_caption_defines_every_entry_of_its_legend_in_the_maps_words(figure):
    """legend_words says what each entry the legend shows means (the decisions in the maps' words:
    holds, fails), the required value and the marked settings, and nothing the legend does not show."""
    from ntpnb.evidence._vocabulary import DECISION_WORDS
    from ntpnb.explore import legend_words
    from ntpnb.explore._draw import LEGEND_WORDS, legend_labels

    entries = legend_labels(figure)
    assert {"median of seeds", DECISION_WORDS[True], DECISION_WORDS[False], AT_AXIS_NOTE} <= set(entries)
    words = legend_words(figure)
    shown = [words_ for entry, words_ in LEGEND_WORDS.items() if entry in entries]
    assert (
        words == f"In the legend, {'; '.join(shown)}; dashed (or a shaded band), the value the map requires; "
        "the other lines, the settings the legend names (solid black: the paper's own)."
    )
    assert (
        "a filled marker, the map's requirement holds" in words and "an open marker, it fails there" in words
    )
    assert LEGEND_WORDS[DECISION_WORDS[None]] not in words  # no point is undecided: the legend has no grey
