"""The contract of the compiled loops, one for both papers, and how they are loaded.

The kernels of :mod:`ntpnb.linear._decoder_loops`, :mod:`ntpnb.attention._ngd_loops` and
:mod:`ntpnb.linear._gram_blocks` are compiled by :func:`jit` or :func:`jit_on_first_call`: numba's
``njit`` with its on-disk cache and without ``fastmath`` (no fused multiply-add, no reordered
sum), calling no BLAS and starting no thread: every CPU computes the same floats, and each trial
of a batch the floats it gets alone. Each kernel is tested against a numpy reference.

``import ntpnb`` does not import numba (half a second): a module of kernels is compiled by
:func:`jit` on import and imported by its callers inside the function that first needs them;
a kernel called only from Python may use :func:`jit_on_first_call` instead.

numba's cache is fresh while the kernel's own file is unchanged; a kernel here calls kernels and
reads constants of other modules (:mod:`ntpnb._optim_loops`, :mod:`ntpnb._optim`, the settings), so
its cache is stamped with the digest of every module of the package it imports, transitively
(:func:`source_digest`): an edit of any of them recompiles it instead of loading stale code.
"""

from __future__ import annotations

import ast
import functools
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

F = TypeVar("F", bound=Callable)

PACKAGE = Path(__file__).resolve().parent


def _module_file(stem: Path) -> Path | None:
    """The file of the module or package at ``stem`` (``stem.py`` or ``stem/__init__.py``), if any."""
    for candidate in (stem.with_suffix(".py"), stem / "__init__.py"):
        if candidate.is_file():
            return candidate.resolve()
    return None


def _imported_modules(path: Path, package: Path) -> set[Path]:
    """The files of ``package`` that the module at ``path`` imports (relative or by name)."""
    found: set[Path | None] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = path.parent
            for _ in range(node.level - 1):
                base = base.parent
        elif node.module and node.module.split(".")[0] == package.name:
            base = package.parent
        else:
            continue
        target = base.joinpath(*node.module.split(".")) if node.module else base
        submodules = [_module_file(target / alias.name) for alias in node.names]
        found.update(submodules)
        if node.module and not all(submodules):  # names defined by the module itself
            found.add(_module_file(target))
    package = package.resolve()
    return {module for module in found if module and package in module.parents}


@functools.cache
def source_digest(path: Path, package: Path = PACKAGE) -> str:
    """SHA-256 of the module at ``path`` and of every module of ``package`` it imports, transitively."""
    seen, todo = set(), [path.resolve()]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(_imported_modules(module, package) - seen)
    digest = hashlib.sha256()
    for module in sorted(seen):
        digest.update(str(module.relative_to(package.parent)).encode() + b"\0" + module.read_bytes())
    return digest.hexdigest()


@functools.cache
def _stamp_kernels_by_their_imports() -> None:
    """Put a locator first in numba's list that stamps the package's kernels by :func:`source_digest`.

    Files outside the package keep numba's own locators (and stamps).
    """
    from numba.core.caching import CacheImpl, InTreeCacheLocator

    class KernelLocator(InTreeCacheLocator):
        """numba's cache beside the sources, fresh while the kernel's module and its imports are."""

        @classmethod
        def from_function(cls, py_func, py_file):
            if PACKAGE not in Path(py_file).resolve().parents:
                return None
            return super().from_function(py_func, py_file)

        def get_source_stamp(self) -> str:
            return source_digest(Path(self._py_file))

    CacheImpl._locator_classes.insert(0, KernelLocator)


def jit(function: F) -> F:
    """``function`` compiled under the contract above: ``numba.njit(cache=True)``, no fastmath."""
    import numba

    _stamp_kernels_by_their_imports()
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


def cache_state() -> dict[str, int]:
    """The index files of numba's cache of the package's kernels, each with its modification time (ns).

    A process that compiles a kernel writes its index: a run between two differing states compiled
    (or another process compiled meanwhile), so its time includes numba's compiling.
    """
    found = {}
    for index in PACKAGE.rglob("*.nbi"):
        try:
            found[str(index)] = index.stat().st_mtime_ns
        except OSError:  # removed while listed
            continue
    return found
