"""Seeded attention instances and cases shared by the attention tests."""

from __future__ import annotations

import numpy as np

from ntpnb.attention import TokenData, as_token_data, general_dataset, random_embeddings


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
