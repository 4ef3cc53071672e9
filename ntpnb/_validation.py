"""Checks of user input shared by every module: counts, numbers, ids, seeds, collections, sizes.

Each check raises :class:`ntpnb.errors.InvalidDataError` naming the argument and the problem
(never a raw numpy or Python exception), and returns the value in the form the caller uses.
Arrays a result hands out are made read-only here too (:func:`frozen`, :func:`read_only_view`).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping, MappingView, Set
from dataclasses import dataclass, fields
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from . import settings
from .errors import InvalidDataError

#: Collections whose iteration order is not part of their value.
_UNORDERED = (Set, Mapping, MappingView)

#: Floats at or above this magnitude are refused as integer ids: they convert to int64 inexactly
#: or, past 2**63, not at all.
_MAX_FLOAT_ID = 2.0**62


def is_real(value: object) -> bool:
    """Whether ``value`` is one Python or numpy int or float (NaN, inf too); never a bool (a mistake)."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def is_integer(value: object) -> bool:
    """Whether ``value`` (one token id) is a Python or numpy integer, never a bool nor a float (even 3.0)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def as_count(value: object, name: str, minimum: int = 1) -> int:
    """``value`` as a Python int, checking that it is a whole number at least ``minimum``.

    The one rule for every count of the package: integers and integer-valued floats (``1e4``, as
    from JSON) are accepted; booleans, strings, None, arrays, NaN, inf and fractions are refused.
    """
    kind = {0: "a non-negative integer", 1: "a positive integer"}.get(minimum, f"an integer >= {minimum}")
    # an integer is whole whatever its size (numpy's isfinite refuses Python ints past 2**64)
    whole = is_real(value) and (
        isinstance(value, (int, np.integer)) or bool(np.isfinite(value) and value == np.floor(value))
    )
    if not whole or int(value) < minimum:
        raise InvalidDataError(f"{name} must be {kind}, got {value!r}")
    return int(value)


def as_float(x: object, name: str) -> np.ndarray:
    """``x`` as a float64 array (a view when it is one), any shape; refuses booleans, text, None, complex."""
    if not (isinstance(x, np.ndarray) and x.dtype.kind in "iufc"):
        # booleans and text where numbers are expected (numpy would convert both silently)
        try:
            items = np.asarray(x, dtype=object).ravel()
        except ValueError:  # a ragged nested list: the float conversion names it
            items = ()
        for v in items:
            if v is None or isinstance(v, (bool, np.bool_, str, bytes)):
                raise InvalidDataError(f"{name} must hold numbers, got {v!r}")
    try:
        if np.iscomplexobj(x):
            raise InvalidDataError(f"{name} must be real, got complex values")
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidDataError(f"{name} must be a numeric array: {exc}") from None


def as_generator(seed: object, name: str = "seed", allow_none: bool = False) -> np.random.Generator:
    """The random generator ``seed`` names.

    ``seed`` is a non-negative integer, a ``numpy.random.Generator`` (used as is) or, if
    ``allow_none``, None (fresh entropy from the operating system).
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None and allow_none:
        return np.random.default_rng()
    what = f"{name} (or {'None or ' if allow_none else ''}a numpy.random.Generator)"
    return np.random.default_rng(as_count(seed, what, minimum=0))


def as_ordered(values: object, name: str) -> list[Any]:
    """The items of an ordered collection (a list, tuple, array, range, iterator), as a list.

    Sets, dicts and their views are refused (a result would depend on hashing), and so are strings.
    """
    if isinstance(values, _UNORDERED):
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
    """Refuse an array of entries of ``itemsize`` bytes larger than :data:`ntpnb.settings.MAX_DENSE_BYTES`."""
    nbytes = itemsize * float(np.prod([float(n) for n in shape]))
    if nbytes > settings.MAX_DENSE_BYTES:
        raise InvalidDataError(
            f"{what} of shape {tuple(shape)} would take {nbytes / 2**30:.3g} GiB, more than "
            f"ntpnb.settings.MAX_DENSE_BYTES = {settings.MAX_DENSE_BYTES / 2**30:.3g} GiB"
        )


def frozen(arr: ArrayLike, order: Literal["C", "K"] = "C") -> np.ndarray:
    """A read-only copy of ``arr`` whose memory belongs to an immutable ``bytes`` object.

    How every array a result holds or returns is made read-only; unlike
    ``setflags(write=False)``, it cannot be undone. ``arr`` itself is left as it was.

    Parameters
    ----------
    order
        The copy's memory layout: ``"C"`` C-contiguous; ``"K"`` the order of ``arr``'s axes in
        memory, so that later BLAS products or sums on the copy give the same bits as on ``arr``.
    """
    arr = np.asarray(arr)
    if order == "K" and arr.ndim > 1:
        axes = sorted(range(arr.ndim), key=lambda k: -abs(arr.strides[k]))  # outermost first
        return frozen(arr.transpose(axes)).transpose(np.argsort(axes))
    arr = np.asarray(arr, order="C")  # not np.ascontiguousarray, which makes a 0-d array 1-d
    return np.frombuffer(arr.tobytes(), dtype=arr.dtype).reshape(arr.shape)


def is_frozen(arr: np.ndarray) -> bool:
    """Whether ``arr`` is (a view of) a :func:`frozen` array: read-only memory of a ``bytes`` object."""
    base: object = arr
    while isinstance(base, np.ndarray):
        if base.flags.writeable:
            return False
        base = base.base
    return isinstance(base, bytes)


@dataclass(frozen=True, eq=False)
class FrozenArrays:
    """A base of immutable results: every ``numpy.ndarray`` field is :func:`frozen` once, when one is made.

    The arrays keep their memory layout (``order="K"``), so products with them give the bits they
    gave before; arrays that are frozen already are kept as they are.
    """

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray) and not is_frozen(value):
                object.__setattr__(self, f.name, frozen(value, order="K"))


def read_only_view(arr: np.ndarray) -> np.ndarray:
    """A view of ``arr`` (e.g. an iterate updated in place) that cannot be written through."""
    view = arr.view()
    view.setflags(write=False)
    return view


def as_int_array(values: object, name: str, what: str = "id", where: str = "index") -> np.ndarray:
    """``values`` as a new 1-D int64 array of ids; floats only if whole and below ``2**62`` (exact).

    The caller checks the range.

    Parameters
    ----------
    what
        What one entry is (``"token id"``), to name a bad entry.
    where
        What an index into ``values`` counts (``"sample"``, ``"position"``), to place it.
    """
    if isinstance(values, _UNORDERED):
        raise InvalidDataError(f"{name} must be an ordered sequence of ids, got a {type(values).__name__}")
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError) as exc:  # ragged nested lists
        raise InvalidDataError(f"{name} must be a 1-dimensional array of integer ids: {exc}") from None
    if arr.ndim != 1:
        raise InvalidDataError(f"{name} must be 1-dimensional, got shape {arr.shape}")
    if arr.size == 0 or np.issubdtype(arr.dtype, np.integer):
        return arr.astype(np.int64)
    if not np.issubdtype(arr.dtype, np.floating):
        raise InvalidDataError(f"{name} must hold integer ids, got dtype {arr.dtype}")
    bad = np.flatnonzero(~np.isfinite(arr) | (arr != np.round(arr)) | (np.abs(arr) >= _MAX_FLOAT_ID))
    if bad.size:
        i = int(bad[0])
        raise InvalidDataError(
            f"{name} must hold integer ids: {what} {float(arr[i])!r} at {where} {i} is not one"
        )
    return arr.astype(np.int64)


def as_float_array(x: ArrayLike, name: str, ndim: int) -> np.ndarray:
    """:func:`as_float` as a read-only copy, checking its dimension and finiteness."""
    arr = as_float(x, name)
    if arr.ndim != ndim:
        raise InvalidDataError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise InvalidDataError(f"{name} has a non-finite entry at index {tuple(int(i) for i in bad)}")
    return frozen(arr)
