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

from typing import Any

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
from ._signals import STOP_SIGNALS, signals_handled


def __getattr__(name: str) -> Any:
    """A running command's entries, loaded on first use (PEP 562): a refused command loads none of them.

    :func:`reproduce` and :func:`run_checked` (:mod:`._run`, with the workers and kernels), and
    :func:`explore` and :func:`check_explore` (:mod:`._explore`, with the maps and their book).
    """
    if name in ("reproduce", "run_checked"):
        from ._run import reproduce, run_checked

        return {"reproduce": reproduce, "run_checked": run_checked}[name]
    if name in ("check_explore", "explore"):
        from ._explore import check_explore, explore

        return {"check_explore": check_explore, "explore": explore}[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    "run_checked",
    "run_sources",
    "signals_handled",
    "write_chapter_times",
]
