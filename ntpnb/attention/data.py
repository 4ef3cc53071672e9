"""Paper B's data: token sequences, their validation, and the random generators of Appendix D.

Conventions (DESIGN.md): token ids are integers in ``[0, K)`` (the paper counts from 1), a data
set is ``X`` of shape ``(n, T)`` (or a list of 1-D arrays of unequal lengths) with labels ``y``
of shape ``(n,)``, embeddings ``E`` of shape ``(K, d)`` (row ``k`` is ``e_k``).

Internally every data set is a :class:`TokenData`: padded ids with a mask, and the id of each
sample's *query* token ``x_bar`` (the last token of the original sequence). The query is kept
apart from the tokens because the cyclic sub-dataset (Definition 1) may remove the last token
from a sequence while its graph, and the attention query, are still those of that token.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import GenerationError, InvalidDataError, NotRealizableError
from ..validation import as_count, as_generator, as_int_array, as_ordered, check_dense_size, frozen

__all__ = [
    "TokenData",
    "as_token_data",
    "check_token_data",
    "check_embeddings",
    "normalized_embeddings",
    "random_embeddings",
    "acyclic_dataset",
    "general_dataset",
]

Ids = np.ndarray | Sequence[Sequence[int]]


@dataclass(frozen=True)
class TokenData:
    """A validated data set of token-id sequences (read-only arrays).

    Attributes
    ----------
    tokens
        ``(n, T_max)`` integer ids, padded with 0 where ``mask`` is False.
    mask
        ``(n, T_max)`` booleans: which positions hold a token.
    query
        ``(n,)`` id of each sample's query token ``x_bar`` (the last token of the original input).
    labels
        ``(n,)`` id of each sample's next token ``y``.
    K
        Vocabulary size.
    """

    tokens: np.ndarray
    mask: np.ndarray
    query: np.ndarray
    labels: np.ndarray
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

    def sequences(self) -> list[np.ndarray]:
        """Every sequence as a 1-D array of ids."""
        return [self.sequence(i) for i in range(self.n)]

    def is_realizable(self) -> np.ndarray:
        """Per sample: whether ``e_y`` occurs in the input (Assumption 2)."""
        return np.any((self.tokens == self.labels[:, None]) & self.mask, axis=1)


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
        sequence (Assumption 2 of Paper B, which every result of the paper assumes).

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
    n = len(seqs)
    labels = as_int_array(y, "y", "token id", "sample")
    if labels.shape != (n,):
        raise InvalidDataError(f"y must have shape ({n},) to match X, got {labels.shape}")
    T = max(s.size for s in seqs)
    tokens = np.zeros((n, T), dtype=np.int64)
    mask = np.zeros((n, T), dtype=bool)
    for i, s in enumerate(seqs):
        tokens[i, : s.size] = s
        mask[i, : s.size] = True
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
        ok = data.is_realizable()
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise NotRealizableError(
                f"sample {i}: label {int(labels[i])} does not occur in its input "
                f"{data.sequence(i).tolist()} (Assumption 2, realizable labels, fails)"
            )
    return data


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
        On a non-numeric ``E``, a wrong shape, a vocabulary size different from ``K``, or
        non-finite entries.
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


def _rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    return as_generator(seed, allow_none=True)


def _check_sizes(K: int, n: int, T: int, distinct: bool) -> tuple[int, int, int]:
    """``(K, n, T)`` as Python ints, once checked: counts, and a draw that fits in memory."""
    K, n, T = as_count(K, "K"), as_count(n, "n"), as_count(T, "T")
    if distinct and T > K:
        raise InvalidDataError(f"cannot draw T = {T} distinct tokens from a vocabulary of K = {K}")
    check_dense_size((n, K if distinct else T), "the token draws of the data set")
    return K, n, T


def normalized_embeddings(E: np.ndarray) -> tuple[np.ndarray, float]:
    """``(E / c, c)`` with ``c`` the power of two nearest the largest norm of an embedding.

    Every answer of Paper B's convex problems scales simply with ``E`` (each score
    ``x_t^T W x_bar`` is quadratic in the embeddings): ``W^mm(E / c) = c^2 W^mm(E)`` and
    ``W^cyc(E / c) = c^2 W^cyc(E)``, the relations and ``S_cyc`` do not change. Dividing by a
    power of two is exact (unless entries fall below the normal float64 range, where they are
    negligible next to the largest), and unit-norm embeddings (Appendix D) are left as they are.
    """
    m = float(np.abs(E).max(initial=0.0))
    if m == 0.0:
        return E, 1.0
    top = m * float(np.linalg.norm(E / m, axis=1).max())  # no overflow or underflow of squares
    c = float(2.0 ** np.clip(np.round(np.log2(top)), -1022, 1023))
    return (E if c == 1.0 else E / c), c


def random_embeddings(K: int, d: int, seed: int | np.random.Generator | None = None) -> np.ndarray:
    """``E`` with rows drawn uniformly from the unit sphere of ``R^d`` (Appendix D, step 1)."""
    K, _, _ = _check_sizes(K, 1, 1, False)
    d = as_count(d, "d")
    check_dense_size((K, d), "the embeddings E")
    G = _rng(seed).standard_normal((K, d))
    return G / np.linalg.norm(G, axis=1, keepdims=True)


def _draw_tokens(rng: np.random.Generator, K: int, n: int, T: int, distinct: bool) -> np.ndarray:
    if distinct:
        return np.argsort(rng.random((n, K)), axis=1)[:, :T]
    return rng.integers(0, K, size=(n, T))


def acyclic_dataset(
    K: int,
    n: int,
    T: int,
    seed: int | np.random.Generator | None = None,
    *,
    distinct: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An acyclic data set (Appendix D): the label is the highest-priority token of its sequence.

    A random priority order of the ``K`` tokens is drawn; each input has ``T`` tokens drawn
    uniformly (distinct within the sequence when ``distinct``, as in the authors' code; with
    replacement otherwise); its label is the input token of highest priority. Every edge
    ``y -> x`` of the token-priority graphs then goes down the priority order, so the graphs
    are acyclic (Definition 2) and the labels realizable.

    Returns
    -------
    X, y, priority
        Ids ``(n, T)``, labels ``(n,)``, and ``priority[k]`` the rank of token ``k`` (0 = highest).
    """
    K, n, T = _check_sizes(K, n, T, distinct)
    rng = _rng(seed)
    priority = rng.permutation(K)
    X = _draw_tokens(rng, K, n, T, distinct)
    y = np.take_along_axis(X, np.argmin(priority[X], axis=1)[:, None], axis=1)[:, 0]
    return X, y, priority


def general_dataset(
    K: int,
    n: int,
    T: int,
    seed: int | np.random.Generator | None = None,
    *,
    distinct: bool = True,
    require_cycle: bool = True,
    max_redraws: int = 100,
) -> tuple[np.ndarray, np.ndarray]:
    """A general (possibly cyclic) data set (Appendix D) with realizable labels.

    Each input has ``T`` tokens drawn uniformly (distinct within the sequence when
    ``distinct``); its label is one of its own tokens, drawn uniformly (so Assumption 2 holds).

    With ``require_cycle`` the draw is repeated until some token-priority graph has a
    strongly-connected component with two or more nodes *and* some strict relation
    ``(i => j)`` exists (so that both ``W^cyc`` and ``W^mm`` are non-trivial, as Theorems 2-3
    assume), at most ``max_redraws`` times. At ``K = 6, n = 6, T = 4`` about half of the plain
    draws have no multi-node component; the authors' code redraws too.

    Raises
    ------
    GenerationError
        If ``require_cycle`` and no draw within ``max_redraws`` qualifies.
    """
    from .graphs import token_priority_graphs  # local import: graphs depends on this module

    K, n, T = _check_sizes(K, n, T, distinct)
    max_redraws = as_count(max_redraws, "max_redraws")
    rng = _rng(seed)
    for _ in range(max_redraws if require_cycle else 1):
        X = _draw_tokens(rng, K, n, T, distinct)
        y = X[np.arange(n), rng.integers(0, T, size=n)]
        if not require_cycle:
            return X, y
        tpg = token_priority_graphs(X, y, K)
        if tpg.has_cycle and tpg.n_strict > 0:
            return X, y
    raise GenerationError(
        f"no draw of {max_redraws} had a multi-node strongly-connected component and a strict "
        f"relation (K={K}, n={n}, T={T}, distinct={distinct}); raise max_redraws or change sizes"
    )
