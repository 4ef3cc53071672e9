r"""An exact NTP-SVM solver for large problems: a primal-dual active-set method on the Gram matrix.

The NTP-SVM of Paper A (Eq. (NTP-SVM)) is ``min ||W||^2 / 2`` over ``W`` (V x d) subject to
(6a) ``(e_z - e_z')^T W h_j = 0`` for ``z, z'`` in ``S_j`` and (6b) ``(e_z - e_v)^T W h_j >= 1``
for ``z`` in ``S_j``, ``v`` not in ``S_j``. With ``s_j`` the common logit of the tokens of
``S_j`` (6a), the constraints of context ``j`` read ``l_jz = s_j`` on ``S_j`` and ``l_jv <= s_j -
1`` off it, where ``l_j = W h_j`` are the logits.

**The dual in the Gram matrix.** Every constraint functional is ``u h_j^T`` for some ``u`` in
``R^V``, so the optimum is ``W = C^T H`` for a coefficient matrix ``C`` (m x V), with logits ``L =
H W^T = K C``, ``K = H H^T``. The Lagrange dual of the NTP-SVM is

.. math::

    \min_C \tfrac12 \sum_v c_v^T K c_v - \sum_j \sum_{z \in S_j} C_{jz}
    \quad \text{s.t.} \quad C \mathbf 1 = 0, \quad C_{jv} \le 0 \ (v \notin S_j),

(``c_v`` the columns of ``C``) with ``lambda_jv = -C_jv >= 0`` the multipliers of (6b), the
support entries of ``C`` those of (6a), and the multipliers ``t`` of ``C 1 = 0`` giving the
common logits ``s = 1 + t``. It involves only ``K`` (no basis of F, no ``V d``-dimensional
constraint matrix); its Hessian is ``I_V`` kron ``K``, the tokens coupled only by the row sums.

**Active sets.** Given the active inequalities, the KKT conditions are linear: for each token
``v``, with ``F_v`` the contexts where ``v`` is in the support or ``(j, v)`` is active, ``K[F_v,
F_v] c_v[F_v] - t[F_v] = [v in S_j]`` (logits ``1 + t_j`` on the support, ``t_j`` on active
constraints), and the row sums of ``C`` vanish. Eliminating each ``c_v`` leaves one ``m x m``
positive definite system in ``t`` (the inverses ``K[F_v, F_v]^{-1}`` scattered into ``F_v``).
The primal-dual active-set method (Hintermueller, Ito and Kunisch 2002) keeps the constraints
with positive multipliers, adds the violated ones, and stops at the exact KKT point when neither
is left; a token whose ``F_v`` did not change keeps its factorization. It converges globally only
for special Hessians (M-matrices); on ``K`` of random embeddings with ``m`` near ``2 d`` a run
can oscillate, a thousand pairs in and out at every step. So a run that cycles or does not settle
in :data:`~ntpnb.settings.ACTIVE_SET_RUN_MAX_ITER` iterations is repeated on a proximal
subproblem with a larger weight (:func:`_proximal`), whose Hessian ``K + ridge I`` is nearer
diagonal; :func:`solve_verified` falls back to the cvxpy reference when the method fails anyway.
Singular blocks (``m > rank H``, repeated embeddings) use a pseudo-inverse with the consistency
conditions of their null space (:mod:`._gram_blocks`).

**Near-duplicate embeddings.** ``K`` squares the condition of ``H``, and ``W = C^T H`` cancels
coefficients of size ``1 / sigma_min^2`` down to a ``W`` of size ``1 / sigma_min``: at
``sigma_min / sigma_max = 1e-6`` no digit of the margins is left. When ``H`` has full row rank
(:func:`ntpnb._linalg.nonzero_count`) but ``K`` is not resolved by Cholesky, the method runs in
*square-root form* (:func:`_square_root`): with the SVD ``H[F_v] = U diag(s) Vt``, ``w_v =
Vt^T diag(1/s) U^T (r_v + t[F_v])`` is formed directly (its logits on ``F_v`` are ``r_v +
t[F_v]`` up to rounding), and ``t`` minimizes ``||W||``: ``min_t sum_v ||diag(1/s) U^T (r_v +
t[F_v])||^2``, solved by QR at its known rank ``m`` (conditioned like ``H``, not its square).

The answer, a :class:`ntpnb._qp.SVMSolution`, is verified by :func:`ntpnb._qp.certify` (multipliers
read off ``C``) before it is returned; the method never returns an unverified point.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy

from .. import settings
from .._linalg import least_squares, nonzero_count, numerical_rank, thin_svd
from .._parallel import limit_threads
from .._qp import MinNormQP, SVMSolution, certify, solve_reference, trivial_solution
from ..errors import RankAmbiguousError, SolverError
from ._constraints import NTPRows
from ._gram_blocks import GramBlock, cholesky, gram_block, scatter_add, update_block
from ._ntp_data import NTPData, cached_per_data, nearest_power_of_two

#: Name under which results of this solver are reported.
SOLVER_NAME = "ntpnb-active-set"

#: Where a larger proximal weight and the fallback to the cvxpy reference are logged (level INFO).
LOG = logging.getLogger(__name__)


@dataclass
class _Subproblem:
    """The KKT equations of the dual with a proximal term ``ridge / 2 ||C - center||^2``.

    ``ridge = 0`` is the dual itself. Factorizations are kept per context set ``F``.
    """

    K: np.ndarray
    H: np.ndarray
    mask: np.ndarray
    ridge: float
    center: np.ndarray
    cache: dict[bytes, GramBlock] = field(default_factory=dict)
    last: dict[int, GramBlock] = field(default_factory=dict)

    def solve(self, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(C, t)`` with the ``active`` inequalities as equalities (least squares if inconsistent)."""
        m, V = self.mask.shape
        blocks, rhs, S, b = self._blocks(self.mask | active)
        t, z = _schur_solve(blocks, rhs, S, b)
        C = np.zeros((m, V))
        for v, block in enumerate(blocks):
            cv = block.P @ (rhs[v] + t[block.F])
            if v in z:
                cv = cv + block.N @ z[v]
            C[block.F, v] = cv
        return C, t

    def _blocks(self, free: np.ndarray) -> tuple[list[GramBlock], list[np.ndarray], np.ndarray, np.ndarray]:
        """Each token's factorized block on its ``free`` contexts, its right side, and the Schur system.

        Returns ``(blocks, rhs, S, b)``: ``S = sum_v P_v`` and ``b = sum_v P_v rhs_v`` scattered
        on the contexts. A block is reused from the last call's (same contexts) or updated from the
        token's last one where it can be; the kept factorizations become this call's.
        """
        mask, ridge = self.mask, self.ridge
        m, V = mask.shape
        S = np.zeros((m, m))
        b = np.zeros(m)
        blocks: list[GramBlock] = []
        rhs: list[np.ndarray] = []
        used: dict[bytes, GramBlock] = {}
        for v in range(V):
            F = np.flatnonzero(free[:, v])
            key = F.tobytes()  # a factorization kept, or updated from the token's last one
            block = used.get(key) or self.cache.get(key)
            if block is None and v in self.last:
                block = update_block(self.K, self.last[v], F, ridge)
            if block is None:
                block = gram_block(self.K, self.H, F, ridge)
            used[key] = self.last[v] = block
            blocks.append(block)
            r = mask[F, v] + ridge * self.center[F, v]
            rhs.append(r)
            scatter_add(S, F, block.P)
            b[F] += block.P @ r
        self.cache = used
        return blocks, rhs, S, b

    def pdas(self, active: np.ndarray, max_iter: int) -> tuple[np.ndarray, np.ndarray, int]:
        """Primal-dual active-set iterations from ``active``; ``(C, active, iterations)``."""

        def step(active: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            C, t = self.solve(active)
            grad = self.K @ C - self.ridge * self.center - t[:, None]  # >0: constraint wants in
            return grad > settings.ACTIVE_SET_VIOLATION_TOL, C, C

        return _pdas(step, self.mask, active, max_iter, "active-set method")


def _schur_solve(
    blocks: list[GramBlock], rhs: list[np.ndarray], S: np.ndarray, b: np.ndarray
) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """``(t, z)``: the thresholds of the Schur system ``S t = -b`` and the singular blocks' multipliers.

    Without a singular block, ``S`` is solved as positive definite (least squares if that fails);
    otherwise with the consistency ``N_v^T (rhs_v + t[F_v]) = 0`` of each singular block ``v``,
    whose multipliers ``z_v`` are returned by token (:func:`_consistent_solve`).
    """
    m = S.shape[0]
    singular = [v for v, block in enumerate(blocks) if block.N.shape[1]]
    if not singular:
        try:
            return scipy.linalg.solve(S, -b, assume_a="pos", check_finite=False), {}
        except (scipy.linalg.LinAlgError, ValueError):
            return least_squares(S, -b, what="the Schur complement of the active-set equations"), {}
    ends = np.cumsum([blocks[v].N.shape[1] for v in singular])
    B = np.zeros((m, int(ends[-1])))
    for v, end in zip(singular, ends, strict=True):
        B[blocks[v].F, end - blocks[v].N.shape[1] : end] = blocks[v].N
    b2 = np.concatenate([-blocks[v].N.T @ rhs[v] for v in singular])
    t, z_all = _consistent_solve(S, B, b, b2)
    return t, dict(zip(singular, np.split(z_all, ends[:-1]), strict=True))


def _consistent_solve(
    S: np.ndarray, B: np.ndarray, b: np.ndarray, b2: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(t, z)``: the minimum-norm least-squares solution of ``S t + B z = -b``, ``B^T t = b2``.

    ``S`` is the Schur complement of the blocks ``P_v`` and ``B`` holds the null-space bases
    ``N_v`` of the singular blocks. Every context lies in some block, so ``B^T t = 0`` and
    ``t^T S t = 0`` force ``t = 0``: the rank of the system is ``m + rank B``, with ``rank B``
    decided by :func:`ntpnb._linalg.numerical_rank` on ``B`` alone (orthonormal blocks, entries
    of order 1). ``B`` is scaled by a power of two near ``max|S|`` (of order ``1 / sigma^2``)
    first, which changes no solution, so that the system's spectrum shows that rank.
    """
    m = S.shape[0]
    what = "the null spaces of the singular active-set blocks"
    rank_B = numerical_rank(thin_svd(B, what)[1], B.shape, what=what)
    c = nearest_power_of_two(float(np.abs(S).max()))
    KKT = np.block([[S, c * B], [c * B.T, np.zeros((B.shape[1], B.shape[1]))]])
    rhs = np.concatenate([-b, c * b2])
    sol = least_squares(KKT, rhs, what="the active-set equations", rank=m + rank_B)
    return sol[:m], c * sol[m:]


def _pdas(
    step: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, Any]],
    mask: np.ndarray,
    active: np.ndarray,
    max_iter: int,
    method: str,
) -> tuple[Any, np.ndarray, int]:
    """Primal-dual active-set iterations from ``active``: ``(answer, active, iterations)``.

    ``step(active)`` gives where each inequality is violated, ``C`` (its multipliers are
    ``-C``, which must be positive on the active set) and the answer returned at convergence.
    """
    seen: set[bytes] = set()
    for it in range(1, max_iter + 1):
        wants_in, C, answer = step(active)
        violated = ~mask & ~active & wants_in
        dropped = active & (C >= 0)
        if not violated.any() and not dropped.any():
            return answer, active, it
        seen.add(np.packbits(active).tobytes())
        active = (active & ~dropped) | violated
        if np.packbits(active).tobytes() in seen:
            raise _RunFailedError(f"the {method} cycled after {it} iterations", it)
    raise _RunFailedError(f"the {method} did not converge in {max_iter} iterations", max_iter)


class _RunFailedError(SolverError):
    """A primal-dual active-set run that cycled or reached its cap, with the iterations it took."""

    def __init__(self, message: str, iterations: int) -> None:
        super().__init__(message)
        self.iterations = iterations


def _dual(
    K: np.ndarray,
    H: np.ndarray,
    mask: np.ndarray,
    definite: bool,
    max_iter: int,
    accept: Callable[[np.ndarray], bool],
) -> np.ndarray:
    """Solve the dual: ``C``, with ``W = C^T H`` and the multipliers read off ``C``.

    With ``K`` positive definite (``definite``) the dual is strongly convex and one primal-dual
    active-set run usually solves it. Otherwise (``C`` not unique, KKT equations possibly
    inconsistent), or when that run cycles or does not settle, the method runs on proximal
    subproblems ``+ ridge / 2 ||C - C_k||^2`` (:func:`_proximal`).
    """
    if definite:
        run = min(settings.ACTIVE_SET_RUN_MAX_ITER, max_iter)
        try:
            return _Subproblem(K, H, mask, 0.0, np.zeros(mask.shape)).pdas(np.zeros_like(mask), run)[0]
        except _RunFailedError as exc:
            if max_iter <= exc.iterations:
                raise
            max_iter -= exc.iterations
    return _proximal(K, H, mask, max_iter, accept)


def _proximal(
    K: np.ndarray, H: np.ndarray, mask: np.ndarray, max_iter: int, accept: Callable[[np.ndarray], bool]
) -> np.ndarray:
    """The proximal point method on the dual, each subproblem solved by a primal-dual active-set run.

    After each subproblem the exact equations on its active set are solved, and their ``C``
    returned when ``accept`` passes. The weight ``ridge`` shrinks after a subproblem that converged
    (:data:`~ntpnb.settings.ACTIVE_SET_PROX_DECAY`, down to its floor) and grows after one whose
    run cycled or did not settle in :data:`~ntpnb.settings.ACTIVE_SET_RUN_MAX_ITER` iterations
    (:data:`~ntpnb.settings.ACTIVE_SET_PROX_GROWTH`, that subproblem solved again from the same
    centre): the primal-dual active-set method converges on a diagonal Hessian, and ``K + ridge I``
    approaches one as the weight grows. Exact equations whose rank float64 does not determine
    (:class:`~ntpnb.errors.RankAmbiguousError`) decide nothing: the method goes on. Every
    iteration of every run counts towards ``max_iter``.
    """
    scale = float(np.trace(K)) / K.shape[0]
    ridge = settings.ACTIVE_SET_PROX_RIDGE * scale
    floor = ridge * settings.ACTIVE_SET_PROX_FLOOR
    ceiling = settings.ACTIVE_SET_PROX_CEILING * scale
    zeros = np.zeros(mask.shape)
    active, center, total, tried = np.zeros_like(mask), zeros, 0, set()
    exact = _Subproblem(K, H, mask, 0.0, zeros)
    while total < max_iter:
        run = min(settings.ACTIVE_SET_RUN_MAX_ITER, max_iter - total)
        try:
            center, active, n_iter = _Subproblem(K, H, mask, ridge, center).pdas(active, run)
        except _RunFailedError as exc:
            total += exc.iterations
            if total >= max_iter:
                break
            ridge = _raised_weight(exc, ridge, ceiling, mask.shape[0])
            continue
        total += n_iter
        ridge = max(ridge * settings.ACTIVE_SET_PROX_DECAY, floor)
        C = _exact_solution(exact, active, tried, n_iter == 1 and ridge == floor, total)
        if C is not None and accept(C):
            return C
    raise SolverError(f"the proximal active-set method did not converge in {min(total, max_iter)} iterations")


def _raised_weight(exc: _RunFailedError, ridge: float, ceiling: float, m: int) -> float:
    """The proximal weight after a failed run, grown by :data:`~ntpnb.settings.ACTIVE_SET_PROX_GROWTH`.

    Raises
    ------
    SolverError
        If the grown weight would pass ``ceiling``.
    """
    if ridge * settings.ACTIVE_SET_PROX_GROWTH > ceiling:
        raise SolverError(f"the proximal active-set method failed at its largest weight ({exc})") from None
    ridge *= settings.ACTIVE_SET_PROX_GROWTH
    LOG.info("active set: %s; proximal weight raised to %.3g (m=%d)", exc, ridge, m)
    return ridge


def _exact_solution(
    exact: _Subproblem, active: np.ndarray, tried: set[bytes], settled: bool, total: int
) -> np.ndarray | None:
    """``C`` of the exact equations on ``active``, or ``None`` when they decide nothing.

    ``None`` when this active set's equations were solved already (``tried``, updated in place)
    or their rank is not determined in float64. ``settled``: the last subproblem took one
    iteration at the smallest weight, so nothing moves the active set any more.

    Raises
    ------
    SolverError
        If the method ``settled`` on an active set already tried.
    """
    key = np.packbits(active).tobytes()
    if key in tried:  # the exact equations of this active set were solved already
        if settled:  # and nothing moves it any more
            raise SolverError(
                f"the proximal active-set method settled, at its smallest weight after {total} "
                "iterations, on an active set whose exact equations fail verification or are "
                "not ranked in float64"
            )
        return None
    tried.add(key)
    try:
        return exact.solve(active)[0]
    except RankAmbiguousError:
        return None


_Factors = Callable[[bytes], tuple[np.ndarray, np.ndarray]]


def _square_root_thresholds(
    blocks: list[tuple[int, np.ndarray]], block: _Factors, mask: np.ndarray
) -> np.ndarray:
    """``t = argmin ||M t + c||`` of the square-root equations, by a QR decomposition.

    ``blocks`` holds each token ``v`` with free contexts ``F``, ``block(F.tobytes())`` its factors
    ``(Z, Vt)``. The rank is ``m``: every context is in some block.

    Raises
    ------
    SolverError
        If ``R`` has a zero or non-finite diagonal (the equations are singular).
    """
    m = mask.shape[0]
    M = np.zeros((sum(F.size for _, F in blocks), m))
    c, row = [], 0
    for v, F in blocks:
        Z, _ = block(F.tobytes())
        M[row : row + F.size, F] = Z
        c.append(Z @ mask[F, v])
        row += F.size
    Q, R = scipy.linalg.qr(M, mode="economic", check_finite=False)
    if not np.all(np.isfinite(R)) or np.any(np.diag(R) == 0):
        raise SolverError("the square-root active-set equations are singular")
    return scipy.linalg.solve_triangular(R, -(Q.T @ np.concatenate(c)), check_finite=False)


def _square_root_point(
    blocks: list[tuple[int, np.ndarray]], block: _Factors, mask: np.ndarray, t: np.ndarray, d: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(W, C)`` of the square-root equations at thresholds ``t``: ``y = Z (mask + t)`` per block."""
    m, V = mask.shape
    W = np.zeros((V, d))
    C = np.zeros((m, V))
    for v, F in blocks:
        Z, Vt = block(F.tobytes())
        y = Z @ (mask[F, v] + t[F])
        W[v] = Vt.T @ y
        C[F, v] = Z.T @ y
    return W, C


def _square_root(rows: NTPRows, max_iter: int) -> tuple[np.ndarray, np.ndarray]:
    """The primal-dual active-set method in square-root form (module docstring): ``(W, C)``.

    For ``H`` of full row rank; nothing goes through ``K = H H^T``. From no active inequality, an
    inequality enters when its logit exceeds ``t_j`` by more than its rounding bound (and
    :data:`~ntpnb.settings.ACTIVE_SET_VIOLATION_TOL`), leaves when ``-C_jv <= 0``.
    """
    H = rows.data.H
    mask = np.asarray(rows.data.support_mask)
    V = mask.shape[1]

    @functools.cache
    def block(key: bytes) -> tuple[np.ndarray, np.ndarray]:
        """``Z = diag(1/s) U^T`` and ``Vt`` of ``H[F] = U diag(s) Vt`` (every singular value kept)."""
        F = np.frombuffer(key, dtype=np.intp)
        U, s, Vt = thin_svd(H[F], f"the embeddings of a block of {F.size} contexts")
        with np.errstate(divide="ignore"):
            return (U / s).T, Vt

    def step(active: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
        free = mask | active
        blocks = [(v, np.flatnonzero(free[:, v])) for v in range(V) if free[:, v].any()]
        t = _square_root_thresholds(blocks, block, mask)
        W, C = _square_root_point(blocks, block, mask, t, H.shape[1])
        noise = 2 * H.shape[1] * settings.FLOAT64_EPS * (np.abs(H) @ np.abs(W).T)
        threshold = np.maximum(settings.ACTIVE_SET_VIOLATION_TOL, 2 * noise)
        return H @ W.T - t[:, None] > threshold, C, (W, C)

    (W, C), _, _ = _pdas(step, mask, np.zeros_like(mask), max_iter, "square-root active-set method")
    return W, C


# ---------------------------------------------------------------------------- the solver
def _row_sum_residual(C: np.ndarray) -> float:
    """``max_j |sum_v C_jv| / max |C|``: the distance from ``C 1 = 0``, which the certificate assumes."""
    return float(np.abs(C.sum(axis=1)).max()) / (float(np.abs(C).max(initial=0.0)) or 1.0)


def solve_active_set(data: NTPData, max_iter: int = settings.ACTIVE_SET_MAX_ITER) -> SVMSolution:
    """Solve the NTP-SVM of ``data`` exactly by the active-set method of the module docstring.

    The data are assumed NTP-separable (:func:`ntpnb.is_separable`); otherwise the method fails
    with :class:`~ntpnb.errors.SolverError`. The answer passes :meth:`ntpnb._qp.SVMSolution.passes`
    (tolerances of :mod:`ntpnb.settings`, read at the call).

    Parameters
    ----------
    max_iter
        Iteration cap of the active-set loop.

    Raises
    ------
    SolverError
        If the method cycles, does not converge, or its answer fails verification.

    Notes
    -----
    The BLAS runs single-threaded inside (:data:`ntpnb.settings.BLAS_THREADS`): the blocks are
    small, and on busy cores a threaded BLAS was 25 times slower at (500, 100, 600, 10).
    """
    rows = NTPRows(data)
    if rows.n_ineq == 0:  # no inequality: W^mm = 0
        return trivial_solution(rows)

    def certified(W: np.ndarray, C: np.ndarray) -> SVMSolution:
        return certify(rows, W.ravel(), *rows.multipliers(C), SOLVER_NAME, False)

    def accept(C: np.ndarray) -> bool:
        return _row_sum_residual(C) <= settings.SVM_KKT_TOL and certified(C.T @ data.H, C).passes()

    with limit_threads(settings.BLAS_THREADS, user_api="blas"):
        K, full_rank = data.H @ data.H.T, full_row_rank(data)
        form = "the dual in K = H H^T" if full_rank else "the proximal method"
        if full_rank and cholesky(K) is None:  # near-duplicate rows: K squares their condition
            form = "the square-root form"
            W, C = _square_root(rows, max_iter)
        else:
            C = _dual(K, data.H, np.asarray(data.support_mask), full_rank, max_iter, accept)
            W = C.T @ data.H
        sol, row_sums = certified(W, C), _row_sum_residual(C)
    if sol.passes() and row_sums <= settings.SVM_KKT_TOL:
        return sol
    raise SolverError(
        f"the NTP-SVM answer of {SOLVER_NAME} ({form}) failed verification: {sol.summary()}, "
        f"row sums {row_sums:.2e}"
    )


def reference_infeasible(result: MinNormQP) -> SolverError:
    """The error of the cvxpy NTP-SVM reported infeasible: the data were decided separable first."""
    return SolverError(f"{result.solver} reports the NTP-SVM infeasible ({result.status}) on separable data")


def solve_verified(data: NTPData) -> SVMSolution:
    """The NTP-SVM of separable ``data`` by :func:`solve_active_set`, else by the cvxpy reference.

    When the active-set method fails (it cycles or does not converge at its largest proximal
    weight, or its answer fails verification), :func:`ntpnb._qp.solve_reference` (CLARABEL,
    polished on its active set) answers, verified by the same certificate; its ``fallback_from``
    gives the active-set method's failure.

    Raises
    ------
    SolverError
        If both methods fail; the message gives each failure.
    """
    try:
        return solve_active_set(data)
    except SolverError as exc:
        failure = str(exc)
    try:
        sol = solve_reference(NTPRows(data), reference_infeasible)
    except SolverError as exc:
        LOG.info(
            "NTP-SVM fallback failed too (m=%d, d=%d, V=%d): %s; %s", data.m, data.d, data.V, failure, exc
        )
        raise SolverError(f"{failure}; and the fallback: {exc}") from None
    LOG.info("NTP-SVM fallback answered (m=%d, d=%d, V=%d): %s", data.m, data.d, data.V, failure)
    return dataclasses.replace(sol, fallback_from=failure)


@cached_per_data
def full_row_rank(data: NTPData) -> bool:
    """Whether ``H`` has full row rank: ``m <= d`` and no zero singular value.

    :func:`ntpnb._linalg.nonzero_count`, no gap asked (near-duplicate rows count as independent):
    it only chooses the form, and whether :func:`ntpnb.solve_ntp_svm` decides separability first.
    """
    if data.m > data.d:
        return False
    s = np.linalg.svd(data.H, compute_uv=False)
    return nonzero_count(s, data.H.shape) == data.m
