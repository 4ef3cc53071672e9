"""Paper B: next-token prediction with one layer of self-attention.

* :mod:`~ntpnb.attention.data`: validated token data, the generators of Appendix D.
* :mod:`~ntpnb.attention.graphs`: token-priority graphs, SCCs, ``(i => j)``, ``(i ~ j)``, the
  cyclic sub-dataset (Definition 1), ``S_cyc``, pseudo graphs (Sec. 6).
* :mod:`~ntpnb.attention.model`: ``f_W(X) = X^T S(X W x_bar)``, heads, losses, batched gradients.
* :mod:`~ntpnb.attention.svm`: the verified Graph-SVM ``W^mm``.
* :mod:`~ntpnb.attention.convex`: the exact convex solves (``W^cyc``, the regularization path).
* :mod:`~ntpnb.attention.training`: batched GD / normalized GD over many trials at once.
* :mod:`~ntpnb.attention.experiments`: the experiments of Figs. 3-6 over random trials.

Token ids count from 0 (the paper counts from 1).
"""

from __future__ import annotations

from .convex import (
    CyclicCorrection,
    PathPoint,
    cyclic_correction,
    log_loss_features,
    regularization_path,
    solve_cyclic_correction,
)
from .data import (
    TokenData,
    acyclic_dataset,
    as_token_data,
    check_embeddings,
    general_dataset,
    random_embeddings,
)
from .experiments import GlobalResult, LocalResult, gd_reference, global_experiment, local_experiment
from .graphs import (
    CyclicSubdataset,
    PriorityGraph,
    PseudoGraphs,
    TokenPriorityGraphs,
    attention_scores,
    cyclic_subdataset,
    graphs_from_edges,
    project_scyc,
    pseudo_cyclic_subdataset,
    pseudo_priority_graphs,
    scyc_basis,
    token_priority_graphs,
)
from .model import (
    LOSSES,
    Problem,
    attention_output,
    check_head,
    identity_head,
    loss_and_grad,
    loss_value,
    make_problem,
    stack_problems,
    tied_head,
)
from .svm import GraphSVMSolution, graph_constraints, graph_svm, solve_graph_svm
from .training import correlation, project_batched, stack_bases, tracker, train

__all__ = [
    "TokenData",
    "as_token_data",
    "check_embeddings",
    "random_embeddings",
    "acyclic_dataset",
    "general_dataset",
    "PriorityGraph",
    "TokenPriorityGraphs",
    "token_priority_graphs",
    "graphs_from_edges",
    "CyclicSubdataset",
    "cyclic_subdataset",
    "scyc_basis",
    "project_scyc",
    "PseudoGraphs",
    "pseudo_priority_graphs",
    "pseudo_cyclic_subdataset",
    "attention_scores",
    "LOSSES",
    "identity_head",
    "tied_head",
    "check_head",
    "Problem",
    "make_problem",
    "stack_problems",
    "attention_output",
    "loss_and_grad",
    "loss_value",
    "GraphSVMSolution",
    "graph_constraints",
    "solve_graph_svm",
    "graph_svm",
    "CyclicCorrection",
    "solve_cyclic_correction",
    "cyclic_correction",
    "log_loss_features",
    "PathPoint",
    "regularization_path",
    "train",
    "correlation",
    "stack_bases",
    "project_batched",
    "tracker",
    "GlobalResult",
    "global_experiment",
    "LocalResult",
    "local_experiment",
    "gd_reference",
]
