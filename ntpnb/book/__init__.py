"""The book build: the pages generated from the runs' records, and the HTML book around them.

The entry is :func:`build_book` (``ntpnb book``): the tree is checked (:mod:`._trees`), the pages
are generated from the evidence (:mod:`ntpnb.evidence`) by :mod:`._report` and the project's
``benchmarks.page``, then the HTML book is built atomically (:mod:`._build`) with the Sphinx
extension :mod:`.sphinx_ext`. :mod:`._compare` compares the printed outputs of two runs (``ntpnb compare``).

It reads what the runs wrote through :mod:`ntpnb.records` (the claim record, the output tree)
and never imports the runner (:mod:`ntpnb.runner`): where ``ntpnb book`` first runs the
missing notebooks, the command line composes the two.
"""

from __future__ import annotations

from ..evidence._verdicts import CHECK_FAILED, Verdict, format_counts, sweep_verdicts
from ..records._sweep import load_sweeps
from ._build import build_book, jupyter_book, missing_notebooks
from ._compare import print_comparison
from ._report import read_tree
from ._trees import BookTree, book_tree, chapter_number, describe_unrunnable, root_option, run_folder, shown

__all__ = ["build_book", "jupyter_book", "missing_notebooks"]

#: What the command line calls besides the build: trees, verdicts, comparisons, explore pages.
__all__ += [
    "BookTree",
    "CHECK_FAILED",
    "Verdict",
    "book_tree",
    "chapter_number",
    "describe_unrunnable",
    "format_counts",
    "load_sweeps",
    "print_comparison",
    "read_tree",
    "root_option",
    "run_folder",
    "shown",
    "sweep_verdicts",
]
