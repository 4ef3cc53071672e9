"""ntpnb: executable companion to two papers on the implicit bias of next-token prediction.

The top-level names cover Paper A's linear model: the data (:class:`NTPData` and the seeded
recipes), the loss, the subspace F with the finite solution ``W*``, and the NTP-SVM ``W^mm``.
"""

from __future__ import annotations

from .data import NTPData
from .datasets import synthetic_instance, toy2d_instance
from .errors import (
    ClaimCheckError,
    InvalidDataError,
    NotCompatibleError,
    NotSeparableError,
    NTPError,
    SolverError,
)
from .loss import ce_grad, ce_loss, entropy, kl_divergence, logits, softmax
from .subspace import (
    compatibility_residual,
    f_basis,
    finite_solution,
    is_compatible,
    project_F,
    project_F_perp,
)
from .svm import SVMSolution, is_separable, ntp_svm, separating_direction, solve_ntp_svm

__version__ = "0.1.0"

__all__ = [
    "NTPData",
    "toy2d_instance",
    "synthetic_instance",
    "entropy",
    "ce_loss",
    "ce_grad",
    "kl_divergence",
    "logits",
    "softmax",
    "f_basis",
    "project_F",
    "project_F_perp",
    "finite_solution",
    "is_compatible",
    "compatibility_residual",
    "is_separable",
    "separating_direction",
    "ntp_svm",
    "solve_ntp_svm",
    "SVMSolution",
    "NTPError",
    "InvalidDataError",
    "NotCompatibleError",
    "NotSeparableError",
    "SolverError",
    "ClaimCheckError",
    "__version__",
]
