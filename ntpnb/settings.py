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
#: The regularization path solver (ntpnb.linear.regpath). A certified W_B has
#: | ||W_B|| - B | / B <= PATH_NORM_RTOL and relative KKT residuals (on F, on F-perp and in
#: total) <= PATH_KKT_RTOL; Newton stops when its step is below PATH_NEWTON_RTOL relative to
#: each block of the variables (quadratic convergence makes the final error far smaller).
PATH_NORM_RTOL: float = 1e-12
PATH_KKT_RTOL: float = 1e-8
PATH_NEWTON_RTOL: float = 1e-11
PATH_MAX_NEWTON: int = 60
#: Safeguards of a Newton step: the largest change of any logit, and of log(lambda).
PATH_MAX_LOGIT_STEP: float = 2.0
PATH_MAX_LOG_LAMBDA_STEP: float = 2.0
#: The path is entered at this radius (or the first requested one, if smaller) from W = 0.
PATH_START_RADIUS: float = 0.5
#: How many times a step between two radii may be halved (geometrically) before giving up.
PATH_MAX_SUBDIVISIONS: int = 40
#: The smallest KKT multiplier a certified W_B may have: the smallest normal double divided
#: by the unit roundoff (about 1e-292), so that quantities of size lambda * eps (the scale of
#: the KKT residual being certified) are still normal doubles with full 53-bit precision.
PATH_MIN_LAMBDA: float = 2.2250738585072014e-308 / 2.220446049250313e-16
#: BLAS threads used by the path solver (its matrices have at most a few hundred rows).
PATH_BLAS_THREADS: int = 1
