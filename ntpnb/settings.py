"""Numerical settings: every tolerance and solver choice of the package, in one place.

The values are chosen for double precision. Every tolerance is relative to the problem's own
scale: the solvers see ``H`` divided by a power of two that brings ``max|H|`` near 1 (the NTP-SVM
and ``W*``) or each ``h_j`` divided by the power of two at its largest entry (the separability
and compatibility decisions, :func:`ntpnb.linear._constraints.scaled_rows`), and scale back.
"""

from __future__ import annotations

from types import MappingProxyType

#: float64's machine epsilon, 2^-52: the unit of the rounding bounds (a sum of ``n`` products
#: rounds by at most about ``n eps`` of its absolute terms); a fact, not a choice.
FLOAT64_EPS: float = 2.0**-52

#: float64's smallest normal number, 2^-1022: as normalized GD's ``eps`` it changes no step whose
#: gradient norm is above about 1e-291 (``||g|| + eps == ||g||``) and stops a trial whose gradient
#: underflowed to 0 (``ntpnb.attention.acyclic_end``); a fact, not a choice.
FLOAT64_TINY: float = 2.0**-1022

#: Probability vectors must sum to one within this (a float32 softmax misses 1 by 1e-8 to 1e-6).
PROB_SUM_RTOL: float = 1e-5
#: Rows that miss 1 by more than this (float64 rounding) are divided by their sum.
PROB_SUM_ATOL: float = 1e-12

#: Two directions with ``1 - corr`` at most this are parallel: which of them another direction
#: leans toward is then undefined (:func:`ntpnb.linear.experiments._curves.toward`); far above
#: the rounding of a correlation (a few eps), far below any pair of distinct limits the chapters
#: compare (1 - corr of order 0.1).
PARALLEL_TOL: float = 1e-9

#: Largest dense float64 array (bytes) allocated from user-given sizes (count matrices, random
#: embeddings and instances, prefix contexts); larger requests raise InvalidDataError first.
MAX_DENSE_BYTES: float = 2.0 * 2**30

#: Most points of a recording grid (:func:`ntpnb._optim.log_grid`; the figures use a few
#: hundred); larger requests raise InvalidDataError.
MAX_RECORD_POINTS: int = 100_000

#: Longest time (s) between two progress reports of a training loop (:class:`ntpnb._optim.Recorder`).
PROGRESS_SECONDS: float = 2.0

#: Shortest time (s) between two updates of what a reader sees while a chapter runs
#: (:mod:`ntpnb.chapter._progress`, :mod:`ntpnb.runner._display`).
SHOW_SECONDS: float = 0.5

#: Longest time (s) a command writing to a file or a pipe (no terminal) stays silent: a long run
#: then prints a line of what runs and the time left (:mod:`ntpnb.runner._display`), the book's
#: build a line of Sphinx's phase (:mod:`ntpnb.book._build`).
QUIET_SECONDS: float = 8.0

#: Longest time (s) a command's main thread waits in one call for its workers, tasks or child
#: processes before it runs Python code again. A stop signal (Ctrl-C, SIGTERM) that the kernel
#: delivers to another thread of the process (OpenBLAS starts one) does not interrupt the main
#: thread's wait; its handler runs only when the main thread next runs Python code.
STOP_CHECK_SECONDS: float = 0.2

#: Longest time (s) a command given ``--scheduler`` waits for the Dask scheduler to answer before
#: it says that none does (:mod:`ntpnb.runner._cluster`).
SCHEDULER_TIMEOUT_SECONDS: float = 10.0

#: Multiply-adds per compiled call of the linear decoder's loops (:mod:`ntpnb.linear._descent`):
#: about 0.05 s, so a long run answers Ctrl-C and its progress hook promptly.
DESCENT_CHUNK_MACS: int = 200_000_000

#: Largest ``m`` of :func:`ntpnb.linear._condition_thresholds.cover_probability` (its exact sum
#: takes time ~ m^2, about 1 s at m = 100000); larger m raise InvalidDataError.
COVER_MAX_M: int = 100_000

#: ``A x = b`` counts as solvable when the least-squares residual is at most
#: ``COMPAT_RTOL * max(1, ||b||)`` (solvable systems leave 1e-14, unsolvable ones order one).
COMPAT_RTOL: float = 1e-8

#: Most entries of the (rows) x (V d) matrix of the equality constraints (4) for which W* and the
#: compatibility residual come from its dense SVD; above, from LSQR (:mod:`ntpnb.linear._subspace`).
F_DENSE_MAX_ENTRIES: int = 2**24
#: LSQR's relative stopping tolerance for W* (1e6 times finer than COMPAT_RTOL's test).
F_LSQR_TOL: float = 1e-14
#: LSQR's iteration cap for W* (reaching it is an error).
F_LSQR_MAX_ITER: int = 20_000

#: The QP solver of the NTP-SVM (named, never the default).
QP_SOLVER: str = "CLARABEL"
#: CLARABEL's options for the NTP-SVM (absolute tolerances for normalized H).
QP_OPTIONS = MappingProxyType(
    {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "max_iter": 500}
)

#: The linprog method of the separability test's normalized max-margin LP (Definition 2), tried
#: after the least-squares direction: HiGHS's interior point without crossover (seconds on a
#: phase diagram's instances; simplex: tens of seconds).
LP_METHOD: str = "highs-ipm"
#: linprog methods tried in turn when LP_METHOD leaves the LP undecided (the dual simplex's
#: exact vertices, for data within a hair of the boundary).
LP_FALLBACK_METHODS: tuple[str, ...] = ("highs-ds",)
#: Method tried first to *decide* a small LP (33% less CPU than the interior point on chapter
#: 04); ``separating_direction`` still takes the interior point's point (a vertex's margins cancel badly).
LP_SMALL_METHOD: str = "highs-ds"
#: Most entries of W for which LP_SMALL_METHOD decides first (3 to 60 times slower on chapter 06's text).
LP_SMALL_MAX_VARIABLES: int = 500
#: Fewest entries of W for which the fast NTP-SVM is tried as a witness before the LP (its W^mm
#: verified; on non-separable data it fails and the LP decides): 0.04-0.07 s against 0.7-2.2 s on chapter 06.
SVM_WITNESS_MIN_VARIABLES: int = 1000
#: Active-set iterations of the NTP-SVM witness tried before a large LP.
SVM_WITNESS_MAX_ITER: int = 30
#: Most entries of the (6b) rows for which the least-distance separability test (one dense NNLS in
#: the directions (6a) allows, certified as the LP is) is used; its work grows like (V d)^2 x rows
#: (chapter 05: 0.3-30 ms, the LP 3-180 ms).
LEAST_DISTANCE_MAX_ENTRIES: int = 2**21
#: Extra linprog options per method; the IPM tolerance below the default 1e-8 lets multipliers
#: certify "not separable" below SEP_MARGIN_TOL on small instances too (25% more time on large ones).
LP_OPTIONS = MappingProxyType(
    {"highs-ipm": MappingProxyType({"run_crossover": "off", "ipm_optimality_tolerance": 1e-10})}
)
#: Cap of the normalized margin the LP maximizes (any verified margin above SEP_MARGIN_TOL
#: decides): it halves the IPM's time on separable phase-diagram instances.
LP_MARGIN_CAP: float = 1e-4
#: Time limit (seconds) of each LP solve.
LP_TIME_LIMIT: float = 600.0
#: The normalized margin (rows of :func:`~ntpnb.linear._constraints.scaled_rows`, ``max |W_ik| =
#: 1``) that decides separability for ``method="newton"``: a direction verified to reach it proves
#: "separable", multipliers proving none does "not separable" (other methods: SVM_REACH_RTOL).
SEP_MARGIN_TOL: float = 1e-9
#: A separating direction may break the equalities (6a) by at most this fraction of its verified
#: normalized margin, beyond rounding (:func:`ntpnb.linear._separability.verified_margin`).
SEP_EQUALITY_RTOL: float = 1e-7
#: An LP solver's point may break each constraint by at most this times ``1 + max|x|`` (HiGHS's
#: default primal feasibility; :func:`ntpnb.linear._condition_thresholds.recession_pairs`).
LP_POINT_FEAS_RTOL: float = 1e-7
#: ``is_separable`` answers "separable" only when every W with unit margins no longer than the
#: direction found has its margins evaluated to within this (relative, by the rounding model;
#: RANK_BAND times inside SVM_FEAS_TOL); otherwise the NTP-SVM is solved and verified, or the data
#: are reported numerically ambiguous.
SVM_REACH_RTOL: float = 1e-8

#: First hinge weight ``rho`` of the squared-hinge Newton continuation for separability
#: (:mod:`ntpnb.linear._hinge_newton`, on ``scaled_rows``). Every answer is verified
#: (SEP_MARGIN_TOL), so the HINGE_* settings change the work, never the answer.
HINGE_RHO_START: float = 10.0
#: Factor by which the continuation's hinge weight rho grows.
HINGE_RHO_FACTOR: float = 10.0
#: Largest hinge weight rho (the Newton systems' condition grows like rho).
HINGE_RHO_MAX: float = 1e10
#: Newton iterations allowed for one rho (one stage took about 140; 30 left decisions open).
HINGE_MAX_NEWTON_PER_RHO: int = 200
#: Newton iterations allowed in all.
HINGE_MAX_NEWTON: int = 2000
#: A Newton step counts as full (the current piece's minimizer reached) when the exact line
#: search returns 1 within this (rounding is far smaller, a breakpoint cut far larger).
HINGE_FULL_STEP_TOL: float = 1e-6
#: A step at most this times ``1 + ||(W, s)||`` ends the continuation's iterations.
HINGE_STEP_RTOL: float = 1e-12
#: Rounds of the Farkas polish of the Newton certificate (each drops the off-support entries
#: whose sign came out wrong).
HINGE_POLISH_ROUNDS: int = 6
#: Ridge (relative to the largest diagonal entry) that selects one solution of the Farkas
#: polish's consistent, possibly singular, system.
HINGE_POLISH_RIDGE: float = 1e-12

#: NTP-SVM verification (scale-free): ``margins >= 1 - tol``, ``|equality residuals| <= tol``.
SVM_FEAS_TOL: float = 1e-7
#: NTP-SVM verification: stationarity / ||W||, complementarity / max(lambda), dual sign.
SVM_KKT_TOL: float = 1e-6
#: NTP-SVM verification: duality gap / primal objective.
SVM_GAP_TOL: float = 1e-7

#: Numerical rank (:func:`ntpnb._linalg.numerical_rank`): the largest ``r`` with
#: ``s_{r-1} >= RANK_GAP * max(s_r, max(shape) eps s_0)``. The papers' data have gaps of 1e12 and
#: more, random embeddings' signal gaps below 1e3: 1e6 decides every such case.
RANK_GAP: float = 1e6
#: Factor by which another machine's rounding may exceed this one's: a rank, or an active set,
#: that would change within it raises :class:`~ntpnb.errors.RankAmbiguousError`.
RANK_BAND: float = 10.0

#: :mod:`ntpnb.linear._gram_blocks` inverts a block ``K[F, F]`` of ``K = H H^T`` by Cholesky only
#: when ``(min diag / max diag)^2`` of the factor exceeds this, else through the SVD of ``H[F]``
#: (far above rounding, so both routes agree where the choice could go either way).
GRAM_CHOL_RCOND: float = 1e-9
#: Largest fraction of a block's rows that may change for its inverse to be updated from the
#: previous one (:func:`ntpnb.linear._gram_blocks.block_inverse`) rather than factored afresh.
GRAM_UPDATE_FRACTION: float = 0.2

#: A multiplier larger than this times the largest one counts as "active" (support vector).
ACTIVE_DUAL_TOL: float = 1e-7
#: A row whose margin is within this of 1 at a least-distance answer starts the polish as active
#: (:func:`ntpnb._qp.solve_least_distance`); such margins are 1 to about eps * ||w||^2, below 1e-9.
ACTIVE_MARGIN_TOL: float = 1e-8
#: Largest minimum norm of a normalized problem that least-distance programming answers (larger:
#: nearly infeasible constraints, for the conic solver).
LEAST_DISTANCE_MAX_NORM: float = 1e3
#: Rounds of active-set correction of :func:`ntpnb._qp.polish` (one usually suffices).
POLISH_MAX_ROUNDS: int = 10

#: The fast NTP-SVM (:mod:`ntpnb.linear._active_set`): a constraint enters the active set when its
#: margin is below ``1 - tol`` (far below SVM_FEAS_TOL, above rounding noise).
ACTIVE_SET_VIOLATION_TOL: float = 1e-11
#: Factor by which the proximal weight shrinks after each proximal step (singular K; superlinear).
ACTIVE_SET_PROX_DECAY: float = 0.3
#: Smallest proximal weight, relative to its initial value.
ACTIVE_SET_PROX_FLOOR: float = 1e-6
#: Proximal weight (relative to the mean of diag K) when K is singular, or when the plain
#: primal-dual active-set run does not converge.
ACTIVE_SET_PROX_RIDGE: float = 1e-3
#: Factor by which the proximal weight grows after a proximal subproblem's active-set run fails
#: (cycles or reaches ACTIVE_SET_RUN_MAX_ITER): a larger weight makes the subproblem's Hessian
#: ``K + ridge I`` closer to diagonal, where the primal-dual active-set method converges.
ACTIVE_SET_PROX_GROWTH: float = 100.0
#: Largest proximal weight (relative to the mean of diag K): ``K + ridge I`` is then diagonally
#: dominant for every K of a few thousand contexts or fewer; failing there ends the method.
ACTIVE_SET_PROX_CEILING: float = 1e4
#: Iterations of one primal-dual active-set run (a proximal subproblem, or the plain dual) before
#: it counts as failed: on chapter 6's W^mm at seeds 0-4 and 100-119 every converging run took
#: 15-25 iterations; the runs that oscillate (seeds 102 and 108: a thousand pairs in and out at
#: every step) did not settle in 100, and settle at a larger weight.
ACTIVE_SET_RUN_MAX_ITER: int = 40
#: Most redraws of one draw of a statistical sweep whose decision is numerically ambiguous
#: (:func:`ntpnb.linear._condition_thresholds.decided_draw`; chapter 5 met one such draw in
#: several thousand: eleven in a row mean the model, not the draw, is the problem).
SWEEP_MAX_REDRAWS: int = 10
#: Iteration cap of the active-set method, every run counted (a run typically needs fewer than
#: 15; a growing weight costs a failed run of ACTIVE_SET_RUN_MAX_ITER).
ACTIVE_SET_MAX_ITER: int = 300

#: Paper B: tolerance of ``C E^T = I`` (Assumption 4, max-abs entrywise).
HEAD_IDENTITY_TOL: float = 1e-9
#: Smallest margin ``c_y^T e_y - max_{k != y} c_y^T e_k``, relative to ``max_k |c_y^T e_k|``,
#: accepted for Assumption 3.
HEAD_MARGIN_TOL: float = 1e-9

#: Newton's stopping gradient norm (relative to 1 + ||W||) in Paper B's exact convex solves.
NEWTON_GRAD_TOL: float = 1e-11
#: Newton's iteration cap in the exact convex solves of Paper B.
NEWTON_MAX_ITER: int = 200
#: Gradient norm (relative to 1 + ||W||) a returned convex solution must meet.
CONVEX_KKT_TOL: float = 1e-8
#: Newton's Armijo backtracking accepts a step when the loss falls by at least this times the
#: predicted decrease, or the gradient norm by this times the step length of itself.
NEWTON_ARMIJO: float = 1e-4
#: Newton returns its point when backtracking cuts the step below this fraction.
NEWTON_MIN_STEP: float = 1e-12

#: A gradient of the attention losses at W = 0 at most this times ``max ||x_t|| ||x_bar||`` is
#: zero up to rounding (symmetric data cancel to ~1e-17): `gd_reference` keeps the trial at W = 0.
STATIONARY_GRAD_RTOL: float = 1e-12

#: Paper B's regularization path: Newton stops when the penalized risk's gradient is below
#: ``RP_NEWTON_RTOL * lam * ||W||``, with no absolute floor (``lam ||W||`` falls like
#: ``exp(-R / ||W^mm||)``). A stopping rule only: every point is verified against RP_KKT_TOL.
RP_NEWTON_RTOL: float = 1e-10
#: The path's Newton also stops where the gradient is this times the size of its terms
#: (``LogLossFeatures.gradient_scale``): a step along rounding noise would only add noise.
RP_GRAD_NOISE_RTOL: float = 1e-15
#: ``||grad L + lam W|| / (lam ||W||)`` a point of Paper B's path must meet.
RP_KKT_TOL: float = 1e-5
#: ``| ||W|| - R | / R`` a point of Paper B's path must meet.
RADIUS_RTOL: float = 1e-6
#: Absolute part of Brent's tolerance on ``log lam`` for each radius (each point then verified).
RP_LOG_LAMBDA_XTOL: float = 1e-13
#: Relative part of the tolerance on ``log lam``, above scipy's smallest (4 eps: rounding noise).
RP_LOG_LAMBDA_RTOL: float = 1e-14

#: Default attention threshold of pseudo token-priority graphs (Paper B, Sec. 6): a token is
#: "selected" when its softmax probability exceeds it (the authors' code uses 1e-2, ``C_thres``).
PSEUDO_GRAPH_THRESHOLD: float = 1e-3

#: Paper A's regularization path (:mod:`ntpnb.linear._regpath`): largest ``| ||W_B|| - B | / B``
#: of a certified W_B.
PATH_NORM_RTOL: float = 1e-12
#: Relative KKT residuals (on F, on F-perp, in total) a certified W_B must meet.
PATH_KKT_RTOL: float = 1e-8
#: Relative step size after which Newton takes one more full step and stops (quadratic
#: convergence; a test on later, rounding-sized steps would make the count machine-dependent).
PATH_NEWTON_RTOL: float = 1e-6
#: Newton iterations allowed at one radius.
PATH_MAX_NEWTON: int = 60
#: In the Gram form, a Newton step is solved iteratively to this times ``min(1, s)`` of itself
#: (``s`` the last step's size): an added error ~ PATH_FORCING s^2 keeps exact steps' convergence
#: (Eisenstat and Walker's forcing terms, 1996).
PATH_FORCING: float = 1e-2
#: Once ``s`` is small, a step is solved to this / ``s`` of itself, the point to this.
PATH_STEP_RTOL: float = 1e-13
#: Most refinement rounds of a Gram-form Newton step with the factors of the matrix itself (each
#: to the asked tolerance, never below PATH_REFINE_RTOL).
PATH_MAX_REFINE: int = 12
#: An earlier Newton matrix's factors serve when the rounds needed (about log(rtol) /
#: log(change)) are at most m times this (a factorization, ``V m^3``, costs about fifteen rounds
#: at m = 500, two at m = 50, measured) and at most PATH_MAX_REUSE_ROUNDS.
PATH_REUSE_ROUNDS_PER_CONTEXT: float = 1 / 60
#: Most refinement rounds with an earlier Newton matrix's factors.
PATH_MAX_REUSE_ROUNDS: int = 8
#: Accuracy of the tangent ``K^{-1} w`` that predicts the next radius.
PATH_TANGENT_RTOL: float = 1e-8
#: Largest change of any logit in one Newton step.
PATH_MAX_LOGIT_STEP: float = 2.0
#: Largest change of log(lambda) in one Newton step.
PATH_MAX_LOG_LAMBDA_STEP: float = 2.0
#: The path is entered at this radius (or the first requested one, if smaller) from W = 0.
PATH_START_RADIUS: float = 0.5
#: How many times a step between two radii may be halved (geometrically) before giving up.
PATH_MAX_SUBDIVISIONS: int = 40
#: Smallest KKT multiplier of a certified W_B, tiny / eps (about 1e-292), so that lambda * eps
#: (the certified KKT residual's scale) is still a normal double.
PATH_MIN_LAMBDA: float = 2.2250738585072014e-308 / FLOAT64_EPS

#: Largest ``cond(H H^T)`` for which the path uses the Gram form (:mod:`ntpnb.linear._regpath_gram`;
#: with H of full row rank; products with K^{-1} then lose about 2e-10, far below PATH_KKT_RTOL);
#: other data use dense orthonormal bases of F and R ∩ F-perp.
PATH_GRAM_MAX_COND: float = 1e6
#: Finest relative tolerance to which the Gram form refines Newton's system on its residual.
PATH_REFINE_RTOL: float = 1e-12

#: BLAS threads inside the package's small dense solvers: one is as fast on an idle machine and
#: far faster on a busy one (the fast NTP-SVM at m = 500: 6.7 s against 165 s on a loaded 2-core machine).
BLAS_THREADS: int = 1
#: Exponential-cone solver of the best achievable loss's maximum-entropy dual
#: (:func:`ntpnb.linear._condition_thresholds.best_achievable_loss`).
EXP_CONE_SOLVER: str = "CLARABEL"
#: CLARABEL's options for the maximum-entropy dual (the cone's boundary limits accuracy to ~1e-9).
EXP_CONE_OPTIONS = MappingProxyType(
    {"tol_gap_abs": 1e-9, "tol_gap_rel": 1e-9, "tol_feas": 1e-9, "max_iter": 500}
)

#: Largest gap (nats) between the primal and dual values of the best achievable loss, and
#: largest constraint residual of the dual.
BEST_LOSS_TOL: float = 1e-6
#: L-BFGS iterations of the direct best achievable loss (no recession LP or conic solve; 0.05 s
#: where those took 11 s on chapter 06).
BEST_LOSS_DIRECT_MAX_ITER: int = 2000
#: Constraint residual of the corrected dual point.
BEST_LOSS_DUAL_FEAS_TOL: float = 1e-12
#: Smallest out-of-support probability that certifies no pair vanishes (rounding moves them by
#: ~1e-16; a vanishing pair falls below any floor).
BEST_LOSS_MIN_PROB: float = 1e-9
#: L-BFGS's ``gtol`` (largest projected gradient entry) on the pairs that stay.
BEST_LOSS_LBFGS_GTOL: float = 1e-11
#: L-BFGS's ``ftol``: relative decrease of the loss.
BEST_LOSS_LBFGS_FTOL: float = 1e-15
#: Largest gradient norm at which L-BFGS's minimizer is used.
BEST_LOSS_GRAD_TOL: float = 1e-6
#: Largest distance of the recession LP's 0/1 pair indicators from 0 or 1
#: (:func:`ntpnb.linear._condition_thresholds.recession_pairs`; further is an error).
RECESSION_INDICATOR_TOL: float = 1e-6

#: Absolute part of Brent's tolerance on ``log beta`` in :func:`ntpnb.linear._recipes.temper_to_entropy`.
TEMPER_LOG_BETA_XTOL: float = 1e-14
#: Relative part of Brent's tolerance on ``log beta`` (scipy's smallest, 4 eps).
TEMPER_LOG_BETA_RTOL: float = 4 * FLOAT64_EPS

#: Monte Carlo p-values (:mod:`ntpnb.statistics`): a simulated statistic at least the observed
#: one less this times ``max(1, observed)`` counts as at least as extreme.
PVALUE_TIE_RTOL: float = 1e-9
#: A p-value within this (relative) of its Monte Carlo floor counts as at the floor (the floor and
#: the p-value are computed alike, ``1 / (n + 1)`` and ``(1 + 0) / (n + 1)``: equal bits).
PVALUE_FLOOR_RTOL: float = 1e-9
#: A combined p-value printed as a bound is not printed below this (Fisher's combination
#: underflows there; the bound stays true).
PVALUE_PRINT_MIN: float = 1e-300

#: A margin of a zero-margin direction ``D`` (:func:`~ntpnb.linear.experiments._entropy.zero_margin_ray`)
#: counts as 0 when at most this times ``||D|| max_j ||h_j||`` (the others are near 1 and above).
ZERO_MARGIN_RTOL: float = 1e-9
#: :func:`~ntpnb.linear.experiments._path_comparisons.split_agreement` compares ``||P_F(W_B) - W*||``
#: with the split representation where it is above this times ``||W*||`` (visible in float64).
SPLIT_VISIBLE_RTOL: float = 1e-6
#: Tolerance (relative to ``1 + max|W|``) of Definition 2 for the decoders of
#: :func:`~ntpnb.linear.experiments._plane.free_rows_draws`.
FREE_ROWS_DEF2_RTOL: float = 1e-9
#: Relative resolution of a spread (:func:`ntpnb.linear.experiments._curves.rounding_spread`): the
#: tracked quantities' own BLAS rounding differs between CPUs below it; above it, its decade is a result.
SPREAD_RESOLUTION: float = 1e-14

#: GD's late-time orbit at one step (:func:`~ntpnb.linear.experiments._beyond.step_orbit`): the
#: F-part converges when its oscillation's amplitude (a second difference of the iterates' F-parts,
#: relative to ``||W*||``) is below this. Iterates that converge leave only the curvature of their
#: slow drift (about 1e-11 on chapter 8's instances after 10^4 steps), a period-2 orbit even 1%
#: above ``2/L_inf`` about 1e-2: the decision sits four decades from either.
ORBIT_AMPLITUDE_RTOL: float = 1e-6
#: An oscillating F-part has period ``p`` when ``||P_F(W_K) - P_F(W_{K-p})||`` is below this
#: fraction of the orbit's size (the largest ``||P_F(W_K) - P_F(W_{K-i})||``, ``i <= 8``). An
#: orbit's slow drift leaves 1e-6 to 1e-5 of it after 10^4 steps (up to 4e-4 after 2000) on
#: chapter 8's instances, a period that is not ``p`` 0.06 to 1. Just past the next doubling the
#: orbit's halves differ by less than any tolerance: there the period is ambiguous.
ORBIT_PERIOD_RTOL: float = 1e-2

#: The linprog method of the max-norm (entrywise l-infinity) NTP-SVM
#: (:func:`ntpnb.linear._max_norm_svm.max_norm_svm`): HiGHS's dual simplex, whose multipliers
#: certify the optimal value (about 1 s on chapter 4's instance).
MAX_NORM_LP_METHOD: str = "highs-ds"
#: The max-norm NTP-SVM's solutions form a face; its least Frobenius norm point is computed over
#: the face widened by this (relative) in ``||W||_max``, a hair above the LP's rounding.
MAX_NORM_FACE_RTOL: float = 1e-9
