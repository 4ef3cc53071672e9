"""The benchmark instances: Gaussian embeddings, uniform supports, Dirichlet probabilities."""

from __future__ import annotations

import numpy as np

from ntpnb.linear.data import NTPData
from ntpnb.linear.datasets import dirichlet_on_supports


def gaussian_instance(m: int, V: int, d: int, S: int, seed: int = 0) -> NTPData:
    """A random instance of size ``(m, V, d, S)``.

    ``h_j ~ N(0, I_d / d)``, supports of size ``S`` drawn uniformly from the ``V`` tokens,
    ``p_j`` Dirichlet(1) on its support, ``pi`` uniform.
    """
    rng = np.random.default_rng(seed)
    H = rng.standard_normal((m, d)) / np.sqrt(d)
    mask = np.zeros((m, V), dtype=bool)
    for j in range(m):
        mask[j, rng.choice(V, size=S, replace=False)] = True
    return NTPData(H=H, pi=np.full(m, 1.0 / m), P=dirichlet_on_supports(mask, rng))


def fresh_copy(data: NTPData) -> NTPData:
    """A new data object with the same arrays: the package caches per object, a timing must not."""
    return NTPData(H=data.H, pi=data.pi, P=data.P)
