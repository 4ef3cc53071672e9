"""Paper B: next-token prediction with one layer of self-attention.

* :mod:`~ntpnb.attention.data`: validated token data and embeddings.
* :mod:`~ntpnb.attention.datasets`: the random data sets of Appendix D.
* :mod:`~ntpnb.attention.graphs`: token-priority graphs, SCCs, ``(i => j)``, ``(i ~ j)``, the
  cyclic sub-dataset (Definition 1), ``S_cyc``, pseudo graphs (Sec. 6).
* :mod:`~ntpnb.attention.model`: ``f_W(X) = X^T S(X W x_bar)``, heads, losses, batched gradients.
* :mod:`~ntpnb.attention.precomputed_gradient`: the same gradient with the problem's constants computed once
  (the reference training runs on).
* :mod:`~ntpnb.attention.engine` and :mod:`~ntpnb.attention.kernels`: normalized GD in compiled loops,
  the reference's iterates bit for bit (what training runs; imported when first needed).
* :mod:`~ntpnb.attention.svm`: the verified Graph-SVM ``W^mm``.
* :mod:`~ntpnb.attention.convex`: the exact convex solves (``W^cyc``, the regularization path).
* :mod:`~ntpnb.attention.training`: batched GD / normalized GD over many trials at once.
* :mod:`~ntpnb.attention.experiments`: the experiments of Figs. 3-6 over random trials.
* :mod:`~ntpnb.attention.authors`: the setting of those experiments in the paper and in the
  authors' code, side by side (imported from there: ``from ntpnb.attention.authors import
  settings_rows``).

Token ids count from 0 (the paper counts from 1).
"""

from __future__ import annotations

from . import convex, data, datasets, experiments, graphs, model, precomputed_gradient, svm, training
from .convex import *  # noqa: F403
from .data import *  # noqa: F403
from .datasets import *  # noqa: F403
from .experiments import *  # noqa: F403
from .graphs import *  # noqa: F403
from .model import *  # noqa: F403
from .precomputed_gradient import *  # noqa: F403
from .svm import *  # noqa: F403
from .training import *  # noqa: F403

#: Every public name of the submodules (each module's ``__all__``), in reading order.
__all__ = [
    *data.__all__,
    *datasets.__all__,
    *graphs.__all__,
    *model.__all__,
    *precomputed_gradient.__all__,
    *svm.__all__,
    *convex.__all__,
    *training.__all__,
    *experiments.__all__,
]
