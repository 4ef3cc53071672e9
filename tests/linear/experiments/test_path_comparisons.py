"""Paper A's experiments: the regularization path against CVXPY and against training
(ntpnb.linear.experiments._path_comparisons).
"""

from __future__ import annotations

import numpy as np
import pytest

import ntpnb as ntp
from ntpnb import _optim as optim
from ntpnb.errors import InvalidDataError


def test_cvxpy_path_point_agrees_with_the_exact_path_at_a_small_radius(toy):
    W, status = ntp.cvxpy_path_point(toy, 1.0)
    exact = ntp.regularization_path(toy, [1.0]).W[0]
    assert status.startswith("optimal")
    assert np.linalg.norm(W - exact) < 1e-4


@pytest.fixture(scope="module")
def toy_path(toy):
    return ntp.regularization_path(toy, np.geomspace(0.1, 400.0, 20))


def test_split_agreement_on_the_toy_path(toy, toy_path, toy_limits):
    split = ntp.split_agreement(toy, toy_path, toy_limits.W_star)
    assert 0 < split.n_radii <= len(toy_path)
    assert split.relative_difference < 1e-6 and split.floor >= 10 * split.rounding
    assert split.B_resolved in toy_path.radii


def test_gd_along_path_compares_learned_parts_with_the_path(toy, toy_limits):
    trace = ntp.train(
        toy, optim.gd(0.5), 2000, seed=ntp.own_stream(0, 1), n_records=20, lim=toy_limits, keep_iterates=True
    )
    run = ntp.gd_along_path(toy, trace, toy_limits.W_mm)
    learned = ntp.project_R(toy, trace.iterates[-1])
    assert run.final_norm == pytest.approx(np.linalg.norm(learned))
    assert np.all(np.diff(run.norms) > 0) and run.norms.min() > 1
    assert run.gap_path[-1] < run.gap_mm[-1]  # GD is nearer the path than W^mm
    kept = _kept(trace, toy)  # a second computation of the iterates kept and their gaps
    np.testing.assert_allclose(run.norms, [np.linalg.norm(w) for w in kept], rtol=1e-12)
    np.testing.assert_allclose(run.gap_mm, [1 - _cos(w, toy_limits.W_mm) for w in kept], atol=1e-12)
    without = ntp.train(toy, optim.gd(0.5), 10, n_records=5, lim=toy_limits)
    with pytest.raises(InvalidDataError, match="keep_iterates"):
        ntp.gd_along_path(toy, without, toy_limits.W_mm)


def _cos(a, b):
    return float(a.ravel() @ b.ravel() / np.linalg.norm(a) / np.linalg.norm(b))


def _kept(trace, data):
    learned = [ntp.project_R(data, W) for W in trace.iterates]
    out, best = [], -np.inf
    for w in learned:
        n = np.linalg.norm(w)
        if n > 1 and n > best:
            out.append(w)
        best = max(best, n)
    return out
