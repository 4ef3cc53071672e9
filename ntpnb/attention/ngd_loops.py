"""Compiled pieces of a normalized-GD step on the attention model: numpy's arithmetic, in loops.

Each kernel computes what a line of the numpy gradient over the token table (tests/attention_instances.py
``table_gradient``) and the normalized step of :func:`ntpnb.optim.run` compute, every operation in the
same order, so the same floats:

* products (:func:`_matmul`): :func:`ntpnb.reproducible_products.dot_sum`'s order, the first term,
  then the others in index order;
* numpy's reductions over a non-last axis (``z.sum(axis=0)``), ``np.bincount`` and ``np.einsum`` over a
  non-last axis: one by one, in memory order (:func:`_sequential_sums`);
* ``x.sum(axis=-1)``: numpy's pairwise summation (:func:`pairwise_sum`);
* ``np.einsum`` over a contiguous last axis (the model's centred sums, the gradient's squared norm):
  two interleaved partial sums (:func:`einsum_dot`), numpy's SSE2 loop on x86-64.

The exponentials are left to ``np.exp`` between the kernels (a compiled one would round a few per cent
differently). tests/attention/test_engine.py checks the kernels against the numpy reference bit for bit.

The trial axis (``B``) is last, so the innermost loops vectorize over trials. Positions refer to the
token table (``U``, ``k`` distinct vectors per trial) and its query rows (``Uq``, in increasing
order): ``tok`` ``(n, T, B)`` gives each position's token row, ``qry`` ``(n, B)`` each sample's query
row. Scores are needed at query rows only; the score derivatives' table is 0 elsewhere. The phases
take the table's arrays as one tuple ``table = (U, UT, Uq, UqT, UW, G, A, UA, grad, tok, qry,
wdsc)``: ``U`` ``(k, d, B)``, ``Uq`` ``(m, d, B)`` and their transposes ``UT``, ``UqT`` (first two
axes), scratch ``UW`` ``(k, d, B)``, ``G`` and ``A`` ``(k, m, B)``, ``UA`` ``(d, m, B)``, ``grad``
``(d, d, B)`` and the weighted score derivatives ``wdsc`` ``(n, T, B)``; ``lanes`` is ``(3, B)``
scratch and ``rule`` the step's ``(lr, eps, safe_norm)``. Compiled under the contract of
:mod:`ntpnb.compiled` (the same floats under every BLAS kernel and thread count).
"""

from __future__ import annotations

import math

import numpy as np

from ..compiled import jit

#: The losses on the head's output, as :func:`head_finish` codes them.
HEAD_LOSSES: tuple[str, ...] = ("squared", "ce", "squared_softmax")

# --- Sums in numpy's orders ---


@jit
def _sequential_sums(x: np.ndarray, out: np.ndarray) -> None:
    """``out[b]``: ``x[:, b]`` added one by one from -0.0, ``x`` ``(m, B)`` (``x.sum(axis=0)``)."""
    m, B = x.shape
    for b in range(B):
        out[b] = -0.0
    for r in range(m):
        for b in range(B):
            out[b] += x[r, b]


@jit
def _lane_blocks(x: np.ndarray, out: np.ndarray) -> None:
    """``out[b]``: numpy's pairwise sum of ``x[:, b]`` for ``x`` ``(m, B)``, ``m <= 128`` (no split).

    One by one below eight terms; else eight interleaved partial sums, combined pairwise, then the rest.
    """
    m, B = x.shape
    if m < 8:
        _sequential_sums(x, out)
        return
    acc = np.empty((8, B))
    for r in range(8):
        for b in range(B):
            acc[r, b] = x[r, b]
    i = 8
    while i < m - (m % 8):
        for r in range(8):
            for b in range(B):
                acc[r, b] += x[i + r, b]
        i += 8
    for b in range(B):
        out[b] = ((acc[0, b] + acc[1, b]) + (acc[2, b] + acc[3, b])) + (
            (acc[4, b] + acc[5, b]) + (acc[6, b] + acc[7, b])
        )
    while i < m:
        for b in range(B):
            out[b] += x[i, b]
        i += 1


@jit
def pairwise_sum(a: np.ndarray, lo: int, n: int) -> float:
    """``a[lo:lo + n].sum()`` as numpy adds it (``pairwise_sum`` of its loops).

    Blocks of at most 128 terms (:func:`_lane_blocks`); longer ranges: split in two halves (the first
    a multiple of 8 long), on an explicit stack (numba's cache keeps no recursion).
    """
    block = np.empty(1)
    tasks = [(lo, n, False)]
    values = [0.0]
    values.pop()
    while tasks:
        start, size, combine = tasks.pop()
        if combine:
            right = values.pop()
            values.append(values.pop() + right)
        elif size <= 128:
            _lane_blocks(a[start : start + size].reshape((size, 1)), block)
            values.append(block[0])
        else:
            half = size // 2
            half -= half % 8
            tasks.append((start, size, True))
            tasks.append((start + half, size - half, False))
            tasks.append((start, half, False))
    return values[0]


@jit
def _lane_sums(x: np.ndarray, out: np.ndarray) -> None:
    """``out[b]``: the :func:`pairwise_sum` of ``x[:, b]``, for ``x`` ``(m, B)``."""
    m, B = x.shape
    if m <= 128:
        _lane_blocks(x, out)
        return
    column = np.empty(m)
    for b in range(B):
        for r in range(m):
            column[r] = x[r, b]
        out[b] = pairwise_sum(column, 0, m)


@jit
def _lane_dots(x: np.ndarray, y: np.ndarray, acc0: np.ndarray, acc1: np.ndarray) -> None:
    """``acc0[b]``: ``sum_i x[i, b] y[i, b]`` as ``np.einsum`` sums a contiguous last axis.

    ``x``, ``y`` ``(n, B)``, ``acc1`` ``(B,)`` scratch. Lane ``l`` collects the terms ``i = l mod 2``:
    in blocks of eight, ``acc + x_i y_i`` from the last pair of the block to the first; then the rest
    in order; finally lane 0 + lane 1.
    """
    n, B = x.shape
    for b in range(B):
        acc0[b] = 0.0
        acc1[b] = 0.0
    i = 0
    while n - i >= 8:
        for b in range(B):
            t0 = x[i + 6, b] * y[i + 6, b] + acc0[b]
            t1 = x[i + 7, b] * y[i + 7, b] + acc1[b]
            t0 = x[i + 4, b] * y[i + 4, b] + t0
            t1 = x[i + 5, b] * y[i + 5, b] + t1
            t0 = x[i + 2, b] * y[i + 2, b] + t0
            t1 = x[i + 3, b] * y[i + 3, b] + t1
            acc0[b] = x[i, b] * y[i, b] + t0
            acc1[b] = x[i + 1, b] * y[i + 1, b] + t1
        i += 8
    while i < n:
        for b in range(B):
            acc0[b] = x[i, b] * y[i, b] + acc0[b]
        for b in range(B):  # past the end: the zero-padded lane of the last vector
            acc1[b] = (x[i + 1, b] * y[i + 1, b] if i + 1 < n else 0.0) + acc1[b]
        i += 2
    for b in range(B):
        acc0[b] = acc0[b] + acc1[b]


@jit
def einsum_dot(x: np.ndarray, y: np.ndarray) -> float:
    """``sum_i x_i y_i`` as ``np.einsum`` sums a contiguous last axis (:func:`_lane_dots`, one lane)."""
    acc = np.empty((2, 1))
    _lane_dots(x.reshape((x.shape[0], 1)), y.reshape((y.shape[0], 1)), acc[0], acc[1])
    return acc[0, 0]


@jit
def _max_propagating(m: float, v: float) -> float:
    """``np.maximum(m, v)``: NaN wins."""
    if m != m:
        return m
    if v != v or v > m:
        return v
    return m


@jit
def _subtract_lane_max(z: np.ndarray, m: np.ndarray) -> None:
    """``z -= z.max(axis=0)`` for ``z`` ``(m, B)`` (NaN propagating, as numpy's max)."""
    rows, B = z.shape
    for b in range(B):
        m[b] = z[0, b]
    for r in range(1, rows):
        for b in range(B):
            m[b] = _max_propagating(m[b], z[r, b])
    for r in range(rows):
        for b in range(B):
            z[r, b] -= m[b]


@jit
def _normalize(p: np.ndarray, tot: np.ndarray) -> None:
    """``p = p / p.sum()`` over the first axis of ``p`` ``(K, B)`` (numpy's pairwise sum)."""
    _lane_sums(p, tot)
    K, B = p.shape
    for k in range(K):
        for b in range(B):
            p[k, b] = p[k, b] / tot[b]


# --- Products and the token table ---


@jit
def _matmul(X: np.ndarray, Y: np.ndarray, out: np.ndarray) -> None:
    """``out[i, j] = sum_p X[i, p] Y[p, j]`` per trial, in ``dot_sum``'s order; ``X`` ``(a, P, B)``."""
    a, P, B = X.shape
    for i in range(a):
        for j in range(Y.shape[1]):
            for b in range(B):
                out[i, j, b] = X[i, 0, b] * Y[0, j, b]
            for p in range(1, P):
                for b in range(B):
                    out[i, j, b] += X[i, p, b] * Y[p, j, b]


@jit
def logits(WL: np.ndarray, table: tuple, shift: np.ndarray, z: np.ndarray, m: np.ndarray, add: bool) -> None:
    """The attention logits of each softmax ``c``, less their maximum over the positions.

    ``G = (U W) Uq^T`` (``scores`` of the reference, at the query rows), then ``z[c, i, t] =
    G[tok[i, t], qry[i]] + shift[c, i, t]`` where ``add`` (the log-loss's two softmaxes: ``shift``
    masks and adds ``log gamma``), else ``G[...]`` where ``shift`` is 0 and ``-inf`` elsewhere (the
    head losses' masked softmax); ``z -= z.max`` over ``t``. ``z``, ``shift`` ``(c, n, T, B)``; ``m``
    ``(B,)`` scratch.
    """
    U, _, _, UqT, UW, G, _, _, _, tok, qry, _ = table
    _matmul(U, WL, UW)
    _matmul(UW, UqT, G)
    C, n, T, B = z.shape
    for c in range(C):
        for i in range(n):
            for t in range(T):
                for b in range(B):
                    g, s = G[tok[i, t, b], qry[i, b], b], shift[c, i, t, b]
                    z[c, i, t, b] = g + s if add else (g if s == 0.0 else -np.inf)
            _subtract_lane_max(z[c, i], m)


# --- The losses on the head's output (``(n, ...)`` arrays) ---


@jit
def _outputs(z: np.ndarray, emb: np.ndarray, f: np.ndarray, tot: np.ndarray) -> None:
    """The softmax ``s`` (into ``z`` ``(n, T, B)``, which holds the exponentials) and ``f = X^T s``."""
    n, T, B = z.shape
    d = emb.shape[2]
    for i in range(n):
        _normalize(z[i], tot)
        _matmul(z[i].reshape((1, T, B)), emb[i], f[i].reshape((1, d, B)))


@jit
def head_logits(
    s: np.ndarray, emb: np.ndarray, f: np.ndarray, CT: np.ndarray, z: np.ndarray, lanes: np.ndarray
) -> None:
    """The class logits (ce, squared softmax): :func:`_outputs`, ``z = f C^T`` less its maximum."""
    m = lanes[0]
    _outputs(s, emb, f, m)
    _matmul(f, CT, z)
    for i in range(z.shape[0]):
        _subtract_lane_max(z[i], m)


@jit
def _squared_head(
    f: np.ndarray, C: np.ndarray, labels: np.ndarray, gf: np.ndarray, prod: np.ndarray, u: np.ndarray
) -> None:
    """Derivative in ``f`` of ``(1 - c_y^T f)^2``: ``gf = -2 (1 - u) c_y``, ``u = sum(c_y * f)``."""
    n, d, B = f.shape
    for i in range(n):
        for j in range(d):
            for b in range(B):
                prod[j, b] = C[labels[i, b], j, b] * f[i, j, b]
        _lane_sums(prod, u)
        for j in range(d):
            for b in range(B):
                gf[i, j, b] = (-2.0 * (1.0 - u[b])) * C[labels[i, b], j, b]


@jit
def _squared_softmax_head(
    z: np.ndarray,
    C: np.ndarray,
    labels: np.ndarray,
    gf: np.ndarray,
    on: np.ndarray,
    off: np.ndarray,
    lanes: np.ndarray,
) -> None:
    """Derivative in ``f`` of ``(1 - p_y)^2``, ``p = softmax(C f)`` (``_squared_softmax_grad``).

    ``z`` holds :func:`head_logits`' exponentials and becomes ``p``; ``p_y`` and ``1 - p_y`` are
    pairwise sums over the classes with zeros for the others, ``c_y - C^T p = sum_k p_k (c_y - c_k)``
    is added class by class, ``gf = (-2 (1 - p_y) p_y) (c_y - C^T p)``. Scratch ``on``, ``off``
    ``(max(K, d), B)``.
    """
    n, K, B = z.shape
    d = C.shape[1]
    p_y, rest = lanes[0], lanes[1]
    for i in range(n):
        p = z[i]
        _normalize(p, rest)
        for k in range(K):
            for b in range(B):
                is_y = k == labels[i, b]
                on[k, b] = p[k, b] if is_y else 0.0
                off[k, b] = 0.0 if is_y else p[k, b]
        _lane_sums(on[:K], p_y)
        _lane_sums(off[:K], rest)
        crow = on  # c_y, (d, B), once the sums are taken
        for j in range(d):
            for b in range(B):
                crow[j, b] = C[labels[i, b], j, b]
        for j in range(d):
            for b in range(B):
                gf[i, j, b] = 0.0
            for k in range(K):
                for b in range(B):
                    gf[i, j, b] = p[k, b] * (crow[j, b] - C[k, j, b]) + gf[i, j, b]
            for b in range(B):
                gf[i, j, b] = (-2.0 * rest[b] * p_y[b]) * gf[i, j, b]


@jit
def _ce_head(z: np.ndarray, C: np.ndarray, labels: np.ndarray, gf: np.ndarray, tot: np.ndarray) -> None:
    """Derivative in ``f`` of the cross-entropy: ``gf = C^T (p - e_y)``, ``p = softmax(C f)``.

    ``z`` ``(n, K, B)`` holds :func:`head_logits`' exponentials and becomes ``p - e_y``.
    """
    n, K, B = z.shape
    d = C.shape[1]
    for i in range(n):
        _normalize(z[i], tot)
        for b in range(B):
            z[i, labels[i, b], b] -= 1.0
        _matmul(z[i].reshape((1, K, B)), C, gf[i].reshape((1, d, B)))


@jit
def _score_weights(s: np.ndarray, head: tuple, wdsc: np.ndarray, lanes: np.ndarray) -> None:
    """The weighted score derivatives of the head losses, ``wdsc`` ``(n, T, B)``.

    ``q_t = x_t^T gf`` (``q`` ``(T, 1, B)``), ``dsc_t = -s_t sum_u s_u (q_u - q_t)`` (:func:`_lane_dots`),
    ``wdsc = where(mask, dsc, 0) * w``.
    """
    emb, _, _, _, gf, mask, weights, q, work, _ = head
    n, T, B = s.shape
    d = emb.shape[2]
    diff, acc = work[:T], lanes[0]
    for i in range(n):
        _matmul(emb[i], gf[i].reshape((d, 1, B)), q)
        for t in range(T):
            for u in range(T):
                for b in range(B):
                    diff[u, b] = q[u, 0, b] - q[t, 0, b]
            _lane_dots(s[i], diff, acc, lanes[1])
            for b in range(B):
                dsc = -s[i, t, b] * acc[b]
                wdsc[i, t, b] = (dsc if mask[i, t, b] else 0.0) * weights[i, b]


# --- The normalized step and whole phases of a step, between numpy's exponentials ---


@jit
def ngd_update(WL: np.ndarray, grad: np.ndarray, rule: tuple, lanes: np.ndarray) -> bool:
    """The normalized step of :func:`ntpnb.optim.run`: ``W -= lr g / (||g|| + eps)`` per trial.

    ``WL``, ``grad`` ``(d, d, B)``. A trial whose plain norm lies outside ``[safe_norm, inf)`` steps by
    ``(g / s) lr / (||g / s|| + eps / s)``, ``s`` its largest entry, as the reference does. Returns
    ``False`` (nothing moved) where the reference raises (a non-finite entry, or a zero gradient with
    ``eps = 0``): the caller raises its error.
    """
    lr, eps, safe_norm = rule
    factor, norm, scale = lanes[0], lanes[1], lanes[2]
    d, _, B = WL.shape
    n = d * d
    g = grad.reshape(n, B)
    W = WL.reshape(n, B)
    _lane_dots(g, g, norm, factor)  # einsum("ik,ik->i") of the rows g[:, b]
    for b in range(B):
        nb = math.sqrt(norm[b])
        norm[b] = nb
        scale[b] = 1.0
        if nb >= safe_norm and nb < np.inf:
            continue
        big = abs(g[0, b])
        for j in range(1, n):
            big = _max_propagating(big, abs(g[j, b]))
        if not math.isfinite(big) or (eps == 0.0 and big == 0.0):
            return False
        if big > 0.0:
            scale[b] = big
        row = np.empty(n)
        for j in range(n):
            row[j] = g[j, b] / scale[b]
        norm[b] = math.sqrt(einsum_dot(row, row))
    for b in range(B):
        factor[b] = lr / (norm[b] + eps / scale[b])
    for j in range(n):
        for b in range(B):
            W[j, b] -= (g[j, b] / scale[b]) * factor[b]  # g / 1 is g: a trial not rescaled steps by g
    return True


@jit
def _finish(positions_first: bool, table: tuple, WL: np.ndarray, rule: tuple, lanes: np.ndarray) -> bool:
    """From the weighted score derivatives ``wdsc`` to the gradient and the normalized step.

    ``A = bincount`` of ``wdsc`` onto the (token, query) cells, added in the reference's order:
    positions outer for the log-loss (its ``(T, B, n)`` arrays), samples outer otherwise (``(B, n,
    T)``). Then ``grad = U^T A Uq`` (``weight_grad`` of the reference): its sum less the terms ``0 *
    U[j, q]`` of the rows off the queries, which can change only the sign of a zero entry.
    """
    _, UT, Uq, _, _, _, A, UA, grad, tok, qry, wdsc = table
    n, T, B = wdsc.shape
    A[:] = 0.0
    for outer in range(T if positions_first else n):
        for inner in range(n if positions_first else T):
            i, t = (inner, outer) if positions_first else (outer, inner)
            for b in range(B):
                A[tok[i, t, b], qry[i, b], b] += wdsc[i, t, b]
    _matmul(UT, A, UA)
    _matmul(UA, Uq, grad)
    return ngd_update(WL, grad, rule, lanes)


@jit
def log_finish(
    z: np.ndarray, off_w: np.ndarray, table: tuple, WL: np.ndarray, rule: tuple, lanes: np.ndarray
) -> bool:
    """The log-loss from its exponentials ``z`` ``(2, n, T, B)`` to the end of the step.

    ``z /= z.sum`` over the positions gives ``s`` and ``r``; ``wdsc = s * off_w`` (``off_w`` the
    sample weight off the label positions), ``wdsc -= r * wdsc.sum``; then :func:`_finish`. For
    ``gamma`` equal on each sample's label positions (no spread term).
    """
    acc, wdsc = lanes[0], table[11]
    two, n, T, B = z.shape
    for c in range(two):
        for i in range(n):
            _sequential_sums(z[c, i], acc)
            for t in range(T):
                for b in range(B):
                    z[c, i, t, b] /= acc[b]
    for i in range(n):
        for t in range(T):
            for b in range(B):
                wdsc[i, t, b] = z[0, i, t, b] * off_w[i, t, b]
        _sequential_sums(wdsc[i], acc)
        for t in range(T):
            for b in range(B):
                wdsc[i, t, b] -= z[1, i, t, b] * acc[b]
    return _finish(True, table, WL, rule, lanes)


@jit
def head_finish(
    loss: int,
    z: np.ndarray,
    classes: np.ndarray,
    head: tuple,
    table: tuple,
    WL: np.ndarray,
    rule: tuple,
    lanes: np.ndarray,
) -> bool:
    """A head loss (``loss`` indexes :data:`HEAD_LOSSES`) to the end of the step.

    The squared loss starts from the attention's exponentials ``z``, the others from the class
    logits' ``classes``; then :func:`_score_weights` and :func:`_finish`. ``head``: ``emb`` ``(n, T, d,
    B)``, ``f``, ``gf`` ``(n, d, B)``, ``C`` ``(K, d, B)``, ``labels``, ``weights`` ``(n, B)``,
    ``mask`` ``(n, T, B)``, ``q`` ``(T, 1, B)``, scratch ``work``, ``work2`` ``(max(d, K, T), B)``.
    """
    emb, f, C, labels, gf, _, _, _, work, work2 = head
    if loss == 0:
        _outputs(z, emb, f, lanes[0])
        _squared_head(f, C, labels, gf, work[: C.shape[1]], lanes[0])
    elif loss == 1:
        _ce_head(classes, C, labels, gf, lanes[0])
    else:
        _squared_softmax_head(classes, C, labels, gf, work, work2, lanes)
    _score_weights(z, head, table[11], lanes)
    return _finish(False, table, WL, rule, lanes)
