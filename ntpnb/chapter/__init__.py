"""What a chapter calls while it runs: claim checks, the registry of claims, figures, glued prose.

A notebook imports these names from here (``from ntpnb.chapter import ClaimLog, show_figure``);
each module's docstring says what it holds. Nothing here imports the runner (:mod:`ntpnb.runner`)
or the book build (:mod:`ntpnb.book`), which both build on it.
"""

from __future__ import annotations

from .._digits import (
    format_decade,
    format_estimate,
    format_number,
    format_relation,
    format_stable,
    format_stable_summary,
    stable_digits,
)
from .._markdown import columns_table, markdown_table
from ..evidence._checks import Artifact
from ..evidence._registry import paper_value
from ..evidence._samples import sample_of
from ..evidence._vocabulary import describe_change, describe_sample
from ..records._places import output_tree
from ._claims import ClaimLog
from ._figures import band, draw_contexts, draw_graph, draw_rows, four_panels, unit_rows
from ._parameters import chapter_parameters, glue_parameters
from ._plotting import COLORS, PAGE_WIDTH, show_animation, show_figure, use_style
from ._progress import progress
from ._prose import glue_number, glue_text, glued, sentences

#: The names a chapter imports, by theme.
__all__ = [
    "ClaimLog",
    "Artifact",
    "format_number",
    "format_estimate",
    "format_relation",
    "format_decade",
    "format_stable",
    "format_stable_summary",
    "stable_digits",
    "paper_value",
    "sample_of",
    "output_tree",
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
    "glued",
    "chapter_parameters",
    "glue_parameters",
    "describe_change",
    "describe_sample",
    "sentences",
    "markdown_table",
    "columns_table",
]
