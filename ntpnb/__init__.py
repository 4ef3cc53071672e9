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

``import ntpnb`` loads the error types only: the models' names (those of :mod:`ntpnb.linear`,
``attention``, ``optim``, ``correlation``) load on first use (:func:`__getattr__`), so that the
``ntpnb`` command, whose package this is too, starts without them. They load numpy and the
package's modules but no heavy library a chapter may need (SciPy's submodules, numba, joblib,
matplotlib, CVXPY: each is imported by the function that uses it).
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from . import errors
from .errors import *  # noqa: F403

__version__ = "0.1.0"  # the one source of the version: pyproject.toml reads it

#: The names this module gives besides those of :mod:`ntpnb.linear` (which :func:`__getattr__` loads).
_OWN = ("optim", "attention", *errors.__all__, "compile_kernels", "__version__", "correlation")


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


def _library() -> dict[str, Any]:
    """The names of the models, loaded: every public name of :mod:`ntpnb.linear`, and ``correlation``."""
    linear = importlib.import_module(".linear", __name__)
    names = {name: getattr(linear, name) for name in linear.__all__}
    names["correlation"] = importlib.import_module("._direction", __name__).correlation
    #: Every public name of :mod:`ntpnb.linear`, then the papers' other packages, every error type
    #: (:mod:`ntpnb.errors`) and the package's own, and the measure of direction both papers use.
    names["__all__"] = [*linear.__all__, *_OWN]
    return names


def __getattr__(name: str) -> Any:
    """A name of the models, or a subpackage, loaded on its first use (PEP 562) and kept from then on.

    A subpackage or module of the package (``ntpnb.attention``, ``ntpnb.settings``) is imported
    alone, as ``import`` itself would; any other name loads the models (:func:`_library`).
    """
    if name.startswith("__") and name != "__all__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")
    names = _library()
    globals().update(names)
    if name not in names:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return names[name]


def __dir__() -> list[str]:
    """Every name of the module, the models' too (which it loads)."""
    return sorted(set(globals()) | set(_library()) | {"attention", "optim"})
