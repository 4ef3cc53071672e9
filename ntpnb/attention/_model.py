"""The one-layer attention model of Paper B, its heads, its losses and their analytic gradients.

The model is ``f_W(X) = X^T S(X W x_bar)`` (Eq. (1)), ``S`` the softmax, ``x_bar`` the query (last)
token; a fixed head ``C`` (``K x d``) gives class scores ``C f_W(X)``. Losses (Sec. 3.3, 5, 6),
averaged over samples:

* ``"log"``: ``-log(c_y^T f_W(X))`` (Sec. 5; needs ``c_y^T x_t >= 0``; under ``C E^T = I``, minus the
  log of the attention on the label's copies);
* ``"squared"``: ``(1 - c_y^T f_W(X))^2`` (Fig. 5);
* ``"ce"``: the cross-entropy ``-log softmax(C f_W(X))_y`` (Fig. 6);
* ``"squared_softmax"``: ``(1 - softmax(C f_W(X))_y)^2``, what the authors' code runs for Fig. 5
  (``lsq2`` with a general head, ``train_utils.get_loss`` of github.com/yixiao-huang/next-token-prediction)
  where the paper writes ``(1 - u)^2``.

A :class:`Problem` holds ``B`` padded trials, ``W`` is ``(B, d, d)``, and :func:`loss_and_grad` returns
``(B,)`` losses and ``(B, d, d)`` gradients without Python loops, its products through
:mod:`ntpnb._reproducible_products` (never BLAS): bit for bit the same on every CPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy

from .. import settings
from .._linalg import numerical_rank
from .._reproducible_products import matmul, matvec, vecmat
from .._validation import as_count, as_float
from ..errors import HeadAssumptionError, InvalidDataError, NotRealizableError
from ._token_data import TokenData, check_embeddings, check_token_data

__all__ = [
    "identity_head",
    "tied_head",
    "Problem",
    "make_problem",
    "stack_problems",
    "loss_and_grad",
    "losses_at",
    "lemma1_excess_risk",
]

#: The losses :func:`make_problem` accepts (``loss=``), each defined in the module docstring.
LOSSES: tuple[str, ...] = ("log", "squared", "ce", "squared_softmax")


def check_head(C: object, E: object, assumption: str = "argmax") -> np.ndarray:
    """Validate a head ``C`` (``K x d``) against an assumption of Paper B; return it as floats.

    Parameters
    ----------
    assumption
        ``"identity"``: Assumption 4, ``C E^T = I_K`` (within
        :data:`~ntpnb.settings.HEAD_IDENTITY_TOL`); ``"argmax"``: Assumption 3, ``argmax_k c_y^T e_k = y``
        strictly for every ``y`` (margin above :data:`~ntpnb.settings.HEAD_MARGIN_TOL` times
        ``max_k |c_y^T e_k|``: scale-free).

    Raises
    ------
    HeadAssumptionError
        If the head violates the assumption.
    InvalidDataError
        On a wrong shape or non-finite entries.
    """
    E = check_embeddings(E)
    Cf = _head_array(C, E)
    G = Cf @ E.T
    K = E.shape[0]
    if assumption == "identity":
        err = float(np.abs(G - np.eye(K)).max())
        if err > settings.HEAD_IDENTITY_TOL:
            raise HeadAssumptionError(f"C E^T differs from I_K by {err:.2e} (Assumption 4 fails)")
    elif assumption == "argmax":
        off = np.where(np.eye(K, dtype=bool), -np.inf, G)
        margin = np.diag(G) - off.max(axis=1) if K > 1 else np.array([np.inf])
        scale = np.abs(G).max(axis=1)  # the size of each row's scores: the margin is relative
        if np.any(margin <= settings.HEAD_MARGIN_TOL * scale):
            y = int(np.argmin(margin / np.where(scale > 0, scale, 1.0)))
            raise HeadAssumptionError(
                f"argmax_k c_y^T e_k != y for y = {y} (margin {margin[y]:.2e} against scores of "
                f"size {scale[y]:.2e}; Assumption 3 fails)"
            )
    else:
        raise InvalidDataError(f"unknown head assumption {assumption!r}; use identity or argmax")
    return Cf


def _head_array(C: object, E: np.ndarray) -> np.ndarray:
    """``C`` as a new float array of the shape of ``E``, with finite entries (no assumption checked)."""
    Cf = np.array(as_float(C, "C"))
    if Cf.shape != E.shape:
        raise InvalidDataError(f"C must have the shape of E {E.shape}, got {Cf.shape}")
    if not np.all(np.isfinite(Cf)):
        raise InvalidDataError("C has non-finite entries")
    return Cf


def identity_head(E: object) -> np.ndarray:
    """The head with ``C E^T = I_K`` and minimum-norm rows: ``C = (E E^T)^{-1} E``.

    Computed as ``C = R^{-1} Q^T`` from ``E^T = Q R`` (``C^T`` the pseudo-inverse of ``E``), not via
    ``E E^T``, which squares the condition number. Full row rank is decided by
    :func:`ntpnb._linalg.numerical_rank`.

    Raises
    ------
    HeadAssumptionError
        If ``E`` lacks full row rank (no head satisfies Assumption 4), or ``C E^T`` misses ``I`` by
        more than :data:`~ntpnb.settings.HEAD_IDENTITY_TOL` in float64 (ill-conditioned ``E``).
    RankAmbiguousError
        If the rank of ``E`` is not determined in float64.
    """
    E = check_embeddings(E)
    K, d = E.shape
    s = np.linalg.svd(E, compute_uv=False)
    if K > d or numerical_rank(s, E.shape, what="the embeddings E") < K:
        raise HeadAssumptionError(
            f"no C has C E^T = I: E ({K} x {d}) does not have full row rank {K} (Assumption 4)"
        )
    Q, R = np.linalg.qr(E.T)
    C = scipy.linalg.solve_triangular(R, Q.T, lower=False)
    try:
        return check_head(C, E, "identity")
    except HeadAssumptionError as err:
        raise HeadAssumptionError(f"{err}; E has condition number {s[0] / s[-1]:.3g}") from None


def tied_head(E: object) -> np.ndarray:
    """The general head ``C = E`` (tied embeddings).

    For distinct unit-norm embeddings Assumption 3 holds while ``C E^T != I`` (Sec. 6's "general
    head"; the paper does not say which it used, this is ours).
    """
    E = check_embeddings(E)
    return check_head(E.copy(), E, "argmax")


@dataclass(frozen=True)
class Problem:
    """``B`` attention-training problems stacked on a leading trial axis (padded)."""

    #: ``(B, n, T, d)`` embeddings of the input tokens (0 at padding).
    emb: np.ndarray
    #: ``(B, n, T)`` which positions hold a token.
    mask: np.ndarray
    #: ``(B, n, d)`` embedding of each sample's query token ``x_bar``.
    query: np.ndarray
    #: ``(B, n)`` label ids.
    labels: np.ndarray
    #: ``(B, n)`` sample weights ``1/n_b`` (0 for padded samples).
    weights: np.ndarray
    #: ``(B, K, d)`` heads.
    C: np.ndarray
    #: ``(B, n, T)`` ``log(c_y^T x_t)`` where positive, ``-inf`` elsewhere (log-loss only).
    log_gamma: np.ndarray
    #: One of :data:`LOSSES`.
    loss: str

    @property
    def B(self) -> int:  # noqa: N802 (the paper-style name of the trial count)
        """Number of stacked problems."""
        return int(self.emb.shape[0])

    @property
    def d(self) -> int:
        """Embedding dimension."""
        return int(self.emb.shape[-1])


def _head_scores(Cf: np.ndarray, emb: np.ndarray, data: TokenData, head: str) -> np.ndarray:
    """``(n, T)`` ``gamma = c_y^T x_t`` per input token (0 at padding); 1/0 for the identity head."""
    if head == "identity":
        gamma = (data.tokens == data.labels[:, None]).astype(float)
    else:
        gamma = np.einsum("nd,ntd->nt", Cf[data.labels], emb)
    return np.where(data.mask, gamma, 0.0)


def _log_gamma(gamma: np.ndarray, loss: str) -> np.ndarray:
    """``log gamma`` (``-inf`` where ``gamma <= 0``), after the log-loss's checks on ``gamma``.

    Raises
    ------
    InvalidDataError
        With the log-loss, if some ``gamma`` is negative.
    NotRealizableError
        With the log-loss, if some sample has no positive ``gamma``.
    """
    if loss == "log":
        if np.any(gamma < 0):
            raise InvalidDataError(
                "the log-loss needs c_y^T x_t >= 0 for every input token (else c_y^T f_W(X) can be <= 0)"
            )
        bad = ~np.any(gamma > 0, axis=1)
        if bad.any():
            raise NotRealizableError(
                f"sample {int(np.flatnonzero(bad)[0])}: no input token has c_y^T x_t > 0 "
                "(the log-loss is +inf)"
            )
    with np.errstate(divide="ignore"):
        return np.where(gamma > 0, np.log(np.where(gamma > 0, gamma, 1.0)), -np.inf)


def make_problem(
    E: object,
    C: object,
    data: TokenData,
    loss: str = "log",
    head: str = "identity",
    *,
    divide_by: int | None = None,
) -> Problem:
    """One problem (``B = 1``): embeddings ``E``, head ``C`` checked against ``head``, data, loss.

    The risk is the summed loss divided by ``divide_by`` (default: the number of samples; Paper B's
    code divides a cyclic sub-dataset's by the size of the *whole* data set).

    Raises
    ------
    InvalidDataError
        On an unknown loss, mismatched shapes, a log-loss whose ``c_y^T x_t`` can be negative,
        or ``divide_by`` smaller than the number of samples.
    HeadAssumptionError
        If ``C`` violates the named assumption (``"identity"`` or ``"argmax"``).
    NotRealizableError
        If with the log-loss some sample has no token with ``c_y^T x_t > 0``.
    """
    if loss not in LOSSES:
        raise InvalidDataError(f"unknown loss {loss!r}; use one of {LOSSES}")
    E = check_embeddings(E, check_token_data(data).K)
    Cf = check_head(C, E, head)
    emb = E[data.tokens] * data.mask[..., None]
    log_gamma = _log_gamma(_head_scores(Cf, emb, data, head), loss)
    n = data.n
    total = n if divide_by is None else as_count(divide_by, "divide_by")
    if total < n:
        raise InvalidDataError(f"divide_by ({total}) is smaller than the number of samples ({n})")
    return Problem(
        emb=emb[None],
        mask=data.mask[None].copy(),
        query=E[data.query][None],
        labels=data.labels[None].copy(),
        weights=np.full((1, n), 1.0 / total),
        C=Cf[None],
        log_gamma=log_gamma[None],
        loss=loss,
    )


def _padding(
    B: int, n: int, T: int, d: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The arrays of :func:`stack_problems` before filling: every sample a padded one.

    A padded sample has weight 0 and one dummy position (position 0 unmasked, ``log gamma = 0``),
    so that its softmax is defined.
    """
    emb = np.zeros((B, n, T, d))
    mask = np.zeros((B, n, T), dtype=bool)
    mask[:, :, 0] = True
    query = np.zeros((B, n, d))
    labels = np.zeros((B, n), dtype=np.int64)
    weights = np.zeros((B, n))
    log_gamma = np.full((B, n, T), -np.inf)
    log_gamma[:, :, 0] = 0.0
    return emb, mask, query, labels, weights, log_gamma


def stack_problems(problems: Sequence[Problem]) -> Problem:
    """Stack problems (same ``K``, ``d`` and loss) on the trial axis, padding ``n`` and ``T``.

    A padded sample has weight 0 and one dummy position (so its softmax is defined).
    """
    if not problems:
        raise InvalidDataError("no problems to stack")
    loss = problems[0].loss
    shapes = {(p.C.shape[1:], p.loss) for p in problems}
    if len(shapes) != 1:
        raise InvalidDataError(f"problems to stack differ in (K, d) or loss: {sorted(map(str, shapes))}")
    B = sum(p.B for p in problems)
    n = max(p.emb.shape[1] for p in problems)
    T = max(p.emb.shape[2] for p in problems)
    emb, mask, query, labels, weights, log_gamma = _padding(B, n, T, problems[0].d)
    b = 0
    for p in problems:
        sl = slice(b, b + p.B)
        pn, pt = p.emb.shape[1:3]
        emb[sl, :pn, :pt] = p.emb
        mask[sl, :pn] = False
        mask[sl, :pn, :pt] = p.mask
        query[sl, :pn] = p.query
        labels[sl, :pn] = p.labels
        weights[sl, :pn] = p.weights
        log_gamma[sl, :pn] = -np.inf
        log_gamma[sl, :pn, :pt] = p.log_gamma
        b += p.B
    C = np.concatenate([p.C for p in problems])
    return Problem(emb, mask, query, labels, weights, C, log_gamma, loss)


def _softmax(logits: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Masked softmax over the last axis and its log-normalizer (finite wherever a row has a True)."""
    z = np.where(mask, logits, -np.inf)
    m = z.max(axis=-1, keepdims=True)
    e = np.exp(z - m)
    tot = e.sum(axis=-1, keepdims=True)
    return e / tot, (np.log(tot) + m)[..., 0]


def _lse(logits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Masked log-sum-exp over the last axis; ``-inf`` for a row with no True."""
    z = np.where(mask, logits, -np.inf)
    m = z.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):  # log(0) = -inf for an empty row, on purpose
        return np.log(np.exp(z - m).sum(axis=-1)) + m[..., 0]


def check_problem(prob: object) -> Problem:
    """``prob`` itself, refused with a named error unless it is a :class:`Problem`."""
    if not isinstance(prob, Problem):
        raise InvalidDataError(f"prob must be a Problem (see make_problem), got {type(prob).__name__}")
    return prob


def _centered(s: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``sum_t' s_t' (v_t' - v_t)`` per position, from explicit differences.

    Equals ``s . v - v_t`` without its cancellation (copies of one token give exact zeros), so it
    keeps its relative accuracy when the softmax saturates.
    """
    return np.einsum("...u,...tu->...t", s, v[..., None, :] - v[..., :, None])


def loss_and_grad(W: object, prob: Problem) -> tuple[np.ndarray, np.ndarray]:
    """Losses ``(B,)`` and gradients ``(B, d, d)``.

    A sample's gradient is ``sum_t a_t x_t x_bar^T``, ``a = (diag(s) - s s^T) X g``, ``g`` the loss's
    derivative in ``f_W(X)``, computed as ``a_t = s_t sum_t' s_t' (q_t - q_t')``, ``q = X g``
    (:func:`_centered`); for the log-loss ``a_t = s_t`` off the label's positions and
    ``a_t = (r_t / gamma_t) sum_t' s_t' (gamma_t' - gamma_t)`` on them, ``r = softmax(X W x_bar +
    log gamma)``: accurate when the softmax saturates, unlike the textbook ``s - r``, ``q_t - s^T q``.
    """
    check_problem(prob)
    W = as_float(W, "W")
    if W.shape != (prob.B, prob.d, prob.d):
        raise InvalidDataError(f"W must have shape {(prob.B, prob.d, prob.d)}, got {W.shape}")
    if not np.all(np.isfinite(W)):
        raise InvalidDataError("W has non-finite entries")
    Wq = matvec(W[:, None], prob.query)  # (B, n, d): rows W x_bar
    ell, dsc = _scores_grad(matvec(prob.emb, Wq), prob)  # scores X W x_bar
    wdsc = np.where(prob.mask, dsc, 0.0) * prob.weights[..., None]  # weighted, 0 at padding
    A = vecmat(wdsc, prob.emb)  # (B, n, d): sum_t wdsc_t x_t
    grad = matmul(np.swapaxes(A, -1, -2), prob.query)  # (B, d, d)
    return np.sum(prob.weights * ell, axis=-1), grad


def _scores_grad(sc: np.ndarray, prob: Problem) -> tuple[np.ndarray, np.ndarray]:
    """Per-sample losses and the derivatives ``(B, n, T)`` of each sample's loss in its scores ``sc``."""
    s, _ = _softmax(sc, prob.mask)
    if prob.loss == "log":
        on = np.isfinite(prob.log_gamma)
        r, log_za = _softmax(sc + prob.log_gamma, on)
        # -log u = (lse_O(sc) - lse_O(sc + log gamma)) + log(1 + exp(lse_out(sc) - lse_O(sc))):
        # exact 0 plus a log1p under C E^T = I, accurate when the loss is ~exp(-margin)
        _, log_on = _softmax(sc, on)
        ell = (log_on - log_za) + np.logaddexp(0.0, _lse(sc, prob.mask & ~on) - log_on)
        gamma = np.where(on, np.exp(np.where(on, prob.log_gamma, 0.0)), 0.0)
        ratio = np.divide(r, gamma, out=np.zeros_like(r), where=on)  # s_t / u on the label's positions
        dsc = np.where(on, ratio * _centered(s, gamma), s)
    else:
        f = vecmat(s, prob.emb)  # (B, n, d)
        if prob.loss == "squared":
            crow = np.take_along_axis(prob.C, prob.labels[..., None], axis=1)  # (B, n, d)
            u = np.sum(crow * f, axis=-1)
            ell = (1.0 - u) ** 2
            gf = (-2.0 * (1.0 - u))[..., None] * crow
        elif prob.loss == "squared_softmax":
            gf, ell = _squared_softmax_grad(f, prob)
        else:  # "ce"
            logits = matmul(f, np.swapaxes(prob.C, -1, -2))  # (B, n, K)
            p, log_zc = _softmax(logits, np.ones(logits.shape, dtype=bool))
            ell = log_zc - np.take_along_axis(logits, prob.labels[..., None], axis=-1)[..., 0]
            p[np.arange(p.shape[0])[:, None], np.arange(p.shape[1])[None, :], prob.labels] -= 1.0
            gf = matmul(p, prob.C)
        q = matvec(prob.emb, gf)  # (B, n, T): x_t^T g
        dsc = -s * _centered(s, q)
    return ell, dsc


def _squared_softmax_grad(f: np.ndarray, prob: Problem) -> tuple[np.ndarray, np.ndarray]:
    """Derivative in ``f`` ``(B, n, d)`` and value of ``(1 - p_y)^2``, ``p = softmax(C f)``.

    ``-2 (1 - p_y) p_y (c_y - C^T p)``, with ``1 - p_y`` summed over the other classes and
    ``c_y - C^T p = sum_k p_k (c_y - c_k)``: free of cancellation.
    """
    logits = matmul(f, np.swapaxes(prob.C, -1, -2))  # (B, n, K)
    p, _ = _softmax(logits, np.ones(logits.shape, dtype=bool))
    is_y = np.arange(p.shape[-1]) == prob.labels[..., None]
    p_y = np.sum(np.where(is_y, p, 0.0), axis=-1)
    rest = np.sum(np.where(is_y, 0.0, p), axis=-1)  # 1 - p_y
    crow = np.take_along_axis(prob.C, prob.labels[..., None], axis=1)  # (B, n, d)
    diff = crow[..., None, :] - prob.C[:, None, :, :]  # (B, n, K, d): c_y - c_k
    lift = np.einsum("bnk,bnkd->bnd", p, diff)  # c_y - C^T p
    return (-2.0 * rest * p_y)[..., None] * lift, rest**2


def losses_at(Ws: object, prob: Problem) -> np.ndarray:
    """The loss of one problem (``B = 1``) at each of ``Ws`` ``(m, d, d)``, as one batched call.

    The same numbers as ``loss_and_grad(W[None], prob)[0]`` one ``W`` at a time: the copies of ``prob``
    (:func:`stack_problems`) change no sum (tests/attention/test_model.py).

    Raises
    ------
    InvalidDataError
        If ``prob`` holds more than one problem or ``Ws`` is not an array of ``d x d`` matrices.
    """
    if not isinstance(prob, Problem) or prob.B != 1:
        raise InvalidDataError("losses_at needs one problem (B = 1, see make_problem)")
    Ws = as_float(Ws, "Ws")
    if Ws.ndim != 3 or Ws.shape[0] == 0 or Ws.shape[1:] != (prob.d, prob.d):
        raise InvalidDataError(f"Ws must have shape (m, {prob.d}, {prob.d}) with m >= 1, got {Ws.shape}")
    return loss_and_grad(Ws, stack_problems([prob] * Ws.shape[0]))[0]


def lemma1_excess_risk(Ws: object, E: object, C: object, data: TokenData) -> np.ndarray:
    """Lemma 1's ``L(W) - L_*`` with the logistic loss ``l(u) = log(1 + e^-u)`` at each ``W`` of ``Ws``.

    ``Ws`` is ``(m, d, d)``; returns ``(m,)``.

    Here ``L(W) = (1/n) sum_i l(c_{y_i}^T f_W(X_i))`` and ``L_* = (1/n) sum_i l(c_{y_i}^T e_{y_i})``, the
    lemma's definition, for any head ``C`` (``K x d``): Lemma 1 says ``L(W) > L_*`` at every finite
    ``W`` on acyclic data under Assumptions 1-3, and says nothing of a head that breaks Assumption 3
    (no assumption is checked here, so such a head can serve as a control). The logistic loss is
    strictly decreasing with ``|l'| <= 1``: it satisfies Assumption 1, which the log-loss does not
    (its derivative is unbounded).

    A sample's excess is computed from the gap ``g = c_y^T e_y - c_y^T f_W(X) = sum_t s_t c_y^T (e_y -
    x_t)``, ``s`` the attention, from explicit differences (a copy of ``e_y`` adds an exact 0), as
    ``l(c_y^T e_y - g) - l(c_y^T e_y) = log1p(expm1(g) sigmoid(-c_y^T e_y))``: of the sign of ``g``,
    and accurate relative to itself when the attention saturates, where the difference of the two
    losses would be rounding alone. Products through :mod:`ntpnb._reproducible_products`.

    Raises
    ------
    InvalidDataError
        If the data or embeddings are invalid, ``C`` is not a finite array of the shape of ``E``, or
        ``Ws`` is not a finite ``(m, d, d)`` array with ``m >= 1``.
    """
    data = check_token_data(data)
    E = check_embeddings(E, data.K)
    Cf = _head_array(C, E)
    d = E.shape[1]
    Ws = as_float(Ws, "Ws")
    if Ws.ndim != 3 or Ws.shape[0] == 0 or Ws.shape[1:] != (d, d):
        raise InvalidDataError(f"Ws must have shape (m, {d}, {d}) with m >= 1, got {Ws.shape}")
    if not np.all(np.isfinite(Ws)):
        raise InvalidDataError("Ws has non-finite entries")
    emb = E[data.tokens] * data.mask[..., None]  # (n, T, d)
    e_y, c_y = E[data.labels], Cf[data.labels]  # (n, d)
    Wq = matvec(Ws[:, None], E[data.query][None])  # (m, n, d): W x_bar
    s, _ = _softmax(matvec(emb[None], Wq), data.mask[None])  # (m, n, T)
    drop = matvec(np.where(data.mask[..., None], e_y[:, None, :] - emb, 0.0), c_y)  # c_y^T (e_y - x_t)
    gap = np.sum(s * drop[None], axis=-1)  # (m, n)
    best = np.sum(c_y * e_y, axis=-1)  # c_y^T e_y
    return np.mean(np.log1p(np.expm1(gap) * scipy.special.expit(-best)), axis=-1)
