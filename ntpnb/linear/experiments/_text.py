"""Prefix contexts of real text and the joint problem of Appendix C (chapter 6).

The joint problem's separability thresholds against each context length's alone
(:func:`joint_thresholds`), each decision certified and timed (:class:`TimedSeparability`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ... import settings
from ..._validation import frozen
from ...errors import InvalidDataError, NumericallyAmbiguousError, SolverError
from .._constraints import scaled_rows
from .._ntp_data import NTPData
from .._separability import (
    SEPARABILITY_METHODS,
    certified_bound,
    decide_by_newton,
    decide_separability,
)
from .._sequences import PrefixContexts, joint_ntp_data, smallest_separable_dimension

__all__ = [
    "autoregressive_pairs",
    "TimedDecision",
    "TimedSeparability",
    "SubproblemCertificate",
    "certify_on_contexts",
    "length_slice",
    "JointThresholds",
    "joint_thresholds",
]


def autoregressive_pairs(windows: Sequence[Sequence[int]], contexts: PrefixContexts, H: ArrayLike) -> NTPData:
    """The autoregressive objective itself: one row per (prefix, next token) pair, one-hot, equal weights.

    Each prefix is embedded as its distinct context (row of ``H``, in the order of ``contexts``).
    """
    H = contexts.ntp_data(H).H  # one row per distinct context, checked there
    row = {c: j for j, c in enumerate(contexts.contexts)}
    try:
        rows = [row[tuple(s[:t])] for s in windows for t in range(1, len(s))]
    except KeyError as exc:
        raise InvalidDataError(f"a prefix of the windows is not a context of `contexts`: {exc}") from None
    following = [s[t] for s in windows for t in range(1, len(s))]
    return NTPData(H=H[rows], pi=np.full(len(rows), 1 / len(rows)), P=np.eye(contexts.V)[following])


@dataclass(frozen=True)
class TimedDecision:
    """One decision of :class:`TimedSeparability`: the problem's size, answer, certificate and CPU time.

    The certificate is the verified normalized margin, or the certified bound on every
    direction's; ``method`` says how it was found, ``iterations`` its Newton steps (0 for the LP).
    A numerically ambiguous probe (separable in exact arithmetic, but with ``W^mm`` beyond
    float64's reach) is ``ambiguous``, counted as not separable, with no certificate (NaN).
    """

    m: int
    d: int
    separable: bool
    certificate: float
    method: str
    iterations: int
    seconds: float
    ambiguous: bool = False


class TimedSeparability:
    """NTP-separability decided with a certificate either way, each decision's CPU time logged.

    ``method="newton"``: the Newton continuation, then the LP if that ends undecided; any other
    method of :data:`~ntpnb.linear._separability.SEPARABILITY_METHODS` alone. Each call appends a
    :class:`TimedDecision` to ``log``.

    A numerically ambiguous probe counts as not separable, so a threshold searched with it is the
    smallest ``d`` at which float64 certifies separability with the NTP-SVM in reach; the log
    keeps the probe, marked ``ambiguous``.

    Raises
    ------
    InvalidDataError
        If ``method`` is not one of :data:`~ntpnb.linear._separability.SEPARABILITY_METHODS`.
    """

    def __init__(self, method: str = "newton") -> None:
        if method not in SEPARABILITY_METHODS:
            raise InvalidDataError(f"method must be one of {SEPARABILITY_METHODS}, got {method!r}")
        self.method = method
        self.log: list[TimedDecision] = []

    def __call__(self, data: NTPData) -> bool:
        """Decide separability of ``data`` and log the decision."""
        start = time.process_time()
        after = ""  # how the decision came after Newton's ended undecided
        try:
            if self.method != "newton":
                dec, iterations = decide_separability(data, self.method), 0
            else:
                try:
                    newton = decide_by_newton(data)
                    dec, iterations = newton.decision, newton.iterations
                except SolverError:  # a margin too small for its systems, the LP decides
                    dec, iterations = decide_separability(data, "lp"), 0
                    after = " after the Newton continuation ended undecided"
        except NumericallyAmbiguousError:
            seconds = time.process_time() - start
            self.log.append(TimedDecision(data.m, data.d, False, float("nan"), "ambiguous", 0, seconds, True))
            return False
        how = dec.method if self.method == "newton" and not after else f"LP ({dec.method}){after}"
        certificate = dec.margin if dec.separable else dec.bound
        seconds = time.process_time() - start
        self.log.append(TimedDecision(data.m, data.d, dec.separable, certificate, how, iterations, seconds))
        return dec.separable


def length_slice(joint: PrefixContexts, t: int, seed: int) -> Callable[[int], NTPData]:
    """``d -> `` the contexts of length ``t`` alone, with their embeddings in the joint problem at ``d``."""
    rows, sub = joint.lengths == t, joint.of_length(t)

    def at(d: int) -> NTPData:
        return sub.ntp_data(joint_ntp_data(joint, d, seed).H[rows])

    return at


@dataclass(frozen=True)
class JointThresholds:
    """The smallest separable ``d`` of each single-length slice and of the joint problem."""

    #: ``{t: smallest separable d}`` of the contexts of length ``t`` alone.
    slices: dict[int, int]
    #: The smallest separable ``d`` of the joint problem (all contexts at once).
    joint: int

    @property
    def largest_slice(self) -> int:
        """The largest slice threshold: every slice is separable from this ``d`` on."""
        return max(self.slices.values())


def joint_thresholds(joint: PrefixContexts, seed: int, decide: Callable[[NTPData], bool]) -> JointThresholds:
    """The separability thresholds in ``d`` of each length slice, then of the joint problem.

    A slice is a sub-problem of the joint one, so the joint search
    (:func:`smallest_separable_dimension`) starts just below the largest slice threshold.
    ``decide`` decides each probe (e.g. a :class:`TimedSeparability`).
    """
    slices = {
        t: smallest_separable_dimension(length_slice(joint, t, seed), 0, m, decide)
        for t, m in joint.m_by_length().items()
    }
    lo = max(slices.values()) - 1
    d_joint = smallest_separable_dimension(lambda d: joint_ntp_data(joint, d, seed), lo, joint.m, decide)
    return JointThresholds(slices, d_joint)


@dataclass(frozen=True)
class SubproblemCertificate:
    """A certificate that the whole problem is not NTP-separable, found on some of its contexts."""

    #: The rows of the sub-problem that was decided.
    contexts: np.ndarray
    #: The certified bound on every direction's normalized margin, recomputed on the WHOLE problem.
    bound: float
    #: How the sub-problem was decided.
    method: str
    #: CPU time.
    seconds: float


def certify_on_contexts(data: NTPData, contexts: np.ndarray) -> SubproblemCertificate | None:
    """Certify that ``data`` are not NTP-separable from the sub-problem of some contexts, or None.

    A Farkas certificate of the sub-problem, padded with zero rows, is one of the whole problem;
    the answer rests on its bound recomputed there. None when the sub-problem is separable.

    Raises
    ------
    InvalidDataError
        If ``contexts`` are not distinct row indices of ``data``.
    SolverError
        If the sub-problem cannot be decided, or its certificate does not hold on the whole
        problem (it always should: a failure means a bug or a lost digit, never an answer).
    """
    rows = np.asarray(contexts)
    if rows.ndim != 1 or rows.size == 0 or rows.dtype.kind not in "iu" or np.unique(rows).size != rows.size:
        raise InvalidDataError("contexts must be a non-empty 1-D array of distinct row indices")
    if rows.min() < 0 or rows.max() >= data.m:
        raise InvalidDataError(f"contexts must lie in [0, {data.m}), got {rows.min()}..{rows.max()}")
    start = time.process_time()
    sub = NTPData(H=data.H[rows], pi=np.full(rows.size, 1.0 / rows.size), P=data.P[rows])
    newton = decide_by_newton(sub)
    dec = newton.decision
    if dec.separable:
        return None
    C = np.zeros((data.m, data.V))
    C[rows] = newton.certificate
    bound = certified_bound(scaled_rows(data.H), data.support_mask, C)
    if not bound <= settings.SEP_MARGIN_TOL:
        raise SolverError(
            f"the certificate of {rows.size} contexts bounds the margin by {dec.bound:.3g} on them "
            f"but by {bound:.3g} on all {data.m}"
        )
    return SubproblemCertificate(frozen(rows), bound, dec.method, time.process_time() - start)
