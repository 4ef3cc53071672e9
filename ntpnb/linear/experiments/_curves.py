"""Reading training runs and curves: lines, rates, summaries, and where a run starts.

Every rate and slope of Paper A's chapters is a least-squares line (:func:`fit_line`). A training
run (:class:`~ntpnb._optim.Trace` of :func:`ntpnb.train`) is read at one iteration, where a curve
first crosses a level, or, recorded on several grids, as the shorter run on one; how many of its
digits are the method's own (:func:`rounding_spread`). Initializations are drawn from a random
stream of their own (:func:`own_stream`), never the data's.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import numpy as np
from numpy.typing import ArrayLike

from ... import _optim as optim
from ... import settings
from ..._digits import format_number
from ..._direction import correlation
from ..._markdown import columns_table
from ..._validation import as_count, as_float, as_float_array, as_generator, frozen
from ...errors import InvalidDataError
from .._decoder_training import Limits
from .._decoder_training import train as _train
from .._descent import run_decoder
from .._loss import ce_loss
from .._ntp_data import NTPData, require_data

__all__ = [
    "fit_line",
    "decay_rate",
    "local_exponent",
    "trace_summary",
    "summary_table",
    "first_reaching",
    "trace_at",
    "rounding_spread",
    "spread_at",
    "offset_from",
    "toward",
    "own_stream",
    "lecun_decoder",
    "gd_loss_curve",
]


#: The quantities of a training trace that :func:`trace_summary` reports (Figs. 1, 4, 5).
SUMMARY_NAMES: tuple[str, ...] = ("kl", "norm", "corr", "corr_corrected", "dist_F")

#: Each quantity of :data:`SUMMARY_NAMES` as a page names it (MyST math).
SUMMARY_LABELS: Mapping[str, str] = MappingProxyType(
    {
        "kl": r"$\operatorname{CE}(W_k) - \mathcal{H}$",
        "norm": r"$\lVert W_k\rVert$",
        "corr": r"$\operatorname{corr}(W_k, W^{\rm mm})$",
        "corr_corrected": r"$\operatorname{corr}(W_k - W^\star, W^{\rm mm})$",
        "dist_F": r"$\lVert \mathcal{P}_\mathscr{F}(W_k) - W^\star\rVert$",
    }
)


def fit_line(x: ArrayLike, y: ArrayLike) -> tuple[float, float]:
    """Least-squares slope and intercept of ``y`` against ``x``.

    Raises
    ------
    InvalidDataError
        If ``x`` and ``y`` are not 1-D arrays of one length with at least two points, or hold
        a value that is not finite.
    """
    x, y = as_float_array(x, "x", 1), as_float_array(y, "y", 1)
    if x.size != y.size or x.size < 2:
        raise InvalidDataError(f"fit_line needs x and y of one length >= 2, got {x.size} and {y.size}")
    slope, intercept = np.polyfit(x, y, 1)
    return float(slope), float(intercept)


def decay_rate(gammas: ArrayLike, gap: ArrayLike, window: tuple[float, float] = (1e-12, 1e-4)) -> float:
    """The slope of ``log(gap)`` against ``gamma`` where ``window[0] <= gap <= window[1]``.

    Above the window the ``log(1 + x)`` curvature still shows, below it the rounding of the
    in-support part (about ``1e-16``) does.

    Raises
    ------
    InvalidDataError
        If fewer than two points of ``gap`` lie in the window.
    """
    gammas, gap = as_float_array(gammas, "gammas", 1), as_float_array(gap, "gap", 1)
    inside = (gap >= window[0]) & (gap <= window[1])
    if np.count_nonzero(inside) < 2:
        raise InvalidDataError(f"fewer than two values of the gap lie in {window}: no rate to fit")
    return fit_line(gammas[inside], np.log(gap[inside]))[0]


def local_exponent(trace: optim.Trace, lo: float, hi: float) -> float:
    """Minus the slope of ``log(1 - corr)`` against ``log ||W_k||`` over ``lo <= k <= hi``."""
    k = trace.iterations
    window = (k >= lo) & (k <= hi)
    x, y = np.log(trace.norm[window]), np.log(1 - trace.corr[window])
    return -fit_line(x, y)[0]


def trace_summary(trace: optim.Trace, k: int | None = None) -> dict[str, float]:
    """The tracked quantities of :data:`SUMMARY_NAMES` at iteration ``k`` (default: the last recorded).

    Raises
    ------
    InvalidDataError
        If ``k`` is not one of the recorded iterations.
    """
    hits = [-1] if k is None else np.flatnonzero(trace.iterations == k)
    if len(hits) == 0:
        raise InvalidDataError(f"iteration {k} was not recorded")
    return {name: float(getattr(trace, name)[hits[0]]) for name in SUMMARY_NAMES}


def summary_table(summaries: Mapping[str, Mapping[str, float]], digits: int = 4) -> str:
    """Runs' summaries (:func:`trace_summary`) as a Markdown table: a row per quantity, a column per run.

    ``summaries`` maps each run's heading (MyST) to its summary; the rows are the quantities of
    :data:`SUMMARY_NAMES` named as :data:`SUMMARY_LABELS` names them, each value to ``digits``
    significant digits.

    Raises
    ------
    InvalidDataError
        If there is no run, or a summary lacks one of :data:`SUMMARY_NAMES`.
    """
    if not summaries:
        raise InvalidDataError("summary_table: no run to show")
    for heading, summary in summaries.items():
        missing = [name for name in SUMMARY_NAMES if name not in summary]
        if missing:
            raise InvalidDataError(f"summary_table: the summary of {heading!r} lacks {missing}")
    columns = {
        heading: {SUMMARY_LABELS[name]: format_number(float(summary[name]), digits) for name in SUMMARY_NAMES}
        for heading, summary in summaries.items()
    }
    return columns_table(columns)


def first_reaching(trace: optim.Trace, name: str, level: float, below: bool = False) -> float:
    """The first recorded ``k`` where quantity ``name`` is ``>= level`` (``<=`` if ``below``); else inf."""
    values = getattr(trace, name)
    hit = values <= level if below else values >= level
    return int(trace.iterations[np.argmax(hit)]) if hit.any() else np.inf


def trace_at(trace: optim.Trace, record_at: ArrayLike) -> optim.Trace:
    """The run of ``trace`` seen only at the iterations ``record_at``, ending at the last of them.

    The steps do not depend on where a run records, so a run recorded on the union of several
    grids stands for the shorter runs on each; its final iterate is the recorded ``iterates``
    at ``record_at[-1]``.

    Raises
    ------
    InvalidDataError
        If an iteration of ``record_at`` was not recorded, or ``trace`` kept no ``iterates``.
    """
    wanted = np.asarray(record_at)
    index = np.searchsorted(trace.iterations, wanted)
    found = wanted.ndim == 1 and wanted.size > 0 and np.all(index < trace.iterations.size)
    if not found or np.any(trace.iterations[index] != wanted):
        raise InvalidDataError("every iteration of record_at must be one the run recorded")
    if "iterates" not in trace.values:
        raise InvalidDataError("the run kept no iterates (keep_iterates=True): its final W is unknown")
    values = {name: frozen(v[index], order="K") for name, v in trace.values.items()}
    return optim.Trace(iterations=frozen(wanted), values=MappingProxyType(values), W=values["iterates"][-1])


def rounding_spread(
    data: NTPData,
    optimizer: optim.Optimizer,
    W0: ArrayLike,
    reference: optim.Trace,
    horizon: int,
    lim: Limits,
) -> dict[str, np.ndarray]:
    """How far rounding alone moves a run: the relative change of its summary from a start one ulp away.

    The run ``reference`` (of ``optimizer`` from ``W0``, by :func:`ntpnb.train`) is repeated from
    ``W0`` moved one float up, to ``horizon`` steps on its grid: nothing grows for a contraction
    (GD on this convex loss), a method that amplifies rounding shows it. Returns each quantity of
    :data:`SUMMARY_NAMES` at every recorded ``k <= horizon`` (under ``"k"``). Another order of
    the sums perturbs every step, so may move a result more. ``lim``: the :func:`ntpnb.limits` of
    ``data``, as the reference run took them.

    Raises
    ------
    InvalidDataError
        If the reference was not recorded at ``horizon``.
    """
    horizon = as_count(horizon, "horizon")
    grid = reference.iterations[reference.iterations <= horizon]
    if grid.size == 0 or grid[-1] != horizon:
        raise InvalidDataError(f"the reference run was not recorded at horizon = {horizon}")
    W1 = np.nextafter(as_float(W0, "W0"), np.inf)
    moved = _train(data, optimizer, horizon, W0=W1, record_at=grid, lim=lim)
    spread = {"k": grid}
    for name in SUMMARY_NAMES:
        ref = getattr(reference, name)[: grid.size]
        spread[name] = np.abs(getattr(moved, name) - ref) / np.where(ref != 0, np.abs(ref), 1.0)
    return spread


def spread_at(spread: Mapping[str, np.ndarray], k: int) -> dict[str, float]:
    """Each quantity's relative spread (:func:`rounding_spread`) at the recorded iteration ``k``.

    Beyond the spread's horizon (its last recorded ``k``): the largest spread over its last decade
    measured, from the first record at or after a tenth of the horizon.

    Raises
    ------
    InvalidDataError
        If ``k`` lies within the horizon but was not recorded.
    """
    grid = np.asarray(spread["k"])
    names = [name for name in spread if name != "k"]
    if k > grid[-1]:
        last = np.searchsorted(grid, grid[-1] // 10)
        return {name: float(spread[name][last:].max()) for name in names}
    at = np.searchsorted(grid, k)
    if grid[at] != k:
        raise InvalidDataError(f"iteration {k} was not recorded in the spread (the next one: {grid[at]})")
    return {name: float(spread[name][at]) for name in names}


def offset_from(W: ArrayLike, direction: ArrayLike) -> np.ndarray:
    """``||W - <W, u> u||``, ``u = direction / ||direction||``, of one matrix ``W`` or of each of a stack."""
    W, direction = as_float(W, "W"), as_float(direction, "direction")
    unit = direction / np.linalg.norm(direction)
    along = np.sum(W * unit, axis=(-2, -1))
    return np.linalg.norm(W - along[..., None, None] * unit, axis=(-2, -1))


def toward(W: ArrayLike, target: ArrayLike, other: ArrayLike) -> float:
    """Where ``W`` points between two directions, in [-1, 1]: +1 along ``target``, -1 along ``other``.

    ``(d_other - d_target) / (d_other + d_target)``, ``d`` the distance between unit directions
    (``||W/||W|| - target/||target||||``, ``sqrt(2 (1 - corr))``): +1 exactly when ``W`` points
    along ``target``, -1 exactly along ``other``, 0 at directions as near one as the other, and
    its sign that of ``corr(W, target) - corr(W, other)``. GD heading for the NTP-SVM ``W^mm``
    rather than another separating direction ``W^d`` of Proposition 1 makes it tend to +1; a
    limit along ``W^d`` would make it tend to -1.

    Raises
    ------
    InvalidDataError
        If the two directions are parallel (no side to take), a matrix is zero, or the matrices
        are not finite and of one shape.
    """
    W, target, other = (
        as_float_array(x, name, 2) for x, name in ((W, "W"), (target, "target"), (other, "other"))
    )
    if not W.shape == target.shape == other.shape:
        raise InvalidDataError(
            f"W, target and other must share a shape, got {W.shape}, {target.shape}, {other.shape}"
        )
    apart = 1.0 - correlation(target, other)
    if not apart > settings.PARALLEL_TOL:
        raise InvalidDataError(f"target and other are parallel (1 - corr = {apart:.1e}): no side to take")
    norms = [float(np.linalg.norm(x)) for x in (W, target, other)]
    if min(norms) == 0:
        raise InvalidDataError("W, target and other must be non-zero: a zero matrix has no direction")
    unit, to_target, to_other = (x / norm for x, norm in zip((W, target, other), norms, strict=True))
    near, far = np.linalg.norm(unit - to_target), np.linalg.norm(unit - to_other)
    return float((far - near) / (far + near))


def own_stream(seed: int, stream: int, *replicate: int) -> np.random.Generator:
    """A generator of its own for ``stream`` (and ``replicate``), spawned from ``seed``.

    Never the data's stream: drawn with ``seed`` itself, an initialization would repeat the
    stream that drew the data (on the synthetic instance, LeCun's matrix would *equal* rows of
    the embeddings). ``own_stream(seed, s, r)`` for ``r = 1, 2, ...`` are further independent
    replicates of stream ``s``.
    """
    return np.random.default_rng(np.random.SeedSequence([seed, stream, *replicate]))


def lecun_decoder(data: NTPData, rng: np.random.Generator) -> np.ndarray:
    """A LeCun initialization ``N(0, 1/d)`` of the decoder ``(V, d)`` of ``data``."""
    require_data(data)
    return optim.lecun_init((data.V, data.d), fan_in=data.d, seed=as_generator(rng, "rng"))


def gd_loss_curve(data: NTPData, n_steps: int, record_at: ArrayLike, lr: float = 1.0) -> np.ndarray:
    """``CE(W_k)`` of plain gradient descent from ``W = 0`` at the steps ``record_at``.

    The steps are :func:`ntpnb.linear._descent.run_decoder`'s (the same floats on every CPU).

    Raises
    ------
    InvalidDataError
        Unless ``record_at`` holds strictly increasing steps in ``[1, n_steps]``.
    """
    require_data(data)
    n_steps = as_count(n_steps, "n_steps")
    steps = np.asarray(record_at)
    if steps.ndim != 1 or steps.size == 0 or steps.min() < 1:
        raise InvalidDataError("record_at must be a non-empty 1-D array of steps from 1 on")
    trace = run_decoder(
        data,
        optim.gd(lr),
        n_steps,
        np.zeros((data.V, data.d)),
        record=lambda W: {"ce": ce_loss(data, W)},
        record_at=steps,
    )
    return np.asarray(trace.ce)
