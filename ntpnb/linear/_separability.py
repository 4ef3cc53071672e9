r"""NTP-separability (Definition 2 of Paper A), decided right or honestly undecided.

**Separability** (Definition 2, :func:`decide_separability`): ``method`` only names where the
evidence is looked for first; every method weighs it by the same rules, so near float64's
resolution one may answer where another raises :class:`~ntpnb.errors.NumericallyAmbiguousError`,
never True against False. Each row of ``H`` is divided by its :func:`context_scales` (exact),
giving the normalized (6b) rows ``A`` and (6a) rows ``G``.

* A **direction** ``w`` (``max|w| = 1``) with margins ``a = A w``, each with the rigorous
  rounding bound ``r = 2 p eps |A| |w|`` (``p`` the non-zeros of a row), proves separability when
  every ``a_i > r_i`` and ``G w = 0`` up to its rounding and
  :data:`~ntpnb.settings.SEP_EQUALITY_RTOL` of the margin; on every machine when every
  ``a_i >= RANK_BAND r_i``.
* **Multipliers** ``lambda >= 0, mu`` bound every direction's smallest normalized margin by
  ``B = (||A^T lambda + G^T mu||_1 + rounding) / sum(lambda)`` (a Farkas certificate).

float64 resolves a normalized margin to ``rho = max(rho_margin, rho_cert)`` (``rho_margin =
max_i 2 p eps ||A_i||_1``, ``rho_cert`` the certificate's rounding over ``sum(lambda)``). The data
are **separable** when a direction proves it on every machine and the NTP-SVM is within reach;
**not separable** when ``B <= rho_cert + rho``, no direction is verified and those from ``H``
alone do not come within ``RANK_BAND`` of it; otherwise ambiguous (near-duplicate embeddings
with different supports are separable with a margin of the order of their distance). Within
reach: a unit-margin ``W`` no longer than the direction has its margins evaluated to ``kappa =
2 (d + 1) eps sqrt(2) max_j ||h_j|| ||W||``; above :data:`~ntpnb.settings.SVM_REACH_RTOL` the
NTP-SVM is solved and must pass its verification. ``method="newton"``
(:mod:`ntpnb.linear._hinge_newton`, for ``m > d``) decides to
:data:`~ntpnb.settings.SEP_MARGIN_TOL` instead, verified the same way through the logits.

Compatibility (Definition 1) and ``W*``: :mod:`._compatibility`.

Every decision is cached per data set, an ambiguous one too.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy

from .. import settings
from .._linalg import nonzero_count, thin_svd
from .._qp import least_distance_nnls
from ..errors import (
    InvalidDataError,
    NotSeparableError,
    RankAmbiguousError,
    ScaleError,
    SolverError,
)
from ._active_set import SOLVER_NAME as ACTIVE_SET_SOLVER
from ._active_set import solve_active_set, solve_verified
from ._constraints import (
    anchor_pairs,
    context_scales,
    margin_lp,
    ntp_constraints,
    pair_coefficients,
    pair_rows,
    scaled_rows,
)
from ._ntp_data import NTPData, cached_per_data, check_decoder, frozen, normalized, require_data, unambiguous
from ._subspace import normalized_f_decomposition, uses_dense_f

#: The ``method`` of a decision made by a solve from ``H`` alone (:func:`_from_embeddings`).
LEAST_SQUARES_METHOD = "least squares"
#: The ``method`` of a decision where there is no inequality (``W = 0``).
TRIVIAL_METHOD = "none (no inequality)"
#: The ``method`` of a decision made by the NTP-SVM witness (:func:`_from_witness`).
WITNESS_METHOD = f"NTP-SVM witness ({ACTIVE_SET_SOLVER})"
#: The ``method`` of a decision made by least-distance programming (:func:`_from_least_distance`).
LEAST_DISTANCE_METHOD = "least distance (NNLS in the complement of F)"


@dataclass(frozen=True)
class SeparabilityDecision:
    """A decision of Definition 2 (see the module docstring), whatever the method."""

    #: The answer.
    separable: bool
    #: A separating ``W`` (``V x d``, ``max|W| = 1``) for the scaled rows; None when not separable.
    direction: np.ndarray | None
    #: The verified normalized margin of ``direction``; 0 when not separable.
    margin: float
    #: The smallest certified bound on every normalized margin (inf when none was needed).
    bound: float
    #: What decided.
    method: str
    #: The normalized margin the decision resolves: float64's ``rho``, with the certificate's
    #: rounding when "not separable" (then ``bound <= 2 resolution``); for ``"newton"``
    #: :data:`~ntpnb.settings.SEP_MARGIN_TOL` (then ``bound <= resolution``).
    resolution: float = 0.0


@dataclass(frozen=True)
class _Rows:
    """Constraint rows ``M`` (dense or scipy.sparse) with ``|M|`` and the most non-zeros per row and column.

    The rounding of each entry of ``M @ x`` is at most ``2 p eps (|M| |x|)``, ``p`` the most
    non-zeros of a row (zero terms add no rounding); of ``M^T @ y`` the same with a column's.
    """

    M: np.ndarray | scipy.sparse.csr_matrix
    abs: np.ndarray | scipy.sparse.csr_matrix
    per_row: int
    per_column: int

    @classmethod
    def of(cls, M: np.ndarray | scipy.sparse.csr_matrix) -> _Rows:
        """The :class:`_Rows` of ``M``."""
        nonzero = M.getnnz if scipy.sparse.issparse(M) else (lambda axis: np.count_nonzero(M, axis=axis))
        return cls(
            M,
            abs(M),
            max(int(np.max(nonzero(axis=1), initial=0)), 1),
            max(int(np.max(nonzero(axis=0), initial=0)), 1),
        )

    def rounding(self, x: np.ndarray) -> np.ndarray:
        """A bound on the rounding of each entry of ``M @ x``."""
        return 2 * self.per_row * settings.FLOAT64_EPS * (self.abs @ np.abs(x))

    def transposed_rounding(self, y: np.ndarray) -> np.ndarray:
        """A bound on the rounding of each entry of ``M^T @ y``."""
        return 2 * self.per_column * settings.FLOAT64_EPS * (self.abs.T @ np.abs(y))


@dataclass(frozen=True)
class _MatrixRows:
    """The normalized (6b) rows ``A`` and (6a) rows ``G`` as matrices: the LP's form."""

    A: _Rows
    G: _Rows

    @classmethod
    def of(cls, data: NTPData, dense: bool = False) -> _MatrixRows:
        """The rows of :func:`~._constraints.ntp_constraints` for :func:`scaled_rows`; dense if ``dense``."""
        pairs, Hn = ntp_constraints(data), scaled_rows(data.H)
        a = pairs.anchors
        A = pair_rows(Hn, pairs.ineq_context, a[pairs.ineq_context], pairs.ineq_token, data.V, dense)
        G = pair_rows(Hn, pairs.eq_context, pairs.eq_token, a[pairs.eq_context], data.V, dense)
        return cls(_Rows.of(A), _Rows.of(G))

    def evaluate(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``A w`` and ``G w``, each with the rounding bound of its entries."""
        return self.A.M @ w, self.A.rounding(w), self.G.M @ w, self.G.rounding(w)

    def residual(self, lam: np.ndarray, mu: np.ndarray) -> tuple[np.ndarray, float]:
        """``A^T lam + G^T mu`` and the rounding bound of its 1-norm."""
        r = self.A.M.T @ lam + self.G.M.T @ mu
        return r, float((self.A.transposed_rounding(lam) + self.G.transposed_rounding(mu)).sum())


@dataclass(frozen=True)
class _LogitRows:
    """The rows of (6b) and (6a) for embeddings ``H`` and supports ``mask``, through the logits.

    ``A w`` and ``G w`` are the logit gaps of ``L = H W^T``, each logit rounded by at most
    ``2 d eps |h_j| . |w_v|``; ``A^T lam + G^T mu = vec(C^T H)``. No matrix of rows is formed.
    """

    H: np.ndarray
    mask: np.ndarray

    def evaluate(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``A w`` and ``G w``, each with the rounding bound of its entries."""
        W = np.reshape(w, (self.mask.shape[1], self.H.shape[1]))
        rows, (anchors, eq) = np.arange(self.H.shape[0]), anchor_pairs(self.mask)
        L = self.H @ W.T
        with np.errstate(over="ignore"):
            err = _eps(self.H.shape[1]) * (np.abs(self.H) @ np.abs(W).T)
        gaps, bound = L[rows, anchors][:, None] - L, err[rows, anchors][:, None] + err
        return gaps[~self.mask], bound[~self.mask], gaps[eq], bound[eq]

    def residual(self, lam: np.ndarray, mu: np.ndarray) -> tuple[np.ndarray, float]:
        """``vec(C^T H) = A^T lam + G^T mu`` and the rounding bound of its 1-norm (anchor sums, product)."""
        C = pair_coefficients(self.mask, *anchor_pairs(self.mask), lam, mu)
        absC, absH = np.abs(C), np.abs(self.H)
        rounding = _eps(self.H.shape[0]) * float((absC.T @ absH).sum())
        rounding += _eps(self.mask.shape[1]) * float(absC.sum(axis=1) @ absH.sum(axis=1))
        return (C.T @ self.H).ravel(), rounding


def _eps(n: int) -> float:
    """A bound on the relative rounding of a float64 sum of ``n`` products (``2 n eps``)."""
    return 2.0 * max(n, 1) * settings.FLOAT64_EPS


# ---------------------------------------------------------------------------- the evidence
@dataclass(frozen=True)
class _Direction:
    """A checked direction: ``margin = min(a - r)`` and ``ratio = min(a / r)`` (``-inf`` if (6a) breaks)."""

    w: np.ndarray
    margin: float
    ratio: float
    method: str


def _checked_direction(
    rows: _MatrixRows | _LogitRows, w: np.ndarray | None, method: str
) -> _Direction | None:
    """``w`` scaled to ``max|w| = 1`` with its verified margin and ratio; None when there is no candidate."""
    if w is None or not np.all(np.isfinite(w)) or not np.any(w):
        return None
    w = frozen(w / np.abs(w).max())
    a, r, g, g_rounding = rows.evaluate(w)
    margin = float((a - r).min(initial=np.inf))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = float(np.min(np.where(r > 0, a / r, np.where(a > 0, np.inf, -np.inf)), initial=np.inf))
    allowed = settings.RANK_BAND * g_rounding + settings.SEP_EQUALITY_RTOL * max(margin, 0.0)
    if np.any(np.abs(g) > allowed):
        return _Direction(w, -np.inf, -np.inf, method)
    return _Direction(w, margin, ratio, method)


@dataclass(frozen=True)
class _Certificate:
    """Multipliers' certified bound on every normalized margin, and its rounding part."""

    bound: float
    rounding: float
    method: str


def _certificate(
    rows: _MatrixRows | _LogitRows, lam: np.ndarray, mu: np.ndarray, method: str
) -> _Certificate | None:
    """The bound of multipliers ``lam >= 0, mu`` (None when they bound nothing).

    Every ``w`` with ``G w = 0`` and ``max|w| <= 1`` has ``min(A w) <= (A^T lam + G^T mu)^T w /
    sum(lam) <= ||A^T lam + G^T mu||_1 / sum(lam)``, with the rounding added.
    """
    lam = np.maximum(lam, 0.0)
    total = float(lam.sum())
    if total <= 0 or not np.all(np.isfinite(mu)) or not np.all(np.isfinite(lam)):
        return None
    r, rounding = rows.residual(lam, mu)
    sums = 1.0 + 2 * (r.size + lam.size) * settings.FLOAT64_EPS
    return _Certificate(sums * (float(np.abs(r).sum()) + rounding) / total, sums * rounding / total, method)


@dataclass
class _Evidence:
    """What the sources of a decision found: the best direction and certificate."""

    data: NTPData
    rows: _MatrixRows
    resolution: float
    direction: _Direction | None = None
    certificate: _Certificate | None = None
    tried: list[str] = field(default_factory=list)
    lp_status: list[int] = field(default_factory=list)  # of each linprog run
    embeddings_tried: bool = False
    embeddings_ratio: float = -np.inf  # the best ratio of the directions from H alone

    @classmethod
    def of(cls, data: NTPData) -> _Evidence:
        """Empty evidence for ``data`` at resolution ``rho_margin`` (rows dense for least distance)."""
        rows = _MatrixRows.of(data, dense=_least_distance_fits(data))
        return cls(data, rows, float(np.max(rows.A.rounding(np.ones(rows.A.M.shape[1])), initial=0.0)))

    def offer_direction(self, w: np.ndarray | None, method: str) -> None:
        """Keep ``w`` if it comes closer to proving separability than the best so far."""
        found = _checked_direction(self.rows, w, method)
        if found is not None and method == LEAST_SQUARES_METHOD:
            self.embeddings_ratio = max(self.embeddings_ratio, found.ratio)
        if found is not None and (self.direction is None or found.ratio > self.direction.ratio):
            self.direction = found

    def offer_multipliers(self, lam: np.ndarray, mu: np.ndarray, method: str) -> None:
        """Keep the certificate of ``lam, mu`` if it bounds the margin more tightly than the best so far."""
        found = _certificate(self.rows, lam, mu, method)
        if found is not None and (self.certificate is None or found.bound < self.certificate.bound):
            self.certificate = found

    @property
    def proved(self) -> bool:
        """Whether a direction proves separability on every machine."""
        return self.direction is not None and self.direction.ratio >= settings.RANK_BAND

    @property
    def refuted(self) -> bool:
        """Whether a certificate holds to rounding and no direction (from ``H`` alone: nearly) is verified."""
        cert = self.certificate
        if cert is None or (self.direction is not None and self.direction.ratio > 1):
            return False
        if self.embeddings_ratio > 1 / settings.RANK_BAND:
            return False
        return cert.bound <= cert.rounding + max(self.resolution, cert.rounding)

    def outcome(self) -> SeparabilityDecision | str:
        """The decision, or the ambiguity's message: why the evidence decides nothing, with its numbers."""
        bound = np.inf if self.certificate is None else self.certificate.bound
        if self.proved:
            d, shape = self.direction, (self.data.V, self.data.d)
            return SeparabilityDecision(True, d.w.reshape(shape), d.margin, bound, d.method, self.resolution)
        if self.refuted:
            cert = self.certificate
            rho = max(self.resolution, cert.rounding)
            return SeparabilityDecision(False, None, 0.0, bound, cert.method, rho)
        d, cert = self.direction, self.certificate
        best = "none verified" if d is None or d.ratio <= 1 else f"{d.margin:.3g} ({d.method})"
        near = "" if d is None or not np.isfinite(d.ratio) else f", margin / rounding bound {d.ratio:.3g}"
        bound = "none" if cert is None else f"{cert.bound:.3g} ({cert.method})"
        rho = self.resolution if cert is None else max(self.resolution, cert.rounding)
        return (
            f"NTP-separability is numerically ambiguous (m={self.data.m}, d={self.data.d}, "
            f"V={self.data.V}): best verified normalized margin {best}{near}; certified bound on every "
            f"normalized margin {bound}; float64 resolves normalized margins to {rho:.3g} "
            f"(a decision needs a margin {settings.RANK_BAND:g} times its rounding bound, or a bound "
            f"whose residual is within the resolution). Near-duplicate embeddings with different "
            f"supports are separable only with a margin of the order of their distance"
            + ("; tried: " + "; ".join(self.tried) if self.tried else "")
        )


# ---------------------------------------------------------------------------- the sources
def _from_embeddings(ev: _Evidence) -> None:
    """With ``m <= d``, the minimum-norm ``W`` with logits 1 on the supports and 0 elsewhere (Lemma 1)."""
    data = ev.data
    if ev.embeddings_tried or data.m > data.d:
        return
    ev.embeddings_tried = True
    scales = context_scales(data.H)
    logits = data.support_mask.astype(float)
    U, s, Vt = thin_svd(data.H / scales[:, None], "the embeddings H")
    k = nonzero_count(s, data.H.shape)
    for target in (logits / scales[:, None], logits) if k else ():  # equal margins for H, then for its rows
        ev.offer_direction((((U[:, :k].T @ target) / s[:k, None]).T @ Vt[:k]).ravel(), LEAST_SQUARES_METHOD)
        if ev.proved:
            break
    ev.tried.append(f"the full-rank solve from H ({k} of {data.m} singular values resolved)")


def _free_directions(data: NTPData) -> np.ndarray:
    """An orthonormal basis (columns) of the ``vec(W)`` with ``G w = 0`` and zero column sums.

    The complement of F and of the ``W = 1 u^T``, orthonormal and mutually orthogonal: a complete
    QR gives it, with no rank decision of its own.
    """
    known = np.kron(np.full((data.V, 1), 1 / np.sqrt(data.V)), np.eye(data.d))  # W = 1 u^T
    if ntp_constraints(data).eq_context.size:  # F = {0} without equations
        known = np.hstack([normalized_f_decomposition(data).basis.T, known])  # rows of the basis of F
    n, k = known.shape[0], known.shape[0] - known.shape[1]
    if k == 0:
        return np.zeros((n, 0))
    # the last k columns of the complete Q, without forming the others: Q applied to [0; I]
    qr, tau, _, info = scipy.linalg.lapack.dgeqrf(known)
    tail = np.zeros((n, k))
    tail[n - k :] = np.eye(k)
    free, _, info_q = scipy.linalg.lapack.dormqr("L", "N", qr, tau, tail, lwork=max(1, 64 * k))
    if info or info_q:
        raise SolverError(f"LAPACK's QR of F and its complement failed (info {info}, {info_q})")
    return free


def _least_distance_fits(data: NTPData) -> bool:
    """Whether least-distance programming applies: F decomposed densely, (6b) rows within the limit."""
    n_ineq = ntp_constraints(data).ineq_context.size
    entries = n_ineq * data.V * data.d
    return uses_dense_f(data) and entries <= settings.LEAST_DISTANCE_MAX_ENTRIES


def _from_least_distance(ev: _Evidence) -> None:
    """A direction or multipliers by least-distance programming (one NNLS, Lawson and Hanson 1974, ch. 23).

    With ``N`` from :func:`_free_directions` and ``B = A N``, the data are separable iff ``B z >= 1``
    is feasible: ``w = N B^T u / slack`` is offered, and ``u`` with the equality multipliers that
    cancel ``A^T u`` on F as a certificate.
    """
    data = ev.data
    if not _least_distance_fits(data):
        return
    A, G = ev.rows.A.M, ev.rows.G.M  # dense (see _Evidence.of)
    try:
        N = _free_directions(data)
    except RankAmbiguousError:
        ev.tried.append("least distance: dim F is ambiguous")
        return
    B = A @ N  # (n_ineq, k)
    found = least_distance_nnls(B, np.ones(B.shape[0]))
    if found is None:
        ev.tried.append("least distance: NNLS did not converge")
        return
    u, slack = found
    if slack > 0:
        ev.offer_direction(N @ (B.T @ u) / slack, LEAST_DISTANCE_METHOD)
    mu = np.zeros(G.shape[0])
    if G.shape[0] and normalized_f_decomposition(data).dim:
        # G^T nu = -(the part of A^T u in F) for the equality rows of H; G holds them divided by
        # each context's row scale, so its multipliers are nu times that scale
        dec = normalized_f_decomposition(data)
        nu = -dec.U @ ((dec.basis @ (A.T @ u)) / dec.s)
        mu = nu * context_scales(data.H)[ntp_constraints(data).eq_context]
    ev.offer_multipliers(u, mu, LEAST_DISTANCE_METHOD)
    ev.tried.append(f"least distance (slack {slack:.3g})")


def _from_lp(ev: _Evidence, method: str) -> None:
    """Offer the max-margin LP's point and multipliers (one linprog ``method``)."""
    A, G = (scipy.sparse.csr_matrix(rows.M) for rows in (ev.rows.A, ev.rows.G))
    # max t  s.t.  A w >= t,  G w = 0,  -1 <= w <= 1,  t <= LP_MARGIN_CAP
    bounds = np.array([(-1.0, 1.0)] * A.shape[1] + [(-np.inf, settings.LP_MARGIN_CAP)])
    options = {"time_limit": settings.LP_TIME_LIMIT, **settings.LP_OPTIONS.get(method, {})}
    res = margin_lp(A, G, np.ones((A.shape[0], 1)), bounds, method, options)
    ev.offer_direction(None if res.x is None else res.x[:-1], method)
    ineq, eq = getattr(res, "ineqlin", None), getattr(res, "eqlin", None)
    if ineq is not None and getattr(ineq, "marginals", None) is not None:  # lambda >= 0 of (6b), mu of (6a)
        mu = np.asarray(eq.marginals, dtype=float) if G.shape[0] else np.zeros(0)
        ev.offer_multipliers(-np.asarray(ineq.marginals, dtype=float), mu, method)
    ev.lp_status.append(res.status)
    ev.tried.append(f"{method} (linprog status {res.status}{f': {res.message}' if res.status else ''})")


def _from_witness(ev: _Evidence) -> None:
    """``W^mm`` of the fast NTP-SVM solver (if it succeeds) as a direction, for a large LP."""
    if ev.data.V * ev.data.d >= settings.SVM_WITNESS_MIN_VARIABLES:
        try:
            W = solve_active_set(ev.data, max_iter=settings.SVM_WITNESS_MAX_ITER).W.ravel()
        except SolverError:
            W = None
        ev.offer_direction(W, WITNESS_METHOD)
        ev.tried.append("the NTP-SVM witness")


# ---------------------------------------------------------------------------- the decision
def _decided(data: NTPData, sources: tuple[Callable[[_Evidence], None], ...]) -> SeparabilityDecision | str:
    """The decision of the ``sources`` for normalized ``data`` (within the NTP-SVM's reach), or why none.

    The sources run in turn until the evidence decides; ``H`` alone is tried before a refutation.
    Undecided with every LP failed is a :class:`~ntpnb.errors.SolverError`, not an ambiguity.
    """
    if ntp_constraints(data).ineq_context.size == 0:  # no out-of-support token: W = 0 satisfies (6)
        return SeparabilityDecision(True, frozen(np.zeros((data.V, data.d))), np.inf, np.inf, TRIVIAL_METHOD)
    ev = _Evidence.of(data)
    for source in sources:
        source(ev)
        if ev.refuted:
            _from_embeddings(ev)
        if ev.proved or ev.refuted:
            break
    outcome = ev.outcome()
    if isinstance(outcome, str) and ev.lp_status and 0 not in ev.lp_status:
        raise SolverError(
            f"could not decide NTP-separability (m={data.m}, d={data.d}, V={data.V}): the max-margin LP "
            f"did not solve and nothing else decided; tried: {'; '.join(ev.tried)}"
        )
    if isinstance(outcome, SeparabilityDecision) and outcome.separable:
        failure = _reach_failure(data, ev.rows.A, outcome)
        if failure is not None:
            return failure
    return outcome


def _sources(data: NTPData, method: str) -> tuple[Callable[[_Evidence], None], ...]:
    """The sources of ``method`` (not ``"newton"``) in order (see :func:`decide_separability`).

    ``"auto"`` solves one LP: by ``LP_SMALL_METHOD`` if small, else by ``LP_METHOD``; ``"lp"``
    tries ``LP_METHOD``, then the fallbacks.
    """
    if method == "auto":
        small = data.V * data.d <= settings.LP_SMALL_MAX_VARIABLES
        lp = functools.partial(_from_lp, method=settings.LP_SMALL_METHOD if small else settings.LP_METHOD)
        return _from_embeddings, _from_least_distance, _from_witness, lp
    lps = dict.fromkeys((settings.LP_METHOD, *settings.LP_FALLBACK_METHODS))
    return (*(functools.partial(_from_lp, method=lp) for lp in lps), _from_embeddings, _from_least_distance)


#: The outcome of each method (not ``"newton"``) for normalized data, cached per data set.
_OUTCOMES = {
    method: cached_per_data(lambda data, method=method: _decided(data, _sources(data, method)))
    for method in ("auto", "lp")
}


# ---------------------------------------------------------------------------- the Newton continuation
def verified_margin(H: np.ndarray, mask: np.ndarray, W: np.ndarray) -> tuple[float, np.ndarray]:
    """Verified normalized margin of a direction ``W`` and ``W`` scaled to ``max |W_ik| = 1``.

    The smallest out-of-support logit gap less its rounding bound; ``-inf`` when (6a) fails
    beyond its rounding, or ``W`` (``V x d``) is zero or not finite. For :func:`scaled_rows` it
    compares with :data:`~ntpnb.settings.SEP_MARGIN_TOL`.
    """
    found = _checked_direction(_LogitRows(H, mask), W.ravel(), "")
    return (-np.inf, W) if found is None else (found.margin, found.w.reshape(W.shape))


def certified_bound(H: np.ndarray, mask: np.ndarray, C: np.ndarray) -> float:
    """Certified upper bound on the normalized margin of every direction, from coefficients ``C``.

    ``lambda_jv = max(-C_jv, 0)`` off the supports, ``mu`` the other in-support entries; ``inf``
    when ``lambda`` is zero or ``C`` is not finite.
    """
    C, mask = np.asarray(C, dtype=float), np.asarray(mask, dtype=bool)
    if not np.all(np.isfinite(C)):
        return np.inf
    rows = _LogitRows(np.asarray(H, dtype=float), mask)
    cert = _certificate(rows, np.maximum(-C, 0.0)[~mask], C[anchor_pairs(mask)[1]], "")
    return np.inf if cert is None else cert.bound


def _newton_method(separable: bool, rho: float, iterations: int) -> str:
    """How ``"newton"`` decided, for a table."""
    from ._hinge_newton import SOLVER_NAME

    kind = "verified direction" if separable else "Farkas certificate"
    return f"{SOLVER_NAME} ({kind}, rho = {rho:.0e}, {iterations} iterations)"


@dataclass(frozen=True)
class NewtonDecision:
    """The decision of ``method="newton"`` with what only its continuation finds."""

    #: The decision, as :func:`decide_separability` returns it.
    decision: SeparabilityDecision
    #: The Farkas ``C`` (``m x V``) of "not separable", None when separable.
    certificate: np.ndarray | None
    #: The Newton steps taken.
    iterations: int


def decide_by_newton(data: NTPData) -> NewtonDecision:
    """``decide_separability(data, "newton")`` with its Farkas ``C`` and Newton steps.

    The first candidate of the continuation verified to :data:`~ntpnb.settings.SEP_MARGIN_TOL`.

    Raises
    ------
    SolverError
        As :func:`decide_separability` with ``method="newton"``.
    """
    from ._hinge_newton import continuation  # the solver behind this method only

    require_data(data)
    H, mask, tol = scaled_rows(data.H), data.support_mask, settings.SEP_MARGIN_TOL
    if mask.all():  # no out-of-support token: W = 0 satisfies (6)
        method = _newton_method(True, 0.0, 0)
        return NewtonDecision(
            SeparabilityDecision(True, np.zeros((data.V, data.d)), np.inf, np.inf, method), None, 0
        )
    watch = _Candidates(H, mask, tol)
    rho, iterations = continuation(H, mask, watch.direction, watch.certificate)
    if watch.found:
        return watch.found[0]
    raise SolverError(
        "could not decide NTP-separability: no verified separating direction with normalized margin "
        f">= {tol:g} (best {watch.margin:.3g}) and no Farkas certificate bounding "
        f"it below (best {watch.bound:.3g}) by rho = {rho:.0e} after "
        f"{iterations} Newton iterations (m={data.m}, d={data.d}, V={data.V}): the data may lie "
        "within that margin of the separability boundary. Decide with the LP instead "
        "(ntpnb.is_separable(data, method='lp')) or perturb the embeddings slightly."
    )


@dataclass
class _Candidates:
    """The continuation's candidates checked as they come: the first verified decision, and the best seen.

    :meth:`direction` and :meth:`certificate` are the callbacks of
    :func:`~ntpnb.linear._hinge_newton.continuation`: each returns whether a decision was found.
    """

    H: np.ndarray
    mask: np.ndarray
    tol: float
    #: The best verified normalized margin of a candidate direction, and bound of a certificate.
    margin: float = -np.inf
    bound: float = np.inf
    found: list[NewtonDecision] = field(default_factory=list)

    def direction(self, W: np.ndarray, rho: float, iterations: int) -> bool:
        """Keep ``W`` if its verified margin reaches ``tol``: the data are separable."""
        margin, unit = verified_margin(self.H, self.mask, W)
        self.margin = max(self.margin, margin)
        if margin >= self.tol:
            decision = SeparabilityDecision(
                True, unit, margin, np.inf, _newton_method(True, rho, iterations), self.tol
            )
            self.found.append(NewtonDecision(decision, None, iterations))
        return bool(self.found)

    def certificate(self, C: np.ndarray, rho: float, iterations: int) -> bool:
        """Keep ``C`` if its certified bound is at most ``tol``: the data are not separable."""
        bound = certified_bound(self.H, self.mask, C)
        self.bound = min(self.bound, bound)
        if bound <= self.tol:
            decision = SeparabilityDecision(
                False, None, 0.0, bound, _newton_method(False, rho, iterations), self.tol
            )
            self.found.append(NewtonDecision(decision, frozen(C), iterations))
        return bool(self.found)


def proves_separable(data: NTPData, W: np.ndarray) -> bool:
    """Whether ``W`` proves ``data`` separable on every machine, as a direction of the decision.

    Unlike the NTP-SVM's own verification (absolute in the units of ``H / max|H|``), this sees
    (6a) broken on a row much smaller than the others.
    """
    if ntp_constraints(data).ineq_context.size == 0:
        return True
    found = _checked_direction(_MatrixRows.of(data), np.ravel(W), "")
    return found is not None and found.ratio >= settings.RANK_BAND


# ---------------------------------------------------------------------------- the NTP-SVM's reach
def _unscaled_margin(data: NTPData, A: np.ndarray | scipy.sparse.csr_matrix, w: np.ndarray) -> float:
    """The smallest margin of ``w`` for the rows of ``H``: row ``j`` of ``A`` was divided by its scale."""
    return float((context_scales(data.H)[ntp_constraints(data).ineq_context] * (A @ w)).min())


def _reach_failure(data: NTPData, A: _Rows, sep: SeparabilityDecision) -> str | None:
    """None when "separable" may stand (the NTP-SVM is within reach), else the ambiguity's message.

    Within reach when ``kappa`` (the module docstring) of the direction scaled to smallest margin 1
    (inf if no margin is positive) is at most ``SVM_REACH_RTOL``, or the NTP-SVM is solved and
    verified anyway (:func:`~._active_set.solve_verified`: the active-set method, else the cvxpy
    reference).
    """
    w = sep.direction.ravel()
    t, kappa = _unscaled_margin(data, A.M, w), np.inf
    if t > 0:
        with np.errstate(over="ignore"):
            norm_W = float(np.linalg.norm(w)) / t
            h = float(np.linalg.norm(data.H, axis=1).max())
            kappa = 2 * (data.d + 1) * settings.FLOAT64_EPS * np.sqrt(2.0) * h * norm_W
    if kappa <= settings.SVM_REACH_RTOL:
        return None
    try:
        solve_verified(data)
        return None
    except SolverError as exc:
        failure = str(exc)
    return (
        f"NTP-separability is numerically ambiguous (m={data.m}, d={data.d}, V={data.V}): the data are "
        f"separable in exact arithmetic (verified normalized margin {sep.margin:.3g}, {sep.method}), but "
        f"W^mm is beyond float64's reach: a W with unit margins is evaluated only to {kappa:.3g} of its "
        f"margin (above {settings.SVM_REACH_RTOL:g}) and the NTP-SVM fails its verification ({failure})"
    )


# ---------------------------------------------------------------------------- Definition 2
def satisfies_definition_2(data: NTPData, W: np.ndarray, tol: float) -> bool:
    """Whether ``W`` meets Definition 2 (6a)-(6b) to ``tol`` relative to ``s = 1 + max|W_ij|``.

    Every (6b) margin less a rigorous bound on its rounding is at least ``1 - tol s``; every (6a)
    residual at most ``tol s`` plus that bound. False when ``tol s >= 1`` (a ``W`` too large for
    its logits to be evaluated does not pass by the tolerance alone).

    Raises
    ------
    InvalidDataError
        If ``W`` is not a finite ``(V, d)`` matrix.
    """
    W = check_decoder(data, W)
    scale = 1.0 + float(np.abs(W).max())
    margins, margin_err, residuals, eq_err = _LogitRows(data.H, data.support_mask).evaluate(W.ravel())
    margin_err = (margin_err + settings.FLOAT64_EPS * np.abs(margins)) * (1 + 4 * settings.FLOAT64_EPS)
    eq_err = (eq_err + settings.FLOAT64_EPS * np.abs(residuals)) * (1 + 4 * settings.FLOAT64_EPS)
    verified = margins - margin_err
    return bool(
        tol * scale < 1
        and np.all(np.isfinite(verified))
        and verified.min(initial=np.inf) >= 1 - tol * scale
        and np.all(np.abs(residuals) - eq_err <= tol * scale)
    )


# ---------------------------------------------------------------------------- the public face
#: The methods of :func:`decide_separability` (and :func:`is_separable`).
SEPARABILITY_METHODS: tuple[str, ...] = ("auto", "lp", "newton")


def decide_separability(data: NTPData, method: str = "auto") -> SeparabilityDecision:
    """Whether the data are NTP-separable (Definition 2 of Paper A): one decision, certified.

    Every method but ``"newton"`` gives the same answer; ``method`` chooses where the evidence is
    looked for first.

    Parameters
    ----------
    method
        ``"auto"`` (the default): directions from ``H`` alone (they
        separate when ``H`` has full row rank, Lemma 1 of Paper A), then, when the (6b) rows are
        within :data:`ntpnb.settings.LEAST_DISTANCE_MAX_ENTRIES`, least-distance programming
        (one NNLS); otherwise or if undecided, the normalized max-margin LP (HiGHS: the dual
        simplex up to :data:`ntpnb.settings.LP_SMALL_MAX_VARIABLES` entries of ``W``, else the
        interior point), after the active-set ``W^mm`` as a candidate when the LP is large
        (:data:`ntpnb.settings.SVM_WITNESS_MIN_VARIABLES`).

        ``"lp"``: the max-margin LP first, interior point first, then the dual simplex, ``H``
        alone and least distance; for data likely not separable.

        ``"newton"``: the squared-hinge continuation of :mod:`ntpnb.linear._hinge_newton` (many
        contexts in few dimensions), certified either way to :data:`~ntpnb.settings.SEP_MARGIN_TOL`.
        Not cached.

    Raises
    ------
    InvalidDataError
        If ``method`` is not one of :data:`SEPARABILITY_METHODS`.
    NumericallyAmbiguousError
        If the data lie within float64's reach of the separability boundary (e.g. near-duplicate
        embeddings with different supports), or are separable but ``W^mm`` is beyond its reach;
        the message gives the best verified margin, the certified bound and the resolution.
    SolverError
        ``"newton"``: if neither a verified margin of at least ``SEP_MARGIN_TOL`` nor a certified
        bound of at most it is found by ``rho =`` :data:`~ntpnb.settings.HINGE_RHO_MAX`; the
        message gives the best of each. The others: if every LP tried failed (no linprog status
        0) and nothing else decided; the message names each LP and its status.
    """
    if method not in SEPARABILITY_METHODS:
        raise InvalidDataError(f"method must be one of {SEPARABILITY_METHODS}, got {method!r}")
    if method == "newton":
        return decide_by_newton(data).decision
    return unambiguous(_OUTCOMES[method](normalized(data)[0]))


def normalized_separability(norm: NTPData) -> SeparabilityDecision:
    """:func:`decide_separability` (``"auto"``) of data already :func:`~._ntp_data.normalized`.

    ``norm`` is used as it is (not normalized again).
    """
    return unambiguous(_OUTCOMES["auto"](norm))


def is_separable(data: NTPData, method: str = "auto") -> bool:
    """Whether the data are NTP-separable: :func:`decide_separability`'s answer (same parameters)."""
    return decide_separability(data, method).separable


def separating_direction(data: NTPData) -> np.ndarray:
    """Some ``W^d`` satisfying (6a) and (6b) (Definition 2), scaled to smallest margin 1.

    The least-squares solution of ``H W^T = S``, ``S`` being 1 on each support and 0 off it, when
    it separates (always when ``H`` has full row rank); otherwise the interior-point max-margin
    LP's point. It is not ``W^mm``. Its part ``1 u^T`` (no log-odds change) is removed: its
    columns sum to zero, as those of ``W^mm`` and of every gradient iterate from ``W = 0`` do.

    Raises
    ------
    NotSeparableError
        If the data are not NTP-separable.
    NumericallyAmbiguousError
        As :func:`is_separable`.
    ScaleError
        If the direction does not fit in float64 (embeddings near the underflow threshold).
    """
    sep = require_separable(data)
    if sep.method not in (LEAST_SQUARES_METHOD, TRIVIAL_METHOD, settings.LP_METHOD):
        # a simplex vertex, NNLS or the SVM witness decided: take the interior-point method's point
        interior = decide_separability(data, "lp")
        sep = interior if interior.separable else sep
    if ntp_constraints(data).ineq_context.size == 0:
        return np.zeros((data.V, data.d))
    margin = _unscaled_margin(data, _MatrixRows.of(data).A.M, sep.direction.ravel())
    with np.errstate(over="ignore", invalid="ignore"):
        W = sep.direction / margin
        W -= W.mean(axis=0)  # the part 1 u^T, which changes no log-odds
    if not np.all(np.isfinite(W)):
        raise ScaleError(
            f"a separating direction of these data has entries beyond the float64 range "
            f"(smallest margin {margin:.3g} at max|W| = 1); rescale H"
        )
    return W


def require_separable(data: NTPData) -> SeparabilityDecision:
    """:func:`decide_separability` if separable, else :class:`NotSeparableError` with its certificate."""
    sep = decide_separability(data)
    if not sep.separable:
        raise NotSeparableError(
            "the data are not NTP-separable: no W satisfies (6a) and (6b) "
            f"(m={data.m}, d={data.d}, V={data.V}; the multipliers of {sep.method} certify that "
            f"no direction has normalized margin above {sep.bound:.2g}, float64's resolution "
            f"{sep.resolution:.2g})"
        )
    return sep
