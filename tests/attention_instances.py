"""Seeded attention instances and cases shared by the attention tests, and the numpy gradient the
compiled step reproduces to rounding (:func:`table_gradient`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ntpnb._reproducible_products import dot_sum
from ntpnb.attention import (
    Problem,
    TokenData,
    as_token_data,
    general_dataset,
    identity_head,
    make_problem,
    random_embeddings,
    solve_graph_svm,
    stack_problems,
    tied_head,
    token_priority_graphs,
)
from ntpnb.attention._engine import token_table
from ntpnb.attention._model import _scores_grad


def general_instance(seed: int, K: int = 6, d: int = 8, n: int = 6, T: int = 4) -> tuple:
    """Embeddings ``E`` and a general (cyclic) data set of chapter 7's sizes, from ``seed``."""
    E = random_embeddings(K, d, seed)
    X, y = general_dataset(K, n, T, seed + 100)
    data: TokenData = as_token_data(X, y, K)
    return E, data


def w_mm(E: np.ndarray, data: TokenData) -> np.ndarray:
    """The verified Graph-SVM's ``W^mm`` of the data's token-priority graphs."""
    return solve_graph_svm(E, token_priority_graphs(data)).W


#: The (loss, head) pairs every gradient is tested on.
CASES = [
    ("log", "identity"),
    ("squared", "identity"),
    ("ce", "identity"),
    ("squared", "argmax"),
    ("ce", "argmax"),
    ("squared_softmax", "argmax"),
]


def with_condition(E: np.ndarray, cond: float) -> np.ndarray:
    """``E`` with its singular values replaced by a geometric sequence from 1 to ``1 / cond``."""
    U, _, Vt = np.linalg.svd(E, full_matrices=False)
    return U @ np.diag(np.geomspace(1.0, 1.0 / cond, E.shape[0])) @ Vt


#: The head of each assumption (``"identity"``: ``C E^T = I``; ``"argmax"``: ``C = E``).
HEADS = {"identity": identity_head, "argmax": tied_head}

#: Sizes ``(K, d, n, T)`` of trials of different ``n`` and ``T``, so that a stack of them has padded
#: samples and positions.
STACKED_SIZES = ((6, 8, 5, 4), (6, 8, 3, 6), (6, 8, 7, 2))


def stacked_problem(loss: str, head: str, sizes: tuple = STACKED_SIZES) -> Problem:
    """Trials of the given sizes (seeded), one loss and head, stacked on the trial axis."""
    problems = []
    for seed, (K, d, n, T) in enumerate(sizes):
        E = random_embeddings(K, d, seed)
        X, y = general_dataset(K, n, T, seed + 10)
        problems.append(make_problem(E, HEADS[head](E), as_token_data(X, y, K), loss, head))
    return stack_problems(problems)


def table_gradient(prob: Problem) -> Callable[[np.ndarray], np.ndarray]:
    """``W -> loss_and_grad(W, prob)[1]`` over the token table: the numpy reference of the compiled kernels.

    Equal to the gradient of :func:`ntpnb.attention._model.loss_and_grad` up to rounding; the products
    are elementwise multiply-adds over contiguous trials
    (:func:`~ntpnb._reproducible_products.dot_sum`, trial axis last), the log-loss's arrays positions
    first (``(T, ...)``). Only where
    :func:`~ntpnb.attention._engine.compiled_step` has a step (for the log-loss, ``gamma`` equal on
    each sample's label positions).
    """
    U, index = token_table(prob)
    k, d, B = U.shape

    def scores(W: np.ndarray) -> np.ndarray:  # G = U W U^T, (k, k, B)
        WL = np.ascontiguousarray(np.moveaxis(W, 0, -1))  # (d, d, B)
        UW = dot_sum((U[:, p, None], WL[None, p]) for p in range(d))  # (k, d, B)
        return dot_sum((UW[:, None, q], U[None, :, q]) for q in range(d))

    def weight_grad(index: np.ndarray, wdsc: np.ndarray) -> np.ndarray:  # sum w a_t x_t x_bar^T
        A = np.bincount(index.ravel(), weights=wdsc.ravel(), minlength=k * k * B).reshape(k, k, B)
        UA = dot_sum((U[i, :, None], A[i, None]) for i in range(k))  # (d, k, B)
        grad = dot_sum((UA[:, j, None], U[None, j]) for j in range(k))  # (d, d, B)
        return np.ascontiguousarray(np.moveaxis(grad, -1, 0))

    if prob.loss != "log":

        def grad(W: np.ndarray) -> np.ndarray:
            _, dsc = _scores_grad(np.take(scores(W), index), prob)
            return weight_grad(index, np.where(prob.mask, dsc, 0.0) * prob.weights[..., None])

        return grad
    first = lambda a: np.ascontiguousarray(np.moveaxis(a, -1, 0))  # (B, n, T) -> (T, B, n)
    on = np.isfinite(prob.log_gamma)
    index_t = first(index)
    stacked = np.ascontiguousarray(np.stack([index_t, index_t], axis=1))  # both softmaxes' scores
    shift = np.stack([first(np.where(prob.mask, 0.0, -np.inf)), first(prob.log_gamma)], axis=1)
    off_w = first(prob.mask & ~on) * prob.weights[None]

    def log_grad(W: np.ndarray) -> np.ndarray:  # s = softmax(sc), r = softmax(sc + log gamma)
        z = np.take(scores(W), stacked)
        z += shift
        z -= z.max(axis=0)
        np.exp(z, out=z)
        z /= z.sum(axis=0)
        s, r = z[:, 0], z[:, 1]
        wdsc = s * off_w
        wdsc -= r * wdsc.sum(axis=0)
        return weight_grad(index_t, wdsc)

    return log_grad
