"""The seeded recipes (ntpnb.linear._recipes): Fig. 1's instance, tempered to the paper's entropy,
and the synthetic instance of Figs. 3-5."""

from __future__ import annotations

import re

import numpy as np
import pytest

import ntpnb as ntp
from ntpnb.errors import InvalidDataError
from ntpnb.linear._recipes import TOY2D_ENTROPY, temper_to_entropy


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


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 5000.5}, "n must be a positive integer, got 5000.5"),
        ({"n": float("nan")}, "n must be a positive integer, got nan"),
        ({"m": "50"}, "m must be a positive integer, got '50'"),
        ({"seed": -1}, "seed (or a numpy.random.Generator) must be a non-negative integer, got -1"),
        ({"seed": 0.5}, "seed"),
    ],
)
def test_synthetic_instance_rejects_bad_arguments_by_name(kwargs, message):
    with pytest.raises(InvalidDataError, match=re.escape(message)):
        ntp.synthetic_instance(**kwargs)


def test_integer_valued_floats_are_accepted_as_sizes():
    a, b = ntp.synthetic_instance(n=5000.0, seed=3), ntp.synthetic_instance(n=5000, seed=3)
    np.testing.assert_array_equal(a.P, b.P)


@pytest.mark.parametrize("seed", [-1, "a", None, 1.5])
def test_toy2d_instance_rejects_bad_seeds(seed):
    with pytest.raises(InvalidDataError, match="seed"):
        ntp.toy2d_instance(seed)


# ---------------------------------------------------------------------------------------------
# Tempering: one common exponent brings the toy instance to the paper's entropy


@pytest.mark.parametrize("seed", range(5))
def test_toy2d_instance_has_the_papers_entropy(seed):
    assert ntp.entropy(ntp.toy2d_instance(seed)) == pytest.approx(TOY2D_ENTROPY, abs=1e-12)
    assert TOY2D_ENTROPY == 0.8811


@pytest.mark.parametrize("seed", range(5))
def test_tempering_keeps_supports_order_and_embeddings(seed):
    tempered, raw = ntp.toy2d_instance(seed), ntp.toy2d_instance(seed, entropy=None)
    np.testing.assert_array_equal(tempered.support_mask, raw.support_mask)
    np.testing.assert_array_equal(tempered.H, raw.H)
    for p, q in zip(tempered.P, raw.P, strict=True):
        s = q > 0
        assert np.array_equal(np.argsort(p[s], kind="stable"), np.argsort(q[s], kind="stable"))
    # one common exponent: log-odds of every row are scaled by the same beta
    i, j = np.nonzero(raw.support_mask)
    ratios = []
    for row in range(3):
        z = j[i == row]
        ratios.append(
            np.log(tempered.P[row, z[0]] / tempered.P[row, z[1]])
            / np.log(raw.P[row, z[0]] / raw.P[row, z[1]])
        )
    np.testing.assert_allclose(ratios, ratios[0], rtol=1e-8)


def test_untempered_draw_is_the_dirichlet_recipe():
    raw = ntp.toy2d_instance(0, entropy=None)
    assert ntp.entropy(raw) != pytest.approx(TOY2D_ENTROPY, abs=1e-3)
    np.testing.assert_allclose(raw.P.sum(axis=1), 1.0)


@pytest.mark.parametrize("target", [0.05, 0.5, 1.05])
def test_toy2d_instance_reaches_any_entropy_in_range(target):
    assert ntp.entropy(ntp.toy2d_instance(3, entropy=target)) == pytest.approx(target, abs=1e-12)


@pytest.mark.parametrize("target", [0.0, np.log(3), 1.2, -0.1, float("nan"), True, "0.8"])
def test_unreachable_entropies_are_rejected(target):
    with pytest.raises(InvalidDataError, match="target entropy"):
        ntp.toy2d_instance(0, entropy=target)


def test_uniform_rows_cannot_be_tempered():
    P = np.array([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]])
    with pytest.raises(InvalidDataError):
        temper_to_entropy(P, np.array([0.5, 0.5]), 0.3)
