"""The path in the Gram form (coefficients of ``H``) for :mod:`._regpath`.

The loss in the split and the protocol both forms implement: :mod:`._path_split`.

The Gram form
-------------
When ``H`` has full row rank, every ``W`` with rows in the span of the embeddings is ``W = C^T
H`` for exactly one ``C`` (m x V): its logits are ``K C`` with ``K = H H^T`` (positive definite)
and ``<C_1^T H, C_2^T H> = sum_v c_1v^T K c_2v``. The coordinates of the split
(:class:`GramStructure`) form no basis of F or of ``R``:

* ``delta = C^T H`` with ``C`` zero off the supports and with zero row sums: exactly the
  matrices of ``F = span{(e_z - e_z') h_j^T}``, of dimension ``sum_j (|S_j| - 1)``, each row of
  ``C`` on its support in the Helmert basis of the zero-sum vectors
  (:func:`~._path_split.helmert_basis`; entries of ``C`` would also span row sums, which the
  iteration never corrects: the rounding of ``-W*`` at the start would stay there, far above
  the falling offset);
* ``W_perp`` by its margins ``mu`` (0 on the supports): a matrix of ``R ∩ F-perp`` has equal
  in-support logits in each context and zero column sums, so its logits are ``u 1^T - mu`` with
  ``u = mu 1 / V`` and its coefficients ``K^{-1} (u 1^T - mu)``; every pattern of margins is one
  such matrix, and the loss sees exactly these margins.

**The projection on F**: ``P_F(X^T H) = C^T H`` where ``C`` (on the supports, zero row sums) has
the in-support logits of ``X`` up to one constant per context (:func:`_f_map`): for
each token ``z``, ``K_z c_z = y_z + t`` on the contexts ``Z_z`` whose support holds ``z`` (``K_z
= K[Z_z, Z_z]``), and ``T t = -sum_z K_z^{-1} y_z`` with ``T = sum_z K_z^{-1}`` (each scattered
into ``m x m``; the inverses computed once per data set).

Newton's system
---------------
``(Hess CE + lambda I) x = r``: the Hessian is ``J^T D J`` with ``J`` the map to the logits and
``D_j = pi_j (diag q_j - q_j q_j^T)``. With ``psi = D J x`` (rows summing to zero) it becomes,
for each token ``v``,

    (K + lambda diag(1 / (pi q_v))) psi_v + c = b_v,    sum_v psi_jv = 0,

with ``b = J r`` up to a constant per context, which ``c`` absorbs: ``V`` positive definite
blocks of size ``m`` coupled only through the ``m`` multipliers ``c`` of the row sums, whose
system ``S c = sum_v M_v^{-1} b_v``, ``S = sum_v M_v^{-1}``, has size ``m``
(:class:`~._gram_blocks.NewtonFactors`). The logits of ``x`` (up to a constant per context) are both
``psi / (pi q)``, accurate where ``pi q`` is large (on the supports, where the F part is read,
without dividing by ``lambda ~ exp(-B / ||W^mm||)``), and ``(b - K psi - c) / lambda``, accurate
where it is small; each entry takes the better one. An entry with ``lambda / (pi q) > K_jj / eps``
has ``psi`` below the rounding of its equations and is left out of its block.

This form mixes the F and F-perp parts of ``r``: at large radii the F-perp part of ``x`` gets the
rounding of the F part of ``r`` divided by ``lambda``. The answer is therefore refined on its
residual, computed block by block, and where the mixing is the limit the blocks are solved apart
(block Gauss-Seidel; :meth:`GramStructure.solve`). The refinement also lets the factors of one
Newton matrix serve the next ones; each step is solved to the accuracy it needs
(:data:`ntpnb.settings.PATH_FORCING`). A factorization costs ``O(V m^3)``, a refinement round
(products with ``K`` and the stored inverses) ``O(V m^2)``, against ``O((V m)^3)`` for the
dense Hessian of the orthonormal representation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy
from numpy.typing import ArrayLike

from .. import settings
from .._validation import FrozenArrays
from ._gram_blocks import NewtonFactors, NoConvergenceError, scaled_inverse, scatter_add
from ._ntp_data import NTPData, cached_per_data
from ._path_split import Evaluation, Split, Workspace, helmert_basis, safe_norm, split_loss, star_exponents

# ---------------------------------------------------------------------------- the Gram form


@dataclass(frozen=True, eq=False)
class _Supports(FrozenArrays):
    """Per token ``z``: the contexts ``Z_z`` whose support holds it and ``K[Z_z, Z_z]^{-1}``, padded.

    ``contexts[z, i]`` for ``i < count[z]`` (0 beyond), ``inverse[z]`` zero beyond ``count[z]``;
    ``scatter`` sums the entries ``(z, i)`` into their contexts (``m x V * width``).
    """

    contexts: np.ndarray  # (V, width) int
    valid: np.ndarray  # (V, width) bool
    inverse: np.ndarray  # (V, width, width)
    scatter: scipy.sparse.csr_matrix
    rows: np.ndarray  # (V, width, m): the rows K[Z_z] (zero beyond count[z])
    T_inv: np.ndarray  # (m, m): the inverse of T = sum_z K_z^{-1} (the row sums of _f_map)


def _supports(K: np.ndarray, mask: np.ndarray) -> _Supports:
    m, V = mask.shape
    counts = mask.sum(axis=0)
    width = max(int(counts.max(initial=0)), 1)
    contexts = np.zeros((V, width), dtype=np.intp)
    valid = np.arange(width)[None, :] < counts[:, None]
    inverse = np.zeros((V, width, width))
    T = np.zeros((m, m))
    for z in range(V):
        Z = np.flatnonzero(mask[:, z])
        contexts[z, : Z.size] = Z
        if Z.size:
            inverse[z, : Z.size, : Z.size] = scaled_inverse(K[np.ix_(Z, Z)])
            scatter_add(T, Z, inverse[z, : Z.size, : Z.size])
    cols = np.flatnonzero(valid.ravel())
    scatter = scipy.sparse.csr_matrix(
        (np.ones(cols.size), (contexts.ravel()[cols], cols)), shape=(m, V * width)
    )
    rows = np.where(valid[:, :, None], K[contexts], 0.0)
    return _Supports(contexts, valid, inverse, scatter, rows, scaled_inverse(T))


def _k_times_f(sup: _Supports, C: np.ndarray) -> np.ndarray:
    """``K C`` for coefficients ``C`` (m, V), or stacks (k, m, V), that vanish off the supports.

    Column ``v`` of ``K C`` is ``K[:, Z_v] C[Z_v, v]``: ``m |Z_v|`` products per column instead
    of ``m^2`` (the supports hold ``S`` of the ``V`` tokens of each context).
    """
    stack = C if C.ndim == 3 else C[None]
    V = sup.valid.shape[0]
    y = np.where(sup.valid, stack[:, sup.contexts, np.arange(V)[:, None]], 0.0)  # (k, V, width)
    out = np.matmul(y.transpose(1, 0, 2), sup.rows).transpose(1, 2, 0)  # (k, m, V)
    return out if C.ndim == 3 else out[0]


def _f_map(
    sup: _Supports, Y: np.ndarray, row_sums: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(C, t)``: ``C`` on the supports, ``K C = Y + t 1^T`` there, with the given row sums (default 0).

    For stacks ``Y`` (k, m, V). With ``Y = K X`` and row sums 0, ``C^T H`` is the projection of
    ``X^T H`` on F (module docstring).
    """
    k = Y.shape[0]
    V, width = sup.valid.shape
    tokens = np.arange(V)[:, None]
    y = np.where(sup.valid, Y[:, sup.contexts, tokens], 0.0)  # (k, V, width)
    y = (y[:, :, None, :] @ sup.inverse)[:, :, 0, :]  # K_z^{-1} y_z
    beta = (sup.scatter @ y.reshape(k, V * width).T).T  # sum over tokens, per context
    t = ((0.0 if row_sums is None else row_sums) - beta) @ sup.T_inv
    tz = np.where(sup.valid, t[:, sup.contexts], 0.0)
    y += (tz[:, :, None, :] @ sup.inverse)[:, :, 0, :]
    C = np.zeros_like(Y)
    C[:, sup.contexts[sup.valid], np.broadcast_to(tokens, sup.valid.shape)[sup.valid]] = y[:, sup.valid]
    return C, t


def _block_sizes(dX: np.ndarray, X: np.ndarray, blocks: tuple[slice, slice]) -> tuple[np.ndarray, np.ndarray]:
    """``(max|dX|, max|dX| / max|X|)`` per block and column, ``(2, k)`` each.

    The relative size is 0 for an empty block and inf for a zero column of ``X`` under a nonzero
    correction.
    """
    size = np.array([np.abs(dX[b]).max(axis=0, initial=0.0) for b in blocks])  # (2, k)
    top = np.array([np.abs(X[b]).max(axis=0, initial=0.0) for b in blocks])
    with np.errstate(divide="ignore", invalid="ignore"):
        return size, np.where(top > 0, size / top, np.where(size > 0, np.inf, 0.0))


def _shrink(size: np.ndarray, last: np.ndarray | None) -> float:
    """How much a round's corrections shrank against the last round's (the largest ratio; 0 at first)."""
    if last is None:
        return 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.nanmax(np.where(last > 0, size / last, 0.0)))


@dataclass(frozen=True, eq=False)
class GramStructure(Split):
    """The split of a data set in the Gram form (:func:`gram_structure`).

    The coordinates of a matrix ``W_F + W_perp`` (F part, F-perp part) are those of its F
    coefficients ``C`` (each row on its support, in the Helmert basis), then its margins off
    the supports (row-major).
    """

    #: ``(m, d)`` the embeddings.
    H: np.ndarray
    #: ``(m, m)`` the Gram matrix ``H H^T``.
    K: np.ndarray
    #: Its lower Cholesky factor.
    K_factor: np.ndarray
    #: The supports.
    mask: np.ndarray
    #: The next-token probabilities.
    P: np.ndarray
    #: The context probabilities.
    pi: np.ndarray
    #: ``(m, V)``: the coefficients of ``W*`` in F.
    C_star: np.ndarray
    #: Per token, the contexts whose support holds it and ``K^{-1}`` on them; ``T^{-1}``.
    supports: _Supports
    #: ``(m V, dim F)`` scipy.sparse, orthonormal columns: the F coefficients (``vec C``) of each coordinate.
    f_basis: scipy.sparse.csr_matrix

    def _unpack(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(C, mu)``, each ``(m, V)`` (or ``(k, m, V)`` for ``x`` of shape ``(n, k)``)."""
        m, V = self.mask.shape
        r = self.n_f
        cols = x.reshape(x.shape[0], -1)  # (n, k)
        C = np.asarray(self.f_basis @ cols[:r]).T.reshape(-1, m, V)
        mu = np.zeros((cols.shape[1], m, V))
        mu[:, ~self.mask] = cols[r:].T
        return (C[0], mu[0]) if x.ndim == 1 else (C, mu)

    def _pack(self, C: np.ndarray, mu: np.ndarray) -> np.ndarray:
        """The inverse of :meth:`_unpack` for stacks ``(k, m, V)``: ``(n, k)``."""
        alpha = self.f_basis.T @ C.reshape(C.shape[0], -1).T
        return np.concatenate([np.asarray(alpha), mu[:, ~self.mask].T], axis=0)

    # ------------------------------------------------------------------ F and F-perp
    def perp_map(self, X: np.ndarray) -> np.ndarray:
        """The margins (k, m, V) of the matrix of ``R ∩ F-perp`` with coefficients ``X`` off the supports.

        That matrix represents the covector ``-X`` on the margins: the projection on F-perp of
        any ``C^T H`` with ``C = X`` off the supports (only those entries are read) and zero row sums.
        """
        X = np.where(self.mask, 0.0, X)
        KX = self.K @ X
        C, t = _f_map(self.supports, -KX, -X.sum(axis=-1))
        return np.where(self.mask, 0.0, t[..., None] - KX - _k_times_f(self.supports, C))

    def _whitened(self, mu: np.ndarray) -> np.ndarray:
        """``L^{-1}`` times the logits of the F-perp matrix with margins ``mu`` (``K = L L^T``).

        Those logits are ``u 1^T - mu``, ``u`` the mean margin of each context.
        """
        logits = mu.mean(axis=-1, keepdims=True) - mu
        return scipy.linalg.solve_triangular(self.K_factor, logits, lower=True, check_finite=False)

    # ------------------------------------------------------------------ what the solver asks
    def evaluate(self, data: NTPData, theta: np.ndarray, hessian: bool) -> Evaluation:
        """The loss at the split coordinates ``theta`` and its gradient (no Hessian is formed)."""
        C, mu = self._unpack(theta)
        loss = split_loss(data, self.a, _k_times_f(self.supports, C), mu)
        g = self.pi[:, None] * loss.q_minus_p
        g_F = _f_map(self.supports, (self.K @ g)[None])[0][0]
        grad = self._pack(g_F[None], self.perp_map(g[None]))[:, 0]
        return Evaluation(loss=loss, grad=grad, g=g, g_f=g_F, pi_q=self.pi[:, None] * loss.q)

    def _apply(self, ev: Evaluation, lam: float, X: np.ndarray) -> np.ndarray:
        """``(Hess CE + lam I) X`` (columns in the coordinates), each block from its own covector.

        ``y = D J x`` per context; the F block is the projection of ``y^T H`` on F, the F-perp
        block its margins from the entries of ``y`` off the supports alone.
        """
        C, mu = self._unpack(X)
        q = ev.loss.q
        ell = _k_times_f(self.supports, C) - mu  # logits of x up to a constant per context
        y = ev.pi_q * (ell - np.sum(q * ell, axis=-1, keepdims=True))
        return self._pack(_f_map(self.supports, self.K @ y)[0], self.perp_map(y)) + lam * X

    def _psi_solve(self, factors: NewtonFactors, R: np.ndarray) -> np.ndarray:
        """``N^{-1} R`` by the ``psi`` form for the Newton matrix ``N`` the factors were made for."""
        lam, pi_q = factors.lam, factors.pi_q
        C, mu = self._unpack(R)
        b = _k_times_f(self.supports, C) - mu
        psi, c = factors.solve(b)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ell = np.where(factors.first, psi / pi_q, (b - self.K @ psi - c[..., None]) / lam)
        X = _f_map(self.supports, ell)[0]
        KX = _k_times_f(self.supports, X)
        ref = np.sum(np.where(self.mask, self.P * (ell - KX), 0.0), axis=-1)
        mu_x = np.where(self.mask, 0.0, KX + ref[..., None] - ell)
        return self._pack(X, mu_x)

    def _perp_solve(self, ev: Evaluation, lam: float, factors: NewtonFactors, R: np.ndarray, X: np.ndarray):
        """``X`` (zero F-perp part) plus the solve of the F-perp part of the residual ``R - N X`` alone."""
        res = R - self._apply(ev, lam, X)
        res[: self.n_f] = 0.0
        return X + self._psi_solve(factors, res)

    def _correction(
        self, ev: Evaluation, lam: float, factors: NewtonFactors, res: np.ndarray, split: bool
    ) -> np.ndarray:
        """One round's correction ``N^{-1} res``: by ``psi`` at once, or (``split``) block by block.

        Split: the F part from the F residual alone, then both parts from the F-perp residual less
        that F part's coupling (:meth:`_perp_solve`).
        """
        if not split:
            return self._psi_solve(factors, res)
        r = self.n_f
        d_F = self._psi_solve(factors, np.concatenate([res[:r], np.zeros_like(res[r:])]))
        d_F[r:] = 0.0
        return self._perp_solve(ev, lam, factors, res, d_F)

    def _refine(
        self,
        ev: Evaluation,
        lam: float,
        R: np.ndarray,
        factors: NewtonFactors,
        rtol: np.ndarray,
        rounds: int | None = None,
    ) -> np.ndarray | None:
        """``N^{-1} R`` refined on its residual until each block of the correction is ``rtol`` of the answer.

        When the rounds stop shrinking (the mixed rounding of the module docstring), the F-perp
        part is solved again from the F part alone, and every later round solves the blocks apart
        (block Gauss-Seidel: the F part from the F residual alone, then both parts from the F-perp
        residual less that F part's coupling; no ``psi`` solve sees a right-hand side with both
        parts). Factors of an earlier matrix get ``rounds`` rounds; None when those do not suffice.
        """
        r = self.n_f
        fresh = rounds is None
        blocks = (slice(0, r), slice(r, None))
        X = self._psi_solve(factors, R)
        split = False
        last = None
        for _ in range(settings.PATH_MAX_REFINE if fresh else rounds + 1):  # the switch below takes one
            dX = self._correction(ev, lam, factors, R - self._apply(ev, lam, X), split)
            X = X + dX
            if not np.all(np.isfinite(X)):
                break
            size, relative = _block_sizes(dX, X, blocks)
            if np.all(relative.max(axis=0) <= rtol):
                return X
            shrink = _shrink(size, last)
            if shrink > 0.5 and split:
                break  # the rounding of the residual is the limit
            if shrink > 0.5:  # the mixed rounding: keep the F part, solve the F-perp part from it alone
                split, last = True, None
                X[r:] = 0.0
                X = self._perp_solve(ev, lam, factors, R, X)
            else:
                last = size
        return X if fresh else None

    def solve(
        self,
        ev: Evaluation,
        lam: float,
        rhs: np.ndarray,
        ws: Workspace | None = None,
        rtol: ArrayLike = settings.PATH_REFINE_RTOL,
    ) -> np.ndarray:
        """``(Hess CE + lam I)^{-1} rhs`` (columns) to ``rtol`` (one, or one per column) of itself.

        The last Newton matrix's factors, kept in ``ws``, serve the next one while the rounds
        needed (each shrinks the error by about :meth:`~._gram_blocks.NewtonFactors.change`) cost less than a
        factorization and can also reach :data:`ntpnb.settings.PATH_TANGENT_RTOL`, the
        tolerance every radius ends with.
        """
        ws = ws if ws is not None else Workspace()
        rtol = np.broadcast_to(np.asarray(rtol, dtype=float), rhs.shape[1:])
        rtol = np.maximum(rtol, settings.PATH_REFINE_RTOL)
        with np.errstate(over="ignore", invalid="ignore"):
            X = None
            fac = ws.factors
            if fac is not None and fac.lam == lam and fac.pi_q is ev.pi_q:
                X = self._refine(ev, lam, rhs, fac, rtol)
            elif fac is not None:
                change = fac.change(self.K, lam, ev.pi_q)
                # factors that cannot serve the radius's last solve are replaced now
                tightest = min(float(rtol.min()), settings.PATH_TANGENT_RTOL)
                rounds = math.ceil(math.log(tightest) / math.log(change)) if 0 < change < 0.5 else np.inf
                per_context = settings.PATH_REUSE_ROUNDS_PER_CONTEXT
                budget = min(settings.PATH_MAX_REUSE_ROUNDS, math.floor(per_context * self.K.shape[0]))
                if rounds <= budget:
                    X = self._refine(ev, lam, rhs, fac, rtol, rounds + 1)
            if X is None:
                ws.factors = NewtonFactors(self.K, lam, ev.pi_q)
                X = self._refine(ev, lam, rhs, ws.factors, rtol)
        if X is None or not np.all(np.isfinite(X)):
            raise NoConvergenceError("Newton's system overflows float64")
        return X

    def inner(self, x: np.ndarray, y: np.ndarray) -> float:
        """``<W_x, W_y>`` of the matrices with coordinates ``x`` and ``y``."""
        Cx, mux = self._unpack(x)
        Cy, muy = self._unpack(y)
        f_part = np.sum(Cx * _k_times_f(self.supports, Cy))
        return float(f_part + np.sum(self._whitened(mux) * self._whitened(muy)))

    def block_norms(self, x: np.ndarray) -> tuple[float, float]:
        """The norms of the F part and of the F-perp part of ``W_x`` (without underflow)."""
        C, mu = self._unpack(x)
        return safe_norm(C, lambda c: self.K_factor.T @ c), safe_norm(mu, self._whitened)

    def logit_step(self, ev: Evaluation, x: np.ndarray) -> float:
        """The largest change of a logit along the F part of ``x`` less its margins."""
        C, mu = self._unpack(x)
        return float(np.abs(_k_times_f(self.supports, C) - mu).max(initial=0.0))

    def matrices(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``vec`` of the F part and of the F-perp part (margins ``mu``) of the matrix ``W_x``."""
        C, mu = self._unpack(x)
        C_perp = scipy.linalg.solve_triangular(self.K_factor.T, self._whitened(mu), lower=False)
        return (C.T @ self.H).ravel(), (C_perp.T @ self.H).ravel()

    def gradient_split(self, data: NTPData, ev: Evaluation) -> tuple[np.ndarray, np.ndarray]:
        """``vec(grad CE)`` and its projection on F."""
        return (ev.g.T @ self.H).ravel(), (ev.g_f.T @ self.H).ravel()


def _f_basis(mask: np.ndarray) -> scipy.sparse.csr_matrix:
    """``(m V, sum_j (|S_j| - 1))``: each row's Helmert basis of the zero-sum vectors on its support."""
    m, V = mask.shape
    rows, cols, vals = [], [], []
    col = 0
    for j in range(m):
        support = np.flatnonzero(mask[j])
        Q = helmert_basis(support.size)  # (s, s - 1)
        r, c = np.nonzero(Q)
        rows.append(j * V + support[r])
        cols.append(col + c)
        vals.append(Q[r, c])
        col += support.size - 1
    return scipy.sparse.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(m * V, col)
    )


@cached_per_data
def gram_structure(data: NTPData) -> GramStructure:
    """The split of ``data`` in the Gram form (cached per data set); ``H`` must have full row rank.

    ``W*``, the matrix of F with in-support logits ``log p_j`` up to a constant per context
    (equations (4)), has the coefficients :func:`_f_map` of ``log P`` (much faster
    than :func:`~._compatibility.finite_solution`, same answer to 2e-15). With ``rank H = m`` the data
    are always NTP_H-compatible.
    """
    H = data.H
    K = H @ H.T
    mask = data.support_mask
    sup = _supports(K, mask)
    log_p = np.log(np.where(mask, data.P, 1.0))  # read on the supports only
    C_star = _f_map(sup, log_p[None])[0][0]
    W_star = C_star.T @ H
    K_factor = np.linalg.cholesky(K)
    f_basis = _f_basis(mask)
    return GramStructure(
        W_star=W_star,
        a=star_exponents(data, W_star),
        w_star=f_basis.T @ C_star.ravel(),
        w_star_norm=safe_norm(C_star, lambda c: K_factor.T @ c),  # ||C^T H||, K = L L^T
        n_f=int(f_basis.shape[1]),
        n_perp=int((~mask).sum()),
        H=H,
        K=K,
        K_factor=K_factor,
        mask=mask,
        P=data.P,
        pi=data.pi,
        C_star=C_star,
        supports=sup,
        f_basis=f_basis,
    )
