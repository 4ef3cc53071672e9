"""The Graph-SVM (ntpnb.attention._graph_svm_qp): verified, feasible or named infeasible, and the same up to
scale for ill-conditioned and scaled embeddings (as is W^cyc, solved the same way)."""

from __future__ import annotations

import numpy as np
import pytest

from ntpnb import settings
from ntpnb._qp import LEAST_DISTANCE_SOLVER, MatrixConstraints, scaled_solution, solve_reference
from ntpnb.attention import (
    acyclic_dataset,
    as_token_data,
    random_embeddings,
    solve_cyclic_correction,
    solve_graph_svm,
    token_priority_graphs,
)
from ntpnb.attention._graph_svm_qp import _constraint_rows
from ntpnb.attention._graphs import scyc_basis, scyc_dimension
from ntpnb.attention._token_data import normalized_embeddings
from ntpnb.errors import InfeasibleGraphSVMError, NotSeparableError, ScaleError, SolverError

from attention_instances import general_instance, with_condition


def reference_graph_svm(E, graphs):
    """The second method: the Graph-SVM by cvxpy alone (:func:`ntpnb._qp.solve_reference`, polished)."""
    En, c = normalized_embeddings(E)
    A, B = _constraint_rows(En, graphs.strict), _constraint_rows(En, graphs.equivalent)
    cons = MatrixConstraints(A, B, scyc_basis(En, graphs), "the Graph-SVM", (E.shape[1], E.shape[1]))
    return scaled_solution(solve_reference(cons, lambda r: AssertionError(r.status)), c, 2, "|E|")


#: Each method, and the solver it names on a well-posed instance.
METHODS = {
    "least-distance": (solve_graph_svm, LEAST_DISTANCE_SOLVER),
    "cvxpy": (reference_graph_svm, settings.QP_SOLVER),
}


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("seed", range(4))
def test_graph_svm_is_verified_and_feasible(seed, method):
    E, data = general_instance(seed)
    graphs = token_priority_graphs(data)
    solve, solver = METHODS[method]
    sol = solve(E, graphs)
    assert sol.passes() and sol.solver == solver
    A, B = _constraint_rows(E, graphs.strict), _constraint_rows(E, graphs.equivalent)
    w = sol.W.ravel()
    assert (A @ w).min() >= 1 - 1e-8
    assert np.abs(B @ w).max() <= 1e-8
    # a second method: scipy's SLSQP on the same QP from a feasible start reaches the same norm
    from scipy.optimize import minimize

    res = minimize(
        lambda v: 0.5 * v @ v,
        2 * w,
        jac=lambda v: v,
        constraints=[{"type": "ineq", "fun": lambda v: A @ v - 1}, {"type": "eq", "fun": lambda v: B @ v}],
        method="SLSQP",
        options={"ftol": 1e-12, "maxiter": 500},
    )
    assert abs(np.linalg.norm(res.x) - np.linalg.norm(w)) <= 1e-5 * np.linalg.norm(w)


def test_graph_svm_on_acyclic_data_has_no_equalities():
    E = random_embeddings(8, 8, 1)
    X, y, _ = acyclic_dataset(8, 4, 6, 2)
    graphs = token_priority_graphs(as_token_data(X, y, 8))
    A, B = _constraint_rows(E, graphs.strict), _constraint_rows(E, graphs.equivalent)
    assert B.shape[0] == 0 and A.shape[0] > 0


def test_infeasible_graph_svm_raises():
    # d = 1: tokens 0 and 1 with embeddings +1, -1 and query 2 with embedding 1. Sample 1 needs
    # score(0) > score(1), i.e. 2 W > 0; sample 2 (query 3 = -1) with the same order needs
    # -2 W > 0 as well, and the orders are forced by two graphs: infeasible.
    E = np.array([[1.0], [-1.0], [1.0], [1.0]])
    X = [[0, 1, 2], [1, 0, 2]]
    y = [0, 1]
    with pytest.raises(InfeasibleGraphSVMError) as err:
        solve_graph_svm(E, token_priority_graphs(as_token_data(X, y, 4)))
    assert isinstance(err.value, NotSeparableError)


def test_graph_svm_without_strict_relations_is_zero():
    E = random_embeddings(3, 4, 0)
    X, y = [[0, 1, 2], [1, 0, 2], [2, 0, 2]], [0, 1, 2]  # G(2) is one SCC {0, 1, 2}
    assert not token_priority_graphs(as_token_data(X, y, 3)).strict
    np.testing.assert_array_equal(
        solve_graph_svm(E, token_priority_graphs(as_token_data(X, y, 3))).W, np.zeros((4, 4))
    )


# ---------------------------------------------------------------------------------------------
# Ill-conditioned embeddings: polishing never forms normal equations


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("seed", range(10))
def test_graph_svm_and_w_cyc_at_condition_1e3(seed, method):
    # polishing through the normal equations M M^T fails verification on 3 of these 10 instances
    E, data = general_instance(seed)
    E = with_condition(E, 1e3)
    graphs = token_priority_graphs(data)
    solve, solver = METHODS[method]
    sol = solve(E, graphs)
    assert sol.passes() and sol.polished and sol.solver == solver
    cyc = solve_cyclic_correction(E, data, graphs)
    assert cyc.dim == scyc_dimension(E, graphs) and cyc.min_curvature > 0


def test_the_two_methods_give_the_same_graph_svm():
    # least-distance programming and the conic solver, both polished on their active sets, on
    # acyclic and cyclic instances: the same W^mm to rounding and the same active set
    worst, count = 0.0, 0
    for seed in range(40):
        E, data = general_instance(2000 + seed)
        graphs = token_priority_graphs(data)
        fast, ref = solve_graph_svm(E, graphs), reference_graph_svm(E, graphs)
        assert fast.solver == LEAST_DISTANCE_SOLVER and ref.solver == settings.QP_SOLVER
        assert fast.n_active == ref.n_active
        worst = max(worst, float(np.abs(fast.W - ref.W).max() / np.abs(ref.W).max()))
        count += len(graphs.equivalent) > 0
    assert count >= 10  # the cyclic case (equalities) is covered
    assert worst <= 1e-10, worst


def test_false_infeasibility_of_independent_embeddings_is_not_reported():
    # linearly independent embeddings make the Graph-SVM feasible; at condition 1e7 the solver
    # may say otherwise, which must not become an InfeasibleGraphSVMError
    for seed in (2, 4, 8):
        E, data = general_instance(seed)
        graphs = token_priority_graphs(data)
        try:
            sol = solve_graph_svm(with_condition(E, 1e7), graphs)
        except SolverError as err:
            assert "Infeasible" not in type(err).__name__
        else:
            assert sol.passes()


def test_n_active_is_relative_to_the_largest_multiplier():
    E, data = general_instance(0)
    graphs = token_priority_graphs(data)
    n = solve_graph_svm(E, graphs).n_active
    assert n >= 1
    for scale in (1e-3, 1e4):
        assert solve_graph_svm(scale * E, graphs).n_active == n


# ---------------------------------------------------------------------------------------------
# Scale: solved for normalized embeddings and scaled back, or a named ScaleError


def _instances(count):
    out = []
    for seed in range(count):
        E, data = general_instance(1000 + seed)
        out.append((E, data, token_priority_graphs(data)))
    return out


def test_graph_svm_and_w_cyc_are_scale_invariant():
    # solved without normalizing E, E * 1e-3 gives a false InfeasibleGraphSVMError (60 of 60) and
    # E * 1e4 the status optimal_inaccurate
    worst = {"W_mm": 0.0, "duals": 0.0, "W_cyc": 0.0}
    for E, data, graphs in _instances(60):
        ref = solve_graph_svm(E, graphs)
        ref_cyc = solve_cyclic_correction(E, data, graphs)
        assert ref.passes()
        for scale in (1e-3, 1e4):
            sol = solve_graph_svm(scale * E, graphs)
            assert sol.passes() and sol.solver == LEAST_DISTANCE_SOLVER
            worst["W_mm"] = max(
                worst["W_mm"], np.linalg.norm(sol.W * scale**2 - ref.W) / np.linalg.norm(ref.W)
            )
            worst["duals"] = max(
                worst["duals"], np.abs(sol.duals * scale**4 - ref.duals).max() / ref.duals.max()
            )
            cyc = solve_cyclic_correction(scale * E, data, graphs)
            assert cyc.dim == ref_cyc.dim and cyc.grad_norm <= settings.CONVEX_KKT_TOL
            err = np.linalg.norm(cyc.W * scale**2 - ref_cyc.W) / max(np.linalg.norm(ref_cyc.W), 1e-300)
            worst["W_cyc"] = max(worst["W_cyc"], err if np.linalg.norm(ref_cyc.W) > 0 else 0.0)
    assert max(worst.values()) <= 1e-8, worst


@pytest.mark.parametrize("scale", [1e-100, 1e100, 2.0**-500, 2.0**500])
def test_extreme_scales_give_the_same_w_or_a_scale_error(scale):
    for E, data, graphs in _instances(5):
        ref = solve_graph_svm(E, graphs).W
        cyc = solve_cyclic_correction(E, data, graphs)
        big = solve_cyclic_correction(scale * E, data, graphs)
        assert np.linalg.norm(big.W * scale**2 - cyc.W) <= 1e-8 * max(np.linalg.norm(cyc.W), 1e-300)
        # the multipliers scale like 1 / |E|^4: beyond float64 at 1e+-100, named
        if abs(np.log10(scale)) * 4 > 300:
            with pytest.raises(ScaleError, match="multiplier"):
                solve_graph_svm(scale * E, graphs)
        else:
            sol = solve_graph_svm(scale * E, graphs)
            assert sol.passes() and np.allclose(sol.W * scale**2, ref, rtol=0, atol=1e-8 * np.abs(ref).max())


def test_w_mm_beyond_float64_is_a_scale_error():
    E, data, graphs = _instances(2)[1]  # an instance with W^cyc != 0
    assert np.linalg.norm(solve_cyclic_correction(E, data, graphs).W) > 0.1
    with pytest.raises(ScaleError, match="W\\^mm"):
        solve_graph_svm(1e-160 * E, graphs)  # W^mm ~ 1e320
    with pytest.raises(ScaleError, match="W\\^cyc"):
        solve_cyclic_correction(1e160 * E, data, graphs)  # W^cyc ~ 1e-320: subnormal
