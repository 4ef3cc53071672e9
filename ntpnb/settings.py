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

#: The exponential-cone solver of the maximum-entropy dual of the best achievable loss
#: (:func:`ntpnb.linear.capacity.best_achievable_loss`), and its settings: the cone's
#: boundary (probabilities that vanish at the infimum) limits the accuracy to about 1e-9.
EXP_CONE_SOLVER: str = "CLARABEL"
EXP_CONE_OPTIONS = MappingProxyType(
    {"tol_gap_abs": 1e-9, "tol_gap_rel": 1e-9, "tol_feas": 1e-9, "max_iter": 500}
)

#: The primal and dual values of the best achievable loss must agree to this (nats), and the
#: dual's constraint residual must be below it.
BEST_LOSS_TOL: float = 1e-6
