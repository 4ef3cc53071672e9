"""The methods compared, each a function ``data -> W`` (or ``data -> bool`` for separability).

* ``naive cvxpy``: the NTP-SVM written the way the paper states it, one cvxpy constraint per
  (context, in-support token, out-of-support token) triple and per in-support pair: the
  deliberately naive reference.
* ``sparse cvxpy``: one vectorized cvxpy constraint over the sparse matrices of
  :func:`ntpnb.linear.constraints.ntp_constraints` (only the solve; no verification).
* ``ntpnb reference``: :func:`ntpnb.linear.svm.solve_ntp_svm_reference` (sparse cvxpy, then
  polishing and the full certificate with the basis of F).
* ``fast``: :func:`ntpnb.linear.svm_fast.solve_ntp_svm_fast` (active set on the Gram matrix,
  verified), which :func:`ntpnb.solve_ntp_svm` uses.

Separability: ``full LP`` (the certified max-margin LP on ``vec(W)``,
:func:`ntpnb.linear.svm.is_separable_lp`), ``ntpnb is_separable`` (the full-rank witness, else that
LP) and ``fast`` (:func:`ntpnb.linear.svm_fast.separability_fast`: the witness, else the
feasibility LP in the row space of ``H``; its "not separable" rests on the HiGHS status alone).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import cvxpy as cp
import numpy as np

from ntpnb import settings
from ntpnb.errors import SolverError
from ntpnb.linear.constraints import ntp_constraints
from ntpnb.linear.data import NTPData
from ntpnb.linear.svm import is_separable, is_separable_lp, solve_ntp_svm_reference
from ntpnb.linear.svm_fast import separability_fast, solve_ntp_svm_fast


def _solve(problem: cp.Problem) -> None:
    problem.solve(solver=settings.QP_SOLVER, **settings.QP_OPTIONS)
    if problem.status != cp.OPTIMAL:
        raise SolverError(f"{settings.QP_SOLVER} returned status {problem.status!r}")


def naive_cvxpy(data: NTPData) -> np.ndarray:
    """One scalar constraint per triple ``(j, z in S_j, v not in S_j)`` and per pair in ``S_j``."""
    W = cp.Variable((data.V, data.d))
    constraints = []
    for j, support in enumerate(data.supports):
        logits = W @ data.H[j]
        outside = np.setdiff1d(np.arange(data.V), support)
        constraints += [logits[z] == logits[zp] for z, zp in itertools.combinations(support, 2)]
        constraints += [logits[z] - logits[v] >= 1 for z in support for v in outside]
    _solve(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(W)), constraints))
    return np.asarray(W.value)


def sparse_cvxpy(data: NTPData) -> np.ndarray:
    """The constraints as two sparse matrices (anchor form), one vectorized constraint each."""
    cons = ntp_constraints(data)
    w = cp.Variable(data.V * data.d)
    constraints = [cons.ineq @ w >= 1]
    if cons.eq.shape[0]:
        constraints.append(cons.eq @ w == 0)
    _solve(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w)), constraints))
    return np.asarray(w.value).reshape(data.V, data.d)


def package_reference(data: NTPData) -> np.ndarray:
    """The package's cvxpy reference solve, verified."""
    return solve_ntp_svm_reference(data).W


def fast(data: NTPData) -> np.ndarray:
    """The fast active-set solver, verified."""
    return solve_ntp_svm_fast(data).W


def separability_full_lp(data: NTPData) -> bool:
    """The certified max-margin LP on ``vec(W)`` (V d variables, the sparse constraint rows)."""
    return is_separable_lp(data)


def separability_package(data: NTPData) -> bool:
    """:func:`ntpnb.is_separable`: the full-rank witness, else the certified LP."""
    return is_separable(data)


def separability_fast_lp(data: NTPData) -> bool:
    """The full-rank witness, else the feasibility LP in the row space of H."""
    return separability_fast(data).separable


SVM_METHODS: dict[str, Callable[[NTPData], np.ndarray]] = {
    "naive cvxpy": naive_cvxpy,
    "sparse cvxpy": sparse_cvxpy,
    "ntpnb reference": package_reference,
    "fast": fast,
}

SEPARABILITY_METHODS: dict[str, Callable[[NTPData], bool]] = {
    "full LP": separability_full_lp,
    "ntpnb is_separable": separability_package,
    "fast": separability_fast_lp,
}
