"""The runner: execute the chapters with papermill at a profile, into an output tree.

The entry is :func:`reproduce` (``ntpnb reproduce``). Its parts, in the order a run meets them:

* :mod:`.choice`: which notebooks run, with which parameters, and their cache keys;
* :mod:`.lock`: one command at a time per output tree;
* :mod:`.workers`, :mod:`.jupyter_kernel`, :mod:`.processes`: one worker process and kernel per
  notebook, their environment, and how Ctrl-C ends them all;
* :mod:`.execute`, :mod:`.staging`, :mod:`.diagnosis`: one notebook executed in a staging tree,
  its outputs promoted when it succeeded, or its failure kept and described;
* :mod:`.timings`: how long each notebook took.

It builds on :mod:`ntpnb.chapter` and the core, never on the book build (:mod:`ntpnb.book`).
"""

from __future__ import annotations

from .choice import select_notebooks
from .execute import RunResult
from .lock import output_lock
from .run import DEFAULT_SEEDS, reproduce

__all__ = ["reproduce", "RunResult", "DEFAULT_SEEDS", "select_notebooks", "output_lock"]
