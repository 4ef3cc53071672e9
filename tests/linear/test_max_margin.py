"""The NTP-SVM W^mm (ntpnb.linear._max_margin): constraints, the certificate, independent solutions, scale,
the active-set solver against the cvxpy reference and their errors, zero-margin directions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from scipy.optimize import minimize

import ntpnb as ntp
from ntpnb import settings
from ntpnb.errors import InvalidDataError, NotSeparableError, SolverError
from ntpnb.linear._active_set import SOLVER_NAME as FAST_SOLVER_NAME
from ntpnb.linear._constraints import NTPRows, ntp_constraints
from ntpnb.linear._max_margin import zero_margin_direction
from ntpnb.linear._separability import require_separable

from helpers import (
    CHAPTER_INSTANCES,
    PROPERTY,
    instances,
    log_scales,
    margins_all_pairs,
    random_data,
    scaled,
    text_data,
)


def cosine(A: np.ndarray, B: np.ndarray) -> float:
    return float(np.sum(A * B) / (np.linalg.norm(A) * np.linalg.norm(B)))


def dual_lbfgs(data: ntp.NTPData) -> np.ndarray:
    """W^mm from the dual, by a different method: L-BFGS-B on
    min_{lambda >= 0} ||P_perp(A^T lambda)||^2 / 2 - sum(lambda), then W = P_perp(A^T lambda)."""
    A = ntp_constraints(data).ineq.toarray()
    B = ntp.f_basis(data).reshape(-1, data.V * data.d)
    M = (A - (A @ B.T) @ B).T  # columns: P_perp of each constraint row

    def f(lam):
        w = M @ lam
        return 0.5 * w @ w - lam.sum(), M.T @ w - 1.0

    res = minimize(
        f,
        np.zeros(A.shape[0]),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0, None)] * A.shape[0],
        options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 20000, "maxcor": 50},
    )
    return (M @ res.x).reshape(data.V, data.d)


def test_svm_satisfies_every_constraint_and_is_orthogonal_to_F(overparam_data):
    data = overparam_data
    assert ntp.is_separable(data)
    W = ntp.ntp_svm(data)
    eq, ineq = margins_all_pairs(data, W)
    assert np.abs(eq).max() < 1e-9
    assert ineq.min() > 1 - 1e-9
    assert ineq.min() < 1 + 1e-9  # some constraint is active: W^mm is not needlessly long
    assert np.linalg.norm(ntp.project_F(data, W)) < 1e-9 * np.linalg.norm(W)


@pytest.mark.parametrize(
    ("method", "solver"),
    [("active-set", FAST_SOLVER_NAME), ("cvxpy", settings.QP_SOLVER)],
    ids=["fast", "reference"],
)
def test_svm_certificate_is_tight(overparam_data, method, solver):
    sol = ntp.solve_ntp_svm(overparam_data, method=method)
    assert sol.solver == solver
    assert sol.margin_violation < 1e-9
    assert sol.equality_violation < 1e-9  # (6a), i.e. W in F-perp:
    assert np.linalg.norm(ntp.project_F(overparam_data, sol.W)) < 1e-9 * np.linalg.norm(sol.W)
    assert sol.stationarity < 1e-8
    assert sol.complementarity < 1e-8
    assert abs(sol.duality_gap) < 1e-9
    assert np.all(sol.duals >= 0)
    assert sol.n_active >= 1


@pytest.mark.parametrize(
    "make",
    [
        lambda: ntp.toy2d_instance(0),
        lambda: random_data(m=8, d=10, V=6, S=3, seed=11),
        lambda: ntp.synthetic_instance(n=2000, m=20, d=25, V=8, S=4, seed=5),
    ],
    ids=["toy2d", "random", "synthetic"],
)
def test_svm_agrees_with_an_independent_dual_solve(make):
    data = make()
    W_qp = ntp.ntp_svm(data)
    W_dual = dual_lbfgs(data)
    assert cosine(W_qp, W_dual) > 1 - 1e-8
    assert np.linalg.norm(W_qp - W_dual) < 1e-4 * np.linalg.norm(W_qp)


def test_svm_agrees_with_a_long_normalized_gd_run():
    """Theorem 2 of Paper A: W_k - W* aligns with W^mm. On the 2D example normalized GD
    (step 0.1, 10^4 steps from 0) reaches a cosine of 0.99990; we require 0.999."""
    data = ntp.toy2d_instance(0)
    W_mm, W_star = ntp.ntp_svm(data), ntp.finite_solution(data)
    W = np.zeros((data.V, data.d))
    for _ in range(10_000):
        G = ntp.ce_grad(data, W)
        W = W - 0.1 * G / np.linalg.norm(G)
    assert cosine(W - W_star, W_mm) > 0.999
    assert cosine(ntp.project_F_perp(data, W), W_mm) > 0.999


def test_svm_rows_depend_only_on_supports():
    """Fig. 2 of Paper A: tokens 1 and 5 share a support pattern, so w_1 = w_5 in W^mm,
    and W^mm does not change when the in-support probabilities do."""
    data = ntp.toy2d_instance(0)
    W = ntp.ntp_svm(data)
    np.testing.assert_allclose(W[0], W[4], atol=1e-9)
    other = ntp.NTPData(H=data.H, pi=data.pi, P=ntp.toy2d_instance(1).P)
    np.testing.assert_allclose(ntp.ntp_svm(other), W, atol=1e-8)


def test_full_supports_give_the_trivial_svm():
    """No out-of-support token: (6b) is empty, W = 0 is feasible and optimal."""
    data = ntp.NTPData(H=np.eye(2), pi=[0.5, 0.5], P=[[0.5, 0.5], [0.2, 0.8]])
    assert ntp.is_separable(data)
    np.testing.assert_array_equal(ntp.ntp_svm(data), np.zeros((2, 2)))


def test_one_hot_labels_give_the_multiclass_svm():
    """Remark 1: with S_j = 1, NTP-separability is multiclass separability (no equalities)."""
    data = ntp.NTPData(H=[[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]], pi=[1 / 3] * 3, P=np.eye(3))
    W = ntp.ntp_svm(data)
    scores = data.H @ W.T
    for j in range(3):
        assert np.all(scores[j, j] - np.delete(scores[j], j) >= 1 - 1e-9)


def test_a_failing_solver_raises_solver_error(monkeypatch):
    monkeypatch.setattr(settings, "QP_SOLVER", "NO_SUCH_SOLVER")
    data = random_data(m=3, d=5, V=4, S=2, seed=21)  # fresh data: results are cached per data set
    with pytest.raises(SolverError, match="NO_SUCH_SOLVER"):
        ntp.solve_ntp_svm(data, method="cvxpy")


def test_the_package_solver_needs_no_qp_solver(monkeypatch):
    monkeypatch.setattr(settings, "QP_SOLVER", "NO_SUCH_SOLVER")
    data = random_data(m=3, d=5, V=4, S=2, seed=23)
    assert ntp.solve_ntp_svm(data).solver == FAST_SOLVER_NAME


def test_an_unverified_answer_raises_solver_error(monkeypatch):
    monkeypatch.setattr(settings, "SVM_GAP_TOL", -1.0)  # no answer can pass
    data = random_data(m=3, d=5, V=4, S=2, seed=22)
    with pytest.raises(SolverError, match=r"\(the dual in K = H H\^T\) failed verification: .*duality gap"):
        ntp.ntp_svm(data)
    with pytest.raises(SolverError, match=r"answer of CLARABEL failed verification: .*duality gap"):
        ntp.solve_ntp_svm(random_data(m=3, d=5, V=4, S=2, seed=26), method="cvxpy")


def test_a_reference_answer_without_an_exact_minimizer_raises_solver_error(monkeypatch):
    monkeypatch.setattr(settings, "POLISH_MAX_ROUNDS", 0)  # no polishing round can settle
    unsettled = r"answer of CLARABEL failed verification: found no exact minimizer on its active set"
    with pytest.raises(SolverError, match=unsettled):
        ntp.solve_ntp_svm(random_data(m=3, d=5, V=4, S=2, seed=27), method="cvxpy")


def test_an_unknown_method_is_refused():
    data = random_data(m=3, d=5, V=4, S=2, seed=25)
    with pytest.raises(InvalidDataError, match="active-set"):
        ntp.solve_ntp_svm(data, method="simplex")
    with pytest.raises(InvalidDataError):
        ntp.solve_ntp_svm("data")
    with pytest.raises(InvalidDataError, match="method must be one of"):
        ntp.is_separable(data, method="simplex")


def test_results_are_not_shared_between_data_sets():
    a = random_data(m=3, d=5, V=4, S=2, seed=30)
    b = random_data(m=3, d=5, V=4, S=2, seed=31)
    assert not np.allclose(ntp.ntp_svm(a), ntp.ntp_svm(b))
    W = ntp.ntp_svm(a)
    W[:] = 0.0  # callers get copies: mutating one does not poison the cache
    assert np.linalg.norm(ntp.ntp_svm(a)) > 0


def zero_margin_reference(data: ntp.NTPData, context: int, token: int) -> np.ndarray:
    """The same problem by a different method: SLSQP on linear constraints built here from
    the supports, each against the first token of its support (no package constraint code)."""
    V, d = data.V, data.d
    eq_rows, ineq_rows = [], []
    for j, support in enumerate(data.supports):
        first = support[0]
        for z in support[1:]:
            eq_rows.append(np.outer(np.eye(V)[z] - np.eye(V)[first], data.H[j]).ravel())
        for v in np.setdiff1d(np.arange(V), support):
            row = np.outer(np.eye(V)[first] - np.eye(V)[v], data.H[j]).ravel()
            (eq_rows if (j, v) == (context, token) else ineq_rows).append(row)
    E, A = np.array(eq_rows), np.array(ineq_rows)
    res = minimize(
        lambda w: 0.5 * w @ w,
        np.zeros(V * d),
        jac=lambda w: w,
        method="SLSQP",
        constraints=[
            {"type": "eq", "fun": lambda w: E @ w, "jac": lambda w: E},
            {"type": "ineq", "fun": lambda w: A @ w - 1.0, "jac": lambda w: A},
        ],
        options={"ftol": 1e-14, "maxiter": 500},
    )
    assert res.success, res.message
    return res.x.reshape(V, d)


@pytest.mark.parametrize("seed", [40, 41, 42])
def test_zero_margin_direction_is_the_constrained_min_norm_solution(seed):
    """(6a) and the chosen margin 0 to rounding, every other margin >= 1 (on every pair z in
    S_j, not only the anchors), and the minimum norm (SLSQP on all pairs agrees)."""
    data = random_data(m=3, d=5, V=5, S=2, seed=seed)
    context, token = 1, int(np.flatnonzero(~data.support_mask[1])[0])
    W = zero_margin_direction(data, context, token)
    eq, _ = margins_all_pairs(data, W)
    logits = W @ data.H[context]
    zero = logits[data.supports[context]] - logits[token]
    scale = np.linalg.norm(W) * np.abs(data.H).max()
    assert np.abs(eq).max() < 1e-12 * scale
    assert np.abs(zero).max() < 1e-12 * scale
    others = [
        W[z] @ data.H[j] - W[v] @ data.H[j]
        for j, support in enumerate(data.supports)
        for v in np.setdiff1d(np.arange(data.V), support)
        if (j, v) != (context, token)
        for z in support
    ]
    assert min(others) >= 1 - 1e-7
    np.testing.assert_allclose(W, zero_margin_reference(data, context, token), atol=1e-6)


def test_zero_margin_direction_keeps_the_loss_above_the_entropy():
    """Along W* + gamma D, the zero-margin token keeps its share: CE - H tends to
    pi_j log(1 + exp(x)), x its logit under W* minus the log-sum-exp of the support's."""
    data = random_data(m=4, d=6, V=6, S=3, seed=5)
    context, token = 0, 3
    D, W_star = zero_margin_direction(data, context, token), ntp.finite_solution(data)
    logits = W_star @ data.H[context]
    support = data.supports[context]
    x = logits[token] - np.log(np.sum(np.exp(logits[support])))
    plateau = data.pi[context] * np.log1p(np.exp(x))
    assert plateau > 1e-3
    gap = ntp.kl_divergence(data, W_star + 40.0 * D)
    assert abs(gap / plateau - 1) < 1e-9
    assert ntp.kl_divergence(data, W_star + 40.0 * ntp.ntp_svm(data)) < 1e-12  # (6b) holds: H


def test_zero_margin_direction_reports_infeasible_pairs():
    """In the plane (Fig. 1's supports), token 4 is missing only from context C; by the plane
    relation of chapter 1 a zero margin there forces zero margins on tokens 1 and 2 as well,
    so no W keeps those >= 1. Token 3, missing from B and C, leaves the others free."""
    toy = ntp.toy2d_instance(0)
    with pytest.raises(NotSeparableError, match="margin 0 on"):
        zero_margin_direction(toy, 2, 3)
    W = zero_margin_direction(toy, 2, 2)
    assert np.isfinite(W).all()


# ---------------------------------------------------------------------------------------------
# The active-set method, and the cvxpy reference to compare it with


def test_package_solver_is_the_fast_one_and_agrees_with_the_reference():
    data = ntp.synthetic_instance()
    sol, ref = ntp.solve_ntp_svm(data), ntp.solve_ntp_svm(data, method="cvxpy")
    assert sol.solver == FAST_SOLVER_NAME and ref.solver == settings.QP_SOLVER
    np.testing.assert_allclose(sol.W, ref.W, atol=1e-6 * np.abs(ref.W).max())
    np.testing.assert_allclose(sol.duals, ref.duals, atol=1e-6 * ref.duals.max())


def test_the_fast_solver_s_failure_on_separable_data_falls_back_to_the_verified_reference(monkeypatch):
    """The active-set method's SolverError on separable data: the cvxpy reference answers, verified,
    and its ``fallback_from`` gives the failure."""

    def fail(data, max_iter=settings.ACTIVE_SET_MAX_ITER):
        raise SolverError("the active-set method did not converge in 100 iterations (simulated)")

    monkeypatch.setattr("ntpnb.linear._active_set.solve_active_set", fail)
    data = random_data(m=8, d=10, V=6, S=3, seed=12)
    assert ntp.is_separable(data)
    sol = ntp.solve_ntp_svm(data)
    assert sol.solver == settings.QP_SOLVER and sol.passes()
    assert sol.fallback_from == "the active-set method did not converge in 100 iterations (simulated)"


@pytest.mark.parametrize("seed", range(3))
def test_w_mm_with_more_contexts_than_dimensions_agrees_with_the_reference_and_is_certified(seed):
    data = ntp.random_instance(25, 15, 6, 2, np.random.default_rng(seed))
    sol = ntp.solve_ntp_svm(data)
    ref = ntp.solve_ntp_svm(data, method="cvxpy")
    assert sol.passes()
    np.testing.assert_allclose(sol.W, ref.W, atol=1e-7 * np.abs(ref.W).max())
    assert NTPRows(data).margins(sol.W.ravel()).min() >= 1 - settings.SVM_FEAS_TOL


def test_w_mm_on_text_data_with_m_above_d_agrees_with_the_reference():
    data = text_data(30, 80)  # 162 contexts, twice their threshold
    sol = ntp.solve_ntp_svm(data)
    ref = ntp.solve_ntp_svm(data, method="cvxpy")
    assert sol.passes()
    np.testing.assert_allclose(sol.W, ref.W, atol=1e-8 * np.abs(ref.W).max())


def test_package_reports_non_separable_data_after_the_fast_solver_fails():
    data = ntp.NTPData(H=[[1.0], [2.0]], pi=[0.5, 0.5], P=[[0.6, 0.4, 0.0], [0.0, 0.4, 0.6]])
    with pytest.raises(ntp.errors.NotSeparableError):
        ntp.solve_ntp_svm(data)


@pytest.mark.parametrize("solve", [ntp.solve_ntp_svm, ntp.ntp_svm])
def test_non_separable_data_without_full_row_rank_are_decided_before_the_active_set_method(
    monkeypatch, solve
):
    """110 contexts in 5 dimensions, not separable: the proximal active-set method (the one for
    ``H`` without full row rank) would run to its iteration caps, minutes, before the decision."""

    def entered(*args, **kwargs):
        raise AssertionError("the active-set method was entered on non-separable data")

    monkeypatch.setattr("ntpnb.linear._max_margin.solve_verified", entered)
    data = text_data(20, 5)
    with pytest.raises(NotSeparableError, match="not NTP-separable") as info:
        solve(data)
    with pytest.raises(NotSeparableError) as certificate:
        require_separable(data)
    assert str(info.value) == str(certificate.value)


# ---------------------------------------------------------------------------------------------
# Invariants that hold by construction of the solvers, and scale


@pytest.mark.parametrize("name", CHAPTER_INSTANCES)
def test_finite_solution_and_svm_invariants_on_the_chapter_instances(name):
    """W* solves (4) and lies in F; W^mm lies in F-perp with smallest margin 1 (the active-set
    solver solves the KKT system of its active set exactly; the cvxpy reference polishes onto
    it) and a duality gap at rounding level; hence they are orthogonal. All hold by
    construction of the solvers."""
    data = CHAPTER_INSTANCES[name]()
    cons = ntp_constraints(data)
    W_star, sol = ntp.finite_solution(data), ntp.solve_ntp_svm(data)
    assert np.abs(cons.eq @ W_star.ravel() - cons.eq_rhs).max() < 1e-10
    assert (cons.ineq @ sol.W.ravel()).min() == pytest.approx(1.0, abs=1e-10)
    assert sol.polished or sol.solver == "ntpnb-active-set"
    assert abs(sol.duality_gap) < 1e-12
    cosine = np.sum(W_star * sol.W) / (np.linalg.norm(W_star) * np.linalg.norm(sol.W))
    assert abs(cosine) < 1e-10


@pytest.mark.parametrize("s", [1e-150, 1e-8, 1e-3, 1e3, 1e8, 1e150])
def test_svm_and_finite_solution_scale_like_one_over_s(s):
    """W^mm(s H) = W^mm(H) / s to 1e-9 at every scale (absolute verification tolerances passed an
    answer 4e-4 off at H x 1000), with the same active set and multipliers scaled by 1 / s^2."""
    data = ntp.synthetic_instance(n=2000, m=20, d=25, V=8, S=4, seed=5)
    big = scaled(data, s)
    W_mm, W_star = ntp.ntp_svm(data), ntp.finite_solution(data)
    np.testing.assert_allclose(ntp.ntp_svm(big) * s, W_mm, rtol=1e-9, atol=1e-9 * np.abs(W_mm).max())
    np.testing.assert_allclose(ntp.finite_solution(big) * s, W_star, rtol=1e-9, atol=1e-12)
    sol = ntp.solve_ntp_svm(big)
    assert sol.n_active == ntp.solve_ntp_svm(data).n_active
    np.testing.assert_allclose(sol.duals * s**2, ntp.solve_ntp_svm(data).duals, rtol=1e-6, atol=1e-9)


def test_svm_of_a_tiny_embedding_matches_the_closed_form():
    """H = [[1e-6]], P = [[1, 0]]: solved on normalized data (unnormalized, CLARABEL calls it
    infeasible). W^mm minimizes w_0^2 + w_1^2 with (w_0 - w_1) 1e-6 >= 1: w = (5e5, -5e5)."""
    data = ntp.NTPData(H=[[1e-6]], pi=[1.0], P=[[1.0, 0.0]])
    np.testing.assert_allclose(ntp.ntp_svm(data), [[5e5], [-5e5]], rtol=1e-12)


@PROPERTY
@given(data=instances(max_m=5, max_d=4, max_V=5), e=log_scales)
def test_property_svm_scales_like_one_over_s_and_agrees_with_the_dual(data, e):
    assume(ntp.is_separable(data))
    s = 10.0**e
    W = ntp.ntp_svm(data)
    np.testing.assert_allclose(
        ntp.ntp_svm(scaled(data, s)) * s, W, rtol=1e-7, atol=1e-9 * np.abs(W).max(initial=1)
    )
    if np.any(W):
        W_dual = dual_lbfgs(data)  # L-BFGS-B on the dual: another formulation and method
        assert np.linalg.norm(W - W_dual) <= 1e-4 * np.linalg.norm(W)
