"""The 100-trial attention experiments of Paper B (Figs. 3-4): batched training against a naive loop.

``ntpnb.attention.train`` runs every trial's normalized GD as one computation over the trial
axis, in the compiled loops of :mod:`ntpnb.attention._engine`, which compute the iterates of
:func:`ntpnb._optim.run` on the model's gradient over each trial's token table to rounding
(scores gathered from ``U W U^T`` over each trial's distinct token vectors ``U``, the problem's
constants computed once). The reference here, :func:`naive_train`, is the same
computation written the way one would first write it: a Python loop over trials, then over
iterations, then over samples, with small numpy operations on one sample's tokens. It uses the
same cancellation-free form of the log-loss gradient as :func:`ntpnb.attention.loss_and_grad`,
so the two agree to rounding.

"To rounding" needs care over 4000 steps. On the acyclic data the iterates agree to 1e-15. On
the general data normalized GD with a fixed step keeps moving around ``W^cyc`` inside ``S_cyc``
and amplifies rounding: two *batched* runs whose starts differ by 1e-15 end up to ~1e-3 apart
(relative) after 4000 steps, although they agree to 1e-15 for the first 1000. Every run therefore
also measures this rounding floor (:func:`rounding_floor`) and requires the naive loop to agree
within ``max(MAX_REL_DIFF, FLOOR_FACTOR * floor)``; the tests check the two to 1e-9 over a
horizon where the floor is 1e-15.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ntpnb import optim
from ntpnb.attention import Problem, identity_head, make_problem, stack_problems, train, trial_data
from ntpnb.chapter import markdown_table

#: The paper's settings (Sec. 5, Appendix D): data sizes of Figs. 3 and 4, NGD step, iterations.
SIZES = {"acyclic": dict(K=8, d=8, n=4, T=6), "general": dict(K=6, d=8, n=6, T=4)}
LR, N_ITER, N_TRIALS = 0.01, 4000, 100
#: The seeds chapter 07 passes to ``global_experiment`` at the paper profile (``seed + i + 1``),
#: so these are the chapter's trials.
SEEDS = {"acyclic": 1, "general": 2}
#: Largest ``max |W_naive - W_batched| / max |W_batched|`` accepted as "the same result" ...
MAX_REL_DIFF = 1e-9
#: ... or this multiple of the rounding floor of the dynamics (:func:`rounding_floor`).
FLOOR_FACTOR = 10.0
#: Relative size of the start perturbation that measures the rounding floor.
FLOOR_PERTURBATION = 1e-15


def trial_problems(kind: str, n_trials: int, seed: int | None = None) -> list[Problem]:
    """One log-loss problem (head ``C E^T = I``) per trial, drawn as ``global_experiment`` draws them.

    ``seed`` defaults to the one chapter 07 uses for ``kind`` (:data:`SEEDS`).
    """
    rng = np.random.default_rng(SEEDS[kind] if seed is None else seed)
    problems = []
    for _ in range(n_trials):
        E, data = trial_data(kind, rng=rng, **SIZES[kind])
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


def batched_train(
    problems: list[Problem], lr: float, n_iter: int, W0: np.ndarray | None = None
) -> np.ndarray:
    """The package's batched normalized GD over all trials at once; final ``W`` ``(B, d, d)``."""
    opt = optim.normalized_gd(lr)
    trace = train(stack_problems(problems), opt, n_iter, W0=W0, record_at=np.array([n_iter]))
    return np.array(trace.W)


def max_rel_diff(W: np.ndarray, ref: np.ndarray) -> float:
    """Largest per-trial ``max |W - ref| / max |ref|``."""
    return float(np.max(np.abs(W - ref).max(axis=(1, 2)) / np.abs(ref).max(axis=(1, 2))))


def rounding_floor(problems: list[Problem], lr: float, n_iter: int, W_batched: np.ndarray) -> float:
    """How far the batched run moves when its start moves by rounding (1e-15): the dynamics' floor."""
    rng = np.random.default_rng(0)
    W0 = FLOOR_PERTURBATION * rng.standard_normal(W_batched.shape)
    return max_rel_diff(batched_train(problems, lr, n_iter, W0=W0), W_batched)


@dataclass
class AttentionMeasurement:
    """One experiment (data kind): both times, their ratio, and how far apart the answers are."""

    kind: str
    n_trials: int
    n_iter: int
    naive_seconds: float
    batched_seconds: float
    rel_diff: float
    floor: float  # rounding floor of the dynamics (:func:`rounding_floor`)

    @property
    def speedup(self) -> float:
        """Naive time over batched time."""
        return self.naive_seconds / self.batched_seconds


def measure(
    kind: str, n_trials: int = N_TRIALS, n_iter: int = N_ITER, seed: int | None = None
) -> AttentionMeasurement:
    """Time both on the same trials; raise if they differ beyond the tolerance (module docstring)."""
    problems = trial_problems(kind, n_trials, seed)
    start = time.perf_counter()
    W_batched = batched_train(problems, LR, n_iter)
    batched = time.perf_counter() - start
    start = time.perf_counter()
    W_naive = naive_train(problems, LR, n_iter)
    naive = time.perf_counter() - start
    rel = max_rel_diff(W_naive, W_batched)
    floor = rounding_floor(problems, LR, n_iter, W_batched)
    tol = max(MAX_REL_DIFF, FLOOR_FACTOR * floor)
    if not rel <= tol:
        raise AssertionError(
            f"{kind}: naive and batched training differ by {rel:.2e} "
            f"(> {tol:.2e}; rounding floor {floor:.2e})"
        )
    return AttentionMeasurement(kind, n_trials, n_iter, naive, batched, rel, floor)


def format_attention(rows: list[AttentionMeasurement]) -> str:
    """A Markdown table: one row per experiment."""
    head = ["experiment", "trials", "NGD iterations", "naive loop", "batched", "speed-up"]
    head += ["max rel. diff", "rounding floor"]
    return markdown_table(head, [_attention_row(r) for r in rows])


def _attention_row(r: AttentionMeasurement) -> list[str]:
    """One experiment's row of :func:`format_attention`."""
    size = ", ".join(f"{k} = {v}" for k, v in SIZES[r.kind].items())
    return [
        f"{r.kind} ({size})",
        str(r.n_trials),
        str(r.n_iter),
        f"{r.naive_seconds:.3g} s",
        f"{r.batched_seconds:.3g} s",
        f"{r.speedup:.0f}x",
        f"{r.rel_diff:.1e}",
        f"{r.floor:.1e}",
    ]
