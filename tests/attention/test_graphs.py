"""Token-priority graphs, SCCs, relations, the cyclic sub-dataset, S_cyc and pseudo graphs."""

from __future__ import annotations

import numpy as np
import pytest

from ntpnb.attention import as_token_data, cyclic_subdataset, random_embeddings, token_priority_graphs
from ntpnb.attention._graphs import (
    pseudo_cyclic_subdataset,
    pseudo_priority_graphs,
    scyc_basis,
    scyc_dimension,
)
from ntpnb.errors import InvalidDataError, RankAmbiguousError

from attention_instances import general_instance, with_condition

# A data set in the spirit of the paper's Fig. 2 (ids from 0): G(0) is a chain, G(1) has the
# cycle 2 -> 3 -> 4 -> 2 (through three samples) and a dominated token 5.
X_FIG = [[5, 3, 2, 0], [4, 3, 0], [2, 4, 1], [3, 2, 1], [4, 5, 1]]
Y_FIG = [5, 3, 2, 3, 4]
K_FIG = 6


def test_graphs_edges_components_and_relations():
    tpg = token_priority_graphs(as_token_data(X_FIG, Y_FIG, K_FIG))
    assert sorted(tpg.graphs) == [0, 1]
    g0, g1 = tpg[0], tpg[1]
    assert set(g0.edges) == {(5, 3), (5, 2), (5, 0), (3, 4), (3, 0)}
    assert all(len(c) == 1 for c in g0.components)
    assert set(g1.edges) == {(2, 4), (2, 1), (3, 2), (3, 1), (4, 5), (4, 1)}
    # 2 -> 4 (sample 2), 3 -> 2 (sample 3); 4 -> 3 is missing, so {2, 3, 4} is not an SCC here
    assert all(len(c) == 1 for c in g1.components)
    assert not tpg.cyclic_components and len(tpg.strict) == len(g0.edges) + len(g1.edges)


def test_cycle_relations_and_cyclic_subdataset():
    X = [[4, 3, 0], [2, 4, 1], [3, 2, 1], [4, 3, 1], [5, 2, 1]]
    y = [3, 2, 3, 4, 2]
    tpg = token_priority_graphs(as_token_data(X, y, 6))
    g1 = tpg[1]
    assert (2, 3, 4) in g1.components  # 2 -> 4 -> 3 -> 2
    assert set(g1.equivalent) == {(2, 3), (2, 4), (3, 4)}
    assert (2, 5) in g1.strict and (2, 1) in g1.strict
    assert not any(g1.same_component(i, j) for i, j in g1.strict)
    sub = cyclic_subdataset(as_token_data(X, y, 6))
    assert sub.index.tolist() == [1, 2, 3]  # sample 4 keeps only its label 2 (5 is dominated)
    assert [sub.data.sequence(i).tolist() for i in range(sub.data.n)] == [[2, 4], [3, 2], [4, 3]]
    assert sub.data.query.tolist() == [1, 1, 1]  # the query survives although 1 was removed
    E = random_embeddings(6, 8, 0)
    basis = scyc_basis(E, tpg)
    assert basis.shape == (2, 64)  # one SCC of 3 nodes: dimension 2
    np.testing.assert_allclose(basis @ basis.T, np.eye(2), atol=1e-12)


def test_scc_matches_reachability_on_random_graphs():
    rng = np.random.default_rng(3)
    for _ in range(20):
        X = rng.integers(0, 7, size=(8, 3))
        y = X[np.arange(8), rng.integers(0, 3, size=8)]
        tpg = token_priority_graphs(as_token_data(X, y, 7))
        for g in tpg.graphs.values():
            idx = {v: a for a, v in enumerate(g.nodes)}
            R = np.eye(len(g.nodes), dtype=bool)
            for i, j in g.edges:
                R[idx[i], idx[j]] = True
            for _ in range(len(g.nodes)):
                R = R | ((R.astype(int) @ R.astype(int)) > 0)
            for i in g.nodes:
                for j in g.nodes:
                    both = R[idx[i], idx[j]] and R[idx[j], idx[i]]
                    assert g.same_component(i, j) == both


def test_acyclic_data_has_no_cyclic_subdataset():
    sub = cyclic_subdataset(as_token_data([[0, 1, 2], [1, 2]], [0, 1], 3))
    assert sub.data is None and sub.index.size == 0


def test_pseudo_graphs_from_a_saturating_W():
    E = np.eye(4)
    X = [[0, 1, 3], [1, 2, 3], [0, 2, 3]]
    # scores e_j^T W e_3: token 0 highest, then 2 and 1 tied: W e_3 = (40, 20, 20, 0)
    W = np.zeros((4, 4))
    W[:, 3] = [40.0, 20.0, 20.0, 0.0]
    data = as_token_data(X, [0, 1, 2], 4, require_realizable=False)
    ps = pseudo_priority_graphs(E, data, W)
    assert ps.selected.tolist() == [[True, False, False], [True, True, False], [True, False, False]]
    g = ps.graphs[3]
    assert (1, 2) in g.equivalent  # 1 and 2 are both selected in sample 1: an SCC
    assert (0, 1) in g.strict and (1, 3) in g.strict
    sub = pseudo_cyclic_subdataset(ps, data)
    assert sub.index.tolist() == [1] and sub.data.sequence(0).tolist() == [1, 2]
    np.testing.assert_allclose(ps.scores.sum(axis=1), 1.0)
    with pytest.raises(InvalidDataError, match="threshold"):
        pseudo_priority_graphs(E, data, W, threshold=1.5)
    with pytest.raises(InvalidDataError, match="finite"):
        pseudo_priority_graphs(E, data, np.full((4, 4), np.nan))


def test_exclusion_band_leaves_tokens_just_below_the_threshold_without_edges():
    """The authors' E_thres: a token with attention in (thr - band, thr] is neither selected nor
    dominated; outside the band the graph is unchanged."""
    from ntpnb.attention import as_token_data
    from ntpnb.attention._graphs import pseudo_priority_graphs

    E = np.eye(5)
    data = as_token_data(np.array([[1, 2, 3, 4]]), np.array([1]), 5)
    W = np.zeros((5, 5))
    # attention on tokens 1, 2, 3 (query 4) about 0.9905, 0.0095 and 1e-9: token 2 in the band
    W[1, 4], W[2, 4], W[3, 4], W[4, 4] = 10.0, 10.0 + np.log(0.0095 / 0.9905), -10.0, -30.0
    plain = pseudo_priority_graphs(E, data, W, threshold=1e-2)
    banded = pseudo_priority_graphs(E, data, W, threshold=1e-2, exclusion_band=1e-3)
    assert plain.selected[0].tolist() == banded.selected[0].tolist() == [True, False, False, False]
    assert (1, 2) in plain.graphs[4].edges and (1, 2) not in banded.graphs[4].edges
    assert (1, 3) in banded.graphs[4].edges and (1, 4) in banded.graphs[4].edges
    for bad in (-1e-3, 1e-2, 0.5, True, "x"):
        with pytest.raises(InvalidDataError, match="exclusion band"):
            pseudo_priority_graphs(E, data, W, threshold=1e-2, exclusion_band=bad)


# ---------------------------------------------------------------------------------------------
# The dimension of S_cyc: from the mathematics where it gives one, else at a clear gap


@pytest.mark.parametrize("seed", range(6))
def test_scyc_dimension_is_the_papers(seed):
    E, data = general_instance(seed)
    graphs = token_priority_graphs(data)
    dim = sum(len(c) - 1 for _, c in graphs.cyclic_components)
    assert scyc_dimension(E, graphs) == dim > 0
    basis = scyc_basis(E, graphs)
    assert basis.shape == (dim, 64)
    np.testing.assert_allclose(basis @ basis.T, np.eye(dim), atol=1e-12)
    # the equalities of the Graph-SVM span the same space (Lemma 2's proof)
    for i, j, k in graphs.equivalent:
        row = np.outer(E[i] - E[j], E[k]).ravel()
        assert np.linalg.norm(row - basis.T @ (basis @ row)) <= 1e-13 * np.linalg.norm(row)


def test_scyc_dimension_of_dependent_embeddings_is_decided_at_a_gap():
    # K = 3 > d = 2: the embeddings are dependent and the mathematics gives no dimension
    X, y = [[0, 1, 2], [1, 0, 2], [2, 1, 2]], [0, 1, 2]
    graphs = token_priority_graphs(as_token_data(X, y, 3))
    E = random_embeddings(3, 2, 0)
    assert scyc_dimension(E, graphs) is None
    assert scyc_basis(E, graphs).shape[0] == 2  # {0, 1, 2} in G(2): centred vectors span R^2


def test_scyc_dimension_holds_or_is_refused_on_ill_conditioned_embeddings():
    E, data = general_instance(2)
    graphs = token_priority_graphs(data)
    U, _, Vt = np.linalg.svd(E, full_matrices=False)
    near_singular = U @ np.diag([1.0, 1.0, 1.0, 1.0, 1.0, 3e-8]) @ Vt  # rank 6 by a clear gap
    assert scyc_basis(near_singular, graphs).shape[0] == 3 == scyc_dimension(E, graphs)
    with pytest.raises(RankAmbiguousError, match="embeddings E"):  # condition 1e9, no gap
        scyc_basis(with_condition(E, 1e9), graphs)


def test_strong_components_agree_with_scipy_on_random_graphs():
    """A second method: scipy.sparse.csgraph's strongly-connected components."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    from ntpnb.attention._graphs import strong_components

    rng = np.random.default_rng(0)
    for _ in range(500):
        n = int(rng.integers(1, 14))
        nodes = rng.choice(60, n, replace=False).tolist()
        p = rng.uniform(0.0, 0.4)
        edges = {(a, b) for a in nodes for b in nodes if a != b and rng.random() < p}
        order = sorted(nodes)
        index = {v: i for i, v in enumerate(order)}
        rows, cols = [index[a] for a, _ in edges], [index[b] for _, b in edges]
        adj = csr_matrix((np.ones(len(edges)), (rows, cols)), shape=(n, n))
        _, labels = connected_components(adj, directed=True, connection="strong")
        groups: dict[int, list[int]] = {}
        for v, lab in zip(order, labels, strict=True):
            groups.setdefault(int(lab), []).append(v)
        assert strong_components(nodes, edges) == sorted(tuple(sorted(g)) for g in groups.values())
