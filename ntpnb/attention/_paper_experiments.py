"""The experiments of Paper B, Sec. 5-6 and Appendix D, over many random trials at once.

* :func:`global_experiment`: Figs. 3-4. Random embeddings, acyclic or general data, head ``C E^T = I``,
  log-loss, normalized GD from zero or from the authors' ``U(+-1/sqrt(d))``; tracked against the
  verified ``W^mm`` (Graph-SVM), the exact ``W^cyc`` and the paper's ``W^cyc`` (normalized GD from
  zero on the cyclic sub-dataset, Appendix D).
* :func:`local_experiment`: Figs. 5-6. Head ``C = E``, squared or cross-entropy loss; the trained
  ``W``'s pseudo token-priority graphs give ``W~^mm``, ``W~^cyc``, compared with ``W^mm``, ``W^cyc``.
* :func:`acyclic_end` and :func:`local_end`: only the end of Fig. 3's and Fig. 5's runs, at several
  seeds in one batched training: what chapter 8's maps measure at settings the paper does not try.

The trials are drawn in order from one generator (``seed``), independently of the rest, which runs
through :func:`ntpnb._parallel.parallel_map` (serial by default; processes, Dask or Ray inside
``joblib.parallel_config``) with bit-for-bit the same results: one task per trial for the Graph-SVM
and exact solves, one batched training per worker (:func:`~ntpnb.attention._batched_training.train_trials`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType

import numpy as np

from .. import _optim as optim
from .. import settings
from .._digits import format_number
from .._parallel import parallel_map
from .._qp import SVMSolution
from .._validation import as_count, as_float, as_generator, as_ordered, check_dense_size, frozen
from ..errors import InvalidDataError
from ._batched_training import (
    correlation,
    project_batched,
    stack_bases,
    train_trials,
)
from ._convex import CyclicCorrection, solve_cyclic_correction
from ._engine import compiled_step
from ._graph_svm_qp import solve_graph_svm
from ._graphs import (
    CyclicSubdataset,
    TokenPriorityGraphs,
    attention_logits,
    cyclic_subdataset,
    graphs_from_sets,
    pseudo_cyclic_subdataset,
    pseudo_priority_graphs,
    scyc_basis,
    token_priority_graphs,
)
from ._model import (
    Problem,
    identity_head,
    loss_and_grad,
    losses_at,
    make_problem,
    stack_problems,
    tied_head,
)
from ._random_data import (
    acyclic_draw,
    checked_embedding_sizes,
    checked_sizes,
    embeddings_draw,
    general_draw,
)
from ._token_data import TokenData, drawn_token_data

__all__ = [
    "trial_data",
    "general_instance",
    "global_experiment",
    "authors_global_best",
    "local_experiment",
    "kept_trials",
    "final_mean",
    "local_threshold_sweep",
    "acyclic_end",
    "local_end",
    "gd_reference",
    "midpoint_gaps",
    "second_differences",
    "mean_and_error",
    "mean_and_z",
    "largest_carrying",
    "stable",
]


def _checked_trial(kind: str, K: int, d: int, n: int, T: int) -> tuple[str, int, int, int, int]:
    """A trial's kind and sizes, checked: the door of every draw of trials."""
    if not isinstance(kind, str) or kind not in ("acyclic", "general"):
        raise InvalidDataError(f"unknown data kind {kind!r}; use 'acyclic' or 'general'")
    K, d = checked_embedding_sizes(K, d)
    K, n, T = checked_sizes(K, n, T)
    return kind, K, d, n, T


def trial_data(kind: str, K: int, d: int, n: int, T: int, rng: np.random.Generator):
    """One trial of chapter 7 drawn from ``rng``: embeddings ``E`` and an acyclic or general data set."""
    return _trial_draw(*_checked_trial(kind, K, d, n, T), rng)


def general_instance(
    *, K: int, d: int, n: int, T: int, rng: np.random.Generator
) -> tuple[np.ndarray, TokenData, np.ndarray, CyclicCorrection]:
    """A general data set drawn from ``rng`` as :func:`trial_data` draws it, its ``W^mm`` and ``W^cyc``.

    Returns the embeddings ``E``, the data, the verified Graph-SVM's ``W^mm`` and the exact cyclic
    correction (its ``W``, basis of ``S_cyc``, cyclic sub-dataset and gradient norm): the objects of
    Paper B's Lemmas 2-3 and Theorem 2 on one instance.
    """
    E, data = trial_data("general", K, d, n, T, rng)
    _, svm, cyc = _global_setup((E, data))
    return E, data, svm.W, cyc


def _trial_draw(kind: str, K: int, d: int, n: int, T: int, rng: np.random.Generator):
    """:func:`trial_data` for a checked kind and sizes."""
    E = embeddings_draw(K, d, rng)
    X, y = acyclic_draw(K, n, T, rng)[:2] if kind == "acyclic" else general_draw(K, n, T, rng)
    return E, drawn_token_data(X, y, K)


def _trials_key(kind: str, K: int, d: int, n: int, T: int, n_trials: int, seed: int) -> tuple[str | int, ...]:
    """The trials' settings, checked once, as the string and Python ints that key the kept draws."""
    kind, K, d, n, T = _checked_trial(kind, K, d, n, T)
    n_trials = as_count(n_trials, "n_trials")
    check_dense_size((n_trials, K * d + n * T), "the trials' embeddings and tokens")
    return (kind, K, d, n, T, n_trials, as_count(seed, "seed", minimum=0))


@functools.lru_cache(maxsize=8)
def _draw_trials(key: tuple[str | int, ...]) -> tuple[tuple[np.ndarray, TokenData], ...]:
    """Every trial's embeddings and data (read-only), drawn in order from one generator: once per key.

    ``key`` is :func:`_trials_key`'s: the sizes were checked there, not again per draw.
    """
    kind, K, d, n, T, n_trials, seed = key
    rng = as_generator(seed)
    draws = [_trial_draw(kind, K, d, n, T, rng) for _ in range(n_trials)]
    return tuple((frozen(E), data) for E, data in draws)


#: Points of the log-spaced grid the experiments record their curves at (``n_records``).
N_RECORDS = 60


def _moving(live: list[int], probs: list[Problem]) -> tuple[list[int], list[Problem]]:
    """The trials ``live`` (and their problems) whose gradient at zero is not rounding noise."""
    moving = _moves_from_zero(stack_problems(probs))
    live = [b for b, m in zip(live, moving, strict=True) if m]
    return live, [p for p, m in zip(probs, moving, strict=True) if m]


def _moves_from_zero(prob: Problem) -> np.ndarray:
    """``(B,)`` whether each trial's gradient at ``W = 0`` exceeds rounding noise.

    Zero is stationary where the gradient's norm is at most
    :data:`~ntpnb.settings.STATIONARY_GRAD_RTOL` times the size of its terms (the largest embedding
    norm times the largest query norm); the gradient is the one training runs on.
    """
    step = compiled_step(prob)  # the gradient training runs on
    zero = np.zeros((prob.B, prob.d, prob.d))
    at_zero = loss_and_grad(zero, prob)[1] if step is None else step.gradient_of(zero)
    size = np.linalg.norm(prob.emb, axis=-1).max(axis=(1, 2))
    size = size * np.linalg.norm(prob.query, axis=-1).max(axis=1)
    return np.linalg.norm(at_zero, axis=(1, 2)) > settings.STATIONARY_GRAD_RTOL * size


def gd_reference(
    E_list: list[np.ndarray],
    subsets: list[CyclicSubdataset],
    heads: list[np.ndarray],
    loss: str,
    head: str,
    optimizer: optim.Optimizer,
    n_iter: int,
    *,
    record_at: np.ndarray | None = None,
    divide_by: Sequence[int] | None = None,
    progress: optim.ProgressHook | None = None,
) -> optim.Trace:
    """The paper's ``W^cyc`` (Appendix D): train from zero on each cyclic sub-dataset.

    One batched run over the trials whose sub-dataset is non-empty; the others get 0, and so does a
    trial whose gradient at zero vanishes (symmetric cyclic data, e.g. two samples differing only in
    their label): zero is stationary and the normalized step's direction there is rounding noise (norm
    at most :data:`~ntpnb.settings.STATIONARY_GRAD_RTOL` times the size of the terms).

    ``record_at``: the steps to keep (default: ``n_iter`` only; the figures compare ``W(tau)`` with the
    reference at the same ``tau``). ``divide_by[b]``: what trial ``b``'s summed loss is divided by
    (default: its sub-dataset's size; Paper B's code uses the whole data set's). ``progress``: told
    ``(steps done, n_iter)`` as the run goes (once, at the end, when no trial is trained).

    Returns
    -------
    optim.Trace
        ``iterates`` ``(n_records, B, d, d)``, each trial's reference per recorded step (0: empty or
        symmetric sub-dataset), ``W`` the last of them, and ``grad_norm`` ``(n_records, B)``, the plain
        gradient norm of the reference's risk there (0: trial not trained).
    """
    d = E_list[0].shape[1]
    grid = np.array([n_iter]) if record_at is None else np.asarray(record_at)
    W = np.zeros((grid.size, len(subsets), d, d))
    grad_norm = np.zeros((grid.size, len(subsets)))
    live = [b for b, s in enumerate(subsets) if s.data is not None]
    if live:
        divisors = [None] * len(subsets) if divide_by is None else divide_by
        probs = [
            make_problem(E_list[b], heads[b], subsets[b].data, loss, head, divide_by=divisors[b])
            for b in live
        ]
        live, probs = _moving(live, probs)
    if live:
        W[:, live] = train_trials(probs, optimizer, n_iter, record_at=grid, progress=progress).iterates
        grad_norm[:, live] = gradient_norms(W[:, live], stack_problems(probs))
    elif progress is not None:
        progress(n_iter, n_iter)
    return optim.Trace(grid, MappingProxyType({"iterates": W, "grad_norm": grad_norm}), W[-1])


def _stage(
    progress: optim.ProgressHook | None, stage: int, n_stages: int, n_iter: int
) -> optim.ProgressHook | None:
    """The progress hook of training ``stage`` of ``n_stages`` runs of ``n_iter`` steps each."""
    if progress is None:
        return None
    return lambda done, _: progress(stage * n_iter + done, n_stages * n_iter)


def gradient_norms(Ws: np.ndarray, prob: Problem) -> np.ndarray:
    """``||grad L(W)||`` per record and trial, ``(n_records, B)``, for ``Ws`` ``(n_records, B, d, d)``.

    Taken after dividing by the largest entry, so gradients below 1e-154 (squares underflow) keep their
    size; the records are one batch (copies of ``prob``: same numbers).
    """
    R, B, d, _ = Ws.shape
    g = loss_and_grad(Ws.reshape(R * B, d, d), stack_problems([prob] * R))[1].reshape(R, B, d, d)
    scale = np.abs(g).max(axis=(2, 3))
    safe = np.where(scale > 0, scale, 1.0)[:, :, None, None]
    return scale * np.linalg.norm(g / safe, axis=(2, 3))


def _global_setup(trial: tuple[np.ndarray, TokenData]) -> tuple[np.ndarray, SVMSolution, CyclicCorrection]:
    """The head ``C E^T = I``, the verified Graph-SVM and the exact ``W^cyc`` of one trial."""
    E, data = trial
    graphs = token_priority_graphs(data)
    return identity_head(E), solve_graph_svm(E, graphs), solve_cyclic_correction(E, data, graphs)


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
    init: str = "zero",
    progress: optim.ProgressHook | None = None,
) -> optim.Trace:
    """Figs. 3 (``kind="acyclic"``) and 4 (``kind="general"``): see the module docstring.

    ``init``: ``W(0)`` of the trained ``W`` (see :func:`initial_weights`; the paper's ``W^cyc`` is
    trained from zero whatever it is). ``progress`` is told ``(steps done, total)`` over both
    trainings (paper's ``W^cyc``, then ``W``).

    Returns
    -------
    optim.Trace
        The curves, ``(n_records, B)`` each (trial axis after the records): ``corr``
        (``corr(W, W^mm)``), ``norm`` (``||W||``), ``dist_cyc`` (``||Pi_Scyc(W) - W^cyc||``, the exact
        ``W^cyc``; 0 on acyclic data) and ``dist_cyc_paper`` (the same against the paper's ``W^cyc``,
        same step size and iterations); ``W`` the final iterates ``(B, d, d)``; and per trial: ``W_mm``
        (the verified Graph-SVM solutions), ``W_cyc`` (the exact ``W^cyc``), ``W_cyc_paper`` (the
        paper's), ``cyc_dims`` (``dim S_cyc``), ``svm_gaps`` (the Graph-SVM's duality gap, its
        verification), ``cyc_grad_norms`` (the gradient norm at the exact ``W^cyc``, its
        verification) and ``paper_outside`` (``||W - Pi_Scyc(W)|| / ||W||`` of the paper's ``W^cyc``,
        0 where it is 0: tests Lemma 2's ``W^cyc in S_cyc``, GD running in all ``d^2`` directions).
    """
    draws = _draw_trials(_trials_key(kind, K, d, n, T, n_trials, seed))
    W0 = initial_weights(init, n_trials, d, seed)
    heads, svms, cycs = zip(*parallel_map(_global_setup, draws), strict=True)
    opt, grid = optim.normalized_gd(lr), optim.log_grid(n_iter, N_RECORDS)
    E_list, subsets = [E for E, _ in draws], [c.subdataset for c in cycs]
    stage = partial(_stage, progress, n_stages=2, n_iter=n_iter)
    W_paper = gd_reference(E_list, subsets, heads, "log", "identity", opt, n_iter, progress=stage(0)).W
    problems = [make_problem(E, C, data) for (E, data), C in zip(draws, heads, strict=True)]
    trace = train_trials(problems, opt, n_iter, record_at=grid, W0=W0, progress=stage(1))
    return _global_result(trace, W_paper, svms, cycs)


def _global_result(
    trace: optim.Trace, W_paper: np.ndarray, svms: Sequence[SVMSolution], cycs: Sequence[CyclicCorrection]
) -> optim.Trace:
    """Every curve and final number of :func:`global_experiment`, from its training and references."""
    W_mm, W_cyc = np.array([s.W for s in svms]), np.array([c.W for c in cycs])
    B = stack_bases([c.basis for c in cycs])
    Ws = trace.iterates  # (n_records, B, d, d)
    projected = project_batched(Ws, B)
    outside = np.linalg.norm(W_paper - project_batched(W_paper, B), axis=(1, 2))
    paper_norm = np.linalg.norm(W_paper, axis=(1, 2))
    values = {
        "corr": correlation(Ws, W_mm),
        "norm": np.linalg.norm(Ws, axis=(-2, -1)),
        "dist_cyc": np.linalg.norm(projected - W_cyc, axis=(-2, -1)),
        "dist_cyc_paper": np.linalg.norm(projected - W_paper, axis=(-2, -1)),
        "W_mm": W_mm,
        "W_cyc": W_cyc,
        "W_cyc_paper": W_paper,
        "cyc_dims": np.array([c.dim for c in cycs]),
        "svm_gaps": np.array([s.duality_gap for s in svms]),
        "cyc_grad_norms": np.array([c.grad_norm for c in cycs]),
        "paper_outside": np.divide(outside, paper_norm, out=np.zeros_like(outside), where=paper_norm > 0),
    }
    return optim.Trace(trace.iterations, MappingProxyType(values), np.array(trace.W))


INITS: tuple[str, ...] = ("zero", "uniform")
SUBSET_KEYS: tuple[str, ...] = ("label", "selected")


def initial_weights(init: str, n_trials: int, d: int, seed: int) -> np.ndarray | None:
    """Starting points ``(n_trials, d, d)`` of the experiments' trained ``W`` (``None`` for zeros).

    ``"uniform"``: entries i.i.d. ``U(-1/sqrt(d), 1/sqrt(d))``, PyTorch's ``nn.Linear(d, d)`` default,
    kept by the authors' code (``init='default'``); drawn trial after trial from a generator of their
    own (``seed`` and a stream id), so the trials' data do not depend on it. ``"zero"``: ``W(0) = 0``.
    """
    if init not in INITS:
        raise InvalidDataError(f"unknown initialization {init!r}; use one of {INITS}")
    if init == "zero":
        return None
    rng = np.random.default_rng([seed, 1])
    bound = 1.0 / np.sqrt(d)
    return np.stack([rng.uniform(-bound, bound, (d, d)) for _ in range(n_trials)])


def kept_trials(result: optim.Trace, drop_corr: float) -> np.ndarray:
    """``(B,)`` the trials of :func:`local_experiment`'s ``result`` that the authors' filter keeps.

    Their notebook aborts when a trial's best local correlation (with ``W~^mm`` or
    ``corr_combined``) ends below ``drop_corr``; a trial with ``W~^mm = 0`` passes.
    """
    best = np.maximum(result.corr_local[-1], result.corr_combined)
    return ~((best < drop_corr) & (result.local_svm_norm > 0))


def final_mean(curve: np.ndarray) -> float:
    """The mean over trials of a curve ``(n_records, B)`` (``corr_local``, ``dist_global``...) at the end."""
    return curve[-1].mean()


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
    threshold: float | None = None,
    exclusion_band: float = 0.0,
    init: str = "zero",
    subset_key: str = "label",
    step_eps: float = 0.0,
    compare_keys: bool = False,
    progress: optim.ProgressHook | None = None,
) -> optim.Trace:
    """Figs. 5 (``loss="squared_softmax"`` or ``"squared"``) and 6 (``loss="ce"``).

    Normalized GD with step ``lr g / (||g|| + step_eps)`` trains ``W`` and both references, whose
    summed loss is divided by ``n`` (the whole data set), as in the authors' code. ``threshold``:
    attention above which a token counts as selected (default
    :data:`~ntpnb.settings.PSEUDO_GRAPH_THRESHOLD`); ``exclusion_band``: see
    :func:`~ntpnb.attention._graphs.pseudo_priority_graphs`; ``init``: see :func:`initial_weights`;
    ``subset_key``: which pseudo SCC a sample of the pseudo cyclic sub-dataset keeps, its true
    label's (``"label"``, the authors' ``generate_reduced_ds``) or its selected tokens' (``"selected"``,
    :func:`~ntpnb.attention._graphs.pseudo_cyclic_subdataset`); ``compare_keys``: also the final local
    distance with the other key. ``progress`` is told ``(steps done, total)`` over the trainings
    (``W``, global and local references, with ``compare_keys`` the other local one).

    Returns
    -------
    optim.Trace
        The curves, ``(n_records, B)`` each: ``corr_global`` and ``corr_local`` (the correlation of
        ``W(tau)`` with the data graphs' ``W^mm`` and with the pseudo graphs' ``W~^mm``),
        ``dist_global`` (``||Pi_Scyc(W(tau)) - W^cyc(tau)||``, not squared, the reference trained from
        zero as in the paper and taken at the same step ``tau``, as the authors' code does; 0 where the
        sub-dataset is empty), ``dist_local`` (``||Pi_S~cyc(W(tau)) - W~^cyc(tau)||``, the same way),
        ``norm`` (``||W(tau)||``), ``grad_norm`` (``||grad L(W(tau))||``, the plain gradient whatever
        the step rule) and ``ref_grad_norm`` (``(n_records, 2 B)``: the same for the global
        references, first ``B`` columns, and the local ones; 0: not trained); ``W`` the final
        iterates ``(B, d, d)``; and per trial: ``corr_combined`` (the final correlation of ``W`` with
        ``W~^cyc + R W~^mm``, ``R`` the least-squares fit: the authors' second correlation,
        ``R_solver``), ``local_svm_norm`` (``||W~^mm||``), ``subset_sizes`` (samples in the pseudo
        cyclic sub-dataset), ``n_selected`` (mean number of selected tokens per sample),
        ``max_score_gap`` (the largest gap between two attention logits of one sample at the end),
        ``scores`` (``(B, n, T)``, the final attention) and ``dist_other`` (the final local distance
        with the sub-dataset keyed the other way; empty unless ``compare_keys``).
    """
    if subset_key not in SUBSET_KEYS:
        raise InvalidDataError(f"unknown subset_key {subset_key!r}; use one of {SUBSET_KEYS}")
    trials = _local_trials(_trials_key("general", K, d, n, T, n_trials, seed))
    W0 = initial_weights(init, n_trials, d, seed)
    problems = [make_problem(t.E, t.C, t.data, loss, "argmax") for t in trials]
    opt, grid = optim.normalized_gd(lr, eps=step_eps), optim.log_grid(n_iter, N_RECORDS)
    stage = partial(_stage, progress, n_stages=4 if compare_keys else 3, n_iter=n_iter)
    trace = train_trials(problems, opt, n_iter, record_at=grid, W0=W0, progress=stage(0))
    reference = _whole_set_reference(trials, loss, opt, n_iter, grid)
    ref_global = reference([t.subset for t in trials], progress=stage(1))
    setup = partial(_pseudo_setup, threshold=threshold, exclusion_band=exclusion_band)
    pseudo, ref_local, dist_other = _pseudo_references(
        trials, np.array(trace.W), reference, setup, subset_key, compare_keys, stage
    )
    return _local_result(trace, problems, trials, pseudo, ref_global, ref_local, dist_other)


def _whole_set_reference(
    trials: Sequence[_LocalTrial], loss: str, opt: optim.Optimizer, n_iter: int, grid: np.ndarray
) -> Callable[..., optim.Trace]:
    """:func:`gd_reference` on the trials, given the sub-datasets: each summed loss divided by ``n``.

    As in the authors' code, every reference's loss is divided by the whole data set's size.
    """
    return partial(
        gd_reference,
        [t.E for t in trials],
        heads=[t.C for t in trials],
        loss=loss,
        head="argmax",
        optimizer=opt,
        n_iter=n_iter,
        record_at=grid,
        divide_by=[t.data.n for t in trials],
    )


def _pseudo_references(
    trials: Sequence[_LocalTrial],
    W_final: np.ndarray,
    reference: Callable[..., optim.Trace],
    setup: Callable[..., _PseudoTrial],
    subset_key: str,
    compare_keys: bool,
    stage: Callable[[int], optim.ProgressHook | None],
) -> tuple[list[_PseudoTrial], optim.Trace, np.ndarray]:
    """The pseudo graphs of the final ``W``, their local reference and (``compare_keys``) the other key's.

    Returns each trial's pseudo setup, the local reference run (training stage 2) and the final
    local distance with the sub-dataset keyed the other way (training stage 3; empty without
    ``compare_keys``).
    """
    pseudo_args = list(zip([t.E for t in trials], [t.data for t in trials], W_final, strict=True))
    pseudo = parallel_map(partial(setup, subset_key=subset_key), pseudo_args)
    ref_local = reference([p.subset for p in pseudo], progress=stage(2))
    dist_other = np.zeros(0)
    if compare_keys:
        other_key = next(k for k in SUBSET_KEYS if k != subset_key)
        other = parallel_map(partial(setup, subset_key=other_key), pseudo_args)
        W_ocyc = reference([p.subset for p in other], progress=stage(3)).W
        dist_other = _same_step_distance(W_final, W_ocyc, stack_bases([p.basis for p in other]))
    return pseudo, ref_local, dist_other


def _local_result(
    trace: optim.Trace,
    problems: Sequence[Problem],
    trials: Sequence[_LocalTrial],
    pseudo: Sequence[_PseudoTrial],
    ref_global: optim.Trace,
    ref_local: optim.Trace,
    dist_other: np.ndarray,
) -> optim.Trace:
    """Every curve and final number of :func:`local_experiment`, from its trainings and references."""
    Ws, W_final = trace.iterates, np.array(trace.W)  # (n_records, B, d, d) and (B, d, d)
    W_cyc, W_pcyc = ref_global.iterates, ref_local.iterates  # (n_records, B, d, d)
    Bg, Bl = stack_bases([t.basis for t in trials]), stack_bases([p.basis for p in pseudo])
    W_mm, p_mm = np.array([t.W_mm for t in trials]), np.array([p.W_mm for p in pseudo])
    values = {
        "corr_global": correlation(Ws, W_mm),
        "corr_local": correlation(Ws, p_mm),
        "dist_global": _same_step_distance(Ws, W_cyc, Bg),
        "dist_local": _same_step_distance(Ws, W_pcyc, Bl),
        "norm": np.linalg.norm(Ws, axis=(-2, -1)),
        "grad_norm": gradient_norms(Ws, stack_problems(problems)),
        "ref_grad_norm": np.concatenate([ref_global.grad_norm, ref_local.grad_norm], axis=1),
        "corr_combined": _combined_correlation(W_final, W_pcyc[-1], p_mm),
        "local_svm_norm": np.linalg.norm(p_mm, axis=(1, 2)),
        "subset_sizes": np.array([p.subset.index.size for p in pseudo]),
        "n_selected": np.array([p.n_selected for p in pseudo]),
        "max_score_gap": np.array([p.max_score_gap for p in pseudo]),
        "scores": np.array([p.scores for p in pseudo]),
        "dist_other": dist_other,
    }
    return optim.Trace(trace.iterations, MappingProxyType(values), W_final)


def _combined_correlation(W: np.ndarray, W_cyc: np.ndarray, W_mm: np.ndarray) -> np.ndarray:
    """corr(W, W~cyc + r W~mm) per trial, r = argmin_r ||W - W~cyc - r W~mm|| (the authors' R_solver).

    ``r`` is 0 where ``W~mm = 0`` (an empty pseudo cyclic sub-dataset's SVM).
    """
    num, den = np.sum((W - W_cyc) * W_mm, axis=(1, 2)), np.sum(W_mm * W_mm, axis=(1, 2))
    fit = np.divide(num, den, out=np.zeros_like(num), where=den > 0)
    return correlation(W, W_cyc + fit[:, None, None] * W_mm)


def authors_global_best(result: optim.Trace) -> np.ndarray:
    """Per trial, the best final corr of the authors' Figs. 3-4 filter: with ``W^mm`` or ``W^cyc + R W^mm``.

    ``W^cyc`` is the paper's (trained), ``R`` the least-squares fit of ``W - W^cyc`` along ``W^mm``
    (the authors' ``R_solver``); their notebook drops a trial whose best is below
    :attr:`~ntpnb.attention.authors.AuthorsCode.global_drop_corr`.
    """
    combined = _combined_correlation(result.W, result.W_cyc_paper, result.W_mm)
    return np.maximum(result.corr[-1], combined)


def _same_step_distance(Ws: np.ndarray, refs: np.ndarray, bases: np.ndarray) -> np.ndarray:
    """``||Pi_S(W(tau)) - Pi_S(W_ref(tau))||`` per (record and) trial (W_ref lies in S up to rounding)."""
    return np.linalg.norm(project_batched(Ws, bases) - project_batched(refs, bases), axis=(-2, -1))


def local_threshold_sweep(
    W: np.ndarray,
    thresholds: Sequence[float],
    *,
    K: int,
    d: int,
    n: int,
    T: int,
    seed: int,
) -> dict[str, np.ndarray]:
    """How the pseudo graphs of trained ``W`` (``(B, d, d)``) depend on the selection threshold.

    The trials are redrawn as :func:`local_experiment` drew them (same ``seed`` and sizes). Returns
    ``(len(thresholds), B)`` arrays ``corr`` (with ``W~^mm``), ``cyc_dims`` (``dim S~cyc``) and
    ``n_selected`` (mean selected tokens per sample).
    """
    draws = _draw_trials(_trials_key("general", K, d, n, T, W.shape[0], seed))
    args = [(E, data, w) for (E, data), w in zip(draws, W, strict=True)]
    per_trial = parallel_map(partial(_sweep_trial, thresholds=tuple(thresholds)), args)
    return {
        name: np.array([t[i] for t in per_trial]).T
        for i, name in enumerate(("corr", "cyc_dims", "n_selected"))
    }


def _sweep_trial(
    trial: tuple[np.ndarray, TokenData, np.ndarray], thresholds: tuple[float, ...]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One trial of :func:`local_threshold_sweep` (a Graph-SVM solved once per distinct graph)."""
    E, data, w = trial
    corr, dims, n_sel = [], [], []
    for thr in thresholds:
        pseudo = pseudo_priority_graphs(E, data, w, threshold=thr)
        corr.append(float(correlation(w, _kept(_svm_direction, E, pseudo.graphs))))
        dims.append(_kept(scyc_basis, E, pseudo.graphs).shape[0])
        n_sel.append(float(pseudo.selected.sum(axis=1).mean()))
    return np.array(corr), np.array(dims), np.array(n_sel)


@dataclass(frozen=True, eq=False)
class _Call:
    """A call ``what(E, graphs)`` that hashes and compares by its key (function, ``E``'s bytes, graphs)."""

    key: tuple
    what: Callable[[np.ndarray, TokenPriorityGraphs], np.ndarray]
    E: np.ndarray
    graphs: TokenPriorityGraphs

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Call) and self.key == other.key


@functools.lru_cache(maxsize=4096)
def _kept_call(call: _Call) -> np.ndarray:
    return frozen(call.what(call.E, call.graphs))


def _kept(
    what: Callable[[np.ndarray, TokenPriorityGraphs], np.ndarray], E: np.ndarray, graphs: TokenPriorityGraphs
) -> np.ndarray:
    """``what(E, graphs)`` (read-only), once per (function, ``E``, graphs): the variants share graphs."""
    E = np.asarray(E, dtype=float)
    edges = tuple((k, g.nodes, g.edges) for k, g in sorted(graphs.graphs.items()))
    return _kept_call(_Call((what, E.tobytes(), E.shape, graphs.K, edges), what, E, graphs))


def _svm_direction(E: np.ndarray, graphs: TokenPriorityGraphs) -> np.ndarray:
    """The verified Graph-SVM's ``W^mm`` (through :func:`_kept`: once per ``E`` and graphs)."""
    return solve_graph_svm(E, graphs).W


@dataclass(frozen=True)
class _LocalTrial:
    """One trial of :func:`local_experiment` set up (tied head ``C = E``), whatever the loss."""

    E: np.ndarray
    C: np.ndarray
    data: TokenData
    subset: CyclicSubdataset
    basis: np.ndarray
    W_mm: np.ndarray


def _local_setup(trial: tuple[np.ndarray, TokenData]) -> _LocalTrial:
    """Graphs, the cyclic sub-dataset, ``S_cyc`` and the verified Graph-SVM of one trial."""
    E, data = trial
    graphs = token_priority_graphs(data)
    return _LocalTrial(
        E=E,
        C=frozen(tied_head(E)),
        data=data,
        subset=cyclic_subdataset(data, graphs=graphs),
        basis=frozen(scyc_basis(E, graphs)),
        W_mm=_kept(_svm_direction, E, graphs),
    )


@functools.lru_cache(maxsize=16)  # a seed sweep (up to 16 seeds) under each loss: every loss hits
def _local_trials(key: tuple[str | int, ...]) -> tuple[_LocalTrial, ...]:
    """The trials of :func:`local_experiment` drawn and set up (``key``: see :func:`_trials_key`)."""
    return tuple(parallel_map(_local_setup, _draw_trials(key)))


@dataclass(frozen=True)
class _PseudoTrial:
    """The pseudo graphs of one trained trial: their sub-dataset, ``S~cyc`` and ``W~^mm``."""

    subset: CyclicSubdataset
    basis: np.ndarray
    W_mm: np.ndarray
    n_selected: float
    max_score_gap: float
    scores: np.ndarray


def _pseudo_setup(
    trial: tuple[np.ndarray, TokenData, np.ndarray],
    threshold: float | None,
    subset_key: str,
    exclusion_band: float = 0.0,
) -> _PseudoTrial:
    """Sec. 6: the pseudo token-priority graphs of the trained ``W`` and what they define."""
    E, data, W = trial
    pseudo = pseudo_priority_graphs(E, data, W, threshold=threshold, exclusion_band=exclusion_band)
    if subset_key == "label":  # the authors' generate_reduced_ds: the SCC of the true label
        subset = cyclic_subdataset(data, graphs=pseudo.graphs)
        basis = _kept(scyc_basis, E, _label_components(pseudo.graphs, data, subset))
    else:
        subset = pseudo_cyclic_subdataset(pseudo, data)
        basis = _kept(scyc_basis, E, pseudo.graphs)
    logits = np.where(data.mask, attention_logits(E, data, W), np.nan)
    return _PseudoTrial(
        subset=subset,
        basis=basis,
        W_mm=_kept(_svm_direction, E, pseudo.graphs),
        n_selected=float(pseudo.selected.sum(axis=1).mean()),
        max_score_gap=float(np.max(np.nanmax(logits, axis=1) - np.nanmin(logits, axis=1))),
        scores=np.array(pseudo.scores),
    )


def _label_components(
    graphs: TokenPriorityGraphs, data: TokenData, subset: CyclicSubdataset
) -> TokenPriorityGraphs:
    """Graphs holding only the SCCs (as cycles) of the labels of the sub-dataset's samples.

    Their ``S_cyc`` is the authors' ``cal_Sfin``: spanned by the SCCs of the kept samples' true
    labels, not by every multi-node SCC of the pseudo graphs.
    """
    nodes: dict[int, set[int]] = {}
    edges: dict[int, set[tuple[int, int]]] = {}
    for i in subset.index:
        k, lab = int(data.query[i]), int(data.labels[i])
        g = graphs[k]
        comp = g.components[g.component_of[lab]]
        nodes.setdefault(k, set()).update(comp)
        edges.setdefault(k, set()).update(zip(comp, comp[1:] + comp[:1], strict=True))
    return graphs_from_sets(graphs.K, nodes, edges)


def _seed_list(seeds: Sequence[int]) -> tuple[int, ...]:
    """``seeds`` checked: a non-empty sequence of distinct non-negative integers."""
    seeds = tuple(as_count(s, "seed", minimum=0) for s in as_ordered(seeds, "seeds"))
    if not seeds or len(set(seeds)) < len(seeds):
        raise InvalidDataError(f"seeds must be a non-empty list of distinct seeds, got {list(seeds)}")
    return seeds


def _seed_trials(seeds: tuple[int, ...], n_iter: int, n_trials: int, **values: np.ndarray) -> optim.Trace:
    """The record of several seeds' run ends, from flat ``(len(seeds) * n_trials,)`` arrays, seed by seed.

    Each value is ``(len(seeds), n_trials)`` (read-only); :meth:`~ntpnb._optim.Trace.at` is one seed's.
    """
    shape = (len(seeds), n_trials)
    values = MappingProxyType({k: frozen(np.reshape(v, shape)) for k, v in values.items()})
    return optim.Trace(frozen(np.array([n_iter])), values, seeds=seeds)


def acyclic_end(
    *,
    lr: float,
    K: int,
    d: int,
    n: int,
    T: int,
    n_trials: int,
    n_iter: int,
    seeds: Sequence[int],
    init: str = "uniform",
    step_eps: float = settings.FLOAT64_TINY,
) -> optim.Trace:
    """The end of Fig. 3's runs (acyclic data, ``C E^T = I``, log-loss) at each seed: one batched training.

    Each seed's trials are :func:`global_experiment`'s (``kind="acyclic"``, the same ``seed``, sizes
    and ``init``), trained by normalized GD with step ``lr g / (||g|| + step_eps)``. The default
    ``step_eps``, float64's smallest normal number, leaves every step of length ``lr`` (the paper's
    rule, bit for bit: ``||g|| + step_eps == ||g||``) until a trial's gradient underflows to 0, where
    the exact rule is undefined; that trial then stays where it is (its attention saturated to
    float64). Returns per trial ``corr`` (``corr(W, W^mm)`` at the end), ``norm_ratio``
    (``||W|| / (lr n_iter)``) and ``stalled`` (1 where ``||grad L(W)|| < step_eps`` at the end: its
    steps had shrunk below ``lr / 2``).
    """
    seeds, n_iter = _seed_list(seeds), as_count(n_iter, "n_iter")
    opt = optim.normalized_gd(lr, eps=step_eps)  # checks lr and step_eps
    draws = [t for s in seeds for t in _draw_trials(_trials_key("acyclic", K, d, n, T, n_trials, s))]
    W0 = [initial_weights(init, n_trials, d, s) for s in seeds]
    W0 = None if W0[0] is None else np.concatenate(W0)
    W_mm = np.array([_kept(_svm_direction, E, token_priority_graphs(data)) for E, data in draws])
    problems = [make_problem(E, identity_head(E), data) for E, data in draws]
    W = np.array(train_trials(problems, opt, n_iter, record_at=np.array([n_iter]), W0=W0).W)
    grad = gradient_norms(W[None], stack_problems(problems))[0]
    norm = np.linalg.norm(W, axis=(1, 2))
    return _seed_trials(
        seeds,
        n_iter,
        n_trials,
        corr=correlation(W, W_mm),
        norm_ratio=norm / (opt.lr * n_iter),
        stalled=grad < step_eps,
    )


def local_end(
    loss: str,
    *,
    K: int,
    d: int,
    n: int,
    T: int,
    n_trials: int,
    lr: float,
    n_iter: int,
    seeds: Sequence[int],
    threshold: float | None = None,
    exclusion_band: float = 0.0,
    init: str = "zero",
    step_eps: float = 0.0,
) -> optim.Trace:
    """The end of Fig. 5's (or 6's) runs at each seed: ``W`` and the local reference, batched over seeds.

    Each seed's trials, training and pseudo graphs are :func:`local_experiment`'s (the same
    arguments, the pseudo cyclic sub-dataset keyed by the label, the authors' protocol) without the
    global reference and the curves. Returns per trial ``corr_local`` (with ``W~^mm``), ``corr_global``
    (with ``W^mm``), ``nonempty`` (1 where the pseudo cyclic sub-dataset has a sample) and
    ``dist_local`` (``||Pi_S~cyc(W) - Pi_S~cyc(W~^cyc)||`` at the last step, 0 where it is empty).
    """
    seeds, n_iter = _seed_list(seeds), as_count(n_iter, "n_iter")
    trials = [t for s in seeds for t in _local_trials(_trials_key("general", K, d, n, T, n_trials, s))]
    W0 = [initial_weights(init, n_trials, d, s) for s in seeds]
    W0 = None if W0[0] is None else np.concatenate(W0)
    problems = [make_problem(t.E, t.C, t.data, loss, "argmax") for t in trials]
    opt, end = optim.normalized_gd(lr, eps=step_eps), np.array([n_iter])
    W = np.array(train_trials(problems, opt, n_iter, record_at=end, W0=W0).W)
    setup = partial(_pseudo_setup, threshold=threshold, exclusion_band=exclusion_band, subset_key="label")
    pseudo = parallel_map(setup, [(t.E, t.data, w) for t, w in zip(trials, W, strict=True)])
    ref = gd_reference(
        [t.E for t in trials], [p.subset for p in pseudo], [t.C for t in trials], loss, "argmax", opt, n_iter,
        record_at=end, divide_by=[t.data.n for t in trials],
    ).W  # fmt: skip
    return _seed_trials(
        seeds,
        n_iter,
        n_trials,
        corr_local=correlation(W, np.array([p.W_mm for p in pseudo])),
        corr_global=correlation(W, np.array([t.W_mm for t in trials])),
        nonempty=np.array([p.subset.index.size > 0 for p in pseudo]),
        dist_local=_same_step_distance(W, ref, stack_bases([p.basis for p in pseudo])),
    )


def midpoint_gaps(prob: Problem, n_pairs: int, scale: float, rng: np.random.Generator) -> np.ndarray:
    """``L((W1 + W2) / 2) - (L(W1) + L(W2)) / 2`` on random pairs: midpoint convexity (Lemma 3).

    ``W1``, ``W2``: i.i.d. ``N(0, scale^2)`` entries, drawn in that order; ``prob``: one trial
    (:func:`~ntpnb.attention._model.make_problem`). A convex risk gives ``<= 0`` up to rounding.
    """
    n_pairs = as_count(n_pairs, "n_pairs")
    rng = as_generator(rng, "rng")
    d = prob.query.shape[-1]
    W1 = scale * rng.standard_normal((n_pairs, d, d))
    W2 = scale * rng.standard_normal((n_pairs, d, d))
    value = losses_at(np.concatenate([(W1 + W2) / 2, W1, W2]), prob).reshape(3, n_pairs)
    return value[0] - (value[1] + value[2]) / 2


def second_differences(prob: Problem, basis: np.ndarray, n_dirs: int, rng: np.random.Generator) -> np.ndarray:
    """Second differences of the risk along random unit directions of a subspace (Lemma 3).

    Per draw: a unit direction ``D`` and a point ``W0`` (three times a standard Gaussian combination)
    in the span of ``basis`` (orthonormal rows of length ``d^2``), then ``(L(W0 - h D) - 2 L(W0) +
    L(W0 + h D)) / h^2``, ``h = 1e-3``: positive under strict convexity on the subspace.
    """
    n_dirs = as_count(n_dirs, "n_dirs")
    rng = as_generator(rng, "rng")
    dim, d = basis.shape[0], math.isqrt(basis.shape[1])
    points, h = [], 1e-3
    for _ in range(n_dirs):
        D = (basis.T @ rng.standard_normal(dim)).reshape(d, d)
        D /= np.linalg.norm(D)
        W0 = 3 * (basis.T @ rng.standard_normal(dim)).reshape(d, d)
        points += [W0 + t * D for t in (-h, 0, h)]
    v = losses_at(np.array(points).reshape(-1, d, d), prob).reshape(n_dirs, 3)
    return (v[:, 0] - 2 * v[:, 1] + v[:, 2]) / (h * h)


def mean_and_error(x: np.ndarray) -> tuple[float, float]:
    """The mean over trials and its standard error ``std / sqrt(n)`` (``ddof = 1``)."""
    x = as_float(x, "x")
    if x.ndim != 1 or x.size < 2:
        raise InvalidDataError(f"mean_and_error needs a 1-D array of at least 2 trials, got shape {x.shape}")
    return x.mean(), x.std(ddof=1) / np.sqrt(x.size)


def mean_and_z(x: np.ndarray, target: float) -> tuple[float, float, float]:
    """The mean over trials, its standard error, and ``target``'s distance from it in standard errors.

    ``(mean, se, (mean - target) / se)``, the mean and ``se`` as :func:`mean_and_error`.

    Raises
    ------
    InvalidDataError
        As :func:`mean_and_error`, or if every trial has the same value (no standard error).
    """
    mean, se = mean_and_error(x)
    if not se > 0:
        raise InvalidDataError(f"the trials' values are all {mean}: no standard error to measure in")
    return mean, se, (mean - float(as_float(target, "target"))) / se


def largest_carrying(values: np.ndarray, share: float = 0.9) -> np.ndarray:
    """The indices of the largest values that carry ``share`` of the sum, largest first.

    For heavy-tailed final distances: which trials make the mean. Empty when every value is 0.
    """
    values = as_float(values, "values")
    order = np.argsort(values)[::-1]
    cumulative = np.cumsum(values[order]) / max(values.sum(), np.finfo(float).tiny)
    n_carry = int(np.searchsorted(cumulative, share) + 1) if values.any() else 0
    return order[:n_carry]


def stable(x: float, digits: int = 2) -> float:
    """``x`` rounded to ``digits`` significant digits: the digits of a trained run that are stable.

    Normalized GD amplifies rounding over a long run, so another summation order (the compiled
    kernels' or the numpy reference's) moves a trained run's distances and counts in their third
    significant digit; chapter 7 prints them to two (``digits=1`` for the local distances of Figs.
    5-6, which lie near the rounding noise of the step, and what is computed from them), as
    ``format(stable(x), "g")``. Its mean correlations agreed to three decimals in that comparison
    and are printed so (two significant digits would print 0.995 as 1, against a paper's 0.99).
    The rounding is the book's, :func:`ntpnb._digits.format_number`.
    """
    return float(format_number(float(x), digits))
