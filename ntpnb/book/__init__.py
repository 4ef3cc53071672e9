"""The book build: the pages generated from the runs' records, and the HTML book around them.

The entry is :func:`build_book` (``ntpnb book``). Its parts:

* :mod:`.verdicts`: one verdict per claim, from the checks the chapters recorded;
* :mod:`.report`: the reproducibility report, the claims page and the introduction's verdicts;
* :mod:`.benchmarks_page`: the benchmarks page, with the notebooks' reproduction times;
* :mod:`.sphinx_ext`: the Sphinx extension (broken notebooks fail the build, offline MathJax,
  chapter buttons) and :mod:`.binder`, the Binder links it and the README use;
* :mod:`.compare`: the printed outputs of two runs compared (``ntpnb compare``).

It reads what the runs wrote through :mod:`ntpnb.chapter` (the claim record, the output layout)
and never imports the runner (:mod:`ntpnb.runner`): where ``ntpnb book`` first runs the
missing notebooks, the command line composes the two.
"""

from __future__ import annotations

from .build import build_book, jupyter_book, missing_notebooks

__all__ = ["build_book", "jupyter_book", "missing_notebooks"]
