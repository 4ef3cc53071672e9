"""Numerical settings: every tolerance and solver choice of the package, in one place.

The values are chosen for double precision. Every tolerance is relative to the problem's own
scale: the solvers see ``H`` divided by a power of two that brings ``max|H|`` near 1 (the NTP-SVM
and ``W*``) or each ``h_j`` divided by its largest entry (the separability LP), and scale back.
Changing a value here changes it everywhere.
"""

from __future__ import annotations

from types import MappingProxyType

#: Probability vectors must sum to one within PROB_SUM_RTOL (float32 precision: a float32
#: softmax misses 1 by 1e-8 to 1e-6 depending on the vocabulary size); those that miss by more
#: than PROB_SUM_ATOL (float64 rounding) are divided by their sum in float64.
PROB_SUM_RTOL: float = 1e-5
PROB_SUM_ATOL: float = 1e-12

#: Largest dense float64 array (bytes) the package allocates from user-given sizes (the count
#: matrix of NTPData.from_samples); larger requests raise InvalidDataError instead of exhausting
#: memory.
MAX_DENSE_BYTES: float = 2.0 * 2**30

#: A linear system ``A x = b`` counts as solvable when the least-squares residual is at most
#: ``COMPAT_RTOL * max(1, ||b||)``. Solvable systems leave residuals of order 1e-14 here;
#: unsolvable ones leave residuals of order one.
COMPAT_RTOL: float = 1e-8

#: The QP solver of the NTP-SVM (named, never the default), and its settings (it sees H
#: normalized to max|H| ~ 1, where these absolute tolerances are meaningful).
QP_SOLVER: str = "CLARABEL"
QP_OPTIONS = MappingProxyType(
    {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "max_iter": 500}
)

#: The separability test (Definition 2) first tries the least-squares direction (it separates
#: whenever H has full row rank), then solves a normalized max-margin LP with
#: scipy.optimize.linprog: first with LP_METHOD, then with each of LP_FALLBACK_METHODS until one
#: decides. HiGHS's interior-point method without crossover decides instances of a phase diagram
#: (m = 100, d = 16, V = 100: 9600 inequalities) in seconds, where the simplex methods take tens of
#: seconds; its multipliers certify infeasibility to about 1e-11. The dual simplex method (exact
#: vertices) is the fallback for data within a hair of the separability boundary.
LP_METHOD: str = "highs-ipm"
LP_FALLBACK_METHODS: tuple[str, ...] = ("highs-ds",)
#: Extra options per method (passed to linprog; HiGHS options it does not list pass verbatim).
#: The tighter IPM tolerance (default 1e-8) lets the multipliers certify "not separable" below
#: SEP_MARGIN_TOL on small instances too, where 1e-8 left bounds of 1e-9 to 4e-9 (3% of random
#: 2D triples fell back to the dual simplex); it costs about 25% more time on large ones.
LP_OPTIONS = MappingProxyType(
    {"highs-ipm": MappingProxyType({"run_crossover": "off", "ipm_optimality_tolerance": 1e-10})}
)
#: The LP maximizes the normalized margin only up to this cap: any verified margin above
#: SEP_MARGIN_TOL decides, and stopping at the cap halves the IPM's time on separable instances of
#: a phase diagram (m = 100, V = 100, d = 25-40: 5-10 s of CPU without the cap, 2.5-5 s with it).
LP_MARGIN_CAP: float = 1e-4
#: Time limit (seconds) of each LP solve.
LP_TIME_LIMIT: float = 600.0
#: The normalized margin (rows of H divided by their largest entry, max |W_ik| = 1) that decides
#: separability: a direction verified to reach it proves "separable"; LP multipliers proving that
#: no direction exceeds it prove "not separable". In between, no answer is given.
SEP_MARGIN_TOL: float = 1e-9
#: A separating direction may break the equalities (6a) by at most this fraction of its margin.
LP_FEAS_TOL: float = 1e-7

#: Verification tolerances of an NTP-SVM answer, all scale-free (relative to the margin 1, to
#: ||W|| or to the largest multiplier; the QP is solved for normalized H).
SVM_FEAS_TOL: float = 1e-7  # constraint violation: margins >= 1 - tol, ||P_F(W)|| / ||W|| <= tol
SVM_KKT_TOL: float = 1e-6  # stationarity / ||W||, complementarity / max(lambda), dual sign
SVM_GAP_TOL: float = 1e-7  # duality gap / primal objective

#: A multiplier larger than this times the largest one counts as "active" (support vector).
ACTIVE_DUAL_TOL: float = 1e-7
