"""Plot style and figure output, in one place for every notebook.

Figures are written as PNG (for the book and for looking at) and PDF (for papers), with
fixed metadata so the same run writes byte-identical files. A notebook shows the PNG it wrote
(:func:`show_figure`) rather than letting the inline backend draw the figure a third time:
drawing is most of a chapter's plotting time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import matplotlib as mpl
from matplotlib import scale as mscale
from matplotlib import ticker
from matplotlib.figure import Figure
from matplotlib.ticker import LogLocator

from .atomic import atomic_path
from .paths import OutputLayout, figures_wanted

__all__ = ["STYLE", "COLORS", "use_style", "write_figure", "save_figure", "show_figure", "show_animation"]

#: rcParams shared by every figure of the book.
STYLE: dict[str, object] = {
    "figure.figsize": (6.4, 4.0),
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 1.8,
    "image.cmap": "viridis",
}

#: Colour cycle (colour-blind safe, Okabe-Ito) used for tokens and curves.
COLORS: tuple[str, ...] = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#F0E442",
    "#000000",
)

_METADATA = {
    ".png": {"Software": None},
    ".pdf": {"Creator": None, "Producer": None, "CreationDate": None},
}


#: Superscript forms of the characters of an exponent.
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _power_of_ten(x: float, pos: int | None = None) -> str:
    """``"10"`` with the exponent in superscript digits for a power of ten, else no label."""
    if not x > 0:
        return ""
    exponent = round(math.log10(x))
    return f"10{str(exponent).translate(_SUPERSCRIPT)}" if abs(x / 10.0**exponent - 1) < 1e-9 else ""


#: A logarithmic axis that spans more decades than this has no minor ticks (see :class:`LogScale`).
MINOR_TICKS_MAX_DECADES: float = 3.0


class _MinorLogLocator(LogLocator):
    """Matplotlib's minor ticks of a log axis, or none once the axis spans many decades.

    Over many decades the eight minor ticks per decade are a dense comb that says nothing the
    labelled decades do not, and they are most of the drawing: each is a tick with its own
    lines and (empty) label to lay out, twice per file. A 2 x 4 panel of Paper A's curves over
    six decades took three times as long to write with them. Over a few decades they stay,
    where matplotlib labels some of them.
    """

    def __call__(self):  # type: ignore[no-untyped-def]
        low, high = self.axis.get_view_interval()
        if low > 0 and high / low > 10**MINOR_TICKS_MAX_DECADES:
            return []
        return super().__call__()


class LogScale(mscale.LogScale):
    """Matplotlib's ``"log"`` scale: fewer minor ticks, and decades labelled in plain text.

    :class:`_MinorLogLocator` gives its minor ticks; in base 10 its decades read ``10⁻⁵⁰``.

    Matplotlib's default labels (``$10^{-50}$``) go through its TeX parser at every draw, and a
    figure is drawn four times when written (two formats, each sized first): on axes that span
    hundreds of decades that parsing was most of a figure's time.
    """

    if mpl.__version_info__ >= (3, 11):  # scales are made without their axis from 3.11 on

        def __init__(self, *, base: float = 10, subs: object = None, nonpositive: str = "clip") -> None:
            super().__init__(base=base, subs=subs, nonpositive=nonpositive)

    def set_default_locators_and_formatters(self, axis):  # type: ignore[no-untyped-def]
        super().set_default_locators_and_formatters(axis)
        axis.set_minor_locator(_MinorLogLocator(self.base, self.subs))
        if self.base == 10:
            axis.set_major_formatter(ticker.FuncFormatter(_power_of_ten))


def use_style() -> None:
    """Apply :data:`STYLE`, the colour cycle and the book's :class:`LogScale` to matplotlib."""
    mpl.rcParams.update(STYLE)
    mpl.rcParams["axes.prop_cycle"] = mpl.cycler(color=list(COLORS))
    mscale.register_scale(LogScale)


def write_figure(fig: Figure, stem: Path) -> list[Path]:
    """Write ``fig`` to ``<stem>.png`` and ``<stem>.pdf`` (fixed metadata); return the paths."""
    paths = []
    for suffix, metadata in _METADATA.items():
        path = stem.with_name(stem.name + suffix)
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=suffix[1:], metadata=metadata)
        paths.append(path)
    return paths


def save_figure(fig: Figure, name: str, layout: OutputLayout) -> list[Path]:
    """Write ``fig`` to ``<layout.figures>/<name>.png`` and ``.pdf``; return the paths."""
    return write_figure(fig, layout.figures / name)


def show_figure(fig: Figure, name: str, layout: OutputLayout) -> None:
    """Save ``fig`` (:func:`save_figure`), close it, and display the saved PNG in the notebook.

    The PNG is shown at the size the inline backend would give the figure (``figure.dpi``
    pixels per inch), so pages look the same as with ``plt.show()``. Nothing is returned, so a
    cell that ends with this call shows the figure and not the paths it was written to (which
    depend on the output folder of the run). A run that writes no figures (:func:`figures_wanted`)
    only closes it.
    """
    import matplotlib.pyplot as plt
    from IPython.display import Image, display
    from PIL import Image as PILImage

    if not figures_wanted():
        plt.close(fig)
        return
    paths = save_figure(fig, name, layout)
    plt.close(fig)
    with PILImage.open(paths[0]) as png:
        width = png.size[0]
    scale = float(mpl.rcParams["figure.dpi"]) / float(mpl.rcParams["savefig.dpi"])
    display(Image(filename=str(paths[0]), width=max(1, round(width * scale))))


def show_animation(
    fig: Figure, draw_frame: Callable[[Any], object], frames: Iterable[Any], interval: int = 200
) -> None:
    """Animate ``fig`` over ``frames`` and show it as inline JavaScript; then close ``fig``.

    ``draw_frame(frame)`` updates the figure to one frame (matplotlib's ``FuncAnimation``). The
    animation plays in the rendered page without a video encoder (``to_jshtml``), a frame every
    ``interval`` ms, once. Rendering every frame is a display's work, not a result's: a run that
    writes no figures (:func:`figures_wanted`) makes no animation and only closes ``fig``.
    """
    import matplotlib.pyplot as plt
    from IPython.display import HTML, display
    from matplotlib.animation import FuncAnimation

    if not figures_wanted():
        plt.close(fig)
        return
    animation = FuncAnimation(fig, draw_frame, frames=list(frames), interval=interval)
    html = animation.to_jshtml(default_mode="once")
    plt.close(fig)
    display(HTML(html))
