"""A figure's panels re-laid in one column for a phone: the same axes, in reading order, legible."""

from __future__ import annotations

import io
import itertools
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from ntpnb.chapter import _plotting as plotting
from ntpnb.chapter._one_column import TALLEST, OneColumnError, one_column, row_height, wrap_to

WIDTH = plotting.PHONE_WIDTH


def _drawn(fig):
    """``fig`` drawn as show_figure saves it first (its sizes are what one_column scales)."""
    fig.savefig(io.BytesIO(), format="png")
    return fig


def _boxes(fig, axes):
    fig.draw_without_rendering()
    return [ax.get_position() for ax in axes]


@pytest.fixture(autouse=True)
def _style():
    plotting.use_style()
    yield
    plt.close("all")


def test_a_grid_becomes_one_column_in_reading_order_at_the_width_given():
    fig, axes = plt.subplots(2, 2, figsize=(plotting.PAGE_WIDTH, 6.2))
    for i, ax in enumerate(axes.flat):
        ax.plot([0, 1], [0, i])
        ax.set(title=f"panel {i}", xlabel="iteration $k$")
    one_column(_drawn(fig), WIDTH)
    assert fig.get_size_inches()[0] == pytest.approx(WIDTH)
    boxes = _boxes(fig, axes.flat)
    assert all(a.y0 > b.y1 for a, b in itertools.pairwise(boxes))  # top to bottom, no overlap
    lefts, rights = {round(b.x0, 2) for b in boxes}, {round(b.x1, 2) for b in boxes}
    assert len(lefts) == 1 and len(rights) == 1 and boxes[0].width > 0.7  # one column, the figure's width


def test_row_heights_keep_a_panel_as_wide_as_the_row_and_shrink_a_wide_one_by_the_square_root():
    assert row_height(3.0, 2.0, 3.0) == pytest.approx(2.0)
    assert row_height(6.0, 2.0, 3.0) == pytest.approx(2.0 / np.sqrt(2))


def test_shared_axes_show_their_tick_labels_and_label_on_every_panel():
    fig, axes = plt.subplots(1, 2, figsize=(plotting.PAGE_WIDTH, 4.0), sharey=True)
    for ax in axes:
        ax.plot([1, 2, 3], [3, 1, 2])
    axes[0].set_ylabel("loss")
    assert not axes[1].yaxis.get_tick_params()["labelleft"]
    one_column(_drawn(fig), WIDTH)
    assert axes[1].yaxis.get_tick_params()["labelleft"]
    assert axes[1].get_ylabel() == "loss"


def test_a_spanning_panel_its_colour_bar_and_a_twin_move_with_their_cell():
    fig, axes = plt.subplot_mosaic([["P", "P"], ["a", "b"]], figsize=(plotting.PAGE_WIDTH, 6.0))
    image = axes["P"].imshow(np.arange(15.0).reshape(3, 5), aspect="auto")
    bar = fig.colorbar(image, ax=axes["P"])
    twin = axes["b"].twinx()
    for key in "ab":
        axes[key].plot([0, 1], [1, 0])
    twin.plot([0, 1], [5, 7], color="C1")
    one_column(_drawn(fig), WIDTH)
    panel, a, b, cbar, right = _boxes(fig, [axes["P"], axes["a"], axes["b"], bar.ax, twin])
    assert panel.y0 > a.y1 and a.y0 > b.y1
    assert cbar.x0 >= panel.x1 and cbar.y0 < panel.y1 and cbar.y1 > panel.y0  # still beside P
    assert right.bounds == pytest.approx(b.bounds)


def test_a_square_panel_stays_square_and_a_panel_lent_to_a_legend_is_as_tall_as_it():
    fig, axes = plt.subplots(2, 2, figsize=(plotting.PAGE_WIDTH, 6.2))
    for ax in axes.flat[:3]:
        ax.plot([0, 1], [0, 1], label="GD")
        ax.plot([0, 1], [1, 0], label="Adam")
    axes[0, 0].set(aspect="equal", xlim=(0, 1), ylim=(0, 1))
    axes[1, 1].axis("off")
    axes[1, 1].legend(*axes[0, 1].get_legend_handles_labels(), loc="center")
    one_column(_drawn(fig), WIDTH)
    fig.draw_without_rendering()
    square = axes[0, 0].get_window_extent()
    assert square.width == pytest.approx(square.height, rel=0.02)
    legend = axes[1, 1].get_legend().get_window_extent().height / fig.dpi
    plain = axes[0, 1].get_window_extent().height / fig.dpi
    cell = axes[1, 1].get_window_extent().height / fig.dpi
    assert cell < 1.5 * legend + 0.3 < plain


def test_a_figure_legend_gets_the_columns_that_fit_and_a_long_title_wraps():
    fig, axes = plt.subplots(1, 2, figsize=(plotting.PAGE_WIDTH, 4.0))
    for i, ax in enumerate(axes):
        for k in range(4):
            ax.plot([0, 1], [k, i], label=f"a rather long label number {k}")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=4)
    fig.suptitle("A title far too long to fit on one line of a figure as narrow as a phone's column")
    (legend,) = fig.legends
    one_column(_drawn(fig), WIDTH)
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    assert legend.get_window_extent(renderer).width <= fig.bbox.width
    assert [t.get_text() for t in legend.texts] == [f"a rather long label number {k}" for k in range(4)]
    assert legend._ncols < 4
    assert "\n" in fig.get_suptitle() and fig._suptitle.get_window_extent(renderer).width <= fig.bbox.width


@pytest.mark.parametrize("crowded", [False, True])
def test_a_legend_too_wide_for_its_panel_or_crowding_it_goes_under_it_within_the_figure(crowded):
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    names = ["a", "b", "c", "d", "e", "f", "g"] if crowded else ["neither", "compatible, not separable"]
    for name in names:
        ax.plot([1, 2], [2, 1], label=rf"{name} ($\inf \operatorname{{CE}} - \mathcal{{H}}$ = 0.481)")
    ax.set_xlabel("iteration $k$")
    ax.legend()
    one_column(_drawn(fig), WIDTH)
    fig.draw_without_rendering()
    assert ax.get_legend() is None and not fig.legends
    (holder,) = [a for a in fig.axes if a is not ax]
    legend = holder.get_legend()
    box, label = legend.get_window_extent(), ax.xaxis.label.get_window_extent()
    assert box.y1 < label.y0 and box.y0 > 0 and box.x0 >= 0 and box.x1 <= fig.bbox.width  # under it, inside
    texts = [t.get_text().replace("\n", " ") for t in legend.texts]
    assert texts == [rf"{n} ($\inf \operatorname{{CE}} - \mathcal{{H}}$ = 0.481)" for n in names]
    assert legend.legend_handles[0].get_color() == ax.lines[0].get_color()
    assert ("\n" in legend.texts[1].get_text()) != crowded  # a long label wraps to the figure's width
    assert fig.get_tightbbox().height <= fig.get_size_inches()[1]  # nothing cut off


def test_a_small_legend_stays_in_its_panel():
    fig, axes = plt.subplots(2, 2, figsize=(plotting.PAGE_WIDTH, 6.2))
    for ax in axes.flat:
        ax.plot([1, 2], [2, 1], label="GD")
    legend = axes[0, 0].legend(loc="lower left")
    one_column(_drawn(fig), WIDTH)
    fig.draw_without_rendering()
    inside = axes[0, 0].get_window_extent()
    box = legend.get_window_extent()
    assert inside.x0 <= box.x0 and box.y0 >= inside.y0 and box.y1 <= inside.y1


def test_wrapping_never_breaks_math_and_leaves_a_short_text_alone():
    fig, ax = plt.subplots()
    renderer = fig.canvas.get_renderer()
    title = ax.set_title(r"the loss ($\operatorname{CE}(W_k) - \mathcal{H}$) over the iterations $k$ of GD")
    wrap_to(title, 150, renderer)
    lines = title.get_text().split("\n")
    assert len(lines) > 1 and all(line.count("$") % 2 == 0 for line in lines)
    short = ax.set_xlabel("k")
    wrap_to(short, 150, renderer)
    assert short.get_text() == "k"


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda fig: fig.add_axes((0.1, 0.1, 0.8, 0.8)), "placed by hand"),
        (
            lambda fig: [fig.add_subplot(g) for g in fig.add_gridspec(1, 2)[0].subgridspec(2, 1)],
            "nested grid",
        ),
        (lambda fig: fig.subfigures(1, 2)[0].subplots(), "subfigures"),
        (lambda fig: None, "no axes"),
    ],
)
def test_a_figure_it_cannot_move_is_named_with_why(make, said):
    fig = plt.figure(figsize=(plotting.PAGE_WIDTH, 3.0))
    make(fig)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constrained layout has nothing to lay out by hand
        _drawn(fig)
    with pytest.raises(OneColumnError, match=said):
        one_column(fig, WIDTH)


def test_square_panels_under_a_spanning_one_are_laid_out_inside_the_figure_the_first_time():
    fig, axes = plt.subplot_mosaic([["P", "P"], ["a", "b"]], figsize=(plotting.PAGE_WIDTH, 6.6))
    fig.colorbar(axes["P"].imshow(np.arange(15.0).reshape(3, 5), aspect="auto"), ax=axes["P"])
    axes["P"].set(yticks=range(3), yticklabels="ABC")  # narrower tick labels than the squares'
    for key in "ab":
        axes[key].plot([-2, 2], [2, -2])
        axes[key].set(xlim=(-2.5, 2.5), ylim=(-2.5, 2.5), aspect="equal")
    one_column(_drawn(fig), WIDTH)
    with matplotlib.rc_context({"savefig.bbox": "standard"}):
        fig.savefig(io.BytesIO(), format="png")  # as show_figure saves it: once
    box = fig.get_tightbbox()
    assert box.x0 >= 0 and box.x1 <= WIDTH, box


def test_a_tall_panel_is_at_most_tallest_times_as_tall_as_wide_and_a_short_one_keeps_its_height():
    fig, axes = plt.subplots(1, 2, figsize=(plotting.PAGE_WIDTH, 6.0))  # two tall panels
    for ax in axes:
        ax.plot([0, 1], [0, 1])
    one_column(_drawn(fig), WIDTH)
    for box in _boxes(fig, axes):
        assert box.height * fig.get_size_inches()[1] <= 1.02 * TALLEST * box.width * WIDTH
    fig, axes = plt.subplots(2, 2, figsize=(plotting.PAGE_WIDTH, 4.0))  # four short ones
    for ax in axes.flat:
        ax.plot([0, 1], [0, 1])
    _drawn(fig)
    before = axes[0, 0].get_window_extent().height
    one_column(fig, WIDTH)
    fig.draw_without_rendering()
    assert axes[0, 0].get_window_extent().height == pytest.approx(before, rel=0.15)
