"""The methods compared, each a function ``data -> W`` (or ``data -> bool`` for separability).

* ``naive cvxpy (triples)``: the NTP-SVM written the way the paper states it, one cvxpy constraint per
  (context, in-support token, out-of-support token) triple and per in-support pair: the
  deliberately naive reference.
* ``sparse cvxpy``: one vectorized cvxpy constraint over the sparse matrices of
  :func:`ntpnb.linear._constraints.ntp_constraints` (only the solve; no verification).
* ``cvxpy aux/context``: one scalar variable ``c_j`` per context (the common in-support
  logit), ``W h_j [z] == c_j`` on ``S_j`` and ``W h_j [v] <= c_j - 1`` off it, as two sparse
  constraint matrices (only the solve; no verification).
* ``reference (before)``: ``ntpnb.solve_ntp_svm(data, method="cvxpy")``, what
  :func:`ntpnb.solve_ntp_svm` was before the active-set method (sparse cvxpy, then polishing and the full
  certificate).
* ``fast``: :func:`ntpnb.linear._active_set.solve_active_set` (active set on the Gram matrix,
  verified), which :func:`ntpnb.solve_ntp_svm` uses.

Regularization path: :func:`ntpnb.linear._regpath.regularization_path` on a fixed grid of radii.
Paper B: :func:`ntpnb.attention._graph_svm_qp.solve_graph_svm` (Graph-SVM) and
:func:`ntpnb.attention._convex.solve_cyclic_correction` (``W^cyc``). Each returns its verified
solution; the ``*_certificate`` functions summarize what was verified.

Separability: ``full LP`` (the certified max-margin LP on ``vec(W)``,
``ntpnb.is_separable(data, method="lp")``, interior point first) and ``fast``
(:func:`ntpnb.is_separable`: the full-rank witness, else least-distance programming while it
fits, else W^mm from the fast solver as a verified witness when the LP is large, else the LP,
by the dual simplex first when it is small).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

from ntpnb import SVMSolution, settings
from ntpnb.attention import CyclicCorrection, solve_cyclic_correction, solve_graph_svm
from ntpnb.errors import SolverError
from ntpnb.linear import (
    NTPData,
    RegularizationPath,
    is_separable,
    ntp_constraints,
    regularization_path,
    solve_active_set,
    solve_ntp_svm,
)

from .instances import AttentionInstance
from .timing import FAST


def _solve(problem: cp.Problem) -> None:
    """Solve ``problem`` with the package's QP solver; raise unless it reports it optimal."""
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


def _logit_rows(data: NTPData, pairs: np.ndarray) -> sp.csr_matrix:
    """Sparse rows ``vec(e_v h_j^T)`` (so that ``row @ vec(W) = (W h_j)_v``), one per pair ``(j, v)``."""
    j, v = pairs
    d = data.d
    cols = v[:, None] * d + np.arange(d)
    rows = np.repeat(np.arange(j.size), d)
    return sp.csr_matrix((data.H[j].ravel(), (rows, cols.ravel())), shape=(j.size, data.V * d))


def _context_rows(j: np.ndarray, m: int) -> sp.csr_matrix:
    """Sparse rows ``e_j`` (picking ``c_j``), one per pair."""
    return sp.csr_matrix((np.ones(j.size), (np.arange(j.size), j)), shape=(j.size, m))


def aux_cvxpy(data: NTPData) -> np.ndarray:
    """One auxiliary variable ``c_j`` per context: ``(W h_j)_z = c_j`` on ``S_j``, ``<= c_j - 1`` off it."""
    inside = np.nonzero(data.support_mask)
    outside = np.nonzero(~data.support_mask)
    w = cp.Variable(data.V * data.d)
    c = cp.Variable(data.m)
    constraints = [
        _logit_rows(data, inside) @ w == _context_rows(inside[0], data.m) @ c,
        _logit_rows(data, outside) @ w <= _context_rows(outside[0], data.m) @ c - 1,
    ]
    _solve(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w)), constraints))
    return np.asarray(w.value).reshape(data.V, data.d)


def package_reference(data: NTPData) -> np.ndarray:
    """The package's cvxpy reference solve, verified."""
    return solve_ntp_svm(data, method="cvxpy").W


def fast(data: NTPData) -> np.ndarray:
    """The fast active-set solver, verified."""
    return solve_active_set(data).W


def separability_full_lp(data: NTPData) -> bool:
    """The certified max-margin LP on ``vec(W)`` (V d variables, the sparse constraint rows)."""
    return is_separable(data, method="lp")


def separability_package(data: NTPData) -> bool:
    """:func:`ntpnb.is_separable`: the full-rank witness, least distance, the SVM witness, else the LP."""
    return is_separable(data)


#: Column names of the NTP-SVM table: the former package solver and the naive formulation first, the
#: fast solver (:data:`benchmarks.timing.FAST`) last.
SVM_REFERENCE, SVM_NAIVE = "reference (before)", "naive cvxpy (triples)"
SVM_METHODS: dict[str, Callable[[NTPData], np.ndarray]] = {
    SVM_REFERENCE: package_reference,
    SVM_NAIVE: naive_cvxpy,
    "sparse cvxpy": sparse_cvxpy,
    "cvxpy aux/context": aux_cvxpy,
    FAST: fast,
}

SEPARABILITY_METHODS: dict[str, Callable[[NTPData], bool]] = {
    "full LP": separability_full_lp,
    FAST: separability_package,
}


def path(instance: tuple[NTPData, np.ndarray]) -> RegularizationPath:
    """The certified regularization path at the instance's radii."""
    return regularization_path(*instance)


def path_certificate(p: RegularizationPath) -> str:
    """Worst values over the radii of what :func:`regularization_path` verified."""
    return (
        f"{len(p)} radii to B = {p.radii[-1]:.3g}: max KKT rel. {p.kkt.max():.1e} "
        f"(F {p.kkt_f.max():.1e}, F-perp {p.kkt_perp.max():.1e}), "
        f"max norm err. {p.norm_error.max():.1e}, min lambda {p.lam.min():.1e}"
    )


def graph_svm(instance: AttentionInstance) -> SVMSolution:
    """(Graph-SVM), verified."""
    return solve_graph_svm(instance.E, instance.graphs)


def graph_svm_certificate(sol: SVMSolution) -> str:
    """What :func:`solve_graph_svm` verified, and whether it passes the settings' tolerances."""
    return (
        f"{'passes' if sol.passes() else 'FAILS'}: gap {sol.duality_gap:.1e}, "
        f"stationarity {sol.stationarity:.1e}, margin viol. {sol.margin_violation:.1e}, "
        f"{sol.n_active} active, {sol.solver}{' polished' if sol.polished else ''}"
    )


def cyclic_correction(instance: AttentionInstance) -> CyclicCorrection:
    """``W^cyc``, verified."""
    return solve_cyclic_correction(instance.E, instance.data, instance.graphs)


def cyclic_certificate(sol: CyclicCorrection) -> str:
    """What :func:`solve_cyclic_correction` verified (it raises when either check fails)."""
    return (
        f"grad norm {sol.grad_norm:.1e} (tol {settings.CONVEX_KKT_TOL:.0e}), min curvature on "
        f"S_cyc {sol.min_curvature:.1e} > 0, dim S_cyc {sol.dim}, {sol.newton_iterations} Newton steps"
    )
