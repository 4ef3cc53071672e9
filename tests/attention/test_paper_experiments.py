"""The batched experiments of Figs. 3-6 at toy scale: shapes, references, trial independence, and
the same results on every joblib backend."""

from __future__ import annotations

import joblib
import numpy as np
import pytest
from scipy import stats

from ntpnb import _optim as optim
from ntpnb import attention as att
from ntpnb.attention import (
    as_token_data,
    global_experiment,
    identity_head,
    local_experiment,
    local_threshold_sweep,
    make_problem,
    random_embeddings,
    train,
)
from ntpnb.attention._graphs import cyclic_subdataset
from ntpnb.attention._model import loss_and_grad
from ntpnb.attention._paper_experiments import gd_reference, initial_weights
from ntpnb.errors import InvalidDataError, SolverError

GENERAL = dict(K=6, d=8, n=6, T=4)


def assert_same_results(a, b):
    """Every recorded value of two experiment results, their iterations and final iterates: bit for bit."""
    assert a.names == b.names and a.seeds == b.seeds
    for name in ("iterations", "W", *a.names):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def test_global_experiment_shapes_and_references():
    r = global_experiment("general", K=6, d=8, n=6, T=4, n_trials=3, lr=0.01, n_iter=300, seed=0)
    assert r.corr.shape == (r.iterations.size, 3) and r.W.shape == (3, 8, 8)
    assert np.all(r.cyc_dims > 0) and np.all(np.abs(r.svm_gaps) < 1e-7)
    # W^mm is orthogonal to W^cyc in every trial (Lemma 2), and the GD reference is near W^cyc
    assert np.all(np.abs(np.sum(r.W_mm * r.W_cyc, axis=(1, 2))) < 1e-9)
    assert r.corr[-1].mean() > r.corr[1].mean()
    # trial independence: the first trial alone gives the same curves
    alone = global_experiment("general", K=6, d=8, n=6, T=4, n_trials=1, lr=0.01, n_iter=300, seed=0)
    np.testing.assert_allclose(alone.corr[:, 0], r.corr[:, 0], rtol=1e-9)


def test_global_experiment_starts_w_where_init_says_and_the_references_from_zero():
    """``init="uniform"``: ``W(0)`` is :func:`initial_weights`'s (the authors'), one NGD step away."""
    kw = dict(K=6, d=8, n=6, T=4, n_trials=3, lr=0.01, seed=2)
    start = initial_weights("uniform", 3, 8, 2)
    one = global_experiment("general", **kw, n_iter=1, init="uniform")
    np.testing.assert_allclose(np.linalg.norm(one.W - start, axis=(1, 2)), 0.01, rtol=1e-12)
    zero = global_experiment("general", **kw, n_iter=1)
    np.testing.assert_allclose(np.linalg.norm(zero.W, axis=(1, 2)), 0.01, rtol=1e-12)
    np.testing.assert_array_equal(one.W_cyc_paper, zero.W_cyc_paper)  # the paper's W^cyc: from zero
    with pytest.raises(InvalidDataError, match="unknown initialization"):
        global_experiment("general", **kw, n_iter=1, init="normal")


def test_acyclic_experiment_has_no_cyclic_part():
    r = global_experiment("acyclic", K=8, d=8, n=4, T=6, n_trials=2, lr=0.01, n_iter=100, seed=1)
    assert np.all(r.cyc_dims == 0) and np.all(r.dist_cyc == 0)


@pytest.mark.parametrize(
    ("loss", "options"),
    [
        ("squared", dict(subset_key="selected")),
        ("ce", {}),
        ("ce", dict(subset_key="selected", threshold=1e-2)),
        ("squared_softmax", dict(init="uniform", threshold=1e-2)),
    ],
)
def test_local_experiment_runs(loss, options):
    r = local_experiment(loss, K=8, d=8, n=4, T=6, n_trials=2, lr=0.1, n_iter=200, seed=2, **options)
    assert r.corr_local.shape == r.corr_global.shape == (r.iterations.size, 2)
    assert np.all(np.isfinite(r.dist_local)) and np.all(r.n_selected >= 1)
    assert r.W.shape == (2, 8, 8) and r.scores.shape == (2, 4, 6)
    np.testing.assert_allclose(r.scores.sum(axis=-1), 1.0)
    assert np.all(np.abs(r.corr_combined) <= 1 + 1e-12) and np.all(r.local_svm_norm > 0)


def test_local_distances_compare_w_and_its_reference_at_the_same_step():
    """At step 0 the references are 0 (trained from zero), so the distance is ||Pi(W(0))||; the
    recorded curves are not squared and end at the distance of the final iterates."""
    from ntpnb.attention._batched_training import project_batched, stack_bases

    kw = dict(K=8, d=8, n=4, T=6, n_trials=6, lr=0.1, n_iter=150, seed=11, init="uniform")
    r = local_experiment("ce", **kw, threshold=1e-2, compare_keys=True)
    assert r.iterations[0] == 0
    W0 = initial_weights("uniform", 6, 8, seed=11)
    from ntpnb.attention._paper_experiments import _draw_trials, _local_setup, _trials_key

    trials = _draw_trials(_trials_key("general", 8, 8, 4, 6, 6, 11))
    bases = stack_bases([_local_setup(t).basis for t in trials])
    np.testing.assert_allclose(r.dist_global[0], np.linalg.norm(project_batched(W0, bases), axis=(1, 2)))
    assert r.dist_other.shape == (6,) and np.all(r.dist_other >= 0)
    assert r.norm.shape == r.grad_norm.shape == r.corr_local.shape
    assert r.ref_grad_norm.shape == (r.iterations.size, 12)
    assert np.all(r.max_score_gap > 0)


def test_authors_step_rule_stalls_where_exact_normalization_keeps_going():
    """g / (||g|| + eps) stops moving once ||g|| << eps; g / ||g|| moves lr every step."""
    kw = dict(K=8, d=8, n=4, T=6, n_trials=4, lr=0.1, n_iter=1500, seed=10, init="uniform", threshold=1e-2)
    authors = local_experiment("squared_softmax", **kw, step_eps=optim.AUTHORS_NGD_EPS)
    exact = local_experiment("squared_softmax", **kw)
    stalled = authors.grad_norm[-1] < optim.AUTHORS_NGD_EPS / 10  # steps below lr / 10
    assert stalled.any()
    assert np.all(authors.norm[-1][stalled] < exact.norm[-1][stalled] - 10)
    # over the last recorded interval the stalled trials stand still, the exact ones move out
    span = 0.1 * (authors.iterations[-1] - authors.iterations[-2])
    assert np.all(np.diff(authors.norm[-2:], axis=0)[0][stalled] < 0.1 * span)
    assert np.all(np.diff(exact.norm[-2:], axis=0)[0][stalled] > 0.5 * span)


def test_gradient_norms_keep_the_size_of_underflowing_gradients():
    from ntpnb.attention._paper_experiments import gradient_norms

    class _Prob:  # gradient_norms only hands the problem to loss_and_grad(); patch that below
        pass

    import ntpnb.attention._paper_experiments as ex

    g = np.zeros((2, 3, 3))
    g[0, 0, 0], g[0, 1, 2], g[1, 2, 2] = 3e-170, 4e-170, 1.0
    original = ex.loss_and_grad, ex.stack_problems
    ex.loss_and_grad, ex.stack_problems = (lambda W, prob: (None, g)), (lambda problems: problems[0])
    try:
        out = gradient_norms(np.zeros((1, 2, 3, 3)), _Prob())
    finally:
        ex.loss_and_grad, ex.stack_problems = original
    np.testing.assert_allclose(out, [[5e-170, 1.0]], rtol=1e-14)


def test_initial_weights_are_pytorch_default_and_independent_of_the_trial_count():
    W = initial_weights("uniform", 300, 8, seed=3)
    assert W.shape == (300, 8, 8) and np.abs(W).max() <= 1 / np.sqrt(8)
    assert abs(W.var() - 1 / (3 * 8)) < 0.003  # variance of U(-a, a) is a^2 / 3
    np.testing.assert_array_equal(initial_weights("uniform", 2, 8, seed=3), W[:2])
    assert initial_weights("zero", 2, 8, seed=3) is None
    with pytest.raises(InvalidDataError, match="initialization"):
        initial_weights("normal", 2, 8, seed=3)
    with pytest.raises(InvalidDataError, match="subset_key"):
        local_experiment("ce", K=8, d=8, n=4, T=6, n_trials=1, lr=0.1, n_iter=5, seed=0, subset_key="x")


def test_label_keyed_pseudo_subset_keeps_the_labels_scc():
    """Sample 0 selects tokens 1 and 2 (a pseudo cycle) and has label 2: it keeps {1, 2}; sample 1
    selects token 3 only, its label 0 is a singleton: it is not kept."""
    from ntpnb.attention import as_token_data
    from ntpnb.attention._graphs import cyclic_subdataset, pseudo_priority_graphs, scyc_basis
    from ntpnb.attention._paper_experiments import _label_components

    E = np.eye(5)
    data = as_token_data(np.array([[1, 2, 0, 4], [3, 0, 2, 4]]), np.array([2, 0]), 5)
    W = np.zeros((5, 5))
    W[1, 4] = W[2, 4] = 30.0  # tokens 1 and 2 share the attention for query 4 ...
    W[3, 4] = 40.0  # ... except where token 3 is present
    pseudo = pseudo_priority_graphs(E, data, W, threshold=1e-2)
    sub = cyclic_subdataset(data, graphs=pseudo.graphs)
    assert sub.index.tolist() == [0] and sorted(sub.data.sequence(0).tolist()) == [1, 2]
    basis = scyc_basis(E, _label_components(pseudo.graphs, data, sub))
    assert basis.shape[0] == 1  # (e_1 - e_2) e_4^T only


def test_threshold_sweep_redraws_the_same_trials():
    kw = dict(K=8, d=8, n=4, T=6, seed=7)
    r = local_experiment("ce", **kw, n_trials=2, lr=0.1, n_iter=150, threshold=1e-2)
    sw = local_threshold_sweep(r.W, [1e-3, 1e-2], **kw)
    assert sw["corr"].shape == (2, 2)
    np.testing.assert_allclose(sw["corr"][1], r.corr_local[-1], rtol=1e-12)


def test_paper_reference_stays_in_s_cyc():
    r = global_experiment("general", **GENERAL, n_trials=3, lr=0.01, n_iter=300, seed=0)
    assert r.paper_outside.shape == (3,) and np.all(r.paper_outside < 1e-10)


def test_unknown_kind_raises():
    with pytest.raises(InvalidDataError, match="kind"):
        global_experiment("cyclic", K=6, d=8, n=6, T=4, n_trials=1, lr=0.01, n_iter=10, seed=0)


def test_global_experiment_is_the_same_on_processes_and_on_a_dask_cluster(dask_client):
    run = lambda: global_experiment("general", **GENERAL, n_trials=5, lr=0.01, n_iter=1500, seed=4)
    serial = run()
    with joblib.parallel_config(backend="loky", n_jobs=2):
        processes = run()
    with joblib.parallel_config(backend="dask"):
        cluster = run()
    assert_same_results(serial, processes)
    assert_same_results(serial, cluster)


def test_local_experiment_is_the_same_on_processes():
    run = lambda: local_experiment("ce", K=8, d=8, n=4, T=6, n_trials=4, lr=0.1, n_iter=300, seed=5)
    serial = run()
    with joblib.parallel_config(backend="loky", n_jobs=2):
        assert_same_results(serial, run())


def test_reference_of_symmetric_cyclic_data_stays_at_zero():
    """Two samples that differ only in their label: the gradient at 0 is 0 up to rounding."""
    E = random_embeddings(3, 4, 0)
    data = as_token_data(np.array([[0, 1, 2], [0, 1, 2]]), np.array([0, 1]), 3)
    sub = cyclic_subdataset(data)
    assert sub.data is not None
    prob = make_problem(E, identity_head(E), sub.data)
    assert np.linalg.norm(loss_and_grad(np.zeros((1, 4, 4)), prob)[1]) < 1e-15
    with pytest.raises(SolverError, match="zero gradient"):  # train refuses; gd_reference stays at 0
        train(prob, optim.normalized_gd(0.01), 5)
    out = gd_reference(
        [E], [sub], [identity_head(E)], "log", "identity", optim.normalized_gd(0.01), 50
    ).iterates[-1]
    assert np.array_equal(out, np.zeros((1, 4, 4)))


@pytest.fixture(scope="module")
def general():
    rng = np.random.default_rng(0)
    E = att.random_embeddings(6, 8, rng)
    data = att.as_token_data(*att.general_dataset(6, 6, 4, rng), 6)
    return E, data


def test_midpoint_gaps_tell_the_convex_risk_from_the_nonconvex_one(general):
    E, data = general
    convex = att.make_problem(E, att.identity_head(E), data)
    squared = att.make_problem(E, att.tied_head(E), data, "squared", "argmax")
    rng = np.random.default_rng(1)
    assert att.midpoint_gaps(convex, 100, 3.0, rng).max() <= 1e-12  # Lemma 3
    assert att.midpoint_gaps(squared, 100, 3.0, rng).max() > 1e-3  # the test has teeth


def test_midpoint_gaps_are_the_definition_on_one_pair(general):
    E, data = general
    prob = att.make_problem(E, att.identity_head(E), data)
    gaps = att.midpoint_gaps(prob, 1, 2.0, np.random.default_rng(5))
    again = np.random.default_rng(5)
    W1, W2 = 2.0 * again.standard_normal((1, 8, 8)), 2.0 * again.standard_normal((1, 8, 8))
    value = lambda W: att.loss_and_grad(W, prob)[0][0]
    assert gaps[0] == pytest.approx(value((W1 + W2) / 2) - (value(W1) + value(W2)) / 2, abs=1e-14)


def test_second_differences_along_s_cyc_are_positive(general):
    E, data = general
    cyc = att.solve_cyclic_correction(E, data, att.token_priority_graphs(data))
    assert cyc.dim > 0
    prob = att.make_problem(E, att.identity_head(E), cyc.subdataset.data)
    second = att.second_differences(prob, cyc.basis, 20, np.random.default_rng(2))
    assert second.shape == (20,) and second.min() > 0


def test_mean_and_error_is_the_standard_error_of_the_mean():
    x = np.random.default_rng(3).standard_normal(40)
    mean, se = att.mean_and_error(x)
    assert mean == pytest.approx(x.mean()) and se == pytest.approx(stats.sem(x))
    with pytest.raises(InvalidDataError, match="at least 2"):
        att.mean_and_error(np.ones(1))


def test_mean_and_z_measures_the_targets_distance_in_standard_errors():
    x = np.random.default_rng(4).standard_normal(30)
    mean, se, z = att.mean_and_z(x, 0.5)
    assert (mean, se) == att.mean_and_error(x)
    assert z == pytest.approx((x.mean() - 0.5) / stats.sem(x), rel=1e-12)
    with pytest.raises(InvalidDataError, match="no standard error"):
        att.mean_and_z(np.full(5, 0.99), 0.99)


def test_a_general_instance_is_appendix_ds_draw_with_its_verified_svm_and_exact_correction():
    E, data, W_mm, cyc = att.general_instance(K=6, d=8, n=6, T=4, rng=np.random.default_rng(7))
    rng = np.random.default_rng(7)  # the same draw, made step by step
    E2 = att.random_embeddings(6, 8, rng)
    data2 = att.as_token_data(*att.general_dataset(6, 6, 4, rng), 6)
    graphs = att.token_priority_graphs(data2)
    np.testing.assert_array_equal(E, E2)
    np.testing.assert_array_equal(data.tokens, data2.tokens)
    np.testing.assert_array_equal(data.labels, data2.labels)
    np.testing.assert_array_equal(W_mm, att.solve_graph_svm(E2, graphs).W)
    np.testing.assert_array_equal(cyc.W, att.solve_cyclic_correction(E2, data2, graphs).W)


def test_the_authors_global_best_is_the_better_of_the_two_correlations_their_filter_reads():
    r = global_experiment("general", K=6, d=8, n=6, T=4, n_trials=3, lr=0.01, n_iter=50, seed=1)
    best = att.authors_global_best(r)
    for i in range(3):
        W, W_cyc, W_mm = r.W[i], r.W_cyc_paper[i], r.W_mm[i]
        R = np.sum((W - W_cyc) * W_mm) / np.sum(W_mm * W_mm)  # least squares along W^mm
        combined = np.sum(W * (W_cyc + R * W_mm)) / np.linalg.norm(W) / np.linalg.norm(W_cyc + R * W_mm)
        assert best[i] == pytest.approx(max(r.corr[-1][i], combined), rel=1e-12)
    assert np.all(best >= r.corr[-1])


def test_largest_carrying_names_the_trials_that_make_the_sum():
    values = np.array([0.0, 5.0, 1.0, 40.0, 2.0, 52.0])
    carrying = att.largest_carrying(values, 0.9)
    np.testing.assert_array_equal(carrying, [5, 3])  # 92 of 100
    assert values[carrying].sum() >= 0.9 * values.sum()
    assert att.largest_carrying(np.zeros(4)).size == 0


def test_the_authors_filter_and_final_means():
    r = att.local_experiment("ce", K=8, d=8, n=4, T=6, n_trials=3, lr=0.1, n_iter=100, seed=2, threshold=1e-2)
    best = np.maximum(r.corr_local[-1], r.corr_combined)
    np.testing.assert_array_equal(att.kept_trials(r, 2.0), r.local_svm_norm == 0)  # nothing reaches 2
    np.testing.assert_array_equal(att.kept_trials(r, -2.0), np.ones(3, bool))
    np.testing.assert_array_equal(att.kept_trials(r, 0.5), ~((best < 0.5) & (r.local_svm_norm > 0)))
    assert att.final_mean(r.corr_local) == r.corr_local[-1].mean()


def test_an_integer_seeds_trials_are_drawn_once_and_read_only():
    from ntpnb.attention._paper_experiments import _draw_trials, _local_trials, _trials_key

    key = _trials_key("general", 6, 8, 4, 4, 3, np.int64(123))
    assert key == _trials_key("general", 6, 8, 4, 4, 3, 123)  # numpy ints key as Python ints
    first, again = _draw_trials(key), _draw_trials(_trials_key("general", 6, 8, 4, 4, 3, 123))
    assert all(a[0] is b[0] and a[1] is b[1] for a, b in zip(first, again, strict=True))
    with pytest.raises(ValueError, match="read-only"):
        first[0][0][0, 0] = 1.0
    assert _local_trials(key) is _local_trials(key)
    np.testing.assert_array_equal(random_embeddings(6, 8, np.random.default_rng(123)), first[0][0])
    with pytest.raises(InvalidDataError, match="seed"):
        global_experiment(
            "general", K=6, d=8, n=4, T=4, n_trials=3, lr=0.1, n_iter=1, seed=np.random.default_rng(1)
        )


def test_kept_graph_svm_directions_are_the_solvers():
    from ntpnb.attention._paper_experiments import _kept, _svm_direction

    from attention_instances import general_instance

    E, data = general_instance(5)
    graphs = att.token_priority_graphs(data)
    W = _kept(_svm_direction, E, graphs)
    np.testing.assert_array_equal(W, att.solve_graph_svm(E, graphs).W)
    assert _kept(_svm_direction, E.copy(), att.token_priority_graphs(data)) is W
    assert _kept(_svm_direction, E * 2.0, graphs) is not W


def test_experiments_report_their_progress_in_steps():
    told = []
    kw = dict(K=8, d=8, n=4, T=6, n_trials=3, lr=0.1, n_iter=120, seed=4, threshold=1e-2)
    local_experiment("ce", **kw, compare_keys=True, progress=lambda done, total: told.append((done, total)))
    assert {total for _, total in told} == {4 * 120} and told[-1] == (480, 480)
    assert [done for done, _ in told] == sorted(done for done, _ in told)
    told.clear()
    att.global_experiment(
        "general", K=6, d=8, n=6, T=4, n_trials=2, lr=0.01, n_iter=50, seed=1,
        progress=lambda done, total: told.append((done, total)),
    )  # fmt: skip
    assert {total for _, total in told} == {100} and told[-1] == (100, 100)
