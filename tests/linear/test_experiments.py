"""Paper A's experiments (ntpnb.linear.experiments), each against a second computation."""

from __future__ import annotations

import joblib
import numpy as np
import pytest

import ntpnb as ntp
from ntpnb import optim, settings
from ntpnb.errors import GenerationError, InvalidDataError, NotSeparableError
from ntpnb.linear.condition_thresholds import NestedTrial, nested_trial
from ntpnb.linear.constraints import NTPRows, ntp_constraints
from ntpnb.linear.experiments.curves import SUMMARY_NAMES
from ntpnb.parallel import run_sweep


@pytest.fixture(scope="module")
def toy():
    return ntp.toy2d_instance(0)


@pytest.fixture(scope="module")
def toy_limits(toy):
    return ntp.limits(toy)


def test_fit_line_recovers_a_line_and_agrees_with_lstsq():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(30)
    assert ntp.fit_line(x, 3.0 * x - 2.0) == pytest.approx((3.0, -2.0))
    y = rng.standard_normal(30)
    (slope, intercept), *_ = np.linalg.lstsq(np.c_[x, np.ones_like(x)], y, rcond=None)
    assert ntp.fit_line(x, y) == pytest.approx((slope, intercept), rel=1e-12)
    with pytest.raises(InvalidDataError, match="one length"):
        ntp.fit_line([1.0], [2.0])
    with pytest.raises(InvalidDataError, match="non-finite"):
        ntp.fit_line([1.0, 2.0], [np.inf, 1.0])


def test_margins_are_the_svm_constraint_rows(toy, toy_limits):
    W = toy_limits.W_mm
    np.testing.assert_allclose(ntp.margins(toy, W), NTPRows(toy).margins(W.ravel()), atol=1e-12)
    assert ntp.margins(toy, W).min() == pytest.approx(1.0, abs=1e-9)  # W^mm: smallest margin 1
    with pytest.raises(InvalidDataError, match="shape"):
        ntp.margins(toy, np.zeros((2, 2)))


def test_tempering_exponent_recovers_a_known_beta(toy):
    raw = ntp.toy2d_instance(0, entropy=None)
    for beta in (0.4, 1.0, 2.5):
        P = np.where(raw.support_mask, raw.P, 0.0) ** beta
        tempered = ntp.NTPData(H=raw.H, pi=raw.pi, P=P / P.sum(axis=1, keepdims=True))
        assert ntp.tempering_exponent(tempered, raw) == pytest.approx(beta, rel=1e-10)
    assert 0 < ntp.tempering_exponent(toy, raw) < 1  # the paper's entropy flattens our draw
    other = ntp.synthetic_instance(seed=0)
    with pytest.raises(InvalidDataError, match="same supports"):
        ntp.tempering_exponent(toy, other)


def test_entropy_search_reaches_the_entropy_on_full_supports():
    full = ntp.synthetic_instance(n=200, m=4, d=6, V=3, S=3, seed=1)  # d > m, full supports
    rng = np.random.default_rng(0)
    search = ntp.entropy_search(full, 2, 300, rng)
    Ws = search.decoders
    assert len(Ws) == 2 and Ws[0].shape == (full.V, full.d)
    gaps = ntp.entropy_gaps(full, Ws)
    assert gaps.kl.max() < 1e-10
    # each start stopped where L-BFGS could not go further, before the limit
    assert search.limit == 300 and search.stalled.all() and (search.iterations > 0).all()
    # the same generator state gives the same decoders: the draws are the starts alone
    again = ntp.entropy_search(full, 2, 300, np.random.default_rng(0))
    np.testing.assert_array_equal(Ws[1], again.decoders[1])
    # a search cut short is not stalled: it might have gone further
    short = ntp.entropy_search(full, 2, 3, np.random.default_rng(0))
    assert not short.stalled.any() and (short.iterations == 3).all()


def test_random_decoders_have_log_uniform_norms(toy):
    Ws = ntp.random_decoders(toy, 500, np.random.default_rng(3))
    norms = np.linalg.norm(Ws, axis=(1, 2))
    assert Ws.shape == (500, toy.V, toy.d)
    assert 1e-2 <= norms.min() and norms.max() <= 1e3
    assert abs(np.mean(np.log10(norms)) - 0.5) < 0.2  # uniform in [-2, 3]


def test_entropy_gaps_direct_and_kl_agree(toy):
    Ws = ntp.random_decoders(toy, 50, np.random.default_rng(1))
    gaps = ntp.entropy_gaps(toy, Ws)
    assert np.all(gaps.kl >= 0)
    np.testing.assert_allclose(gaps.direct, gaps.kl, atol=1e-10 * max(1.0, gaps.kl.max()))
    # the rounding scale grows with the largest logit and is never below eps H
    assert np.all(gaps.rounding >= np.finfo(float).eps * ntp.entropy(toy))
    assert np.all(np.abs(gaps.direct - gaps.kl) <= 10 * gaps.rounding)
    big = ntp.entropy_gaps(toy, [1e4 * Ws[0], Ws[0]]).rounding
    assert big[0] > 1e3 * big[1] / 2


def test_gap_from_margins_is_the_kl_form_along_rays(toy):
    W_star, W_mm = ntp.finite_solution(toy), ntp.ntp_svm(toy)
    rng = np.random.default_rng(5)
    gammas = np.linspace(0.0, 30.0, 31)
    other = W_star + ntp.project_F_perp(toy, rng.standard_normal((toy.V, toy.d)))
    mixed = ntp.project_F_perp(toy, rng.standard_normal((toy.V, toy.d)))
    for W_p, W_d in ((W_star, W_mm), (other, W_mm), (W_star, mixed), (W_star, -mixed)):
        closed = ntp.gap_from_margins(toy, W_p, W_d, gammas)
        kl = ntp.gap_along_ray(toy, W_p, W_d, gammas)
        np.testing.assert_allclose(kl, closed, rtol=1e-9, atol=16 * np.finfo(float).eps)
    # a W_p that does not match the ratios is outside the formula: the two differ at gamma = 0
    off = ntp.gap_from_margins(toy, np.zeros_like(W_star), W_mm, [0.0])
    assert abs(off[0] - ntp.gap_along_ray(toy, np.zeros_like(W_star), W_mm, [0.0])[0]) > 1e-3


def test_plane_relation_is_the_null_vector_of_the_embeddings():
    rng = np.random.default_rng(2)
    for H in rng.standard_normal((20, 3, 2)):
        coef = ntp.plane_relation(H)
        np.testing.assert_allclose(coef @ H, 0.0, atol=1e-12)
        null = np.linalg.svd(H.T)[2][-1]
        assert abs(abs(coef @ null) - np.linalg.norm(coef)) < 1e-9 * np.linalg.norm(coef)
    with pytest.raises(InvalidDataError, match="three embeddings"):
        ntp.plane_relation(np.zeros((4, 2)))


def test_origin_inside_agrees_with_barycentric_coordinates():
    rng = np.random.default_rng(4)
    for H in rng.standard_normal((200, 3, 2)):
        # the origin as a convex combination of the vertices: solve for the weights
        weights = np.linalg.solve(np.vstack([H.T, np.ones(3)]), [0.0, 0.0, 1.0])
        assert ntp.origin_inside(H) == bool(np.all(weights > 0))
    assert not ntp.origin_inside([[1.0, 0.0], [0.3, 1.0], [-2.0, 0.0]])  # on an edge


def test_proof_direction_is_a_separating_direction_inside_the_triangle(toy):
    rng = np.random.default_rng(5)
    inside = [H for H in rng.standard_normal((60, 3, 2)) if ntp.origin_inside(H)]
    assert inside
    for H in inside:
        data = ntp.NTPData(H=H, pi=toy.pi, P=toy.P)
        W = ntp.proof_direction(H, toy.support_mask)
        assert ntp.satisfies_definition_2(data, W, 1e-9)
        assert ntp.separability_violation(data, W) <= 1e-9 * (1 + np.abs(W).max())
        assert ntp.is_separable(data)


def test_gap_along_ray_and_its_rate(toy, toy_limits):
    gammas = np.linspace(0.0, 30.0, 61)
    gap = ntp.gap_along_ray(toy, toy_limits.W_star, toy_limits.W_mm, gammas)
    assert gap[7] == ntp.kl_divergence(toy, toy_limits.W_star + gammas[7] * toy_limits.W_mm)
    assert np.all(np.diff(gap) < 0)
    mu = ntp.margins(toy, toy_limits.W_mm).min()
    assert ntp.decay_rate(gammas, gap) == pytest.approx(-mu, abs=0.02)
    # Eq. (9): CE - H <= C e^{-gamma} along W* + gamma W^mm
    assert np.all(gap <= ntp.eq9_constant(toy, toy_limits.W_star) * np.exp(-gammas))
    with pytest.raises(InvalidDataError, match="fewer than two"):
        ntp.decay_rate(gammas, np.ones_like(gammas))


def test_decay_rate_of_an_exponential():
    gammas = np.linspace(0.0, 20.0, 41)
    assert ntp.decay_rate(gammas, 3.0 * np.exp(-1.7 * gammas)) == pytest.approx(-1.7, rel=1e-9)


def test_in_support_shares_normalize_on_each_support(toy, toy_limits):
    x = ntp.in_support_shares(toy, toy_limits.W_star)
    totals = [np.log(np.sum(np.exp(x[j][toy.support_mask[j]]))) for j in range(toy.m)]
    np.testing.assert_allclose(totals, 0.0, atol=1e-12)
    # W* matches the in-support probabilities: the shares are log p_jz on the supports
    np.testing.assert_allclose(x[toy.support_mask], np.log(toy.P[toy.support_mask]), atol=1e-9)


def test_zero_margin_ray_and_its_plateau(toy, toy_limits):
    ray = ntp.zero_margin_ray(toy, toy_limits.W_star)
    cons = ntp_constraints(toy)
    rows = np.flatnonzero((cons.ineq_context == ray.pair[0]) & (cons.ineq_token == ray.pair[1]))
    m = ntp.margins(toy, ray.D)
    assert ray.zero[rows].all() and abs(m[rows[0]]) < 1e-9
    assert ray.other_margin == pytest.approx(m[~ray.zero].min()) and ray.other_margin > 1 - 1e-6
    assert ray.residual < 1e-12
    # the plateau bounds CE - H from below along the ray and is its limit
    gammas = np.array([0.0, 5.0, 30.0, 60.0])
    gap = ntp.gap_along_ray(toy, toy_limits.W_star, ray.D, gammas)
    assert np.all(gap >= ray.plateau * (1 - 1e-9))
    assert gap[-1] / ray.plateau == pytest.approx(1.0, abs=1e-9)


def test_zero_margin_ray_raises_when_no_pair_admits_one():
    # d = 1, both contexts followed by token 1 alone: a zero margin on one context's pair
    # makes w_1 = w_2, so the other context's margin is 0 too, below the required 1
    data = ntp.NTPData(H=[[1.0], [2.0]], pi=[0.5, 0.5], P=[[1.0, 0.0], [1.0, 0.0]])
    with pytest.raises(NotSeparableError, match="no pair"):
        ntp.zero_margin_ray(data, np.zeros((2, 1)))


def test_cvxpy_path_point_agrees_with_the_exact_path_at_a_small_radius(toy):
    W, status = ntp.cvxpy_path_point(toy, 1.0)
    exact = ntp.regularization_path(toy, [1.0]).W[0]
    assert status.startswith("optimal")
    assert np.linalg.norm(W - exact) < 1e-4


def test_offset_from_is_the_part_orthogonal_to_a_direction():
    rng = np.random.default_rng(6)
    W, D = rng.standard_normal((5, 4, 3)), rng.standard_normal((4, 3))
    u = D.ravel() / np.linalg.norm(D)
    explicit = [np.linalg.norm(w.ravel() - (w.ravel() @ u) * u) for w in W]
    np.testing.assert_allclose(ntp.offset_from(W, D), explicit, rtol=1e-12)
    assert ntp.offset_from(2.5 * D, D) < 1e-12


@pytest.fixture(scope="module")
def toy_path(toy):
    return ntp.regularization_path(toy, np.geomspace(0.1, 400.0, 20))


def test_split_agreement_on_the_toy_path(toy, toy_path, toy_limits):
    split = ntp.split_agreement(toy, toy_path, toy_limits.W_star)
    assert 0 < split.n_radii <= len(toy_path)
    assert split.relative_difference < 1e-6 and split.floor >= 10 * split.rounding
    assert split.B_resolved in toy_path.radii


def test_gd_along_path_compares_learned_parts_with_the_path(toy, toy_limits):
    trace = ntp.train(toy, optim.gd(0.5), 2000, seed=ntp.own_stream(0, 1), n_records=20, keep_iterates=True)
    run = ntp.gd_along_path(toy, trace, toy_limits.W_mm)
    learned = ntp.project_R(toy, trace["W"][-1])
    assert run.final_norm == pytest.approx(np.linalg.norm(learned))
    assert np.all(np.diff(run.norms) > 0) and run.norms.min() > 1
    assert run.gap_path[-1] < run.gap_mm[-1]  # GD is nearer the path than W^mm
    kept = _kept(trace, toy)  # a second computation of the iterates kept and their gaps
    np.testing.assert_allclose(run.norms, [np.linalg.norm(w) for w in kept], rtol=1e-12)
    np.testing.assert_allclose(run.gap_mm, [1 - _cos(w, toy_limits.W_mm) for w in kept], atol=1e-12)
    without = ntp.train(toy, optim.gd(0.5), 10, n_records=5)
    with pytest.raises(InvalidDataError, match="keep_iterates"):
        ntp.gd_along_path(toy, without, toy_limits.W_mm)


def _cos(a, b):
    return float(a.ravel() @ b.ravel() / np.linalg.norm(a) / np.linalg.norm(b))


def _kept(trace, data):
    learned = [ntp.project_R(data, W) for W in trace["W"]]
    out, best = [], -np.inf
    for w in learned:
        n = np.linalg.norm(w)
        if n > 1 and n > best:
            out.append(w)
        best = max(best, n)
    return out


def test_own_stream_is_not_the_data_stream_and_is_reproducible(toy):
    a = ntp.lecun_decoder(toy, ntp.own_stream(0, 1))
    b = ntp.lecun_decoder(toy, ntp.own_stream(0, 1))
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, ntp.lecun_decoder(toy, np.random.default_rng(0)))
    assert not np.allclose(a, ntp.lecun_decoder(toy, ntp.own_stream(0, 2)))


def _hand_trace(norm, corr):
    k = np.array([0, 1, 10, 100, 1000])
    values = {name: np.linspace(1.0, 2.0, k.size) for name in SUMMARY_NAMES}
    values["norm"], values["corr"] = np.asarray(norm, float), np.asarray(corr, float)
    return optim.Trace(iterations=k, values=values)


def test_trace_summary_first_reaching_and_local_exponent():
    norm = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    trace = _hand_trace(norm, 1 - 0.3 * norm**-2.0)  # 1 - corr ~ ||W||^-2
    assert ntp.trace_summary(trace)["norm"] == 16.0
    assert ntp.trace_summary(trace, 10)["norm"] == 4.0
    with pytest.raises(InvalidDataError, match="not recorded"):
        ntp.trace_summary(trace, 5)
    assert ntp.first_reaching(trace, "norm", 3.0) == 10
    assert ntp.first_reaching(trace, "norm", 1.5, below=True) == 0
    assert ntp.first_reaching(trace, "norm", 100.0) == np.inf
    assert ntp.local_exponent(trace, 1, 1000) == pytest.approx(2.0, rel=1e-10)


@pytest.mark.parametrize("opt", [optim.gd(0.5), optim.adam(0.01)], ids=lambda o: o.name)
def test_a_long_run_seen_at_a_short_grid_is_the_short_run(toy, toy_limits, opt):
    """One run recorded on the union of two grids stands for the shorter run, float for float."""
    W0 = ntp.lecun_decoder(toy, np.random.default_rng(0))
    short_grid, long_grid = optim.log_grid(300, 12), optim.log_grid(2000, 12)
    union = np.union1d(short_grid, long_grid)
    long = ntp.train(toy, opt, 2000, W0=W0, record_at=union, lim=toy_limits, keep_iterates=True)
    short = ntp.train(toy, opt, 300, W0=W0, record_at=short_grid, lim=toy_limits, keep_iterates=True)
    seen = ntp.trace_at(long, short_grid)
    np.testing.assert_array_equal(seen.iterations, short.iterations)
    assert set(seen.values) == set(short.values)
    for name in short.values:
        np.testing.assert_array_equal(seen[name], short[name])
    np.testing.assert_array_equal(seen.W, short.W)
    with pytest.raises(InvalidDataError, match="recorded"):
        ntp.trace_at(long, [0, 3, 2001])
    with pytest.raises(InvalidDataError, match="iterates"):
        ntp.trace_at(ntp.train(toy, opt, 10, W0=W0, lim=toy_limits), [0, 10])


def test_caption_geometry_of_the_toy_instance(toy, toy_limits):
    geometry = ntp.caption_geometry(toy, toy_limits.W_mm)
    assert geometry.w1_w5 < 1e-8  # forced by (6a) in d = 2
    assert geometry.in_cones
    v, j = geometry.single
    assert toy.support_mask[:, v].sum() == 1 and toy.support_mask[j, v]
    assert set(geometry.cones) == {v for v in range(toy.V) if toy.support_mask[:, v].sum() == 2}
    with pytest.raises(InvalidDataError, match=r"supports of Fig\. 1"):
        ntp.caption_geometry(ntp.synthetic_instance(seed=0), np.zeros((10, 60)))


def test_caption_draws_keep_the_separable_draws():
    seeds = range(1000, 1010)
    draws = ntp.caption_draws(seeds)
    assert len(draws) == sum(ntp.is_separable(ntp.toy2d_instance(s)) for s in seeds)
    assert all(g.in_cones for g in draws)


def test_free_rows_draws_w1_equals_w5_where_it_is_free(toy):
    gaps, free = ntp.free_rows_draws(toy, 3, 4, ntp.own_stream(0, 4))
    assert max(gaps) < 1e-6 and all(free)


def test_decoder_with_logits_reaches_every_logit_matrix(overparam_data):
    L = np.random.default_rng(7).standard_normal((overparam_data.m, overparam_data.V))
    W = ntp.decoder_with_logits(overparam_data, L)
    np.testing.assert_allclose(ntp.logits(overparam_data, W), L, atol=1e-9)
    with pytest.raises(InvalidDataError, match="shape"):
        ntp.decoder_with_logits(overparam_data, L.T)


def test_violations_vanish_at_the_solutions_only(overparam_data):
    assert ntp.compatibility_violation(overparam_data, ntp.finite_solution(overparam_data)) < 1e-9
    W_mm = ntp.ntp_svm(overparam_data)
    assert ntp.separability_violation(overparam_data, W_mm) < 1e-7
    zero = np.zeros((overparam_data.V, overparam_data.d))
    assert ntp.separability_violation(overparam_data, zero) == 1.0  # every margin 0


def _sweep():
    grid = [{"m": m, "d": d, "V": 5, "S": 2} for m in (10, 20) for d in (2, 4, 6)]
    results = [
        [{"compatible": (i + t) % 2 == 0, "separable": t < i} for t in range(4)] for i in range(len(grid))
    ]
    return grid, results


def test_condition_curve_counts_the_matching_points():
    grid, results = _sweep()
    c = ntp.condition_curve(grid, results, m=20)
    np.testing.assert_allclose(c.x, [0.1, 0.2, 0.3])
    assert c.n_trials == 4
    np.testing.assert_array_equal(c.separable, [3, 4, 4])
    np.testing.assert_array_equal(c.fraction("compatible"), [0.5, 0.5, 0.5])
    assert ntp.condition_curve(grid, results).x.size == len(grid)
    with pytest.raises(InvalidDataError, match="no grid point"):
        ntp.condition_curve(grid, results, V=7)
    with pytest.raises(InvalidDataError, match="unknown condition"):
        c.fraction("both")


def test_count_below_threshold_reads_the_curve():
    c = ntp.ConditionCurve(
        x=np.arange(1, 7) / 10, n_trials=5, compatible=np.array([0, 0, 2, 4, 5, 5]), separable=np.zeros(6)
    )
    row = ntp.count_below_threshold(c, 10, 5, 2)  # d_count = ceil(10 * 1 / 4) = 3
    assert (row.d_count, row.below_max, row.at_count, row.all_from) == (3, 0, 2, 5)


def _nested(first_comp, first_sep):
    return [
        NestedTrial(c, s, n_eq=0, rank_bound=(), compatible={}, separable={}, rank={})
        for c, s in zip(first_comp, first_sep, strict=True)
    ]


def test_nested_curve_counts_the_draws_whose_threshold_is_reached():
    c = ntp.nested_curve((2, 4, 6, 8), 8, _nested([0, 1, 4, 2], [2, 3, 3, 4]))
    np.testing.assert_allclose(c.x, [0.25, 0.5, 0.75, 1.0])
    assert c.n_trials == 4
    np.testing.assert_array_equal(c.compatible, [1, 2, 3, 3])
    np.testing.assert_array_equal(c.separable, [0, 0, 1, 3])
    with pytest.raises(InvalidDataError, match="first indices of separable"):
        ntp.nested_curve((2, 4), 8, _nested([0], [3]))
    with pytest.raises(InvalidDataError, match="at least one trial"):
        ntp.nested_curve((2, 4), 8, [])


def test_crossing_point_is_the_grid_point_nearest_one_half():
    def curve(fractions):
        counts = np.round(np.array(fractions) * 10).astype(int)
        return ntp.ConditionCurve(
            x=np.arange(1, len(counts) + 1) / 10, n_trials=10, compatible=counts, separable=counts
        )

    assert ntp.crossing_point(curve([0.0, 0.3, 0.6, 1.0]), "separable") == 2
    assert ntp.crossing_point(curve([0.0, 0.4, 0.8, 1.0]), "separable") == 1
    assert ntp.crossing_point(curve([0.0, 0.3, 0.7, 1.0]), "separable") == 2  # a tie: the later one
    assert ntp.crossing_point(curve([0.6, 1.0]), "compatible") == 0
    assert ntp.crossing_point(curve([0.0, 0.2]), "compatible") is None
    with pytest.raises(InvalidDataError, match="unknown condition"):
        ntp.crossing_point(curve([0.0, 1.0]), "both")


NESTED_POINTS = [
    {"m": 12, "V": 5, "S": 2, "d": tuple(range(1, 15))},
    {"m": 10, "V": 2, "S": 1, "d": tuple(range(1, 11))},
]


def test_nested_sweep_is_the_plain_sweep_in_fewer_decisions():
    plain = run_sweep(nested_trial, NESTED_POINTS, 9, seed=4)
    fast = ntp.nested_sweep(NESTED_POINTS, 9, seed=4, n_pilot=3)
    for per_plain, per_fast in zip(plain, fast, strict=True):
        assert [(t.compatible_from, t.separable_from) for t in per_fast] == [
            (t.compatible_from, t.separable_from) for t in per_plain
        ]
        assert [t.rank_bound for t in per_fast] == [t.rank_bound for t in per_plain]
    # thresholds within a grid point or two of each other: searches from the pilot's median are short
    point = [{"m": 24, "V": 6, "S": 2, "d": tuple(range(1, 29))}]
    by_bisection, by_guess = (
        run_sweep(nested_trial, point, 12, seed=2)[0],
        ntp.nested_sweep(point, 12, seed=2)[0],
    )
    assert [t.separable_from for t in by_guess] == [t.separable_from for t in by_bisection]
    assert sum(len(t.separable) for t in by_guess) < 0.8 * sum(len(t.separable) for t in by_bisection)
    # fewer draws than the pilot: the pilot is all there is, with the same draws
    few = ntp.nested_sweep(NESTED_POINTS, 2, seed=4, n_pilot=3)
    assert [t.separable_from for t in few[0]] == [t.separable_from for t in plain[0][:2]]


def test_nested_sweep_does_not_depend_on_the_workers():
    serial = ntp.nested_sweep(NESTED_POINTS, 6, seed=1, n_pilot=2)
    with joblib.parallel_config(backend="loky", n_jobs=2):
        parallel = ntp.nested_sweep(NESTED_POINTS, 6, seed=1, n_pilot=2)
    assert parallel == serial  # every decision, not only the thresholds


def test_find_instance_gives_the_wanted_conditions():
    rng = np.random.default_rng(8)
    data = ntp.find_instance(12, 2, False, False, rng)
    assert not ntp.is_compatible(data) and not ntp.is_separable(data)
    tied = ntp.find_instance(12, 9, False, True, rng, tie=True)
    assert not ntp.is_compatible(tied) and ntp.is_separable(tied)
    np.testing.assert_array_equal(tied.H[1::2], tied.H[0::2])
    with pytest.raises(GenerationError, match="no instance"):
        ntp.find_instance(6, 12, True, False, rng, tries=3)  # d > m: always separable


def test_gd_loss_curve_is_plain_gradient_descent(toy):
    curve = ntp.gd_loss_curve(toy, 50, [1, 10, 50])
    W = np.zeros((toy.V, toy.d))
    expected = []
    for k in range(1, 51):
        W = W - ntp.ce_grad(toy, W)
        if k in (1, 10, 50):
            expected.append(ntp.ce_loss(toy, W))
    # the compiled steps sum in another order than ce_grad: the same values to rounding
    np.testing.assert_allclose(curve, expected, rtol=1e-13, atol=0)
    assert np.all(np.diff(curve) < 0)


def test_autoregressive_pairs_have_the_loss_and_gradient_of_the_distinct_contexts():
    windows = ntp.sliding_windows([0, 1, 2, 1, 0, 2, 2, 1, 0, 1], 4)
    contexts = ntp.prefix_contexts(windows, 3)
    H = ntp.random_context_embeddings(contexts.m, 5, np.random.default_rng(9))
    pairs = ntp.autoregressive_pairs(windows, contexts, H)
    assert pairs.m == len(windows) * 3
    W = np.random.default_rng(10).standard_normal((3, 5))
    distinct = contexts.ntp_data(H)
    assert ntp.ce_loss(pairs, W) == pytest.approx(ntp.ce_loss(distinct, W), abs=1e-12)
    np.testing.assert_allclose(ntp.ce_grad(pairs, W), ntp.ce_grad(distinct, W), atol=1e-12)
    with pytest.raises(InvalidDataError, match="one row per distinct context"):
        ntp.autoregressive_pairs(windows, contexts, H[:-1])


def test_timed_separability_logs_every_decision(overparam_data):
    decide = ntp.TimedSeparability()
    assert decide(overparam_data) is ntp.is_separable(overparam_data) is True
    (entry,) = decide.log
    assert (entry.m, entry.d, entry.separable) == (overparam_data.m, overparam_data.d, True)
    assert entry.seconds >= 0 and entry.certificate >= settings.SEP_MARGIN_TOL


def _joint_text(n_chars: int, d: int) -> ntp.NTPData:
    ids = ntp.encode_text(ntp.stdlib_corpus(n_chars))
    joint = ntp.prefix_contexts(ntp.sliding_windows(ids.tolist(), 7), 27)
    return ntp.joint_ntp_data(joint, d, 0)


@pytest.mark.parametrize("d", [8, 40])
def test_timed_separability_by_newton_and_by_the_lp_agree_with_their_certificates(d):
    data = _joint_text(20, d)
    newton, lp = ntp.TimedSeparability(), ntp.TimedSeparability("lp")
    assert newton(data) is lp(data)
    for entry in (*newton.log, *lp.log):
        if entry.separable:
            assert entry.certificate >= settings.SEP_MARGIN_TOL
        else:
            assert entry.certificate <= settings.SEP_MARGIN_TOL
    assert newton.log[0].iterations > 0 and lp.log[0].iterations == 0
    with pytest.raises(InvalidDataError, match="method must be one of"):
        ntp.TimedSeparability("simplex")


def test_when_the_newton_continuation_ends_undecided_the_lp_decides(monkeypatch):
    from ntpnb.errors import SolverError
    from ntpnb.linear.experiments import text

    decide_separability = text.decide_separability

    def undecided(data, method="auto"):
        if method == "newton":
            raise SolverError("could not decide")
        return decide_separability(data, method)

    monkeypatch.setattr(text, "decide_separability", undecided)
    data = _joint_text(20, 8)
    decide = ntp.TimedSeparability()
    assert decide(data) is ntp.is_separable(data, method="lp") is False
    (entry,) = decide.log
    assert entry.method.endswith("after the Newton continuation ended undecided")
    assert entry.certificate <= settings.SEP_MARGIN_TOL and entry.iterations == 0


def test_a_certificate_found_on_some_contexts_holds_for_all_of_them():
    data = _joint_text(20, 5)
    longest = np.flatnonzero(np.arange(data.m) >= data.m // 2)
    cert = ntp.certify_on_contexts(data, longest)
    assert cert is not None and cert.bound <= settings.SEP_MARGIN_TOL
    np.testing.assert_array_equal(cert.contexts, longest)
    assert not ntp.is_separable(data, method="lp")
    # two contexts alone are separable at d = 5: nothing follows for the whole problem
    assert ntp.certify_on_contexts(data, np.array([0, 1])) is None
    for bad in (np.array([0, 0]), np.array([], dtype=int), np.array([0.0, 1.0]), np.array([data.m])):
        with pytest.raises(InvalidDataError, match="contexts must"):
            ntp.certify_on_contexts(data, bad)


def test_length_slice_keeps_the_joint_embeddings():
    windows = ntp.sliding_windows([0, 1, 2, 1, 0, 2, 2, 1, 0, 1, 1, 2], 4)
    joint = ntp.prefix_contexts(windows, 3)
    at = ntp.length_slice(joint, 2, seed=0)
    full = ntp.joint_ntp_data(joint, 6, 0)
    np.testing.assert_array_equal(at(6).H, full.H[joint.lengths == 2])
    assert at(6).m == joint.m_by_length()[2]


def test_rounding_spread_is_zero_for_gd_and_measures_the_one_ulp_run(toy):
    lim = ntp.limits(toy)
    W0 = ntp.lecun_decoder(toy, ntp.own_stream(0, 1))
    grid = np.union1d(optim.log_grid(2000, 20), [1000])
    for opt in (optim.gd(0.5), optim.adam(0.05, (0.9, 0.99))):
        ref = ntp.train(toy, opt, 2000, W0=W0, record_at=grid, lim=lim)
        spread = ntp.rounding_spread(toy, opt, W0, ref, 1000, lim)
        k = spread["k"]
        assert k[-1] == 1000 and np.array_equal(k, grid[grid <= 1000])
        moved = ntp.train(toy, opt, 1000, W0=np.nextafter(W0, np.inf), record_at=k, lim=lim)
        for name in SUMMARY_NAMES:
            expected = np.abs(moved[name] - ref[name][: k.size]) / np.abs(ref[name][: k.size])
            np.testing.assert_array_equal(spread[name], expected)
        if opt.name == "gd":  # a contraction: rounding stays rounding
            assert max(spread[name].max() for name in SUMMARY_NAMES) < 1e-12
    with pytest.raises(InvalidDataError, match="not recorded at horizon = 999"):
        ntp.rounding_spread(toy, optim.gd(0.5), W0, ref, 999, lim)


@pytest.mark.parametrize("steps", [[0, 5], [], [[1, 2]]])
def test_gd_loss_curve_names_steps_it_cannot_record(toy, steps):
    with pytest.raises(InvalidDataError, match="record_at"):
        ntp.gd_loss_curve(toy, 50, steps)
