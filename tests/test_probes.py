"""Regression tests for the probe findings of issue 18, item 6.

Memory and time guards that refuse before working, normalized GD at an overflowing gradient
norm, the gradient's shape checked at every step, ids outside the alphabet, unordered
containers where a sequence is meant, and raw numpy/scipy exceptions on bad input (each now an
:class:`ntpnb.errors.NTPError` naming the argument).
"""

from __future__ import annotations

import numpy as np
import pytest

from ntpnb import optim, settings
from ntpnb.errors import InvalidDataError, SolverError


# ------------------------------------------------------------------ optim: guards and NGD
def test_log_grid_refuses_too_many_points_before_allocating():
    """1e7 recording points allocated 240 MB; now refused, naming the size and the limit."""
    with pytest.raises(InvalidDataError, match=r"n_points = 10000000 .*MAX_RECORD_POINTS = 100000"):
        optim.log_grid(10**9, 10**7)
    grid = optim.log_grid(10**9, settings.MAX_RECORD_POINTS)  # the limit itself is allowed
    assert grid[0] == 0 and grid[-1] == 10**9


@pytest.mark.parametrize("batch_ndim", [0, 1])
def test_normalized_gd_steps_by_lr_when_the_gradient_norm_overflows(batch_ndim):
    """Entries of 1e200 overflow ``sqrt(sum g^2)`` to inf; the step used to be a silent zero.
    Now it is ``lr`` along ``g`` (the norm computed as ``max|g| * ||g / max|g|||``)."""
    g = np.array([[3e200, -4e200], [1.0, 0.0]])  # row 0 overflows, row 1 does not
    W0 = np.zeros((2, 2)) if batch_ndim else np.zeros(2)
    grad = (lambda W: g) if batch_ndim else (lambda W: g[0])
    trace = optim.run(grad, W0, optim.normalized_gd(0.5), 1, batch_ndim=batch_ndim)
    expected = np.array([[-0.3, 0.4], [-0.5, 0.0]])
    np.testing.assert_allclose(trace.W, expected if batch_ndim else expected[0], rtol=1e-15)


@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_normalized_gd_names_a_non_finite_gradient_entry(bad):
    steps = []

    def grad(W):
        steps.append(1)
        return np.array([[1.0, 2.0], [bad if len(steps) == 3 else 1.0, 0.0]])

    with pytest.raises(
        SolverError, match=r"non-finite gradient entry \(batch element \(1,\)\) at iteration 2"
    ):
        optim.run(grad, np.zeros((2, 2)), optim.normalized_gd(0.1), 5, batch_ndim=1)


def test_run_checks_the_gradient_shape_at_every_step():
    """A gradient of shape (2,) for an iterate of shape (3, 2) broadcasts silently; at step 0 it
    was refused, at step 3 it was used."""
    calls = []

    def grad(W):
        calls.append(1)
        return W if len(calls) <= 3 else W[0]

    with pytest.raises(
        InvalidDataError, match=r"gradient at iteration 3 has shape \(2,\), the iterate \(3, 2\)"
    ):
        optim.run(grad, np.ones((3, 2)), optim.gd(0.1), 10)
