"""NTPData: validation, supports, construction from samples, and the seeded recipes."""

from __future__ import annotations

import re

import numpy as np
import pytest

import ntpnb as ntp
from ntpnb.errors import InvalidDataError

GOOD = {"H": np.eye(2), "pi": [0.5, 0.5], "P": [[0.5, 0.5, 0.0], [0.0, 0.25, 0.75]]}


def make(**changes):
    return ntp.NTPData(**{**GOOD, **changes})


def test_valid_data_and_supports():
    data = make()
    assert (data.m, data.d, data.V) == (2, 2, 3)
    assert [s.tolist() for s in data.supports] == [[0, 1], [1, 2]]
    assert data.support_sizes.tolist() == [2, 2]
    assert data.support_mask.tolist() == [[True, True, False], [False, True, True]]


def test_data_is_immutable_and_copied():
    H = np.eye(2)
    data = make(H=H)
    H[0, 0] = 99.0
    assert data.H[0, 0] == 1.0
    with pytest.raises(ValueError):
        data.P[0, 0] = 0.3
    with pytest.raises(AttributeError):
        data.H = np.zeros((2, 2))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"H": np.eye(3)}, "pi must have shape"),
        ({"P": [[0.5, 0.5, 0.0]]}, "P must have 2 rows"),
        ({"H": [1.0, 2.0]}, "H must be 2-dimensional"),
        ({"pi": [0.6, 0.6]}, "pi sums to"),
        ({"pi": [1.5, -0.5]}, "pi has a negative entry"),
        ({"pi": [1.0, 0.0]}, "context 1 has probability pi_1 = 0"),
        ({"P": [[0.5, 0.6, -0.1], [0.0, 0.25, 0.75]]}, "negative probability at context 0, token 2"),
        ({"P": [[0.5, 0.4, 0.0], [0.0, 0.25, 0.75]]}, "row 0 of P sums to"),
        ({"P": [[0.0, 0.0, 0.0], [0.0, 0.25, 0.75]]}, "context 0 has an empty support"),
        ({"P": [[np.nan, 0.5, 0.5], [0.0, 0.25, 0.75]]}, "P has a non-finite entry at index (0, 0)"),
        ({"H": [[np.inf, 0.0], [0.0, 1.0]]}, "H has a non-finite entry"),
        ({"P": [[1.0], [1.0]]}, "at least 2 tokens"),
        ({"H": np.zeros((2, 0))}, "embedding dimension d must be at least 1"),
        ({"H": [["a", "b"], ["c", "d"]]}, "H must be a numeric array"),
    ],
)
def test_bad_data_is_rejected_with_a_clear_message(changes, message):
    with pytest.raises(InvalidDataError, match=re.escape(message)):
        make(**changes)


def test_from_samples_counts_contexts_and_tokens():
    H = np.array([[1.0, 0.0], [0.0, 1.0]])
    contexts = [0, 0, 0, 1, 0, 1]
    tokens = [2, 2, 1, 0, 2, 0]
    data = ntp.NTPData.from_samples(contexts, tokens, H, vocab_size=4)
    np.testing.assert_allclose(data.pi, [4 / 6, 2 / 6])
    np.testing.assert_allclose(data.P, [[0, 0.25, 0.75, 0], [1, 0, 0, 0]])
    # n * pi_j * p_jz is the count of (context j, token z), as in Paper A, Sec. 2
    np.testing.assert_allclose(6 * data.pi[:, None] * data.P, [[0, 1, 3, 0], [2, 0, 0, 0]])


@pytest.mark.parametrize(
    ("contexts", "tokens", "vocab", "message"),
    [
        ([0, 2], [0, 1], 3, "context id 2 at sample 1 is out of range"),
        ([0, 1], [0, 3], 3, "token 3 at sample 1 is out of range"),
        ([0, -1], [0, 1], 3, "context id -1"),
        ([0, 0], [0, 1], 3, "never occur in the samples, e.g. context 1"),
        ([0, 1, 1], [0, 1], 3, "same length"),
        ([], [], 3, "no samples"),
        ([0, 1], [0, 1], 1, "vocab_size must be an integer >= 2"),
        ([0.5, 1], [0, 1], 3, "integer ids"),
    ],
)
def test_from_samples_rejects_bad_samples(contexts, tokens, vocab, message):
    with pytest.raises(InvalidDataError, match=message):
        ntp.NTPData.from_samples(contexts, tokens, np.eye(2), vocab)


def test_toy2d_instance_matches_fig1_setting():
    data = ntp.toy2d_instance(0)
    assert (data.m, data.d, data.V) == (3, 2, 5)
    # supports A={2,3,4}, B={1,4,5}, C={1,2,5} in the paper's 1-based numbering
    assert [(s + 1).tolist() for s in data.supports] == [[2, 3, 4], [1, 4, 5], [1, 2, 5]]
    np.testing.assert_allclose(data.pi, 1 / 3)


def test_recipes_are_seeded():
    a, b, c = ntp.toy2d_instance(7), ntp.toy2d_instance(7), ntp.toy2d_instance(8)
    np.testing.assert_array_equal(a.P, b.P)
    np.testing.assert_array_equal(a.H, b.H)
    assert not np.array_equal(a.P, c.P)
    s1, s2 = ntp.synthetic_instance(seed=3), ntp.synthetic_instance(seed=3)
    np.testing.assert_array_equal(s1.P, s2.P)
    np.testing.assert_array_equal(s1.H, s2.H)


def test_synthetic_instance_matches_figs_3_to_5_setting():
    data = ntp.synthetic_instance()
    assert (data.m, data.d, data.V) == (50, 60, 10)
    assert np.all(data.support_sizes == 6)
    counts = 5000 * data.pi[:, None] * data.P
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-9)  # counts of n = 5000 samples
    assert counts.sum() == pytest.approx(5000)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"S": 11}, "support size"), ({"n": 100}, "cannot cover"), ({"m": 0}, "positive integer")],
)
def test_synthetic_instance_rejects_inconsistent_sizes(kwargs, message):
    with pytest.raises(InvalidDataError, match=message):
        ntp.synthetic_instance(**kwargs)
