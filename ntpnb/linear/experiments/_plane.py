"""The plane of Fig. 1: separability of its supports (chapter 1) and its caption (chapter 3).

With Fig. 1's supports in ``d = 2`` the data are NTP-separable exactly when the origin lies
strictly inside the triangle of the three embeddings: the linear relation of the embeddings
(:func:`plane_relation`) has one sign (:func:`origin_inside`), and the proof's construction
gives a separating direction (:func:`proof_direction`). The caption's reading of the rows of
``W^mm`` is measured on one instance, over draws of the recipe and in ``d = 4``, where the
constraints leave ``w_1 - w_5`` free.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ... import settings
from ..._validation import as_count, as_float_array, as_generator
from ...errors import InvalidDataError
from .._max_margin import ntp_svm
from .._ntp_data import NTPData, check_decoder, require_data
from .._recipes import toy2d_instance
from .._separability import is_separable, satisfies_definition_2

__all__ = [
    "plane_relation",
    "origin_inside",
    "proof_direction",
    "CaptionGeometry",
    "caption_geometry",
    "caption_draws",
    "free_rows_draws",
]


def plane_relation(H: ArrayLike) -> np.ndarray:
    """``(a, b, c)`` with ``a h_A + b h_B + c h_C = 0``: the 2x2 determinants of the proof.

    ``a = det[h_B, h_C]``, ``b = det[h_C, h_A]``, ``c = det[h_A, h_B]`` for the rows of the
    ``(3, 2)`` embedding matrix ``H``.
    """
    H = as_float_array(H, "H", 2)
    if H.shape != (3, 2):
        raise InvalidDataError(f"the plane theorem takes three embeddings in R^2, got shape {H.shape}")
    first, second = np.roll(H, -1, axis=0), np.roll(H, -2, axis=0)  # (h_B, h_C, h_A), (h_C, h_A, h_B)
    return first[:, 0] * second[:, 1] - first[:, 1] * second[:, 0]


def origin_inside(H: ArrayLike) -> bool:
    """Whether ``a, b, c`` are non-zero and of one sign: the origin strictly inside ``ABC``."""
    coef = plane_relation(H)
    return bool(np.all(coef > 0) or np.all(coef < 0))


def proof_direction(H: ArrayLike, mask: ArrayLike) -> np.ndarray:
    """The ``W^d`` of the plane theorem's proof: in-support logits 2, each row fixed by two contexts.

    ``mask`` is the ``(3, V)`` support mask of Fig. 1's supports (tokens in two supports, and
    one token in a single support, whose value on the next context is fixed at ``2 - 1/c``).
    The relation ``(a, b, c)`` is scaled to sum to 1.
    """
    coef, mask = plane_relation(H), np.asarray(mask, dtype=bool)  # plane_relation checks H
    if mask.ndim != 2 or mask.shape[0] != 3:
        raise InvalidDataError(f"mask must be the (3, V) support mask, got shape {mask.shape}")
    coef = coef / coef.sum()
    H, W = np.asarray(H, dtype=float), np.zeros((mask.shape[1], 2))
    for v in range(mask.shape[1]):
        inside = np.flatnonzero(mask[:, v])
        if inside.size == 2:
            rows, values = inside, [2.0, 2.0]
        else:  # a token in one support only: also fix its value on the next context
            k = (inside[0] + 1) % 3
            rows, values = [inside[0], k], [2.0, 2.0 - 1 / coef[k]]
        W[v] = np.linalg.solve(H[rows], values)
    return W


@dataclass(frozen=True)
class CaptionGeometry:
    """The predictions of Fig. 1's caption for the rows of ``W`` (its supports), measured."""

    #: ``||w_1 - w_5|| / ||W||`` (tokens 1 and 5 follow the same contexts).
    w1_w5: float
    #: ``(v, j)``: the token that follows a single context, and that context.
    single: tuple[int, int]
    #: The cosine of ``w_v`` with ``h_j``.
    cos_single: float
    #: Whether the line normal to ``w_v`` cuts context ``j`` off from the other two.
    alone: bool
    #: For each token ``v`` that follows two contexts: the angle (degrees) between their embeddings,
    #: ``||w_v||``, and the smaller coefficient of ``w_v`` in their basis.
    cones: dict[int, tuple[float, float, float]]
    #: Whether every such row lies inside the cone of its contexts.
    in_cones: bool
    #: Whether the widest cone holds the longest row.
    widest_longest: bool


def caption_geometry(data: NTPData, W: ArrayLike) -> CaptionGeometry:
    """Measure the caption's predictions for the rows of ``W`` (data with the supports of Fig. 1)."""
    W = check_decoder(data, W)
    follow = [np.flatnonzero(data.support_mask[:, v]) for v in range(data.V)]
    single = [v for v in range(data.V) if follow[v].size == 1]
    if len(single) != 1 or data.V < 5:
        raise InvalidDataError("caption_geometry needs the supports of Fig. 1 (one single-context token)")
    (v3,) = single
    j3, w3 = follow[v3][0], W[v3]
    signs = np.sign(data.H @ w3)
    cones = {}
    for v in (v for v in range(data.V) if follow[v].size == 2):
        pair = data.H[follow[v]]
        cos_angle = pair[0] @ pair[1] / np.prod(np.linalg.norm(pair, axis=1))
        coefficients = np.linalg.solve(pair.T, W[v])  # W[v] = a h + b h'
        cones[v] = (np.degrees(np.arccos(cos_angle)), np.linalg.norm(W[v]), coefficients.min())
    widest = max(cones, key=lambda v: cones[v][0])
    return CaptionGeometry(
        w1_w5=np.linalg.norm(W[0] - W[4]) / np.linalg.norm(W),
        single=(v3, int(j3)),
        cos_single=w3 @ data.H[j3] / np.linalg.norm(w3) / np.linalg.norm(data.H[j3]),
        alone=bool(signs[j3] > 0 and np.sum(signs > 0) == 1),
        cones=cones,
        in_cones=min(c[2] for c in cones.values()) > 0,
        widest_longest=cones[widest][1] >= max(c[1] for c in cones.values()),
    )


def caption_draws(seeds: Sequence[int]) -> list[CaptionGeometry]:
    """:func:`caption_geometry` of ``W^mm`` on the separable draws of the 2D recipe, one per seed."""
    instances = (toy2d_instance(s) for s in seeds)
    return [caption_geometry(data, ntp_svm(data)) for data in instances if is_separable(data)]


def free_rows_draws(data: NTPData, n_draws: int, d: int, rng: np.random.Generator) -> tuple[list, list]:
    """``w_1 = w_5`` where the constraints do not force it: the supports of ``data`` in ``d`` dims.

    Each draw keeps ``pi`` and ``P`` and draws Gaussian embeddings in ``R^d``. Returns, per
    draw, ``||w_1 - w_5|| / ||W^mm||`` and whether a ``W^d`` with ``w_1 != w_5`` meets (6):
    ``W^mm`` with a vector orthogonal to every embedding added to ``w_1`` (``||w_1 - w_5||``
    above 0.5, Definition 2 to :data:`~ntpnb.settings.FREE_ROWS_DEF2_RTOL`).
    """
    require_data(data)
    n_draws, d = as_count(n_draws, "n_draws"), as_count(d, "d")
    rng = as_generator(rng, "rng")
    gaps, free = [], []
    for _ in range(n_draws):
        drawn = NTPData(H=rng.standard_normal((data.m, d)), pi=data.pi, P=data.P)
        W = ntp_svm(drawn)
        gaps.append(np.linalg.norm(W[0] - W[4]) / np.linalg.norm(W))
        other = W.copy()
        other[0] += np.linalg.svd(drawn.H)[2][-1]  # orthogonal to every embedding
        meets = satisfies_definition_2(drawn, other, settings.FREE_ROWS_DEF2_RTOL)
        free.append(meets and np.linalg.norm(other[0] - other[4]) > 0.5)
    return gaps, free
