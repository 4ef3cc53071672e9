"""Figure output: PNG and PDF written deterministically, the saved PNG shown at the inline size.

Every figure of a chapter is a numbered figure of the book: its cell carries a caption, a name
and alt text (``figure_cell_problems``), and its text is readable at the page's width.
"""

from __future__ import annotations

import base64
import io
import re
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from PIL import Image as PILImage

from ntpnb.chapter import _plotting as plotting
from ntpnb.records._places import notebook_sources, output_tree

from conftest import ROOT


def _figure(width: float = 4.0):
    plotting.use_style()
    fig, ax = plt.subplots(figsize=(width, 3.0))
    ax.plot([0, 1, 2], [1, 0, 1])
    ax.set(xlabel="x", ylabel="y")
    return fig


def test_write_figure_writes_identical_files_on_every_run(tmp_path):
    layout = output_tree(tmp_path / "out")
    first = [p.read_bytes() for p in plotting.write_figure(_figure(), layout.figures / "f")]
    second = [p.read_bytes() for p in plotting.write_figure(_figure(), layout.figures / "f")]
    assert [p.suffix for p in plotting.write_figure(_figure(), layout.figures / "f")] == [".png", ".pdf"]
    assert first == second


def _displayed(monkeypatch) -> list[tuple[object, dict]]:
    """What ``IPython.display.display`` is given from now on: ``(object, metadata)`` pairs."""
    shown: list[tuple[object, dict]] = []
    monkeypatch.setattr(
        "IPython.display.display", lambda obj, metadata=None: shown.append((obj, metadata or {}))
    )
    return shown


def test_show_figure_saves_closes_and_displays_the_png_at_the_inline_size(tmp_path, monkeypatch):
    shown = _displayed(monkeypatch)
    layout = output_tree(tmp_path / "out")
    fig = _figure()
    assert plotting.show_figure(fig, "g", layout) is None  # a cell ending with it prints no path
    paths = [layout.figures / "g.png", layout.figures / "g.pdf"]
    assert [p.name for p in paths] == ["g.png", "g.pdf"] and all(p.is_file() for p in paths)
    assert not plt.fignum_exists(fig.number)  # closed: the inline backend does not draw it again
    ((image, metadata),) = shown
    with PILImage.open(paths[0]) as png:
        saved_width = png.size[0]
    ratio = plotting.STYLE["figure.dpi"] / plotting.STYLE["savefig.dpi"]
    assert image.width == pytest.approx(saved_width * ratio, abs=1)
    assert image.data == paths[0].read_bytes()
    # its record: the smallest text and the width, in points
    record = metadata[plotting.PHONE_RECORD]
    assert record["text_points"] == 9.5  # the tick labels
    assert record["width_points"] == pytest.approx(saved_width * 72 / 150)


def test_a_figure_legible_on_a_phone_as_it_is_has_no_phone_layout(tmp_path, monkeypatch):
    shown = _displayed(monkeypatch)
    plotting.show_figure(_figure(width=3.2), "small", output_tree(tmp_path / "out"))
    ((_, metadata),) = shown
    record = metadata[plotting.PHONE_RECORD]
    assert "phone" not in record
    shown_pixels = min(plotting.PHONE_PIXELS, record["width_points"] / 72 * plotting.STYLE["figure.dpi"])
    assert plotting.text_pixels(record["text_points"], record["width_points"], shown_pixels) >= 12


def _panels(width: float = plotting.PAGE_WIDTH):
    plotting.use_style()
    fig, axes = plt.subplots(2, 2, figsize=(width, 6.0))
    for ax in axes.flat:
        ax.plot([1, 10, 100], [3, 2, 1])
        ax.set(xscale="log", xlabel="iteration $k$", ylabel=r"$\|W_k\|$")
    return fig


def test_a_figure_too_small_on_a_phone_carries_its_one_column_layout(tmp_path, monkeypatch):
    shown = _displayed(monkeypatch)
    layout = output_tree(tmp_path / "out")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a figure that fits the page and re-lays cleanly
        plotting.show_figure(_panels(), "panels", layout)
    ((image, metadata),) = shown
    record = metadata[plotting.PHONE_RECORD]
    laptop = plotting.text_pixels(record["text_points"], record["width_points"], plotting.PHONE_PIXELS)
    assert laptop < plotting.LEGIBLE_PIXELS  # the 2 x 2 grid at a phone's width: too small
    phone = record["phone"]
    assert phone["media"] == plotting.PHONE_MEDIA and phone["shown_pixels"] == plotting.PHONE_PIXELS
    png = base64.b64decode(phone["image/png"])
    with PILImage.open(io.BytesIO(png)) as narrow:
        width, height = narrow.size
    assert width == round(plotting.PHONE_WIDTH * plotting.STYLE["savefig.dpi"]) and height > 2 * width
    assert phone["width_points"] == pytest.approx(plotting.PHONE_WIDTH * 72)
    on_phone = plotting.text_pixels(phone["text_points"], phone["width_points"], plotting.PHONE_PIXELS)
    assert on_phone >= plotting.LEGIBLE_PIXELS
    # the saved figure is the paper's, as if no phone layout were drawn
    again = plotting.write_figure(_panels(), tmp_path / "again")
    assert (layout.figures / "panels.png").read_bytes() == again[0].read_bytes()
    assert image.data == again[0].read_bytes()


@pytest.mark.filterwarnings("ignore:There are no gridspecs")  # constrained layout, nothing to lay out
def test_a_figure_that_cannot_be_laid_out_for_a_phone_is_a_warning(tmp_path, monkeypatch):
    shown = _displayed(monkeypatch)
    plotting.use_style()
    fig = plt.figure(figsize=(plotting.PAGE_WIDTH, 3.0), layout="none")
    fig.add_axes((0.1, 0.15, 0.85, 0.75)).set(xlabel="iteration $k$")
    with pytest.warns(
        UserWarning, match=r"figure hand: on a phone .* cannot be laid out in one column: .*by hand"
    ):
        plotting.show_figure(fig, "hand", output_tree(tmp_path / "out"))
    ((_, metadata),) = shown
    assert "phone" not in metadata[plotting.PHONE_RECORD]


def test_the_stylesheet_shows_the_phone_layout_in_the_same_windows_as_the_pictures():
    css = (ROOT / "ntpnb" / "book" / "static" / "ntpnb-figures.css").read_text()
    assert f"@media {plotting.PHONE_MEDIA} {{" in css
    # a figure at the smallest text allowed, shown at the page's width, is legible down to there
    column = plotting.PHONE_BREAKPOINT - plotting.COLUMN_MARGIN
    points = plotting.MIN_TEXT_POINTS * plotting.PAGE_PIXELS * 72 / plotting.STYLE["figure.dpi"]
    smallest = plotting.text_pixels(plotting.MIN_TEXT_POINTS, points / plotting.MIN_TEXT_POINTS, column)
    assert smallest == pytest.approx(plotting.LEGIBLE_PIXELS, abs=0.02)


def test_text_pixels_scales_points_by_the_shown_width():
    assert plotting.text_pixels(9.0, 72 * 6.72, 672) == pytest.approx(12.5)  # at its own size
    assert plotting.text_pixels(9.0, 72 * 6.72, 336) == pytest.approx(6.25)  # at half


@pytest.mark.parametrize("figures", ["on", "off"])
def test_show_animation_renders_only_where_figures_are_wanted(figures, monkeypatch):
    from ntpnb.records._places import FIGURES_VAR

    monkeypatch.setenv(FIGURES_VAR, figures)
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    fig = _figure(width=3.0)
    (line,) = fig.axes[0].lines
    alt = 'A "V" that flattens'
    assert plotting.show_animation(fig, lambda i: line.set_ydata([i, 0, i]), [0, 1], alt=alt) is None
    assert not plt.fignum_exists(fig.number)
    if figures == "on":
        (html,) = shown
        assert "<script" in html.data and "anim" in html.data
        assert '<img alt="A &quot;V&quot; that flattens" style="width: 300px;' in html.data
        assert 'data-text-points="9.5" data-width-points="216" id="_anim_img' in html.data  # 3 in
    else:
        assert not shown


def test_an_animation_too_wide_for_a_phone_is_drawn_at_the_phone_width_text_kept(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    plotting.use_style()
    fig, ax = plt.subplots(figsize=(6.0, 4.0), dpi=60)
    (line,) = ax.plot([0, 1, 2], [1, 0, 1])
    ax.set_xlabel("iteration $k$")
    plotting.show_animation(fig, lambda i: line.set_ydata([i, 0, i]), [0, 1], alt="A V")
    (html,) = shown
    width = round(plotting.PHONE_WIDTH * 72, 2)
    assert f'style="width: {plotting.PHONE_PIXELS}px; max-width: 100%; height: auto"' in html.data
    assert f'data-text-points="9.5" data-width-points="{width:g}"' in html.data
    frame = re.search(r"data:image/png;base64,([A-Za-z0-9+/=]+)", html.data.replace("\\\n", ""))
    with PILImage.open(io.BytesIO(base64.b64decode(frame.group(1)))) as png:
        assert png.size[0] == pytest.approx(plotting.PHONE_WIDTH * plotting.STYLE["savefig.dpi"], abs=1)


def test_an_animation_without_alt_text_is_refused():
    fig = _figure()
    with pytest.raises(ValueError, match="alt"):
        plotting.show_animation(fig, lambda i: None, [0, 1], alt="  ")
    assert not plt.fignum_exists(fig.number)


def test_show_figure_warns_of_text_the_page_would_shrink_below_the_minimum(tmp_path, monkeypatch):
    _displayed(monkeypatch)
    layout = output_tree(tmp_path / "out")
    plotting.use_style()
    fig, ax = plt.subplots(figsize=(plotting.PAGE_WIDTH - 0.4, 3.0))
    ax.set(xlabel=r"$\|W_k\|$", ylabel="y")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a figure that fits the page, in the book's sizes
        plotting.show_figure(fig, "fits", layout)
    fig, ax = plt.subplots(figsize=(2 * plotting.PAGE_WIDTH, 3.0))  # shrunk to half
    ax.set(xlabel="iteration $k$", xticks=[], yticks=[])
    with pytest.warns(
        UserWarning, match=r"figure wide: text smaller than 9 pt .*'iteration \$k\$' \(5\.\d pt\)"
    ):
        plotting.show_figure(fig, "wide", layout)


def test_small_text_measures_text_at_the_size_the_page_shows_it():
    plotting.use_style()
    fig, ax = plt.subplots()
    ax.set_title("title", fontsize=12)
    ax.plot([0, 1], label="curve")
    ax.legend(fontsize=7)
    assert ("curve", 7.0) in plotting.small_text(fig, plotting.PAGE_PIXELS)
    assert "title" not in dict(plotting.small_text(fig, plotting.PAGE_PIXELS))
    halved = dict(plotting.small_text(fig, 2 * plotting.PAGE_PIXELS))
    assert halved["title"] == pytest.approx(6.0) and halved["curve"] == pytest.approx(3.5)
    plt.close(fig)


FIGURE = {"name": "fig-a1_gap", "caption": "The gap falls."}


@pytest.mark.parametrize(
    ("source", "metadata", "problems"),
    [
        ("x = 1", {}, []),
        ("from ntpnb.chapter import show_figure, show_animation", {}, []),
        (
            'show_figure(fig, "a1_gap", layout)',
            {"mystnb": {"figure": FIGURE, "image": {"alt": "A line."}}},
            [],
        ),
        ('show_figure(fig, "a1_gap", layout)', {}, ["no caption", "no name", "no alt text"]),
        (
            'show_figure(fig, "a1_gap", layout)',
            {"mystnb": {"figure": {**FIGURE, "caption": " "}, "image": {"alt": "A line."}}},
            ["no caption"],
        ),
        (
            'show_figure(fig, "a1_gap", layout)',
            {"mystnb": {"figure": {**FIGURE, "name": "fig-other"}, "image": {"alt": "A line."}}},
            ["named 'fig-other', not fig-a1_gap"],
        ),
        (
            'show_figure(fig, "a1_gap", layout)',
            {"mystnb": {"figure": FIGURE}},
            ["no alt text (cell metadata"],
        ),
        (
            'show_figure(f, "a", layout)\nshow_figure(g, "b", layout)',
            {"mystnb": {"figure": FIGURE, "image": {"alt": "A line."}}},
            ["shows 2 figures"],
        ),
        ("show_animation(fig, draw, frames, alt='Rows turn.')", {"mystnb": {"figure": FIGURE}}, []),
        (
            "show_animation(fig, draw, frames)",
            {"mystnb": {"figure": {**FIGURE, "name": "anim"}}},
            ["named 'anim': a figure's name starts with fig-", "no alt text (show_animation's"],
        ),
    ],
)
def test_figure_cell_problems_name_what_a_figure_cell_lacks(source, metadata, problems):
    found = plotting.figure_cell_problems(source, metadata)
    assert len(found) == len(problems), found
    for problem, expected in zip(found, problems, strict=True):
        assert problem.startswith(expected), (problem, expected)


@pytest.mark.parametrize("path", notebook_sources(ROOT), ids=lambda p: p.stem)
def test_every_figure_of_a_chapter_is_captioned_named_and_described(path):
    import jupytext

    nb = jupytext.read(path)
    shown = 0
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        assert plotting.figure_cell_problems(cell.source, cell.metadata) == [], f"cell {index}"
        if plotting.figure_cell_problems(cell.source, {}):  # a cell that shows a figure
            shown += 1
            caption = cell.metadata["mystnb"]["figure"]["caption"]
            assert len(caption.split()) >= 8, f"cell {index}: a caption says what the figure shows"
    assert shown, f"{path.name} shows no figure"


@pytest.mark.parametrize(("top", "minor"), [(1e2, True), (1e3, True), (1e6, False)])
def test_a_log_axis_over_many_decades_has_no_minor_ticks(top, minor):
    plotting.use_style()
    fig, ax = plt.subplots()
    ax.loglog([1.0, top], [1.0, 2.0])
    ax.set_xlim(1.0, top)
    fig.canvas.draw()
    assert bool(len(ax.xaxis.get_minorticklocs())) is minor
    assert len(ax.xaxis.get_majorticklocs()) >= 2  # the decades stay labelled
    assert ax.get_xscale() == "log" and isinstance(ax.xaxis.get_transform(), type(ax.yaxis.get_transform()))
    plt.close(fig)


def test_log_axes_name_the_decades_without_tex():
    import re

    import numpy as np

    plotting.use_style()
    fig, (wide, narrow, linear) = plt.subplots(1, 3)
    x = np.linspace(1.0, 600.0, 50)
    wide.semilogy(x, np.exp(-x))  # about 260 decades
    narrow.loglog(x, x**-2)  # about 6 decades
    linear.plot(x, x)
    fig.canvas.draw()
    labels = [t.get_text() for t in wide.get_yticklabels() if t.get_text()]
    assert labels and all(re.fullmatch("10⁻?[⁰¹²³⁴⁵⁶⁷⁸⁹]+", s) for s in labels)  # no TeX
    assert any("⁻" in s for s in labels)
    narrow_labels = [t.get_text() for t in narrow.get_xticklabels() if t.get_text()]
    assert {"10⁰", "10¹", "10²"} <= set(narrow_labels)
    assert linear.yaxis.get_major_formatter().__class__.__name__ == "ScalarFormatter"
    plt.close(fig)
