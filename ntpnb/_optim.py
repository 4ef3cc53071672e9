"""First-order methods shared by both papers' models: GD, normalized GD, Adam (and SGD).

One loop, :func:`run`, drives any method over a gradient callable and records tracked
quantities on a log-spaced grid of iterations (:func:`log_grid`): the papers' quantities move on
a logarithmic time scale. With ``batch_ndim = b`` the first ``b`` axes of ``W`` index independent
trials (normalized GD normalizes each by its own Frobenius norm); the vectorized run equals
running them one by one (tested).

The update rules (``g_k`` the gradient at ``W_k``, ``eta`` the learning rate):

* GD (and SGD, where the callable returns a stochastic gradient): ``W_{k+1} = W_k - eta g_k``.
* Normalized GD: ``W_{k+1} = W_k - eta g_k / (||g_k||_F + eps)``, default ``eps = 0`` (every
  step has length ``eta``; a zero gradient raises :class:`ntpnb.errors.SolverError`: the papers'
  losses have no stationary point at finite ``W`` on their data). With ``eps > 0`` (Paper B's
  code: :data:`AUTHORS_NGD_EPS`) the step shrinks like ``eta ||g_k|| / eps`` once ``||g_k|| < eps``,
  so the run stalls there.
* Adam (Kingma and Ba, 2015, with bias correction): ``m_k = b1 m_{k-1} + (1 - b1) g_k``,
  ``v_k = b2 v_{k-1} + (1 - b2) g_k^2``, ``W_{k+1} = W_k - eta mhat_k / (sqrt(vhat_k) + eps)``
  with ``mhat_k = m_k / (1 - b1^k)``, ``vhat_k = v_k / (1 - b2^k)``, counting steps from
  ``k = 1``; ``m_0 = v_0 = 0``.

Each rule is defined here once: its settings, checks and label (:class:`Rule`, :data:`RULES`)
and its arithmetic (:func:`gd_entry`, :func:`ngd_factor` and :func:`ngd_entry`, :func:`adam_moment`,
:func:`adam_scales`, :func:`adam_denominator` and :func:`adam_entry`), which the numpy reference below
applies to arrays and ``ntpnb._optim_loops`` compiles for both papers' loops (the same floats,
except normalized GD's norm, whose squares the compiled loops add in their own order). Adding a
rule: an entry of :data:`RULES` and its arithmetic here, and its branch in the
reference's step (``_Stepper.step``) and in the compiled one (``ntpnb._optim_loops.step``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
from numpy.typing import ArrayLike

from . import settings
from ._reproducible_products import einsum
from ._throttle import Throttle
from ._validation import (
    as_count,
    as_float,
    as_generator,
    as_ordered,
    check_dense_size,
    frozen,
    is_real,
    read_only_view,
)
from .errors import InvalidDataError, SolverError

Array = np.ndarray
#: What an update rule's arithmetic takes and returns: a float (compiled loops) or an array (numpy).
Value = float | np.ndarray

#: Below this plain norm the squares of a gradient's entries leave float64's normal range:
#: normalized GD then computes the norm after dividing by the largest entry.
SAFE_NORM: float = math.sqrt(float(np.finfo(np.float64).tiny))

#: The offset of normalized GD in Paper B's public code, float64's machine epsilon
#: (``normalize_grad`` in ``train_utils.py`` of github.com/yixiao-huang/next-token-prediction):
#: a fact about that code, not a tolerance, so not in :mod:`ntpnb.settings`.
AUTHORS_NGD_EPS: float = settings.FLOAT64_EPS

#: The compiled loops' numbers of the update rules (``ntpnb._optim_loops``).
GD, NGD, ADAM = 0, 1, 2
#: Statuses of a compiled step: done, or refused where the reference raises (nothing moved).
OK, ZERO_GRADIENT, NONFINITE_GRADIENT = 0, 1, 2


@dataclass(frozen=True)
class Rule:
    """An update rule as everything that runs it reads it: the numpy reference and the compiled loops.

    ``code`` is the rule's number in the compiled loops (``ntpnb._optim_loops``), ``label`` its
    name in a label; ``normalized`` whether a step divides by the gradient's norm (per batch
    element), ``moments`` whether it keeps Adam's moments (and reads ``betas``); ``offset`` the
    default ``eps`` (None: the rule has none), ``offset_positive`` whether ``eps`` must be positive
    (else non-negative).
    """

    code: int
    label: str
    normalized: bool = False
    moments: bool = False
    offset: float | None = None
    offset_positive: bool = False


#: The update rules, by optimizer name (``"sgd"`` is GD's rule on a stochastic gradient). The default
#: ``eps`` is part of a rule, not a tolerance of the package: Adam's is Kingma and Ba's 1e-8.
RULES: Mapping[str, Rule] = MappingProxyType(
    {
        "gd": Rule(GD, "GD"),
        "sgd": Rule(GD, "SGD"),
        "ngd": Rule(NGD, "NGD", normalized=True, offset=0.0),
        "adam": Rule(ADAM, "Adam", moments=True, offset=1e-8, offset_positive=True),
    }
)


# The arithmetic of each rule, written once: on numpy arrays (the reference, :class:`_Stepper`) and,
# compiled by :mod:`ntpnb._optim_loops`, on floats (both papers' loops). Each is a sequence of IEEE
# operations, so both give the same floats.


def gd_entry(w: Value, g: Value, lr: Value) -> Value:
    """GD (and SGD): ``w - lr g``."""
    return w - lr * g


def ngd_factor(lr: Value, eps: Value, norm: Value, scale: Value) -> Value:
    """Normalized GD's step factor ``lr / (||g / s|| + eps / s)`` from ``norm = ||g / s||`` and ``s``."""
    return lr / (norm + eps / scale)


def ngd_entry(w: Value, g: Value, scale: Value, factor: Value) -> Value:
    """Normalized GD: ``w - (g / s) f`` with ``f`` of :func:`ngd_factor` (``s = 1`` unless rescaled)."""
    return w - (g / scale) * factor


def adam_scales(lr: float, b1_pow: float, b2_pow: float) -> tuple[float, float]:
    """Adam's bias corrections at step ``k`` (``b1_pow = b1^k``): ``lr / (1 - b1^k)``, ``1 / (1 - b2^k)``."""
    return lr / (1.0 - b1_pow), 1.0 / (1.0 - b2_pow)


def adam_moment(m: Value, g: Value, b: float) -> Value:
    """An Adam moment after gradient ``g`` (decay ``b``): ``b m + (1 - b) g``; ``g^2`` for the second."""
    return m * b + (1.0 - b) * g


def adam_denominator(q: Value, s2: float, eps: float) -> Value:
    """Adam's ``sqrt(vhat) + eps``, as ``sqrt(q s2) + eps`` (``s2`` of :func:`adam_scales`)."""
    return np.sqrt(q * s2) + eps


def adam_entry(w: Value, m: Value, s1: float, denominator: Value) -> Value:
    """Adam: ``w - lr mhat / (sqrt(vhat) + eps)``, as ``w - m s1 / denominator`` (:func:`adam_scales`)."""
    return w - (m * s1) / denominator


#: Default number of points of the recording grid.
DEFAULT_RECORD_POINTS: int = 60


def log_grid(n_iter: int, n_points: int) -> Array:
    """Sorted unique integer iterations in ``[0, n_iter]``, log-spaced, with 0 and ``n_iter``.

    ``round(logspace(0, log10(n_iter), n_points - 1))`` plus 0, deduplicated: at most ``n_points``.

    Raises
    ------
    InvalidDataError
        If ``n_iter < 0``, ``n_points < 2``, or ``n_points`` exceeds
        :data:`ntpnb.settings.MAX_RECORD_POINTS` (checked before allocating).
    """
    n_iter = as_count(n_iter, "n_iter", minimum=0)
    n_points = as_count(n_points, "n_points", minimum=2)
    if n_points > settings.MAX_RECORD_POINTS:
        raise InvalidDataError(
            f"n_points = {n_points} recording points exceed "
            f"ntpnb.settings.MAX_RECORD_POINTS = {settings.MAX_RECORD_POINTS}"
        )
    if n_iter == 0:
        return np.zeros(1, dtype=np.int64)
    inner = np.rint(np.logspace(0.0, math.log10(n_iter), n_points - 1)).astype(np.int64)
    return np.unique(np.concatenate([[0], inner, [n_iter]]))


@dataclass(frozen=True)
class Optimizer:
    """Immutable settings of a first-order method.

    Parameters
    ----------
    name
        One of :data:`RULES` (``"sgd"`` is the GD update on a stochastic gradient).
    lr
        Learning rate, positive and finite.
    betas
        Adam's decay rates ``(b1, b2)``, each in ``[0, 1)`` (ignored by the other methods).
    eps
        Denominator offset of Adam (positive; default ``1e-8``) and of normalized GD
        (``>= 0``; default 0, exact normalization); ignored by GD and SGD.

    Raises
    ------
    InvalidDataError
        If a setting is outside its range.
    """

    name: str
    lr: float
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or self.name not in RULES:
            raise InvalidDataError(f"unknown optimizer {self.name!r}; expected one of {tuple(RULES)}")
        if not (is_real(self.lr) and math.isfinite(self.lr) and self.lr > 0):
            raise InvalidDataError(f"the learning rate must be positive and finite, got {self.lr!r}")
        if (
            not isinstance(self.betas, (tuple, list))
            or len(self.betas) != 2
            or not all(is_real(b) and 0.0 <= b < 1.0 for b in self.betas)
        ):
            raise InvalidDataError(f"betas must be two numbers in [0, 1), got {self.betas!r}")
        rule = self.rule
        eps = (rule.offset or 0.0) if self.eps is None else self.eps
        smallest = "positive" if rule.offset_positive else "non-negative"
        if not (is_real(eps) and math.isfinite(eps) and (eps > 0 if rule.offset_positive else eps >= 0)):
            raise InvalidDataError(f"eps of {self.name} must be {smallest} and finite, got {eps!r}")
        object.__setattr__(self, "eps", float(eps))
        object.__setattr__(self, "lr", float(self.lr))
        object.__setattr__(self, "betas", (float(self.betas[0]), float(self.betas[1])))

    @property
    def rule(self) -> Rule:
        """The update rule of this optimizer (:data:`RULES`)."""
        return RULES[self.name]

    @property
    def compiled_rule(self) -> tuple[int, float, float, float, float]:
        """``(code, lr, b1, b2, eps)``: this optimizer as ``ntpnb._optim_loops`` takes it."""
        return self.rule.code, self.lr, self.betas[0], self.betas[1], self.eps

    def label(self) -> str:
        """A short human-readable description, e.g. ``"Adam (lr 0.01, betas 0.9, 0.99)"``."""
        rule = self.rule
        if rule.moments:
            return f"{rule.label} (lr {self.lr:g}, betas {self.betas[0]:g}, {self.betas[1]:g})"
        if rule.normalized and self.eps:
            return f"{rule.label} (lr {self.lr:g}, eps {self.eps:.3g})"
        return f"{rule.label} (lr {self.lr:g})"


def gd(lr: float) -> Optimizer:
    """Gradient descent with constant learning rate ``lr``."""
    return Optimizer("gd", lr)


def sgd(lr: float) -> Optimizer:
    """Stochastic gradient descent: the GD update applied to a stochastic gradient callable."""
    return Optimizer("sgd", lr)


def normalized_gd(lr: float, eps: float = 0.0) -> Optimizer:
    """Normalized GD: step ``-lr g / (||g||_F + eps)``, the norm taken per batch element.

    ``eps = 0`` normalizes exactly; Paper B's code uses :data:`AUTHORS_NGD_EPS` (see the module docstring).
    """
    return Optimizer("ngd", lr, eps=eps)


def adam(lr: float, betas: tuple[float, float] = (0.9, 0.99)) -> Optimizer:
    """Adam with bias correction (default betas those of Paper A, Fig. 5; eps that of :data:`RULES`)."""
    return Optimizer("adam", lr, tuple(as_ordered(betas, "betas")))


@dataclass(frozen=True, eq=False)
class Trace:
    """The record of a training run, of either paper, read by attribute (as scipy's ``OptimizeResult``).

    Every recorded quantity is an attribute: ``trace.ce``, ``trace.dist_F``, ``trace.iterates``
    (the iterates at the recorded iterations, where the run kept them). One name means one quantity
    in both papers: ``iterates``, ``ce``/``kl``/``loss``, ``norm``, ``corr``, ``dist_F``, ``dist_F0``,
    ``dist_cyc``, ``dist_cyc_paper``. A record of several seeds' runs (``seeds`` not empty) holds each
    seed's numbers in one row of every value; :meth:`at` is one seed's record.
    """

    #: ``(n_records,)`` the recorded iterations (0 the initialization, ``k`` the iterate after ``k`` steps).
    iterations: Array
    #: Name -> value: an array whose first axis indexes the records, then the batch axes, then the
    #: shape of the value; or a number or an array of a run's end (per trial, per seed).
    values: Mapping[str, Array | float] = field(default_factory=dict)
    #: The final iterate ``W_{n_iter}``.
    W: Array | None = None
    #: The seeds of the rows of every value, for a record of several seeds' runs (else empty).
    seeds: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        shadowed = sorted(set(self.values) & (_TRACE_FIELDS | set(dir(type(self)))))
        if shadowed:
            raise InvalidDataError(
                f"the recorded names {shadowed} are attributes of a Trace itself: record them under others"
            )

    def __getattr__(self, name: str) -> Array | float:
        """The recorded value ``name``."""
        values = self.__dict__.get("values", {})  # not through self: a copy being built has none yet
        if name in values:
            return values[name]
        raise AttributeError(f"the run recorded no {name!r}; it recorded {sorted(values)}")

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self.values))

    @property
    def names(self) -> tuple[str, ...]:
        """The names of the recorded values, in their order."""
        return tuple(self.values)

    def at(self, seed: int) -> Trace:
        """The record of ``seed``'s run alone: every value's row of ``seed``.

        Raises
        ------
        InvalidDataError
            If ``seed`` was not run.
        """
        if seed not in self.seeds:
            raise InvalidDataError(f"seed {seed!r} was not run; the seeds run: {list(self.seeds)}")
        row = self.seeds.index(seed)
        W = None if self.W is None else self.W[row]
        return Trace(self.iterations, MappingProxyType({k: v[row] for k, v in self.values.items()}), W)


#: The fields of :class:`Trace`, which no recorded name may shadow.
_TRACE_FIELDS = frozenset({"iterations", "values", "W", "seeds"})


def lecun_init(shape: tuple[int, ...], fan_in: int, seed: int | np.random.Generator) -> Array:
    """LeCun normal initialization: i.i.d. ``N(0, 1 / fan_in)`` entries, seeded.

    Raises
    ------
    InvalidDataError
        If ``fan_in`` is not a positive integer.
    """
    fan_in = as_count(fan_in, "fan_in", minimum=1)
    shape = tuple(as_count(n, f"shape[{i}]", minimum=0) for i, n in enumerate(as_ordered(shape, "shape")))
    check_dense_size(shape, "the initial iterate")
    rng = as_generator(seed)
    return rng.standard_normal(shape) / math.sqrt(fan_in)


def gradient_error(status: int, k: int, row: int = 0, batch_shape: tuple[int, ...] = ()) -> SolverError:
    """Normalized GD refusing its step at iteration ``k``: a zero (``eps = 0``) or non-finite gradient.

    ``row`` is the flat index of the batch element in ``batch_shape`` (named where there is a batch).
    """
    where = ""
    if batch_shape:
        where = f" (batch element {tuple(int(i) for i in np.unravel_index(row, batch_shape))})"
    if status == ZERO_GRADIENT:
        return SolverError(
            f"normalized GD met a zero gradient{where} at iteration {k}: the normalized step is undefined "
            "at a stationary point"
        )
    return SolverError(f"normalized GD met a non-finite gradient entry{where} at iteration {k}")


ProgressHook = Callable[[int, int], object]


class Recorder:
    """The recording side of every training loop: the grid, the checks, the records and the progress.

    A loop hands :meth:`drive` its steps and its iterate, then asks :meth:`trace`. ``record``,
    ``record_at``, ``progress`` as in :func:`run`; ``label`` names the method in a divergence error.
    """

    def __init__(
        self,
        n_iter: int,
        record: Callable[[Array], Mapping[str, Array | float]] | None,
        record_at: ArrayLike | None,
        label: str,
        progress: ProgressHook | None = None,
    ) -> None:
        if progress is not None and not callable(progress):
            raise InvalidDataError(
                f"progress must be a callable (k, n_iter) or None, got {type(progress).__name__}"
            )
        if record_at is None:
            self.grid = log_grid(n_iter, DEFAULT_RECORD_POINTS)
        else:
            grid = np.asarray(record_at)
            if grid.ndim != 1 or grid.size == 0 or not np.issubdtype(grid.dtype, np.integer):
                raise InvalidDataError("record_at must be a non-empty 1-D array of integer iterations")
            if np.any(np.diff(grid) <= 0) or grid[0] < 0 or grid[-1] > n_iter:
                raise InvalidDataError(
                    f"record_at must be strictly increasing integers in [0, n_iter = {n_iter}]"
                )
            self.grid = grid.astype(np.int64)
        self.n_iter = n_iter
        self.record = record
        self.label = label
        self.progress = progress
        self._next = 0
        self._records: list[dict[str, Array]] = []
        self._throttle = Throttle(settings.PROGRESS_SECONDS, at_once=False)

    def drive(
        self, advance: Callable[[int, int], object], current: Callable[[], Array], chunk: int = 1
    ) -> None:
        """Take the ``n_iter`` steps: ``advance(k, n)`` moves from ``W_k`` by ``n`` steps.

        ``n`` is at most ``chunk`` and ends a chunk at each recorded iteration, where ``current()``
        (``W_k``, read-only) is checked and recorded; progress is reported in between.
        """
        k = 0
        while True:
            recorded = self._next < self.grid.size and self.grid[self._next] == k
            if recorded:  # check and record W_k
                W = current()
                self.check_finite(W, k)
                if self.record is not None:  # copied: a value may be a view of the iterate
                    self._records.append(
                        {name: np.array(v, dtype=float) for name, v in self.record(W).items()}
                    )
                self._next += 1
            if self.progress is not None and (recorded or self._throttle.due()):
                self.progress(k, self.n_iter)
                self._throttle.mark()
            if k == self.n_iter:
                return
            due = int(self.grid[self._next]) if self._next < self.grid.size else self.n_iter
            n = min(chunk, self.n_iter - k, max(1, due - k))
            advance(k, n)
            k += n

    def check_finite(self, W: Array, k: int) -> None:
        """Raise :class:`SolverError` if the iterate ``W_k`` has a non-finite entry."""
        if not np.all(np.isfinite(W)):
            raise SolverError(f"{self.label} diverged: the iterate is not finite at iteration {k}")

    def trace(self, W: Array) -> Trace:
        """The :class:`Trace` of the run with final iterate ``W`` (checked finite)."""
        self.check_finite(W, self.n_iter)
        names = list(self._records[0]) if self._records else []
        for rec in self._records[1:]:
            if list(rec) != names:
                raise InvalidDataError(
                    f"record returned different names at different iterations: {names}, {list(rec)}"
                )
        values = {name: frozen(np.stack([rec[name] for rec in self._records]), order="K") for name in names}
        return Trace(iterations=self.grid, values=MappingProxyType(values), W=frozen(W, order="K"))


class _Stepper:
    """The numpy reference of the rules of :data:`RULES`, with their state, over iterates of one shape."""

    def __init__(self, optimizer: Optimizer, shape: tuple[int, ...], batch_ndim: int) -> None:
        self.opt = optimizer
        self.batch_shape = shape[:batch_ndim]
        self.k = 0
        if optimizer.rule.moments:
            self.m = np.zeros(shape)
            self.v = np.zeros(shape)
        self.b1_pow = 1.0
        self.b2_pow = 1.0

    def _ngd_step(self, W: Array, g: Array) -> None:
        """``W -= lr g / (||g||_F + eps)`` per batch element; the norm of ``g / max |g|`` out of range."""
        rows = g.reshape(-1, g.size // max(1, math.prod(self.batch_shape)))
        norm = np.sqrt(einsum("ik,ik->i", rows, rows))  # no BLAS: the same bits on every CPU
        eps = self.opt.eps
        scale = np.ones(norm.shape)
        unsafe = ~((norm >= SAFE_NORM) & (norm < np.inf))  # NaN, inf, and 0 or tiny
        if unsafe.any():
            rescale = np.flatnonzero(unsafe)
            big = np.max(np.abs(rows[rescale]), axis=1)  # NaN if an entry is NaN
            if not np.all(np.isfinite(big)):
                row = int(rescale[np.flatnonzero(~np.isfinite(big))[0]])
                raise gradient_error(NONFINITE_GRADIENT, self.k - 1, row, self.batch_shape)
            if not eps and not big.all():  # an exactly zero gradient
                row = int(rescale[np.argmin(big)])
                raise gradient_error(ZERO_GRADIENT, self.k - 1, row, self.batch_shape)
            big[big == 0] = 1.0  # an exactly zero gradient (eps > 0): a zero step
            scale[rescale] = big
            scaled = rows[rescale] / big[:, None]
            norm[rescale] = np.sqrt(einsum("ik,ik->i", scaled, scaled))
        factor = ngd_factor(self.opt.lr, eps, norm, scale)
        W[...] = ngd_entry(W.reshape(rows.shape), rows, scale[:, None], factor[:, None]).reshape(W.shape)

    def step(self, W: Array, g: Array) -> None:
        """Update ``W`` in place from the gradient ``g`` at ``W``."""
        self.k += 1
        opt, rule = self.opt, self.opt.rule
        if rule.normalized:
            self._ngd_step(W, g)
        elif rule.moments:
            b1, b2 = opt.betas
            self.m = adam_moment(self.m, g, b1)
            self.v = adam_moment(self.v, g * g, b2)
            self.b1_pow *= b1
            self.b2_pow *= b2
            s1, s2 = adam_scales(opt.lr, self.b1_pow, self.b2_pow)
            W[...] = adam_entry(W, self.m, s1, adam_denominator(self.v, s2, opt.eps))
        else:
            W[...] = gd_entry(W, g, opt.lr)


def check_run(
    optimizer: Optimizer,
    W0: ArrayLike,
    n_iter: int,
    *,
    shape: tuple[int, ...] | None = None,
    batch_ndim: int | None = 0,
) -> tuple[Array, int]:
    """The door of every training run: an :class:`Optimizer`, a count ``n_iter``, a usable ``W0``.

    ``W0`` must be a non-empty, finite real array of ``batch_ndim`` leading (batch) axes (None:
    any number) followed by ``shape`` (None: at least one axis). Returns a writable float64 copy of
    ``W0`` and ``n_iter`` as an ``int``, which the loops of :func:`run`,
    :func:`ntpnb.linear._descent.run_decoder` and :func:`ntpnb.attention._batched_training.train` trust.
    """
    if not isinstance(optimizer, Optimizer):
        raise InvalidDataError(f"optimizer must be an ntpnb._optim.Optimizer, got {type(optimizer).__name__}")
    n_iter = as_count(n_iter, "n_iter", minimum=0)
    W = np.array(as_float(W0, "W0"), copy=True)
    if shape is not None:
        lead = W.ndim - len(shape)
        if lead < 0 or W.shape[lead:] != tuple(shape) or batch_ndim not in (None, lead):
            want = ", ".join(["..."] * (batch_ndim is None) + [str(n) for n in shape])
            raise InvalidDataError(f"W0 must have shape ({want}), got {W.shape}")
    elif W.ndim <= batch_ndim:
        raise InvalidDataError(f"W0 of shape {W.shape} has no parameter axes after {batch_ndim} batch axes")
    if W.size == 0:
        raise InvalidDataError(f"W0 of shape {W.shape} is empty")
    if not np.all(np.isfinite(W)):
        raise InvalidDataError("W0 has non-finite entries")
    return W, n_iter


def run(
    grad: Callable[[Array], Array],
    W0: ArrayLike,
    optimizer: Optimizer,
    n_iter: int,
    *,
    record: Callable[[Array], Mapping[str, Array | float]] | None = None,
    record_at: ArrayLike | None = None,
    batch_ndim: int = 0,
    progress: ProgressHook | None = None,
) -> Trace:
    """Run ``n_iter`` steps of ``optimizer`` from ``W0`` and record along the way.

    Parameters
    ----------
    grad
        The gradient at ``W`` (same shape, batched too), called exactly once per step, in order,
        at ``W_0, ..., W_{n-1}`` (so it may be stochastic). It must not keep its argument, which
        is updated in place.
    W0
        The initial iterate (not modified), shape ``batch_shape + param_shape``.
    record
        Called on a read-only view of ``W_k`` at each recorded ``k``; returns name -> value (a
        float, or an array with the batch axes leading). None records nothing.
    record_at
        Strictly increasing integer iterations in ``[0, n_iter]`` (default
        ``log_grid(n_iter, 60)``).
    batch_ndim
        How many leading axes of ``W0`` index independent problems.
    progress
        Called as ``progress(k, n_iter)`` after each recorded iteration and at least every
        :data:`ntpnb.settings.PROGRESS_SECONDS` in between; None for none.

    Raises
    ------
    InvalidDataError
        On bad settings, a gradient of the wrong shape, or a non-finite ``W0``.
    SolverError
        If normalized GD meets a zero gradient, or the iterate or gradient stops being finite
        (checked at every recorded iteration and at the end).
    """
    if not callable(grad):
        raise InvalidDataError(f"grad must be a callable (the gradient at W), got {type(grad).__name__}")
    batch_ndim = as_count(batch_ndim, "batch_ndim", minimum=0)
    W, n_iter = check_run(optimizer, W0, n_iter, batch_ndim=batch_ndim)
    recorder = Recorder(n_iter, record, record_at, optimizer.label(), progress)
    stepper = _Stepper(optimizer, W.shape, batch_ndim)
    view = read_only_view(W)

    def advance(k: int, _n: int) -> None:  # one step a call: drive's chunk is 1
        g = np.asarray(grad(view))
        if g.shape != W.shape:  # every step: a wrong shape would broadcast silently
            raise InvalidDataError(
                f"the gradient at iteration {k} has shape {g.shape}, the iterate {W.shape}"
            )
        stepper.step(W, g)

    recorder.drive(advance, lambda: view)
    return recorder.trace(W)
