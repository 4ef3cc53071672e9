r"""The Newton solver behind ``decide_separability(data, method="newton")`` (``m > d``).

It finds the candidates of the separability decision (a separating direction or a Farkas
certificate), which :mod:`ntpnb.linear._separability` verifies, through a problem whose linear
algebra couples the tokens only through the ``m`` contexts (the LP's interior point factorizes a
dense ``V d x V d`` matrix). With ``s_j`` the common in-support logit of context ``j``, every
pair has the residual ``e_jv = h_j^T w_v - s_j - tau_jv`` (``tau = 0`` on the support, ``-1`` off
it), and for ``rho > 0``

.. math::

    \min_{W, s}\ \tfrac12 \lVert W\rVert^2
    + \tfrac\rho2 \Big(\sum_{v \in S_j} e_{jv}^2 + \sum_{v \notin S_j} (e_{jv})_+^2\Big)

is solved exactly by Newton's method with an exact line search (it ends when the *active* pairs,
the positive residuals, stop changing). Given ``s``, each ``w_v`` is a ridge regression on its
active contexts ``F_v``, so a step needs one ``m x m`` system in ``s``: the sum over tokens of
``(K_{F_v} + I / rho)^{-1}`` (``K = H H^T``) scattered into ``F_v x F_v``.

As ``rho`` grows (:data:`~ntpnb.settings.HINGE_RHO_START` to :data:`~ntpnb.settings.HINGE_RHO_MAX`),
separable data give a separating ``W`` (offered projected off F), and otherwise ``C = -rho E`` on
the active pairs tends, divided by ``rho``, to a Farkas certificate (``C^T H = 0``), which
:func:`farkas_polish` makes exact on its pattern (:func:`continuation`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy

from .. import settings
from .._linalg import column_basis
from .._parallel import limit_threads
from ..errors import RankAmbiguousError
from ._constraints import anchor_pairs
from ._gram_blocks import gram_block, scatter_add
from ._gram_blocks import solve_spd as _solve_spd

#: Name under which results of this module are reported.
SOLVER_NAME = "ntpnb-hinge-newton"


# ---------------------------------------------------------------------------- the problem
class _Problem:
    """Embeddings ``H`` (rows as given), supports, anchors, and ``K = H H^T`` (computed on demand)."""

    def __init__(self, H: np.ndarray, mask: np.ndarray) -> None:
        self.H = np.ascontiguousarray(H, dtype=float)
        self.mask = np.asarray(mask, dtype=bool)
        self.m, self.d = self.H.shape
        self.V = self.mask.shape[1]  # the paper's name
        self.anchors = np.argmax(self.mask, axis=1)
        #: Out-of-support pairs, ``(m, V)`` boolean.
        self.off = ~self.mask
        #: ``tau``: 0 on the supports, -1 off them.
        self.tau = np.where(self.mask, 0.0, -1.0)

    @functools.cached_property
    def K(self) -> np.ndarray:  # noqa: N802
        """The Gram matrix ``H H^T``."""
        return self.H @ self.H.T


# ---------------------------------------------------------------------------- linear algebra
@dataclass(frozen=True, eq=False)
class _Block:
    """A symmetric ``|F| x |F|`` matrix on the contexts ``F`` of one token.

    Either explicit (``Z``) or diagonal plus low rank, ``a I - b Y^T Y`` (``Y`` of shape
    ``(r, |F|)``, ``r < |F|``), never formed.
    """

    F: np.ndarray
    Z: np.ndarray | None = None
    Y: np.ndarray | None = None
    a: float = 0.0
    b: float = 0.0

    def apply(self, x: np.ndarray) -> np.ndarray:
        """The block times ``x`` (a vector on ``F``)."""
        if self.Z is not None:
            return self.Z @ x
        return self.a * x - self.b * (self.Y.T @ (self.Y @ x))

    @functools.cached_property
    def dense(self) -> np.ndarray:
        """The block's entries (formed once)."""
        if self.Z is not None:
            return self.Z
        values = -self.b * (self.Y.T @ self.Y)
        values[np.diag_indices(self.F.size)] += self.a
        return values


def _token_inverse(prob: _Problem, F: np.ndarray, rho: float) -> _Block:
    """``(K_F + I / rho)^{-1}`` for ``K_F = H_F H_F^T``, by the cheaper of two routes.

    ``|F| <= d``: the ``|F| x |F|`` matrix, explicit (:func:`._gram_blocks.gram_block`: Cholesky,
    or the SVD of ``H_F`` where its factor is not resolved). ``|F| > d``: Woodbury,
    ``rho I - rho^2 Y^T Y`` with ``Y = L^{-1} H_F^T`` and ``L L^T = I + rho H_F^T H_F`` (one
    Cholesky of size ``d``), left in that form.
    """
    H_F = prob.H[F]
    n, d = H_F.shape
    if n <= d:
        return _Block(F, Z=gram_block(prob.K, prob.H, F, 1.0 / rho).P)
    M = rho * (H_F.T @ H_F)
    M[np.diag_indices(d)] += 1.0
    L = scipy.linalg.cholesky(M, lower=True, check_finite=False, overwrite_a=True)
    Y = scipy.linalg.solve_triangular(L, H_F.T, lower=True, check_finite=False)  # L^{-1} H_F^T
    return _Block(F, Y=Y, a=rho, b=rho * rho)


def _assemble(m: int, blocks: list[_Block], base: np.ndarray | None = None) -> np.ndarray:
    """``base + sum`` of the blocks scattered into ``F x F`` (``m x m``; lower triangle exact).

    A low-rank block covering at least half the contexts is added by a symmetric rank-``r``
    update (``a`` on its diagonal, ``-b (E Y^T)(E Y^T)^T``, lower triangle only); the others are
    formed once and scattered. A block shared by ``k`` tokens is added once, times ``k``.
    """
    S = np.zeros((m, m)) if base is None else base
    counts: dict[int, list] = {}  # tokens with the same contexts share one block: add it once
    for blk in blocks:
        counts.setdefault(id(blk), [blk, 0])[1] += 1
    for blk, k in counts.values():
        F = blk.F
        if blk.Z is None and 2 * F.size >= m:
            S.reshape(-1)[F * m + F] += k * blk.a
            G = np.zeros((m, blk.Y.shape[0]))
            G[F] = blk.Y.T * np.sqrt(k * blk.b)
            # S is C-ordered and symmetric: its transpose is the Fortran-ordered lower triangle
            S = scipy.linalg.blas.dsyrk(-1.0, G, beta=1.0, c=S.T, lower=0, overwrite_c=1).T
        else:
            scatter_add(S, F, k * blk.dense if k > 1 else blk.dense)
    return S


def _token_blocks(
    prob: _Problem,
    gW: np.ndarray,
    active: np.ndarray,
    rho: float,
    cache: dict[bytes, _Block],
    rhs: np.ndarray,
) -> tuple[list[int], list[_Block], list[np.ndarray]]:
    """Each token ``v`` with active pairs, its block ``Z_v`` and ``q_v = H_{F_v} g_{W,v}``.

    ``rhs`` (``-g_s``) has each ``Z_v q_v`` subtracted on ``F_v`` in place, token after token;
    ``cache`` keeps ``Z_v`` per set ``F_v``.
    """
    blocks: list[_Block] = []
    qs: list[np.ndarray] = []
    owners: list[int] = []
    for v in range(prob.V):
        F = np.flatnonzero(active[:, v])
        if F.size == 0:
            continue
        key = F.tobytes()
        blk = cache.get(key)
        if blk is None:
            blk = cache[key] = _token_inverse(prob, F, rho)
        q = prob.H[F] @ gW[v]
        rhs[F] -= blk.apply(q)
        blocks.append(blk)
        qs.append(q)
        owners.append(v)
    return owners, blocks, qs


def _newton_step(
    prob: _Problem,
    W: np.ndarray,
    E: np.ndarray,
    active: np.ndarray,
    rho: float,
    cache: dict[bytes, _Block],
) -> tuple[np.ndarray, np.ndarray]:
    """The Newton direction ``(dW, ds)`` of the squared-hinge objective on the active set ``active``.

    Gradient ``g_W = W + rho (A o E)^T H`` and ``g_s = -rho (A o E) 1`` (``A`` the active pairs);
    with ``Z_v = (K_{F_v} + I / rho)^{-1}`` and ``q_v = H_{F_v} g_{W,v}``, the step in ``s``
    solves ``(sum_v Z_v) ds = -g_s - sum_v Z_v q_v`` (each ``Z_v`` scattered into ``F_v``), and
    ``dw_v = -g_{W,v} + H_{F_v}^T Z_v (q_v + ds_{F_v})``. ``cache`` keeps ``Z_v`` per set ``F_v``.
    """
    AE = np.where(active, E, 0.0)
    gW = W + rho * (AE.T @ prob.H)
    rhs = rho * AE.sum(axis=1)  # -g_s
    owners, blocks, qs = _token_blocks(prob, gW, active, rho, cache, rhs)
    ds = _solve_spd(_assemble(prob.m, blocks), rhs, "the squared-hinge Newton system")
    dW = -gW
    for v, blk, q in zip(owners, blocks, qs, strict=True):
        dW[v] += prob.H[blk.F].T @ blk.apply(q + ds[blk.F])
    return dW, ds


def _residuals(prob: _Problem, W: np.ndarray, s: np.ndarray) -> np.ndarray:
    return prob.H @ W.T - s[:, None] - prob.tau


def _line_search(
    prob: _Problem, W: np.ndarray, E: np.ndarray, dW: np.ndarray, dE: np.ndarray, rho: float
) -> float:
    """The exact minimizer ``alpha >= 0`` of the objective along the direction.

    ``phi'(alpha) = <W, dW> + alpha ||dW||^2 + rho (sum over the supports of (E + alpha dE) dE
    + sum over the other pairs of (E + alpha dE)_+ dE)``, increasing and piecewise linear: its
    breakpoints are bisected, then the linear piece solved.
    """
    mask = prob.mask
    wd, dd = float(np.vdot(W, dW)), float(np.vdot(dW, dW))
    e_s, de_s = E[mask], dE[mask]
    e_o, de_o = E[~mask], dE[~mask]

    def slope(a: float) -> float:
        r = e_o + a * de_o
        pos = r > 0
        return wd + a * dd + rho * (float(e_s @ de_s) + a * float(de_s @ de_s) + float(r[pos] @ de_o[pos]))

    if slope(0.0) >= 0:
        return 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        crossings = -e_o / de_o
    breaks = np.unique(crossings[(de_o != 0) & (crossings > 0) & np.isfinite(crossings)])
    lo, hi = -1, breaks.size
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if slope(float(breaks[mid])) < 0:
            lo = mid
        else:
            hi = mid
    a0 = float(breaks[lo]) if lo >= 0 else 0.0
    a1 = float(breaks[hi]) if hi < breaks.size else np.inf
    probe = a0 + 1.0 if not np.isfinite(a1) else 0.5 * (a0 + a1)
    pos = (e_o + probe * de_o) > 0
    num = -(wd + rho * (float(e_s @ de_s) + float(e_o[pos] @ de_o[pos])))
    den = dd + rho * (float(de_s @ de_s) + float(de_o[pos] @ de_o[pos]))
    a = num / den if den > 0 else a1
    return float(min(max(a, a0), a1))


@dataclass
class _State:
    """An iterate ``(W, s)`` of the continuation, with the Newton iterations spent so far."""

    W: np.ndarray
    s: np.ndarray
    rho: float
    iterations: int = 0


def _minimize(prob: _Problem, state: _State, check: Callable[[_State], bool]) -> None:
    """Minimize the squared-hinge objective at ``state.rho`` from ``state``.

    Ends at the minimizer (a full Newton step on an unchanged active set), or early when
    ``check(state)`` (called after every step) returns True, or after
    :data:`~ntpnb.settings.HINGE_MAX_NEWTON_PER_RHO` iterations.
    """
    rho = state.rho
    E = _residuals(prob, state.W, state.s)
    cache: dict[bytes, _Block] = {}
    for _ in range(settings.HINGE_MAX_NEWTON_PER_RHO):
        active = prob.mask | (E > 0)
        keep = {np.flatnonzero(active[:, v]).tobytes() for v in range(prob.V)}
        cache = {key: Z for key, Z in cache.items() if key in keep}
        dW, ds = _newton_step(prob, state.W, E, active, rho, cache)
        dE = prob.H @ dW.T - ds[:, None]
        alpha = _line_search(prob, state.W, E, dW, dE, rho)
        state.W = state.W + alpha * dW
        state.s = state.s + alpha * ds
        state.iterations += 1
        E = _residuals(prob, state.W, state.s)
        if check(state):
            return
        # a (nearly) full step on an unchanged active set ends on the minimizer of its piece
        full = abs(alpha - 1.0) <= settings.HINGE_FULL_STEP_TOL
        exact = full and np.array_equal(prob.mask | (E > 0), active)
        step = alpha * np.sqrt(float(np.vdot(dW, dW)) + float(ds @ ds))
        small = step <= settings.HINGE_STEP_RTOL * (
            1.0 + np.sqrt(float(np.vdot(state.W, state.W)) + float(state.s @ state.s))
        )
        if exact or small or alpha == 0.0 or state.iterations >= settings.HINGE_MAX_NEWTON:
            return


# ---------------------------------------------------------------------------- the Farkas polish
def farkas_polish(H: np.ndarray, mask: np.ndarray, C0: np.ndarray) -> np.ndarray | None:
    """The nearest exact Farkas certificate to ``C0`` on its pattern, or None.

    The pattern is every in-support entry and the out-of-support entries where ``C0 < 0``; on it
    the nearest ``C`` with ``H^T c_v = 0`` for every token and zero row sums is
    ``c_v = Pi_v (c0_v - y_{F_v})`` (``Pi_v`` the projector off the embeddings of token ``v``'s
    pattern contexts ``F_v``), ``y`` solving ``(sum_v Pi_v + K / k) y = sum_v Pi_v c0_v`` (``k``
    the mean diagonal of ``K``; that term only removes the null space ``range(H)``). Entries with
    the wrong sign leave the pattern and the solve is repeated, at most
    :data:`~ntpnb.settings.HINGE_POLISH_ROUNDS` times.
    """
    prob = _Problem(H, mask)
    m = prob.m
    pattern = prob.mask | (np.asarray(C0) < 0)
    kscale = float(np.trace(prob.K)) / m or 1.0
    for _ in range(settings.HINGE_POLISH_ROUNDS):
        blocks = []
        for v in range(prob.V):
            F = np.flatnonzero(pattern[:, v])
            if F.size == 0:
                continue
            try:  # an orthonormal basis Q of range(H_F)
                Q = column_basis(prob.H[F], what="the embeddings of one token's contexts")
            except RankAmbiguousError:  # no clear gap in rank H_F: the token's coefficients stay zero
                continue
            if Q.shape[1] < F.size:  # otherwise H_F^T c = 0 forces c = 0 (full row rank)
                blocks.append((v, _Block(F, Y=Q.T, a=1.0, b=1.0)))  # Pi_v = I - Q Q^T
        b = np.zeros(m)
        for v, blk in blocks:
            b[blk.F] += blk.apply(C0[blk.F, v])
        S = _assemble(m, [blk for _, blk in blocks], base=prob.K / kscale)
        # singular when few tokens have more pattern contexts than d, but consistent (b is
        # orthogonal to its null space), and every solution gives the same C
        y = _solve_spd(S, b, "the Farkas polish", ridge=settings.HINGE_POLISH_RIDGE)
        C = np.zeros((m, prob.V))
        for v, blk in blocks:
            C[blk.F, v] = blk.apply(C0[blk.F, v] - y[blk.F])
        wrong = pattern & prob.off & (C >= 0)
        if not wrong.any():
            return C
        pattern &= ~wrong
    return None


# ---------------------------------------------------------------------------- the decision
def _project_off_f(prob: _Problem, W: np.ndarray) -> np.ndarray:
    """``W`` minus its projection onto F: the in-support logits of every context made equal.

    The projection is ``sum_i mu_i r_i`` over the rows ``r_i = (e_z - e_{a_j}) h_j^T`` of F, with
    ``G mu = (r_i . W)_i`` for their Gram matrix ``G_ii' = <e_z - e_a, e_z' - e_a'> K_jj'``
    (minimum-norm least squares).
    """
    j, z = np.nonzero(anchor_pairs(prob.mask)[1])  # the equality pairs, row-major
    if j.size == 0:
        return W
    a = prob.anchors[j]
    G = (z[:, None] == z[None, :]).astype(float) + (a[:, None] == a[None, :])
    G -= (z[:, None] == a[None, :]).astype(float) + (a[:, None] == z[None, :])
    G *= prob.K[np.ix_(j, j)]
    L = prob.H @ W.T
    b = L[j, z] - L[j, a]
    mu = np.linalg.lstsq(G, b, rcond=None)[0]
    coef = np.zeros((prob.m, prob.V))
    np.add.at(coef, (j, z), mu)
    np.add.at(coef, (j, a), -mu)
    return W - coef.T @ prob.H


def continuation(
    H: np.ndarray,
    mask: np.ndarray,
    direction: Callable[[np.ndarray, float, int], bool],
    certificate: Callable[[np.ndarray, float, int], bool],
) -> tuple[float, int]:
    """The continuation of the module from ``W = 0``, offering its candidates.

    Every iterate that separates, projected off F (:func:`_project_off_f`), goes to
    ``direction(W, rho, iterations)``; after each ``rho``, the Farkas candidate
    (:func:`farkas_polish`) to ``certificate(C, rho, iterations)``. Stops when one returns True
    (accepted), or by :data:`~ntpnb.settings.HINGE_RHO_MAX` or
    :data:`~ntpnb.settings.HINGE_MAX_NEWTON`; returns the last ``rho`` and the Newton iterations.
    """
    prob = _Problem(H, mask)
    # from W = 0 with s = 1 every margin is exactly 1: only the in-support pairs start active
    state = _State(np.zeros((prob.V, prob.d)), np.ones(prob.m), settings.HINGE_RHO_START)
    accepted = [False]

    def separates(st: _State) -> bool:
        L = prob.H @ st.W.T
        if (L[np.arange(prob.m), prob.anchors][:, None] - L)[prob.off].min() <= 0:
            return False
        accepted[0] = direction(_project_off_f(prob, st.W), st.rho, st.iterations)
        return accepted[0]

    rho = state.rho
    with limit_threads(settings.BLAS_THREADS, user_api="blas"):
        while state.rho <= settings.HINGE_RHO_MAX and state.iterations < settings.HINGE_MAX_NEWTON:
            rho = state.rho
            _minimize(prob, state, separates)
            if accepted[0]:
                break
            E = _residuals(prob, state.W, state.s)
            # C = -rho E on the active pairs (every in-support pair, off-support ones with E > 0)
            C = farkas_polish(prob.H, prob.mask, np.where(prob.mask | (E > 0), -state.rho * E, 0.0))
            if C is not None and certificate(C, state.rho, state.iterations):
                break
            state.rho *= settings.HINGE_RHO_FACTOR
    return rho, state.iterations
