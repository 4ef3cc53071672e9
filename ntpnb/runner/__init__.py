"""The runner: execute the chapters with papermill at a profile, into an output tree.

The entry is :func:`reproduce` (``ntpnb reproduce``). Its parts, in the order a run meets them:
:mod:`._check` (which notebooks run, with which parameters, into which tree: checked before
anything is written), :mod:`._plan` (each run at each seed, and which of them the cache already
holds), :mod:`._workers` and :mod:`._jupyter_kernel` (a worker process and a kernel per notebook,
their environment, how Ctrl-C ends them all; on a Dask cluster :mod:`._cluster`),
:mod:`._execute` (one notebook executed in a staging tree, its outputs promoted when it
succeeded, or its failure kept and described) and :mod:`._display` (the progress). It builds on
:mod:`ntpnb.records` (output trees, the records of runs, how outputs are written, locked,
cached and verified), :mod:`ntpnb.chapter` and the core, never on the book build
(:mod:`ntpnb.book`).
"""

from __future__ import annotations

from ..records._cache import package_fingerprint
from ..records._places import DEFAULT_SEEDS, EXPLORE_SEEDS
from ..records._run import ChapterRun, int_seed
from ..records._timings import (
    BENCHMARK,
    REFRESH_COMMAND,
    ChapterTimes,
    Expected,
    describe_record,
    expected_time,
    format_expected,
    load_chapter_times,
    refresh_minutes,
    run_sources,
    write_chapter_times,
)
from ._check import check_run, select_notebooks
from ._explore import check_explore, explore
from ._run import reproduce
from ._workers import STOP_SIGNALS, signals_handled

__all__ = ["reproduce", "ChapterRun", "DEFAULT_SEEDS", "select_notebooks"]

#: What the command line and the benchmarks call besides :func:`reproduce`.
__all__ += [
    "BENCHMARK",
    "ChapterTimes",
    "EXPLORE_SEEDS",
    "Expected",
    "REFRESH_COMMAND",
    "STOP_SIGNALS",
    "check_explore",
    "check_run",
    "describe_record",
    "expected_time",
    "explore",
    "format_expected",
    "int_seed",
    "load_chapter_times",
    "package_fingerprint",
    "refresh_minutes",
    "run_sources",
    "signals_handled",
    "write_chapter_times",
]
