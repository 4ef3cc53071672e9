"""Exception types of :mod:`ntpnb`.

Every error the package raises on purpose derives from :class:`NTPError`, so a caller can
catch them all at once; each subclass names one kind of problem.
"""

from __future__ import annotations


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


class PathCertificateError(SolverError):
    """A point of the regularization path could not be certified as the minimizer.

    Raised by :func:`ntpnb.regularization_path`, in particular beyond the largest radius at which
    float64 can represent the certificate (the out-of-support probabilities underflow).
    """


class ScaleError(InvalidDataError, OverflowError):
    """The data are valid, but an answer they define lies outside the range of float64.

    For instance ``W*`` or ``W^mm`` scale like ``1 / |H|``: with embeddings near the underflow
    threshold (``|h_j| ~ 1e-310``) they cannot be represented. Rescale the embeddings.
    """


class PathError(NTPError, ValueError):
    """A file or folder given to the pipeline is unusable (e.g. ``--out`` names a file)."""


class ClaimCheckError(NTPError, AssertionError):
    """A notebook's numerical check of a paper's claim did not hold."""


class NotRealizableError(InvalidDataError):
    """A label of a Paper B data set does not occur in its input sequence (Assumption 2 fails)."""


class HeadAssumptionError(InvalidDataError):
    """A classification head violates the assumption asked of it (Paper B, Assumption 3 or 4)."""


class InfeasibleGraphSVMError(NotSeparableError):
    """The constraints of Paper B's (Graph-SVM) have no solution (the embeddings cannot separate)."""


class GenerationError(NTPError):
    """A random data generator did not meet its requirement within its bounded number of redraws."""


class RankAmbiguousError(SolverError):
    """A numerical rank (a dimension, a support) is not determined by the spectrum.

    Raised by :mod:`ntpnb._linalg` when the singular values show no clear gap (or not at the
    dimension the mathematics gives), instead of guessing a rank that could differ between machines.
    """


class NumericallyAmbiguousError(SolverError):
    """A yes-or-no question about the data lies within float64's reach of its boundary.

    Raised by :func:`ntpnb.is_separable` and :func:`ntpnb.is_compatible` (and what relies on
    them) when the evidence float64 can verify neither proves the answer nor refutes it, e.g.
    near-duplicate embeddings whose ``W`` is too large for its logits to be evaluated to the tolerance.
    """


class OutputLockedError(PathError):
    """Another ``ntpnb`` process holds the output folder (``--no-wait`` was given)."""


class RunInterruptedError(NTPError):
    """``ntpnb reproduce`` was interrupted after ``done`` of ``total`` notebook runs (outputs kept)."""

    def __init__(self, done: int, total: int) -> None:
        self.done = done
        self.total = total
        super().__init__(
            f"interrupted after {done} of {total} notebook {'run' if total == 1 else 'runs'}; "
            "completed outputs kept; rerun to resume"
        )


#: Every error type, in the order defined above.
__all__ = [
    name for name, value in list(globals().items()) if isinstance(value, type) and issubclass(value, NTPError)
]
