r"""The max-norm NTP-SVM: ``min ||W||_max`` subject to the NTP-SVM's constraints (6a) and (6b).

``||W||_max = max_{v,k} |W_vk|``, the entrywise l-infinity norm: the max-margin problem whose
geometry adaptive methods that act entry by entry are known to favour (Adam on separable binary
data with diminishing steps converges in direction to the max l-infinity margin classifier,
Zhang, Zou and Cao, 2024). Paper A's Theorem 2 names the Frobenius-norm ``W^mm``; this one is
what a reader compares Adam with to ask which limit it approaches.

A linear program in ``(w, s)``: ``min s`` s.t. ``-s <= w_i <= s``, ``A w >= 1``, ``B w = 0``
(:class:`~ntpnb.linear._constraints.NTPConstraints`), solved by HiGHS and certified by its
multipliers: for any ``lambda >= 0`` and ``mu``, every feasible ``w`` has
``sum(lambda) <= (A^T lambda + B^T mu)^T w <= ||A^T lambda + B^T mu||_1 ||w||_max``, so
``sum(lambda) / ||A^T lambda + B^T mu||_1`` is a lower bound on the optimal value. Its objective
is not strictly convex, so its solutions form a face; :func:`max_norm_svm` returns the face's
point of least Frobenius norm (unique), from a second problem over the face, certified by its
duality gap.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy

from .. import settings
from .._qp import scaled_back, solve_named
from ..errors import SolverError
from ._constraints import ntp_constraints
from ._ntp_data import NTPData, cached_per_data, frozen, normalized
from ._separability import require_separable

__all__ = ["MaxNormSVM", "max_norm_svm"]


@dataclass(frozen=True)
class MaxNormSVM:
    """The max-norm NTP-SVM's solution of least Frobenius norm, with its certificates."""

    #: ``W^inf``, shape ``(V, d)``: margins (6b) at least 1, equalities (6a) zero.
    W: np.ndarray
    #: The optimal value ``min ||W||_max`` (the LP's), and the lower bound its multipliers certify.
    value: float
    lower_bound: float
    #: ``||W^inf||_F^2`` and the lower bound of the second problem's multipliers (its dual value).
    norm_sq: float
    norm_sq_bound: float
    #: ``max(1 - min margin, max |equality residual|, ||W||_max / value - 1)`` of ``W``.
    violation: float

    @property
    def gap(self) -> float:
        """The larger relative duality gap of the two problems."""
        return max(1 - self.lower_bound / self.value, 1 - self.norm_sq_bound / self.norm_sq)


def _lp_rows(A: scipy.sparse.csr_matrix, B: scipy.sparse.csr_matrix) -> tuple:
    """``(c, A_ub, b_ub, A_eq)`` of the LP in ``(w, s)``: ``min s``, ``-A w <= -1``, ``+-w - s <= 0``."""
    n = A.shape[1]
    eye, ones = scipy.sparse.identity(n, format="csr"), scipy.sparse.csr_matrix(np.ones((n, 1)))
    zero = scipy.sparse.csr_matrix((A.shape[0], 1))
    A_ub = scipy.sparse.vstack(
        [
            scipy.sparse.hstack([-A, zero]),
            scipy.sparse.hstack([eye, -ones]),
            scipy.sparse.hstack([-eye, -ones]),
        ],
        format="csr",
    )
    b_ub = np.concatenate([-np.ones(A.shape[0]), np.zeros(2 * n)])
    A_eq = scipy.sparse.hstack([B, scipy.sparse.csr_matrix((B.shape[0], 1))], format="csr")
    cost = np.zeros(n + 1)
    cost[-1] = 1.0
    return cost, A_ub, b_ub, A_eq


def _max_norm_value(A: scipy.sparse.csr_matrix, B: scipy.sparse.csr_matrix) -> tuple[float, float]:
    """The LP's optimal value and the lower bound its multipliers certify (module docstring)."""
    cost, A_ub, b_ub, A_eq = _lp_rows(A, B)
    method = settings.MAX_NORM_LP_METHOD
    res = scipy.optimize.linprog(
        cost, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=np.zeros(B.shape[0]), bounds=(None, None), method=method
    )
    if res.status != 0:
        raise SolverError(
            f"linprog ({method}) failed on the max-norm NTP-SVM: status {res.status}, {res.message}"
        )
    lam = np.maximum(-res.ineqlin.marginals[: A.shape[0]], 0.0)
    combined = np.abs(A.T @ lam + B.T @ res.eqlin.marginals).sum()
    bound = float(lam.sum() / combined) if combined > 0 else 0.0
    return float(res.fun), bound


def _least_norm_on_face(
    A: scipy.sparse.csr_matrix, B: scipy.sparse.csr_matrix, top: float
) -> tuple[np.ndarray, float]:
    """``min ||w||^2`` s.t. ``A w >= 1``, ``B w = 0``, ``|w_i| <= top``: the point and its dual bound.

    With multipliers ``lambda, alpha, beta >= 0`` (of the margins and the two sides of the box)
    and ``mu``, ``g = A^T lambda + B^T mu - alpha + beta``, the dual value is
    ``sum(lambda) - top sum(alpha + beta) - ||g||^2 / 4``, at most the optimal value.
    """
    import cvxpy as cp

    w = cp.Variable(A.shape[1])
    constraints = [A @ w >= 1, w <= top, -w <= top]
    if B.shape[0]:
        constraints.append(B @ w == 0)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(w)), constraints)
    solve_named(problem, settings.QP_SOLVER, settings.QP_OPTIONS, "the max-norm NTP-SVM's least-norm point")
    if w.value is None:
        raise SolverError(f"{settings.QP_SOLVER} returned no point on the max-norm NTP-SVM's face")
    lam, alpha, beta = (np.maximum(np.asarray(c.dual_value, dtype=float), 0.0) for c in constraints[:3])
    # cvxpy's multiplier of B w == 0 enters its Lagrangian as + nu^T B w, so mu = -nu
    mu = -np.asarray(constraints[3].dual_value, dtype=float) if B.shape[0] else np.zeros(0)
    g = A.T @ lam + B.T @ mu - alpha + beta
    dual = float(lam.sum() - top * (alpha.sum() + beta.sum()) - g @ g / 4)
    return np.asarray(w.value, dtype=float), dual


def _violation(A: scipy.sparse.csr_matrix, B: scipy.sparse.csr_matrix, w: np.ndarray, value: float) -> float:
    """How far ``w`` breaks the constraints and the optimal value (relative)."""
    margin = 1.0 - float((A @ w).min()) if A.shape[0] else 0.0
    equality = float(np.abs(B @ w).max()) if B.shape[0] else 0.0
    return max(margin, equality, float(np.abs(w).max()) / value - 1.0)


@cached_per_data
def _solve(data: NTPData) -> MaxNormSVM:
    """The solution on normalized data (``max|H| ~ 1``, exact scaling), verified, scaled back."""
    require_separable(data)
    norm, c = normalized(data)
    cons = ntp_constraints(norm)
    A, B = cons.ineq, cons.eq
    value, bound = _max_norm_value(A, B)
    w, dual = _least_norm_on_face(A, B, value * (1 + settings.MAX_NORM_FACE_RTOL))
    out = MaxNormSVM(
        frozen(w.reshape(data.V, data.d)), value, bound, float(w @ w), dual, _violation(A, B, w, value)
    )
    if out.gap > settings.SVM_GAP_TOL or out.violation > settings.SVM_FEAS_TOL:
        raise SolverError(
            f"the max-norm NTP-SVM failed verification: duality gap {out.gap:.2g} (tolerance "
            f"{settings.SVM_GAP_TOL:g}), violation {out.violation:.2g} (tolerance {settings.SVM_FEAS_TOL:g})"
        )
    if c == 1.0:
        return out
    W = scaled_back(out.W, c, 1, "W^inf (it scales like 1 / max|H|)")
    scaled = {
        "value": value / c,
        "lower_bound": bound / c,
        "norm_sq": out.norm_sq / c**2,
        "norm_sq_bound": dual / c**2,
    }
    return MaxNormSVM(W=W, violation=out.violation, **scaled)


def max_norm_svm(data: NTPData) -> MaxNormSVM:
    """The max-norm NTP-SVM of ``data``: ``W^inf = argmin ||W||_F`` over ``argmin ||W||_max`` s.t. (6).

    Solved once per data set on normalized data (``W^inf(H) = W^inf(H / c) / c``), each of its
    two problems certified (module docstring): the relative duality gaps at most
    ``settings.SVM_GAP_TOL``, the constraints and the optimal value met to
    ``settings.SVM_FEAS_TOL``.

    Raises
    ------
    NotSeparableError
        If the data are not NTP-separable (no ``W`` meets the constraints).
    SolverError
        If a solver fails or its answer fails verification.
    """
    return _solve(data)
