"""Token-priority graphs (Paper B, Sec. 3.1), their SCCs, the cyclic sub-dataset and ``S_cyc``.

* :func:`token_priority_graphs`: ``G^(k)`` per last token ``k``, an edge ``y -> x`` for every input
  token ``x`` of every sample ending in ``k`` with label ``y``; SCCs from :func:`strong_components`.
* ``(i => j)`` in ``G^(k)``: an edge ``i -> j`` between different SCCs; ``(i ~ j)``: ``i != j`` in one SCC.
* :func:`cyclic_subdataset`: Definition 1 (index set ``I`` of Appendix A, Eq. (5)).
* :func:`scyc_basis`: an orthonormal basis of ``S_cyc`` (Definition 3) in row-major ``vec(W)``
  coordinates (``vec(W)[a*d + b] = W[a, b]``).
* :func:`pseudo_priority_graphs`: the pseudo graphs of Sec. 6 from a trained ``W``.

Self-loops ``y -> y`` are dropped: they change no SCC and no relation.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .. import settings
from .._linalg import check_known_rank, matrix_rank, numerical_rank
from .._validation import as_float, frozen, is_real
from ..errors import InvalidDataError
from ._token_data import TokenData, as_token_data, check_embeddings, check_token_data

__all__ = [
    "PriorityGraph",
    "TokenPriorityGraphs",
    "token_priority_graphs",
    "strong_components",
    "CyclicSubdataset",
    "cyclic_subdataset",
    "project_scyc",
]


@dataclass(frozen=True)
class PriorityGraph:
    """One token-priority graph ``G^(k)`` with its strongly-connected components."""

    #: The last token (query) this graph belongs to.
    k: int
    #: Sorted token ids of the graph.
    nodes: tuple[int, ...]
    #: Sorted directed edges ``(i, j)``, ``i != j``.
    edges: tuple[tuple[int, int], ...]
    #: The SCCs, each a sorted tuple of ids, ordered by their smallest id.
    components: tuple[tuple[int, ...], ...]
    component_of: dict[int, int] = field(repr=False)

    def same_component(self, i: int, j: int) -> bool:
        """Whether ``i`` and ``j`` are nodes of one SCC."""
        return i in self.component_of and self.component_of.get(j) == self.component_of[i]

    @cached_property
    def strict(self) -> tuple[tuple[int, int], ...]:
        """Pairs ``(i, j)`` with ``(i => j)``: an edge ``i -> j`` between different SCCs."""
        return tuple((i, j) for i, j in self.edges if not self.same_component(i, j))

    @cached_property
    def equivalent(self) -> tuple[tuple[int, int], ...]:
        """Pairs ``(i, j)``, ``i < j``, with ``(i ~ j)``: distinct nodes of one SCC."""
        return tuple(pair for c in self.components for pair in itertools.combinations(c, 2))

    @property
    def cyclic_components(self) -> tuple[tuple[int, ...], ...]:
        """The SCCs with two or more nodes."""
        return tuple(c for c in self.components if len(c) > 1)


@dataclass(frozen=True)
class TokenPriorityGraphs:
    """The graphs ``{G^(k)}`` of a data set (only the ``k`` that end some sequence)."""

    K: int
    graphs: dict[int, PriorityGraph]

    def __getitem__(self, k: int) -> PriorityGraph:
        return self.graphs[k]

    @property
    def strict(self) -> list[tuple[int, int, int]]:
        """Every ``(i, j, k)`` with ``(i => j)`` in ``G^(k)``."""
        return [(i, j, k) for k, g in sorted(self.graphs.items()) for i, j in g.strict]

    @property
    def equivalent(self) -> list[tuple[int, int, int]]:
        """Every ``(i, j, k)``, ``i < j``, with ``(i ~ j)`` in ``G^(k)``."""
        return [(i, j, k) for k, g in sorted(self.graphs.items()) for i, j in g.equivalent]

    @property
    def cyclic_components(self) -> list[tuple[int, tuple[int, ...]]]:
        """Every ``(k, C)`` with ``C`` an SCC of ``G^(k)`` with two or more nodes."""
        return [(k, c) for k, g in sorted(self.graphs.items()) for c in g.cyclic_components]


def strong_components(nodes: Iterable[int], edges: Iterable[tuple[int, int]]) -> list[tuple[int, ...]]:
    """The strongly-connected components of a directed graph, each sorted, ordered by their first id.

    Two nodes share a component when each reaches the other; reachability is Warshall's transitive
    closure on bit-mask rows (the graphs are small and many). Every edge's ends must be nodes.
    """
    order = sorted(set(nodes))
    index = {v: a for a, v in enumerate(order)}
    reach = [1 << a for a in range(len(order))]  # each node reaches itself
    for i, j in edges:
        reach[index[i]] |= 1 << index[j]
    for c in range(len(order)):  # after step c, paths through nodes 0..c are closed
        bit, via = 1 << c, reach[c]
        for a, row in enumerate(reach):
            if row & bit:
                reach[a] = row | via
    comps, placed = [], 0
    for a in range(len(order)):
        if placed >> a & 1:
            continue
        members = [b for b in range(a, len(order)) if reach[a] >> b & 1 and reach[b] >> a & 1]
        for b in members:
            placed |= 1 << b
        comps.append(tuple(order[b] for b in members))
    return comps


def graphs_from_sets(
    K: int, nodes: Mapping[int, Iterable[int]], edges: Mapping[int, Iterable[tuple[int, int]]]
) -> TokenPriorityGraphs:
    """The graphs of the node and edge sets per last token ``k`` (self-loops dropped)."""
    graphs = {}
    for k in sorted(nodes):
        e = {(i, j) for i, j in edges.get(k, ()) if i != j}
        comps = tuple(strong_components(nodes[k], e))
        comp_of = {v: a for a, c in enumerate(comps) for v in c}
        graphs[k] = PriorityGraph(k, tuple(sorted(nodes[k])), tuple(sorted(e)), comps, comp_of)
    return TokenPriorityGraphs(K=K, graphs=graphs)


def check_graphs(graphs: object) -> TokenPriorityGraphs:
    """``graphs`` itself, refused with a named error unless it is a :class:`TokenPriorityGraphs`."""
    if not isinstance(graphs, TokenPriorityGraphs):
        raise InvalidDataError(
            f"graphs must be TokenPriorityGraphs (see token_priority_graphs), got {type(graphs).__name__}"
        )
    return graphs


def token_priority_graphs(data: TokenData) -> TokenPriorityGraphs:
    """The token-priority graphs of a data set (Sec. 3.1), one per last token ``k``.

    ``data`` is a :class:`~ntpnb.attention._token_data.TokenData`
    (:func:`~ntpnb.attention._token_data.as_token_data` makes one from token ids, labels and ``K``;
    its labels are realizable, Assumption 2).
    """
    return graphs_of_checked(check_token_data(data))


def graphs_of_checked(data: TokenData) -> TokenPriorityGraphs:
    """:func:`token_priority_graphs` of data checked already (by the caller's door): no check again."""
    nodes: dict[int, set[int]] = {}
    edges: dict[int, set[tuple[int, int]]] = {}
    for i in range(data.n):
        k, lab = int(data.query[i]), int(data.labels[i])
        seq = data.sequence(i)
        nodes.setdefault(k, set()).update([lab, *seq.tolist()])
        edges.setdefault(k, set()).update((lab, int(x)) for x in seq)
    return graphs_from_sets(data.K, nodes, edges)


@dataclass(frozen=True)
class CyclicSubdataset:
    """The cyclic sub-dataset ``DSET-bar`` (Definition 1) and the samples it comes from."""

    #: The reduced samples ``(X-bar_i, y_i)``, with the original sample's query token (the reduced input
    #: may have lost it). None when the sub-dataset is empty: no sample has a distinct token in its
    #: label's SCC (acyclic data).
    data: TokenData | None
    #: The indices ``I`` of the original samples kept (Appendix A, Eq. (5)).
    index: np.ndarray


def cyclic_subdataset(data: TokenData, graphs: TokenPriorityGraphs | None = None) -> CyclicSubdataset:
    """Definition 1: drop from every input the tokens ``x`` with ``(y => x)``.

    What is left are the tokens in the label's SCC. A sample is kept (in ``I``) when a token other
    than the label remains; the others' loss does not depend on ``W`` (Fig. 2 leaves them out).
    """
    data = check_token_data(data)
    tpg = token_priority_graphs(data) if graphs is None else check_graphs(graphs)
    return _reduced(data, tpg, data.labels.tolist(), True)


def _reduced(
    data: TokenData, graphs: TokenPriorityGraphs, anchors: list[int], realizable: bool
) -> CyclicSubdataset:
    """The samples whose input tokens in the SCC of their anchor include another: those tokens."""
    seqs, index = [], []
    for i, anchor in enumerate(anchors):
        g = graphs[int(data.query[i])]
        kept = np.array([x for x in data.sequence(i) if g.same_component(anchor, int(x))], dtype=np.int64)
        if np.any(kept != anchor):
            seqs.append(kept)
            index.append(i)
    if not index:
        return CyclicSubdataset(None, np.zeros(0, dtype=np.int64))
    index = np.array(index, dtype=np.int64)
    sub = as_token_data(
        seqs, data.labels[index], data.K, query=data.query[index], require_realizable=realizable
    )
    return CyclicSubdataset(sub, index)


def scyc_dimension(E: object, graphs: TokenPriorityGraphs) -> int | None:
    """``dim S_cyc`` as the mathematics gives it, or None where it does not.

    With linearly independent embeddings (``rank E = K``, as Assumption 4 requires) the SCCs are
    disjoint and each SCC ``C`` of ``G^(k)`` adds ``|C| - 1`` dimensions: ``dim S_cyc = sum over
    (k, C) of (|C| - 1)``. With dependent embeddings (``K > d``, say) it depends on ``E``: None.

    Raises
    ------
    RankAmbiguousError
        If the rank of ``E`` itself is not determined in float64 (:func:`ntpnb._linalg.matrix_rank`).
    """
    E = check_embeddings(E, check_graphs(graphs).K)
    if E.shape[0] > E.shape[1] or matrix_rank(E, what="the embeddings E") < E.shape[0]:
        return None
    return sum(len(c) - 1 for _, c in graphs.cyclic_components)


def scyc_basis(E: object, graphs: TokenPriorityGraphs) -> np.ndarray:
    """Orthonormal basis of ``S_cyc`` (Definition 3), shape ``(dim, d*d)``, rows ``vec(W)``.

    ``S_cyc`` is spanned by ``(e_j - e-bar_i^(k)) e_k^T`` for every node ``j`` of every multi-node SCC
    ``C_i^(k)``, ``e-bar_i^(k)`` its mean embedding; equally by ``(e_i - e_j) e_k^T`` over the pairs
    ``(i ~ j)`` (Lemma 2's proof; the Graph-SVM's equalities). Its dimension is :func:`scyc_dimension`'s,
    verified against the generators' singular values (:func:`ntpnb._linalg.check_known_rank`), or for
    dependent embeddings decided at a gap of them (:func:`ntpnb._linalg.numerical_rank`).

    Raises
    ------
    RankAmbiguousError
        If the generators' spectrum shows no clear gap at the dimension (ill-conditioned
        embeddings), or, for dependent embeddings, anywhere.
    """
    E = check_embeddings(E, check_graphs(graphs).K)
    d = E.shape[1]
    gens = []
    for k, comp in graphs.cyclic_components:
        members = E[list(comp)]
        for e_j in members - members.mean(axis=0):
            gens.append(np.outer(e_j, E[k]).ravel())
    if not gens:
        return np.zeros((0, d * d))
    G = np.array(gens)
    _, s, vt = np.linalg.svd(G, full_matrices=False)
    what = "the generators of S_cyc"
    dim = scyc_dimension(E, graphs)
    if dim is None:
        dim = numerical_rank(s, G.shape, what=what)
    else:
        check_known_rank(s, G.shape, dim, what=what)
    return vt[:dim]


def project_scyc(W: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """``Pi_Scyc(W)`` for ``W`` of shape ``(..., d, d)`` given an orthonormal basis (rows).

    Raises
    ------
    InvalidDataError
        If ``W`` is not an array of square ``d x d`` matrices or ``basis`` not ``(m, d*d)``.
    """
    W, basis = as_float(W, "W"), as_float(basis, "basis")
    if W.ndim < 2 or W.shape[-1] != W.shape[-2]:
        raise InvalidDataError(f"W must have shape (..., d, d), got {W.shape}")
    d = W.shape[-1]
    if basis.ndim != 2 or basis.shape[1] != d * d:
        raise InvalidDataError(
            f"basis must have shape (m, {d * d}) for W of shape {W.shape}, got {basis.shape}"
        )
    flat = W.reshape(*W.shape[:-2], d * d)
    return ((flat @ basis.T) @ basis).reshape(W.shape)


@dataclass(frozen=True)
class PseudoGraphs:
    """Pseudo token-priority graphs of a trained ``W`` (Sec. 6) and what each sample selects."""

    #: The pseudo graphs ``G~^(k)``.
    graphs: TokenPriorityGraphs
    #: ``(n, T_max)`` booleans: positions whose attention exceeds the threshold.
    selected: np.ndarray
    #: ``(n, T_max)`` softmax probabilities ``s = S(X W x_bar)`` (0 at padding).
    scores: np.ndarray


def attention_logits(E: np.ndarray, data: TokenData, W: np.ndarray) -> np.ndarray:
    """Attention logits ``X W x_bar`` of every sample, ``(n, T_max)``, ``-inf`` at padding."""
    logits = np.einsum("ntd,de,ne->nt", E[data.tokens], W, E[data.query])
    return np.where(data.mask, logits, -np.inf)


def _threshold_and_band(threshold: float | None, exclusion_band: float) -> tuple[float, float]:
    """The attention threshold (default :data:`ntpnb.settings.PSEUDO_GRAPH_THRESHOLD`) and band, checked.

    Raises
    ------
    InvalidDataError
        Unless ``0 < threshold < 1`` and ``0 <= exclusion_band < threshold``.
    """
    thr = settings.PSEUDO_GRAPH_THRESHOLD if threshold is None else float(threshold)
    if not 0.0 < thr < 1.0:
        raise InvalidDataError(f"the attention threshold must lie in (0, 1), got {thr}")
    band = float(exclusion_band) if is_real(exclusion_band) else math.nan
    if not 0.0 <= band < thr:
        raise InvalidDataError(
            f"the exclusion band must lie in [0, threshold = {thr}), got {exclusion_band!r}"
        )
    return thr, band


def _selection_graphs(data: TokenData, selected: np.ndarray, excluded: np.ndarray) -> TokenPriorityGraphs:
    """The graphs ``G~^(k)``: an edge from every selected token to every input token not excluded.

    ``selected`` and ``excluded`` are ``(n, T)`` masks over the samples' positions; every input token
    of a sample with last token ``k`` is a node of ``G~^(k)``.
    """
    nodes: dict[int, set[int]] = {}
    edges: dict[int, set[tuple[int, int]]] = {}
    tokens, mask = data.tokens.tolist(), data.mask.tolist()
    chosen, dropped = selected.tolist(), excluded.tolist()
    for i, k in enumerate(data.query.tolist()):
        seq = {x for x, on in zip(tokens[i], mask[i], strict=True) if on}
        nodes.setdefault(k, set()).update(seq)
        targets = seq - {x for x, out in zip(tokens[i], dropped[i], strict=True) if out}
        sources = {x for x, pick in zip(tokens[i], chosen[i], strict=True) if pick}
        edges.setdefault(k, set()).update((x1, x2) for x1 in sources for x2 in targets)
    return graphs_from_sets(data.K, nodes, edges)


def pseudo_priority_graphs(
    E: object,
    data: TokenData,
    W: object,
    *,
    threshold: float | None = None,
    exclusion_band: float = 0.0,
) -> PseudoGraphs:
    """Pseudo token-priority graphs built from the attention of a trained ``W`` (Sec. 6).

    For every sample with last token ``k`` and position ``t1`` whose attention ``s_t1 = S(X W
    x_bar)_t1`` exceeds ``threshold``, add ``x_t1 -> x_t2`` to ``G~^(k)`` for every input token
    ``x_t2``: selected tokens play the label's role. The paper writes ``s_t1 > 0`` (always true); a
    trained ``W`` saturates the softmax, so any small threshold (default
    :data:`ntpnb.settings.PSEUDO_GRAPH_THRESHOLD`) separates selected from suppressed tokens.

    ``exclusion_band``: a token with attention in ``(threshold - exclusion_band, threshold]`` gets
    no edge (neither selected nor dominated), as Paper B's code does with ``E_thres = C_thres - 1e-3``
    (``Tarjan.initialize_local``); the default 0 excludes nothing.
    """
    thr, band = _threshold_and_band(threshold, exclusion_band)
    data = check_token_data(data)
    E = check_embeddings(E, data.K)
    d = E.shape[1]
    W = as_float(W, "W")
    if W.shape != (d, d) or not np.all(np.isfinite(W)):
        raise InvalidDataError(f"W must be a finite ({d}, {d}) matrix, got shape {W.shape}")
    logits = attention_logits(E, data, W)
    s = np.exp(logits - logits.max(axis=1, keepdims=True))
    s /= s.sum(axis=1, keepdims=True)
    selected = (s > thr) & data.mask
    if not selected.any(axis=1).all():
        raise InvalidDataError(f"some sample selects no token at threshold {thr}; use a smaller threshold")
    excluded = (s > thr - band) & ~selected & data.mask if band > 0 else np.zeros_like(selected)
    graphs = _selection_graphs(data, selected, excluded)
    return PseudoGraphs(graphs, frozen(selected, order="K"), frozen(s, order="K"))


def pseudo_cyclic_subdataset(pseudo: PseudoGraphs, data: TokenData) -> CyclicSubdataset:
    """The cyclic sub-dataset of the pseudo graphs (Sec. 6 and Appendix D).

    A sample's selected tokens lie in one SCC of ``G~^(k)`` (edges both ways); it keeps its input
    tokens of that SCC and its true label, and is kept when two or more distinct tokens remain.
    """
    if pseudo.selected.shape != data.mask.shape:
        raise InvalidDataError("the pseudo graphs were built from a different data set")
    anchors = [int(data.tokens[i, np.flatnonzero(pseudo.selected[i])[0]]) for i in range(data.n)]
    return _reduced(data, pseudo.graphs, anchors, False)
