"""The compiled training loops of both papers: time against the number of iterations and against size.

Paper A (chapter 4): :func:`ntpnb.linear._descent.run_decoder`, the loop of ``ntpnb.train``, with
the chapter's optimizers at its paper profile's steps (GD, normalized GD, Adam, and SGD with its
batch of samples), from LeCun initialization, recording only the last iterate (the tracked
quantities of ``ntpnb.train`` and its limits are not timed). Instances are
:func:`~benchmarks.instances.gaussian_instance` of chapter 4's size ``(m, V, d, S) = (50, 10, 60,
6)``, and for the growth in ``m`` the same ``V`` and ``S`` with ``d = 1.2 m`` (the chapter's ratio).

Paper B (chapter 7): :func:`ntpnb.attention.train`, normalized GD (the compiled loop of
:mod:`ntpnb.attention._engine`) from ``W = 0`` on the general (cyclic) data: the chapter's own
100 trials of Fig. 4 for the growth in iterations, and for the growth in the number of samples
``n`` ten trials of a larger vocabulary (so that large ``n`` still has a strict relation).

Each size is a tuple whose first entry is the number of iterations; :func:`decoder_instance` and
:func:`attention_instance` make the instance, ``DECODER_METHODS`` and ``ATTENTION_METHODS`` run it
(returning the final iterate). The four sweeps are :class:`~benchmarks.timing.Benchmark` s
(:func:`training_sizes`), timed with the skip rule of :mod:`benchmarks.timing`, their exponents
fitted by :mod:`benchmarks.scaling`; :func:`benchmarks.tables.format_training` writes each table,
one row per optimizer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ntpnb import optim
from ntpnb.attention import Problem, identity_head, make_problem, stack_problems, train, trial_data
from ntpnb.chapter._parameters import notebook_source, profile_parameters
from ntpnb.linear import NTPData, run_decoder

from . import attention
from .instances import fresh_copy, gaussian_instance, unchanged
from .scaling import Size, all_sizes
from .timing import Benchmark

#: Chapter 4's paper profile: the steps and the SGD batch of its optimizers, and its instance size.
CHAPTER_4 = profile_parameters(notebook_source("04_gd_synthetic_instance"), "paper")
DECODER_SHAPE = (CHAPTER_4["m"], CHAPTER_4["V"], CHAPTER_4["d"], CHAPTER_4["S"])
#: Growth in iterations: chapter 4 runs 10^4 (Figs. 4-5), 10^5 (SGD) and 10^6 (the long runs).
DECODER_ITERATIONS = (1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000)
#: Growth in m at a fixed number of iterations (chapter 4's ``n_iter``), ``d = D_OVER_M * m``.
DECODER_M = (25, 50, 100, 200, 400, 800)
DECODER_M_ITERATIONS = CHAPTER_4["n_iter"]
D_OVER_M = CHAPTER_4["d"] / CHAPTER_4["m"]

#: Paper B: the general data of Fig. 4, as chapter 7 draws its trials (``benchmarks.attention``).
ATTENTION_ITERATIONS = (1_000, 3_000, 10_000, 30_000, 100_000)
#: Growth in the samples n at a fixed number of iterations, on (K, d, T) = ATTENTION_N_SHAPE.
ATTENTION_N = (4, 16, 64, 256, 1024)
ATTENTION_N_SHAPE = dict(K=12, d=16, T=4)
ATTENTION_N_TRIALS = 10
ATTENTION_N_ITERATIONS = 2_000


@dataclass(frozen=True)
class DecoderInstance:
    """Paper A: the data, the start and the number of steps."""

    data: NTPData
    W0: np.ndarray
    n_iter: int


def decoder_size(n_iter: int, m: int) -> Size:
    """``(iterations, m, V, d, S)``: chapter 4's ``V`` and ``S``, ``d = 1.2 m`` (its ratio)."""
    return (n_iter, m, DECODER_SHAPE[1], round(D_OVER_M * m), DECODER_SHAPE[3])


def decoder_instance(n_iter: int, m: int, V: int, d: int, S: int, seed: int = 0) -> DecoderInstance:
    """A Gaussian instance of size ``(m, V, d, S)`` and a LeCun start (seeded)."""
    data = gaussian_instance(m, V, d, S, seed)
    return DecoderInstance(data, optim.lecun_init((V, d), fan_in=d, seed=seed), n_iter)


def fresh_decoder(inst: DecoderInstance) -> DecoderInstance:
    """A new data object (nothing the package caches on one carries over between timings)."""
    return DecoderInstance(fresh_copy(inst.data), inst.W0, inst.n_iter)


def _decoder_run(
    opt: optim.Optimizer, batch_size: int | None = None
) -> Callable[[DecoderInstance], np.ndarray]:
    """A method of Paper A's tables: ``opt`` (on batches of ``batch_size``) from the instance's start."""

    def run(inst: DecoderInstance) -> np.ndarray:
        """The last iterate of the instance's run."""
        at = np.array([inst.n_iter])
        return run_decoder(inst.data, opt, inst.n_iter, inst.W0, record_at=at, batch_size=batch_size).W

    return run


#: Chapter 4's optimizers, by the names the chapter gives them.
DECODER_METHODS: dict[str, Callable[[DecoderInstance], np.ndarray]] = {
    "GD": _decoder_run(optim.gd(CHAPTER_4["gd_lr"])),
    "NGD": _decoder_run(optim.normalized_gd(CHAPTER_4["ngd_lr"])),
    "Adam": _decoder_run(
        optim.adam(CHAPTER_4["adam_lr"], (CHAPTER_4["adam_beta1"], CHAPTER_4["adam_beta2"]))
    ),
    f"SGD (batch {CHAPTER_4['sgd_batch']})": _decoder_run(
        optim.sgd(CHAPTER_4["gd_lr"]), batch_size=CHAPTER_4["sgd_batch"]
    ),
}


@dataclass(frozen=True)
class AttentionInstance:
    """Paper B: the stacked trials and the number of steps."""

    prob: Problem
    n_iter: int


def attention_instance(n_iter: int, n_trials: int, K: int, d: int, n: int, T: int) -> AttentionInstance:
    """``n_trials`` log-loss problems (head ``C E^T = I``) of the general data of size ``(K, d, n, T)``.

    At the size of Fig. 4 (``benchmarks.attention.SIZES["general"]``) these are chapter 7's own
    trials (its seed); otherwise drawn the same way from that seed.
    """
    rng = np.random.default_rng(attention.SEEDS["general"])
    problems = []
    for _ in range(n_trials):
        E, data = trial_data("general", K=K, d=d, n=n, T=T, rng=rng)
        problems.append(make_problem(E, identity_head(E), data, "log", "identity"))
    return AttentionInstance(stack_problems(problems), n_iter)


def _attention_run(inst: AttentionInstance) -> np.ndarray:
    """Paper B's method: normalized GD from ``W = 0`` on every trial at once; the last iterates."""
    opt = optim.normalized_gd(attention.LR)
    return np.asarray(train(inst.prob, opt, inst.n_iter, record_at=np.array([inst.n_iter])).W)


ATTENTION_METHODS: dict[str, Callable[[AttentionInstance], np.ndarray]] = {
    f"NGD (step {attention.LR:g})": _attention_run
}


def attention_iteration_size(n_iter: int) -> Size:
    """``(iterations, trials, K, d, n, T)`` of chapter 7's Fig. 4 runs."""
    shape = attention.SIZES["general"]
    return (n_iter, attention.N_TRIALS, shape["K"], shape["d"], shape["n"], shape["T"])


def attention_n_size(n: int) -> Size:
    """``(iterations, trials, K, d, n, T)`` of the growth in the samples ``n``."""
    s = ATTENTION_N_SHAPE
    return (ATTENTION_N_ITERATIONS, ATTENTION_N_TRIALS, s["K"], s["d"], n, s["T"])


def compile_kernels() -> None:
    """Load (or compile) both papers' kernels, so no timing includes the compiler."""
    import ntpnb

    ntpnb.compile_kernels()


#: What the training tables measure, under the first one's heading on the benchmarks page.
TRAINING_INTRO = f"""\
The compiled training loops (`benchmarks/training.py`), one row per optimizer, each time the best
of 3 below 1 s, with the kernels compiled (or loaded from numba's cache) before any timing.
Paper A (chapter 4): `ntpnb.linear._descent.run_decoder`, the loop of `ntpnb.train`, with chapter 4's
optimizers at its paper profile's steps (GD {CHAPTER_4["gd_lr"]:g}, normalized GD
{CHAPTER_4["ngd_lr"]:g}, Adam {CHAPTER_4["adam_lr"]:g}, SGD
{CHAPTER_4["gd_lr"]:g} with {CHAPTER_4["sgd_batch"]} samples a step) from a LeCun
start, recording the last iterate only (the tracked quantities and the limits of `ntpnb.train`
are not timed), on a Gaussian instance of chapter 4's size `(m, V, d, S)` =
{DECODER_SHAPE}, and for the growth in `m` at {DECODER_M_ITERATIONS:,} iterations
the same `V` and `S` with `d = {D_OVER_M:g} m`. Full-batch GD and NGD run in the logit
form there (`m <= d`: `V m^2` multiply-adds a step), Adam in the weight form (`2 V m d`), SGD on
its batch (`B V d`). Paper B (chapter 7): `ntpnb.attention.train`, normalized GD (step
{attention.LR:g}) from `W = 0` in the compiled loop of `ntpnb.attention._engine`, on chapter 7's
{attention.N_TRIALS} trials of Fig. 4 (general data) for the growth in iterations, and on
{ATTENTION_N_TRIALS} trials of general data with `(K, d, T)` =
({ATTENTION_N_SHAPE["K"]}, {ATTENTION_N_SHAPE["d"]}, {ATTENTION_N_SHAPE["T"]})
for the growth in the number of samples `n` at {ATTENTION_N_ITERATIONS:,} iterations.
"""


def _first(size: Size, _instance: object = None) -> int:
    """The count of a training size: its first entry, the iterations."""
    return size[0]


_TRAINING = dict(fit_kind=all_sizes, fit_label="all sizes", exponent=None)
_DECODER = dict(size_label="(iterations, m, V, d, S)", copy=fresh_decoder, **_TRAINING)
_ATTENTION_TRAINING = dict(size_label="(iterations, trials, K, d, n, T)", copy=unchanged, **_TRAINING)
TRAINING_A_ITERATIONS = Benchmark(
    "Training, Paper A: iterations",
    DECODER_METHODS,
    decoder_instance,
    _first,
    "iterations",
    intro=TRAINING_INTRO,
    **_DECODER,
)
TRAINING_A_M = Benchmark(
    "Training, Paper A: m",
    DECODER_METHODS,
    decoder_instance,
    lambda size, instance: size[1],
    "m",
    **_DECODER,
)
TRAINING_B_ITERATIONS = Benchmark(
    "Training, Paper B: iterations",
    ATTENTION_METHODS,
    attention_instance,
    _first,
    "iterations",
    **_ATTENTION_TRAINING,
)
TRAINING_B_N = Benchmark(
    "Training, Paper B: samples n",
    ATTENTION_METHODS,
    attention_instance,
    lambda size, instance: size[4],
    "samples n",
    **_ATTENTION_TRAINING,
)


def training_sizes(
    iterations: Sequence[int] | None = None,
    m: Sequence[int] | None = None,
    n: Sequence[int] | None = None,
) -> list[tuple[Benchmark, list[Size]]]:
    """The four training sweeps and their sizes (the defaults of this module)."""
    a_iters = iterations or DECODER_ITERATIONS
    b_iters = iterations or ATTENTION_ITERATIONS
    chapter_m = DECODER_SHAPE[0]
    return [
        (TRAINING_A_ITERATIONS, [decoder_size(k, chapter_m) for k in a_iters]),
        (TRAINING_A_M, [decoder_size(DECODER_M_ITERATIONS, x) for x in m or DECODER_M]),
        (TRAINING_B_ITERATIONS, [attention_iteration_size(k) for k in b_iters]),
        (TRAINING_B_N, [attention_n_size(x) for x in n or ATTENTION_N]),
    ]
