"""ntpnb: executable companion to two papers on the implicit bias of next-token prediction.

The top-level names cover Paper A's linear model (:mod:`ntpnb.linear`): the data
(:class:`NTPData` and the seeded recipes), the loss, the subspace F with the finite solution
``W*``, and the NTP-SVM ``W^mm``. Paper B's self-attention model is the subpackage
:mod:`ntpnb.attention`. The machinery that runs notebooks and builds the book lives
in :mod:`ntpnb.pipeline`; the numerical settings in :mod:`ntpnb.settings`.
"""

from __future__ import annotations

from . import attention, optim
from .errors import (
    ClaimCheckError,
    InvalidDataError,
    NotCompatibleError,
    NotSeparableError,
    NTPError,
    PathCertificateError,
    SolverError,
)
from .linear import (
    Limits,
    NTPData,
    RegularizationPath,
    SVMSolution,
    ce_grad,
    ce_loss,
    compatibility_residual,
    entropy,
    f_basis,
    finite_solution,
    is_compatible,
    is_separable,
    kl_divergence,
    limits,
    logits,
    ntp_svm,
    project_F,
    project_F_perp,
    regularization_path,
    separating_direction,
    softmax,
    solve_ntp_svm,
    synthetic_instance,
    toy2d_instance,
    train,
)

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
    "regularization_path",
    "RegularizationPath",
    "Limits",
    "limits",
    "train",
    "optim",
    "attention",
    "NTPError",
    "InvalidDataError",
    "NotCompatibleError",
    "NotSeparableError",
    "SolverError",
    "PathCertificateError",
    "ClaimCheckError",
    "__version__",
]
