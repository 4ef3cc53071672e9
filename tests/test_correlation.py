"""The one correlation of two matrices (ntpnb.linalg.correlation) that both papers use."""

from __future__ import annotations

import numpy as np
import pytest

from ntpnb import attention as att
from ntpnb.errors import InvalidDataError
from ntpnb.linalg import correlation


def test_two_matrices_give_the_cosine_as_a_scalar():
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((10, 4)), rng.standard_normal((10, 4))
    c = correlation(A, B)
    assert isinstance(c, np.floating)
    assert c == pytest.approx(A.ravel() @ B.ravel() / np.linalg.norm(A) / np.linalg.norm(B), rel=1e-13)
    assert correlation(A, 3.0 * A) == pytest.approx(1.0) and correlation(A, -A) == pytest.approx(-1.0)


def test_stacks_broadcast_and_a_zero_matrix_has_correlation_zero():
    rng = np.random.default_rng(1)
    Ws, ref = rng.standard_normal((5, 3, 3)), rng.standard_normal((3, 3))
    out = correlation(Ws, ref)
    assert out.shape == (5,)
    np.testing.assert_allclose(out, [correlation(W, ref) for W in Ws], rtol=1e-13)
    assert correlation(np.zeros((3, 3)), ref) == 0.0
    assert att.correlation is correlation  # Paper B's name for it


def test_bad_shapes_are_named():
    with pytest.raises(InvalidDataError, match="W must be a matrix"):
        correlation(np.ones(3), np.ones((3, 3)))
    with pytest.raises(InvalidDataError, match="do not broadcast"):
        correlation(np.ones((2, 3)), np.ones((3, 3)))
