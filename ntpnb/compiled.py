"""The contract of the compiled loops, one for both papers, and how they are loaded.

The kernels of :mod:`ntpnb.linear.decoder_loops`, :mod:`ntpnb.attention.ngd_loops` and
:mod:`ntpnb.linear.gram_blocks` are compiled by :func:`jit`: numba's ``njit`` with its on-disk
cache and without ``fastmath``, so LLVM neither fuses a multiply and an add nor reorders a sum.
No kernel calls BLAS or starts a thread. So every CPU computes the same floats, whatever its
BLAS kernel and thread count, and a batch of trials gives each trial the floats it gets alone.
Each kernel computes what a numpy function of the package computes, its reference, and the
tests check the two against each other.

A kernel module loads numba (about half a second). The modules that call one load it with
:func:`kernel_module` when they first need it, so that ``import ntpnb`` does not.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import TypeVar

__all__ = ["jit", "kernel_module"]

F = TypeVar("F", bound=Callable)


def jit(function: F) -> F:
    """``function`` compiled under the contract above: ``numba.njit(cache=True)``, no fastmath."""
    import numba

    return numba.njit(cache=True)(function)


def kernel_module(name: str, package: str) -> ModuleType:
    """The kernel module ``name`` (relative to ``package``), imported the first time it is asked for."""
    return importlib.import_module(name, package)
