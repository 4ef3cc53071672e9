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

#: The separability test (Definition 2) solves a normalized max-margin LP with
#: scipy.optimize.linprog: first with LP_METHOD, then with each of LP_FALLBACK_METHODS until one
#: decides. HiGHS's interior-point method without crossover decides instances of a phase diagram
#: (m = 100, d = 16, V = 100: 9600 inequalities) in seconds, where the simplex methods take tens of
#: seconds; its multipliers certify infeasibility to about 1e-11. The dual simplex method (exact
#: vertices) is the fallback for data within a hair of the separability boundary.
LP_METHOD: str = "highs-ipm"
LP_FALLBACK_METHODS: tuple[str, ...] = ("highs-ds",)
#: Extra HiGHS options per method (passed through linprog verbatim).
LP_OPTIONS = MappingProxyType({"highs-ipm": MappingProxyType({"run_crossover": "off"})})
#: Time limit (seconds) of each LP solve.
LP_TIME_LIMIT: float = 600.0
#: The normalized margin (rows of H divided by their largest entry, max |W_ik| = 1) that decides
#: separability: a direction verified to reach it proves "separable"; LP multipliers proving that
#: no direction exceeds it prove "not separable". In between, no answer is given.
SEP_MARGIN_TOL: float = 1e-9
#: A separating direction may break the equalities (6a) by at most this fraction of its margin.
LP_FEAS_TOL: float = 1e-7

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
