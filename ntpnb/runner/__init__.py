"""The runner: execute the chapters with papermill at a profile, into an output tree.

The entry is :func:`reproduce` (``ntpnb reproduce``). Its parts, in the order a run meets them:
:mod:`.choice` (which notebooks run, with which parameters, their cache keys and timings;
:mod:`.timings`, what a chapter is expected to take),
:mod:`.workers` and :mod:`.jupyter_kernel` (a worker process and a kernel per notebook, their
environment, how Ctrl-C ends them all; on a Dask cluster :mod:`.cluster`), :mod:`.execute` (one
notebook executed in a staging tree, its outputs promoted when it succeeded, or its failure kept
and described) and :mod:`.display` (the progress). It builds on :mod:`ntpnb.chapter` (how outputs
are written, locked and verified: :mod:`ntpnb.chapter.outputs`) and the core, never on the book
build (:mod:`ntpnb.book`).
"""

from __future__ import annotations

from .choice import DEFAULT_SEEDS, select_notebooks
from .execute import RunResult
from .run import reproduce

__all__ = ["reproduce", "RunResult", "DEFAULT_SEEDS", "select_notebooks"]
