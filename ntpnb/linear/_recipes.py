"""Seeded synthetic data sets following the settings of Paper A's experiments.

Paper A publishes only its settings; each recipe states how it fills the gaps.
"""

from __future__ import annotations

import numpy as np
import scipy

from .. import settings
from .._reproducible_products import dot_sum
from .._toy2d import TOY2D_ENTROPY, TOY2D_SUPPORTS
from .._validation import as_count, as_generator, check_dense_size, is_real
from ..errors import InvalidDataError
from ._ntp_data import NTPData


def dirichlet_on_supports(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Rows uniform on the simplex of each row's support (Dirichlet(1)), zero elsewhere."""
    mask = np.asarray(mask)
    if mask.ndim != 2 or mask.dtype != bool or not np.all(mask.any(axis=1)):
        raise InvalidDataError("mask must be a 2-D boolean array with a True in every row")
    gam = rng.gamma(1.0, size=mask.shape) * mask
    return gam / gam.sum(axis=1, keepdims=True)


def toy2d_instance(seed: int | np.random.Generator = 0, entropy: float | None = TOY2D_ENTROPY) -> NTPData:
    """The 2D example of Paper A, Fig. 1: ``m = 3, d = 2, V = 5, S_j = 3``.

    Supports :data:`TOY2D_SUPPORTS`, ``pi`` uniform. Each ``p_j`` is uniform on the simplex of
    its support (Dirichlet(1)), then tempered by one common exponent to ``entropy``
    (:func:`temper_to_entropy`; the paper reports ``H = 0.8811``). The paper gives no embeddings:
    ``h_A, h_B, h_C`` sit near the angles 90, 210 and 330 degrees (jittered by up to 25 degrees,
    norms uniform in [0.7, 1.3]), so the origin lies inside the triangle ABC: NTP-separable.

    Parameters
    ----------
    seed
        Seed (or generator) of the draws: probabilities first, then angles and norms.
    entropy
        Target empirical conditional entropy in nats, in ``(0, log 3)``; None: no tempering.

    Raises
    ------
    InvalidDataError
        If ``entropy`` is not a number in ``(0, log 3)``.
    """
    rng = as_generator(seed)
    mask = np.zeros((3, 5), dtype=bool)
    for j, support in enumerate(TOY2D_SUPPORTS):
        mask[j, [z - 1 for z in support]] = True
    P = dirichlet_on_supports(mask, rng)
    angles = np.deg2rad(np.array([90.0, 210.0, 330.0]) + rng.uniform(-25.0, 25.0, size=3))
    radii = rng.uniform(0.7, 1.3, size=3)
    H = radii[:, None] * np.column_stack([np.cos(angles), np.sin(angles)])
    pi = np.full(3, 1 / 3)
    if entropy is not None:
        P = temper_to_entropy(P, pi, entropy)
    return NTPData(H=H, pi=pi, P=P)


def _tempered(logP: np.ndarray, mask: np.ndarray, beta: float) -> np.ndarray:
    """Rows ``p_j^beta / sum_z p_jz^beta`` on their supports (zero elsewhere), from ``log P``."""
    L = np.where(mask, beta * logP, -np.inf)
    L = L - L.max(axis=1, keepdims=True)
    Q = np.where(mask, np.exp(L), 0.0)
    return Q / Q.sum(axis=1, keepdims=True)


def _conditional_entropy(P: np.ndarray, pi: np.ndarray) -> float:
    """``-sum_j pi_j sum_z P_jz log P_jz``, summed without BLAS: the same float on every CPU."""
    logP = np.log(P, where=P > 0, out=np.zeros_like(P))
    return float(-dot_sum(zip(pi, (P * logP).sum(axis=1), strict=True)))


def temper_to_entropy(P: np.ndarray, pi: np.ndarray, entropy: float) -> np.ndarray:
    """Rows ``p_j^beta / sum_z p_jz^beta``, one ``beta`` for all, with the given entropy (to ~1e-12).

    The entropy decreases strictly in ``beta`` (unless every row is uniform); Brent's method on
    ``log beta`` finds it.

    Raises
    ------
    InvalidDataError
        If ``entropy`` is not strictly between 0 and the entropy of the uniform rows on the same
        supports (the two limits ``beta -> inf`` and ``beta -> 0``), or if every row is uniform.
    """
    mask = P > 0
    top = _conditional_entropy(mask / mask.sum(axis=1, keepdims=True), pi)
    if not (is_real(entropy) and 0.0 < entropy < top):
        raise InvalidDataError(
            f"the target entropy must be a number in (0, {top:.6g}) nats (the entropy of uniform rows "
            f"on these supports), got {entropy!r}"
        )
    logP = np.log(P, where=mask, out=np.zeros_like(P))

    def excess(log_beta: float) -> float:
        return _conditional_entropy(_tempered(logP, mask, np.exp(log_beta)), pi) - entropy

    lo, hi = -1.0, 1.0
    while excess(lo) < 0 and lo > -60:
        lo *= 2
    while excess(hi) > 0 and hi < 60:
        hi *= 2
    if not excess(lo) >= 0 >= excess(hi):
        raise InvalidDataError(f"no tempering of these rows reaches the entropy {entropy!r}")
    log_beta = scipy.optimize.brentq(
        excess, lo, hi, xtol=settings.TEMPER_LOG_BETA_XTOL, rtol=settings.TEMPER_LOG_BETA_RTOL
    )
    return _tempered(logP, mask, np.exp(log_beta))


def synthetic_instance(
    n: int = 5000,
    m: int = 50,
    d: int = 60,
    V: int = 10,
    S: int = 6,
    seed: int | np.random.Generator = 0,
) -> NTPData:
    """The synthetic data of Paper A, Figs. 3-5 (defaults: the paper's settings).

    ``h_j`` has i.i.d. ``N(0, 1/d)`` entries, ``S_j`` is a uniform ``S``-subset of the
    vocabulary and ``g_j`` uniform on its simplex. Each (context, in-support token) pair occurs
    once (every ``|S_j| = S``, as the paper states); the other ``n - m S`` samples draw a context
    uniformly and its next token from ``g_j``; ``pi`` and ``P`` are the empirical frequencies.
    The forced counts raise ``H`` (about 1.47 nats at the defaults) above the paper's 1.445.

    Raises
    ------
    InvalidDataError
        If the sizes are inconsistent (``S > V`` or ``n < m S``).
    """
    n, m, d, V, S = (as_count(v, name, minimum=1) for v, name in zip((n, m, d, V, S), "nmdVS", strict=True))
    rng = as_generator(seed)
    if not 1 <= S <= V:
        raise InvalidDataError(f"the support size S = {S} must lie in [1, V = {V}]")
    if n < m * S:
        raise InvalidDataError(f"n = {n} samples cannot cover m * S = {m * S} (context, token) pairs")
    check_dense_size((m, max(d, V)), "H or the (m, V) counts")
    H = rng.standard_normal((m, d)) / np.sqrt(d)
    mask = np.zeros((m, V), dtype=bool)
    for j in range(m):
        mask[j, rng.choice(V, size=S, replace=False)] = True
    P_gen = dirichlet_on_supports(mask, rng)
    per_context = rng.multinomial(n - m * S, np.full(m, 1.0 / m))
    counts = (mask.astype(np.int64) + rng.multinomial(per_context, P_gen)).astype(float)
    per_context = counts.sum(axis=1)  # n pi_j p_jz is the count of (context j, token z)
    return NTPData(H=H, pi=per_context / n, P=counts / per_context[:, None])
