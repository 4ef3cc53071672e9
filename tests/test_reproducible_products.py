"""ntpnb._reproducible_products: BLAS-free products, equal to BLAS to rounding and to one another
bit for bit."""

from __future__ import annotations

import numpy as np

from ntpnb._reproducible_products import matmul, matvec, vecmat

RNG = np.random.default_rng(0)


def test_products_equal_numpy_to_rounding():
    a, b = RNG.standard_normal((3, 4, 5, 7)), RNG.standard_normal((3, 4, 7, 2))
    x, y = RNG.standard_normal((3, 4, 7)), RNG.standard_normal((3, 4, 5))
    np.testing.assert_allclose(matmul(a, b), a @ b, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(matvec(a, x), (a @ x[..., None])[..., 0], rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(vecmat(y, a), (y[..., None, :] @ a)[..., 0, :], rtol=1e-12, atol=1e-13)


def test_products_broadcast_their_batch_axes():
    a, b = RNG.standard_normal((2, 1, 3, 4)), RNG.standard_normal((5, 4, 6))
    assert matmul(a, b).shape == (2, 5, 3, 6)
    np.testing.assert_allclose(matmul(a, b), a @ b, rtol=1e-12, atol=1e-13)


def test_each_entry_is_the_sum_in_order_of_its_terms():
    """The defining property: x_0 y_0 + x_1 y_1 + ... added left to right, in Python floats."""
    a, b = RNG.standard_normal((4, 9)), RNG.standard_normal((9, 3))
    out = matmul(a, b)
    for i in range(4):
        for j in range(3):
            total = a[i, 0] * b[0, j]
            for k in range(1, 9):
                total = total + a[i, k] * b[k, j]
            assert out[i, j] == total


def test_a_batch_entry_does_not_depend_on_the_batch():
    """One trial alone gives the same floats as inside a batch of 7 (einsum does not: a batch
    axis of length 1 changes its loop order)."""
    a, b = RNG.standard_normal((7, 9, 8)), RNG.standard_normal((7, 8, 9))
    whole = matmul(a, b)
    for i in range(7):
        assert np.array_equal(matmul(a[i : i + 1], b[i : i + 1]), whole[i : i + 1])
        assert np.array_equal(matmul(a[i], b[i]), whole[i])


def test_empty_inner_dimension_gives_zeros_of_the_right_shape():
    assert np.array_equal(matmul(np.ones((2, 3, 0)), np.ones((2, 0, 4))), np.zeros((2, 3, 4)))
    assert np.array_equal(matvec(np.ones((3, 0)), np.ones(0)), np.zeros(3))
    assert np.array_equal(vecmat(np.ones(0), np.ones((0, 4))), np.zeros(4))
