"""Exception types of :mod:`ntpnb`.

Every error the package raises on purpose derives from :class:`NTPError`, so a caller can
catch them all at once; each subclass names one kind of problem.
"""

from __future__ import annotations

__all__ = [
    "NTPError",
    "InvalidDataError",
    "NotCompatibleError",
    "NotSeparableError",
    "SolverError",
    "ScaleError",
    "ClaimCheckError",
]


class NTPError(Exception):
    """Base class of every error raised on purpose by :mod:`ntpnb`."""


class InvalidDataError(NTPError, ValueError):
    """Input that violates the model's definitions (shapes, probabilities, ids, values)."""


class NotCompatibleError(NTPError):
    """The data are not NTP_H-compatible: no decoder matches every in-support log-odds ratio.

    Raised by :func:`ntpnb.finite_solution` (Definition 1 of Paper A has no solution).
    """


class NotSeparableError(NTPError):
    """The data are not NTP-separable: the NTP-SVM constraints (Definition 2) are infeasible.

    Raised by :func:`ntpnb.ntp_svm` and :func:`ntpnb.separating_direction`.
    """


class SolverError(NTPError, RuntimeError):
    """A numerical solver failed, or returned an answer that did not pass verification."""


class ScaleError(InvalidDataError, OverflowError):
    """The data are valid, but an answer they define lies outside the range of float64.

    For instance ``W*`` or ``W^mm`` scale like ``1 / |H|``: with embeddings near the underflow
    threshold (``|h_j| ~ 1e-310``) they cannot be represented. Rescale the embeddings.
    """


class ClaimCheckError(NTPError, AssertionError):
    """A notebook's numerical check of a paper's claim did not hold."""
