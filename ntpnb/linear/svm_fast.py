r"""An exact NTP-SVM solver for large problems: a primal-dual active-set method on the Gram matrix.

The NTP-SVM of Paper A (Eq. (NTP-SVM)) is ``min ||W||^2 / 2`` over ``W`` (V x d) subject to
(6a) ``(e_z - e_z')^T W h_j = 0`` for ``z, z'`` in ``S_j`` and (6b) ``(e_z - e_v)^T W h_j >= 1``
for ``z`` in ``S_j``, ``v`` not in ``S_j``. Writing ``s_j`` for the common logit of the tokens of
``S_j`` (6a), the constraints of context ``j`` read ``l_jz = s_j`` on ``S_j`` and
``l_jv <= s_j - 1`` off it, where ``l_j = W h_j`` are the logits.

**The dual in the Gram matrix.** Every constraint functional is ``u h_j^T`` for some ``u`` in
``R^V``, so the optimum is ``W = C^T H`` for a coefficient matrix ``C`` (m x V): ``W`` lies in
the row space of ``H`` and the logits are ``L = H W^T = K C`` with the Gram matrix
``K = H H^T``. The Lagrange dual of the NTP-SVM is

.. math::

    \min_C \tfrac12 \sum_v c_v^T K c_v - \sum_j \sum_{z \in S_j} C_{jz}
    \quad \text{s.t.} \quad C \mathbf 1 = 0, \quad C_{jv} \le 0 \ (v \notin S_j),

(``c_v`` the columns of ``C``) with ``lambda_jv = -C_jv >= 0`` the multipliers of (6b), the
entries of ``C`` on the supports carrying the multipliers of (6a), and the multipliers ``t`` of
the row sums ``C 1 = 0`` giving the common logits ``s = 1 + t``. It only involves ``K``: no
basis of F and no ``V d``-dimensional constraint matrix is ever formed. Its Hessian is
block-diagonal over the tokens (``I_V`` kron ``K``); only the row sums couple the tokens.

**Active sets.** Given the set of active inequalities, the KKT conditions are linear: for each
token ``v``, with ``F_v`` the contexts where ``v`` is in the support or ``(j, v)`` is active,
``K[F_v, F_v] c_v[F_v] - t[F_v] = [v in S_j]`` (logits ``1 + t_j`` on the support, ``t_j`` on
active constraints), and the row sums of ``C`` vanish. Eliminating each ``c_v`` leaves one
``m x m`` positive definite system in ``t`` (the sum of the inverses ``K[F_v, F_v]^{-1}``
scattered into ``F_v``), so an iteration costs ``V`` factorizations of matrices of size
``|F_v|`` plus one of size ``m``. The primal-dual active-set method (Hintermueller, Ito and
Kunisch 2002) then keeps the constraints with positive multipliers and adds the violated ones,
and stops when neither kind is left: the exact KKT point. A token whose ``F_v`` did not change
keeps its factorization. Singular blocks (``m > rank H``, repeated embeddings) use a
pseudo-inverse with the consistency conditions of their null space.

The answer is verified by :func:`certify` (constraints, KKT with explicit multipliers, duality
gap) before it is returned; the method never returns an unverified point.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy import linalg
from scipy.linalg import lapack
from threadpoolctl import threadpool_limits

from .. import settings
from ..errors import RankAmbiguousError, SolverError
from ..linalg import least_squares, numerical_rank
from .data import NTPData, cached_per_data, frozen
from .subspace import embedding_svd

__all__ = ["FastSVMResult", "FastCertificate", "solve_ntp_svm_fast", "certify"]

#: Name under which results of this solver are reported.
SOLVER_NAME = "ntpnb-active-set"

#: Iteration cap of the active-set loop (it typically needs fewer than 15).
MAX_ITER = 100

#: A constraint counts as violated (and enters the active set) when its margin is below
#: ``1 - _VIOLATION_TOL``; far below the verification tolerance, above rounding noise.
_VIOLATION_TOL = 1e-11

#: A block is updated from its previous inverse when at most this fraction of its rows change.
_UPDATE_FRACTION = 0.2

#: Proximal weights (relative to the mean of diag K) tried in turn when K is singular.
_PROX_RIDGES = (1e-3, 1e-1, 1e-5)

#: Factor by which the proximal weight shrinks after each proximal step, and its floor
#: relative to the initial weight (a shrinking weight makes the proximal point method converge
#: superlinearly).
_PROX_DECAY = 0.3
_PROX_FLOOR = 1e-6

#: A block ``K[F, F]`` whose Cholesky factor has ``(min diag / max diag)^2`` below this is
#: treated as (numerically) singular and handled by an eigendecomposition.
_CHOL_RCOND = 1e-9


@dataclass(frozen=True)
class FastCertificate:
    """How well a candidate ``W = C^T H`` satisfies the optimality conditions of the NTP-SVM.

    All measures are relative to the margin 1 or to ``||W||`` (see :func:`certify`).
    """

    margin_violation: float
    equality_residual: float
    dual_sign: float
    row_sum_residual: float
    stationarity: float
    complementarity: float
    duality_gap: float

    def passes(self, feas_tol: float, kkt_tol: float, gap_tol: float) -> bool:
        """Whether every measure is within its tolerance."""
        return (
            self.margin_violation <= feas_tol
            and self.equality_residual <= feas_tol
            and self.dual_sign <= kkt_tol
            and self.row_sum_residual <= kkt_tol
            and self.stationarity <= kkt_tol
            and self.complementarity <= kkt_tol
            and abs(self.duality_gap) <= gap_tol
        )


@dataclass(frozen=True)
class FastSVMResult:
    """The output of :func:`solve_ntp_svm_fast`.

    Attributes
    ----------
    W
        ``W^mm``, shape ``(V, d)``.
    C
        Dual coefficients, shape ``(m, V)``: ``W = C^T H``; ``-C[j, v]`` is the multiplier of
        the inequality ``(j, v)`` (``v`` not in ``S_j``), the support entries carry those of (6a).
    duals
        ``lambda >= 0`` of the inequalities (6b), in the row order of
        :func:`ntpnb.linear.constraints.ntp_constraints` (row-major over ``(j, v)``, ``v`` not
        in ``S_j``).
    certificate
        The verification of the answer (:func:`certify`).
    n_iter
        Active-set iterations.
    """

    W: np.ndarray
    C: np.ndarray
    duals: np.ndarray
    certificate: FastCertificate
    n_iter: int


# ---------------------------------------------------------------------------- linear algebra
@dataclass(frozen=True)
class _Block:
    """Pseudo-inverse ``P`` of ``K[F, F]`` and an orthonormal basis ``N`` of its null space."""

    F: np.ndarray
    P: np.ndarray
    N: np.ndarray  # shape (|F|, 0) when K[F, F] is non-singular


def _factor_block(K: np.ndarray, H: np.ndarray, F: np.ndarray, ridge: float) -> _Block:
    """Factor ``K[F, F] + ridge I`` (``K = H H^T``): an inverse by Cholesky, or from the SVD of ``H[F]``.

    When the Cholesky factor is ill-conditioned the block is decomposed through the SVD
    ``H[F] = U diag(s) Vt`` (full ``U``), so ``K[F, F] = U diag(s^2) U^T`` without squaring the
    condition number. With ``ridge > 0`` the block is non-singular. With ``ridge = 0`` its rank
    is ``rank H[F]``, decided by :func:`ntpnb.linalg.numerical_rank` (a clear gap, never a
    cut-off at the rounding level); ``N`` spans the rest.
    """
    if F.size == 0:
        return _Block(F, np.zeros((0, 0)), np.zeros((0, 0)))
    KF = K[np.ix_(F, F)]
    if ridge:
        KF = KF + ridge * np.eye(F.size)
    c, info = lapack.dpotrf(KF, lower=1, clean=1)
    if info == 0:
        diag = np.diag(c)
        if (diag.min() / diag.max()) ** 2 > _CHOL_RCOND:
            inv, info = lapack.dpotri(c, lower=1)
            if info == 0:
                return _Block(F, _symmetrize_lower(inv), np.zeros((F.size, 0)))
    HF = H[F]
    U, s, _ = np.linalg.svd(HF, full_matrices=True)
    w = np.zeros(F.size)
    w[: s.size] = s * s
    if ridge:
        return _Block(F, (U / (w + ridge)) @ U.T, np.zeros((F.size, 0)))
    r = numerical_rank(s, HF.shape, what=f"the embeddings of a block of {F.size} contexts")
    Ur = U[:, :r]
    return _Block(F, (Ur / w[:r]) @ Ur.T, U[:, r:])


def _symmetrize_lower(A: np.ndarray) -> np.ndarray:
    """The symmetric matrix whose lower triangle is that of ``A`` (upper triangle zero)."""
    A = np.tril(A)
    A += A.T
    A[np.diag_indices_from(A)] *= 0.5
    return A


def _update_block(K: np.ndarray, old: _Block, F: np.ndarray, ridge: float) -> _Block | None:
    """The inverse of ``K[F, F] + ridge I`` from the inverse ``old.P`` on a nearby set ``old.F``.

    Rows leaving the set are removed by a Schur-complement downdate of the inverse, rows joining
    it added by the bordering formula: ``O(|F|^2 k)`` for ``k`` changes instead of ``O(|F|^3)``.
    Returns None when this does not pay (many changes) or is not safe (a singular block).
    """
    if old.N.shape[1] or old.F.size == 0:
        return None
    keep_old = np.isin(old.F, F, assume_unique=True)
    add = F[~np.isin(F, old.F, assume_unique=True)]
    n_changes = int((~keep_old).sum()) + add.size
    if n_changes == 0:
        return old
    if n_changes > _UPDATE_FRACTION * F.size:
        return None
    P = old.P
    if not keep_old.all():  # downdate: inverse of the kept principal block
        r = ~keep_old
        Prr = P[np.ix_(r, r)]
        Pkr = P[np.ix_(keep_old, r)]
        try:
            X = linalg.solve(Prr, Pkr.T, assume_a="pos", check_finite=False)
        except (linalg.LinAlgError, ValueError):
            return None
        P = P[np.ix_(keep_old, keep_old)] - Pkr @ X
    keep = old.F[keep_old]
    if add.size:  # bordering: append the new rows and columns
        B = K[np.ix_(keep, add)]
        D = K[np.ix_(add, add)] + ridge * np.eye(add.size)
        PB = P @ B
        Z = D - B.T @ PB
        c, info = lapack.dpotrf(Z, lower=1, clean=1)
        if info != 0 or (np.diag(c).min() / np.diag(c).max()) ** 2 <= _CHOL_RCOND:
            return None
        Zi, info = lapack.dpotri(c, lower=1)
        if info != 0:
            return None
        Zi = _symmetrize_lower(Zi)
        PBZ = PB @ Zi
        P = np.block([[P + PBZ @ PB.T, -PBZ], [-PBZ.T, Zi]])
        order = np.argsort(np.concatenate([keep, add]), kind="stable")
        P = P[np.ix_(order, order)]
    return _Block(F, P, np.zeros((F.size, 0)))


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
    cache: dict[bytes, _Block] = field(default_factory=dict)
    last: dict[int, _Block] = field(default_factory=dict)

    def _block(self, v: int, F: np.ndarray, used: dict[bytes, _Block]) -> _Block:
        key = F.tobytes()
        block = used.get(key) or self.cache.get(key)
        if block is None and v in self.last:
            block = _update_block(self.K, self.last[v], F, self.ridge)
        if block is None:
            block = _factor_block(self.K, self.H, F, self.ridge)
        used[key] = self.last[v] = block
        return block

    def solve(self, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(C, t)`` with the ``active`` inequalities as equalities.

        The equations are solved in the least-squares sense when a singular block makes them
        inconsistent.
        """
        mask, ridge = self.mask, self.ridge
        m, V = mask.shape
        free = mask | active
        S = np.zeros((m, m))
        S_flat = S.reshape(-1)  # a view: scattering into it is fast
        b = np.zeros(m)
        blocks: list[_Block] = []
        rhs: list[np.ndarray] = []
        used: dict[bytes, _Block] = {}
        for v in range(V):
            F = np.flatnonzero(free[:, v])
            block = self._block(v, F, used)
            blocks.append(block)
            r = mask[F, v] + ridge * self.center[F, v]
            rhs.append(r)
            S_flat[(F[:, None] * m + F).ravel()] += block.P.ravel()
            b[F] += block.P @ r
        self.cache = used
        singular = [v for v, block in enumerate(blocks) if block.N.shape[1]]
        z: dict[int, np.ndarray] = {}
        if not singular:
            try:
                t = linalg.solve(S, -b, assume_a="pos", check_finite=False)
            except (linalg.LinAlgError, ValueError):
                t = least_squares(S, -b, what="the Schur complement of the active-set equations")
        else:
            # consistency N_v^T (rhs_v + t[F_v]) = 0 of each singular block, multipliers z_v
            widths = [blocks[v].N.shape[1] for v in singular]
            B = np.zeros((m, sum(widths)))
            b2 = np.zeros(sum(widths))
            col = 0
            for v, w in zip(singular, widths, strict=True):
                B[blocks[v].F, col : col + w] = blocks[v].N
                b2[col : col + w] = -blocks[v].N.T @ rhs[v]
                col += w
            KKT = np.block([[S, B], [B.T, np.zeros((B.shape[1], B.shape[1]))]])
            sol = least_squares(KKT, np.concatenate([-b, b2]), what="the active-set equations")
            t, col = sol[:m], m
            for v, w in zip(singular, widths, strict=True):
                z[v] = sol[col : col + w]
                col += w
        C = np.zeros((m, V))
        for v, block in enumerate(blocks):
            cv = block.P @ (rhs[v] + t[block.F])
            if v in z:
                cv = cv + block.N @ z[v]
            C[block.F, v] = cv
        return C, t

    def pdas(self, active: np.ndarray, max_iter: int) -> tuple[np.ndarray, np.ndarray, int]:
        """Primal-dual active-set iterations from ``active``; ``(C, active, iterations)``."""
        off = ~self.mask
        seen: set[bytes] = set()
        for it in range(1, max_iter + 1):
            C, t = self.solve(active)
            grad = self.K @ C - self.ridge * self.center - t[:, None]  # >0: constraint wants in
            violated = off & ~active & (grad > _VIOLATION_TOL)
            dropped = active & (C >= 0)  # lambda = -C must be positive on the active set
            if not violated.any() and not dropped.any():
                return C, active, it
            seen.add(np.packbits(active).tobytes())
            active = (active & ~dropped) | violated
            if np.packbits(active).tobytes() in seen:
                raise SolverError(f"the active-set method cycled after {it} iterations")
        raise SolverError(f"the active-set method did not converge in {max_iter} iterations")


def _well_conditioned(K: np.ndarray) -> bool:
    """Whether the Cholesky factor of ``K`` has ``(min diag / max diag)^2 > _CHOL_RCOND`` (1e-9)."""
    c, info = lapack.dpotrf(K, lower=1, clean=1)
    if info != 0:
        return False
    diag = np.diag(c)
    return bool((diag.min() / diag.max()) ** 2 > _CHOL_RCOND)


def _active_set_loop(
    K: np.ndarray,
    H: np.ndarray,
    mask: np.ndarray,
    full_rank: bool,
    max_iter: int,
    accept: Callable[[np.ndarray, np.ndarray], bool],
) -> tuple[np.ndarray, np.ndarray, int]:
    """Solve the dual; return ``(C_primal, C_dual, iterations)``.

    ``W = C_primal^T H``, and ``C_dual`` holds the multipliers (the same matrix unless ``K`` is
    singular).

    With ``K`` non-singular (``full_rank``: ``rank H = m``, decided once by
    :func:`ntpnb.linear.subspace.embedding_rank`) and well-conditioned (a Cholesky factor with
    ``(min diag / max diag)^2 > 1e-9``, far from the rounding level) the dual is strongly
    convex and one run of the primal-dual active-set method solves it. Otherwise the dual is
    degenerate (``C`` is not unique and an active set can make the KKT equations inconsistent),
    so the method runs on
    proximal subproblems ``+ ridge / 2 ||C - C_k||^2`` (strongly convex; the proximal point
    method converges to a solution of the dual). After each one it solves the exact equations
    on the current active set and stops when ``accept`` (the verification) passes, either with
    those equations' own multipliers or with the proximal iterate's.
    """
    if full_rank and _well_conditioned(K):
        sub = _Subproblem(K, H, mask, 0.0, np.zeros(mask.shape))
        C, active, n_iter = sub.pdas(np.zeros_like(mask), max_iter)
        if not accept(C, C):  # rounding accumulated by the updates: factor afresh
            C, _ = _Subproblem(K, H, mask, 0.0, np.zeros(mask.shape)).solve(active)
        return C, C, n_iter
    errors = []
    for ridge in _PROX_RIDGES:
        try:
            scaled = ridge * float(np.trace(K)) / K.shape[0]
            return _proximal_loop(K, H, mask, scaled, max_iter, accept)
        except SolverError as exc:
            errors.append(f"ridge {ridge:g}: {exc}")
    raise SolverError("; ".join(errors))


def _proximal_loop(
    K: np.ndarray,
    H: np.ndarray,
    mask: np.ndarray,
    ridge: float,
    max_iter: int,
    accept: Callable[[np.ndarray, np.ndarray], bool],
) -> tuple[np.ndarray, np.ndarray, int]:
    active = np.zeros_like(mask)
    center = np.zeros(mask.shape)
    exact = _Subproblem(K, H, mask, 0.0, center)
    floor = ridge * _PROX_FLOOR
    total = 0
    while total < max_iter:
        prox = _Subproblem(K, H, mask, ridge, center)
        center, active, n_iter = prox.pdas(active, max_iter - total)
        ridge = max(ridge * _PROX_DECAY, floor)
        total += n_iter
        C, _ = exact.solve(active)
        if accept(C, C):
            return C, C, total
        if accept(C, center):
            return C, center, total
    raise SolverError(f"the proximal active-set method did not converge in {max_iter} iterations")


# ---------------------------------------------------------------------------- verification
def certify(data: NTPData, W: np.ndarray, C: np.ndarray) -> FastCertificate:
    """Verify ``W`` as the NTP-SVM solution with the dual coefficients ``C`` as multipliers.

    With ``a_j`` the anchor (first support token) of context ``j`` and logits ``L = H W^T``:

    * ``margin_violation = max(0, 1 - min (L_{j a_j} - L_jv))`` over ``v`` not in ``S_j`` (6b);
    * ``equality_residual = max |L_jz - L_{j a_j}|`` over ``z`` in ``S_j`` (6a), i.e. ``W`` in
      F-perp;
    * ``dual_sign = max(0, max C_jv) / max |C|`` over ``v`` not in ``S_j``: ``lambda = -C >= 0``;
    * ``row_sum_residual = max_j |sum_v C_jv| / max |C|``: the support entries of ``C``
      are multipliers of (6a), which needs zero row sums; the check below uses the anchor entry
      that makes them exactly zero, so it measures how far ``C`` was from that;
    * ``stationarity = ||W - C~^T H|| / ||W||`` with ``C~`` the row-sum-corrected ``C``: the
      gradient of the Lagrangian at ``(W, lambda, mu)`` vanishes;
    * ``complementarity = max lambda_jv |L_{j a_j} - L_jv - 1| / max |C|``;
    * ``duality_gap = (||W||^2 / 2 - g) / (||W||^2 / 2)`` with the Lagrange dual value
      ``g = sum(lambda) - ||C~^T H||^2 / 2`` (a lower bound on the optimum for any
      ``lambda >= 0``: with ``W`` feasible, the gap bounds the relative suboptimality).

    Every measure is invariant under the rescaling ``H -> c H`` (which maps ``W`` to ``W / c``
    and ``C`` to ``C / c^2``): margins are in units of the margin 1, the rest relative.
    """
    mask = data.support_mask
    H = data.H
    L = H @ W.T
    anchors = np.argmax(mask, axis=1)
    s = L[np.arange(data.m), anchors]
    off = ~mask
    margins = s[:, None] - L
    scale_c = float(np.abs(C).max(initial=0.0)) or 1.0
    lam = np.where(off, np.maximum(-C, 0.0), 0.0)
    Cc = np.where(off, -lam, C)
    Cc[np.arange(data.m), anchors] -= Cc.sum(axis=1)  # exact zero row sums
    norm_w = float(np.linalg.norm(W))
    WC = Cc.T @ H
    primal = 0.5 * norm_w**2
    dual = float(lam.sum()) - 0.5 * float(np.sum(WC * WC))
    return FastCertificate(
        margin_violation=float(max(0.0, 1.0 - margins[off].min(initial=np.inf))),
        equality_residual=float(np.abs(margins[mask]).max(initial=0.0)),
        dual_sign=float(max(0.0, C[off].max(initial=0.0))) / scale_c,
        row_sum_residual=float(np.abs(C.sum(axis=1)).max()) / scale_c,
        stationarity=float(np.linalg.norm(W - WC)) / max(norm_w, 1e-300),
        complementarity=float(np.max(np.abs(lam * (margins - 1.0))[off], initial=0.0)) / scale_c,
        duality_gap=(primal - dual) / (primal if primal > 0 else 1.0),
    )


# ---------------------------------------------------------------------------- the solver
def solve_ntp_svm_fast(
    data: NTPData,
    feas_tol: float | None = None,
    kkt_tol: float | None = None,
    gap_tol: float | None = None,
    max_iter: int = MAX_ITER,
) -> FastSVMResult:
    """Solve the NTP-SVM of ``data`` exactly by the active-set method of the module docstring.

    The data are assumed NTP-separable (decide it first with :func:`ntpnb.is_separable`); on
    non-separable data the method fails with :class:`~ntpnb.errors.SolverError` and never
    returns a point.

    Parameters
    ----------
    data
        The training set.
    feas_tol, kkt_tol, gap_tol
        Tolerances of the verification (:func:`certify`): constraint violations, KKT residuals
        and the relative duality gap (None: ``SVM_FEAS_TOL``, ``SVM_KKT_TOL`` and
        ``SVM_GAP_TOL`` of :mod:`ntpnb.settings`, read at the call).
    max_iter
        Iteration cap of the active-set loop.

    Raises
    ------
    SolverError
        If the method cycles, does not converge, or its answer fails verification.

    Notes
    -----
    The BLAS runs single-threaded inside (:data:`ntpnb.settings.BLAS_THREADS`): the
    blocks are small, and on a machine whose cores are busy a multi-threaded BLAS made the
    (500, 100, 600, 10) problem 25 times slower here.
    """
    feas_tol = settings.SVM_FEAS_TOL if feas_tol is None else feas_tol
    kkt_tol = settings.SVM_KKT_TOL if kkt_tol is None else kkt_tol
    gap_tol = settings.SVM_GAP_TOL if gap_tol is None else gap_tol
    mask = np.asarray(data.support_mask)
    off = ~mask
    if not off.any():  # no inequality: W^mm = 0
        C = np.zeros((data.m, data.V))
        W = np.zeros((data.V, data.d))
        return FastSVMResult(W, C, np.zeros(0), certify(data, W, C), 0)
    with threadpool_limits(limits=settings.BLAS_THREADS, user_api="blas"):
        return _solve(data, feas_tol, kkt_tol, gap_tol, max_iter)


def _solve(data: NTPData, feas_tol: float, kkt_tol: float, gap_tol: float, max_iter: int) -> FastSVMResult:
    mask = np.asarray(data.support_mask)
    off = ~mask
    K = data.H @ data.H.T

    def accept(C_primal: np.ndarray, C_dual: np.ndarray) -> bool:
        return certify(data, C_primal.T @ data.H, C_dual).passes(feas_tol, kkt_tol, gap_tol)

    full_rank = embedding_svd(data).rank == data.m
    C_primal, C, n_iter = _active_set_loop(K, data.H, mask, full_rank, max_iter, accept)
    W = C_primal.T @ data.H
    cert = certify(data, W, C)
    if not cert.passes(feas_tol, kkt_tol, gap_tol):
        raise SolverError(
            f"the answer of {SOLVER_NAME} failed verification: margin violation "
            f"{cert.margin_violation:.2e}, equality residual {cert.equality_residual:.2e}, "
            f"dual sign {cert.dual_sign:.2e}, row sums {cert.row_sum_residual:.2e}, stationarity "
            f"{cert.stationarity:.2e}, complementarity {cert.complementarity:.2e}, duality gap "
            f"{cert.duality_gap:.2e}"
        )
    duals = np.maximum(-C[off], 0.0)
    for arr in (W, C, duals):
        arr.setflags(write=False)
    return FastSVMResult(W=W, C=C, duals=duals, certificate=cert, n_iter=n_iter)


# ---------------------------------------------------------------------------- separability
@dataclass(frozen=True)
class SeparabilityResult:
    """The decision of :func:`separability_fast`.

    Attributes
    ----------
    separable
        Whether the data are NTP-separable (Definition 2 of Paper A).
    W
        A ``W`` satisfying (6a)-(6b) when separable (checked), else None.
    method
        ``"rank"`` (``rank H = m``: the logits can take any value), or ``"reduced LP (...)"``
        with the HiGHS method that decided.
    """

    separable: bool
    W: np.ndarray | None
    method: str


def _satisfies_definition_2(data: NTPData, W: np.ndarray, tol: float) -> bool:
    mask = data.support_mask
    L = data.H @ W.T
    s = L[np.arange(data.m), np.argmax(mask, axis=1)]
    margins = s[:, None] - L
    scale = 1.0 + float(np.abs(W).max())
    return bool(
        margins[~mask].min(initial=np.inf) >= 1 - tol * scale
        and np.abs(margins[mask]).max(initial=0.0) <= tol * scale
    )


@cached_per_data
def rank_witness(data: NTPData) -> np.ndarray | None:
    """A separating ``W`` computed from ``H`` alone when ``rank H = m``, else None.

    With full row rank every logit matrix ``L = H W^T`` is reachable; ``W = L0^T (H^+)^T`` with
    logits ``L0`` equal to 1 on the supports and 0 elsewhere satisfies (6a)-(6b) with every
    margin 1 (Lemma 1 of Paper A: ``d >= m`` and generic embeddings suffice). The answer is
    checked against Definition 2 (tolerance :data:`ntpnb.settings.LP_FEAS_TOL` relative to
    ``1 + max |W_ij|``); None also when the check fails. Computed once per data set (read-only).
    """
    if data.m > data.d:
        return None
    try:
        svd = embedding_svd(data)
    except RankAmbiguousError:  # only a shortcut: the LP decides
        return None
    if svd.rank < data.m:
        return None
    L0 = data.support_mask.astype(float)
    W = ((svd.U.T @ L0) / svd.s[:, None]).T @ svd.Vt  # H W^T = U U^T L0 = L0
    return frozen(W) if _satisfies_definition_2(data, W, settings.LP_FEAS_TOL) else None


def separability_fast(data: NTPData, tol: float = settings.LP_FEAS_TOL) -> SeparabilityResult:
    """Decide NTP-separability (Definition 2 of Paper A) in the row space of ``H``.

    Any separating ``W`` can be replaced by its projection onto the row space of ``H`` (the
    constraints only see ``W h_j``), so with the thin SVD ``H = U diag(sigma) Vt`` of rank ``r``
    one may take ``W = A Vt`` and the logits are ``L = G A^T`` with ``G = U diag(sigma)``. With the
    common in-support logits ``s_j`` as extra variables, Definition 2 is the feasibility of

        ``G_j . a_v - s_j = 0`` for ``v`` in ``S_j``,  ``G_j . a_v - s_j <= -1`` otherwise,

    an LP with ``V r + m`` variables and ``m V`` rows of ``r + 1`` non-zeros (against ``V d``
    variables and rows of ``2 d`` non-zeros in the original form, plus its equality rows).

    * If ``r = m`` every logit matrix is reachable, so the data are separable: ``W`` with logits
      ``1`` on the supports and ``0`` elsewhere is returned (checked).
    * Otherwise the LP is solved by HiGHS (:func:`scipy.optimize.linprog`, the method
      :data:`ntpnb.settings.LP_METHOD`, then the fallbacks ``LP_FALLBACK_METHODS`` when it ends
      without a decision); a feasible point is checked against Definition 2 (tolerance ``tol``
      relative to ``1 + max |W_ij|``).

    Raises
    ------
    SolverError
        If HiGHS fails or returns a point that violates the constraints.
    """
    from scipy import sparse
    from scipy.optimize import linprog

    mask = data.support_mask
    m, V = data.m, data.V
    W = rank_witness(data)
    if W is not None:
        return SeparabilityResult(True, W, "rank")
    svd = embedding_svd(data)
    r = svd.rank
    G = svd.U * svd.s
    Vt = svd.Vt
    # rows (j, v) in row-major order; columns: a_v (V blocks of r), then s (m)
    j_idx, v_idx = np.indices((m, V)).reshape(2, -1)
    rows = np.repeat(np.arange(m * V), r + 1)
    cols = np.concatenate([(v_idx * r)[:, None] + np.arange(r), (V * r + j_idx)[:, None]], axis=1).ravel()
    vals = np.concatenate([G[j_idx], -np.ones((m * V, 1))], axis=1).ravel()
    A = sparse.csr_matrix((vals, (rows, cols)), shape=(m * V, V * r + m))
    on = mask.ravel()
    failures = []
    for method in (settings.LP_METHOD, *settings.LP_FALLBACK_METHODS):
        res = linprog(
            c=np.zeros(V * r + m),
            A_ub=A[~on],
            b_ub=-np.ones(int((~on).sum())),
            A_eq=A[on],
            b_eq=np.zeros(int(on.sum())),
            bounds=(None, None),
            method=method,
        )
        if res.status in (0, 2):
            break
        failures.append(f"{method}: status {res.status} ({res.message})")
    else:
        raise SolverError("the reduced separability LP failed: " + "; ".join(failures))
    if res.status == 2:
        return SeparabilityResult(False, None, f"reduced LP ({method})")
    W = res.x[: V * r].reshape(V, r) @ Vt
    if not _satisfies_definition_2(data, W, tol):
        raise SolverError("the reduced separability LP returned a point that violates Definition 2")
    return SeparabilityResult(True, W, f"reduced LP ({method})")
