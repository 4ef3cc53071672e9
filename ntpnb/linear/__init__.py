"""Paper A: the linear next-token decoder.

Data and seeded recipes (:mod:`.data`, :mod:`.datasets`), the loss (:mod:`.loss`), the NTP
constraints and the subspace F with the finite solution ``W*`` (:mod:`.constraints`,
:mod:`.subspace`), separability (:mod:`.separability`) and the NTP-SVM ``W^mm`` (:mod:`.svm`, with the
active-set solver of :mod:`.active_set`), both for many contexts in fewer dimensions by Newton's
method on the squared-hinge problem (:mod:`.hinge_newton`), the exact regularization path
(:mod:`.regpath`), training with the first-order methods of :mod:`ntpnb.optim` (:mod:`.training`, in
the compiled loops of :mod:`.descent`), sequences to contexts (:mod:`.sequences`) and a text corpus
(:mod:`.corpus`), random instances, counts and the best achievable loss (:mod:`.thresholds`), and the
experiments the chapters run (:mod:`.experiments`, as :mod:`ntpnb.attention.experiments` for Paper
B). The public names (``__all__``) are re-exported at the top level of :mod:`ntpnb`.
"""

from __future__ import annotations

from .._lazy import lazy_exports

#: The names of the modules of Paper A (the experiments' names, ``experiments.__all__``, follow
#: them in ``__all__``), in reading order, each with the module that defines it.
_NAMED = {
    "NTPData": ".data",
    "toy2d_instance": ".datasets",
    "synthetic_instance": ".datasets",
    "entropy": ".loss",
    "ce_loss": ".loss",
    "ce_grad": ".loss",
    "kl_divergence": ".loss",
    "logits": ".loss",
    "softmax": ".loss",
    "f_basis": ".subspace",
    "embedding_rank": ".subspace",
    "project_F": ".subspace",
    "project_F_perp": ".subspace",
    "project_R": ".subspace",
    "finite_solution": ".subspace",
    "is_compatible": ".subspace",
    "compatibility_residual": ".subspace",
    "is_separable": ".separability",
    "separating_direction": ".separability",
    "satisfies_definition_2": ".separability",
    "ntp_svm": ".svm",
    "solve_ntp_svm": ".svm",
    "SVMSolution": ".svm",
    "regularization_path": ".regpath",
    "RegularizationPath": ".regpath",
    "Limits": ".training",
    "limits": ".training",
    "train": ".training",
    "run_decoder": ".descent",
    "PrefixContexts": ".sequences",
    "prefix_contexts": ".sequences",
    "validate_sequences": ".sequences",
    "sliding_windows": ".sequences",
    "random_context_embeddings": ".sequences",
    "joint_ntp_data": ".sequences",
    "smallest_separable_dimension": ".sequences",
    "stdlib_corpus": ".corpus",
    "encode_text": ".corpus",
    "corpus_python_version": ".corpus",
    "random_instance": ".thresholds",
    "cover_probability": ".thresholds",
    "compatibility_threshold": ".thresholds",
    "best_achievable_loss": ".thresholds",
    "BestLoss": ".thresholds",
}


def _public() -> list[str]:
    """``__all__``: the names of :data:`_NAMED`, then every public name of :mod:`.experiments`."""
    from . import experiments

    return [*_NAMED, *experiments.__all__]


# imported when first used (:mod:`ntpnb._lazy`): a chapter loads only the modules it calls
__getattr__, __dir__ = lazy_exports(__name__, _NAMED, every_name_of=".experiments", public=_public)
