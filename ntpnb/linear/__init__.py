"""Paper A: the linear next-token decoder.

Data and seeded recipes (:mod:`.ntp_data`, :mod:`.recipes`), the loss (:mod:`.loss`), the NTP
constraints and the subspace F with the finite solution ``W*`` (:mod:`.constraints`,
:mod:`.subspace`), separability (:mod:`.separability`) and the NTP-SVM ``W^mm``
(:mod:`.max_margin`, with the active-set solver of :mod:`.active_set`; the Gram-block algebra
in :mod:`.gram_blocks`), separability for many contexts in fewer dimensions by Newton's method on
the squared-hinge problem (:mod:`.hinge_newton`), the exact regularization path
(:mod:`.regpath`), training with the first-order methods of :mod:`ntpnb.optim`
(:mod:`.decoder_training`, in the compiled loops of :mod:`.descent`), sequences to contexts
(:mod:`.sequences`) and a text corpus (:mod:`.corpus`), random instances,
counts and the best achievable loss (:mod:`.condition_thresholds`), and the experiments the
chapters run (:mod:`.experiments`, as :mod:`ntpnb.attention.paper_experiments` for Paper B).
The public names (``__all__``) are re-exported at the top level of :mod:`ntpnb`.
"""

from __future__ import annotations

from . import experiments
from .condition_thresholds import (
    BestLoss,
    best_achievable_loss,
    compatibility_threshold,
    cover_probability,
    random_instance,
)
from .corpus import corpus_python_version, encode_text, stdlib_corpus
from .decoder_training import Limits, limits, train
from .descent import run_decoder
from .experiments import *  # noqa: F403
from .loss import ce_grad, ce_loss, entropy, kl_divergence, logits, softmax
from .max_margin import SVMSolution, ntp_svm, solve_ntp_svm
from .ntp_data import NTPData
from .recipes import synthetic_instance, toy2d_instance
from .regpath import RegularizationPath, regularization_path
from .separability import (
    SEPARABILITY_METHODS,
    SeparabilityDecision,
    compatibility_residual,
    decide_separability,
    finite_solution,
    is_compatible,
    is_separable,
    satisfies_definition_2,
    separating_direction,
)
from .sequences import (
    PrefixContexts,
    joint_ntp_data,
    prefix_contexts,
    random_context_embeddings,
    sliding_windows,
    smallest_separable_dimension,
    validate_sequences,
)
from .subspace import embedding_rank, f_basis, project_F, project_F_perp, project_R

#: The public names of Paper A's modules, in reading order, then those of the experiments.
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
    "embedding_rank",
    "project_F",
    "project_F_perp",
    "project_R",
    "finite_solution",
    "is_compatible",
    "compatibility_residual",
    "decide_separability",
    "SeparabilityDecision",
    "SEPARABILITY_METHODS",
    "is_separable",
    "separating_direction",
    "satisfies_definition_2",
    "ntp_svm",
    "solve_ntp_svm",
    "SVMSolution",
    "regularization_path",
    "RegularizationPath",
    "Limits",
    "limits",
    "train",
    "run_decoder",
    "PrefixContexts",
    "prefix_contexts",
    "validate_sequences",
    "sliding_windows",
    "random_context_embeddings",
    "joint_ntp_data",
    "smallest_separable_dimension",
    "stdlib_corpus",
    "encode_text",
    "corpus_python_version",
    "random_instance",
    "cover_probability",
    "compatibility_threshold",
    "best_achievable_loss",
    "BestLoss",
    *experiments.__all__,
]
