"""The training set of Paper A (Sec. 2): distinct contexts, their probabilities, next-token distributions.

Tokens and contexts are numbered from 0 in code; the papers number them from 1.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, wraps
from typing import TypeVar

import numpy as np
from numpy.typing import ArrayLike

from .. import settings
from .._validation import as_float_array, frozen
from ..errors import InvalidDataError, NumericallyAmbiguousError

T = TypeVar("T")


def _check_shapes(H: np.ndarray, pi: np.ndarray, P: np.ndarray) -> None:
    """Refuse data whose ``H`` ``(m, d)``, ``pi`` ``(m,)`` and ``P`` ``(m, V)`` do not fit (``V >= 2``)."""
    m = H.shape[0]
    if m == 0:
        raise InvalidDataError("the data need at least one context (H has 0 rows)")
    if H.shape[1] == 0:
        raise InvalidDataError("the embedding dimension d must be at least 1")
    if pi.shape != (m,):
        raise InvalidDataError(f"pi must have shape ({m},) to match H {H.shape}, got {pi.shape}")
    if P.shape[0] != m:
        raise InvalidDataError(f"P must have {m} rows to match H {H.shape}, got shape {P.shape}")
    if P.shape[1] < 2:
        raise InvalidDataError(f"the vocabulary needs at least 2 tokens, got V = {P.shape[1]}")


def _checked_pi(pi: np.ndarray) -> np.ndarray:
    """``pi``, positive and summing to 1 (renormalized in float64 if off by more than ``PROB_SUM_ATOL``).

    Raises
    ------
    InvalidDataError
        On a negative or zero entry, or a sum off 1 by more than :data:`~ntpnb.settings.PROB_SUM_RTOL`.
    """
    if np.any(pi < 0):
        j = int(np.flatnonzero(pi < 0)[0])
        raise InvalidDataError(f"pi has a negative entry at index {j}: {pi[j]}")
    total = float(pi.sum())
    if abs(total - 1.0) > settings.PROB_SUM_RTOL:
        raise InvalidDataError(f"pi sums to {total!r}, not 1")
    if abs(total - 1.0) > settings.PROB_SUM_ATOL:  # renormalized in float64
        pi = frozen(pi / total)
    if np.any(pi == 0):
        j = int(np.flatnonzero(pi == 0)[0])
        raise InvalidDataError(f"context {j} has probability pi_{j} = 0; drop it from the data")
    return pi


def _checked_P(P: np.ndarray) -> np.ndarray:  # noqa: N802 (the paper's name)
    """``P``, each row a distribution with a non-empty support (renormalized as ``pi`` is).

    Raises
    ------
    InvalidDataError
        On a negative entry, a zero row, or a row sum off 1 by more than
        :data:`~ntpnb.settings.PROB_SUM_RTOL`.
    """
    if np.any(P < 0):
        j, z = np.argwhere(P < 0)[0]
        raise InvalidDataError(f"P has a negative probability at context {j}, token {z}: {P[j, z]}")
    empty = np.flatnonzero(~np.any(P > 0, axis=1))
    if empty.size:
        raise InvalidDataError(f"context {int(empty[0])} has an empty support (its row of P is 0)")
    sums = P.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > settings.PROB_SUM_RTOL)
    if bad.size:
        j = int(bad[0])
        raise InvalidDataError(f"row {j} of P sums to {float(sums[j])!r}, not 1")
    if np.any(np.abs(sums - 1.0) > settings.PROB_SUM_ATOL):
        P = frozen(P / sums[:, None])
    return P


@dataclass(frozen=True, eq=False)
class NTPData:
    """A validated, immutable NTP training set over distinct contexts (Paper A, Eq. (2)).

    Probabilities must sum to one within :data:`ntpnb.settings.PROB_SUM_RTOL` (beyond
    :data:`ntpnb.settings.PROB_SUM_ATOL` they are divided by their sum); the arrays are stored
    as read-only float64 copies.

    Parameters
    ----------
    H
        Context embeddings, shape ``(m, d)``; row ``j`` is ``h_j``.
    pi
        Empirical probabilities of the distinct contexts, shape ``(m,)``; positive.
    P
        Empirical next-token distributions, shape ``(m, V)``; row ``j`` is ``p_j``, its
        support ``S_j``.

    Raises
    ------
    InvalidDataError
        On shapes that do not match, non-finite or complex values, negative probabilities,
        probabilities that do not sum to one, a context with zero probability or an empty
        support.

    Examples
    --------
    >>> import numpy as np
    >>> data = NTPData(H=np.eye(2), pi=[0.5, 0.5], P=[[0.5, 0.5, 0.0], [0.0, 0.25, 0.75]])
    >>> data.m, data.d, data.V
    (2, 2, 3)
    >>> [s.tolist() for s in data.supports]
    [[0, 1], [1, 2]]
    """

    H: np.ndarray
    pi: np.ndarray
    P: np.ndarray

    def __post_init__(self) -> None:
        H = as_float_array(self.H, "H", 2)
        pi = as_float_array(self.pi, "pi", 1)
        P = as_float_array(self.P, "P", 2)
        _check_shapes(H, pi, P)
        object.__setattr__(self, "H", H)
        object.__setattr__(self, "pi", _checked_pi(pi))
        object.__setattr__(self, "P", _checked_P(P))

    # ------------------------------------------------------------------ sizes and supports
    @property
    def m(self) -> int:
        """Number of distinct contexts."""
        return self.H.shape[0]

    @property
    def d(self) -> int:
        """Embedding dimension."""
        return self.H.shape[1]

    @property
    def V(self) -> int:  # noqa: N802 (the paper's name)
        """Vocabulary size."""
        return self.P.shape[1]

    @cached_property
    def support_mask(self) -> np.ndarray:
        """Boolean ``(m, V)`` array, True where token ``z`` is in the support ``S_j``."""
        return frozen(self.P > 0)

    @property
    def supports(self) -> tuple[np.ndarray, ...]:
        """The support sets ``S_j`` as sorted arrays of token ids (0-based)."""
        return tuple(np.flatnonzero(row) for row in self.support_mask)

    @property
    def support_sizes(self) -> np.ndarray:
        """``S_j = |S_j|`` for every context."""
        return self.support_mask.sum(axis=1)

    def __repr__(self) -> str:
        return (
            f"NTPData(m={self.m}, d={self.d}, V={self.V}, "
            f"support sizes {int(self.support_sizes.min())}..{int(self.support_sizes.max())})"
        )


def check_decoder(data: NTPData, W: ArrayLike, name: str = "W") -> np.ndarray:
    """``W`` as a float64 array, validated for ``data``: shape ``(V, d)`` and finite entries.

    Raises
    ------
    InvalidDataError
        If ``data`` is not :class:`NTPData`, the shape does not match ``(data.V, data.d)``, or
        an entry is NaN, inf or complex.
    """
    require_data(data)
    arr = as_float_array(W, name, 2)
    if arr.shape != (data.V, data.d):
        raise InvalidDataError(f"{name} must have shape (V, d) = {(data.V, data.d)}, got {arr.shape}")
    return arr


def require_data(data: object) -> None:
    """Raise :class:`InvalidDataError` unless ``data`` is an :class:`NTPData`."""
    if not isinstance(data, NTPData):
        raise InvalidDataError(f"expected NTPData, got {type(data).__name__}")


_MISSING = object()


def cached_per_data(func: Callable[[NTPData], T]) -> Callable[[NTPData], T]:
    """Memoize a function of one :class:`NTPData` argument, once per data object.

    The cache holds weak references (it never keeps data alive). A cached value is shared by
    every caller, so it must be immutable (:func:`frozen` arrays, frozen dataclasses). Errors
    propagate unchained and are not cached.
    """
    cache: weakref.WeakKeyDictionary[NTPData, T] = weakref.WeakKeyDictionary()

    @wraps(func)
    def wrapper(data: NTPData) -> T:
        require_data(data)
        value = cache.get(data, _MISSING)
        if value is _MISSING:
            value = cache[data] = func(data)
        return value

    return wrapper


def unambiguous(outcome: T | str) -> T:
    """A cached decision itself, or :class:`~ntpnb.errors.NumericallyAmbiguousError` for an ambiguity.

    A decision of the data's conditions is cached as its outcome, or as the message (a string) of
    its ambiguity, which is raised each time it is asked for.
    """
    if isinstance(outcome, str):
        raise NumericallyAmbiguousError(outcome)
    return outcome


def normalized(data: NTPData) -> tuple[NTPData, float]:
    """The data with ``H`` divided (exactly) by the power of two ``c`` nearest ``max|H|``, and ``c``.

    ``W*(H / c) = c W*(H)``, ``W^mm(H / c) = c W^mm(H)`` and the conditions do not change, so the
    solvers' tolerances (for entries of order one) hold at any scale. The data are ``data`` itself
    when ``c = 1``, otherwise one object per data set.

    A public function of the data normalizes them here, once, at its door; the functions named
    ``normalized_*`` (:func:`~._subspace.normalized_embedding_svd`,
    :func:`~._compatibility.normalized_finite_solution`, ...) take data already normalized and use
    them as they are, so that a computation such as the regularization path normalizes once.
    """
    copy, c = _normalized_copy(data)
    return (data if copy is None else copy), c


def nearest_power_of_two(top: float) -> float:
    """The power of two nearest ``top`` on a log scale (1 for 0): a scale that divides exactly."""
    return float(2.0 ** np.round(np.log2(top))) if top > 0 else 1.0


@cached_per_data
def _normalized_copy(data: NTPData) -> tuple[NTPData | None, float]:
    # None instead of ``data`` itself: a cached value must not refer to its weak key
    c = nearest_power_of_two(float(np.abs(data.H).max()))
    if c == 1.0:
        return None, 1.0
    return NTPData(H=data.H / c, pi=data.pi, P=data.P), c
