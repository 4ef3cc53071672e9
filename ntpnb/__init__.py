"""ntpnb: executable companion to two papers on the implicit bias of next-token prediction.

The top-level names cover Paper A's linear model (:mod:`ntpnb.linear`): the data
(:class:`NTPData` and the seeded recipes), the loss, the subspace F with the finite solution
``W*``, and the NTP-SVM ``W^mm``. The machinery that runs notebooks and builds the book lives
in :mod:`ntpnb.pipeline`; the numerical settings in :mod:`ntpnb.settings`.
"""

from __future__ import annotations

from .errors import (
    ClaimCheckError,
    InvalidDataError,
    NotCompatibleError,
    NotSeparableError,
    NTPError,
    SolverError,
)
from .linear import (
    BestLoss,
    NTPData,
    PrefixContexts,
    SVMSolution,
    best_achievable_loss,
    ce_grad,
    ce_loss,
    compatibility_residual,
    compatibility_threshold,
    corpus_python_version,
    cover_probability,
    encode_text,
    entropy,
    f_basis,
    finite_solution,
    is_compatible,
    is_separable,
    kl_divergence,
    logits,
    ntp_svm,
    prefix_contexts,
    project_F,
    project_F_perp,
    random_context_embeddings,
    random_instance,
    separating_direction,
    sliding_windows,
    softmax,
    solve_ntp_svm,
    stdlib_corpus,
    synthetic_instance,
    toy2d_instance,
    validate_sequences,
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
    "PrefixContexts",
    "prefix_contexts",
    "validate_sequences",
    "sliding_windows",
    "random_context_embeddings",
    "stdlib_corpus",
    "encode_text",
    "corpus_python_version",
    "random_instance",
    "cover_probability",
    "compatibility_threshold",
    "best_achievable_loss",
    "BestLoss",
    "NTPError",
    "InvalidDataError",
    "NotCompatibleError",
    "NotSeparableError",
    "SolverError",
    "ClaimCheckError",
    "__version__",
]
