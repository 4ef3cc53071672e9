"""The benchmark instances.

Paper A: Gaussian embeddings, uniform supports, Dirichlet probabilities (and, for the
regularization path, its radii). Paper B: the general (cyclic) data of chapter 07 at growing size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ntpnb.attention import TokenData, TokenPriorityGraphs, token_priority_graphs, trial_data
from ntpnb.linear import NTPData, dirichlet_on_supports


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


#: Radii of a regularization-path benchmark: this many, log-spaced from PATH_B_MIN ...
PATH_N_RADII = 20
PATH_B_MIN = 0.1
#: ... to this multiple of ``||W^mm||`` (chapter 02 goes to 600 x on its own instances; at 100 x
#: the out-of-support mass is about exp(-100), far past where the F-part drops below rounding).
PATH_B_TOP_OVER_MM = 100.0


def path_radii(data: NTPData) -> np.ndarray:
    """``PATH_N_RADII`` radii log-spaced in ``[PATH_B_MIN, PATH_B_TOP_OVER_MM ||W^mm||]``."""
    from ntpnb.linear import solve_active_set

    top = PATH_B_TOP_OVER_MM * float(np.linalg.norm(solve_active_set(data).W))
    return np.geomspace(PATH_B_MIN, top, PATH_N_RADII)


def path_instance(m: int, V: int, d: int, S: int, seed: int = 0) -> tuple[NTPData, np.ndarray]:
    """A :func:`gaussian_instance` and its :func:`path_radii`."""
    data = gaussian_instance(m, V, d, S, seed)
    return data, path_radii(data)


def fresh_path_copy(instance: tuple[NTPData, np.ndarray]) -> tuple[NTPData, np.ndarray]:
    """:func:`fresh_copy` of the data, the same radii."""
    data, radii = instance
    return fresh_copy(data), radii


@dataclass(frozen=True)
class AttentionInstance:
    """Paper B's general (cyclic) data: embeddings, tokens and their token-priority graphs."""

    E: np.ndarray
    data: TokenData
    graphs: TokenPriorityGraphs


def attention_instance(K: int, d: int, n: int, T: int, seed: int = 0) -> AttentionInstance:
    """General data of size ``(K, d, n, T)`` drawn as chapter 07 draws its trials (Appendix D).

    Unit-sphere embeddings, ``T`` distinct tokens per sample, a label drawn among them, redrawn
    until some graph has a cycle and a strict relation.
    """
    rng = np.random.default_rng(seed)
    E, data = trial_data("general", K=K, d=d, n=n, T=T, rng=rng)
    return AttentionInstance(E, data, token_priority_graphs(data))


def unchanged(instance: object) -> object:
    """The instance itself: Paper B's instances are read-only and nothing caches on them."""
    return instance
