"""The contract of the compiled loops, one for both papers, and how they are loaded.

The kernels of :mod:`ntpnb.linear.decoder_loops`, :mod:`ntpnb.attention.ngd_loops` and
:mod:`ntpnb.linear.gram_blocks` are compiled by :func:`jit` or :func:`jit_on_first_call`: numba's
``njit`` with its on-disk cache and without ``fastmath`` (no fused multiply-add, no reordered
sum), calling no BLAS and starting no thread: every CPU computes the same floats, and each trial
of a batch the floats it gets alone. Each kernel is tested against a numpy reference.

``import ntpnb`` does not import numba (half a second): a module of kernels is compiled by
:func:`jit` on import and imported by its callers (``importlib.import_module``) when first needed;
a kernel called only from Python may use :func:`jit_on_first_call` instead.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)


def jit(function: F) -> F:
    """``function`` compiled under the contract above: ``numba.njit(cache=True)``, no fastmath."""
    import numba

    return numba.njit(cache=True)(function)


def jit_on_first_call(function: F) -> F:
    """``function`` compiled by :func:`jit` when it is first called (numba is imported then).

    For a kernel called from Python only: a compiled kernel cannot call the returned wrapper.
    """

    @functools.wraps(function)
    def call(*args: object) -> object:
        if "kernel" not in call.__dict__:
            call.__dict__["kernel"] = jit(function)
        return call.__dict__["kernel"](*args)

    return call  # type: ignore[return-value]
