"""Products whose rounding is the same on every CPU: what long training runs multiply with.

OpenBLAS picks its kernel (FMA, block widths) by CPU, so ``@`` differs in the last bits between
machines, and thousands of training steps amplify that (chapter 7's attention runs: into the
third printed digit). The training arithmetic multiplies here instead:

* :func:`dot_sum` (and :func:`matmul`, :func:`matvec`, :func:`vecmat`) adds ``x_j * y_j`` in
  order with numpy's correctly rounded, unfused multiply and add: the same float on every CPU,
  BLAS, thread count and batch size, at the cost of a Python loop over the contracted axis
  (for short contractions, as the attention model's);
* :func:`einsum` is ``np.einsum(optimize=False)``: numpy's own loops, not dispatched by CPU,
  summing in an order that depends on the shapes (a batch entry may differ with the batch
  size): for long contractions of shapes fixed within a run (the linear model's gradient).

tests/test_reproducible_products.py and tests/test_cross_cpu.py (training bit for bit under
four OpenBLAS kernels, one and two threads) check them.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def dot_sum(pairs: Iterable[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """``sum_j x_j * y_j`` over ``pairs = ((x_0, y_0), (x_1, y_1), ...)``, added in that order.

    At least one pair; the factors broadcast; every pair must give the shape of the first.
    """
    it = iter(pairs)
    x, y = next(it)
    out = np.multiply(x, y)
    term = np.empty_like(out)
    for x, y in it:
        np.multiply(x, y, out=term)
        out += term
    return out


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` for ``(..., m, k)`` and ``(..., k, n)`` float arrays (batch axes broadcast)."""
    k = a.shape[-1]
    if k == 0:
        return np.zeros(np.broadcast_shapes((*a.shape[:-1], 1), (*b.shape[:-2], 1, b.shape[-1])))
    return dot_sum((a[..., :, j, None], b[..., None, j, :]) for j in range(k))


def matvec(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``(a @ x[..., None])[..., 0]`` for ``(..., m, k)`` and ``(..., k)`` float arrays."""
    return matmul(a, x[..., None])[..., 0]


def vecmat(x: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``(x[..., None, :] @ a)[..., 0, :]`` for ``(..., m)`` and ``(..., m, k)`` float arrays."""
    return matmul(x[..., None, :], a)[..., 0, :]


def einsum(subscripts: str, *operands: np.ndarray) -> np.ndarray:
    """``np.einsum(subscripts, *operands)`` on numpy's own loops, never BLAS (see above)."""
    return np.einsum(subscripts, *operands, optimize=False)
