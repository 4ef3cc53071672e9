"""Plot style and figure output, in one place for every notebook.

Figures are written as PNG (book) and PDF (papers), with fixed metadata so a run writes
byte-identical files. A notebook shows the PNG it wrote (:func:`show_figure`) rather than having
the inline backend draw the figure a third time.

A book figure is numbered, with caption and alt text, through myst-nb's cell metadata: the cell
showing it (one :func:`show_figure` or :func:`show_animation` per cell) carries, as the YAML
front matter of its ``{code-cell}``, ::

    mystnb:
      figure:
        name: fig-<the name it is saved under>
        caption: What it shows, the setting, what to look for.
      image:
        alt: The figure described for a reader who cannot see it.

A caption states a number set by a parameter or the run through ``{glue:text}``, or names the
parameter. An animation's alt text is :func:`show_animation`'s ``alt``. The book's build refuses
a cell that lacks any of these (:func:`figure_cell_problems`).
"""

from __future__ import annotations

import html
import re
import warnings
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .layout import OutputLayout, figures_wanted
from .outputs import atomic_path

if TYPE_CHECKING:  # matplotlib is imported by the functions that draw, not with the package
    from matplotlib.figure import Figure

#: The widest a cell's output shows on a chapter page, in CSS pixels, in a 1280 px window
#: (Chromium; 774 from 1440 px on). A wider figure is shrunk by the page, text included.
PAGE_PIXELS: int = 672

#: The smallest size of a figure's text, in points at the size the page shows it (a point is
#: ``figure.dpi / 72`` pixels of the shown PNG, :func:`show_figure`).
MIN_TEXT_POINTS: float = 9.0

_FIGURE_DPI = 100  # pixels per inch of a figure shown in a notebook or the book
_PAD_INCHES = 0.1  # the margin of a saved figure around its drawn content

#: rcParams shared by every figure of the book. A figure is at most :data:`PAGE_WIDTH` wide (so
#: shown at its own size; more than two panels go on further rows), in constrained layout.
STYLE: dict[str, object] = {
    "figure.figsize": (6.4, 4.0),
    "figure.dpi": _FIGURE_DPI,
    "figure.constrained_layout.use": True,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
    "savefig.pad_inches": _PAD_INCHES,
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "xtick.labelsize": 9.5,
    "ytick.labelsize": 9.5,
    "legend.fontsize": 9.5,
    "figure.titlesize": 11,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 1.8,
    "image.cmap": "viridis",
}

#: The widest figure, in inches, that the page shows at its own size: :data:`PAGE_PIXELS` at
#: ``figure.dpi``, less the margin that ``savefig.bbox = "tight"`` adds on either side.
PAGE_WIDTH: float = PAGE_PIXELS / _FIGURE_DPI - 2 * _PAD_INCHES

#: Colour cycle (colour-blind safe, Okabe-Ito) used for tokens and curves.
COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")

_METADATA = {".png": {"Software": None}, ".pdf": {"Creator": None, "Producer": None, "CreationDate": None}}


def use_style() -> None:
    """Apply :data:`STYLE`, the colour cycle and the book's log scale (registered as ``"log"``)."""
    import matplotlib as mpl
    from matplotlib import scale as mscale

    from .log_scale import LogScale

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


def small_text(fig: Figure, shown_width: float) -> list[tuple[str, float]]:
    """The texts of ``fig`` smaller than :data:`MIN_TEXT_POINTS` as the page shows them.

    ``shown_width`` is the width the notebook shows the figure at, in pixels at ``figure.dpi``;
    the page shrinks it to at most :data:`PAGE_PIXELS`. Returns ``(text, points on the page)``
    for each visible, non-empty text that is too small, smallest first.
    """
    from matplotlib.text import Text

    shrink = min(1.0, PAGE_PIXELS / shown_width) if shown_width > 0 else 1.0
    small = {}
    for text in fig.findobj(Text):
        label, points = text.get_text().strip(), float(text.get_fontsize()) * shrink
        if label and text.get_visible() and points < MIN_TEXT_POINTS - 1e-9:
            small[label] = min(points, small.get(label, points))
    return sorted(small.items(), key=lambda item: item[1])


def show_figure(fig: Figure, name: str, layout: OutputLayout) -> None:
    """Write ``fig`` to ``<layout.figures>/<name>.png`` and ``.pdf``, close it, and display the PNG.

    Shown at the inline backend's size (``figure.dpi``), as with ``plt.show()``; returns
    nothing, so a cell ending with it shows no run-dependent paths. A run that writes no figures
    (:func:`figures_wanted`) only closes it. Text the page would show smaller than
    :data:`MIN_TEXT_POINTS` (:func:`small_text`) is a warning, which fails the book's build.
    """
    import matplotlib as mpl
    import matplotlib.pyplot as plt
    from IPython.display import Image, display
    from PIL import Image as PILImage

    if not figures_wanted():
        plt.close(fig)
        return
    paths = write_figure(fig, layout.figures / name)
    with PILImage.open(paths[0]) as png:
        width = png.size[0]
    scale = float(mpl.rcParams["figure.dpi"]) / float(mpl.rcParams["savefig.dpi"])
    shown = max(1, round(width * scale))
    small = small_text(fig, shown)
    plt.close(fig)
    if small:
        listed = ", ".join(f"{label!r} ({points:.1f} pt)" for label, points in small[:5])
        warnings.warn(
            f"figure {name}: text smaller than {MIN_TEXT_POINTS:g} pt where the page shows the "
            f"figure ({shown} px wide, the page {PAGE_PIXELS} px): {listed}; make it at most "
            f"{PAGE_WIDTH:.2f} in wide or its text larger",
            stacklevel=2,
        )
    display(Image(filename=str(paths[0]), width=shown))


def show_animation(
    fig: Figure, draw_frame: Callable[[Any], object], frames: Iterable[Any], interval: int = 200, *, alt: str
) -> None:
    """Animate ``fig`` over ``frames`` and show it as inline JavaScript; then close ``fig``.

    ``draw_frame(frame)`` updates the figure to one frame; it plays once, a frame every
    ``interval`` ms, without a video encoder. ``alt`` is the alt text. A run that writes no
    figures (:func:`figures_wanted`) only closes ``fig``.

    Raises
    ------
    ValueError
        If ``alt`` is empty.
    """
    import matplotlib.pyplot as plt
    from IPython.display import HTML, display
    from matplotlib.animation import FuncAnimation

    if not (isinstance(alt, str) and alt.strip()):
        plt.close(fig)
        raise ValueError("show_animation: alt must describe the animation, got an empty text")
    if not figures_wanted():
        plt.close(fig)
        return
    animation = FuncAnimation(fig, draw_frame, frames=list(frames), interval=interval)
    page = animation.to_jshtml(default_mode="once")
    plt.close(fig)
    described = page.replace('<img id="_anim_img', f'<img alt="{html.escape(alt.strip())}" id="_anim_img', 1)
    if described == page:
        raise ValueError(
            'show_animation: matplotlib\'s animation has no <img id="_anim_img..."> for the alt text'
        )
    display(HTML(described))


#: A call that shows a figure in a chapter's code cell (not its import).
_SHOW_CALL = re.compile(r"\bshow_(figure|animation)\(")
#: The name a figure is saved under: ``show_figure(fig, "<name>", layout)``.
_SAVED_NAME = re.compile(r'\bshow_figure\(\s*\w+,\s*"([^"]+)"')
#: ``alt=`` given to ``show_animation``.
_ANIMATION_ALT = re.compile(r"\bshow_animation\([^#]*\balt\s*=", re.S)


def figure_cell_problems(source: str, metadata: Mapping[str, Any]) -> list[str]:
    """What a notebook code cell that shows a figure lacks to be a numbered figure of the book.

    Such a cell must show one figure (myst-nb gives every image of a cell its caption) and carry
    the metadata of the module docstring; other cells lack nothing.
    """
    calls = _SHOW_CALL.findall(source)
    if not calls:
        return []
    if len(calls) > 1:
        return [f"shows {len(calls)} figures: a cell shows one, the figure its metadata captions"]

    texts = {}  # the texts at metadata["mystnb"][group][key], stripped ("" if there is none)
    for group, key in (("figure", "caption"), ("figure", "name"), ("image", "alt")):
        value: Any = metadata
        for part in ("mystnb", group, key):
            value = value.get(part) if isinstance(value, Mapping) else None
        texts[key] = value.strip() if isinstance(value, str) else ""
    problems = []
    if not texts["caption"]:
        problems.append("no caption (cell metadata mystnb.figure.caption)")
    name = texts["name"]
    saved = _SAVED_NAME.search(source)
    if not name:
        problems.append("no name (cell metadata mystnb.figure.name)")
    elif calls[0] == "figure" and saved and name != f"fig-{saved.group(1)}":
        problems.append(f"named {name!r}, not fig-{saved.group(1)} after the file it is saved to")
    elif not name.startswith("fig-"):
        problems.append(f"named {name!r}: a figure's name starts with fig-")
    if calls[0] == "figure" and not texts["alt"]:
        problems.append("no alt text (cell metadata mystnb.image.alt)")
    if calls[0] == "animation" and not _ANIMATION_ALT.search(source):
        problems.append("no alt text (show_animation's alt argument)")
    return problems
