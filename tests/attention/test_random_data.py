"""The generators of Appendix D (ntpnb.attention._random_data): their options, their guarantees, and
their bounded redraws."""

from __future__ import annotations

import numpy as np
import pytest

from ntpnb.attention import (
    _random_data as random_data,
)
from ntpnb.attention import (
    acyclic_dataset,
    as_token_data,
    general_dataset,
    random_embeddings,
    token_priority_graphs,
)
from ntpnb.errors import GenerationError, InvalidDataError


def test_embeddings_are_unit_vectors_and_seeded():
    E = random_embeddings(8, 5, 3)
    np.testing.assert_allclose(np.linalg.norm(E, axis=1), 1.0)
    np.testing.assert_array_equal(E, random_embeddings(8, 5, 3))
    with pytest.raises(InvalidDataError, match="d must"):
        random_embeddings(8, 0, 3)


def test_acyclic_data_label_is_the_top_priority_token():
    X, y, priority = acyclic_dataset(8, 50, 6, 0)
    assert X.shape == (50, 6)
    assert np.all(priority[y] == priority[X].min(axis=1))
    assert all(len(set(row)) == 6 for row in X)
    assert not token_priority_graphs(as_token_data(X, y, 8)).cyclic_components


def test_general_data_is_realizable_and_cyclic():
    for seed in range(5):
        X, y = general_dataset(6, 6, 4, seed)
        assert all(len(set(row)) == 4 for row in X)
        data = as_token_data(X, y, 6)
        assert np.all(np.any((data.tokens == data.labels[:, None]) & data.mask, axis=1))
        tpg = token_priority_graphs(data)
        assert tpg.cyclic_components and tpg.strict


def test_plain_general_draws_often_lack_a_cycle(monkeypatch):
    # one draw each: "about half" of the plain draws at K = 6, n = 6, T = 4 fail
    monkeypatch.setattr(random_data, "MAX_REDRAWS", 1)
    failed = 0
    for s in range(200):
        try:
            general_dataset(6, 6, 4, s)
        except GenerationError:
            failed += 1
    assert 40 <= failed <= 160


def test_redraws_are_bounded():
    # n = 1: one sample cannot make a cycle (its graph is a star out of the label)
    with pytest.raises(GenerationError, match=f"no draw of {random_data.MAX_REDRAWS} had"):
        general_dataset(6, 1, 4, 0)


@pytest.mark.parametrize(
    ("args", "match"),
    [((4, 3, 5), "distinct"), ((0, 3, 2), "K must"), ((4, 0, 2), "n must"), ((4, 3, 2.5), "T must")],
)
def test_bad_sizes_raise(args, match):
    with pytest.raises(InvalidDataError, match=match):
        acyclic_dataset(*args, seed=0)
    with pytest.raises(InvalidDataError, match=match):
        general_dataset(*args, seed=0)
