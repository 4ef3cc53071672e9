r"""The experiments of Paper A's chapters: what the notebooks run, each measured one way.

A notebook keeps the call that runs an experiment, its prints and its checks; the logic is
here, by topic (as :mod:`ntpnb.attention.paper_experiments` holds Paper B's):

* :mod:`.entropy` (chapter 1): the entropy bound and Proposition 1. :func:`entropy_search`
  (L-BFGS on the directly computed ``CE - H``), :func:`random_decoders`,
  :func:`entropy_gaps` (the gap two ways), :func:`tempering_exponent`; rays
  ``W^p + gamma W^d`` (:func:`gap_along_ray`, its closed form :func:`gap_from_margins`, :func:`margins`,
  :func:`eq9_constant`) and the
  direction that fails (6b) only just (:func:`zero_margin_ray`, with its plateau);
* :mod:`.plane` (chapters 1 and 3): the plane of Fig. 1. The separability theorem
  (:func:`plane_relation`, :func:`origin_inside`, :func:`proof_direction`) and the caption's
  geometry measured (:func:`caption_geometry`, :func:`caption_draws`,
  :func:`free_rows_draws`);
* :mod:`.path_comparisons` (chapter 2): the regularization path against a general solver
  (:func:`cvxpy_path_point`), its split against the plain matrix (:func:`split_agreement`)
  and gradient descent against the path (:func:`gd_along_path`);
* :mod:`.phase_diagram` (chapter 4): Lemma 1's two families (:func:`decoder_with_logits`,
  :func:`compatibility_violation`, :func:`separability_violation`), the sweep of draws nested
  in ``d`` and its summaries (:func:`nested_sweep`, :func:`nested_curve`, :func:`crossing_point`,
  :func:`condition_curve`, :func:`count_below_threshold`) and instances below the thresholds
  (:func:`find_instance`);
* :mod:`.text` (chapter 5): the autoregressive objective with one row per pair
  (:func:`autoregressive_pairs`), certified separability decisions with their CPU time
  (:class:`TimedSeparability`), the slices of the joint problem (:func:`length_slice`), the
  thresholds of both (:func:`joint_thresholds`) and a certificate found on some of the contexts
  (:func:`certify_on_contexts`);
* :mod:`.curves` (every chapter): :func:`fit_line` (every rate and slope),
  :func:`decay_rate`, :func:`local_exponent`, :func:`trace_summary`,
  :func:`first_reaching`, :func:`offset_from`, :func:`gd_loss_curve`, and initializations
  from a stream apart from the data's (:func:`own_stream`, :func:`lecun_decoder`).

Every random draw takes a ``numpy.random.Generator``, consumed in the order the notebooks
draw. The public names are re-exported by :mod:`ntpnb.linear` (and so at the top level).
"""

from __future__ import annotations

from . import curves, entropy, path_comparisons, phase_diagram, plane, text
from .curves import *  # noqa: F403
from .entropy import *  # noqa: F403
from .path_comparisons import *  # noqa: F403
from .phase_diagram import *  # noqa: F403
from .plane import *  # noqa: F403
from .text import *  # noqa: F403

#: Every public name of the submodules, in the order of the chapters.
__all__ = [
    *entropy.__all__,
    *plane.__all__,
    *path_comparisons.__all__,
    *curves.__all__,
    *phase_diagram.__all__,
    *text.__all__,
]
