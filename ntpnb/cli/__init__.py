"""The ``ntpnb`` command: run the notebooks, explore grids, build the book, compare runs, time the solvers.

It sits on the runner (:mod:`ntpnb.runner`, ``reproduce``), the book build (:mod:`ntpnb.book`,
``book`` and ``compare``) and what they share (:mod:`ntpnb.chapter`). ``ntpnb COMMAND --help``
gives every option of a command, each with what it does; the README's quick start, examples.

:mod:`._parser`: the command line's parser and its help; :mod:`._commands`: what each command
does; :mod:`._list`: ``ntpnb list``'s listing; :mod:`._checks`: a command line checked as its
command checks it, running nothing; :mod:`._main`: the console script's entry point.
"""

from __future__ import annotations

from ._main import main

__all__ = ["main"]
