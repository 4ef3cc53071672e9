"""Paper A: the linear next-token decoder.

One module per topic (data, loss, subspace F, separability, NTP-SVM, regularization path,
training, sequences, random instances) and the chapters' experiments. The public names
(``__all__``) are re-exported at the top level of :mod:`ntpnb`.
"""

from __future__ import annotations

from . import experiments
from ._active_set import solve_active_set
from ._compatibility import finite_solution, is_compatible
from ._condition_thresholds import (
    BestLoss,
    best_achievable_loss,
    compatibility_threshold,
    cover_probability,
    nested_instance,
    random_instance,
    separability_count_heuristic,
)
from ._constraints import NTPRows, ntp_constraints
from ._corpus import (
    ALPHABET,
    STDLIB_MODULES,
    corpus_python_version,
    decode_ids,
    encode_text,
    normalize_text,
    stdlib_corpus,
    stdlib_docstring_list,
)
from ._decoder_training import Limits, limits, loss_and_norm, train
from ._descent import run_decoder
from ._loss import ce_grad, ce_loss, entropy, kl_divergence, logits, softmax
from ._max_margin import SVMSolution, ntp_svm, solve_ntp_svm, solver_words
from ._max_norm_svm import MaxNormSVM, max_norm_svm
from ._ntp_data import NTPData
from ._recipes import TOY2D_ENTROPY, TOY2D_SUPPORTS, dirichlet_on_supports, synthetic_instance, toy2d_instance
from ._regpath import RegularizationPath, SplitPath, regularization_path
from ._separability import (
    SEPARABILITY_METHODS,
    SeparabilityDecision,
    decide_by_newton,
    decide_separability,
    is_separable,
    satisfies_definition_2,
    separating_direction,
)
from ._sequences import (
    PrefixContexts,
    joint_ntp_data,
    prefix_contexts,
    sliding_windows,
    smallest_separable_dimension,
)
from ._subspace import embedding_rank, f_basis, project_F, project_F_perp, project_R, uses_dense_f
from .experiments import *  # noqa: F403

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
    "decide_separability",
    "SeparabilityDecision",
    "SEPARABILITY_METHODS",
    "is_separable",
    "separating_direction",
    "satisfies_definition_2",
    "ntp_svm",
    "solve_ntp_svm",
    "solver_words",
    "SVMSolution",
    "max_norm_svm",
    "MaxNormSVM",
    "regularization_path",
    "RegularizationPath",
    "SplitPath",
    "Limits",
    "limits",
    "train",
    "loss_and_norm",
    "run_decoder",
    "PrefixContexts",
    "prefix_contexts",
    "sliding_windows",
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


#: Names the chapters and the benchmarks call beyond those above: the constraints, the corpus,
#: chapter 1's constants and the deciders and solvers a benchmark compares.
__all__ += [
    "ALPHABET",
    "NTPRows",
    "STDLIB_MODULES",
    "TOY2D_ENTROPY",
    "TOY2D_SUPPORTS",
    "decide_by_newton",
    "decode_ids",
    "dirichlet_on_supports",
    "nested_instance",
    "normalize_text",
    "ntp_constraints",
    "separability_count_heuristic",
    "solve_active_set",
    "stdlib_docstring_list",
    "uses_dense_f",
]
