"""The random data sets of Paper B's Appendix D.

Embeddings on the unit sphere, acyclic data sets (labels follow a priority order) and general ones
(labels drawn from the sequence, redrawn until a graph has a cycle). Draws take a ``seed`` or a
``numpy.random.Generator``.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_count, as_generator, check_dense_size
from ..errors import GenerationError, InvalidDataError
from ._graphs import token_priority_graphs
from ._token_data import drawn_token_data

__all__ = ["random_embeddings", "acyclic_dataset", "general_dataset"]

# Each public draw checks its sizes, then calls its ``*_draw`` (sizes trusted), which a caller that
# checked the sizes once (:func:`checked_sizes`) calls for many draws.

#: How many times :func:`general_dataset` draws at most (the authors' code also redraws).
MAX_REDRAWS = 100


def checked_sizes(K: int, n: int, T: int) -> tuple[int, int, int]:
    """The sizes of ``n`` inputs of ``T`` distinct tokens of ``K``, checked."""
    K, n, T = as_count(K, "K"), as_count(n, "n"), as_count(T, "T")
    if T > K:
        raise InvalidDataError(f"cannot draw T = {T} distinct tokens from a vocabulary of K = {K}")
    check_dense_size((n, K), "the token draws of the data set")
    return K, n, T


def checked_embedding_sizes(K: int, d: int) -> tuple[int, int]:
    """The sizes of ``K`` embeddings in ``R^d``, checked."""
    K, d = as_count(K, "K"), as_count(d, "d")
    check_dense_size((K, d), "the embeddings E")
    return K, d


def random_embeddings(K: int, d: int, seed: int | np.random.Generator | None = None) -> np.ndarray:
    """``E`` with rows drawn uniformly from the unit sphere of ``R^d`` (Appendix D, step 1)."""
    K, d = checked_embedding_sizes(K, d)
    return embeddings_draw(K, d, as_generator(seed, allow_none=True))


def embeddings_draw(K: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """:func:`random_embeddings` for checked sizes (:func:`checked_embedding_sizes`)."""
    G = rng.standard_normal((K, d))
    return G / np.linalg.norm(G, axis=1, keepdims=True)


def acyclic_dataset(
    K: int,
    n: int,
    T: int,
    seed: int | np.random.Generator | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An acyclic data set (Appendix D): the label is the highest-priority token of its sequence.

    A random priority order of the ``K`` tokens is drawn; each input has ``T`` distinct uniform
    tokens (as in the authors' code). Every edge ``y -> x`` then goes down the priority order: the
    graphs are acyclic (Definition 2), the labels realizable.

    Returns
    -------
    X, y, priority
        Ids ``(n, T)``, labels ``(n,)``, and ``priority[k]`` the rank of token ``k`` (0 = highest).
    """
    K, n, T = checked_sizes(K, n, T)
    return acyclic_draw(K, n, T, as_generator(seed, allow_none=True))


def acyclic_draw(
    K: int, n: int, T: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`acyclic_dataset` for checked sizes (:func:`checked_sizes`)."""
    priority = rng.permutation(K)
    X = np.argsort(rng.random((n, K)), axis=1)[:, :T]
    y = np.take_along_axis(X, np.argmin(priority[X], axis=1)[:, None], axis=1)[:, 0]
    return X, y, priority


def general_dataset(
    K: int,
    n: int,
    T: int,
    seed: int | np.random.Generator | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """A general (possibly cyclic) data set (Appendix D) with realizable labels.

    Each input has ``T`` distinct uniform tokens; its label is one of them, uniformly (Assumption
    2). Redrawn (at most ``MAX_REDRAWS`` times) until some graph has a multi-node SCC *and* some
    ``(i => j)`` exists (non-trivial ``W^cyc`` and ``W^mm``, as Theorems 2-3 assume); at chapter
    7's sizes about half of the draws do not qualify.

    Raises
    ------
    GenerationError
        If no draw within ``MAX_REDRAWS`` qualifies.
    """
    K, n, T = checked_sizes(K, n, T)
    return general_draw(K, n, T, as_generator(seed, allow_none=True))


def general_draw(K: int, n: int, T: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """:func:`general_dataset` for checked sizes (:func:`checked_sizes`)."""
    for _ in range(MAX_REDRAWS):
        X = np.argsort(rng.random((n, K)), axis=1)[:, :T]
        y = X[np.arange(n), rng.integers(0, T, size=n)]
        tpg = token_priority_graphs(drawn_token_data(X, y, K))
        if tpg.cyclic_components and tpg.strict:
            return X, y
    raise GenerationError(
        f"no draw of {MAX_REDRAWS} had a multi-node strongly-connected component and a strict "
        f"relation (K={K}, n={n}, T={T}); change the sizes"
    )
