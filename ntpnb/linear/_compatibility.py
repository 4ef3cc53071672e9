r"""NTP_H-compatibility (Definition 1 of Paper A, Eq. (4)) and ``W*``, decided right or honestly undecided.

:func:`is_compatible` decides; :func:`finite_solution` is ``W*``. A candidate ``W*`` (at the
decided ``dim F``) proves compatibility when its residual, evaluated as if in twice the
precision plus a rigorous error bound (:func:`ntpnb._linalg.accurate_dots`), is within
:data:`~ntpnb.settings.COMPAT_RTOL` of ``||b||``; not compatible when the log-odds ``b`` have a
larger part outside the directions (4) resolves; otherwise ambiguous. Above
:data:`ntpnb.settings.F_DENSE_MAX_ENTRIES` ``W*`` comes from
LSQR, whose residual decides.

The decision is cached per data set, an ambiguous one too. NTP-separability: :mod:`._separability`.
"""

from __future__ import annotations

from contextlib import suppress

import numpy as np
import scipy

from .. import settings
from .._linalg import accurate_dots, nonzero_count, rank_floor, thin_svd
from ..errors import NotCompatibleError, RankAmbiguousError, ScaleError, SolverError
from ._constraints import NTPConstraints, context_scales, ntp_constraints
from ._ntp_data import NTPData, cached_per_data, normalized, unambiguous
from ._subspace import EQUALITY_WHAT, equality_operator, normalized_f_decomposition, uses_dense_f

#: The decision of (4) for normalized data: ``vec(W*)`` (None if not compatible) and the residual.
_Compatibility = tuple[np.ndarray | None, float]


def _compat_tolerance(pairs: NTPConstraints) -> float:
    """The tolerance of the residual of (4): :data:`~ntpnb.settings.COMPAT_RTOL` relative to ``||b||``."""
    return settings.COMPAT_RTOL * max(1.0, float(np.linalg.norm(pairs.eq_rhs)))


def _accurate_residual(pairs: NTPConstraints, w: np.ndarray) -> tuple[float, float]:
    """``||G w - b||`` of (4) evaluated as if in twice the precision, and a rigorous bound on its error."""
    W = np.reshape(w, (pairs.P.shape[1], pairs.H.shape[1]))
    b = np.asarray(pairs.eq_rhs, dtype=float)
    Hj = pairs.H[pairs.eq_context]
    X = np.hstack([Hj, -Hj, -b[:, None]])
    Y = np.hstack([W[pairs.eq_token], W[pairs.anchors[pairs.eq_context]], np.ones((b.size, 1))])
    residuals, bounds = accurate_dots(X, Y)
    with np.errstate(over="ignore", invalid="ignore"):
        value = float(np.linalg.norm(residuals))
        bound = float(np.linalg.norm(bounds)) + 4 * b.size * 2**-53 * value  # and the norm's rounding
    return (value, bound) if np.isfinite(value) and np.isfinite(bound) else (np.inf, np.inf)


def _checked_residual(pairs: NTPConstraints, w: np.ndarray, tol: float) -> tuple[float, float]:
    """``||G w - b||`` and an upper bound on its exact value, as cheaply as comparing with ``tol`` allows.

    The plain evaluation with the rounding bound ``2 (2d + 1) eps (|G| |w| + |b|)`` first, else
    :func:`_accurate_residual`.
    """
    G, b = pairs.eq, np.asarray(pairs.eq_rhs, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        rounding = 2 * (2 * pairs.H.shape[1] + 1) * settings.FLOAT64_EPS * (abs(G) @ np.abs(w) + np.abs(b))
        value, bound = float(np.linalg.norm(G @ w - b)), float(np.linalg.norm(rounding))
    if np.isfinite(value + bound) and (value + bound <= tol or value - bound > tol):
        return value, value + bound
    value, bound = _accurate_residual(pairs, w)
    return value, value + bound


def _candidate(data: NTPData, b: np.ndarray) -> tuple[np.ndarray | None, str]:
    """The candidate ``W*`` at dim F (``None`` where there is none in float64), and why there is none.

    ``None`` where the rank of F is not determined in float64 or the candidate overflows.
    """
    w, found = None, "no candidate W* exists at dim F because its rank is not determined in float64"
    with suppress(RankAmbiguousError):  # the candidate W* at dim F, if finite
        dec = normalized_f_decomposition(data)
        candidate = dec.basis.T @ ((dec.U.T @ b) / dec.s)
        found = "the candidate W* at dim F overflows float64"
        w = candidate if np.all(np.isfinite(candidate)) else None
    return w, found


def _unresolved(pairs: NTPConstraints) -> tuple[np.ndarray, np.ndarray, int, float, float]:
    """``(U, s, k, outside, rounding)`` of the row-normalized equations of (4).

    The rows of (4) divided by their context's scale (the same solutions, no row hidden by
    another's size), with right side ``b_c / c`` (``c`` the smallest row scale): their SVD ``U``,
    ``s``, the ``k`` singular values float64 resolves, ``c ||b_n||`` (the log-odds outside them) and
    the rounding bound of that norm.
    """
    scales = context_scales(pairs.H)[pairs.eq_context]
    U, s, _ = thin_svd(pairs.eq.toarray() / scales[:, None], EQUALITY_WHAT)
    b_c = np.asarray(pairs.eq_rhs, dtype=float) * (float(scales.min()) / scales)
    k = nonzero_count(s, U.shape)
    outside = float(np.linalg.norm(b_c - U[:, :k] @ (U[:, :k].T @ b_c)))  # c ||b_n||, unresolved part
    rounding = 2 * U.shape[0] * settings.FLOAT64_EPS * float(np.linalg.norm(b_c))
    return U, s, k, outside, rounding


def _decide_dense(data: NTPData, pairs: NTPConstraints) -> _Compatibility | str:
    """The decision of (4) from dense SVDs of its matrix (the module docstring).

    With ``b_n`` the part of the row-normalized log-odds outside the resolved singular
    directions, every ``W`` has ``||G w - b|| >= c (||b_n|| - sigma ||w||)`` (``c`` the smallest
    row scale, ``sigma`` below the resolution): where ``c ||b_n||`` exceeds the tolerance, only a
    ``W`` beyond float64's resolution could solve (4). ``pairs``: the constraints of ``data``.
    """
    tol = _compat_tolerance(pairs)
    G, b = pairs.eq, pairs.eq_rhs
    if G.shape[0] == 0:  # every support is a single token: no equation, W* = 0
        return np.zeros(data.V * data.d), 0.0
    w, found = _candidate(data, b)
    if w is not None:
        value, verified = _checked_residual(pairs, w, tol)
        if verified <= tol:
            return w, value
        found = f"the candidate W* at dim F leaves a residual of (4) of {verified:.3g} (rounding included) "
        found += f"against the tolerance {tol:.3g}"
    U, s, k, outside, rounding = _unresolved(pairs)
    if outside - rounding > tol:
        residual = outside if w is None else float(np.linalg.norm(G @ w - b))
        return None, max(residual, outside)
    resolution = settings.RANK_BAND * rank_floor(U.shape, 1.0)
    smallest = float(s[k - 1] / s[0]) if k else 0.0
    return (
        f"NTP_H-compatibility is numerically ambiguous (m={data.m}, d={data.d}, V={data.V}): {found}; "
        f"float64 resolves {k} singular values of the row-normalized equations, down to {smallest:.3g} "
        f"of the largest (to {resolution:.3g}), and the log-odds "
        f"outside them are {outside:.3g}: W* exists in exact arithmetic, but its logits are too large "
        f"for float64 to evaluate to the tolerance (near-duplicate embeddings with different log-odds)"
    )


def _solve_lsqr(data: NTPData, pairs: NTPConstraints) -> tuple[np.ndarray, float]:
    """``vec(W*)`` and the residual of (4) by LSQR from zero (it stays in F); SolverError at its limit."""
    op = equality_operator(data)
    b = np.asarray(pairs.eq_rhs, dtype=float)
    tol = settings.F_LSQR_TOL
    w, istop, itn = scipy.sparse.linalg.lsqr(op, b, atol=tol, btol=tol, iter_lim=settings.F_LSQR_MAX_ITER)[:3]
    if istop == 7:
        raise SolverError(
            f"LSQR did not converge on the compatibility equations (4) in {itn} iterations "
            f"({op.shape[0]} rows, V d = {op.shape[1]}); raise ntpnb.settings.F_LSQR_MAX_ITER"
        )
    return w, float(np.linalg.norm(b - op.matvec(w)))


@cached_per_data
def _compatibility(data: NTPData) -> _Compatibility | str:
    """The decision of (4) for normalized data (cached, an ambiguity too): dense SVD, else LSQR."""
    pairs = ntp_constraints(data)
    if uses_dense_f(data):
        return _decide_dense(data, pairs)
    w, residual = _solve_lsqr(data, pairs)
    return (w if residual <= _compat_tolerance(pairs) else None), residual


def compatibility_residual(data: NTPData) -> float:
    """Least-squares residual of the compatibility equations (4) (that of ``W*`` when compatible).

    Raises
    ------
    NumericallyAmbiguousError
        As :func:`is_compatible`.
    """
    return unambiguous(_compatibility(normalized(data)[0]))[1]


def is_compatible(data: NTPData) -> bool:
    """Whether the data are NTP_H-compatible (Definition 1 of Paper A), right or honestly undecided.

    (4) is solvable to :data:`ntpnb.settings.COMPAT_RTOL` relative to ``||b||``: True rests on a
    ``W*`` with a verified residual, False on a part of the log-odds that (4) does not resolve in
    float64 (the module docstring).

    Raises
    ------
    NumericallyAmbiguousError
        If neither holds (near-duplicate embeddings with different log-odds); the message gives
        the verified residual, the tolerance and the smallest singular value used.
    """
    return unambiguous(_compatibility(normalized(data)[0]))[0] is not None


def finite_solution(data: NTPData) -> np.ndarray:
    """``W*``: the unique solution in F of the compatibility equations (4), shape ``(V, d)``.

    Raises
    ------
    NotCompatibleError
        If the equations have no solution (the data are not NTP_H-compatible).
    NumericallyAmbiguousError
        As :func:`is_compatible`.
    ScaleError
        If ``W*`` has entries beyond the float64 range (``W*`` scales like ``1 / |H|``).
    """
    return _solution(data, *normalized(data))


def normalized_finite_solution(norm: NTPData) -> np.ndarray:
    """:func:`finite_solution` of data already :func:`~._ntp_data.normalized` (``norm`` is used as it is)."""
    return _solution(norm, norm, 1.0)


def _solution(data: NTPData, norm: NTPData, scale: float) -> np.ndarray:
    """``W*`` of ``data`` from the decision of (4) for ``norm``, its data divided by ``scale``.

    ``W*(H) = W*(H / c) / c``; the errors of :func:`finite_solution`.
    """
    w, residual = unambiguous(_compatibility(norm))
    if w is None:
        tol = _compat_tolerance(ntp_constraints(norm))
        raise NotCompatibleError(
            "the data are not NTP_H-compatible: the compatibility equations (4) have "
            f"least-squares residual {residual:.3g} (tolerance {tol:.3g})"
        )
    with np.errstate(over="ignore"):
        W = w.reshape(data.V, data.d) / scale
    if not np.all(np.isfinite(W)):
        raise ScaleError(
            f"W* has entries beyond the float64 range: it scales like 1 / max|H| and "
            f"max|H| = {float(np.abs(data.H).max()):.3g}; rescale the embeddings"
        )
    return W
