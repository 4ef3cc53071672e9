"""The training set of Paper A: distinct contexts, their probabilities, next-token distributions.

Paper A (Sec. 2) describes a training set of ``n`` (context, next token) pairs by its ``m``
distinct contexts: embeddings ``h_j`` (rows of ``H``), empirical context probabilities
``pi_j`` and empirical next-token distributions ``p_j`` (rows of ``P``) with support sets
``S_j = {z : p_jz > 0}``. :class:`NTPData` holds exactly that, validated and immutable.

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

from ..errors import InvalidDataError
from ..settings import PROB_SUM_ATOL

__all__ = ["NTPData", "as_float_array", "check_decoder", "cached_per_data"]

T = TypeVar("T")


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
        If ``x`` is not numeric, has the wrong number of dimensions, or holds NaN or inf.
    """
    try:
        arr = np.array(x, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as exc:
        raise InvalidDataError(f"{name} must be a numeric array: {exc}") from exc
    if arr.ndim != ndim:
        raise InvalidDataError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise InvalidDataError(f"{name} has a non-finite entry at index {tuple(int(i) for i in bad)}")
    arr.setflags(write=False)
    return arr


def _as_int_array(x: ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise InvalidDataError(f"{name} must be 1-dimensional, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        if not (np.issubdtype(arr.dtype, np.floating) and np.all(arr == np.round(arr))):
            raise InvalidDataError(f"{name} must hold integer ids, got dtype {arr.dtype}")
    return arr.astype(np.int64)


@dataclass(frozen=True, eq=False)
class NTPData:
    """A validated, immutable NTP training set over distinct contexts (Paper A, Eq. (2)).

    Parameters
    ----------
    H
        Context embeddings, shape ``(m, d)``; row ``j`` is ``h_j``.
    pi
        Empirical probabilities of the distinct contexts, shape ``(m,)``; positive, sum to one.
    P
        Empirical next-token distributions, shape ``(m, V)``; row ``j`` is ``p_j``.
        Non-negative rows that sum to one; the support of row ``j`` is ``S_j``.

    Raises
    ------
    InvalidDataError
        On shapes that do not match, non-finite values, negative probabilities, probabilities
        that do not sum to one, a context with zero probability or an empty support.

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
        _check_distribution(pi, "pi")
        if np.any(pi == 0):
            j = int(np.flatnonzero(pi == 0)[0])
            raise InvalidDataError(f"context {j} has probability pi_{j} = 0; drop it from the data")
        if np.any(P < 0):
            j, z = np.argwhere(P < 0)[0]
            raise InvalidDataError(f"P has a negative probability at context {j}, token {z}: {P[j, z]}")
        empty = np.flatnonzero(~np.any(P > 0, axis=1))
        if empty.size:
            raise InvalidDataError(f"context {int(empty[0])} has an empty support (its row of P is 0)")
        sums = P.sum(axis=1)
        bad = np.flatnonzero(np.abs(sums - 1.0) > PROB_SUM_ATOL)
        if bad.size:
            j = int(bad[0])
            raise InvalidDataError(f"row {j} of P sums to {sums[j]!r}, not 1")
        object.__setattr__(self, "H", H)
        object.__setattr__(self, "pi", pi)
        object.__setattr__(self, "P", P)

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
        mask = self.P > 0
        mask.setflags(write=False)
        return mask

    @property
    def supports(self) -> tuple[np.ndarray, ...]:
        """The support sets ``S_j`` as sorted arrays of token ids (0-based)."""
        return tuple(np.flatnonzero(row) for row in self.support_mask)

    @property
    def support_sizes(self) -> np.ndarray:
        """``S_j = |S_j|`` for every context."""
        return self.support_mask.sum(axis=1)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_samples(
        cls,
        contexts: ArrayLike,
        tokens: ArrayLike,
        embeddings: ArrayLike,
        vocab_size: int,
    ) -> NTPData:
        """Count ``n`` (context id, next token) pairs into distinct contexts.

        ``pi_j`` is the fraction of samples whose context is ``j`` and ``p_jz`` the fraction of
        those followed by token ``z`` (Paper A, Sec. 2: ``n pi_j p_jz`` is a count).

        Parameters
        ----------
        contexts
            Context id of each sample, integers in ``[0, m)``, shape ``(n,)``.
        tokens
            Next token of each sample, integers in ``[0, vocab_size)``, shape ``(n,)``.
        embeddings
            Embedding of each distinct context, shape ``(m, d)``; row ``j`` embeds context ``j``.
        vocab_size
            ``V``, the number of tokens.

        Raises
        ------
        InvalidDataError
            If the arrays do not match, an id is out of range, or a context never occurs.
        """
        ctx = _as_int_array(contexts, "contexts")
        tok = _as_int_array(tokens, "tokens")
        H = as_float_array(embeddings, "embeddings", 2)
        if ctx.shape != tok.shape:
            raise InvalidDataError(
                f"contexts and tokens must have the same length, got {ctx.size} and {tok.size}"
            )
        if ctx.size == 0:
            raise InvalidDataError("no samples were given")
        if int(vocab_size) != vocab_size or vocab_size < 2:
            raise InvalidDataError(f"vocab_size must be an integer >= 2, got {vocab_size!r}")
        m, V = H.shape[0], int(vocab_size)
        _check_ids(ctx, m, "context id", "rows of embeddings")
        _check_ids(tok, V, "token", "vocab_size")
        counts = np.zeros((m, V))
        np.add.at(counts, (ctx, tok), 1.0)
        per_context = counts.sum(axis=1)
        unseen = np.flatnonzero(per_context == 0)
        if unseen.size:
            raise InvalidDataError(
                f"{unseen.size} context(s) never occur in the samples, e.g. context {int(unseen[0])}"
            )
        return cls(H=H, pi=per_context / ctx.size, P=counts / per_context[:, None])

    def __repr__(self) -> str:
        return (
            f"NTPData(m={self.m}, d={self.d}, V={self.V}, "
            f"support sizes {int(self.support_sizes.min())}..{int(self.support_sizes.max())})"
        )


def _check_distribution(p: np.ndarray, name: str) -> None:
    if np.any(p < 0):
        i = int(np.flatnonzero(p < 0)[0])
        raise InvalidDataError(f"{name} has a negative entry at index {i}: {p[i]}")
    total = float(p.sum())
    if abs(total - 1.0) > PROB_SUM_ATOL:
        raise InvalidDataError(f"{name} sums to {total!r}, not 1")


def _check_ids(ids: np.ndarray, upper: int, what: str, source: str) -> None:
    bad = np.flatnonzero((ids < 0) | (ids >= upper))
    if bad.size:
        i = int(bad[0])
        raise InvalidDataError(
            f"{what} {int(ids[i])} at sample {i} is out of range [0, {upper}) set by {source}"
        )


def check_decoder(data: NTPData, W: ArrayLike, name: str = "W") -> np.ndarray:
    """Validate a decoder matrix for ``data``: shape ``(V, d)`` and finite entries.

    Returns
    -------
    numpy.ndarray
        ``W`` as a float64 array.

    Raises
    ------
    InvalidDataError
        If the shape does not match ``(data.V, data.d)`` or an entry is NaN or inf.
    """
    arr = as_float_array(W, name, 2)
    if arr.shape != (data.V, data.d):
        raise InvalidDataError(f"{name} must have shape (V, d) = {(data.V, data.d)}, got {arr.shape}")
    return arr


def cached_per_data(func: Callable[[NTPData], T]) -> Callable[[NTPData], T]:
    """Memoize a function of one :class:`NTPData` argument, once per data object.

    The data are immutable, so anything derived from them (a basis of F, the constraint
    matrices) is computed once. The cache holds weak references: it never keeps data alive.
    """
    cache: weakref.WeakKeyDictionary[NTPData, T] = weakref.WeakKeyDictionary()

    @wraps(func)
    def wrapper(data: NTPData) -> T:
        if not isinstance(data, NTPData):
            raise InvalidDataError(f"expected NTPData, got {type(data).__name__}")
        try:
            return cache[data]
        except KeyError:
            value = cache[data] = func(data)
            return value

    return wrapper
