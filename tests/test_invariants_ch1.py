"""Invariants behind chapter 1 that hold by construction of the code, not by the paper's theorems.

The chapter's claim checks are ones a false theorem would fail; the identities below would hold
whatever the paper said (a KL sum is non-negative, W* is built in F and W^mm in F-perp, polishing
puts the smallest margin at 1, tempering hits its target), so they are tested here instead.
"""

from __future__ import annotations

import numpy as np
import pytest

import ntpnb as ntp
from ntpnb.errors import InvalidDataError
from ntpnb.linear.constraints import ntp_constraints
from ntpnb.linear.datasets import TOY2D_ENTROPY, temper_to_entropy

CHAPTER_INSTANCES = {
    "toy2d": lambda: ntp.toy2d_instance(0),
    "synthetic": lambda: ntp.synthetic_instance(seed=0),
}


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


@pytest.mark.parametrize("name", CHAPTER_INSTANCES)
def test_kl_form_equals_the_direct_gap_on_the_chapter_instances(name):
    data = CHAPTER_INSTANCES[name]()
    rng = np.random.default_rng(0)
    H = ntp.entropy(data)
    for scale in (0.01, 1.0, 30.0):
        W = scale * rng.standard_normal((data.V, data.d))
        direct, kl = ntp.ce_loss(data, W) - H, ntp.kl_divergence(data, W)
        assert kl > 0
        assert direct == pytest.approx(kl, rel=1e-10, abs=1e-13)


@pytest.mark.parametrize("name", CHAPTER_INSTANCES)
def test_finite_solution_and_svm_invariants_on_the_chapter_instances(name):
    """W* solves (4) and lies in F; W^mm lies in F-perp with smallest margin 1 (the active-set
    solver solves the KKT system of its active set exactly; the cvxpy reference polishes onto
    it) and a duality gap at rounding level; hence they are orthogonal. All hold by
    construction of the solvers."""
    data = CHAPTER_INSTANCES[name]()
    cons = ntp_constraints(data)
    W_star, sol = ntp.finite_solution(data), ntp.solve_ntp_svm(data)
    assert np.abs(cons.eq @ W_star.ravel() - cons.eq_rhs).max() < 1e-10
    assert (cons.ineq @ sol.W.ravel()).min() == pytest.approx(1.0, abs=1e-10)
    assert sol.polished or sol.solver == "ntpnb-active-set"
    assert abs(sol.duality_gap) < 1e-12
    cosine = np.sum(W_star * sol.W) / (np.linalg.norm(W_star) * np.linalg.norm(sol.W))
    assert abs(cosine) < 1e-10


@pytest.mark.parametrize(
    "H",
    [
        [[1.0, 0.0], [0.3, 1.0], [-2.0, 0.0]],  # h_A, h_C opposite: the origin on the edge AC
        [[1.0, 0.0], [0.0, 0.0], [-1.0, -1.0]],  # h_B = 0
        [[1.0, 1.0], [-2.0, -2.0], [3.0, 3.0]],  # all on one line through the origin
    ],
)
def test_fig1_supports_with_the_origin_not_strictly_inside_are_not_separable(H):
    """The degenerate cases of the plane theorem of chapter 1 (the LP must agree with the proof)."""
    toy = ntp.toy2d_instance(0)
    assert not ntp.is_separable(ntp.NTPData(H=H, pi=toy.pi, P=toy.P))
