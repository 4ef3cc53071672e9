"""Prefix contexts of real text and the joint problem of Appendix C (chapter 5).

The autoregressive objective written with one row per (prefix, next token) pair
(:func:`autoregressive_pairs`) is the loss over distinct contexts; the joint problem's
separability is decided by the certified LP, each decision timed (:class:`TimedSeparability`),
and compared with that of each context length alone (:func:`length_slice`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ...errors import InvalidDataError
from ...validation import as_float_array
from ..data import NTPData
from ..separability import is_separable
from ..sequences import PrefixContexts, joint_ntp_data, smallest_separable_dimension

__all__ = [
    "autoregressive_pairs",
    "LPDecision",
    "TimedSeparability",
    "length_slice",
    "JointThresholds",
    "joint_thresholds",
]


def autoregressive_pairs(windows: Sequence[Sequence[int]], contexts: PrefixContexts, H: ArrayLike) -> NTPData:
    """The autoregressive objective itself: one row per (prefix, next token) pair.

    Each prefix ``s[:t]`` of each sequence is embedded as its distinct context (row of ``H``,
    in the order of ``contexts``), with a one-hot target and equal weights, so that its loss
    is the per-pair average of Appendix C.
    """
    H = as_float_array(H, "H", 2)
    if H.shape[0] != contexts.m:
        raise InvalidDataError(f"H must have one row per distinct context ({contexts.m}), got {H.shape[0]}")
    row = {c: j for j, c in enumerate(contexts.contexts)}
    try:
        rows = [row[tuple(s[:t])] for s in windows for t in range(1, len(s))]
    except KeyError as exc:
        raise InvalidDataError(f"a prefix of the windows is not a context of `contexts`: {exc}") from None
    following = [s[t] for s in windows for t in range(1, len(s))]
    n_pairs = len(rows)
    return NTPData(H=H[rows], pi=np.full(n_pairs, 1 / n_pairs), P=np.eye(contexts.V)[following])


@dataclass(frozen=True)
class LPDecision:
    """One decision of :class:`TimedSeparability`: the problem's size, the answer, its CPU time."""

    m: int
    d: int
    separable: bool
    seconds: float


class TimedSeparability:
    """NTP-separability by the certified LP alone, each decision's CPU time logged.

    Calling it on a data set decides (``is_separable(data, method="lp")``) and appends an
    :class:`LPDecision` to :attr:`log`: what bounds the size of the joint problem of
    Appendix C is the time of these LPs.
    """

    def __init__(self) -> None:
        self.log: list[LPDecision] = []

    def __call__(self, data: NTPData) -> bool:
        """Decide separability of ``data`` by the LP; log the decision and its CPU time."""
        start = time.process_time()
        separable = is_separable(data, method="lp")
        self.log.append(LPDecision(data.m, data.d, separable, time.process_time() - start))
        return separable


def length_slice(joint: PrefixContexts, t: int, seed: int) -> Callable[[int], NTPData]:
    """``d -> `` the contexts of length ``t`` alone, with their embeddings in the joint problem at ``d``."""
    rows, sub = joint.lengths == t, joint.of_length(t)

    def at(d: int) -> NTPData:
        return sub.ntp_data(joint_ntp_data(joint, d, seed).H[rows])

    return at


@dataclass(frozen=True)
class JointThresholds:
    """The smallest separable ``d`` of each single-length slice and of the joint problem.

    Attributes
    ----------
    slices
        ``{t: smallest separable d}`` of the contexts of length ``t`` alone.
    joint
        The smallest separable ``d`` of the joint problem (all contexts at once).
    """

    slices: dict[int, int]
    joint: int

    @property
    def largest_slice(self) -> int:
        """The largest slice threshold: every slice is separable from this ``d`` on."""
        return max(self.slices.values())


def joint_thresholds(joint: PrefixContexts, seed: int, decide: Callable[[NTPData], bool]) -> JointThresholds:
    """The separability thresholds in ``d`` of each length slice, then of the joint problem.

    A slice is a sub-problem of the joint one, so the joint threshold is at least the largest
    slice threshold: its search (:func:`smallest_separable_dimension` along the nested embeddings
    of :func:`joint_ntp_data`) starts just below it. ``decide`` decides each probe (e.g. a
    :class:`TimedSeparability`).
    """
    slices = {
        t: smallest_separable_dimension(length_slice(joint, t, seed), 0, m, decide)
        for t, m in joint.m_by_length().items()
    }
    lo = max(slices.values()) - 1
    d_joint = smallest_separable_dimension(lambda d: joint_ntp_data(joint, d, seed), lo, joint.m, decide)
    return JointThresholds(slices, d_joint)
