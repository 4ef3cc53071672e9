"""The update rules of :mod:`ntpnb._optim`, compiled: the one step both papers' compiled loops take.

Each rule's arithmetic is :mod:`ntpnb._optim`'s own functions (:func:`ntpnb._optim.gd_entry` and the
others), compiled here under the contract of :mod:`ntpnb._compiled` and applied entry by entry: the
floats the numpy reference computes from the same gradient, except normalized GD's norm (its squares
added in order here, pairwise by numpy: equal to rounding). :func:`step` is the step of one trial
or of a trial per column, normalized GD's factor from the gradient's norm (:func:`normalization`,
:func:`column_normalization`). Both papers' loops take the rule as the tuple
:attr:`ntpnb._optim.Optimizer.compiled_rule` (``code`` of :data:`ntpnb._optim.RULES`, ``lr``, the
betas, ``eps``) and the state (Adam's moments, scratch, and ``powers = [b1^k, b2^k]`` after ``k``
steps). An iterate is 2-D: one trial's ``(V, d)`` in the linear decoder's loops, ``(d * d, B)`` (a
column per trial) in the attention model's.
"""

from __future__ import annotations

import math

import numpy as np

from . import _optim as optim
from ._compiled import jit

GD, NGD, ADAM = optim.GD, optim.NGD, optim.ADAM
OK, ZERO_GRADIENT, NONFINITE_GRADIENT = optim.OK, optim.ZERO_GRADIENT, optim.NONFINITE_GRADIENT

#: Normalized GD takes its norm from a sum of squares only inside [SQ_MIN, SQ_MAX]; outside
#: (near underflow or overflow of the squares, or not finite) it recomputes the norm from the
#: gradient scaled by its largest entry, as :func:`ntpnb._optim.run` does.
SQ_MIN = 1e-280
SQ_MAX = 1e280

_gd_entry = jit(optim.gd_entry)
compiled_ngd_factor = jit(optim.ngd_factor)
_ngd_entry = jit(optim.ngd_entry)
_adam_moment = jit(optim.adam_moment)
_adam_scales = jit(optim.adam_scales)
_adam_denominator = jit(optim.adam_denominator)
_adam_entry = jit(optim.adam_entry)


@jit
def _column_max(g: np.ndarray, b: int) -> float:
    """The running maximum of ``|g[i, b]|`` down column ``b`` (a NaN entry replaces it: ``not a <= s``)."""
    s = 0.0
    for i in range(g.shape[0]):
        a = abs(g[i, b])
        if not a <= s:  # NaN too
            s = a
    return s


@jit
def _scaled_norm(g: np.ndarray, b: int, s: float) -> float:
    """``||g[:, b] / s||``, the squares added in order."""
    t = 0.0
    for i in range(g.shape[0]):
        a = g[i, b] / s
        t += a * a
    return math.sqrt(t)


@jit
def column_normalization(
    g: np.ndarray, lr: float, eps: float, scale: np.ndarray, factor: np.ndarray
) -> tuple[int, int]:
    """Normalized GD's step ``-(g / s) f`` on each column of ``g`` ``(n, B)`` (a trial): status, column.

    ``factor[b] = lr / (||g_b / s_b|| + eps / s_b)`` (:func:`ntpnb._optim.ngd_factor`) and
    ``scale[b] = s_b``: 1 where the column's sum of squares (added in order) is safely inside
    float64's range, else its largest entry. An exactly zero column is a zero step with ``eps > 0``;
    :data:`ZERO_GRADIENT` with ``eps = 0``, :data:`NONFINITE_GRADIENT` on a non-finite entry, each with
    the first column it names (a non-finite one first, as :func:`ntpnb._optim.run` checks).
    """
    n, B = g.shape
    sq = factor  # the sums of squares, then the factors
    for b in range(B):
        sq[b] = g[0, b] * g[0, b]
    for i in range(1, n):
        for b in range(B):
            sq[b] += g[i, b] * g[i, b]
    zero = -1
    for b in range(B):
        scale[b] = 1.0
        if sq[b] >= SQ_MIN and sq[b] <= SQ_MAX:
            factor[b] = compiled_ngd_factor(lr, eps, math.sqrt(sq[b]), 1.0)
            continue
        s = _column_max(g, b)
        if not s < math.inf:
            return NONFINITE_GRADIENT, b
        if s == 0.0:
            if eps == 0.0 and zero < 0:
                zero = b
            factor[b] = 0.0
            continue
        scale[b] = s
        factor[b] = compiled_ngd_factor(lr, eps, _scaled_norm(g, b, s), s)
    return (OK, 0) if zero < 0 else (ZERO_GRADIENT, zero)


@jit
def normalization(g: np.ndarray, lr: float, eps: float) -> tuple[int, float, float]:
    """``(status, f, s)`` of :func:`column_normalization` of one trial's entries ``g`` (contiguous)."""
    scale, factor = np.empty(1), np.empty(1)
    status, _ = column_normalization(g.reshape(g.size, 1), lr, eps, scale, factor)
    return status, factor[0], scale[0]


@jit
def _normalized_scales(
    g: np.ndarray, lr: float, eps: float, scale: np.ndarray, factor: np.ndarray, per_column: bool
) -> tuple[int, int]:
    """Normalized GD's ``scale`` and ``factor`` per column: of each column, or of the whole trial.

    Returns ``(status, column)`` as :func:`column_normalization` (column 0 for a whole trial).
    """
    if per_column:
        return column_normalization(g, lr, eps, scale, factor)
    status, f, s = normalization(g, lr, eps)
    if status != OK:
        return status, 0
    scale[:] = s
    factor[:] = f
    return OK, 0


@jit
def _adam_rows(
    w: np.ndarray,
    g: np.ndarray,
    m: np.ndarray,
    q: np.ndarray,
    denominator: np.ndarray,
    powers: np.ndarray,
    rule: tuple,
) -> None:
    """Adam's step on ``w`` row by row, in place: moments ``m``, ``q``, then the entries.

    ``denominator`` is scratch of one row; ``powers = [b1^k, b2^k]``. Each loop writes one row.
    """
    _, lr, b1, b2, eps = rule
    rows, cols = w.shape
    s1, s2 = _adam_scales(lr, powers[0], powers[1])
    for r in range(rows):
        gr, mr, qr, wr = g[r], m[r], q[r], w[r]
        for c in range(cols):
            mr[c] = _adam_moment(mr[c], gr[c], b1)
        for c in range(cols):
            qr[c] = _adam_moment(qr[c], gr[c] * gr[c], b2)
        for c in range(cols):
            denominator[c] = _adam_denominator(qr[c], s2, eps)
        for c in range(cols):
            wr[c] = _adam_entry(wr[c], mr[c], s1, denominator[c])


@jit
def step(w: np.ndarray, g: np.ndarray, state: tuple, rule: tuple, per_column: bool) -> tuple[int, int]:
    """One step of ``rule = (code, lr, b1, b2, eps)`` on ``w`` ``(rows, cols)`` (contiguous), in place.

    ``g`` the gradient at ``w``; ``state = (m, q, work, powers)``: Adam's moments (as ``w``),
    updated in place, scratch ``(2, cols)``, and ``[b1^k, b2^k]`` at this step ``k``. ``w`` is one
    trial, or a trial per column (``per_column``): normalized GD steps column ``c`` by ``-(g /
    scale[c]) factor[c]``, from :func:`column_normalization` per column or :func:`normalization` of
    the whole trial (into ``work``). The inner loops run along a row, each writing one row (so that
    they are vectorized). Returns ``(status, column)``: a refused step (not :data:`OK`) moves nothing.
    """
    code, lr, _, _, eps = rule
    m, q, work, powers = state
    rows, cols = w.shape
    scale, factor = work[0], work[1]
    plain = False  # normalized GD at s = 1: GD at rate f (g / 1 = g, f g = g f)
    if code == NGD:
        status, column = _normalized_scales(g, lr, eps, scale, factor, per_column)
        if status != OK:
            return status, column
        plain = True
        for c in range(cols):
            plain = plain and scale[c] == 1.0
    if code == GD:
        for r in range(rows):
            for c in range(cols):
                w[r, c] = _gd_entry(w[r, c], g[r, c], lr)
    elif plain:
        for r in range(rows):
            for c in range(cols):
                w[r, c] = _gd_entry(w[r, c], g[r, c], factor[c])
    elif code == NGD:
        for r in range(rows):
            for c in range(cols):
                w[r, c] = _ngd_entry(w[r, c], g[r, c], scale[c], factor[c])
    else:
        _adam_rows(w, g, m, q, work[0], powers, rule)
    return OK, 0
