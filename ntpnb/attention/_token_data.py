"""Paper B's data: token sequences and embeddings, and their validation.

Token ids are integers in ``[0, K)`` (the paper counts from 1); a data set is ``X`` ``(n, T)`` (or a
list of 1-D arrays of unequal lengths) with labels ``y`` ``(n,)``; embeddings ``E`` are ``(K, d)`` (row
``k`` is ``e_k``). Appendix D's random data: :mod:`ntpnb.attention._random_data`.

Internally a data set is a :class:`TokenData`: padded ids, a mask, and each sample's *query* token
``x_bar`` (the original sequence's last), kept apart: the cyclic sub-dataset (Definition 1) may
remove it from the tokens, while the graph and attention query remain that token's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._validation import as_count, as_int_array, as_ordered, frozen
from ..errors import InvalidDataError, NotRealizableError

__all__ = [
    "TokenData",
    "as_token_data",
]

Ids = np.ndarray | Sequence[Sequence[int]]


@dataclass(frozen=True)
class TokenData:
    """A validated data set of token-id sequences (read-only arrays)."""

    #: ``(n, T_max)`` integer ids, padded with 0 where ``mask`` is False.
    tokens: np.ndarray
    #: ``(n, T_max)`` booleans: which positions hold a token.
    mask: np.ndarray
    #: ``(n,)`` id of each sample's query token ``x_bar`` (the last token of the original input).
    query: np.ndarray
    #: ``(n,)`` id of each sample's next token ``y``.
    labels: np.ndarray
    #: Vocabulary size.
    K: int

    @property
    def n(self) -> int:
        """Number of samples."""
        return int(self.labels.shape[0])

    @property
    def lengths(self) -> np.ndarray:
        """Length ``T_i`` of every sequence."""
        return self.mask.sum(axis=1)

    def sequence(self, i: int) -> np.ndarray:
        """The ids of sample ``i`` (without padding)."""
        return self.tokens[i, self.mask[i]]


def drawn_token_data(X: np.ndarray, y: np.ndarray, K: int) -> TokenData:
    """:class:`TokenData` of drawn ids, valid by construction (no check; :func:`as_token_data` checks).

    ``X`` ``(n, T)``: ids in ``[0, K)``; ``y`` ``(n,)``: each label one of its row's ids. The
    query is each row's last token, as :func:`as_token_data` takes it.
    """
    tokens = np.asarray(X, dtype=np.int64)
    return TokenData(
        tokens=frozen(tokens),
        mask=frozen(np.ones(tokens.shape, dtype=bool)),
        query=frozen(tokens[:, -1]),
        labels=frozen(np.asarray(y, dtype=np.int64)),
        K=K,
    )


def as_token_data(
    X: Ids,
    y: object,
    K: int,
    *,
    query: object | None = None,
    require_realizable: bool = True,
) -> TokenData:
    """Validate a data set and return it as :class:`TokenData`.

    Parameters
    ----------
    X
        Token ids: an ``(n, T)`` integer array or a list of non-empty 1-D id sequences.
    y
        ``(n,)`` label ids.
    K
        Vocabulary size; every id must lie in ``[0, K)``.
    query
        ``(n,)`` query ids; default: the last token of every sequence.
    require_realizable
        Raise :class:`~ntpnb.errors.NotRealizableError` when a label is absent from its
        sequence (Paper B's Assumption 2).

    Raises
    ------
    InvalidDataError
        On empty data or sequences, non-integer or out-of-range ids, mismatched shapes.
    NotRealizableError
        If ``require_realizable`` and some label does not occur in its sequence.
    """
    if isinstance(X, TokenData):
        raise InvalidDataError("X is already a TokenData; pass its fields or use it directly")
    K = as_count(K, "the vocabulary size K")
    seqs = _sequences(X)
    n = len(seqs)
    labels = as_int_array(y, "y", "token id", "sample")
    if labels.shape != (n,):
        raise InvalidDataError(f"y must have shape ({n},) to match X, got {labels.shape}")
    tokens, mask = _padded(seqs)
    if query is None:
        q = np.array([s[-1] for s in seqs], dtype=np.int64)
    else:
        q = as_int_array(query, "query", "token id", "sample")
        if q.shape != (n,):
            raise InvalidDataError(f"query must have shape ({n},), got {q.shape}")
    for name, ids in (("X", tokens[mask]), ("y", labels), ("query", q)):
        bad = ids[(ids < 0) | (ids >= K)]
        if bad.size:
            raise InvalidDataError(f"{name} holds token id {int(bad[0])} outside [0, {K}) (K = {K})")
    data = TokenData(tokens=frozen(tokens), mask=frozen(mask), query=frozen(q), labels=frozen(labels), K=K)
    if require_realizable:
        _check_realizable(data)
    return data


def _sequences(X: Ids) -> list[np.ndarray]:
    """The inputs of ``X`` as non-empty 1-D int64 id arrays, at least one."""
    if isinstance(X, np.ndarray) and X.ndim == 2:
        seqs = list(X)
    elif isinstance(X, np.ndarray) and X.ndim != 1:
        raise InvalidDataError(f"X must be (n, T) or a list of sequences, got shape {X.shape}")
    else:
        seqs = as_ordered(X, "X")
    if not seqs:
        raise InvalidDataError("the data set is empty (n = 0)")
    seqs = [as_int_array(s, f"sequence {i}", "token id", "position") for i, s in enumerate(seqs)]
    for i, s in enumerate(seqs):
        if s.size == 0:
            raise InvalidDataError(f"sequence {i} is empty: every input needs at least one token")
    return seqs


def _padded(seqs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """``(tokens, mask)`` ``(n, T_max)``: the sequences padded with 0, and where they hold a token."""
    n, T = len(seqs), max(s.size for s in seqs)
    tokens = np.zeros((n, T), dtype=np.int64)
    mask = np.zeros((n, T), dtype=bool)
    for i, s in enumerate(seqs):
        tokens[i, : s.size] = s
        mask[i, : s.size] = True
    return tokens, mask


def _check_realizable(data: TokenData) -> None:
    """NotRealizableError unless every label occurs in its input (Paper B's Assumption 2)."""
    ok = np.any((data.tokens == data.labels[:, None]) & data.mask, axis=1)  # e_y occurs in the input
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise NotRealizableError(
            f"sample {i}: label {int(data.labels[i])} does not occur in its input "
            f"{data.sequence(i).tolist()} (Assumption 2, realizable labels, fails)"
        )


def check_token_data(data: object) -> TokenData:
    """``data`` itself, refused with a named error unless it is a :class:`TokenData`."""
    if not isinstance(data, TokenData):
        raise InvalidDataError(
            f"data must be a TokenData (see ntpnb.attention.as_token_data), got {type(data).__name__}"
        )
    return data


def check_embeddings(E: object, K: int | None = None) -> np.ndarray:
    """Validate an embedding table ``E`` of shape ``(K, d)``: finite floats; return a float copy.

    Raises
    ------
    InvalidDataError
        On a non-numeric ``E``, a wrong shape, a row count other than ``K``, or non-finite entries.
    """
    try:
        arr = np.array(E, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InvalidDataError(f"E must be a numeric (K, d) matrix: {exc}") from None
    if K is not None:
        K = as_count(K, "K")
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise InvalidDataError(f"E must be a (K, d) matrix, got shape {arr.shape}")
    if K is not None and arr.shape[0] != K:
        raise InvalidDataError(f"E has {arr.shape[0]} rows but the vocabulary has K = {K} tokens")
    if not np.all(np.isfinite(arr)):
        raise InvalidDataError("E has non-finite entries")
    return arr


def normalized_embeddings(E: np.ndarray) -> tuple[np.ndarray, float]:
    """``(E / c, c)`` with ``c`` the power of two nearest the largest norm of an embedding.

    The scores ``x_t^T W x_bar`` are quadratic in the embeddings, so ``W^mm(E / c) = c^2 W^mm(E)``,
    ``W^cyc(E / c) = c^2 W^cyc(E)``, with the same relations and ``S_cyc``. Dividing by a power of
    two is exact (but for subnormals, negligible); unit-norm embeddings (Appendix D) stay as they are.
    """
    m = float(np.abs(E).max(initial=0.0))
    if m == 0.0:
        return E, 1.0
    top = m * float(np.linalg.norm(E / m, axis=1).max())  # no overflow or underflow of squares
    c = float(2.0 ** np.clip(np.round(np.log2(top)), -1022, 1023))
    return (E if c == 1.0 else E / c), c
