"""Sequences to NTP data (Paper A, App. C; ntpnb.linear._sequences): prefix contexts, windows, the
joint problem over all lengths, and the smallest separable dimension."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
from scipy.special import log_softmax

import ntpnb as ntp
from ntpnb.errors import InvalidDataError
from ntpnb.linear import _corpus as corpus
from ntpnb.linear._sequences import joint_ntp_data, prefix_contexts, sliding_windows


def brute_force_counts(seqs, V):
    """(context, next token) pairs of every prefix, counted naively."""
    pairs = [(tuple(s[:t]), s[t]) for s in seqs for t in range(1, len(s))]
    contexts = sorted({c for c, _ in pairs}, key=lambda c: (len(c), c))
    counts = np.zeros((len(contexts), V), dtype=int)
    for c, z in pairs:
        counts[contexts.index(c), z] += 1
    return contexts, counts


def test_prefix_contexts_match_a_hand_count():
    ctx = prefix_contexts([[0, 1, 2], [0, 1, 1], [0, 2]], vocab_size=3)
    assert ctx.contexts == ((0,), (0, 1))
    assert ctx.counts.tolist() == [[0, 2, 1], [0, 1, 1]]
    assert ctx.counts.sum() == 5
    np.testing.assert_allclose(ctx.pi, [3 / 5, 2 / 5])
    np.testing.assert_allclose(ctx.P, [[0, 2 / 3, 1 / 3], [0, 0.5, 0.5]])
    assert ctx.m_by_length() == {1: 1, 2: 1}


@pytest.mark.parametrize("seed", range(5))
def test_prefix_contexts_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    V = 3
    seqs = [rng.integers(0, V, size=rng.integers(1, 7)).tolist() for _ in range(12)]
    seqs.append([0, 1])  # at least one pair
    contexts, counts = brute_force_counts(seqs, V)
    ctx = prefix_contexts(seqs, V)
    assert list(ctx.contexts) == contexts
    np.testing.assert_array_equal(ctx.counts, counts)
    # m = sum_t m_t, and m_1 >= m_2 >= ... (App. C) when every sequence is long enough
    assert sum(ctx.m_by_length().values()) == ctx.m


def test_autoregressive_loss_equals_loss_over_distinct_contexts():
    """App. C: the average of -log q(x_{t+1} | x_{1..t}) over all pairs is CE of Eq. (2)."""
    rng = np.random.default_rng(0)
    V = 4
    seqs = [rng.integers(0, V, size=6).tolist() for _ in range(20)]
    ctx = prefix_contexts(seqs, V)
    data = joint_ntp_data(ctx, 5, seed=1)
    H = data.H
    W = rng.standard_normal((V, 5))
    index = {c: j for j, c in enumerate(ctx.contexts)}
    logq = log_softmax(H @ W.T, axis=1)
    direct = np.mean([-logq[index[tuple(s[:t])], s[t]] for s in seqs for t in range(1, len(s))])
    assert ntp.ce_loss(data, W) == pytest.approx(direct, rel=1e-12)


def test_entropy_is_the_mean_of_the_per_length_entropies_for_equal_lengths():
    rng = np.random.default_rng(3)
    seqs = [rng.integers(0, 3, size=5).tolist() for _ in range(30)]
    ctx = prefix_contexts(seqs, 3)
    H_t = ctx.entropy_by_length()
    assert sorted(H_t) == [1, 2, 3, 4]
    assert ctx.entropy() == pytest.approx(np.mean(list(H_t.values())), rel=1e-12)


def test_shannon_monotonicity_on_cyclic_windows_and_a_counterexample_without():
    rng = np.random.default_rng(4)
    stream = rng.integers(0, 3, size=400).tolist()
    H_t = prefix_contexts(sliding_windows(stream, 6), 3).entropy_by_length()
    values = [H_t[t] for t in sorted(H_t)]
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(values))
    # prefixes from the start of independent documents need not be stationary:
    # the second token is fixed, the third is not, so H_1 = 0 < H_2
    H_t = prefix_contexts([[0, 1, 0], [0, 1, 2]], 3).entropy_by_length()
    assert H_t[1] == 0.0 and H_t[2] > 0.0


def test_max_length_and_of_length():
    ctx = prefix_contexts([[0, 1, 2, 0], [1, 1, 2, 2]], 3, max_length=2)
    assert ctx.max_length == 2
    one = ctx.of_length(1)
    assert one.contexts == ((0,), (1,))
    assert one.pi.sum() == pytest.approx(1.0)
    with pytest.raises(InvalidDataError, match="no context has length 3"):
        ctx.of_length(3)


def test_sliding_windows():
    assert sliding_windows([0, 1, 2], 2) == [(0, 1), (1, 2), (2, 0)]
    assert sliding_windows([0, 1, 2], 2, cyclic=False) == [(0, 1), (1, 2)]
    with pytest.raises(InvalidDataError, match="fewer than the window length"):
        sliding_windows([0], 2)
    with pytest.raises(InvalidDataError, match="integer >= 2"):
        sliding_windows([0, 1], 1)


@pytest.mark.parametrize(
    ("seqs", "V", "message"),
    [
        ([[0, 1], []], 3, "sequence 1 is empty"),
        ([[0, 3]], 3, r"position 1: token id 3 is out of range \[0, 3\)"),
        ([[0, -1]], 3, "out of range"),
        ([[0, 1.0]], 3, "not an integer id"),
        ([[0, "a"]], 3, "mixed types"),
        ([[0, True]], 3, "not an integer id"),
        (["abc"], 3, "is a string"),
        ("abc", 3, "not a single string"),
        ([], 3, "no sequences"),
        ([[0, 1]], 1, "vocab_size must be an integer >= 2, got 1"),
        ([[0, 1]], 2.5, "vocab_size must be an integer >= 2, got 2.5"),
        ([np.zeros((2, 2), dtype=int)], 3, "1-dimensional"),
        ([5], 3, "not a sequence"),
    ],
)
def test_bad_sequences_raise_named_errors(seqs, V, message):
    with pytest.raises(InvalidDataError, match=message):
        prefix_contexts(seqs, V)
    if isinstance(seqs, list) and all(isinstance(q, list) for q in seqs):
        # the same sequences as tuples (the fast path of sliding windows): the same error
        with pytest.raises(InvalidDataError, match=message):
            prefix_contexts([tuple(q) for q in seqs], V)


def test_tuples_of_ints_and_any_other_form_validate_alike():
    seqs = [tuple(int(t) for t in row) for row in np.random.default_rng(0).integers(0, 4, (50, 5))]
    ctx = prefix_contexts(seqs, 4)
    for other in ([list(q) for q in seqs], [np.array(q) for q in seqs]):
        same = prefix_contexts(other, 4)
        assert same.contexts == ctx.contexts and np.array_equal(same.counts, ctx.counts)
    mixed = [*seqs[:-1], (0, np.int64(3))]  # a numpy integer: accepted, counted as an int
    contexts = prefix_contexts(mixed, 4).contexts
    assert all(type(tok) is int for c in contexts for tok in c)


def test_numpy_sequences_are_accepted():
    assert prefix_contexts([np.array([0, 2, 1])], 3).contexts == ((0,), (0, 2))


def test_vocab_size_is_a_count_and_a_token_is_an_integer():
    # vocab_size follows the rule of every count (ntpnb._validation.as_count): 2.0 is 2 ...
    assert prefix_contexts([[0, 1]], 2.0).counts.tolist() == [[0, 1]]
    # ... while a token id inside a sequence must be an integer, as the table above checks
    with pytest.raises(InvalidDataError, match="not an integer id"):
        prefix_contexts([[0, 1.0]], 2.0)


def test_no_pairs_and_bad_embeddings():
    with pytest.raises(InvalidDataError, match="no sequence has two tokens"):
        prefix_contexts([[0], [1]], 2)
    ctx = prefix_contexts([[0, 1]], 2)
    with pytest.raises(InvalidDataError, match="one row per context"):
        ctx.ntp_data(np.ones((2, 3)))
    with pytest.raises(InvalidDataError, match="positive integer"):
        prefix_contexts([[0, 1]], 2, max_length=0)
    with pytest.raises(InvalidDataError, match="positive integer"):
        joint_ntp_data(ctx, 0)


def _text_contexts(n_chars: int = 30, window: int = 5):
    ids = corpus.encode_text(ntp.stdlib_corpus(n_chars))
    return ntp.prefix_contexts(sliding_windows(ids.tolist(), window), len(corpus.ALPHABET))


def test_joint_ntp_data_is_the_objective_over_all_pairs():
    seqs = [(0, 1, 2, 1), (0, 1, 1, 2), (2, 0, 2, 2)]
    ctx = prefix_contexts(seqs, 3)
    data = ntp.joint_ntp_data(ctx, 4, seed=3)
    assert data.m == ctx.m == sum(ctx.m_by_length().values()) and data.d == 4
    W = np.random.default_rng(0).standard_normal((3, 4))
    logq = log_softmax(data.H @ W.T, axis=1)
    row = {c: j for j, c in enumerate(ctx.contexts)}
    per_pair = np.mean([-logq[row[s[:t]], s[t]] for s in seqs for t in range(1, len(s))])
    assert ntp.ce_loss(data, W) == pytest.approx(per_pair, rel=1e-12)


def test_joint_ntp_data_embeddings_are_nested_in_d():
    ctx = _text_contexts()
    big, small = ntp.joint_ntp_data(ctx, 9, seed=5), ntp.joint_ntp_data(ctx, 4, seed=5)
    np.testing.assert_allclose(big.H[:, :4] * np.sqrt(9 / 4), small.H, rtol=1e-14)
    other = ntp.joint_ntp_data(ctx, 4, seed=6)
    assert not np.allclose(other.H, small.H)


def test_joint_ntp_data_guard_refuses_before_allocating(monkeypatch):
    ctx = _text_contexts()
    with pytest.raises(InvalidDataError, match=r"joint problem.*GiB"):
        ntp.joint_ntp_data(ctx, 10**9)  # 8 bytes * m * 1e9: refused, never allocated
    monkeypatch.setattr(ntp.settings, "MAX_DENSE_BYTES", 8.0 * ctx.m * 10)
    ntp.joint_ntp_data(ctx, 10)
    with pytest.raises(InvalidDataError, match="MAX_DENSE_BYTES"):
        ntp.joint_ntp_data(ctx, 11)
    for bad in (0, 2.5, True, "3"):
        with pytest.raises(InvalidDataError, match="d must be a positive integer"):
            ntp.joint_ntp_data(ctx, bad)
    with pytest.raises(InvalidDataError, match="PrefixContexts"):
        ntp.joint_ntp_data([[0, 1]], 3)


def test_smallest_separable_dimension_is_the_threshold():
    ctx = _text_contexts(20, 4)
    data_at = lambda d: ntp.joint_ntp_data(ctx, d, seed=0)
    found = ntp.smallest_separable_dimension(data_at, 0, ctx.m, ntp.is_separable)
    assert 1 < found < ctx.m
    assert ntp.is_separable(data_at(found)) and not ntp.is_separable(data_at(found - 1))
    calls = []
    ntp.smallest_separable_dimension(data_at, 0, ctx.m, lambda data: calls.append(data.d) or True)
    assert calls == [1]  # doubling from lo = 0 probes d = 1 first
    calls.clear()
    ntp.smallest_separable_dimension(data_at, 3, ctx.m, lambda data: calls.append(data.d) or data.d >= 13)
    assert calls == [6, 12, 24, 18, 15, 13]  # doubling, then bisection of (12, 24]
    # a slice (the contexts of one length, same embeddings) is separable wherever the joint is
    joint = data_at(found)
    for t in ctx.m_by_length():
        rows = ctx.lengths == t
        assert ntp.is_separable(ctx.of_length(t).ntp_data(joint.H[rows]))


def test_smallest_separable_dimension_errors():
    ctx = _text_contexts(20, 4)
    data_at = lambda d: ntp.joint_ntp_data(ctx, d, seed=0)
    with pytest.raises(InvalidDataError, match="0 <= lo < hi"):
        ntp.smallest_separable_dimension(data_at, 3, 3, ntp.is_separable)
    with pytest.raises(InvalidDataError, match="not separable at the upper end"):
        ntp.smallest_separable_dimension(data_at, 0, 1, ntp.is_separable)


def test_prefix_contexts_refuses_a_quadratic_count_before_building_it():
    """One sequence of 10^5 tokens has prefixes holding 5e9 ids (40 GB): refused at once,
    naming the sizes and the limit; windows of the same text are counted."""
    text = np.arange(100_000) % 27
    start = time.perf_counter()
    with pytest.raises(InvalidDataError, match=r"4999950000 prefix token ids .*MAX_DENSE_BYTES"):
        ntp.prefix_contexts([text], vocab_size=27)
    assert time.perf_counter() - start < 10.0  # generous: refused at once, not after filling memory
    windows = ntp.prefix_contexts(ntp.sliding_windows(text[:1000], 5), vocab_size=27)
    assert windows.counts.sum() == 4 * 1000


def test_prefix_contexts_refuses_a_huge_vocabulary_before_allocating():
    with pytest.raises(InvalidDataError, match="rows of 1000000000000 counts"):
        ntp.prefix_contexts([[0, 1, 2]], vocab_size=10**12)
