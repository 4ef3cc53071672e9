"""What a chapter calls while it runs: claim checks, the registry of claims, figures, glued prose.

A notebook imports these names from here (``from ntpnb.chapter import ClaimLog, show_figure``);
each module's docstring says what it holds. Nothing here imports the runner (:mod:`ntpnb.runner`)
or the book build (:mod:`ntpnb.book`), which both build on it.
"""

from __future__ import annotations

from .._digits import format_decade, format_number, format_stable, format_stable_summary, stable_digits
from .._markdown import markdown_table
from .._samples import sample_of
from ._claims import PROFILE_NAMES, Artifact, ClaimLog, load_chapter_record
from ._figures import band, draw_contexts, draw_graph, draw_rows, four_panels, unit_rows
from ._layout import (
    DEFAULT_OUTPUT_DIRNAME,
    OutputLayout,
    Timings,
    exploratory_output_dir,
    find_project_root,
    load_timings,
    notebook_sources,
    output_layout,
    output_tree,
)
from ._outputs import atomic_write_text, load_run_record, output_lock, source_commit
from ._parameters import (
    CHANGES,
    RUN_PARAMETERS,
    chapter_parameters,
    glue_parameters,
    notebook_source,
    parse_overrides,
    profile_parameters,
    read_parameters_cell,
)
from ._platform import format_platform, platform_info
from ._plotting import COLORS, PAGE_WIDTH, show_animation, show_figure, use_style, write_figure
from ._progress import progress
from ._prose import describe_change, glue_number, glue_text, glued, sentences
from ._registry import MAPS, paper_value

#: The names a chapter imports, by theme.
__all__ = [
    "ClaimLog",
    "Artifact",
    "format_number",
    "format_decade",
    "format_stable",
    "format_stable_summary",
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
    "glued",
    "chapter_parameters",
    "glue_parameters",
    "describe_change",
    "sentences",
    "markdown_table",
]

#: What the command line, the runner's callers and the benchmarks read: layouts, records, parameters.
__all__ += [
    "CHANGES",
    "DEFAULT_OUTPUT_DIRNAME",
    "MAPS",
    "OutputLayout",
    "PROFILE_NAMES",
    "RUN_PARAMETERS",
    "Timings",
    "atomic_write_text",
    "exploratory_output_dir",
    "find_project_root",
    "format_platform",
    "load_chapter_record",
    "load_run_record",
    "load_timings",
    "notebook_source",
    "notebook_sources",
    "output_lock",
    "output_tree",
    "parse_overrides",
    "platform_info",
    "profile_parameters",
    "read_parameters_cell",
    "source_commit",
    "write_figure",
]
