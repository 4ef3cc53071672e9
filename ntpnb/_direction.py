"""How both papers measure a direction: the Frobenius cosine of a matrix with a reference.

Paper A compares a decoder with ``W^mm`` (and its projections with ``W*``), Paper B attention
weights with the Graph-SVM's direction; both call :func:`correlation`, which checks the arrays a
user hands it.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_float
from .errors import InvalidDataError


def correlation(W: ArrayLike, ref: ArrayLike) -> np.ndarray:
    """``<W, ref> / (||W|| ||ref||)`` in the Frobenius inner product, over the last two axes.

    Paper A: a decoder ``(V, d)`` against ``W^mm``; Paper B: attention weights ``(d, d)`` per
    trial. Leading axes broadcast; where a norm is 0 the correlation is 0. Two matrices give a
    scalar (``numpy.float64``), stacks an array.

    Raises
    ------
    InvalidDataError
        If ``W`` or ``ref`` is not a numeric array with at least two axes, or their shapes do
        not broadcast.
    """
    W, ref = as_float(W, "W"), as_float(ref, "ref")
    for name, arr in (("W", W), ("ref", ref)):
        if arr.ndim < 2:
            raise InvalidDataError(f"{name} must be a matrix or a stack of matrices, got shape {arr.shape}")
    try:
        np.broadcast_shapes(W.shape, ref.shape)
    except ValueError:
        raise InvalidDataError(f"the shapes of W {W.shape} and ref {ref.shape} do not broadcast") from None
    num = np.sum(W * ref, axis=(-2, -1))
    den = np.linalg.norm(W, axis=(-2, -1)) * np.linalg.norm(ref, axis=(-2, -1))
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)[()]  # a scalar for two matrices
