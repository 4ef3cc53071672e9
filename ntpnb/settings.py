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

#: LP methods tried in turn when ``LP_METHOD`` ends without a decision (HiGHS can stop with an
#: "unknown" model status on nearly infeasible feasibility problems).
LP_FALLBACK_METHODS: tuple[str, ...] = ("highs-ipm", "highs-ds")
LP_FEAS_TOL: float = 1e-6

#: Verification tolerances of an NTP-SVM answer (relative to the margin 1 or to ||W||).
SVM_FEAS_TOL: float = 1e-7  # constraint violation: margins >= 1 - tol, |equalities| <= tol
SVM_KKT_TOL: float = 1e-6  # stationarity residual / ||W||, complementary slackness, dual sign
SVM_GAP_TOL: float = 1e-7  # duality gap / (1 + primal objective)

#: A dual variable larger than this counts as "active" when the solution is polished.
ACTIVE_DUAL_TOL: float = 1e-7

#: BLAS threads used inside the fast NTP-SVM solver (:mod:`ntpnb.linear.svm_fast`). Its matrices
#: are small (at most m x m), so one thread is as fast on an idle machine and far faster on a
#: busy one, where threads of a multi-threaded BLAS wait for each other.
FAST_SVM_BLAS_THREADS: int = 1
