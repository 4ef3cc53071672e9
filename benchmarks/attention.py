"""The 100-trial attention experiments of Paper B (Figs. 3-4): batched training against a naive loop.

``ntpnb.attention.train`` runs every trial's normalized GD as one vectorized computation over
``(trials, samples, tokens, d)`` arrays. The reference here, :func:`naive_train`, is the same
computation written the way one would first write it: a Python loop over trials, then over
iterations, then over samples, with small numpy operations on one sample's tokens. It uses the
same cancellation-free form of the log-loss gradient as :func:`ntpnb.attention.loss_and_grad`,
so the two agree to rounding (checked on every run: :data:`MAX_REL_DIFF`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ntpnb import optim
from ntpnb.attention import identity_head, make_problem, stack_problems, train
from ntpnb.attention.experiments import _trial_data
from ntpnb.attention.model import Problem

#: The paper's settings (Sec. 5, Appendix D): data sizes of Figs. 3 and 4, NGD step, iterations.
SIZES = {"acyclic": dict(K=8, d=8, n=4, T=6), "general": dict(K=6, d=8, n=6, T=4)}
LR, N_ITER, N_TRIALS = 0.01, 4000, 100
#: The seeds chapter 06 passes to ``global_experiment`` at the paper profile (``seed + i + 1``),
#: so these are the chapter's trials.
SEEDS = {"acyclic": 1, "general": 2}
#: Largest ``max |W_naive - W_batched| / max |W_batched|`` accepted as "the same result".
MAX_REL_DIFF = 1e-9


def trial_problems(kind: str, n_trials: int, seed: int | None = None) -> list[Problem]:
    """One log-loss problem (head ``C E^T = I``) per trial, drawn as ``global_experiment`` draws them.

    ``seed`` defaults to the one chapter 06 uses for ``kind`` (:data:`SEEDS`).
    """
    rng = np.random.default_rng(SEEDS[kind] if seed is None else seed)
    problems = []
    for _ in range(n_trials):
        E, data = _trial_data(kind, rng=rng, max_redraws=100, **SIZES[kind])
        problems.append(make_problem(E, identity_head(E), data, "log", "identity"))
    return problems


def naive_train(problems: list[Problem], lr: float, n_iter: int) -> np.ndarray:
    """Normalized GD from ``W = 0``, trial by trial, iteration by iteration, sample by sample."""
    out = []
    for prob in problems:
        n, _, d = prob.emb.shape[1:]
        samples = []
        for i in range(n):
            on_all = prob.mask[0, i]
            x = prob.emb[0, i][on_all]
            log_gamma = prob.log_gamma[0, i][on_all]
            on = np.isfinite(log_gamma)
            gamma = np.where(on, np.exp(np.where(on, log_gamma, 0.0)), 0.0)
            samples.append((x, prob.query[0, i], on, gamma, prob.weights[0, i]))
        W = np.zeros((d, d))
        for _ in range(n_iter):
            grad = np.zeros((d, d))
            for x, xbar, on, gamma, weight in samples:
                sc = x @ (W @ xbar)
                e = np.exp(sc - sc.max())
                s = e / e.sum()
                r = s * gamma
                r = r / r.sum()
                centered = (s[None, :] * (gamma[None, :] - gamma[:, None])).sum(axis=1)
                ratio = np.divide(r, gamma, out=np.zeros_like(r), where=on)
                dsc = np.where(on, ratio * centered, s)
                grad += weight * np.outer(dsc @ x, xbar)
            W = W - (lr / np.sqrt(np.sum(grad * grad))) * grad
        out.append(W)
    return np.array(out)


def batched_train(problems: list[Problem], lr: float, n_iter: int) -> np.ndarray:
    """The package's batched normalized GD over all trials at once; final ``W`` ``(B, d, d)``."""
    trace = train(stack_problems(problems), optim.normalized_gd(lr), n_iter, record_at=np.array([n_iter]))
    return np.array(trace.W)


@dataclass
class AttentionMeasurement:
    """One experiment (data kind): both times, their ratio, and how far apart the answers are."""

    kind: str
    n_trials: int
    n_iter: int
    naive_seconds: float
    batched_seconds: float
    rel_diff: float

    @property
    def speedup(self) -> float:
        """Naive time over batched time."""
        return self.naive_seconds / self.batched_seconds


def measure(
    kind: str, n_trials: int = N_TRIALS, n_iter: int = N_ITER, seed: int | None = None
) -> AttentionMeasurement:
    """Time both on the same trials; raise if their results differ beyond :data:`MAX_REL_DIFF`."""
    problems = trial_problems(kind, n_trials, seed)
    start = time.perf_counter()
    W_batched = batched_train(problems, LR, n_iter)
    batched = time.perf_counter() - start
    start = time.perf_counter()
    W_naive = naive_train(problems, LR, n_iter)
    naive = time.perf_counter() - start
    rel = float(np.max(np.abs(W_naive - W_batched)) / np.max(np.abs(W_batched)))
    if not rel <= MAX_REL_DIFF:
        raise AssertionError(f"{kind}: naive and batched training differ by {rel:.2e} (> {MAX_REL_DIFF:g})")
    return AttentionMeasurement(kind, n_trials, n_iter, naive, batched, rel)


def format_attention(rows: list[AttentionMeasurement]) -> str:
    """A Markdown table: one row per experiment."""
    head = ["experiment", "trials", "NGD iterations", "naive loop", "batched", "speed-up", "max rel. diff"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        size = ", ".join(f"{k} = {v}" for k, v in SIZES[r.kind].items())
        cells = [
            f"{r.kind} ({size})",
            str(r.n_trials),
            str(r.n_iter),
            f"{r.naive_seconds:.3g} s",
            f"{r.batched_seconds:.3g} s",
            f"{r.speedup:.0f}x",
            f"{r.rel_diff:.1e}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
