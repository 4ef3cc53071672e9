"""Seeded synthetic data sets following the recipes of Paper A's experiments.

Paper A does not publish its instances or code, only their settings; the recipes below follow
those settings and fill the gaps (stated in each docstring) in the simplest way consistent
with them. Every draw comes from ``numpy.random.default_rng(seed)``.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import InvalidDataError
from .data import NTPData, as_count

__all__ = [
    "TOY2D_CONTEXTS",
    "TOY2D_SUPPORTS",
    "toy2d_instance",
    "synthetic_instance",
    "dirichlet_on_supports",
]

#: Names of the three contexts of Paper A's Fig. 1.
TOY2D_CONTEXTS: tuple[str, ...] = ("A", "B", "C")

#: Support sets of Fig. 1 in the paper's 1-based token numbering (caption of the arXiv v1 text).
TOY2D_SUPPORTS: tuple[tuple[int, ...], ...] = ((2, 3, 4), (1, 4, 5), (1, 2, 5))


def _rng(seed: int | np.random.Generator) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def _check_seed(seed: object) -> None:
    """A seed is a non-negative integer or a ``numpy.random.Generator``."""
    if not isinstance(seed, np.random.Generator):
        as_count(seed, "seed (or a numpy.random.Generator)", minimum=0)


def dirichlet_on_supports(
    mask: np.ndarray, rng: np.random.Generator, concentration: float = 1.0
) -> np.ndarray:
    """Rows drawn from a symmetric Dirichlet distribution on each row's support, zero elsewhere.

    With ``concentration = 1`` each row is uniform on its probability simplex.
    """
    mask = np.asarray(mask)
    if mask.ndim != 2 or mask.dtype != bool or not np.all(mask.any(axis=1)):
        raise InvalidDataError("mask must be a 2-D boolean array with a True in every row")
    if not (isinstance(concentration, numbers.Real) and 0 < concentration < np.inf):
        raise InvalidDataError(f"concentration must be a positive finite number, got {concentration!r}")
    gam = rng.gamma(concentration, size=mask.shape) * mask
    return gam / gam.sum(axis=1, keepdims=True)


def toy2d_instance(seed: int | np.random.Generator = 0) -> NTPData:
    """The 2D example of Paper A, Fig. 1: ``m = 3, d = 2, V = 5, S_j = 3``.

    Supports ``A = {2, 3, 4}, B = {1, 4, 5}, C = {1, 2, 5}`` (1-based; 0-based in the arrays).
    The paper assigns the probabilities "randomly": here each ``p_j`` is uniform on the simplex
    of its support (Dirichlet(1)) and ``pi`` is uniform. The paper does not give the embeddings;
    here ``h_A, h_B, h_C`` sit near the angles 90, 210 and 330 degrees (each angle jittered
    uniformly by up to 25 degrees, each norm uniform in [0.7, 1.3]). The origin then lies inside
    the triangle ABC, which these supports need: if one embedding were a positive combination of
    the other two, the pair would share a token the third context lacks, and (6a)-(6b) would
    contradict each other, so the data would not be NTP-separable in d = 2.
    """
    _check_seed(seed)
    rng = _rng(seed)
    mask = np.zeros((3, 5), dtype=bool)
    for j, support in enumerate(TOY2D_SUPPORTS):
        mask[j, [z - 1 for z in support]] = True
    P = dirichlet_on_supports(mask, rng)
    angles = np.deg2rad(np.array([90.0, 210.0, 330.0]) + rng.uniform(-25.0, 25.0, size=3))
    radii = rng.uniform(0.7, 1.3, size=3)
    H = radii[:, None] * np.column_stack([np.cos(angles), np.sin(angles)])
    return NTPData(H=H, pi=np.full(3, 1 / 3), P=P)


def synthetic_instance(
    n: int = 5000,
    m: int = 50,
    d: int = 60,
    V: int = 10,
    S: int = 6,
    seed: int | np.random.Generator = 0,
) -> NTPData:
    """The synthetic data of Paper A, Figs. 3-5 (defaults: the paper's settings).

    ``n`` (context, next token) samples over ``m`` distinct contexts with ``d``-dimensional
    embeddings, a vocabulary of ``V`` tokens and ``S`` tokens in every support. The paper says
    supports and probabilities "are chosen randomly" and embeddings are "randomly generated";
    here:

    * ``h_j`` has i.i.d. ``N(0, 1/d)`` entries (so ``||h_j|| ~ 1``);
    * ``S_j`` is a uniformly random ``S``-subset of the vocabulary;
    * the generating distribution of context ``j`` is uniform on the simplex of ``S_j``
      (Dirichlet(1)), whose mean entropy ``1/2 + ... + 1/S`` is 1.45 nats for ``S = 6``,
      matching the paper's ``H ~ 1.445``;
    * each (context, in-support token) pair occurs once, so that every ``|S_j| = S`` as the
      paper states; the other ``n - m S`` samples draw a context uniformly and its next token
      from the context's distribution. ``pi`` and ``P`` are the empirical counts
      (:meth:`NTPData.from_samples`).

    Raises
    ------
    InvalidDataError
        If the sizes are inconsistent (``S > V`` or ``n < m S``).
    """
    n, m, d, V, S = (as_count(v, name, minimum=1) for v, name in zip((n, m, d, V, S), "nmdVS", strict=True))
    _check_seed(seed)
    if not 1 <= S <= V:
        raise InvalidDataError(f"the support size S = {S} must lie in [1, V = {V}]")
    if n < m * S:
        raise InvalidDataError(f"n = {n} samples cannot cover m * S = {m * S} (context, token) pairs")
    rng = _rng(seed)
    H = rng.standard_normal((m, d)) / np.sqrt(d)
    mask = np.zeros((m, V), dtype=bool)
    for j in range(m):
        mask[j, rng.choice(V, size=S, replace=False)] = True
    P_gen = dirichlet_on_supports(mask, rng)
    per_context = rng.multinomial(n - m * S, np.full(m, 1.0 / m))
    counts = mask.astype(np.int64) + rng.multinomial(per_context, P_gen)
    pair_context, pair_token = np.indices((m, V)).reshape(2, -1)
    contexts = np.repeat(pair_context, counts.ravel())
    tokens = np.repeat(pair_token, counts.ravel())
    return NTPData.from_samples(contexts, tokens, H, V)
