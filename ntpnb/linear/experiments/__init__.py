r"""The experiments of Paper A's chapters: what the notebooks run, by topic (one submodule per chapter).

A notebook keeps the call that runs an experiment, its prints and its checks; every random draw
takes a ``numpy.random.Generator``, consumed in the order the notebooks draw.
"""

from __future__ import annotations

from . import beyond, curves, entropy, path_comparisons, phase_diagram, plane, text
from .beyond import *  # noqa: F403
from .curves import *  # noqa: F403
from .entropy import *  # noqa: F403
from .path_comparisons import *  # noqa: F403
from .phase_diagram import *  # noqa: F403
from .plane import *  # noqa: F403
from .text import *  # noqa: F403

#: Every public name of the submodules, in the order of the chapters.
__all__ = [
    name
    for module in (entropy, plane, path_comparisons, curves, phase_diagram, text, beyond)
    for name in module.__all__
]
