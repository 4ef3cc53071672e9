"""The evidence: what a claim is, how a check is decided, what a claim's verdict is across seeds.

The product's own domain, with one home below everything that stores, renders or maps it
(:mod:`ntpnb.records` stores it, :mod:`ntpnb.chapter` makes it while a chapter runs,
:mod:`ntpnb.book` renders it, :mod:`ntpnb.explore` applies it across a grid): none of them
decides. It reads no files and writes no markup, and imports none of those layers.

* :mod:`._registry`: the claims of both papers and the maps beyond them, one entry each, with
  the paper's values;
* :mod:`._samples`: the statistical tests of a check's trials, pooled over seeds;
* :mod:`._checks` and :mod:`._decide`: one check at one seed, and how it is decided;
* :mod:`._series`: one check at every seed of a sweep, decided as its basis says;
* :mod:`._verdicts`: a claim's verdict across the seeds, its kind and its reasons;
* :mod:`._vocabulary`: the one vocabulary in which all of these are said.
"""

from __future__ import annotations

from ._registry import CLAIMS, MAPS, PAPERS
from ._series import Sweep
from ._verdicts import CHECK_FAILED, VERDICTS, Verdict, format_counts, sweep_verdicts

#: What the command line and the benchmarks read of the evidence.
__all__ = [
    "CHECK_FAILED",
    "CLAIMS",
    "MAPS",
    "PAPERS",
    "VERDICTS",
    "Sweep",
    "Verdict",
    "format_counts",
    "sweep_verdicts",
]
