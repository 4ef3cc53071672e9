"""Paper B: next-token prediction with one layer of self-attention.

* :mod:`~ntpnb.attention.token_data`: validated token data and embeddings.
* :mod:`~ntpnb.attention.random_data`: the random data sets of Appendix D.
* :mod:`~ntpnb.attention.graphs`: token-priority graphs, SCCs, ``(i => j)``, ``(i ~ j)``, the
  cyclic sub-dataset (Definition 1), ``S_cyc``, pseudo graphs (Sec. 6).
* :mod:`~ntpnb.attention.model`: ``f_W(X) = X^T S(X W x_bar)``, heads, losses, batched gradients.
* :mod:`~ntpnb.attention.engine`, :mod:`~ntpnb.attention.ngd_loops`: training in compiled loops, any
  optimizer, the numpy reference's iterates to rounding (imported when first needed).
* :mod:`~ntpnb.attention.graph_svm_qp`: the verified Graph-SVM ``W^mm``.
* :mod:`~ntpnb.attention.convex`: the exact convex solves (``W^cyc``, the regularization path).
* :mod:`~ntpnb.attention.batched_training`: batched GD / normalized GD over many trials at once.
* :mod:`~ntpnb.attention.paper_experiments`: the experiments of Figs. 3-6 over random trials.
* :mod:`~ntpnb.attention.authors`: those experiments' setting in the paper and the authors' code, side
  by side (imported from there: ``from ntpnb.attention.authors import settings_rows``).

Token ids count from 0 (the paper counts from 1).
"""

from __future__ import annotations

from . import (
    batched_training,
    convex,
    graph_svm_qp,
    graphs,
    model,
    paper_experiments,
    random_data,
    token_data,
)
from .batched_training import *  # noqa: F403
from .convex import *  # noqa: F403
from .graph_svm_qp import *  # noqa: F403
from .graphs import *  # noqa: F403
from .model import *  # noqa: F403
from .paper_experiments import *  # noqa: F403
from .paper_experiments import trial_data
from .random_data import *  # noqa: F403
from .token_data import *  # noqa: F403

#: Every public name of the submodules (each module's ``__all__``), in reading order.
__all__ = [
    *token_data.__all__,
    *random_data.__all__,
    *graphs.__all__,
    *model.__all__,
    *graph_svm_qp.__all__,
    *convex.__all__,
    *batched_training.__all__,
    *paper_experiments.__all__,
]

__all__ += [
    "trial_data",
]
