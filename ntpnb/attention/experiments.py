"""The experiments of Paper B, Sec. 5-6 and Appendix D, over many random trials at once.

* :func:`global_experiment`: Figs. 3-4. Random embeddings and an acyclic or general data set
  per trial, head ``C E^T = I``, log-loss, normalized GD from zero; tracked against the verified
  ``W^mm`` (Graph-SVM) and the exact ``W^cyc``. The paper's own ``W^cyc`` (normalized GD from
  zero on the cyclic sub-dataset, Appendix D) is computed too, to compare the two.
* :func:`local_experiment`: Figs. 5-6. A general head (``C = E``), squared or cross-entropy
  loss; the trained ``W`` defines pseudo token-priority graphs, whose ``W~^mm`` and ``W~^cyc``
  are compared with the data graphs' ``W^mm`` and ``W^cyc``.

Data, SVMs and exact solves are set up trial by trial (a few milliseconds each); every
training run is one batched computation over the trial axis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import optim, settings
from ..errors import InvalidDataError
from .convex import solve_cyclic_correction
from .data import acyclic_dataset, as_token_data, general_dataset, random_embeddings
from .graphs import (
    CyclicSubdataset,
    cyclic_subdataset,
    pseudo_cyclic_subdataset,
    pseudo_priority_graphs,
    scyc_basis,
    token_priority_graphs,
)
from .model import identity_head, make_problem, stack_problems, tied_head
from .svm import solve_graph_svm
from .training import correlation, project_batched, stack_bases, tracker, train, training_gradient

__all__ = ["GlobalResult", "global_experiment", "LocalResult", "local_experiment", "gd_reference"]


def _trial_data(kind: str, K: int, d: int, n: int, T: int, rng: np.random.Generator, max_redraws: int):
    E = random_embeddings(K, d, rng)
    if kind == "acyclic":
        X, y, _ = acyclic_dataset(K, n, T, rng)
    elif kind == "general":
        X, y = general_dataset(K, n, T, rng, max_redraws=max_redraws)
    else:
        raise InvalidDataError(f"unknown data kind {kind!r}; use 'acyclic' or 'general'")
    return E, as_token_data(X, y, K)


def gd_reference(
    E_list: list[np.ndarray],
    subsets: list[CyclicSubdataset],
    heads: list[np.ndarray],
    loss: str,
    head: str,
    optimizer: optim.Optimizer,
    n_iter: int,
) -> np.ndarray:
    """The paper's ``W^cyc`` (Appendix D): train from zero on each cyclic sub-dataset.

    One batched run over the trials whose sub-dataset is non-empty; the others get 0. So does a
    trial whose gradient at zero vanishes (symmetric cyclic data, e.g. two samples that differ
    only in their label): zero is then stationary, gradient descent does not leave it, and the
    normalized step is undefined there, its direction being rounding noise (norm at most
    :data:`~ntpnb.settings.STATIONARY_GRAD_RTOL` times the size of the terms; 1e-17 in
    practice). Returns ``(B, d, d)``.
    """
    d = E_list[0].shape[1]
    out = np.zeros((len(subsets), d, d))
    live = [b for b, s in enumerate(subsets) if not s.is_empty]
    if live:
        probs = [make_problem(E_list[b], heads[b], subsets[b].data, loss, head) for b in live]
        prob = stack_problems(probs)
        at_zero = training_gradient(prob, optimizer)(np.zeros((len(live), d, d)))
        size = np.linalg.norm(prob.emb, axis=-1).max(axis=(1, 2))
        size = size * np.linalg.norm(prob.query, axis=-1).max(axis=1)
        moving = np.linalg.norm(at_zero, axis=(1, 2)) > settings.STATIONARY_GRAD_RTOL * size
        live = [b for b, m in zip(live, moving, strict=True) if m]
        probs = [p for p, m in zip(probs, moving, strict=True) if m]
    if live:
        out[live] = train(stack_problems(probs), optimizer, n_iter, record_at=np.array([n_iter])).W
    return out


@dataclass(frozen=True)
class GlobalResult:
    """Curves and limits of :func:`global_experiment` (trial axis first).

    Attributes
    ----------
    iterations
        Recorded iterations.
    corr, norm, cyc_dist
        ``(n_records, B)``: ``corr(W, W^mm)``, ``||W||``, ``||Pi_Scyc(W) - W^cyc||`` (exact
        ``W^cyc``; 0 on acyclic data).
    cyc_dist_paper
        ``(n_records, B)``: the same distance measured against the paper's ``W^cyc`` (normalized
        GD from zero on the cyclic sub-dataset at the same step size and iterations).
    W, W_mm, W_cyc, W_cyc_paper
        ``(B, d, d)``: final iterates and the references.
    cyc_dims
        ``(B,)`` ``dim S_cyc``.
    svm_gaps, cyc_grad_norms
        ``(B,)`` verification numbers of the Graph-SVM (duality gap) and of ``W^cyc``
        (gradient norm).
    """

    iterations: np.ndarray
    corr: np.ndarray
    norm: np.ndarray
    cyc_dist: np.ndarray
    cyc_dist_paper: np.ndarray
    W: np.ndarray
    W_mm: np.ndarray
    W_cyc: np.ndarray
    W_cyc_paper: np.ndarray
    cyc_dims: np.ndarray
    svm_gaps: np.ndarray
    cyc_grad_norms: np.ndarray


def global_experiment(
    kind: str,
    *,
    K: int,
    d: int,
    n: int,
    T: int,
    n_trials: int,
    lr: float,
    n_iter: int,
    seed: int,
    n_records: int = 60,
    max_redraws: int = 100,
) -> GlobalResult:
    """Figs. 3 (``kind="acyclic"``) and 4 (``kind="general"``): see the module docstring."""
    rng = np.random.default_rng(seed)
    E_list, heads, probs, subsets, bases, W_mm, W_cyc, gaps, grads = ([] for _ in range(9))
    for _ in range(n_trials):
        E, data = _trial_data(kind, K, d, n, T, rng, max_redraws)
        graphs = token_priority_graphs(data)
        svm = solve_graph_svm(E, graphs)
        cyc = solve_cyclic_correction(E, data, graphs)
        C = identity_head(E)
        E_list.append(E)
        heads.append(C)
        probs.append(make_problem(E, C, data, "log", "identity"))
        subsets.append(cyc.subdataset)
        bases.append(cyc.basis)
        W_mm.append(svm.W)
        W_cyc.append(cyc.W)
        gaps.append(svm.duality_gap)
        grads.append(cyc.grad_norm)
    W_mm, W_cyc = np.array(W_mm), np.array(W_cyc)
    B = stack_bases(bases)
    opt = optim.normalized_gd(lr)
    grid = optim.log_grid(n_iter, n_records)
    W_paper = gd_reference(E_list, subsets, heads, "log", "identity", opt, n_iter)
    base = tracker(W_mm, B, W_cyc)

    def record(W: np.ndarray) -> dict[str, np.ndarray]:
        out = base(W)
        out["cyc_dist_paper"] = np.linalg.norm(project_batched(W, B) - W_paper, axis=(-2, -1))
        return out

    trace = train(stack_problems(probs), opt, n_iter, record=record, record_at=grid)
    return GlobalResult(
        iterations=trace.iterations,
        corr=trace["corr"],
        norm=trace["norm"],
        cyc_dist=trace["cyc_dist"],
        cyc_dist_paper=trace["cyc_dist_paper"],
        W=np.array(trace.W),
        W_mm=W_mm,
        W_cyc=W_cyc,
        W_cyc_paper=W_paper,
        cyc_dims=np.array([b.shape[0] for b in bases]),
        svm_gaps=np.array(gaps),
        cyc_grad_norms=np.array(grads),
    )


@dataclass(frozen=True)
class LocalResult:
    """Curves of :func:`local_experiment` (``(n_records, B)`` each) and the final summaries.

    ``corr_global``/``corr_local``: correlation of ``W(tau)`` with the data graphs' ``W^mm`` and
    with the pseudo graphs' ``W~^mm``; ``dist_global``/``dist_local``: ``||Pi_Scyc(W) - W^cyc||``
    and ``||Pi_S~cyc(W) - W~^cyc||`` (both references trained from zero, as in the paper).
    ``pseudo_cyc_dims``: ``dim S~cyc`` per trial; ``n_selected``: mean number of selected
    tokens per sample.
    """

    iterations: np.ndarray
    corr_global: np.ndarray
    corr_local: np.ndarray
    dist_global: np.ndarray
    dist_local: np.ndarray
    pseudo_cyc_dims: np.ndarray
    n_selected: np.ndarray


def local_experiment(
    loss: str,
    *,
    K: int,
    d: int,
    n: int,
    T: int,
    n_trials: int,
    lr: float,
    n_iter: int,
    seed: int,
    n_records: int = 60,
    threshold: float | None = None,
    max_redraws: int = 100,
) -> LocalResult:
    """Figs. 5 (``loss="squared"``) and 6 (``loss="ce"``): see the module docstring."""
    rng = np.random.default_rng(seed)
    E_list, heads, datas, probs, subsets, bases, W_mm = ([] for _ in range(7))
    for _ in range(n_trials):
        E, data = _trial_data("general", K, d, n, T, rng, max_redraws)
        graphs = token_priority_graphs(data)
        C = tied_head(E)
        E_list.append(E)
        heads.append(C)
        datas.append(data)
        probs.append(make_problem(E, C, data, loss, "argmax"))
        subsets.append(cyclic_subdataset(data, graphs=graphs))
        bases.append(scyc_basis(E, graphs))
        W_mm.append(solve_graph_svm(E, graphs).W)
    opt = optim.normalized_gd(lr)
    grid = optim.log_grid(n_iter, n_records)
    trace = train(stack_problems(probs), opt, n_iter, record=lambda W: {"W": W}, record_at=grid)
    Ws, W_final = trace["W"], np.array(trace.W)  # (n_records, B, d, d)
    W_cyc = gd_reference(E_list, subsets, heads, loss, "argmax", opt, n_iter)
    p_subsets, p_bases, p_mm, n_sel = [], [], [], []
    for b in range(n_trials):
        pseudo = pseudo_priority_graphs(E_list[b], datas[b], W_final[b], threshold=threshold)
        p_mm.append(solve_graph_svm(E_list[b], pseudo.graphs).W)
        p_bases.append(scyc_basis(E_list[b], pseudo.graphs))
        p_subsets.append(pseudo_cyclic_subdataset(pseudo, datas[b]))
        n_sel.append(pseudo.selected.sum(axis=1).mean())
    W_pcyc = gd_reference(E_list, p_subsets, heads, loss, "argmax", opt, n_iter)
    Bg, Bl = stack_bases(bases), stack_bases(p_bases)
    W_mm, p_mm = np.array(W_mm), np.array(p_mm)
    dist = lambda basis, ref: np.array(
        [np.linalg.norm(project_batched(W, basis) - ref, axis=(-2, -1)) for W in Ws]
    )
    return LocalResult(
        iterations=trace.iterations,
        corr_global=correlation(Ws, W_mm),
        corr_local=correlation(Ws, p_mm),
        dist_global=dist(Bg, project_batched(W_cyc, Bg)),
        dist_local=dist(Bl, project_batched(W_pcyc, Bl)),
        pseudo_cyc_dims=np.array([b.shape[0] for b in p_bases]),
        n_selected=np.array(n_sel),
    )
