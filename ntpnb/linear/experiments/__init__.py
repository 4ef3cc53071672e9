r"""The experiments of Paper A's chapters: what the notebooks run, each measured one way.

A notebook keeps the call that runs an experiment, its prints and its checks; the logic is
here, by topic (as :mod:`ntpnb.attention.paper_experiments` holds Paper B's); each submodule's
docstring lists its functions:

* :mod:`.entropy` (chapter 1): the entropy bound and Proposition 1;
* :mod:`.plane` (chapters 1 and 3): the plane of Fig. 1, its separability and its caption;
* :mod:`.path_comparisons` (chapter 2): the regularization path against a general solver and GD;
* :mod:`.phase_diagram` (chapter 4): Lemma 1 and the thresholds below it;
* :mod:`.text` (chapter 5): prefix contexts of real text and the joint problem of Appendix C;
* :mod:`.curves` (every chapter): lines, rates, summaries of runs, initializations.

Every random draw takes a ``numpy.random.Generator``, consumed in the order the notebooks
draw. The public names are re-exported by :mod:`ntpnb.linear` (and so at the top level).
"""

from __future__ import annotations

from . import curves, entropy, path_comparisons, phase_diagram, plane, text
from .curves import *  # noqa: F403
from .entropy import *  # noqa: F403
from .path_comparisons import *  # noqa: F403
from .phase_diagram import *  # noqa: F403
from .plane import *  # noqa: F403
from .text import *  # noqa: F403

#: Every public name of the submodules, in the order of the chapters.
__all__ = [
    *entropy.__all__,
    *plane.__all__,
    *path_comparisons.__all__,
    *curves.__all__,
    *phase_diagram.__all__,
    *text.__all__,
]
