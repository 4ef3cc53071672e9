"""The benchmarks' naive references compute what the package computes (no timing is asserted)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from benchmarks import attention
from ntpnb.attention import loss_and_grad, make_problem, stack_problems
from ntpnb.attention.model import gradient


@pytest.mark.parametrize("kind", list(attention.SIZES))
def test_naive_attention_loop_matches_batched_training(kind):
    problems = attention.trial_problems(kind, n_trials=3)
    naive = attention.naive_train(problems, attention.LR, 150)
    batched = attention.batched_train(problems, attention.LR, 150)
    assert naive.shape == batched.shape == (3, 8, 8)
    assert np.max(np.abs(naive - batched)) <= attention.MAX_REL_DIFF * np.max(np.abs(batched))


def test_the_rounding_floor_is_rounding_at_a_short_horizon():
    problems = attention.trial_problems("general", n_trials=3)
    W = attention.batched_train(problems, attention.LR, 150)
    assert attention.rounding_floor(problems, attention.LR, 150, W) < 1e-12


def test_naive_attention_loop_is_not_trivially_equal():
    problems = attention.trial_problems("acyclic", n_trials=2)
    short = attention.naive_train(problems, attention.LR, 10)
    assert not np.allclose(short, attention.batched_train(problems, attention.LR, 20))


def test_measure_reports_both_times_and_the_difference():
    row = attention.measure("general", n_trials=2, n_iter=20)
    assert row.naive_seconds > 0 and row.batched_seconds > 0
    assert row.speedup == row.naive_seconds / row.batched_seconds
    assert 0 <= row.rel_diff <= attention.MAX_REL_DIFF
    assert 0 <= row.floor <= attention.MAX_REL_DIFF  # 20 steps: rounding is not amplified yet
    assert "| general (K = 6" in attention.format_attention([row])


@pytest.mark.parametrize(("loss", "head"), [("log", "identity"), ("squared", "argmax"), ("ce", "argmax")])
def test_gradient_is_the_gradient_of_loss_and_grad(loss, head):
    from ntpnb.attention import identity_head, tied_head
    from ntpnb.attention.experiments import _trial_data

    rng = np.random.default_rng(3)
    probs = []
    for _ in range(3):
        E, data = _trial_data("general", K=6, d=8, n=6, T=4, rng=rng, max_redraws=100)
        C = identity_head(E) if head == "identity" else tied_head(E)
        probs.append(make_problem(E, C, data, loss, head))
    prob = stack_problems(probs)
    W = rng.standard_normal((prob.B, prob.d, prob.d))
    assert np.array_equal(gradient(W, prob), loss_and_grad(W, prob)[1])


def test_every_svm_formulation_finds_the_fast_solvers_optimum():
    from benchmarks.instances import gaussian_instance
    from benchmarks.methods import FAST, SVM_METHODS

    data = gaussian_instance(20, 5, 25, 3)
    ref = SVM_METHODS[FAST](data)
    for name, method in SVM_METHODS.items():
        W = method(data)
        assert np.linalg.norm(W - ref) <= 1e-6 * np.linalg.norm(ref), name


def test_the_aux_formulation_has_one_constraint_row_per_context_and_token():
    from benchmarks.instances import gaussian_instance
    from benchmarks.methods import _context_rows, _logit_rows

    data = gaussian_instance(6, 4, 7, 2)
    pairs = np.nonzero(data.support_mask)
    rows = _logit_rows(data, pairs).toarray()
    W = np.random.default_rng(0).standard_normal((data.V, data.d))
    assert np.allclose(rows @ W.ravel(), (data.H @ W.T)[pairs])
    assert np.array_equal(_context_rows(pairs[0], data.m).toarray().argmax(axis=1), pairs[0])


def _tiny_bench(**kw):
    from benchmarks.run import Benchmark

    return Benchmark(
        "toy",
        {"only": lambda x: np.array([x])},
        lambda a, b, c, d: float(a),
        lambda s, x: s[0],
        "count",
        **kw,
    )


def test_a_size_predicted_over_the_budget_is_skipped_and_named():
    from benchmarks.run import format_table, run_table

    bench = _tiny_bench(copy=lambda x: x, fit_kind=lambda s: True, certify=lambda a: f"value {a[0]:g}")
    table = run_table(bench, [(1, 0, 0, 0), (2, 0, 0, 0)], budget=0.0)
    first, second = table.measurements
    assert first.seconds is not None and first.certificate == "value 1"
    assert second.seconds is None and second.note.startswith("skipped: predicted")
    text = format_table(table, fit_kind=bench.fit_kind)
    assert "| (2, 0, 0, 0) | 2 | skipped |  |" in text
    assert "largest size only solved within 0 s: none" in text  # the first took more than 0 s


@pytest.mark.parametrize("which", ["PATH", "GRAPH_SVM", "CYCLIC"])
def test_the_path_and_attention_svm_tables_certify_each_answer(which):
    from benchmarks import run

    bench = getattr(run, which)
    size = (20, 5, 25, 3) if which == "PATH" else (8, 12, 12, 5)
    table = run.run_table(bench, [size], budget=60.0)
    (meas,) = table.measurements
    assert meas.seconds is not None and meas.certificate
    assert "FAILS" not in meas.certificate
    text = run.format_table(table, fit_kind=bench.fit_kind)
    assert f"| {size} |" in text and "largest size" in text and "certificate" in text


def test_time_notebooks_forces_every_profile_into_a_temporary_tree(monkeypatch, tmp_path):
    import ntpnb.runner
    from benchmarks import run
    from ntpnb.chapter.paths import output_layout
    from ntpnb.runner import PROFILE_NAMES, RunResult
    from ntpnb.runner.timings import record_timings

    calls = []

    def fake_reproduce(root, profile, output_dir, jobs, force, log):
        calls.append((profile, jobs, force, output_dir))
        results = [RunResult("01_x", True, 2.0, tmp_path / "x.ipynb")]
        record_timings(output_layout(output_dir), profile, results, jobs)
        return results

    monkeypatch.setattr(ntpnb.runner, "reproduce", fake_reproduce)
    timings, wall = run.time_notebooks(tmp_path, jobs=2)
    assert [c[0] for c in calls] == list(PROFILE_NAMES) and all(c[1:3] == (2, True) for c in calls)
    assert set(wall) == set(PROFILE_NAMES) and all(w >= 0 for w in wall.values())
    assert {p: timings[p]["01_x"]["seconds"] for p in PROFILE_NAMES} == dict.fromkeys(PROFILE_NAMES, 2.0)
    assert not any(Path(c[3]).exists() for c in calls)  # the temporary tree is gone


def _power_law_table(a: float, c: float):
    from benchmarks.run import Measurement, Table

    table = Table("toy", ["only"], budget=100.0)
    for n in (10, 20, 40, 80):
        table.measurements.append(Measurement("only", (n, 0, n + 1, 0), n, seconds=c * n**a))
    table.measurements.append(Measurement("only", (5, 0, 6, 0), 5, seconds=1e-3))  # below the fit's floor
    return table


def test_power_law_fit_recovers_the_exponent_and_the_constant():
    from benchmarks.run import power_law_fit, scaling_exponent

    table = _power_law_table(2.5, 0.01)
    a, log_c = power_law_fit(table, "only")
    assert a == pytest.approx(2.5, abs=1e-12) and np.exp(log_c) == pytest.approx(0.01, rel=1e-10)
    assert scaling_exponent(table, "only") == a
    assert power_law_fit(table, "only", fit_kind=lambda size: size[0] == 10) is None  # one point


def test_the_scaling_figure_is_written_where_the_page_links_it(tmp_path):
    from benchmarks import plots
    from benchmarks.run import power_law_fit

    table = _power_law_table(1.5, 0.02)
    png = plots.write_scaling_figure(table, lambda size: True, power_law_fit, tmp_path)
    assert png == tmp_path / "scaling_toy.png" and png.stat().st_size > 0
    assert (tmp_path / "scaling_toy.pdf").is_file()
    assert plots.figure_stem("Cyclic correction W^cyc") == "scaling_cyclic_correction_w_cyc"


def test_the_joint_problem_table_solves_a_prefix_and_skips_one_predicted_over_the_limit():
    from benchmarks import joint

    rows = joint.run_prefixes([20, 5000], budget=60.0)
    solved, skipped = rows
    assert solved.m > 0 and solved.compatible and solved.d_joint > solved.d_slices
    assert solved.certificate.startswith("passes:") and solved.method == "newton"
    assert solved.decide_seconds <= solved.total_seconds and solved.peak_mib > 0
    assert solved.most_steps > 0
    assert skipped.m == 0 and skipped.note.startswith("skipped: predicted")
    lp = joint.run_prefixes([20], budget=60.0, method="lp")
    assert (lp[0].d_slices, lp[0].d_joint) == (solved.d_slices, solved.d_joint)  # the same thresholds
    text = joint.format_joint([*rows, *lp], budget=60.0)
    assert "Largest prefix solved within 60 s of CPU time with the newton decider: 20 characters" in text
    assert "with the lp decider: 20 characters" in text
    assert "| 5000 | newton | skipped" in text
    assert joint.largest_within(rows, budget=0.0) is None


def test_the_joint_problem_at_scale_times_each_step_alone():
    from benchmarks import joint

    rows = [joint.measure_scale_step(200, step) for step in joint.SCALE_STEPS]
    by_step = {r.step: r for r in rows}
    assert by_step["W*"].answer == "compatible: True"
    assert by_step["not separable"].answer.startswith("certified on")
    assert by_step["separable"].answer.startswith("separable")
    assert by_step["W^mm"].answer.startswith("passes")
    assert all(r.m == 764 and r.seconds >= 0 for r in rows)
    failed = joint.measure_in_subprocess("measure_scale_step", 60.0, 200, "no such step")
    assert failed.m == 0 and failed.note.startswith("failed:")
    assert "| 200 | 764 | W* |" in joint.format_scale([*rows, failed])
