"""Compiled loops of linear-decoder training: many steps per call, the same floats on every CPU.

:func:`ntpnb._optim.run` pays a fixed cost per step and per BLAS-free product (about 60 us a
step at the papers' sizes); these kernels run a chunk of steps in one compiled call, under the
contract of :mod:`ntpnb._compiled`: IEEE-754 additions, multiplications, divisions and square
roots in a fixed order (independent iterations may be vectorized, which changes no result).

Layout: one trial's logits are stored transposed, ``LT`` of shape ``(V, m)`` (token ``v``, context
``j``): ``LT = W H^T`` transposed, so that every long loop runs over a contiguous row. Batches of
trials are a leading axis. Two representations of full-batch GD and normalized GD:

* *weight form*: the state is ``W`` (``V x d``); a step computes ``LT = W H^T`` and the
  gradient ``G = E H`` with ``E = pi * (softmax(LT) - P^T)`` (``V x m``): ``2 V m d`` products.
* *logit form*: the state is ``LT``; GD only moves ``W`` along the rows of ``H``, so
  ``LT_{k+1} = LT_k - f_k E_k K`` with ``K = H H^T`` (``m x m``) and ``f_k`` the step factor
  (``lr`` for GD, ``lr / (||G_k|| + eps)`` for normalized GD, ``||G_k||^2 = sum(E_k * E_k K)``):
  ``V m^2`` products. ``W_k = W_0 - S_k H`` with ``S_k = sum_i f_i E_i`` is formed only where it
  is recorded.

Adam is elementwise on ``G`` and runs in the weight form. Stochastic gradients take the sampled
contexts and tokens as arrays drawn beforehand (so the random stream is numpy's).

The update itself is :func:`ntpnb._optim_loops.step`, the rule of the optimizer (its ``rule`` tuple,
:meth:`ntpnb._optim.Optimizer.compiled_rule`). Every kernel returns a status (:data:`ntpnb._optim.OK`, or
the refusal of a step, with the step and trial) for the caller to raise the errors of
:func:`ntpnb._optim.run`.
"""

from __future__ import annotations

import math

import numpy as np

from .._compiled import jit
from .._optim_loops import NGD, OK, SQ_MAX, SQ_MIN, compiled_ngd_factor, normalization
from .._optim_loops import step as rule_step

# exp(x) = 2^q 2^(j/32) exp(r), x = (32 q + j) ln2/32 + r, |r| <= ln2/64 (+ rounding): ln2/32 in
# two parts (the first to 23 bits, so that its product with the integer, below 2^16, is
# exact), 2^(j/32) from a table, exp(r) - 1 from Taylor's series to degree 6 (remainder below
# 4e-18), 2^q as (y 2^(q + 54)) 2^-54: exact where the result is normal, rounded once where it
# is subnormal. Within 1 ulp of the correctly rounded value (tested against numpy's exp).
_SHIFT = 6755399441055744.0  # 1.5 * 2^52: (t + _SHIFT) - _SHIFT rounds t to an integer
_EXP_N = 32
_INV_LN2_N = 46.16624130844683  # 32 / ln 2
_LN2_N_HI = 0.02166084572672844  # ln2 / 32 to 23 bits
_LN2_N_LO = 3.6657698515882337e-09  # ln2 / 32 - _LN2_N_HI
#: 2^(j/32), j = 0..31, each correctly rounded (computed to 50 digits).
# fmt: off
_EXP_TABLE = np.array([
    1.0, 1.0218971486541166, 1.0442737824274138, 1.0671404006768237,
    1.0905077326652577, 1.1143867425958924, 1.1387886347566916, 1.1637248587775775,
    1.189207115002721, 1.215247359980469, 1.241857812073484, 1.2690509571917332,
    1.2968395546510096, 1.3252366431597413, 1.3542555469368927, 1.383909881963832,
    1.4142135623730951, 1.4451808069770467, 1.4768261459394993, 1.5091644275934228,
    1.5422108254079407, 1.5759808451078865, 1.6104903319492543, 1.645755478153965,
    1.681792830507429, 1.718619298122478, 1.7562521603732995, 1.7947090750031072,
    1.8340080864093424, 1.8741676341103, 1.9152065613971474, 1.9571441241754002,
])
# fmt: on
#: exp's argument is clipped below here, where exp is 0 in float64 (exp(-745.2) < 2^-1075).
_EXP_FLOOR = -746.0
#: 2^i for i in [-1100, 54].
_POW2_MIN = -1100
_POW2 = np.ldexp(1.0, np.arange(_POW2_MIN, 55))
_TWO_M54 = 2.0**-54
_C2, _C3, _C4, _C5, _C6 = 1 / 2, 1 / 6, 1 / 24, 1 / 120, 1 / 720


@jit
def exp_nonpositive(x: float) -> float:
    """``exp(x)`` for ``x <= 0`` (and ``-inf``), within about 1 ulp, with IEEE operations only.

    For the softmax: the same float on every CPU (a library ``exp`` may dispatch by CPU). A NaN
    gives 0 (the caller checks its iterates); ``x > 0`` is outside the contract.
    """
    if not x >= _EXP_FLOOR:
        x = _EXP_FLOOR
    k = (x * _INV_LN2_N + _SHIFT) - _SHIFT
    r = (x - k * _LN2_N_HI) - k * _LN2_N_LO
    p = _C6
    p = p * r + _C5
    p = p * r + _C4
    p = p * r + _C3
    p = p * r + _C2
    p = (p * r) * r + r  # exp(r) - 1
    n = int(k)
    j = n & (_EXP_N - 1)
    t = _EXP_TABLE[j]
    return ((t + t * p) * _POW2[(n - j) // _EXP_N + 54 - _POW2_MIN]) * _TWO_M54


@jit
def _pair_into(A: np.ndarray, B: np.ndarray, out: np.ndarray, v: int, w: int) -> None:
    """Rows ``v`` and ``w`` of ``out = A @ B``, each entry summed over ``k`` in order.

    ``w = v`` computes one row: both accumulators then hold the same floats.
    """
    k, n = B.shape
    o0, o1 = out[v], out[w]
    for i in range(n):
        o0[i] = 0.0
        o1[i] = 0.0
    c = 0
    while c + 3 < k:
        p0, p1, p2, p3 = A[v, c], A[v, c + 1], A[v, c + 2], A[v, c + 3]
        q0, q1, q2, q3 = A[w, c], A[w, c + 1], A[w, c + 2], A[w, c + 3]
        b0, b1, b2, b3 = B[c], B[c + 1], B[c + 2], B[c + 3]
        for i in range(n):
            x = o0[i]
            y = o1[i]
            x += p0 * b0[i]
            y += q0 * b0[i]
            x += p1 * b1[i]
            y += q1 * b1[i]
            x += p2 * b2[i]
            y += q2 * b2[i]
            x += p3 * b3[i]
            y += q3 * b3[i]
            o0[i] = x
            o1[i] = y
        c += 4
    while c < k:
        p0, q0, b0 = A[v, c], A[w, c], B[c]
        for i in range(n):
            x = o0[i] + p0 * b0[i]
            o1[i] += q0 * b0[i]
            o0[i] = x
        c += 1


@jit
def matmul_into(A: np.ndarray, B: np.ndarray, out: np.ndarray) -> None:
    """``out = A @ B`` for ``(r, k)`` and ``(k, n)``, each entry summed over ``k`` in order.

    Two rows of ``out`` and four rows of ``B`` at a time, the terms added one after another
    (``((o + a_0 b_0) + a_1 b_1) + ...``); the inner loop runs over contiguous rows.
    """
    r = A.shape[0]
    for v in range(0, r - 1, 2):
        _pair_into(A, B, out, v, v + 1)
    if r % 2:
        _pair_into(A, B, out, r - 1, r - 1)


@jit
def softmax_residual(
    LT: np.ndarray, PT: np.ndarray, pi: np.ndarray, ET: np.ndarray, work: np.ndarray
) -> None:
    """``ET = pi * (softmax(LT) - PT)``: the softmax over tokens (axis 0) of logits ``(V, n)``.

    ``work`` is scratch of shape ``(2, n)``. The columns of ``ET`` are the per-context residuals
    whose products with ``H`` make the gradient: ``grad CE = ET H``.
    """
    V, n = LT.shape
    top, total = work[0], work[1]
    for i in range(n):
        top[i] = LT[0, i]
        total[i] = 0.0
    for v in range(1, V):
        for i in range(n):
            if LT[v, i] > top[i]:
                top[i] = LT[v, i]
    for v in range(V):
        for i in range(n):
            e = exp_nonpositive(LT[v, i] - top[i])
            ET[v, i] = e
            total[i] += e
    for i in range(n):
        total[i] = 1.0 / total[i]
    for v in range(V):
        for i in range(n):
            ET[v, i] = pi[i] * (ET[v, i] * total[i] - PT[v, i])


@jit
def _logit_factor(
    ET: np.ndarray, OT: np.ndarray, H: np.ndarray, G: np.ndarray, lr: float, eps: float
) -> tuple[int, float, float]:
    """Normalized GD's ``(status, f, s)`` in the logit form, ``OT = ET K``.

    ``||G||^2 = sum(ET * OT)``, added in order, where it is safely inside float64's range (then
    ``s = 1``); else the norm of ``G = ET H`` (formed in ``G``) by :func:`normalization`, scaled.
    """
    V, m = ET.shape
    sq = 0.0  # sum(ET * OT), in order
    for v in range(V):
        for i in range(m):
            sq += ET[v, i] * OT[v, i]
    if sq >= SQ_MIN and sq <= SQ_MAX:
        return OK, compiled_ngd_factor(lr, eps, math.sqrt(sq), 1.0), 1.0
    matmul_into(ET, H, G)  # the norm from the gradient itself, scaled
    return normalization(G, lr, eps)


@jit
def _logit_update(L: np.ndarray, St: np.ndarray, ET: np.ndarray, OT: np.ndarray, f: float, s: float) -> None:
    """One trial's step in the logit form, in place: ``L -= (OT / s) f`` and ``St += (ET / s) f``."""
    V, m = L.shape
    for v in range(V):  # x / s = x exactly for s = 1
        for i in range(m):
            L[v, i] -= (OT[v, i] / s) * f
            St[v, i] += (ET[v, i] / s) * f


@jit
def logit_steps(
    LT: np.ndarray,
    S: np.ndarray,
    K: np.ndarray,
    H: np.ndarray,
    PT: np.ndarray,
    pi: np.ndarray,
    rule: tuple,
    n_steps: int,
) -> tuple[int, int, int]:
    """``n_steps`` of full-batch GD or normalized GD (``rule``) in the logit form, on a batch of trials.

    ``LT`` ``(b, V, m)`` the logits and ``S`` ``(b, V, m)`` the summed scaled residuals
    (``W_k = W_0 - S_k H``), both updated in place; ``K = H H^T``. Returns
    ``(status, step, trial)``: the first step (counted from 0 in this call) and trial where
    normalized GD failed, or ``(OK, n_steps, 0)``.
    """
    code, lr, _, _, eps = rule
    nb, V, m = LT.shape
    ET = np.empty((V, m))
    OT = np.empty((V, m))
    G = np.empty((V, H.shape[1]))
    work = np.empty((2, m))
    for step in range(n_steps):
        for t in range(nb):
            softmax_residual(LT[t], PT, pi, ET, work)
            matmul_into(ET, K, OT)
            f, s = lr, 1.0
            if code == NGD:
                status, f, s = _logit_factor(ET, OT, H, G, lr, eps)
                if status != OK:
                    return status, step, t
            _logit_update(LT[t], S[t], ET, OT, f, s)
    return OK, n_steps, 0


@jit
def _sample_rows(
    H: np.ndarray,
    P: np.ndarray,
    contexts: np.ndarray,
    tokens: np.ndarray,
    Hs: np.ndarray,
    HsT: np.ndarray,
    TT: np.ndarray,
) -> None:
    """The sampled contexts' embeddings (``Hs`` and ``HsT``) and targets ``TT`` (a column each).

    A sample's target is the token ``tokens[s]`` one-hot, or ``P[contexts[s]]`` where it is negative.
    """
    B, d = Hs.shape
    V = TT.shape[0]
    for s in range(B):
        j, z = contexts[s], tokens[s]
        for c in range(d):
            Hs[s, c] = H[j, c]
            HsT[c, s] = H[j, c]
        for v in range(V):
            TT[v, s] = P[j, v] if z < 0 else (1.0 if v == z else 0.0)


@jit
def _divide(G: np.ndarray, B: int) -> None:
    """``G /= B`` entry by entry, in place (the mean over a batch of ``B`` samples)."""
    V, d = G.shape
    for v in range(V):
        for c in range(d):
            G[v, c] /= B


@jit
def _trial_gradient(
    Wt: np.ndarray,
    LTt: np.ndarray,
    H: np.ndarray,
    PT: np.ndarray,
    pi: np.ndarray,
    P: np.ndarray,
    contexts: np.ndarray,
    tokens: np.ndarray,
    scratch: tuple,
    samples: tuple,
) -> None:
    """One trial's gradient into ``scratch[1]``: full-batch (no ``contexts``) or the samples' mean.

    Full batch: ``G = ET H`` from the logits ``LTt``. Sampled: the ``B`` contexts' rows and targets
    (:func:`_sample_rows`), their logits from ``Wt``, and ``G = (1/B) ET H_s``. ``scratch`` is
    ``(ET, G, work)``; ``samples`` is ``(Hs, HsT, TT, LTs, ones)``.
    """
    ET, G, work = scratch
    B = contexts.shape[0]
    if B == 0:
        softmax_residual(LTt, PT, pi, ET, work)
        matmul_into(ET, H, G)
        return
    Hs, HsT, TT, LTs, ones = samples
    _sample_rows(H, P, contexts, tokens, Hs, HsT, TT)
    matmul_into(Wt, HsT, LTs)
    softmax_residual(LTs, TT, ones, ET, work)
    matmul_into(ET, Hs, G)
    _divide(G, B)


@jit
def weight_steps(
    W: np.ndarray,
    M: np.ndarray,
    Q: np.ndarray,
    LT: np.ndarray,
    H: np.ndarray,
    HT: np.ndarray,
    PT: np.ndarray,
    pi: np.ndarray,
    P: np.ndarray,
    contexts: np.ndarray,
    tokens: np.ndarray,
    rule: tuple,
    powers: np.ndarray,
) -> tuple[int, int, int]:
    """Steps of ``rule`` (:mod:`ntpnb._optim_loops`) in the weight form on a batch of trials.

    ``W``, ``M``, ``Q`` ``(b, V, d)``: the iterates and Adam's moments; ``powers = [b1^k, b2^k]``
    after ``k`` steps (Adam). ``contexts`` ``(n_steps, b, B)``: the sampled contexts of each step
    (a row) and trial, ``tokens`` of the same shape the sampled next tokens (the per-sample loss over
    sequences), or all ``-1`` for the whole next-token distributions ``P[j]`` (sampling distinct
    contexts); the gradient is ``(1/B) sum_s (softmax(W h_js) - target_s) h_js^T``. With ``B = 0``
    the steps are full-batch: ``LT`` ``(b, V, m)`` must hold ``W H^T`` transposed on entry and holds
    it on return. All updated in place. Returns ``(status, step, trial)`` as :func:`logit_steps`.
    """
    _, _, b1, b2, _ = rule
    nb, V, d = W.shape
    n_steps, B = contexts.shape[0], contexts.shape[2]
    n = B if B else H.shape[0]  # the residual's columns: the samples, or every context
    # the residual, gradient and scratch; the samples' embeddings (both layouts), targets and
    # logits (columns), and their weights
    scratch = (np.empty((V, n)), np.empty((V, d)), np.empty((2, max(n, d))))
    samples = (np.empty((B, d)), np.empty((d, B)), np.empty((V, B)), np.empty((V, B)), np.ones(B))
    G = scratch[1]
    rule_work = np.empty((2, d))
    for step in range(n_steps):
        powers[0] *= b1
        powers[1] *= b2
        for t in range(nb):
            _trial_gradient(W[t], LT[t], H, PT, pi, P, contexts[step, t], tokens[step, t], scratch, samples)
            status, _ = rule_step(W[t], G, (M[t], Q[t], rule_work, powers), rule, False)
            if status != OK:
                return status, step, t
            if B == 0:
                matmul_into(W[t], HT, LT[t])
    return OK, n_steps, 0
