"""Numerical settings: every tolerance and solver choice of the package, in one place.

The values are chosen for double precision. Every tolerance is relative to the problem's own
scale: the solvers see ``H`` divided by a power of two that brings ``max|H|`` near 1 (the NTP-SVM
and ``W*``) or each ``h_j`` divided by its largest entry (the separability LP), and scale back.
Changing a value here changes it everywhere.
"""

from __future__ import annotations

from types import MappingProxyType

#: float64's machine epsilon, 2^-52 (``numpy.finfo(float).eps``): the unit of the package's
#: rounding bounds (a sum of ``n`` products rounds by at most about ``n eps`` of its absolute
#: terms). A fact of the format, not a choice: the tolerances below are chosen for it.
FLOAT64_EPS: float = 2.0**-52

#: Probability vectors must sum to one within PROB_SUM_RTOL (float32 precision: a float32
#: softmax misses 1 by 1e-8 to 1e-6 depending on the vocabulary size); those that miss by more
#: than PROB_SUM_ATOL (float64 rounding) are divided by their sum in float64.
PROB_SUM_RTOL: float = 1e-5
#: Rows that miss 1 by more than this (float64 rounding) are divided by their sum.
PROB_SUM_ATOL: float = 1e-12

#: Largest dense float64 array (bytes) the package allocates from user-given sizes (the count
#: matrix of NTPData.from_samples, random embeddings and instances, the prefixes and counts of
#: ntpnb.linear.prefix_contexts); larger requests raise InvalidDataError, before any work,
#: instead of exhausting memory.
MAX_DENSE_BYTES: float = 2.0 * 2**30

#: Most iterations a recording grid (:func:`ntpnb.optim.log_grid`) may have: every record stores
#: every tracked quantity (for a batch of Paper B's trials, a (B, d, d) iterate), and the book's
#: figures use at most a few hundred points; larger requests raise InvalidDataError before the
#: grid is allocated (1e7 points took 240 MB).
MAX_RECORD_POINTS: int = 100_000

#: Longest time between two progress reports of a training loop that has a progress hook
#: (:class:`ntpnb.optim.Recorder`): it also reports at every recorded iteration.
PROGRESS_SECONDS: float = 2.0

#: Shortest time between two updates of what a reader sees while a chapter runs: a long loop's
#: line in Jupyter or its progress file (:mod:`ntpnb.chapter.progress`), and the status block
#: that ``ntpnb reproduce`` redraws on a terminal (:mod:`ntpnb.runner.display`).
SHOW_SECONDS: float = 0.5

#: Multiply-adds per compiled call of the linear decoder's training loops
#: (:mod:`ntpnb.linear.descent`): about 0.05 s, so that a long run still answers Ctrl-C and its
#: progress hook within a fraction of a second (a compiled loop cannot be interrupted).
DESCENT_CHUNK_MACS: int = 200_000_000

#: Largest number of points ``m`` of :func:`ntpnb.linear.condition_thresholds.cover_probability`: its exact
#: integer sum takes time ~ m^2 (0.03 s at m = 20000, about 1 s at m = 100000; the old
#: rational-arithmetic sum took 29 s at m = 20000); larger m raise InvalidDataError.
COVER_MAX_M: int = 100_000

#: A linear system ``A x = b`` counts as solvable when the least-squares residual is at most
#: ``COMPAT_RTOL * max(1, ||b||)``. Solvable systems leave residuals of order 1e-14 here;
#: unsolvable ones leave residuals of order one.
COMPAT_RTOL: float = 1e-8

#: W* and the compatibility residual come from the dense SVD of the equality constraints (4)
#: while that matrix, (rows) x (V d), has at most F_DENSE_MAX_ENTRIES entries; above, from LSQR
#: on the map ``W -> in-support logit differences`` (:mod:`ntpnb.linear.subspace`), which never
#: forms a basis of F or any (dim F) x (V d) matrix. LSQR stops at relative tolerance
#: F_LSQR_TOL (the residual test of COMPAT_RTOL is 1e6 times coarser) or after F_LSQR_MAX_ITER
#: iterations (an error).
F_DENSE_MAX_ENTRIES: int = 2**24
#: LSQR's relative stopping tolerance for W* and the compatibility residual.
F_LSQR_TOL: float = 1e-14
#: LSQR's iteration cap for W* (reaching it is an error).
F_LSQR_MAX_ITER: int = 20_000
#: W* comes first from the dim F x dim F Gram matrix of the rows of (4) (Cholesky and one
#: refinement step) when LAPACK estimates its reciprocal condition number above F_GRAM_RCOND (at
#: most 8 of 16 digits lost) and the residual passes the COMPAT_RTOL test; otherwise from the SVD
#: or LSQR above. On chapter 05's joint problem (674 rows at 1000 characters, V d = 13905; 3024
#: rows at 5000, V d = 45900) it took 1 s and 3 s where the SVD took 3 s and LSQR 20 s, the two
#: answers 3e-13 apart (relative).
F_GRAM_RCOND: float = 1e-8

#: The QP solver of the NTP-SVM (named, never the default), and its settings (it sees H
#: normalized to max|H| ~ 1, where these absolute tolerances are meaningful).
QP_SOLVER: str = "CLARABEL"
#: CLARABEL's options for the NTP-SVM (absolute tolerances for normalized H).
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
#: linprog methods tried in turn when LP_METHOD leaves the LP undecided.
LP_FALLBACK_METHODS: tuple[str, ...] = ("highs-ds",)
#: To *decide* a small LP (at most LP_SMALL_MAX_VARIABLES entries of W), LP_SMALL_METHOD is tried
#: first: on the separability sweep of chapter 04 (m = 30, V <= 10, d <= 36: at most 360
#: variables) the dual simplex decided the same instances in 33% less CPU time than the
#: interior-point method (4.3 s against 6.4 s for 492 instances), while on the text data of
#: chapter 05 (V = 27, d = 21-100) it was 3 to 60 times slower. Its separating point is a vertex
#: of the box -1 <= W <= 1 whose margins cancel badly, so ``separating_direction`` still takes
#: the interior-point method's point.
LP_SMALL_METHOD: str = "highs-ds"
#: Largest number of entries of W for which LP_SMALL_METHOD decides first.
LP_SMALL_MAX_VARIABLES: int = 500
#: Before a large LP (at least SVM_WITNESS_MIN_VARIABLES entries of W), the fast NTP-SVM solver
#: (at most SVM_WITNESS_MAX_ITER active-set iterations) is tried as a witness: on separable data
#: it returns W^mm, which is then verified like any candidate. On the text data of chapter 05
#: (V = 27, d = 38-100) it decided in 0.04-0.07 s where the LP took 0.7-2.2 s; on data that are
#: not separable it fails (0.1-0.4 s) and the LP decides.
SVM_WITNESS_MIN_VARIABLES: int = 1000
#: Active-set iterations of the NTP-SVM witness tried before a large LP.
SVM_WITNESS_MAX_ITER: int = 30
#: The separability test by least-distance programming (``is_separable(..., method="least-distance")``,
#: one dense non-negative least squares in the directions allowed by (6a), certified as the LP is)
#: is used while its dense (6b) rows, (rows) x (V d), have at most LEAST_DISTANCE_MAX_ENTRIES
#: entries; above, the LP decides. NNLS's work grows like (V d)^2 x (rows): on the random
#: instances of chapter 04 (m <= 60, V d <= 600, at most 2.6e5 entries) it decides in 0.3-30 ms
#: where the LP takes 3-180 ms; the text data of chapter 05 are far larger.
LEAST_DISTANCE_MAX_ENTRIES: int = 2**21
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
#: The normalized margin (rows of H divided by their largest entry, ``max |W_ik| = 1``) that decides
#: separability for ``decide_separability(data, method="newton")`` (chapter 05's text data): a
#: direction verified to reach it proves "separable"; multipliers proving that no direction
#: exceeds it prove "not separable". The other methods do not use it: they decide from float64's
#: resolution of the data (see SVM_REACH_RTOL and :mod:`ntpnb.linear.separability`).
SEP_MARGIN_TOL: float = 1e-9
#: A separating direction may break the equalities (6a) by at most this fraction of its verified
#: normalized margin, beyond the rounding of their evaluation: the rule of every direction of
#: :mod:`ntpnb.linear.separability`, the Newton continuation's too
#: (:func:`ntpnb.linear.separability.verified_margin`).
SEP_EQUALITY_RTOL: float = 1e-7
#: A point returned by an LP solver is accepted when it breaks each of its constraints by at most
#: LP_POINT_FEAS_RTOL times ``1 + max|x|``: the reduced separability LP's ``W`` (and the full-rank
#: witness returned in its place) must meet Definition 2 to it
#: (:func:`ntpnb.linear.separability.satisfies_definition_2`), the recession LP's point
#: (:func:`ntpnb.linear.condition_thresholds.recession_pairs`) its margins and (6a). It is HiGHS's default
#: primal feasibility tolerance, which the package leaves unchanged.
LP_POINT_FEAS_RTOL: float = 1e-7
#: ``is_separable`` answers "separable" only where the NTP-SVM is within float64's reach: when
#: every W with unit margins and no longer than the separating direction found (the NTP-SVM's
#: W^mm among them) has its margins evaluated in float64 to within SVM_REACH_RTOL (a bound of
#: the rounding model, relative to the unit margin), the NTP-SVM's verification
#: (SVM_FEAS_TOL) has room to spare (RANK_BAND times); otherwise the NTP-SVM is solved and its
#: answer must pass that verification, or the data are reported numerically ambiguous
#: (near-duplicate embeddings whose W^mm has norm ~ 1 / (their distance)).
SVM_REACH_RTOL: float = 1e-8

#: Separability for many contexts in fewer dimensions (:mod:`ntpnb.linear.hinge_newton`):
#: Newton's method on the squared-hinge problem with weight ``rho`` on the violations, for ``rho``
#: from HINGE_RHO_START, multiplied by HINGE_RHO_FACTOR, up to HINGE_RHO_MAX (in the units of rows
#: of H scaled to largest entry 1). Every answer is verified (SEP_MARGIN_TOL), so these settings
#: change the work, never the answer. On chapter 05's joint
#: problems (m = 258-764) the decisions ended by rho = 1e6; the start and the factor changed the
#: total work of a threshold sweep by less than 20% (1 to 100, factors 10 to 100). The Newton
#: systems' condition grows like rho: beyond HINGE_RHO_MAX no decision is attempted. At most
#: HINGE_MAX_NEWTON_PER_RHO Newton iterations per value of rho (a stage near a threshold took up
#: to about 140 at m = 258; capping at 30 left decisions undecided), HINGE_MAX_NEWTON in all.
HINGE_RHO_START: float = 10.0
#: Factor by which the continuation's hinge weight rho grows.
HINGE_RHO_FACTOR: float = 10.0
#: Largest hinge weight rho of the continuation (no decision beyond).
HINGE_RHO_MAX: float = 1e10
#: Newton iterations allowed for one value of rho.
HINGE_MAX_NEWTON_PER_RHO: int = 200
#: Newton iterations allowed in all.
HINGE_MAX_NEWTON: int = 2000
#: A Newton step of the continuation counts as full (the minimizer of the current piece reached)
#: when the exact line search returns 1 within HINGE_FULL_STEP_TOL (its rounding is far smaller;
#: a step on a wrong piece is cut by a breakpoint, far larger); a step of at most HINGE_STEP_RTOL
#: times ``1 + ||(W, s)||`` (relative to the iterate) ends the iterations.
HINGE_FULL_STEP_TOL: float = 1e-6
#: A step at most this times ``1 + ||(W, s)||`` ends the continuation's iterations.
HINGE_STEP_RTOL: float = 1e-12

#: Verification tolerances of an NTP-SVM answer, all scale-free (relative to the margin 1, to
#: ||W|| or to the largest multiplier; the QP is solved for normalized H).
#: Constraint violation: ``margins >= 1 - tol``, ``|equality residuals| <= tol``.
SVM_FEAS_TOL: float = 1e-7
#: Stationarity / ||W||, complementarity / max(lambda), dual sign.
SVM_KKT_TOL: float = 1e-6
#: Duality gap / primal objective.
SVM_GAP_TOL: float = 1e-7

#: Numerical rank (:mod:`ntpnb.linalg`): a rank ``r`` is decided only at a clear gap of the
#: singular values: the rank is the largest ``r`` with ``s_{r-1} >= RANK_GAP * max(s_r, floor)``
#: (rounding floor ``floor = max(shape) * eps * s_0``). Data of the papers have gaps of 1e12
#: and more (signal of order one against rounding noise of 1e-16 to 1e-13); the gaps *within*
#: the signal of random embeddings are below 1e3. A value between those (1e6) decides every
#: such case. The decision must also hold if another machine's rounding noise is RANK_BAND
#: times larger: the kept values stand RANK_GAP * RANK_BAND above the floor and no dropped
#: position has a gap above RANK_GAP / RANK_BAND; otherwise
#: :class:`~ntpnb.errors.RankAmbiguousError` is raised instead of a machine-dependent guess.
RANK_GAP: float = 1e6
#: Factor by which another machine's rounding may exceed this one's (see RANK_GAP).
RANK_BAND: float = 10.0

#: The Gram-block algebra (:mod:`ntpnb.linear.gram_blocks`) inverts a block ``K[F, F]`` of
#: ``K = H H^T`` (the active-set NTP-SVM, the squared-hinge Newton steps) by its Cholesky factor
#: only when the factor is resolved, ``(min diag / max diag)^2 > GRAM_CHOL_RCOND``; otherwise
#: through the SVD of the embeddings ``H[F]``, at the rank of the one rule (RANK_GAP). It bounds
#: how ill-conditioned a block inverted by Cholesky may be, far above the rounding level, so
#: that both routes give the same answer where the choice could go either way.
GRAM_CHOL_RCOND: float = 1e-9

#: A multiplier larger than this times the largest one counts as "active" (support vector).
ACTIVE_DUAL_TOL: float = 1e-7
#: A row whose margin is within this of 1 at a least-distance answer starts the polish as active
#: (:func:`ntpnb.qp.solve_least_distance`). Those margins are 1 up to about eps * ||w||^2
#: (the multipliers are NNLS's divided by 1 / (1 + ||w||^2)), below 1e-9 for the norms that
#: method accepts (LEAST_DISTANCE_MAX_NORM); a margin within a factor RANK_BAND of this threshold
#: sends the problem to the conic solver instead.
ACTIVE_MARGIN_TOL: float = 1e-8
#: Least-distance programming answers only normalized problems whose minimum norm is below this;
#: larger norms (nearly infeasible constraints) go to the conic solver.
LEAST_DISTANCE_MAX_NORM: float = 1e3
#: Rounds of active-set correction when an SVM answer of the QP solver is polished
#: (ntpnb.qp.polish): at (m, V, d, S) = (100, 20, 120, 8) CLARABEL's multipliers name
#: one inactive row among 763, which one round drops.
POLISH_MAX_ROUNDS: int = 10

#: The fast NTP-SVM (:mod:`ntpnb.linear.active_set`): a constraint counts as violated (and enters
#: the active set) when its margin is below ``1 - ACTIVE_SET_VIOLATION_TOL``, far below the
#: verification tolerance SVM_FEAS_TOL and above rounding noise. When K is singular, the proximal
#: weight shrinks by the factor ACTIVE_SET_PROX_DECAY after each proximal step, down to
#: ACTIVE_SET_PROX_FLOOR times its initial value (a shrinking weight makes the proximal point
#: method converge superlinearly).
ACTIVE_SET_VIOLATION_TOL: float = 1e-11
#: Factor by which the proximal weight shrinks after each proximal step.
ACTIVE_SET_PROX_DECAY: float = 0.3
#: Smallest proximal weight, relative to its initial value.
ACTIVE_SET_PROX_FLOOR: float = 1e-6

#: Paper B (ntpnb.attention): tolerance of ``C E^T = I`` (Assumption 4, max-abs entrywise; it is
#: dimensionless) and the smallest margin ``c_y^T e_y - max_{k != y} c_y^T e_k`` accepted for
#: Assumption 3, relative to ``max_k |c_y^T e_k|``.
HEAD_IDENTITY_TOL: float = 1e-9
#: Smallest relative margin of the head accepted for Assumption 3.
HEAD_MARGIN_TOL: float = 1e-9

#: Newton's method of the exact convex solves of Paper B (W^cyc, the regularization path): the
#: stopping tolerance on the gradient norm (relative to 1 + ||W||), the iteration cap, and the
#: verification tolerance of the returned point (gradient norm, same scale).
NEWTON_GRAD_TOL: float = 1e-11
#: Newton's iteration cap in the exact convex solves of Paper B.
NEWTON_MAX_ITER: int = 200
#: Gradient norm (relative to 1 + ||W||) a returned convex solution must meet.
CONVEX_KKT_TOL: float = 1e-8
#: Its damped steps (Armijo backtracking, halving the step) are accepted when the loss falls by
#: at least NEWTON_ARMIJO times the decrease the step predicts, or the gradient's norm by
#: NEWTON_ARMIJO times the step length of itself; Newton returns its point when backtracking has
#: cut the step below NEWTON_MIN_STEP of the Newton step.
NEWTON_ARMIJO: float = 1e-4
#: Newton returns its point when backtracking cuts the step below this fraction.
NEWTON_MIN_STEP: float = 1e-12

#: A gradient of the attention losses at W = 0 whose norm is at most STATIONARY_GRAD_RTOL times
#: ``max ||x_t|| ||x_bar||`` (the size of each sample's terms there) is zero up to rounding: the
#: terms of symmetric data (two samples that differ only in their label) cancel to ~1e-17.
#: Normalized GD would step along that noise; `gd_reference` keeps such a trial at W = 0 instead.
STATIONARY_GRAD_RTOL: float = 1e-12

#: The regularization path: Newton stops when the gradient of the penalized risk is below
#: ``RP_NEWTON_RTOL * lam * ||W||``; a point is accepted when ``||grad L + lam W|| / (lam ||W||)``
#: is below ``RP_KKT_TOL`` and ``| ||W|| - R | / R`` below ``RADIUS_RTOL``. Newton's tolerance has
#: no absolute floor: ``lam ||W||`` falls like ``exp(-R / ||W^mm||)`` and the gradient is
#: computed to relative rounding (:class:`ntpnb.attention.LogLossFeatures`), so an absolute
#: floor (it was 1e-15) stopped Newton before it moved beyond ``R ~ 34 ||W^mm||`` (chapter 06's
#: acyclic instance). Newton also stops where the gradient is at the rounding level of the
#: terms it sums, RP_GRAD_NOISE_RTOL times their size (``LogLossFeatures.gradient_scale``): a
#: step along rounding noise, divided by a multiplier near zero, would only add noise to ``W``.
#: This is a stopping rule, not a decision: every point is verified against RP_KKT_TOL.
RP_NEWTON_RTOL: float = 1e-10
#: The rounding level of the gradient's terms, relative to their size, at which the path's
#: Newton method stops (see RP_NEWTON_RTOL).
RP_GRAD_NOISE_RTOL: float = 1e-15
#: ``||grad L + lam W|| / (lam ||W||)`` a point of Paper B's path must meet.
RP_KKT_TOL: float = 1e-5
#: ``| ||W|| - R | / R`` a point of Paper B's path must meet.
RADIUS_RTOL: float = 1e-6
#: Brent's method finds ``log lam`` for each radius to ``RP_LOG_LAMBDA_XTOL +
#: RP_LOG_LAMBDA_RTOL * |log lam|`` (each point is then verified against RADIUS_RTOL and
#: RP_KKT_TOL); the relative part is kept above scipy's smallest, 4 eps, which would stop on
#: rounding noise.
RP_LOG_LAMBDA_XTOL: float = 1e-13
#: Relative part of the tolerance of ``log lam`` (see RP_LOG_LAMBDA_XTOL).
RP_LOG_LAMBDA_RTOL: float = 1e-14

#: Default attention threshold of pseudo token-priority graphs (Paper B, Sec. 6): a token is
#: "selected" by a trained W when its softmax probability exceeds this value. The choice
#: matters where the attention has not saturated (chapter 06 measures it); the authors' code
#: uses 1e-2 (``C_thres``), which chapter 06 passes explicitly.
PSEUDO_GRAPH_THRESHOLD: float = 1e-3

#: The regularization path solver (ntpnb.linear.regpath). A certified W_B has
#: | ||W_B|| - B | / B <= PATH_NORM_RTOL and relative KKT residuals (on F, on F-perp and in
#: total) <= PATH_KKT_RTOL. Newton stops one full step after the first full step whose size,
#: relative to each block of the variables, is below PATH_NEWTON_RTOL: quadratic convergence
#: leaves an error of about its square, which that last step removes. Later steps only show
#: rounding (the exponentially small F offset of W_B at large B; an ill-conditioned KKT matrix
#: where an in-support probability is 4.5e-9), whose size varies between machines, so a test on
#: them would make the iteration count a matter of chance (it was: 8 or 9 at one radius of
#: chapter 2 depending on the BLAS kernel, a step of 2e-11 against a threshold of 1e-11). The
#: certificate's KKT residual, not the step, decides the answer.
PATH_NORM_RTOL: float = 1e-12
#: Relative KKT residuals (on F, on F-perp, in total) a certified W_B must meet.
PATH_KKT_RTOL: float = 1e-8
#: Relative step size after which Newton takes one more full step and stops.
PATH_NEWTON_RTOL: float = 1e-6
#: Newton iterations allowed at one radius.
PATH_MAX_NEWTON: int = 60
#: Where Newton's linear systems are solved iteratively (the Gram form of the path), a step is
#: solved to PATH_FORCING * min(1, s) of itself, s the size of the last step (an estimate of
#: the point's error): the error this adds, that times the step, is of the order of
#: PATH_FORCING s^2, below the error an exact step leaves, so the iteration converges as fast
#: as with exact steps (Eisenstat and Walker's forcing terms, "Choosing the forcing terms in
#: an inexact Newton method", 1996); measured, the iteration counts equal those of exact solves
#: on the paths of the tests, the chapters and the benchmarks. Once s is small, PATH_STEP_RTOL
#: / s of the step is enough: it leaves the point accurate to PATH_STEP_RTOL. The last step's
#: K^{-1} w, which gives the tangent that predicts the next radius, is solved to
#: PATH_TANGENT_RTOL (the Gram form keeps the factors of an earlier Newton matrix only while
#: they can serve that tolerance too). Every returned point is certified all the same.
PATH_FORCING: float = 1e-2
#: Accuracy of a Newton step's iterative solve once the steps are small.
PATH_STEP_RTOL: float = 1e-13
#: Accuracy of the tangent that predicts the next radius.
PATH_TANGENT_RTOL: float = 1e-8
#: Safeguards of a Newton step: the largest change of any logit, and of log(lambda).
PATH_MAX_LOGIT_STEP: float = 2.0
#: Largest change of log(lambda) in one Newton step.
PATH_MAX_LOG_LAMBDA_STEP: float = 2.0
#: The path is entered at this radius (or the first requested one, if smaller) from W = 0.
PATH_START_RADIUS: float = 0.5
#: How many times a step between two radii may be halved (geometrically) before giving up.
PATH_MAX_SUBDIVISIONS: int = 40
#: The smallest KKT multiplier a certified W_B may have: the smallest normal double divided
#: by the machine epsilon (about 1e-292), so that quantities of size lambda * eps (the scale of
#: the KKT residual being certified) are still normal doubles with full 53-bit precision.
PATH_MIN_LAMBDA: float = 2.2250738585072014e-308 / FLOAT64_EPS

#: The regularization path is solved in the Gram form (ntpnb.linear.regpath_gram: V blocks of
#: size at most m instead of a dense Newton system of size (V - 1) m) when H has full row rank
#: and K = H H^T has a condition number of at most PATH_GRAM_MAX_COND: products with K^{-1} then
#: lose at most about eps * 1e6 = 2e-10 relative, far below the certificate's PATH_KKT_RTOL. Other
#: data are solved in orthonormal bases of F and R ∩ F-perp (any rank, dense).
PATH_GRAM_MAX_COND: float = 1e6
#: In the Gram form, Newton's system is solved again on its residual until each block of the
#: correction is at most the asked tolerance of the answer (relative), which is never taken below
#: PATH_REFINE_RTOL.
PATH_REFINE_RTOL: float = 1e-12

#: BLAS threads used inside the package's own small dense solvers (the regularization path,
#: the fast NTP-SVM, each trial of a sweep). Their matrices have at most a few hundred rows, so
#: one thread is as fast on an idle machine and far faster on a busy one, where the threads of
#: a multi-threaded BLAS wait for each other (measured: the fast NTP-SVM at m = 500 took 165 s
#: instead of 6.7 s on a loaded 2-core machine; the quick regularization-path chapter 156 s
#: instead of 60 s).
BLAS_THREADS: int = 1
#: The exponential-cone solver of the maximum-entropy dual of the best achievable loss
#: (:func:`ntpnb.linear.condition_thresholds.best_achievable_loss`), and its settings: the cone's
#: boundary (probabilities that vanish at the infimum) limits the accuracy to about 1e-9.
EXP_CONE_SOLVER: str = "CLARABEL"
#: CLARABEL's options for the maximum-entropy dual.
EXP_CONE_OPTIONS = MappingProxyType(
    {"tol_gap_abs": 1e-9, "tol_gap_rel": 1e-9, "tol_feas": 1e-9, "max_iter": 500}
)

#: The primal and dual values of the best achievable loss must agree to this (nats), and the
#: dual's constraint residual must be below it.
BEST_LOSS_TOL: float = 1e-6
#: The best achievable loss without a recession LP or a conic solve: L-BFGS over all pairs (at
#: most BEST_LOSS_DIRECT_MAX_ITER iterations), its probabilities corrected to satisfy the
#: maximum-entropy dual's constraints to BEST_LOSS_DUAL_FEAS_TOL, and accepted as a certificate
#: that no pair vanishes when every out-of-support probability is at least BEST_LOSS_MIN_PROB
#: (rounding moves them by about 1e-16; a pair that vanishes falls below any such floor as
#: L-BFGS proceeds). On chapter 05's data set below its threshold (m = 258, V = 27, d = 11)
#: the smallest was 5e-5, and the certificate took 0.05 s where the LP and the conic solve
#: took 11 s.
BEST_LOSS_DIRECT_MAX_ITER: int = 2000
#: Constraint residual of the corrected dual point.
BEST_LOSS_DUAL_FEAS_TOL: float = 1e-12
#: Smallest out-of-support probability that certifies no pair vanishes.
BEST_LOSS_MIN_PROB: float = 1e-9
#: L-BFGS minimizes the loss over the pairs that stay (all pairs, or those off the recession LP's
#: set) with scipy's stopping tolerances ``gtol = BEST_LOSS_LBFGS_GTOL`` (largest projected
#: gradient entry) and ``ftol = BEST_LOSS_LBFGS_FTOL`` (relative decrease of the loss); its
#: minimizer is used when the gradient's norm there is at most BEST_LOSS_GRAD_TOL.
BEST_LOSS_LBFGS_GTOL: float = 1e-11
#: L-BFGS's ``ftol``: relative decrease of the loss.
BEST_LOSS_LBFGS_FTOL: float = 1e-15
#: Largest gradient norm at which L-BFGS's minimizer is used.
BEST_LOSS_GRAD_TOL: float = 1e-6
#: The recession LP (:func:`ntpnb.linear.condition_thresholds.recession_pairs`) has 0/1 pair indicators at
#: any optimum; an indicator further than RECESSION_INDICATOR_TOL from both 0 and 1 is an error.
RECESSION_INDICATOR_TOL: float = 1e-6

#: :func:`ntpnb.linear.recipes.temper_to_entropy` finds ``log beta`` by Brent's method to
#: ``TEMPER_LOG_BETA_XTOL + TEMPER_LOG_BETA_RTOL * |log beta|``; the relative part is scipy's
#: smallest, 4 eps.
TEMPER_LOG_BETA_XTOL: float = 1e-14
#: Relative part of Brent's tolerance on ``log beta`` (scipy's smallest, 4 eps).
TEMPER_LOG_BETA_RTOL: float = 4 * FLOAT64_EPS

#: Monte Carlo p-values (:mod:`ntpnb.statistics`): a simulated statistic at least the observed
#: one less PVALUE_TIE_RTOL times ``max(1, observed)`` counts as at least as extreme (a tie that
#: rounding could break either way).
PVALUE_TIE_RTOL: float = 1e-9

#: The chapters' measurements (:mod:`ntpnb.linear.experiments`). A margin of a zero-margin
#: direction ``D`` (:func:`~ntpnb.linear.experiments.entropy.zero_margin_ray`) counts as 0 when
#: at most ZERO_MARGIN_RTOL times ``||D|| max_j ||h_j||``: those margins are 0 to rounding, the
#: others near 1 and above, and any cut between serves.
ZERO_MARGIN_RTOL: float = 1e-9
#: :func:`~ntpnb.linear.experiments.path_comparisons.split_agreement` compares the float64 matrix's distance
#: ``||P_F(W_B) - W*||`` with the path's split representation at the radii where that distance is
#: above SPLIT_VISIBLE_RTOL times ``||W*||``, where the matrix can show it.
SPLIT_VISIBLE_RTOL: float = 1e-6
#: A decoder made from W^mm by adding to one row a vector orthogonal to every embedding
#: (:func:`~ntpnb.linear.experiments.plane.free_rows_draws`) counts as meeting Definition 2 when
#: :func:`~ntpnb.linear.separability.satisfies_definition_2` holds to FREE_ROWS_DEF2_RTOL
#: (relative to ``1 + max|W|``).
FREE_ROWS_DEF2_RTOL: float = 1e-9
#: The relative resolution of a spread (:func:`ntpnb.linear.experiments.curves.rounding_spread`):
#: the tracked quantities are themselves computed with BLAS (norms, products), whose rounding
#: differs between CPU kernels by some ulps of sums over hundreds of terms. A spread below it is
#: not resolved (it may read 0 on one machine and 1e-15 on another); above it, its decade is a
#: result.
SPREAD_RESOLUTION: float = 1e-14
