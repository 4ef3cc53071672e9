"""Seeded attention instances and cases shared by the attention tests."""

from __future__ import annotations

import numpy as np

from ntpnb.attention import (
    Problem,
    TokenData,
    as_token_data,
    general_dataset,
    identity_head,
    make_problem,
    random_embeddings,
    stack_problems,
    tied_head,
)


def general_instance(seed: int, K: int = 6, d: int = 8, n: int = 6, T: int = 4) -> tuple:
    """Embeddings ``E`` and a general (cyclic) data set of chapter 6's sizes, from ``seed``."""
    E = random_embeddings(K, d, seed)
    X, y = general_dataset(K, n, T, seed + 100)
    data: TokenData = as_token_data(X, y, K)
    return E, data


#: The (loss, head) pairs every gradient is tested on.
CASES = [
    ("log", "identity"),
    ("squared", "identity"),
    ("ce", "identity"),
    ("squared", "argmax"),
    ("ce", "argmax"),
    ("squared_softmax", "argmax"),
]


def with_condition(E: np.ndarray, cond: float) -> np.ndarray:
    """``E`` with its singular values replaced by a geometric sequence from 1 to ``1 / cond``."""
    U, _, Vt = np.linalg.svd(E, full_matrices=False)
    return U @ np.diag(np.geomspace(1.0, 1.0 / cond, E.shape[0])) @ Vt


#: The head of each assumption (``"identity"``: ``C E^T = I``; ``"argmax"``: ``C = E``).
HEADS = {"identity": identity_head, "argmax": tied_head}

#: Sizes ``(K, d, n, T)`` of trials of different ``n`` and ``T``, so that a stack of them has padded
#: samples and positions.
STACKED_SIZES = ((6, 8, 5, 4), (6, 8, 3, 6), (6, 8, 7, 2))


def stacked_problem(loss: str, head: str, sizes: tuple = STACKED_SIZES) -> Problem:
    """Trials of the given sizes (seeded), one loss and head, stacked on the trial axis."""
    problems = []
    for seed, (K, d, n, T) in enumerate(sizes):
        E = random_embeddings(K, d, seed)
        X, y = general_dataset(K, n, T, seed + 10)
        problems.append(make_problem(E, HEADS[head](E), as_token_data(X, y, K), loss, head))
    return stack_problems(problems)
