"""Numerical settings: every tolerance and solver choice of the package, in one place.

The values are chosen for double precision and for problems of the papers' sizes
(entries of ``H`` of order one). Changing one here changes it everywhere.
"""

from __future__ import annotations

from types import MappingProxyType

#: Absolute tolerance for "sums to one" of probability vectors.
PROB_SUM_ATOL: float = 1e-8

#: A linear system ``A x = b`` counts as solvable when the least-squares residual is at most
#: ``COMPAT_RTOL * max(1, ||b||)``. Solvable systems leave residuals of order 1e-14 here;
#: unsolvable ones leave residuals of order one.
COMPAT_RTOL: float = 1e-8

#: The QP solver of the NTP-SVM (named, never the default), and its settings.
QP_SOLVER: str = "CLARABEL"
QP_OPTIONS = MappingProxyType(
    {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "max_iter": 500}
)

#: The LP method of the separability test (scipy.optimize.linprog), and the tolerance (relative
#: to 1 + max |W_ij|) within which its feasible point must satisfy the constraints.
LP_METHOD: str = "highs"
LP_FEAS_TOL: float = 1e-6

#: Verification tolerances of an NTP-SVM answer (relative to the margin 1 or to ||W||).
SVM_FEAS_TOL: float = 1e-7  # constraint violation: margins >= 1 - tol, |equalities| <= tol
SVM_KKT_TOL: float = 1e-6  # stationarity residual / ||W||, complementary slackness, dual sign
SVM_GAP_TOL: float = 1e-7  # duality gap / (1 + primal objective)

#: A dual variable larger than this counts as "active" when the solution is polished.
ACTIVE_DUAL_TOL: float = 1e-7

#: Paper B (ntpnb.attention): tolerance of ``C E^T = I`` (Assumption 4, max-abs entrywise) and the
#: smallest margin ``c_y^T e_y - max_{k != y} c_y^T e_k`` accepted for Assumption 3.
HEAD_IDENTITY_TOL: float = 1e-9
HEAD_MARGIN_TOL: float = 1e-9

#: Newton's method of the exact convex solves of Paper B (W^cyc, the regularization path): the
#: stopping tolerance on the gradient norm (relative to 1 + ||W||), the iteration cap, and the
#: verification tolerance of the returned point (gradient norm, same scale).
NEWTON_GRAD_TOL: float = 1e-11
NEWTON_MAX_ITER: int = 200
CONVEX_KKT_TOL: float = 1e-8

#: The regularization path: Newton stops when the gradient of the penalized risk is below
#: ``RP_NEWTON_RTOL * lam * ||W||``; a point is accepted when ``||grad L + lam W|| / (lam ||W||)``
#: is below ``RP_KKT_TOL`` (the gradient is computed to about 1e-16 absolute while ``lam ||W||``
#: falls like ``exp(-R / ||W^mm||)``, so the relative residual grows with ``R``) and
#: ``| ||W|| - R | / R`` below ``RADIUS_RTOL``.
RP_NEWTON_RTOL: float = 1e-10
RP_KKT_TOL: float = 1e-5
RADIUS_RTOL: float = 1e-6

#: Default attention threshold of pseudo token-priority graphs (Paper B, Sec. 6): a token is
#: "selected" by a trained W when its softmax probability exceeds this value.
PSEUDO_GRAPH_THRESHOLD: float = 1e-3
