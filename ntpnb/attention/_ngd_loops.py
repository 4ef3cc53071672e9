"""Compiled pieces of a training step on the attention model: the numpy reference's arithmetic, in loops.

Each kernel computes what a line of the numpy gradient over the token table (tests/attention_instances.py
``table_gradient``) computes, and the step is the optimizer's own (:mod:`ntpnb._optim_loops`). The kernels
keep their own summation order, which no numpy version changes: every sum adds its terms one by one,
in index order (:func:`ntpnb._reproducible_products.dot_sum`'s products likewise: the first term, then
the others), where numpy may add pairwise or in interleaved lanes; so they compute the reference's
floats to rounding. tests/attention/test_engine.py checks the gradients and whole runs against the
numpy reference to a stated tolerance.

The exponentials are left to ``np.exp`` between the kernels (a compiled one would round a few per cent
differently).

The trial axis (``B``) is last, so the innermost loops vectorize over trials. Positions refer to the
token table (``U``, ``k`` distinct vectors per trial) and its query rows (``Uq``, in increasing
order): ``tok`` gives each position's token row, ``qry`` each sample's query row. Scores are needed
at query rows only; the score derivatives' table is 0 elsewhere. Compiled under the contract of
:mod:`ntpnb._compiled` (the same floats under every BLAS kernel and thread count).
"""

from __future__ import annotations

import numpy as np

from .._compiled import jit

# --- Sums, one by one in index order ---


@jit
def _lane_sums(x: np.ndarray, out: np.ndarray) -> None:
    """``out[b] = sum_r x[r, b]`` for ``x`` ``(m, B)``, ``m >= 1``, added in order of ``r``."""
    m, B = x.shape
    for b in range(B):
        out[b] = x[0, b]
    for r in range(1, m):
        for b in range(B):
            out[b] += x[r, b]


@jit
def _lane_dots(x: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
    """``out[b] = sum_i x[i, b] y[i, b]`` for ``x``, ``y`` ``(n, B)``, ``n >= 1``, added in order of ``i``."""
    n, B = x.shape
    for b in range(B):
        out[b] = x[0, b] * y[0, b]
    for i in range(1, n):
        for b in range(B):
            out[b] += x[i, b] * y[i, b]


@jit
def _subtract_lane_max(z: np.ndarray, m: np.ndarray) -> None:
    """``z -= z.max(axis=0)`` for ``z`` ``(m, B)`` (NaN propagating, as numpy's max)."""
    rows, B = z.shape
    for b in range(B):
        m[b] = z[0, b]
    for r in range(1, rows):
        for b in range(B):
            v = z[r, b]
            if m[b] == m[b] and (v != v or v > m[b]):  # np.maximum: NaN wins
                m[b] = v
    for r in range(rows):
        for b in range(B):
            z[r, b] -= m[b]


# --- The token table's products ---


@jit
def _lane_matmul(X: np.ndarray, Y: np.ndarray, out: np.ndarray) -> None:
    """``out[r, c] = sum_j X[r, j] Y[j, c]`` per lane (trial, last axis), each sum added in order of ``j``."""
    R, J, B = X.shape
    for r in range(R):
        for c in range(Y.shape[1]):
            for b in range(B):
                out[r, c, b] = X[r, 0, b] * Y[0, c, b]
            for j in range(1, J):
                for b in range(B):
                    out[r, c, b] += X[r, j, b] * Y[j, c, b]


@jit
def _onto_table(
    A: np.ndarray, tok: np.ndarray, qry: np.ndarray, wdsc: np.ndarray, positions_first: bool
) -> None:
    """``A = bincount`` of ``wdsc`` ``(n, T, B)`` onto the (token, query) cells ``(k, m, B)``.

    Added in the reference's order: positions outer for the log-loss (its ``(T, B, n)`` arrays),
    samples outer otherwise (``(B, n, T)``).
    """
    n, T, B = wdsc.shape
    A[:] = 0.0
    for outer in range(T if positions_first else n):
        for inner in range(n if positions_first else T):
            i, t = (inner, outer) if positions_first else (outer, inner)
            for b in range(B):
                A[tok[i, t, b], qry[i, b], b] += wdsc[i, t, b]


# --- The log-loss (positions first: ``(T, ...)`` arrays) ---


@jit
def shifted_logits(WL: np.ndarray, table: tuple, shift: np.ndarray, z: np.ndarray, lanes: np.ndarray) -> None:
    """A loss up to its softmaxes' exponentials: their logits less their maximum.

    The scores ``G = U W Uq^T`` per trial (``scores`` of the reference, at the query rows):
    ``UW[a, q] = sum_p U[a, p] W[p, q]``, then ``G[a, s] = sum_q UW[a, q] Uq[s, q]`` (both ``dot_sum``),
    the reference's ``G[a, c]`` at query ``s``'s row ``c``. Then ``z[c, i, t] = G[tok[i, t], qry[i]] +
    shift[c, i, t]`` and ``z -= z.max`` over ``t``; ``z``, ``shift`` ``(c, n, T, B)``, ``WL`` ``(d, d,
    B)``, the table's arrays as :data:`TABLE_ARRAYS` (``Uq`` zero-padded). A head loss has one softmax
    (``c = 1``, ``shift`` 0 on the input, ``-inf`` at padding), the log-loss two (the second shifted by
    ``log gamma``).
    """
    U, _, Uq, UW, G, _, _, _, tok, qry = table
    _lane_matmul(U, WL, UW)
    for a in range(U.shape[0]):
        for s in range(Uq.shape[0]):
            _lane_dots(UW[a], Uq[s], G[a, s])
    m = lanes[0]
    two, n, T, B = z.shape
    for c in range(two):
        for i in range(n):
            for t in range(T):
                for b in range(B):
                    z[c, i, t, b] = G[tok[i, t, b], qry[i, b], b] + shift[c, i, t, b]
            _subtract_lane_max(z[c, i], m)


@jit
def log_gradient(z: np.ndarray, off_w: np.ndarray, wdsc: np.ndarray, table: tuple, acc: np.ndarray) -> None:
    """The log-loss's gradient from its exponentials, through its score derivatives on the table ``A``.

    ``z`` holds :func:`shifted_logits`' exponentials and becomes ``s`` and ``r`` (``z /= z.sum`` over the
    positions); then ``wdsc = s * off_w``, ``wdsc -= r * wdsc.sum``, ``A`` the ``bincount`` of ``wdsc``
    onto the (token, query) cells, positions first, and the weight gradient (:data:`TABLE_ARRAYS`).
    For ``gamma`` equal on each sample's label positions (no spread term). ``off_w``, ``wdsc``
    ``(n, T, B)``; ``acc`` scratch.
    """
    _, UT, Uq, _, _, A, UA, grad, tok, qry = table
    two, n, T, B = z.shape
    for c in range(two):
        for i in range(n):
            _lane_sums(z[c, i], acc)
            for t in range(T):
                for b in range(B):
                    z[c, i, t, b] /= acc[b]
    for i in range(n):
        for t in range(T):
            for b in range(B):
                wdsc[i, t, b] = z[0, i, t, b] * off_w[i, t, b]
        _lane_sums(wdsc[i], acc)
        for t in range(T):
            for b in range(B):
                wdsc[i, t, b] -= z[1, i, t, b] * acc[b]
    _onto_table(A, tok, qry, wdsc, True)
    _lane_matmul(UT, A, UA)  # the weight gradient U^T A Uq (TABLE_ARRAYS)
    _lane_matmul(UA, Uq, grad)


# --- The losses on the head's output (``(n, ...)`` arrays) ---


@jit
def attention_outputs(z: np.ndarray, emb: np.ndarray, f: np.ndarray, tot: np.ndarray) -> None:
    """The softmax ``s`` (into ``z``, which holds the exponentials) and ``f = X^T s``.

    ``s = e / e.sum()`` over the positions, ``f[i, j] = sum_t s_t x_tj`` (``dot_sum``); ``z`` ``(n, T, B)``,
    ``emb`` ``(n, T, d, B)``, ``f`` ``(n, d, B)``, ``tot`` ``(B,)``.
    """
    n, T, B = z.shape
    d = emb.shape[2]
    for i in range(n):
        _lane_sums(z[i], tot)
        for t in range(T):
            for b in range(B):
                z[i, t, b] = z[i, t, b] / tot[b]
        _lane_matmul(z[i].reshape(1, T, B), emb[i], f[i].reshape(1, d, B))


@jit
def squared_head(
    f: np.ndarray, C: np.ndarray, labels: np.ndarray, gf: np.ndarray, prod: np.ndarray, u: np.ndarray
) -> None:
    """Derivative in ``f`` of ``(1 - c_y^T f)^2``: ``gf = -2 (1 - u) c_y``, ``u = sum(c_y * f)``.

    ``C`` ``(K, d, B)``, ``labels`` ``(n, B)``; ``prod`` ``(d, B)`` and ``u`` ``(B,)`` scratch.
    """
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
def head_logits(
    s: np.ndarray, emb: np.ndarray, f: np.ndarray, C: np.ndarray, z: np.ndarray, lanes: np.ndarray
) -> None:
    """To the class logits (ce, squared softmax): ``C f`` less their maximum over the classes.

    :func:`attention_outputs` (``s`` holds the attention's exponentials), then ``z[i, k] = sum_j f[i, j]
    C[k, j]`` as ``dot_sum`` and ``z -= z.max`` over the classes, ``z`` ``(n, K, B)``.
    """
    m = lanes[0]
    attention_outputs(s, emb, f, m)
    n, K, _ = z.shape
    for i in range(n):
        for k in range(K):
            _lane_dots(f[i], C[k], z[i, k])
        _subtract_lane_max(z[i], m)


@jit
def _class_probabilities(p: np.ndarray, tot: np.ndarray) -> None:
    """``p = e / e.sum()`` over the classes, in place on ``p`` ``(K, B)`` of exponentials."""
    _lane_sums(p, tot)
    K, B = p.shape
    for k in range(K):
        for b in range(B):
            p[k, b] = p[k, b] / tot[b]


@jit
def squared_softmax_head(
    z: np.ndarray,
    C: np.ndarray,
    labels: np.ndarray,
    gf: np.ndarray,
    on: np.ndarray,
    off: np.ndarray,
    p_y: np.ndarray,
    rest: np.ndarray,
) -> None:
    """Derivative in ``f`` of ``(1 - p_y)^2``, ``p = softmax(C f)`` (``_squared_softmax_grad``).

    ``z`` ``(n, K, B)`` holds :func:`head_logits`' exponentials and becomes ``p``; ``p_y`` and ``1 - p_y``
    are sums over the classes with zeros for the others, ``c_y - C^T p = sum_k p_k (c_y -
    c_k)`` is added class by class, ``gf = (-2 (1 - p_y) p_y) (c_y - C^T p)``. ``on``, ``off``
    ``(max(K, d), B)``, ``p_y``, ``rest`` ``(B,)`` scratch.
    """
    n, K, B = z.shape
    d = C.shape[1]
    for i in range(n):
        p = z[i]
        _class_probabilities(p, rest)
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
def ce_head(z: np.ndarray, C: np.ndarray, labels: np.ndarray, gf: np.ndarray, tot: np.ndarray) -> None:
    """Derivative in ``f`` of the cross-entropy: ``gf = C^T (p - e_y)``, ``p = softmax(C f)``.

    ``z`` ``(n, K, B)`` holds :func:`head_logits`' exponentials and becomes ``p - e_y``; the product is a
    ``dot_sum`` over the classes. ``tot`` ``(B,)`` scratch.
    """
    n, K, B = z.shape
    d = C.shape[1]
    for i in range(n):
        p = z[i]
        _class_probabilities(p, tot)
        for b in range(B):
            p[labels[i, b], b] -= 1.0
        _lane_matmul(p.reshape(1, K, B), C, gf[i].reshape(1, d, B))


@jit
def score_weights(
    s: np.ndarray,
    emb: np.ndarray,
    gf: np.ndarray,
    mask: np.ndarray,
    weights: np.ndarray,
    tok: np.ndarray,
    qry: np.ndarray,
    wdsc: np.ndarray,
    A: np.ndarray,
    q: np.ndarray,
    diff: np.ndarray,
    acc: np.ndarray,
) -> None:
    """The weighted score derivatives of the head losses, added onto the token table ``A``.

    ``q_t = x_t^T gf`` (``dot_sum``), ``dsc_t = -s_t sum_u s_u (q_u - q_t)`` (:func:`_lane_dots`),
    ``wdsc = where(mask, dsc, 0) * w``, ``A`` its ``bincount`` onto the (token, query) cells, samples
    first. ``s``, ``mask``, ``tok``, ``wdsc`` ``(n, T, B)``; scratch ``q``, ``diff`` ``(T, B)``, ``acc``.
    """
    n, T, B = s.shape
    for i in range(n):
        for t in range(T):
            _lane_dots(emb[i, t], gf[i], q[t])
        for t in range(T):
            for u in range(T):
                for b in range(B):
                    diff[u, b] = q[u, b] - q[t, b]
            _lane_dots(s[i], diff, acc)
            for b in range(B):
                dsc = -s[i, t, b] * acc[b]
                wdsc[i, t, b] = (dsc if mask[i, t, b] else 0.0) * weights[i, b]
    _onto_table(A, tok, qry, wdsc, False)


# --- A head loss's gradient from the exponentials: one call ---

#: The losses on the head's output, as :func:`head_gradient` codes them.
HEAD_LOSSES: tuple[str, ...] = ("squared", "ce", "squared_softmax")
#: The head losses' arrays, in the order :func:`head_gradient` takes them as ``head``: ``emb`` ``(n, T,
#: d, B)``, ``f`` and ``gf`` ``(n, d, B)``, ``C`` ``(K, d, B)``, ``labels`` and ``weights`` ``(n, B)``,
#: ``mask`` and ``wdsc`` ``(n, T, B)``, scratch ``work``, ``work2`` ``(max(d, K, T), B)``.
HEAD_ARRAYS: tuple[str, ...] = ("emb", "f", "C", "labels", "gf", "mask", "weights", "wdsc", "work", "work2")


#: The token table's arrays, in the order the kernels take them as ``table``: ``U`` ``(k, d, B)`` and
#: ``UT`` its transpose ``(d, k, B)``, ``Uq`` ``(m, d, B)``, ``UW`` ``(k, d, B)``, ``G`` and ``A``
#: ``(k, m, B)``, ``UA`` ``(d, m, B)``, ``grad`` ``(d, d, B)``, ``tok`` ``(n, T, B)``, ``qry`` ``(n,
#: B)``. The weight gradient is ``grad = U^T A Uq`` (``weight_grad`` of the reference): ``A`` holds the
#: table's columns at the query rows (the others are 0), ``UA = U^T A``, then ``grad = UA Uq`` (both
#: ``dot_sum``), the reference's sum less its terms ``0 * U[j, q]``, which can change only the sign
#: of a zero entry. See :func:`shifted_logits` for the scores.
TABLE_ARRAYS: tuple[str, ...] = ("U", "UT", "Uq", "UW", "G", "A", "UA", "grad", "tok", "qry")


@jit
def head_gradient(
    loss: int,
    z: np.ndarray,
    classes: np.ndarray,
    head: tuple,
    table: tuple,
    lanes: np.ndarray,
) -> None:
    """A head loss's gradient from its exponentials; ``loss`` indexes :data:`HEAD_LOSSES`.

    The squared loss starts from the attention's exponentials (:func:`attention_outputs`,
    :func:`squared_head`), the others from the class logits' (:func:`ce_head`,
    :func:`squared_softmax_head`); then :func:`score_weights` and the weight gradient
    (:data:`TABLE_ARRAYS`). ``head``: the arrays of :data:`HEAD_ARRAYS`.
    """
    emb, f, C, labels, gf, mask, weights, wdsc, work, work2 = head
    d = C.shape[1]
    T = z.shape[1]
    if loss == 0:
        attention_outputs(z, emb, f, lanes[0])
        squared_head(f, C, labels, gf, work[:d], lanes[0])
    elif loss == 1:
        ce_head(classes, C, labels, gf, lanes[0])
    else:
        squared_softmax_head(classes, C, labels, gf, work, work2, lanes[0], lanes[1])
    _, UT, Uq, _, _, A, UA, grad, tok, qry = table
    score_weights(z, emb, gf, mask, weights, tok, qry, wdsc, A, work[:T], work2[:T], lanes[0])
    _lane_matmul(UT, A, UA)  # the weight gradient U^T A Uq (TABLE_ARRAYS)
    _lane_matmul(UA, Uq, grad)
