"""What a chapter calls while it runs: claim checks, the registry of claims, figures, glued prose.

A notebook imports these names from here (``from ntpnb.chapter import ClaimLog, show_figure``):

* :mod:`.claims`: :class:`ClaimLog` checks a paper's claim, prints it, records it and fails the
  run when it does not hold; its record (:class:`ChapterRecord` of :class:`Check` objects) has
  one dump and one load, which the runner and the book read; the chapter's claim table;
  the formatting of measured numbers;
* :mod:`.registry`: every claim of the two papers by id, with its statement and the paper's
  numbers (:func:`paper_value`), written once;
* :mod:`.plotting`: the figure style and figure files; :mod:`.figures`: the panels the
  chapters draw (Paper A's four panels, Fig. 1, token-priority graphs, bands over trials);
  :mod:`.prose`: numbers glued into the chapter's text, and the phrases and tables written
  from them; :mod:`.parameters`: every notebook's parameters per profile, glued into its prose
  with the values of the run (:func:`glue_parameters`);
* :mod:`.progress`: the progress of a long loop, shown in Jupyter or by ``ntpnb reproduce``;
* :mod:`.platform`: the machine a run recorded (CPU, BLAS kernel and threads, versions);
* :mod:`.paths` and :mod:`.atomic`: where outputs go, and how every file is written.

Nothing here imports the runner (:mod:`ntpnb.runner`) or the book build (:mod:`ntpnb.book`),
which both build on it.
"""

from __future__ import annotations

from .._lazy import lazy_exports

# imported here, not when first used: the module has the name of its function, and importing it
# later (the runner, a figure's progress) would bind the module in its place
from .progress import Progress, progress

#: Where each public name lives; imported when first used (:mod:`ntpnb._lazy`), so that the
#: runner, which reads the claim records and the output layout, loads neither matplotlib nor
#: the science.
_ORIGINS = {
    **dict.fromkeys(
        [
            "KINDS",
            "PROFILE_NAMES",
            "ChapterRecord",
            "Check",
            "ClaimLog",
            "format_decade",
            "format_decade_range",
            "format_number",
            "format_requirement",
            "format_stable",
            "load_chapter_record",
            "load_chapter_records",
            "stable_digits",
        ],
        ".claims",
    ),
    **dict.fromkeys(
        ["band", "draw_contexts", "draw_graph", "draw_rows", "draw_unit_rows", "four_panels", "unit_rows"],
        ".figures",
    ),
    **dict.fromkeys(["OutputLayout", "output_layout"], ".paths"),
    **dict.fromkeys(["COLORS", "PAGE_WIDTH", "show_animation", "show_figure", "use_style"], ".plotting"),
    **dict.fromkeys(["describe_change", "glue_number", "glue_text", "markdown_table", "sentences"], ".prose"),
    **dict.fromkeys(["CLAIMS", "claim_spec", "paper_value"], ".registry"),
    "glue_parameters": ".parameters",
    **dict.fromkeys(["Sample", "sample_of"], ".statistical"),
}

__all__ = [
    "ClaimLog",
    "Check",
    "ChapterRecord",
    "load_chapter_record",
    "load_chapter_records",
    "KINDS",
    "PROFILE_NAMES",
    "format_number",
    "format_decade",
    "format_decade_range",
    "format_requirement",
    "format_stable",
    "stable_digits",
    "CLAIMS",
    "claim_spec",
    "paper_value",
    "Sample",
    "sample_of",
    "OutputLayout",
    "output_layout",
    "Progress",
    "progress",
    "COLORS",
    "PAGE_WIDTH",
    "use_style",
    "show_animation",
    "show_figure",
    "four_panels",
    "draw_contexts",
    "draw_rows",
    "draw_unit_rows",
    "unit_rows",
    "draw_graph",
    "band",
    "glue_number",
    "glue_text",
    "glue_parameters",
    "describe_change",
    "sentences",
    "markdown_table",
]

__getattr__, __dir__ = lazy_exports(__name__, _ORIGINS)
