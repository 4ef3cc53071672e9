r"""The experiments of Paper A's chapters: what the notebooks run, by topic (one submodule per chapter).

A notebook keeps the call that runs an experiment, its prints and its checks; every random draw
takes a ``numpy.random.Generator``, consumed in the order the notebooks draw.
"""

from __future__ import annotations

from . import _beyond, _curves, _entropy, _path_comparisons, _phase_diagram, _plane, _text
from ._beyond import *  # noqa: F403
from ._curves import *  # noqa: F403
from ._entropy import *  # noqa: F403
from ._path_comparisons import *  # noqa: F403
from ._phase_diagram import *  # noqa: F403
from ._plane import *  # noqa: F403
from ._text import *  # noqa: F403

#: Every public name of the submodules, in the order of the chapters.
__all__ = [
    name
    for module in (_entropy, _plane, _path_comparisons, _curves, _phase_diagram, _text, _beyond)
    for name in module.__all__
]
