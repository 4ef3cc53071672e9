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

A caption states a number set by a parameter or the run through ``{glue:text}``, never the
parameter's name. An animation's alt text is :func:`show_animation`'s ``alt``. The book's build
refuses a cell that lacks any of these (:func:`figure_cell_problems`).

A phone reads the same figures: where a figure's text would show smaller than
:data:`LEGIBLE_PIXELS` at a phone's width, :func:`show_figure` also draws its panels in one
column (:func:`~ntpnb.chapter._one_column.one_column`) and records that layout with the shown
image (:data:`PHONE_RECORD`); the book's pages show it on a narrow screen
(:mod:`ntpnb.book._pictures`). The files in ``figures/`` are the paper's figure only.
"""

from __future__ import annotations

import base64
import html
import io
import math
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..records._files import atomic_path
from ..records._places import OutputTree, figures_wanted
from ._one_column import OneColumnError, one_column

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

#: The widest a cell's output shows on a phone 390 px wide (Chromium, the book's theme): the
#: window less :data:`COLUMN_MARGIN`.
PHONE_PIXELS: int = 342

#: How much narrower than the window a chapter's column is, in CSS pixels, in a window narrower
#: than 768 px (the theme's padding; from 768 px on, the page shows a figure at its own size).
COLUMN_MARGIN: int = 48

#: The smallest text a page may show, in CSS pixels. Lighthouse's legible-font-size audit holds
#: text under 12 px too small to read on a phone without zooming. A figure's text of
#: :data:`MIN_TEXT_POINTS` at its own size shows at 12.5 px (``figure.dpi / 72`` px a point).
LEGIBLE_PIXELS: float = 12.0

#: The width, in inches, of a figure's one-column layout for a phone: shown at its own size
#: (``figure.dpi``) it fills :data:`PHONE_PIXELS`, its text at :data:`MIN_TEXT_POINTS` or more
#: as legible as on a laptop. Saved without the tight margin, so exactly that wide.
PHONE_WIDTH: float = PHONE_PIXELS / _FIGURE_DPI

#: The widest window, in CSS pixels, and the CSS media query of the windows that show a
#: figure's phone layout: those in which a figure whose smallest text is :data:`MIN_TEXT_POINTS`,
#: shown at :data:`PAGE_PIXELS`, would shrink below :data:`LEGIBLE_PIXELS`
#: (``ntpnb/book/static/ntpnb-figures.css`` uses the same). Screens only: a printed page shows
#: the paper's figure.
PHONE_BREAKPOINT: int = (
    math.ceil(LEGIBLE_PIXELS * PAGE_PIXELS * 72 / (MIN_TEXT_POINTS * _FIGURE_DPI)) + COLUMN_MARGIN
)
PHONE_MEDIA: str = f"screen and (max-width: {PHONE_BREAKPOINT}px)"

#: The key, in a shown figure's output metadata, of its text record (:func:`figure_record`).
PHONE_RECORD: str = "ntpnb_figure"

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

    from ._log_scale import LogScale

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


def _texts(fig: Figure) -> list[tuple[str, float]]:
    """Every visible, non-empty text of ``fig`` and its size in points."""
    from matplotlib.text import Text

    found = []
    for text in fig.findobj(Text):
        label = text.get_text().strip()
        if label and text.get_visible():
            found.append((label, float(text.get_fontsize())))
    return found


def small_text(fig: Figure, shown_width: float) -> list[tuple[str, float]]:
    """The texts of ``fig`` smaller than :data:`MIN_TEXT_POINTS` as the page shows them.

    ``shown_width`` is the width the notebook shows the figure at, in pixels at ``figure.dpi``;
    the page shrinks it to at most :data:`PAGE_PIXELS`. Returns ``(text, points on the page)``
    for each visible, non-empty text that is too small, smallest first.
    """
    shrink = min(1.0, PAGE_PIXELS / shown_width) if shown_width > 0 else 1.0
    small = {}
    for label, size in _texts(fig):
        points = size * shrink
        if points < MIN_TEXT_POINTS - 1e-9:
            small[label] = min(points, small.get(label, points))
    return sorted(small.items(), key=lambda item: item[1])


def text_pixels(text_points: float, width_points: float, shown_pixels: float) -> float:
    """The size in CSS pixels of a text of ``text_points`` in an image shown ``shown_pixels`` wide.

    ``width_points`` is the image's width at the scale its text has its size in points (its
    pixels over its dpi, times 72).
    """
    return text_points * shown_pixels / width_points


def figure_record(fig: Figure, width_pixels: int, dpi: float) -> dict[str, float]:
    """The record of an image of ``fig``, ``width_pixels`` wide at ``dpi``: smallest text, width, in points.

    With them a page computes the size of that text on screen (:func:`text_pixels`).
    """
    sizes = [size for _, size in _texts(fig)]
    return {"text_points": min(sizes, default=0.0), "width_points": width_pixels * 72 / dpi}


def _cut_off(fig: Figure) -> str:
    """Which edges of ``fig`` its drawn content crosses (``""``: none): text the image would cut."""
    box = fig.get_tightbbox(fig.canvas.get_renderer())
    width, height = fig.get_size_inches()
    tol = 1 / _FIGURE_DPI
    edges = {"left": box.x0 < -tol, "right": box.x1 > width + tol}
    edges |= {"bottom": box.y0 < -tol, "top": box.y1 > height + tol}
    return ", ".join(edge for edge, crossed in edges.items() if crossed)


def phone_layout(fig: Figure) -> tuple[bytes, dict[str, float], list[str]]:
    """Re-lay ``fig`` (already saved as it is) for a phone; return its PNG, its record and its problems.

    The panels in one column :data:`PHONE_WIDTH` wide (:func:`~ntpnb.chapter._one_column.one_column`),
    saved at ``savefig.dpi`` without the tight margin. The problems: text smaller than
    :data:`MIN_TEXT_POINTS`, or cut off at an edge.

    Raises
    ------
    OneColumnError
        If the figure's panels cannot be moved.
    """
    import matplotlib as mpl

    dpi = float(mpl.rcParams["savefig.dpi"])
    fig.set_dpi(dpi)  # measured at the dpi it was saved at: matplotlib's caches of its text serve
    one_column(fig, PHONE_WIDTH)
    buffer = io.BytesIO()
    with mpl.rc_context({"savefig.bbox": "standard"}):
        fig.savefig(buffer, format="png", metadata=_METADATA[".png"])
    png = buffer.getvalue()
    record = figure_record(fig, int.from_bytes(png[16:20], "big"), dpi)  # the width in its header
    problems = [f"{label!r} ({points:.1f} pt)" for label, points in small_text(fig, PHONE_PIXELS)[:5]]
    edges = _cut_off(fig)
    if edges:
        problems.append(f"content cut off at the {edges} edge")
    return png, record, problems


def show_figure(fig: Figure, name: str, layout: OutputTree) -> None:
    """Write ``fig`` to ``<layout.figures>/<name>.png`` and ``.pdf``, close it, and display the PNG.

    Shown at the inline backend's size (``figure.dpi``), as with ``plt.show()``; returns
    nothing, so a cell ending with it shows no run-dependent paths. A run that writes no figures
    (:func:`figures_wanted`) only closes it. Text the page would show smaller than
    :data:`MIN_TEXT_POINTS` (:func:`small_text`) is a warning, which fails the book's build.

    The shown image carries its record (:func:`figure_record`) in the output's metadata under
    :data:`PHONE_RECORD`; where its text would show smaller than :data:`LEGIBLE_PIXELS` at
    :data:`PHONE_PIXELS`, the record holds its phone layout too (``"phone"``: the PNG in
    base64, its record, the CSS pixels it is shown at and :data:`PHONE_MEDIA`), and a figure
    whose panels cannot be re-laid, or whose phone layout has small or cut-off text, is a
    warning.
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
    save_dpi = float(mpl.rcParams["savefig.dpi"])
    shown = max(1, round(width * float(mpl.rcParams["figure.dpi"]) / save_dpi))
    small = small_text(fig, shown)
    record: dict[str, Any] = figure_record(fig, width, save_dpi)
    phone_problems = []
    if text_pixels(record["text_points"], record["width_points"], min(shown, PHONE_PIXELS)) < LEGIBLE_PIXELS:
        phone, phone_problems = _phone_record(fig)
        if phone is not None:
            record["phone"] = phone
    plt.close(fig)
    if small:
        warnings.warn(_small_text_message(name, small, shown), stacklevel=2)
    if phone_problems:
        warnings.warn(
            f"figure {name}: on a phone ({PHONE_PIXELS} px) its text would be smaller than "
            f"{LEGIBLE_PIXELS:g} px, and its one-column layout fails: {'; '.join(phone_problems)}",
            stacklevel=2,
        )
    display(Image(filename=str(paths[0]), width=shown), metadata={PHONE_RECORD: record})


def _phone_record(fig: Figure) -> tuple[dict[str, Any] | None, list[str]]:
    """``fig``'s phone layout as the shown image's record holds it, and its problems.

    Returns
    -------
    phone : dict or None
        The layout's record with its PNG in base64, the CSS pixels it is shown at and
        :data:`PHONE_MEDIA`; None if the panels cannot be laid out in one column.
    problems : list of str
        What is wrong with the layout (small or cut-off text, or no one-column layout).
    """
    try:
        png_bytes, phone, problems = phone_layout(fig)
    except OneColumnError as exc:
        return None, [f"its panels cannot be laid out in one column: {exc}"]
    png_text = base64.b64encode(png_bytes).decode("ascii")
    return phone | {"image/png": png_text, "shown_pixels": PHONE_PIXELS, "media": PHONE_MEDIA}, problems


def _small_text_message(name: str, small: Sequence[tuple[str, float]], shown: int) -> str:
    """The warning on figure ``name`` whose text ``small`` (label, points) is too small at ``shown`` px."""
    listed = ", ".join(f"{label!r} ({points:.1f} pt)" for label, points in small[:5])
    return (
        f"figure {name}: text smaller than {MIN_TEXT_POINTS:g} pt where the page shows the "
        f"figure ({shown} px wide, the page {PAGE_PIXELS} px): {listed}; make it at most "
        f"{PAGE_WIDTH:.2f} in wide or its text larger"
    )


def show_animation(
    fig: Figure, draw_frame: Callable[[Any], object], frames: Iterable[Any], interval: int = 200, *, alt: str
) -> None:
    """Animate ``fig`` over ``frames`` and show it as inline JavaScript; then close ``fig``.

    ``draw_frame(frame)`` updates the figure to one frame; it plays once, a frame every
    ``interval`` ms, without a video encoder. ``alt`` is the alt text. A run that writes no
    figures (:func:`figures_wanted`) only closes ``fig``.

    Shown at the inline backend's size (``figure.dpi``), at most the page's width, its frames
    drawn at ``savefig.dpi``. A figure whose text would show smaller than :data:`LEGIBLE_PIXELS`
    on a phone is shrunk, text kept, to :data:`PHONE_WIDTH` (one layout serves every screen).
    The frame's image carries its record (:func:`figure_record`) as ``data-`` attributes.

    Raises
    ------
    ValueError
        If ``alt`` is empty.
    """
    import matplotlib as mpl
    import matplotlib.pyplot as plt
    from IPython.display import HTML, display
    from matplotlib.animation import FuncAnimation

    if not (isinstance(alt, str) and alt.strip()):
        plt.close(fig)
        raise ValueError("show_animation: alt must describe the animation, got an empty text")
    if not figures_wanted():
        plt.close(fig)
        return
    frames = list(frames)
    if frames:
        draw_frame(frames[0])  # the texts a frame sets (titles), measured below
    fig.draw_without_rendering()  # and its tick labels, made when it is drawn
    width, height = fig.get_size_inches()
    record = figure_record(fig, round(width * 72), 72)
    shown = width * float(mpl.rcParams["figure.dpi"])
    if text_pixels(record["text_points"], record["width_points"], min(shown, PHONE_PIXELS)) < LEGIBLE_PIXELS:
        fig.set_size_inches(PHONE_WIDTH, height * PHONE_WIDTH / width)
        record["width_points"], shown = PHONE_WIDTH * 72, PHONE_WIDTH * float(mpl.rcParams["figure.dpi"])
    animation = FuncAnimation(fig, draw_frame, frames=frames, interval=interval)
    page = animation.to_jshtml(default_mode="once")
    plt.close(fig)
    display(HTML(_described(page, alt, shown, record)))


def _described(page: str, alt: str, shown: float, record: Mapping[str, Any]) -> str:
    """The animation's ``page`` with its frame image given ``alt``, its shown width and its record.

    Raises
    ------
    ValueError
        If the page has no frame image (``<img id="_anim_img...">``).
    """
    attributes = (
        f'alt="{html.escape(alt.strip())}" style="width: {round(shown)}px; max-width: 100%; height: auto" '
        f'data-text-points="{record["text_points"]:g}" data-width-points="{record["width_points"]:g}"'
    )
    described = page.replace('<img id="_anim_img', f'<img {attributes} id="_anim_img', 1)
    if described == page:
        raise ValueError(
            'show_animation: matplotlib\'s animation has no <img id="_anim_img..."> for the alt text'
        )
    return described


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
