"""The records layer: output trees, the records of runs, and how they are written and trusted.

Below the runner, the book and the explorer (and the chapter helpers, which write records), above
the core: nothing here imports :mod:`ntpnb.chapter`, :mod:`ntpnb.runner`, :mod:`ntpnb.book`,
:mod:`ntpnb.explore` or the command line. Each module's docstring says what it holds.
"""

from ._commit import source_commit
from ._files import atomic_write_text
from ._lock import output_lock
from ._places import (
    DEFAULT_OUTPUT_DIRNAME,
    OutputTree,
    exploratory_output_dir,
    find_project_root,
    notebook_sources,
    tree_root,
)
from ._platform import format_platform, platform_info
from ._run import PROFILE_NAMES, load_chapter_run
from ._timings import Timings, load_timings
from ._tree import load_tree_record

#: What the command line, the runner's callers and the benchmarks read: trees, records, writes
#: (a notebook's tree, ``output_tree``, and its stored values, ``Artifact``: from :mod:`ntpnb.chapter`).
__all__ = [
    "DEFAULT_OUTPUT_DIRNAME",
    "OutputTree",
    "PROFILE_NAMES",
    "Timings",
    "atomic_write_text",
    "exploratory_output_dir",
    "find_project_root",
    "format_platform",
    "load_chapter_run",
    "load_timings",
    "load_tree_record",
    "notebook_sources",
    "output_lock",
    "platform_info",
    "source_commit",
    "tree_root",
]
