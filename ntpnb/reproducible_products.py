"""Products whose rounding is the same on every CPU: what long training runs multiply with.

``np.matmul`` (and ``@``) hands float64 products to BLAS, and OpenBLAS picks its kernel by
CPU: a Haswell kernel fuses multiply-adds (FMA) and sums in blocks of one width, a SandyBridge
or Prescott kernel in others. The products then differ in their last bits, which is harmless
for one product but not for thousands of training steps: the attention runs of chapter 6
amplify a 1e-16 difference in a gradient into differences in the third printed digit (a
median distance of 8.4e-5 under one kernel, 3.0e-3 under another, at the quick profile).
So the training arithmetic multiplies here, in one of two ways:

* :func:`dot_sum` (and :func:`matmul`, :func:`matvec`, :func:`vecmat` built on it) adds
  ``x_j * y_j`` for ``j = 0, 1, ...`` in that order with numpy's elementwise multiply and add.
  Each of those is correctly rounded (IEEE 754) and numpy does not fuse them, so every entry is
  the same float on every CPU, with any BLAS, any number of threads and any batch size. The
  cost is a Python-level loop over the contracted axis: right for short contractions (the
  attention model's, a few dozen terms).
* :func:`einsum` is ``np.einsum`` without its BLAS path (``optimize=False``): numpy's own loops,
  compiled for the baseline instruction set and not dispatched by CPU (measured: the same bits
  with numpy's AVX2 and AVX-512 code switched off). Their summation order is fixed by the
  shapes, but it does change with them (a batch axis of length 1 is dropped and the reduction
  becomes the inner, unrolled loop), so a batch entry may differ with the batch size. Right for
  long contractions whose shapes do not change within a run (the linear model's gradient,
  sums over 50 contexts or 60 dimensions).

tests/test_reproducible_products.py checks both against BLAS to rounding and :func:`dot_sum`'s
invariance to batching; tests/test_cross_cpu.py checks attention and linear training bit for bit
under four OpenBLAS kernels and with one and two threads.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

__all__ = ["dot_sum", "matmul", "matvec", "vecmat", "einsum"]


def dot_sum(pairs: Iterable[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """``sum_j x_j * y_j`` over ``pairs = ((x_0, y_0), (x_1, y_1), ...)``, added in that order.

    The factors broadcast; every pair must give the shape of the first.

    Raises
    ------
    ValueError
        If ``pairs`` is empty (the shape of the sum is unknown).
    """
    it = iter(pairs)
    try:
        x, y = next(it)
    except StopIteration:
        raise ValueError("dot_sum needs at least one pair") from None
    out = np.multiply(x, y)
    term = np.empty_like(out)
    for x, y in it:
        np.multiply(x, y, out=term)
        out += term
    return out


def _check_inner(a: np.ndarray, b: np.ndarray, k_a: int, k_b: int) -> int:
    if k_a != k_b:
        raise ValueError(f"inner dimensions differ: {a.shape} and {b.shape}")
    return k_a


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` for ``(..., m, k)`` and ``(..., k, n)`` float arrays (batch axes broadcast)."""
    k = _check_inner(a, b, a.shape[-1], b.shape[-2])
    if k == 0:
        return np.zeros(np.broadcast_shapes((*a.shape[:-1], 1), (*b.shape[:-2], 1, b.shape[-1])))
    return dot_sum((a[..., :, j, None], b[..., None, j, :]) for j in range(k))


def matvec(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``(a @ x[..., None])[..., 0]`` for ``(..., m, k)`` and ``(..., k)`` float arrays."""
    k = _check_inner(a, x, a.shape[-1], x.shape[-1])
    if k == 0:
        return np.zeros(np.broadcast_shapes(a.shape[:-1], (*x.shape[:-1], 1)))
    return dot_sum((a[..., :, j], x[..., None, j]) for j in range(k))


def vecmat(x: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``(x[..., None, :] @ a)[..., 0, :]`` for ``(..., m)`` and ``(..., m, k)`` float arrays."""
    m = _check_inner(x, a, x.shape[-1], a.shape[-2])
    if m == 0:
        return np.zeros(np.broadcast_shapes((*x.shape[:-1], 1), (*a.shape[:-2], a.shape[-1])))
    return dot_sum((x[..., j, None], a[..., j, :]) for j in range(m))


def einsum(subscripts: str, *operands: np.ndarray) -> np.ndarray:
    """``np.einsum(subscripts, *operands)`` on numpy's own loops, never BLAS (see above)."""
    return np.einsum(subscripts, *operands, optimize=False)
