"""Figure output: PNG and PDF written deterministically, the saved PNG shown at the inline size."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from PIL import Image as PILImage

from ntpnb.chapter import plotting
from ntpnb.chapter.paths import output_layout


def _figure():
    plotting.use_style()
    fig, ax = plt.subplots(figsize=(4.0, 3.0))
    ax.plot([0, 1, 2], [1, 0, 1])
    ax.set(xlabel="x", ylabel="y")
    return fig


def test_save_figure_writes_identical_files_on_every_run(tmp_path):
    layout = output_layout(tmp_path / "out")
    first = [p.read_bytes() for p in plotting.save_figure(_figure(), "f", layout)]
    second = [p.read_bytes() for p in plotting.save_figure(_figure(), "f", layout)]
    assert [p.suffix for p in plotting.save_figure(_figure(), "f", layout)] == [".png", ".pdf"]
    assert first == second


def test_show_figure_saves_closes_and_displays_the_png_at_the_inline_size(tmp_path, monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    layout = output_layout(tmp_path / "out")
    fig = _figure()
    assert plotting.show_figure(fig, "g", layout) is None  # a cell ending with it prints no path
    paths = [layout.figures / "g.png", layout.figures / "g.pdf"]
    assert [p.name for p in paths] == ["g.png", "g.pdf"] and all(p.is_file() for p in paths)
    assert not plt.fignum_exists(fig.number)  # closed: the inline backend does not draw it again
    (image,) = shown
    with PILImage.open(paths[0]) as png:
        saved_width = png.size[0]
    ratio = plotting.STYLE["figure.dpi"] / plotting.STYLE["savefig.dpi"]
    assert image.width == pytest.approx(saved_width * ratio, abs=1)
    assert image.data == paths[0].read_bytes()


@pytest.mark.parametrize("figures", ["on", "off"])
def test_show_animation_renders_only_where_figures_are_wanted(figures, monkeypatch):
    from ntpnb.chapter.paths import FIGURES_VAR

    monkeypatch.setenv(FIGURES_VAR, figures)
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    fig = _figure()
    (line,) = fig.axes[0].lines
    assert plotting.show_animation(fig, lambda i: line.set_ydata([i, 0, i]), [0, 1]) is None
    assert not plt.fignum_exists(fig.number)
    if figures == "on":
        (html,) = shown
        assert "<script" in html.data and "anim" in html.data
    else:
        assert not shown


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
