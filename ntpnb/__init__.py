"""ntpnb: executable companion to two papers on the implicit bias of next-token prediction.

The top-level names are Paper A's linear model (every public name of :mod:`ntpnb.linear`):
the data (:class:`NTPData` and the seeded recipes), the loss, the subspace F with the finite
solution ``W*``, the NTP-SVM ``W^mm``, the regularization path, training, sequences and the
thresholds of the conditions over random instances. Paper B's self-attention model is the
subpackage :mod:`ntpnb.attention`; the first-order methods shared by both are
:mod:`ntpnb.optim`. The machinery that runs notebooks and builds the book is apart, in three
packages: what a chapter calls while it runs (:mod:`ntpnb.chapter`), the runner
(:mod:`ntpnb.runner`) and the book build (:mod:`ntpnb.book`), with the ``ntpnb`` command
(:mod:`ntpnb.cli`) on top; the numerical settings in :mod:`ntpnb.settings`, the error types in
:mod:`ntpnb.errors` and the shared checks of user input in :mod:`ntpnb.validation`. Many random
trials run through :mod:`ntpnb.parallel` and are summarized by :mod:`ntpnb.statistics`.

``import ntpnb`` loads numpy and the package's modules, but none of the heavy libraries a
chapter may need (SciPy's submodules, numba, joblib, matplotlib, CVXPY): each is imported by the
function that uses it, so the runner, which lives in this package, starts in a fraction of a
second.
"""

from __future__ import annotations

from . import attention, errors, optim
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
    from .attention.engine import compile_kernels as compile_attention
    from .linear.descent import compile_kernels as compile_linear

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
