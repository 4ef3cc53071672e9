"""Paper A's experiments: the phase diagram's decisions, curves and instances
(ntpnb.linear.experiments._phase_diagram).
"""

from __future__ import annotations

import joblib
import numpy as np
import pytest
import scipy

import ntpnb as ntp
from ntpnb._parallel import run_sweep
from ntpnb.errors import GenerationError, InvalidDataError
from ntpnb.linear._condition_thresholds import NestedTrial, nested_trial
from ntpnb.linear.experiments._phase_diagram import crossing_point
from ntpnb.statistics import sample_of


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


def test_condition_curve_fraction():
    c = ntp.ConditionCurve(
        x=np.array([0.1, 0.2]), n_trials=4, compatible=np.array([2, 4]), separable=np.zeros(2)
    )
    np.testing.assert_array_equal(c.fraction("compatible"), [0.5, 1.0])
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

    assert crossing_point(curve([0.0, 0.3, 0.6, 1.0]), "separable") == 2
    assert crossing_point(curve([0.0, 0.4, 0.8, 1.0]), "separable") == 1
    assert crossing_point(curve([0.0, 0.3, 0.7, 1.0]), "separable") == 2  # a tie: the later one
    assert crossing_point(curve([0.6, 1.0]), "compatible") == 0
    assert crossing_point(curve([0.0, 0.2]), "compatible") is None
    with pytest.raises(InvalidDataError, match="unknown condition"):
        crossing_point(curve([0.0, 1.0]), "both")


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


COMPARED = [  # the chapter's kinds of configuration: one-hot, and with equations
    {"m": 12, "V": V, "S": S, "d": tuple(range(1, 15))} for V, S in [(2, 1), (5, 1), (5, 2), (10, 3)]
]


def _pooled_p(comparisons, condition):
    return sample_of("pvalue", [p for c in comparisons for p in c.pvalues(condition)]).statistic(0.0)[0]


def test_nested_vs_independent_accepts_the_same_design_and_rejects_one_a_dimension_off():
    """Real draws, pooled over two seeds as the chapter pools its sweep's seeds, at 0.01 / 2 per condition."""
    nested = [ntp.nested_sweep(COMPARED, 30, seed=s) for s in (0, 1)]
    curves = [
        [ntp.nested_curve(p["d"], p["m"], per) for p, per in zip(COMPARED, n, strict=True)] for n in nested
    ]

    def compared(offset):
        return [
            ntp.nested_vs_independent(COMPARED, c, 30, seed=6 + s, offset=offset)
            for s, c in enumerate(curves)
        ]

    same, above, below = compared(0), compared(1), compared(-1)
    row = same[0].rows[0]
    assert (row.V, row.S, row.condition, row.n) == (2, 1, "separable", 30)
    assert row.d == COMPARED[0]["d"][row.index] and row.nested == curves[0][0].separable[row.index]
    assert [(r.V, r.S, r.condition) for r in same[0].rows] == [
        (2, 1, "separable"), (5, 1, "separable"), (5, 2, "compatible"), (5, 2, "separable"),
        (10, 3, "compatible"), (10, 3, "separable"),
    ]  # fmt: skip
    assert [r.d + 1 for r in same[0].rows] == [r.d for r in above[0].rows]
    for condition in ("compatible", "separable"):
        assert _pooled_p(same, condition) > 0.005
        assert _pooled_p(above, condition) < 0.005  # drawn one dimension higher: found
        assert _pooled_p(below, condition) < 0.005
    with pytest.raises(InvalidDataError, match="unknown condition"):
        same[0].pvalues("both")
    with pytest.raises(InvalidDataError, match="offset -20 takes d"):
        ntp.nested_vs_independent(COMPARED, curves[0], 30, offset=-20)
    with pytest.raises(InvalidDataError, match="n_draws = 10, but a nested curve has 30 draws"):
        ntp.nested_vs_independent(COMPARED, curves[0], 10)
    with pytest.raises(InvalidDataError, match="4 points but 3 curves"):
        ntp.nested_vs_independent(COMPARED, curves[0][:3], 30)


def _rejected_sweeps(shift: float, sweeps: int = 400) -> int:
    """Simulated sweeps (9 configurations x 5 seeds per condition) in which the comparison rejects.

    Thresholds drawn from one law (a gradual curve, as separability's, and a jump within a grid
    step, as compatibility's); the comparison point chosen from the nested curve as the chapter
    does (:func:`crossing_point`); the independent count binomial at that point, from the law
    moved ``shift`` grid steps (0: the same design). A sweep rejects when a condition's
    Fisher-combined p falls to 0.01 / 2.
    """
    rng = np.random.default_rng(3)
    tests, n, grid = 45, 30, 36
    laws = {"separable": (15.0, 2.5), "compatible": (8.0, 0.4)}  # (centre, spread) in grid steps
    p_table = {}  # Fisher's exact p of (nested count, independent count), as the comparison computes it
    rejected = np.zeros(sweeps, dtype=bool)
    for key, (centre, spread) in laws.items():
        # P(independent threshold <= i), of a normal threshold rounded to the grid, moved by shift
        cdf = scipy.stats.norm.cdf((np.arange(grid) + 0.5 + shift - centre) / spread)
        first = np.round(rng.normal(centre, spread, size=(sweeps, tests, n)))
        counts = (first[..., None] <= np.arange(grid)).sum(axis=2)  # (sweeps, tests, grid)
        for sweep in range(sweeps):
            p = []
            for c in counts[sweep]:
                curve = ntp.ConditionCurve(
                    x=np.arange(1, grid + 1) / grid, n_trials=n, compatible=c, separable=c
                )
                i = crossing_point(curve, key)
                k = (int(c[i]), int(rng.binomial(n, cdf[i])))
                if k not in p_table:
                    p_table[k] = ntp.DesignComparison(2, 1, key, i, i + 1, *k, n).pvalue
                p.append(p_table[k])
            rejected[sweep] |= sample_of("pvalue", p).statistic(0.0)[0] <= 0.005
    return int(rejected.sum())


def test_nested_vs_independent_errs_at_most_at_its_level_and_finds_half_a_dimension():
    """The chapter's decision, simulated with the selection of the point: its error rate and its power.

    Under the null it must reject in at most 1% of sweeps, the stated family-wise rate (Fisher's
    exact test is conservative: far fewer); with the independent draws half a grid step off,
    in at least 90% of them.
    """
    assert _rejected_sweeps(0.0) <= 0.01 * 400
    assert _rejected_sweeps(0.5) >= 0.9 * 400
