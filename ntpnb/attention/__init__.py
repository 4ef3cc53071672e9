"""Paper B: next-token prediction with one layer of self-attention.

* :mod:`~ntpnb.attention._token_data`: validated token data and embeddings.
* :mod:`~ntpnb.attention._random_data`: the random data sets of Appendix D.
* :mod:`~ntpnb.attention._graphs`: token-priority graphs, SCCs, ``(i => j)``, ``(i ~ j)``, the
  cyclic sub-dataset (Definition 1), ``S_cyc``, pseudo graphs (Sec. 6).
* :mod:`~ntpnb.attention._model`: ``f_W(X) = X^T S(X W x_bar)``, heads, losses, batched gradients.
* :mod:`~ntpnb.attention._engine`, :mod:`~ntpnb.attention._ngd_loops`: training in compiled loops, any
  optimizer, the numpy reference's iterates to rounding (imported when first needed).
* :mod:`~ntpnb.attention._graph_svm_qp`: the verified Graph-SVM ``W^mm``.
* :mod:`~ntpnb.attention._convex`: the exact convex solves (``W^cyc``, the regularization path).
* :mod:`~ntpnb.attention._batched_training`: batched GD / normalized GD over many trials at once.
* :mod:`~ntpnb.attention._paper_experiments`: the experiments of Figs. 3-6 over random trials.
* :mod:`~ntpnb.attention.authors`: those experiments' setting in the paper and the authors' code, side
  by side (imported from there: ``from ntpnb.attention.authors import settings_rows``).

Token ids count from 0 (the paper counts from 1).
"""

from __future__ import annotations

from . import (
    _batched_training,
    _convex,
    _graph_svm_qp,
    _graphs,
    _model,
    _paper_experiments,
    _random_data,
    _token_data,
)
from ._batched_training import *  # noqa: F403
from ._convex import *  # noqa: F403
from ._graph_svm_qp import *  # noqa: F403
from ._graphs import *  # noqa: F403
from ._model import *  # noqa: F403
from ._paper_experiments import *  # noqa: F403
from ._random_data import *  # noqa: F403
from ._token_data import *  # noqa: F403

#: Every public name of the submodules (each module's ``__all__``), in reading order.
__all__ = [
    *_token_data.__all__,
    *_random_data.__all__,
    *_graphs.__all__,
    *_model.__all__,
    *_graph_svm_qp.__all__,
    *_convex.__all__,
    *_batched_training.__all__,
    *_paper_experiments.__all__,
]
