"""Plot style and figure output, in one place for every notebook.

Figures are written as PNG (for the book and for looking at) and PDF (for papers), with
fixed metadata so the same run writes byte-identical files. A notebook shows the PNG it wrote
(:func:`show_figure`) rather than letting the inline backend draw the figure a third time:
drawing is most of a chapter's plotting time.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib as mpl
from matplotlib import ticker
from matplotlib.figure import Figure

from .atomic import atomic_path
from .paths import OutputLayout

__all__ = ["STYLE", "COLORS", "use_style", "plain_log_labels", "write_figure", "save_figure", "show_figure"]

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


def use_style() -> None:
    """Apply :data:`STYLE` and the colour cycle to matplotlib."""
    mpl.rcParams.update(STYLE)
    mpl.rcParams["axes.prop_cycle"] = mpl.cycler(color=list(COLORS))


#: Superscript forms of the characters of an exponent.
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _power_of_ten(x: float, pos: int | None = None) -> str:
    """``"10"`` with the exponent in superscript digits for a power of ten, else no label."""
    if not x > 0:
        return ""
    exponent = round(math.log10(x))
    return f"10{str(exponent).translate(_SUPERSCRIPT)}" if abs(x / 10.0**exponent - 1) < 1e-9 else ""


def plain_log_labels(fig: Figure) -> None:
    """Label the decades of every logarithmic axis of ``fig`` in plain text (``10⁻⁵⁰``).

    matplotlib's default labels (``$10^{-50}$``) go through its TeX parser on every draw, and
    a figure is drawn four times when written (two formats, each sized first): on axes that
    span hundreds of decades that parsing was most of a figure's time. Axes spanning more than
    ten decades also lose their minor ticks (they would not show; each costs a tick object at
    every draw). Call it once the data are drawn.
    """
    for ax in fig.axes:
        for axis, scale in ((ax.xaxis, ax.get_xscale()), (ax.yaxis, ax.get_yscale())):
            if scale == "log":
                axis.set_major_formatter(ticker.FuncFormatter(_power_of_ten))
                axis.set_minor_formatter(ticker.NullFormatter())
                low, high = sorted(axis.get_view_interval())
                if low > 0 and high / low > 1e10:  # minor ticks would not show
                    axis.set_minor_locator(ticker.NullLocator())


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
    depend on the output folder of the run).
    """
    import matplotlib.pyplot as plt
    from IPython.display import Image, display
    from PIL import Image as PILImage

    paths = save_figure(fig, name, layout)
    plt.close(fig)
    with PILImage.open(paths[0]) as png:
        width = png.size[0]
    scale = float(mpl.rcParams["figure.dpi"]) / float(mpl.rcParams["savefig.dpi"])
    display(Image(filename=str(paths[0]), width=max(1, round(width * scale))))
