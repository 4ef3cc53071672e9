"""Seeded attention instances shared by the attention tests."""

from __future__ import annotations

from ntpnb.attention import TokenData, as_token_data, general_dataset, random_embeddings


def general_instance(seed: int, K: int = 6, d: int = 8, n: int = 6, T: int = 4) -> tuple:
    """Embeddings ``E`` and a general (cyclic) data set of chapter 6's sizes, from ``seed``."""
    E = random_embeddings(K, d, seed)
    X, y = general_dataset(K, n, T, seed + 100)
    data: TokenData = as_token_data(X, y, K)
    return E, data
