"""Paper A: the linear next-token decoder.

Data and seeded recipes (:mod:`.data`, :mod:`.datasets`), the loss (:mod:`.loss`), the NTP
constraints and the subspace F with the finite solution ``W*`` (:mod:`.constraints`,
:mod:`.subspace`), separability and the NTP-SVM ``W^mm`` (:mod:`.svm`), the exact
regularization path (:mod:`.regpath`), training with the first-order methods of
:mod:`ntpnb.optim` (:mod:`.training`). The public names are re-exported at the top level of
:mod:`ntpnb`.
"""

from __future__ import annotations

from .data import NTPData
from .datasets import synthetic_instance, toy2d_instance
from .loss import ce_grad, ce_loss, entropy, kl_divergence, logits, softmax
from .regpath import RegularizationPath, regularization_path
from .subspace import (
    compatibility_residual,
    f_basis,
    finite_solution,
    is_compatible,
    project_F,
    project_F_perp,
)
from .svm import SVMSolution, is_separable, ntp_svm, separating_direction, solve_ntp_svm
from .training import Limits, limits, train

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
]
