"""Paper A's experiments: the 2D example's geometry (ntpnb.linear.experiments._plane), each against a
second computation.
"""

from __future__ import annotations

import numpy as np
import pytest

import ntpnb as ntp
from ntpnb.errors import InvalidDataError


def test_plane_relation_is_the_null_vector_of_the_embeddings():
    rng = np.random.default_rng(2)
    for H in rng.standard_normal((20, 3, 2)):
        coef = ntp.plane_relation(H)
        np.testing.assert_allclose(coef @ H, 0.0, atol=1e-12)
        null = np.linalg.svd(H.T)[2][-1]
        assert abs(abs(coef @ null) - np.linalg.norm(coef)) < 1e-9 * np.linalg.norm(coef)
    with pytest.raises(InvalidDataError, match="three embeddings"):
        ntp.plane_relation(np.zeros((4, 2)))


def test_origin_inside_agrees_with_barycentric_coordinates():
    rng = np.random.default_rng(4)
    for H in rng.standard_normal((200, 3, 2)):
        # the origin as a convex combination of the vertices: solve for the weights
        weights = np.linalg.solve(np.vstack([H.T, np.ones(3)]), [0.0, 0.0, 1.0])
        assert ntp.origin_inside(H) == bool(np.all(weights > 0))
    assert not ntp.origin_inside([[1.0, 0.0], [0.3, 1.0], [-2.0, 0.0]])  # on an edge


def test_proof_direction_is_a_separating_direction_inside_the_triangle(toy):
    rng = np.random.default_rng(5)
    inside = [H for H in rng.standard_normal((60, 3, 2)) if ntp.origin_inside(H)]
    assert inside
    for H in inside:
        data = ntp.NTPData(H=H, pi=toy.pi, P=toy.P)
        W = ntp.proof_direction(H, toy.support_mask)
        assert ntp.satisfies_definition_2(data, W, 1e-9)
        assert ntp.separability_violation(data, W) <= 1e-9 * (1 + np.abs(W).max())
        assert ntp.is_separable(data)


def test_caption_geometry_of_the_toy_instance(toy, toy_limits):
    geometry = ntp.caption_geometry(toy, toy_limits.W_mm)
    assert geometry.w1_w5 < 1e-8  # forced by (6a) in d = 2
    assert geometry.in_cones
    v, j = geometry.single
    assert toy.support_mask[:, v].sum() == 1 and toy.support_mask[j, v]
    assert set(geometry.cones) == {v for v in range(toy.V) if toy.support_mask[:, v].sum() == 2}
    with pytest.raises(InvalidDataError, match=r"supports of Fig\. 1"):
        ntp.caption_geometry(ntp.synthetic_instance(seed=0), np.zeros((10, 60)))


def test_caption_draws_keep_the_separable_draws():
    seeds = range(1000, 1010)
    draws = ntp.caption_draws(seeds)
    assert len(draws) == sum(ntp.is_separable(ntp.toy2d_instance(s)) for s in seeds)
    assert all(g.in_cones for g in draws)


def test_free_rows_draws_w1_equals_w5_where_it_is_free(toy):
    gaps, free = ntp.free_rows_draws(toy, 3, 4, ntp.own_stream(0, 4))
    assert max(gaps) < 1e-6 and all(free)
