"""What a chapter calls while it runs: claim checks, the registry of claims, figures, glued prose.

A notebook imports these names from here (``from ntpnb.chapter import ClaimLog, show_figure``);
each module's docstring says what it holds. Nothing here imports the runner (:mod:`ntpnb.runner`)
or the book build (:mod:`ntpnb.book`), which both build on it.
"""

from __future__ import annotations

from ..statistics import sample_of
from .claims import Artifact, ClaimLog, format_decade, format_number, format_stable, stable_digits
from .figures import band, draw_contexts, draw_graph, draw_rows, four_panels, unit_rows
from .layout import output_layout
from .parameters import chapter_parameters, glue_parameters
from .plotting import COLORS, PAGE_WIDTH, show_animation, show_figure, use_style
from .progress import progress
from .prose import describe_change, glue_number, glue_text, markdown_table, sentences
from .registry import paper_value

#: The names a chapter imports, by theme.
__all__ = [
    "ClaimLog",
    "Artifact",
    "format_number",
    "format_decade",
    "format_stable",
    "stable_digits",
    "paper_value",
    "sample_of",
    "output_layout",
    "progress",
    "COLORS",
    "PAGE_WIDTH",
    "use_style",
    "show_animation",
    "show_figure",
    "four_panels",
    "draw_contexts",
    "draw_rows",
    "unit_rows",
    "draw_graph",
    "band",
    "glue_number",
    "glue_text",
    "chapter_parameters",
    "glue_parameters",
    "describe_change",
    "sentences",
    "markdown_table",
]
