"""Helpers shared by the tests."""

from __future__ import annotations

import numpy as np

import ntpnb as ntp


def random_data(m: int, d: int, V: int, S: int, seed: int) -> ntp.NTPData:
    """Random data with exactly S tokens in each support (probabilities drawn directly)."""
    rng = np.random.default_rng(seed)
    mask = np.zeros((m, V), dtype=bool)
    for j in range(m):
        mask[j, rng.choice(V, size=S, replace=False)] = True
    P = rng.uniform(0.1, 1.0, size=(m, V)) * mask
    P /= P.sum(axis=1, keepdims=True)
    pi = rng.uniform(0.5, 1.0, size=m)
    return ntp.NTPData(H=rng.standard_normal((m, d)), pi=pi / pi.sum(), P=P)
