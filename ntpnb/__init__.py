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

The science is imported when first used (:mod:`ntpnb._lazy`): ``import ntpnb`` alone loads
neither numpy nor a solver, so the runner, which lives in this package, starts in a fraction of
a second, and a chapter loads only what it calls.
"""

from __future__ import annotations

from ._lazy import lazy_exports

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


#: The public names after Paper A's (``linear.__all__``), which come first in ``__all__``.
_NAMED = [
    "optim",
    "attention",
    "NTPError",
    "InvalidDataError",
    "NotCompatibleError",
    "NotSeparableError",
    "SolverError",
    "PathCertificateError",
    "ClaimCheckError",
    "compile_kernels",
    "__version__",
]


def _public() -> list[str]:
    """``__all__``: every public name of :mod:`ntpnb.linear`, then :data:`_NAMED`."""
    from . import linear

    return [*linear.__all__, *_NAMED]


__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "attention": ".attention",
        "optim": ".optim",
        **dict.fromkeys(_NAMED[2:-2], ".errors"),
    },
    every_name_of=".linear",
    public=_public,
)
