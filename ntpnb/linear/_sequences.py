r"""Sequences to the NTP data of Paper A (Appendix C: the autoregressive setting).

A sequence ``x_1 ... x_T`` gives ``T - 1`` (context, next token) pairs: each prefix followed by
the next token. Counted over the ``m = sum_t m_t`` distinct prefixes of all lengths
(:func:`prefix_contexts`), the autoregressive cross-entropy averaged over all pairs is exactly
the loss (2). Token ids are integers in ``[0, V)``; contexts are tuples of ids.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .. import settings
from .._validation import as_count, as_flag, as_generator, as_ordered, check_dense_size, frozen, is_integer
from ..errors import InvalidDataError
from ._loss import entropy
from ._ntp_data import NTPData, as_float_array


def _id_tuples(sequences: Iterable[Sequence[int]], vocab_size: int) -> list[tuple[int, ...]]:
    """The sequences of :func:`prefix_contexts` as tuples of ints, each checked (errors name it)."""
    if isinstance(sequences, (str, bytes)):
        raise InvalidDataError("sequences must be a collection of id sequences, not a single string")
    items = as_ordered(sequences, "sequences")
    fast = _plain_id_tuples(items, vocab_size)
    if fast is not None:
        return fast
    out: list[tuple[int, ...]] = []
    for i, seq in enumerate(items):
        if isinstance(seq, (str, bytes)):
            raise InvalidDataError(f"sequence {i} is a string; encode it to token ids first")
        if isinstance(seq, np.ndarray):
            if seq.ndim != 1:
                raise InvalidDataError(f"sequence {i} must be 1-dimensional, got shape {seq.shape}")
            seq = seq.tolist()
        tokens = as_ordered(seq, f"sequence {i}")
        if not tokens:
            raise InvalidDataError(f"sequence {i} is empty")
        for t, tok in enumerate(tokens):
            if not is_integer(tok):
                raise InvalidDataError(
                    f"sequence {i}, position {t}: token {tok!r} of type {type(tok).__name__} "
                    "is not an integer id (mixed types)"
                )
            if not 0 <= tok < vocab_size:
                raise InvalidDataError(
                    f"sequence {i}, position {t}: token id {tok} is out of range [0, {vocab_size})"
                )
        out.append(tuple(int(tok) for tok in tokens))
    if not out:
        raise InvalidDataError("no sequences were given")
    return out


def _plain_id_tuples(items: list[Any], vocab_size: int) -> list[tuple[int, ...]] | None:
    """``items`` itself when it is non-empty tuples of ints in ``[0, vocab_size)`` (checked at C speed)."""
    if not items or set(map(type, items)) != {tuple} or not all(items):
        return None
    tokens = list(chain.from_iterable(items))
    if set(map(type, tokens)) != {int} or min(tokens) < 0 or max(tokens) >= vocab_size:
        return None
    return items


@dataclass(frozen=True, eq=False)
class PrefixContexts:
    """The distinct prefix contexts of a collection of sequences, with their counts."""

    #: The ``m`` distinct contexts (tuples of token ids), ordered by length, then lexicographically.
    contexts: tuple[tuple[int, ...], ...]
    #: ``(m, V)`` integer array: ``counts[j, z]`` is how often context ``j`` is followed by token ``z``.
    counts: np.ndarray

    @property
    def m(self) -> int:
        """Number of distinct contexts (all lengths)."""
        return len(self.contexts)

    @property
    def V(self) -> int:  # noqa: N802 (the paper's name)
        """Vocabulary size."""
        return self.counts.shape[1]

    @cached_property
    def lengths(self) -> np.ndarray:
        """Length ``t`` of each context, shape ``(m,)``."""
        return np.array([len(c) for c in self.contexts], dtype=np.int64)

    @property
    def max_length(self) -> int:
        """Longest context length."""
        return int(self.lengths.max())

    @property
    def pi(self) -> np.ndarray:
        """``pi_j``: fraction of all pairs whose context is ``j``."""
        per = self.counts.sum(axis=1)
        return per / per.sum()

    @property
    def P(self) -> np.ndarray:  # noqa: N802
        """``p_jz``: fraction of the pairs with context ``j`` whose next token is ``z``."""
        return self.counts / self.counts.sum(axis=1, keepdims=True)

    @property
    def support_sizes(self) -> np.ndarray:
        """``|S_j|`` of every context."""
        return (self.counts > 0).sum(axis=1)

    def m_by_length(self) -> dict[int, int]:
        """``m_t`` for each length ``t`` present."""
        ts, cnt = np.unique(self.lengths, return_counts=True)
        return {int(t): int(c) for t, c in zip(ts, cnt, strict=True)}

    def of_length(self, t: int) -> PrefixContexts:
        """The contexts of length ``t`` only (their ``pi`` renormalized within length ``t``).

        Raises
        ------
        InvalidDataError
            If no context has length ``t``.
        """
        idx = np.flatnonzero(self.lengths == t)
        if idx.size == 0:
            present = sorted(self.m_by_length())
            raise InvalidDataError(f"no context has length {t}; lengths present: {present}")
        return PrefixContexts(tuple(self.contexts[i] for i in idx), self.counts[idx])

    def ntp_data(self, H: ArrayLike) -> NTPData:
        """The NTP training set with embeddings ``H`` (row ``j`` embeds context ``j``).

        Raises
        ------
        InvalidDataError
            If ``H`` does not have ``m`` rows (or is not a finite 2-D array).
        """
        H = as_float_array(H, "H", 2)
        if H.shape[0] != self.m:
            raise InvalidDataError(f"H must have one row per context ({self.m}), got shape {H.shape}")
        return NTPData(H=H, pi=self.pi, P=self.P)

    def entropy(self) -> float:
        """Empirical conditional entropy ``H`` of the whole set (nats); independent of ``H``."""
        return entropy(self.ntp_data(np.zeros((self.m, 1))))

    def entropy_by_length(self) -> dict[int, float]:
        """``H_t`` of Remark 2 for each length ``t`` (nats), ``pi`` renormalized within ``t``."""
        return {t: self.of_length(t).entropy() for t in self.m_by_length()}

    def deterministic_fraction_by_length(self) -> dict[int, float]:
        """Fraction of the length-``t`` contexts with a single next token (``|S_j| = 1``)."""
        S = self.support_sizes
        return {t: float(np.mean(S[self.lengths == t] == 1)) for t in self.m_by_length()}

    def __repr__(self) -> str:
        pairs = int(self.counts.sum())
        return f"PrefixContexts(m={self.m}, V={self.V}, lengths 1..{self.max_length}, pairs={pairs})"


def _check_prefix_size(lasts: list[int], vocab_size: int) -> None:
    """Refuse a count whose prefixes (``T (T + 1) / 2`` ids per sequence) and counts exceed memory.

    At most ``sum_t min(n_t, V^t)`` distinct prefixes (``n_t`` the sequences reaching length ``t``),
    ``V`` counts each, at 8 bytes must fit :data:`ntpnb.settings.MAX_DENSE_BYTES`.
    """
    reach = np.bincount(np.asarray(lasts, dtype=np.int64), minlength=1)[::-1].cumsum()[::-1]  # n_t
    n_ids = sum(last * (last + 1) // 2 for last in lasts)
    n_rows, distinct_max = 0, 1  # distinct_max = V^t, capped once it exceeds every n_t
    for n_t in reach[1:]:
        distinct_max = min(distinct_max * vocab_size, len(lasts))
        n_rows += min(int(n_t), distinct_max)
    nbytes = 8.0 * (n_ids + n_rows * vocab_size)
    if nbytes > settings.MAX_DENSE_BYTES:
        raise InvalidDataError(
            f"prefix_contexts: {n_ids} prefix token ids and up to {n_rows} rows of {vocab_size} counts "
            f"would take {nbytes / 2**30:.3g} GiB, more than ntpnb.settings.MAX_DENSE_BYTES = "
            f"{settings.MAX_DENSE_BYTES / 2**30:.3g} GiB (the prefixes of one sequence grow like its "
            "length squared: cut long sequences into windows, see sliding_windows, or set max_length)"
        )


def prefix_contexts(
    sequences: Iterable[Sequence[int]], vocab_size: int, max_length: int | None = None
) -> PrefixContexts:
    """Count every prefix of every sequence as a context, with the token that follows it.

    Parameters
    ----------
    sequences
        Lists, tuples or 1-D integer arrays of token ids in ``[0, vocab_size)``.
    max_length
        If given, only prefixes of length at most ``max_length`` are counted.

    Raises
    ------
    InvalidDataError
        If ``vocab_size`` is not an integer >= 2; if there are no sequences, ``sequences`` or a
        sequence is a string, unordered or not a sequence, a sequence is empty, a token is not
        an integer, or an id is out of range (the message names sequence and position); on a
        ``max_length`` below 1, if no sequence has two tokens, or if the prefixes and counts
        would exceed :data:`ntpnb.settings.MAX_DENSE_BYTES` (checked before any work).

    Examples
    --------
    >>> ctx = prefix_contexts([[0, 1, 2], [0, 1, 1], [0, 2]], vocab_size=3)
    >>> ctx.contexts
    ((0,), (0, 1))
    >>> ctx.counts.tolist()
    [[0, 2, 1], [0, 1, 1]]
    """
    vocab_size = as_count(vocab_size, "vocab_size", minimum=2)
    seqs = _id_tuples(sequences, vocab_size)
    if max_length is not None:
        max_length = as_count(max_length, "max_length")
    lasts = [len(seq) - 1 if max_length is None else min(len(seq) - 1, max_length) for seq in seqs]
    _check_prefix_size(lasts, vocab_size)
    table: defaultdict[tuple[int, ...], np.ndarray] = defaultdict(
        lambda: np.zeros(vocab_size, dtype=np.int64)
    )
    for seq, last in zip(seqs, lasts, strict=True):
        for t in range(1, last + 1):
            table[seq[:t]][seq[t]] += 1
    if not table:
        raise InvalidDataError("no sequence has two tokens: there is no (context, next token) pair")
    contexts = tuple(sorted(table, key=lambda c: (len(c), c)))
    return PrefixContexts(contexts, frozen(np.array([table[c] for c in contexts])))


def sliding_windows(tokens: Sequence[int], length: int, cyclic: bool = True) -> list[tuple[int, ...]]:
    """All windows of ``length`` consecutive tokens of a stream, one starting at every position.

    With ``cyclic=True`` the stream is read as a circle, so the windows' empirical distribution
    is stationary: the hypothesis under which ``H_{t+1} <= H_t`` (Remark 2 of Paper A).

    Raises
    ------
    InvalidDataError
        If ``length`` is not an integer >= 2, ``tokens`` is not an ordered sequence (a set, a
        string, a number), ``cyclic`` not a bool, or the stream is shorter than ``length``.
    """
    length = as_count(length, "the window length", minimum=2)
    cyclic = as_flag(cyclic, "cyclic")
    toks = as_ordered(tokens.tolist() if isinstance(tokens, np.ndarray) else tokens, "tokens")
    n = len(toks)
    if n < length:
        raise InvalidDataError(f"the stream has {n} tokens, fewer than the window length {length}")
    ring = toks + toks[: length - 1] if cyclic else toks  # read as a circle: the last windows wrap around
    return [tuple(ring[i : i + length]) for i in range(len(ring) - length + 1)]


def joint_ntp_data(contexts: PrefixContexts, d: int, seed: int | np.random.Generator = 0) -> NTPData:
    """All the prefix contexts, of every length, as ONE NTP training set (Paper A, App. C).

    Each context has a fixed random embedding of i.i.d. ``N(0, 1/d)`` entries, *nested in* ``d``:
    for the same seed those at ``d' < d`` are the first ``d'`` coordinates of those at ``d``
    (times ``sqrt(d / d')``), so NTP-separability is monotone in ``d``.

    Raises
    ------
    InvalidDataError
        If ``d`` is not a positive integer, or the ``(m, d)`` embeddings would exceed
        :data:`ntpnb.settings.MAX_DENSE_BYTES` (checked before allocating).
    """
    if not isinstance(contexts, PrefixContexts):
        raise InvalidDataError(f"contexts must be a PrefixContexts, got {type(contexts).__name__}")
    d = as_count(d, "d")
    check_dense_size((contexts.m, d), f"the embeddings of the joint problem (m = {contexts.m}, d = {d})")
    rng = as_generator(seed)
    H = rng.standard_normal((d, contexts.m)).T / np.sqrt(d)  # column k: the k-th m draws
    return contexts.ntp_data(H)


def smallest_separable_dimension(
    data_at: Callable[[int], NTPData],
    lo: int,
    hi: int,
    decide: Callable[[NTPData], bool],
) -> int:
    """The smallest ``d`` in ``(lo, hi]`` at which ``data_at(d)`` is NTP-separable.

    Valid when ``decide`` (the separability test) is monotone in ``d`` along ``data_at`` (as with
    :func:`joint_ntp_data`) and false at ``lo`` (or ``lo = 0``). Doubles ``d`` from ``lo`` until
    separable, then bisects, so the largest problem decided is at most twice the answer.

    Raises
    ------
    InvalidDataError
        If ``lo`` and ``hi`` are not integers with ``0 <= lo < hi``, or the data are not
        separable at ``hi``.
    """
    lo, hi = as_count(lo, "lo", minimum=0), as_count(hi, "hi")
    if lo >= hi:
        raise InvalidDataError(f"need integers 0 <= lo < hi, got lo = {lo!r}, hi = {hi!r}")
    probe = max(2 * lo, lo + 1)
    while probe < hi and not decide(data_at(probe)):
        lo, probe = probe, 2 * probe
    if probe < hi:
        hi = probe
    elif not decide(data_at(hi)):
        raise InvalidDataError(f"the data are not separable at the upper end d = hi = {hi}")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if decide(data_at(mid)):
            hi = mid
        else:
            lo = mid
    return int(hi)
