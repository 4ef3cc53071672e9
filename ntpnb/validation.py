"""Checks of user input shared by every module: counts, seeds, ordered collections, sizes.

Each check raises :class:`ntpnb.errors.InvalidDataError` naming the argument and the problem
(never a raw numpy or Python exception), and returns the value in the form the caller uses.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping, MappingView, Set
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from . import settings
from .errors import InvalidDataError

__all__ = [
    "as_count",
    "as_float",
    "as_float_array",
    "as_generator",
    "as_ordered",
    "as_flag",
    "check_dense_size",
    "frozen",
]


def as_count(value: object, name: str, minimum: int = 1) -> int:
    """``value`` as a Python int, checking that it is a whole number at least ``minimum``.

    Accepts Python and numpy integers and integer-valued floats (``5000.0``); rejects booleans,
    strings, None, arrays, NaN, inf and fractions with :class:`InvalidDataError`.
    """
    kind = {0: "a non-negative integer", 1: "a positive integer"}.get(minimum, f"an integer >= {minimum}")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise InvalidDataError(f"{name} must be {kind}, got {value!r}")
    if not np.isfinite(value) or value != np.floor(value):
        raise InvalidDataError(f"{name} must be {kind}, got {value!r}")
    count = int(value)
    if count < minimum:
        raise InvalidDataError(f"{name} must be {kind}, got {value!r}")
    return count


def as_float(x: object, name: str) -> np.ndarray:
    """``x`` as a float64 array (a view when it already is one), any shape, any values.

    Raises
    ------
    InvalidDataError
        If ``x`` is not numeric: a string, None, a ragged nested list, an object.
    """
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidDataError(f"{name} must be a numeric array: {exc}") from None


def as_generator(seed: object, name: str = "seed", allow_none: bool = False) -> np.random.Generator:
    """The random generator ``seed`` names.

    ``seed`` is a non-negative integer, a ``numpy.random.Generator`` (used as is) or, if
    ``allow_none``, None (fresh entropy from the operating system).

    Raises
    ------
    InvalidDataError
        For anything else (a float, a string, a negative integer, an array, a set).
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None and allow_none:
        return np.random.default_rng()
    what = f"{name} (or {'None or ' if allow_none else ''}a numpy.random.Generator)"
    return np.random.default_rng(as_count(seed, what, minimum=0))


def as_ordered(values: object, name: str) -> list[Any]:
    """The items of an ordered collection (a list, tuple, array, range, iterator), as a list.

    Sets, dicts and their views are refused: their iteration order is not part of their value
    (a set of sequences, or a set of tokens, has no defined order), so a result computed from
    it would depend on hashing. Strings are refused too (a string is not a sequence of items
    here; the callers that take text say so).

    Raises
    ------
    InvalidDataError
        If ``values`` is unordered, a string, or not iterable.
    """
    if isinstance(values, (Set, Mapping, MappingView)):
        raise InvalidDataError(
            f"{name} must be an ordered sequence (list, tuple or array), got an unordered "
            f"{type(values).__name__}; sort it or convert it to a list in the order you mean"
        )
    if isinstance(values, (str, bytes)):
        raise InvalidDataError(f"{name} must be a sequence of items, not a string")
    if isinstance(values, np.ndarray) and values.ndim == 0:
        raise InvalidDataError(f"{name} must be a sequence, got a 0-dimensional array")
    if not isinstance(values, Iterable):
        raise InvalidDataError(f"{name} is not a sequence: {type(values).__name__}")
    return list(values)


def as_flag(value: object, name: str) -> bool:
    """``value`` as a bool: only ``True``/``False`` (Python or numpy) are accepted."""
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidDataError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_dense_size(shape: tuple[int, ...], what: str, itemsize: int = 8) -> None:
    """Refuse to allocate an array larger than :data:`ntpnb.settings.MAX_DENSE_BYTES`.

    ``itemsize`` is the size of one entry in bytes (8 for float64 and int64).
    """
    nbytes = itemsize * float(np.prod([float(n) for n in shape]))
    if nbytes > settings.MAX_DENSE_BYTES:
        raise InvalidDataError(
            f"{what} of shape {tuple(shape)} would take {nbytes / 2**30:.3g} GiB, more than "
            f"ntpnb.settings.MAX_DENSE_BYTES = {settings.MAX_DENSE_BYTES / 2**30:.3g} GiB"
        )


def frozen(arr: np.ndarray) -> np.ndarray:
    """A read-only copy of ``arr`` whose memory belongs to an immutable ``bytes`` object.

    Unlike ``setflags(write=False)``, this cannot be undone: numpy refuses
    ``setflags(write=True)`` on an array (or any view of it) whose buffer is read-only.
    """
    arr = np.ascontiguousarray(arr)
    return np.frombuffer(arr.tobytes(), dtype=arr.dtype).reshape(arr.shape)


def _reject_complex(arr: object, name: str) -> None:
    if np.iscomplexobj(arr):
        raise InvalidDataError(f"{name} must be real, got complex values")


def as_float_array(x: ArrayLike, name: str, ndim: int) -> np.ndarray:
    """Return ``x`` as a read-only float64 copy, checking its dimension and finiteness.

    Parameters
    ----------
    x
        Array-like input.
    name
        Name used in error messages.
    ndim
        Required number of dimensions.

    Raises
    ------
    InvalidDataError
        If ``x`` is not numeric (or complex), has the wrong number of dimensions, or holds NaN
        or inf.
    """
    try:
        _reject_complex(x, name)
        arr = np.array(x, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as exc:
        raise InvalidDataError(f"{name} must be a numeric array: {exc}") from None
    if arr.ndim != ndim:
        raise InvalidDataError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise InvalidDataError(f"{name} has a non-finite entry at index {tuple(int(i) for i in bad)}")
    return frozen(arr)
