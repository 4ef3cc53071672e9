"""What a chapter calls while it runs: claim checks, the registry of claims, figures, glued prose.

A notebook imports these names from here (``from ntpnb.chapter import ClaimLog, show_figure``);
each module's docstring says what it holds. Nothing here imports the runner (:mod:`ntpnb.runner`)
or the book build (:mod:`ntpnb.book`), which both build on it.
"""

from __future__ import annotations

from .._digits import format_decade, format_number, format_stable, format_stable_summary, stable_digits
from .._markdown import markdown_table
from .._samples import sample_of
from ..records._checks import PROFILE_NAMES, Artifact
from ..records._commit import source_commit
from ..records._files import atomic_write_text
from ..records._lock import output_lock
from ..records._places import (
    DEFAULT_OUTPUT_DIRNAME,
    OutputTree,
    exploratory_output_dir,
    find_project_root,
    notebook_sources,
    output_tree,
    tree_root,
)
from ..records._platform import format_platform, platform_info
from ..records._run import load_chapter_run
from ..records._timings import Timings, load_timings
from ..records._tree import load_tree_record
from ._claims import ClaimLog
from ._figures import band, draw_contexts, draw_graph, draw_rows, four_panels, unit_rows
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
    "sentences",
    "markdown_table",
]

#: What the command line, the runner's callers and the benchmarks read: layouts, records, parameters.
__all__ += [
    "CHANGES",
    "DEFAULT_OUTPUT_DIRNAME",
    "MAPS",
    "OutputTree",
    "PROFILE_NAMES",
    "RUN_PARAMETERS",
    "Timings",
    "atomic_write_text",
    "exploratory_output_dir",
    "find_project_root",
    "format_platform",
    "load_chapter_run",
    "load_tree_record",
    "load_timings",
    "notebook_source",
    "notebook_sources",
    "output_lock",
    "tree_root",
    "parse_overrides",
    "platform_info",
    "profile_parameters",
    "read_parameters_cell",
    "source_commit",
    "write_figure",
]
