"""ntpnb: executable companion to two papers on the implicit bias of next-token prediction.

The top-level names are every public name of :mod:`ntpnb.linear`, Paper A's linear model: the
data (:class:`NTPData`, seeded recipes), the loss, the subspace F and ``W*``, the NTP-SVM
``W^mm``, the regularization path, training, sequences and the conditions' thresholds over
random instances. Paper B's self-attention model is :mod:`ntpnb.attention`; the first-order
methods of both, :mod:`ntpnb._optim`. Notebooks and the book are run by :mod:`ntpnb.chapter`
(what a chapter calls), :mod:`ntpnb.runner`, :mod:`ntpnb.book` and the ``ntpnb`` command
(:mod:`ntpnb.cli`); :mod:`ntpnb.settings` holds the numerical settings, :mod:`ntpnb.errors`
the error types, :mod:`ntpnb._validation` the checks of user input; random trials run through
:mod:`ntpnb._parallel` and are summarized by :mod:`ntpnb.statistics`.

``import ntpnb`` loads numpy and the package's modules but no heavy library a chapter may need
(SciPy's submodules, numba, joblib, matplotlib, CVXPY: each is imported by the function that
uses it), so the runner starts in a fraction of a second.
"""

from __future__ import annotations

from . import attention, errors, optim
from ._direction import correlation
from .errors import *  # noqa: F403
from .linear import *  # noqa: F403
from .linear import __all__ as _linear_names

__version__ = "0.1.0"  # the one source of the version: pyproject.toml reads it


def compile_kernels() -> None:
    """Compile the package's compiled training loops (both papers'), or load them from numba's cache.

    The first compilation takes tens of seconds; numba keeps the result next to the sources, so
    later processes only load it. The set-up of ``./run.sh`` and Binder's build call this, so
    that no chapter waits for the compiler.
    """
    from .attention._batched_training import compile_kernels as compile_attention
    from .linear._descent import compile_kernels as compile_linear

    compile_linear()
    compile_attention()


#: Every public name of :mod:`ntpnb.linear`, then the papers' other packages, every error type
#: (:mod:`ntpnb.errors`) and the package's own.
__all__ = [
    *_linear_names,
    "optim",
    "attention",
    *errors.__all__,
    "compile_kernels",
    "__version__",
]

#: The correlation of two matrices, the measure of direction both papers use.
__all__ += ["correlation"]
