"""A regularization path's result, one vocabulary for both papers, and the check of its radii.

Paper A's path (:func:`ntpnb.linear._regpath.regularization_path`, a linear decoder under CE) and
Paper B's (:func:`ntpnb.attention._convex.regularization_path`, one attention layer under the
log-loss) both return a :class:`RegularizationPath`: the radii asked for, the minimizers ``W_B``
over the balls ``||W|| <= B``, their KKT multipliers and the certificate's measurements, under
the same names. Each paper's path adds what only it measures (a subclass). The radii of both are
checked by :func:`checked_radii`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_float, as_float_array
from .errors import InvalidDataError

__all__ = ["RegularizationPath", "checked_radii"]


def checked_radii(radii: ArrayLike, *, increasing: bool = True) -> np.ndarray:
    """The radii as a read-only 1-D array (a scalar is one radius), or :class:`InvalidDataError`.

    Radii are numbers, finite and positive, at least one; strictly increasing when
    ``increasing`` (a path continued from radius to radius), else in any order.
    """
    arr = as_float_array(np.atleast_1d(as_float(radii, "radii")), "radii", 1)
    if arr.size == 0:
        raise InvalidDataError("radii must be a non-empty sequence")
    if np.any(arr <= 0):
        raise InvalidDataError(f"radii must be positive, got {float(arr[arr <= 0][0])!r}")
    if increasing and np.any(np.diff(arr) <= 0):
        i = int(np.flatnonzero(np.diff(arr) <= 0)[0])
        raise InvalidDataError(
            f"radii must be strictly increasing, got {float(arr[i])!r} then {float(arr[i + 1])!r}"
        )
    return arr


@dataclass(frozen=True)
class RegularizationPath:
    """The certified minimizers ``W_B`` of a loss over the balls ``||W|| <= B``, one per radius."""

    #: ``(n,)`` the radii ``B`` (Paper A: increasing; Paper B: in the caller's order).
    radii: np.ndarray
    #: ``(n, ...)`` the minimizers ``W_B``, each with ``||W_B|| = B`` (the constraint is active).
    W: np.ndarray
    #: ``(n,)`` the KKT multipliers: ``grad L(W_B) = -lam W_B``, all positive.
    lam: np.ndarray
    #: ``(n,)`` the relative KKT residual ``||grad L(W_B) + lam W_B||`` over the gradient's size
    #: (Paper A: ``||grad L(W_B)||``; Paper B: ``lam ||W_B||``, the same at a KKT point).
    kkt: np.ndarray
    #: ``(n,)`` ``| ||W_B|| - B | / B``.
    norm_error: np.ndarray

    def __len__(self) -> int:
        return len(self.radii)
