"""The regularization path against a general solver and against gradient descent (chapter 2).

A conic solver on the same problem (:func:`cvxpy_path_point`), the path's finite component as a
float64 matrix against its split representation (:func:`split_agreement`), and the part of GD's
iterates that learning moves against the path point of the same norm (:func:`gd_along_path`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ... import _optim as optim
from ... import settings
from ..._direction import correlation
from ...errors import InvalidDataError
from .._ntp_data import NTPData, check_decoder, require_data
from .._regpath import RegularizationPath, regularization_path
from .._subspace import project_F, project_R

__all__ = [
    "cvxpy_path_point",
    "SplitAgreement",
    "split_agreement",
    "PathFollowing",
    "gd_along_path",
]


def cvxpy_path_point(data: NTPData, B: float) -> tuple[np.ndarray, str]:
    """The minimizer of ``CE`` over the ball of radius ``B`` by cvxpy and Clarabel, and its status.

    A general conic solver (exponential cones, default tolerances): what the exact path of
    :func:`~ntpnb.linear._regpath.regularization_path` is compared with.
    """
    require_data(data)
    import cvxpy as cp  # a second of import, for this comparison only

    W = cp.Variable((data.V, data.d))
    L = data.H @ W.T
    loss = sum(data.pi[j] * (cp.log_sum_exp(L[j, :]) - data.P[j] @ L[j, :]) for j in range(data.m))
    problem = cp.Problem(cp.Minimize(loss), [cp.norm(W, "fro") <= B])
    problem.solve(solver="CLARABEL")
    return W.value, problem.status


@dataclass(frozen=True)
class SplitAgreement:
    """``P_F(W_B) - W*`` from the float64 matrix against the path's split representation."""

    #: The largest relative difference over the radii where the distance is above
    #: :data:`~ntpnb.settings.SPLIT_VISIBLE_RTOL` ``||W*||`` (where the matrix can show it).
    relative_difference: float
    #: How many radii that is.
    n_radii: int
    #: The largest ``eps B / distance`` over them: the rounding of the matrix entries, relatively.
    rounding: float
    #: The power of ten above ten times ``rounding`` (a margin for the operations): below it the
    #: digits of the difference are rounding, which differs between CPUs.
    floor: float
    #: The first radius of the grid where the distance falls below ``eps B``: from there on only the
    #: split shows it.
    B_resolved: float


def split_agreement(data: NTPData, path: RegularizationPath, W_star: ArrayLike) -> SplitAgreement:
    """Compare ``||project_F(W_B) - W*||`` computed on the matrix with the path's ``f_distance``."""
    eps = settings.FLOAT64_EPS
    W_star = check_decoder(data, W_star, "W_star")
    direct = np.linalg.norm(np.array([project_F(data, W) for W in path.W]) - W_star, axis=(1, 2))
    visible = path.f_distance > settings.SPLIT_VISIBLE_RTOL * np.linalg.norm(W_star)
    rounding = np.max(eps * path.radii[visible] / path.f_distance[visible])
    return SplitAgreement(
        relative_difference=float(np.max(np.abs(direct[visible] / path.f_distance[visible] - 1))),
        n_radii=int(visible.sum()),
        rounding=float(rounding),
        floor=float(10.0 ** np.ceil(np.log10(10 * rounding))),
        B_resolved=float(path.radii[np.argmax(path.f_distance < eps * path.radii)]),
    )


@dataclass(frozen=True)
class PathFollowing:
    """GD's learned part ``P_R(W_k)`` against the path point of its own norm (Ji et al., 2020).

    Every array is over the recorded iterates kept: those with ``||P_R(W_k)|| > 1`` whose norm
    exceeds every earlier one (the path is evaluated at increasing radii).
    """

    #: ``||P_R(W_k)||`` at the last recorded iterate.
    final_norm: float
    #: ``||P_R(W_k)||``.
    norms: np.ndarray
    #: ``1 - corr(P_R(W_k), W_B)`` at ``B = ||P_R(W_k)||``.
    gap_path: np.ndarray
    #: ``1 - corr(P_R(W_k), W^mm)``.
    gap_mm: np.ndarray
    #: ``||P_F(W_k) - W*||`` of GD's iterate.
    f_distance_gd: np.ndarray
    #: ``||P_F(W_B) - W*||`` of the path point.
    f_distance_path: np.ndarray
    #: ``1 - corr(W_B, W^mm)`` of the path points.
    gap_path_mm: np.ndarray


def gd_along_path(data: NTPData, trace: optim.Trace, W_mm: ArrayLike) -> PathFollowing:
    """Compare the iterates of ``trace`` (recorded with ``keep_iterates``) with the exact path.

    Raises
    ------
    InvalidDataError
        If the trace did not record its ``iterates`` or ``dist_F``.
    """
    if "iterates" not in trace.values or "dist_F" not in trace.values:
        raise InvalidDataError("gd_along_path needs the iterates: train(..., keep_iterates=True)")
    W_mm = check_decoder(data, W_mm, "W_mm")
    learned = np.array([project_R(data, W) for W in trace.iterates])  # P_R(W_k)
    norms = np.linalg.norm(learned, axis=(1, 2))
    running = np.maximum.accumulate(np.r_[-np.inf, norms[:-1]])
    keep = np.flatnonzero((norms > 1.0) & (norms > running))  # increasing norms
    along = regularization_path(data, norms[keep])
    W_k = learned[keep]
    return PathFollowing(
        final_norm=float(norms[-1]),
        norms=norms[keep],
        gap_path=1 - np.sum(W_k * along.W, axis=(1, 2)) / norms[keep] ** 2,
        gap_mm=1 - correlation(W_k, W_mm),
        f_distance_gd=trace.dist_F[keep],
        f_distance_path=along.f_distance,
        gap_path_mm=1 - correlation(along.W, W_mm),
    )
