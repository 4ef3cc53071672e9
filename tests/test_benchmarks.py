"""The benchmarks' naive references compute what the package computes (no timing is asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks import attention


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
    from benchmarks.timing import Benchmark

    return Benchmark(
        "toy",
        {"only": lambda x: np.array([x])},
        lambda a, b, c, d: float(a),
        lambda s, x: s[0],
        "count",
        **kw,
    )


def test_a_size_predicted_over_the_budget_is_skipped_and_named():
    from benchmarks.tables import format_table
    from benchmarks.timing import run_table

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
    from benchmarks import solvers
    from benchmarks.tables import format_table
    from benchmarks.timing import run_table

    bench = getattr(solvers, which)
    size = (20, 5, 25, 3) if which == "PATH" else (8, 12, 12, 5)
    table = run_table(bench, [size], budget=60.0)
    (meas,) = table.measurements
    assert meas.seconds is not None and meas.certificate
    assert "FAILS" not in meas.certificate
    text = format_table(table, fit_kind=bench.fit_kind)
    assert f"| {size} |" in text and "largest size" in text and "certificate" in text


def _fake_reproduce(calls, tmp_path, seconds):
    """A stand-in for ``ntpnb.runner.reproduce`` that records its calls and the CPUs it could use."""
    from ntpnb.records._places import output_tree
    from ntpnb.records._timings import record_timings
    from ntpnb.runner import ChapterRun

    def fake(root, names, profile, output_dir, jobs, force, log, seeds):
        cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        calls.append(
            dict(profile=profile, jobs=jobs, force=force, out=output_dir, cpus=cpus, seeds=seeds, names=names)
        )
        # a kernel's work: CPU time in a child process, which the one-core runs measure
        subprocess.run([sys.executable, "-c", "sum(range(2 * 10**7))"], check=True)
        ran = ChapterRun("01_x", complete=True, seconds=seconds[profile, jobs], executed=tmp_path / "x.ipynb")
        results = [ran]
        record_timings(output_tree(output_dir), profile, results, jobs)
        return results

    return fake


def test_time_notebooks_runs_each_profile_on_one_core_then_the_paper_run_with_jobs(
    monkeypatch, tmp_path, capsys
):
    import ntpnb.runner
    from benchmarks import notebooks

    calls = []
    seconds = {("paper", 1): 40.0, ("quick", 1): 3.0, ("paper", 2): 30.0}
    monkeypatch.setattr(ntpnb.runner, "reproduce", _fake_reproduce(calls, tmp_path, seconds))
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "01_x.md").write_text("")
    before = notebooks.allowed_cpus()
    times = notebooks.time_notebooks(tmp_path, jobs=2)
    assert [(c["profile"], c["jobs"], c["force"], c["seeds"], c["names"]) for c in calls] == [
        ("paper", 1, True, 1, ["01_x"]),  # one chapter a run: its CPU time is its own
        ("quick", 1, True, 1, ["01_x"]),
        ("paper", 2, True, notebooks.RUN_SEEDS, ()),
    ]
    assert all(times.one_core[p]["01_x"]["cpu"] > 0.05 for p in ("paper", "quick"))  # the child's
    assert {p: times.one_core[p]["01_x"]["seconds"] for p in ("paper", "quick")} == {
        "paper": 40.0,
        "quick": 3.0,
    }
    assert times.run["01_x"]["seconds"] == 30.0 and times.jobs == 2 and times.run_wall >= 0
    assert len({c["out"] for c in calls}) == 3  # a tree each: a tree holds one setting (profile, -p)
    assert "FAILED" not in capsys.readouterr().out  # every fake run completed
    assert not any(Path(c["out"]).exists() for c in calls)  # the temporary trees are gone
    if notebooks.can_pin():
        assert calls[0]["cpus"] == calls[1]["cpus"] == [times.cpu]  # one CPU for the one-core runs
        assert calls[2]["cpus"] == sorted(before) == times.run_cpus  # all of them for the two-job run
    assert notebooks.allowed_cpus() == before
    # the one-core times are the benchmark record ntpnb list shows, with the load they ran under
    from ntpnb.records._timings import load_chapter_times

    notebooks.refresh_chapter_times(tmp_path, times.one_core, times.loads)
    record = load_chapter_times(tmp_path)
    for profile, wall in (("paper", 40.0), ("quick", 3.0)):  # the wall time kept, the CPU time expected
        assert record.chapters["01_x"][profile]["seconds"] == wall
        assert record.seconds("01_x", profile) == round(times.one_core[profile]["01_x"]["cpu"], 1)
    assert set(record.load) == {"paper", "quick"}


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this platform")
def test_pinning_to_one_cpu_reaches_children_and_is_restored_even_on_error():
    import subprocess
    import sys

    from benchmarks import notebooks

    before = os.sched_getaffinity(0)
    cpu = min(before)
    with notebooks.pinned_to([cpu]) as cpus:
        assert cpus == {cpu} and os.sched_getaffinity(0) == {cpu}
        child = subprocess.run(
            [sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"],
            capture_output=True,
            text=True,
            check=True,
        )
        assert child.stdout.strip() == f"[{cpu}]"
    assert os.sched_getaffinity(0) == before
    with pytest.raises(RuntimeError, match="inside"):
        with notebooks.one_core() as pinned:
            assert pinned == cpu and os.sched_getaffinity(0) == {cpu}
            raise RuntimeError("inside")
    assert os.sched_getaffinity(0) == before
    with pytest.raises(ValueError, match="at least one CPU"):
        with notebooks.pinned_to([]):
            pass


def _notebook_times(paper: dict[str, float], run_wall: float, failed: str = ""):
    from benchmarks.notebooks import NotebookTimes

    def rec(s, name, jobs):
        return {"seconds": s, "jobs": jobs, "date": "2026-01-01 00:00 UTC", "ok": name != failed}

    one = {
        "paper": {n: rec(s, n, 1) for n, s in paper.items()},
        "quick": {n: rec(s / 10, n, 1) for n, s in paper.items()},
    }
    run = {n: rec(s / 2, n, 2) for n, s in paper.items()}
    walls = {"paper": sum(paper.values()) + 1, "quick": 9.0}
    loads = {"paper, one core": [1.5, 1.0, 0.5]}
    return NotebookTimes(one, walls, 0, 2, run, run_wall, [0, 1], loads, 5, 4 * sum(paper.values()))


def test_the_chapter_table_says_which_targets_are_met():
    from benchmarks import notebooks

    times = _notebook_times({"01_a": 10.0, "02_b": 50.0}, run_wall=155.0)
    text = notebooks.format_notebook_times(times)
    assert "| chapter | paper (one core, CPU 0) | quick (one core) | target (paper) | met |" in text
    assert "| 01_a | 10.0 s | 1.0 s | < 45 s | yes |" in text
    assert "| 02_b | 50.0 s | 5.0 s | < 45 s | no |" in text
    assert "| sum of the chapters | 60.0 s | 6.0 s |  |  |" in text
    assert "| **paper run, 5 seeds, `--jobs 2` on 2 cores (wall)** | 155.0 s |  | < 180 s | yes |" in text
    assert "| notebook time of that run, every seed | 240.0 s |  |  |  |" in text
    assert "at the paper profile: no (02_b)" in text and "`--jobs 2` under 180 s: yes." in text
    assert "paper, one core: 1.5, 1, 0.5" in text
    assert notebooks.targets_met(times) == (False, True)
    fast = _notebook_times({"01_a": 10.0, "02_b": 20.0}, run_wall=181.0)
    assert notebooks.targets_met(fast) == (True, False)
    assert "| < 180 s | no |" in notebooks.format_notebook_times(fast)
    failed = _notebook_times({"01_a": 10.0}, run_wall=5.0, failed="01_a")
    assert notebooks.targets_met(failed) == (False, False)
    assert "| 01_a | 10.0 s (FAILED) | 1.0 s (FAILED) | < 45 s | no (failed) |" in (
        notebooks.format_notebook_times(failed)
    )


def _power_law_table(a: float, c: float):
    from benchmarks.scaling import Measurement, Table

    table = Table("toy", ["only"], budget=100.0)
    for n in (10, 20, 40, 80):
        table.measurements.append(Measurement("only", (n, 0, n + 1, 0), n, seconds=c * n**a))
    table.measurements.append(Measurement("only", (5, 0, 6, 0), 5, seconds=1e-3))  # below the fit's floor
    return table


def test_power_law_fit_recovers_the_exponent_and_the_constant():
    from benchmarks.scaling import power_law_fit, scaling_exponent

    table = _power_law_table(2.5, 0.01)
    a, log_c = power_law_fit(table, "only")
    assert a == pytest.approx(2.5, abs=1e-12) and np.exp(log_c) == pytest.approx(0.01, rel=1e-10)
    assert scaling_exponent(table, "only") == a
    assert power_law_fit(table, "only", fit_kind=lambda size: size[0] == 10) is None  # one point


def test_the_scaling_figure_is_written_where_the_page_links_it(tmp_path):
    from benchmarks import plots
    from benchmarks.scaling import power_law_fit

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
    whole = joint.format_whole_corpus([*rows, failed], [], 7640)
    # each step scaled like m^3 to the whole corpus: ten times the contexts, a thousand times the time
    assert whole.startswith("The whole corpus has m = 7640") and "out of scope" in whole
    assert f"{by_step['W*'].seconds:.1f} s at m = 764, about {by_step['W*'].seconds * 1e3:.0e} s" in whole
    assert joint.format_whole_corpus([failed], [], 7640) == ""


def test_a_fit_needs_three_sizes_above_the_timing_floor_and_says_so():
    from benchmarks.scaling import (
        FIT_MIN_SECONDS,
        Measurement,
        Table,
        all_sizes,
        exponent_rows,
        format_exponent,
        format_exponent_summary,
        power_law_fit,
    )

    table = Table("toy", ["only"], count_label="iterations", fit_label="all sizes")
    for n in (100, 1000, 10_000):
        table.measurements.append(Measurement("only", (n,), n, seconds=2e-5 * n**1.5))  # 1e-2 s is below
    assert power_law_fit(table, "only", all_sizes) is None  # two sizes above the floor
    a, _ = power_law_fit(table, "only", all_sizes, min_points=2)
    assert a == pytest.approx(1.5, abs=1e-12)
    (row,) = exponent_rows(table, all_sizes)
    assert row.exponent is None and row.sizes == "2 (1,000 to 10,000)"
    assert format_exponent(None) == "n/a (fewer than 3 sizes)" and format_exponent(1.0049) == "1.00"
    table.measurements.append(Measurement("only", (30_000,), 30_000, seconds=2e-5 * 30_000**1.5))
    (row,) = exponent_rows(table, all_sizes)
    assert row.exponent == pytest.approx(1.5, abs=1e-12) and row.sizes == "3 (1,000 to 30,000)"
    text = format_exponent_summary([row])
    assert "| toy: only | iterations | 1.50 | 3 (1,000 to 30,000) |" in text
    assert all(m.seconds >= FIT_MIN_SECONDS for m in table.measurements[1:])


def test_every_solver_table_labels_its_exponent_with_its_count():
    from benchmarks.tables import format_table

    text = format_table(_power_law_table(2.0, 0.01))
    assert "fitted exponent a (time ~ (constraints (6b))^a; d > m, at least 3 sizes" in text
    (line,) = [line for line in text.splitlines() if line.startswith("| fitted exponent")]
    assert line.split("|")[3].strip() == "2.00"
    short = _power_law_table(2.0, 1e-4)  # only the largest two sizes reach the floor
    assert "n/a (fewer than 3 sizes)" in format_table(short)


def test_the_training_benchmark_times_both_papers_loops_at_tiny_sizes():
    from benchmarks import training
    from benchmarks.tables import format_training
    from benchmarks.timing import run_table
    from ntpnb import _optim as optim

    from helpers import gradient_fn

    sweeps = training.training_sizes(iterations=[5, 10], m=[4, 6], n=[4, 6])
    assert [b.count_label for b, _ in sweeps] == ["iterations", "m", "iterations", "samples n"]
    for bench, sizes in sweeps:
        table = run_table(bench, sizes, budget=60.0)
        assert len(table.measurements) == 2 * len(bench.methods)
        assert all(m.seconds is not None and m.seconds > 0 for m in table.measurements)
        assert [m.count for m in table.measurements[:: len(bench.methods)]] == [
            bench.count(s, None) for s in sizes
        ]
        text = format_training(table, bench.fit_kind)
        for name in bench.methods:
            assert f"| {name} |" in text and "n/a (fewer than 3 sizes)" in text
    # what is timed is the training: the GD row computes what the reference loop computes
    inst = training.decoder_instance(*training.decoder_size(7, 5))
    gd = optim.gd(training.CHAPTER_4["gd_lr"])
    ref = optim.run(gradient_fn(inst.data), inst.W0, gd, 7, record_at=np.array([7])).W
    assert np.allclose(training.DECODER_METHODS["GD"](inst), ref, rtol=1e-12, atol=1e-14)
    # and the attention rows run chapter 7's own trials at the size of Fig. 4
    att = training.attention_instance(
        *training.attention_iteration_size(12)[:1], 3, **attention.SIZES["general"]
    )
    (name,) = training.ATTENTION_METHODS
    W = training.ATTENTION_METHODS[name](att)
    assert np.array_equal(
        W, attention.batched_train(attention.trial_problems("general", 3), attention.LR, 12)
    )


def test_the_page_starts_with_the_machine_the_chapter_times_and_the_exponents():
    from benchmarks.machine import Machine
    from benchmarks.page import measured_page
    from benchmarks.record import Results
    from benchmarks.timing import Benchmark

    table = _power_law_table(2.0, 0.01)
    bench = Benchmark("toy", {"only": None}, None, None, "constraints (6b)")
    info = {
        "cpu": "Some CPU 9000",
        "cores": 2,
        "python": "CPython 3.x",
        "packages": {"numpy": "9.9", "numba": "0.1"},
        "threadpools": [
            {
                "user_api": "blas",
                "internal_api": "openblas",
                "version": "0.3",
                "architecture": "Zen",
                "num_threads": 1,
            }
        ],
    }
    machine = Machine(info, "2026-01-01 00:00 UTC", [1.0, 2.0, 3.0], [0.5, 0.5, 0.5])
    times = _notebook_times({"01_a": 10.0}, run_wall=20.0)
    res = Results([(bench, table)], [], [], [], [], [], times, None, 12.0, machine)
    page = measured_page(res, ["--x"])
    head = page.split("## How the solvers were timed")[0]
    for text in (
        "| date (start of the run) | 2026-01-01 00:00 UTC |",
        "| CPU | Some CPU 9000 |",
        "| cores | 2 |",
        "| BLAS | openblas 0.3, kernel Zen, 1 thread(s) |",
        "| numpy, numba | 9.9, 0.1 |",
        "| 1, 2, 3; 0.5, 0.5, 0.5 |",
        "| 01_a | 10.0 s | 1.0 s | < 45 s | yes |",
        "| toy: only | constraints (6b) (d > m) | 2.00 | 4 (10 to 80) |",
        "`python -m benchmarks --x`",
    ):
        assert text in head, text
    assert head.index("machine of this run") < head.index("## Chapter times") < head.index("## Fitted cost")
    assert "## Platform" in page and "Not measured in this run" in page


def test_each_method_is_warmed_up_once_before_the_first_timing():
    from benchmarks.timing import Benchmark, run_table

    calls = []

    def method(x):
        calls.append(x)
        return np.array([x])

    make, count = (lambda a, b, c, d: float(a)), (lambda s, x: s[0])
    bench = Benchmark(
        "toy", {"only": method}, make, count, "count", copy=lambda x: x, fit_kind=lambda s: True
    )
    run_table(bench, [(1, 0, 0, 0), (2, 0, 0, 0)], budget=60.0)
    assert calls == [1.0] * 4 + [2.0] * 3  # one untimed run, then the best of three at each size


def test_a_prefix_process_reports_its_own_peak_memory_not_its_parents():
    import subprocess
    import sys

    from benchmarks import joint

    held = np.ones(400 * 2**20 // 8)  # 400 MiB, touched: the parent's resident memory
    code = "from benchmarks.joint import _peak_mib; print(_peak_mib())"
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert float(out.stdout) < 300 < joint._peak_mib()
    del held


def test_the_default_sizes_shown_by_the_help_are_read_back_as_the_defaults():
    from benchmarks import options, solvers

    for sizes in (solvers.SVM_SIZES, solvers.LP_SIZES, solvers.PATH_SIZES, solvers.ATTENTION_SVM_SIZES):
        assert options.parse_sizes(options.format_sizes(sizes).split(), ()) == list(sizes)
    assert options.format_sizes([(20, 5, 25, 3), (50, 10, 60, 6)]) == "20,5,25,3 50,10,60,6"


def test_the_any_seed_table_reads_completions_stops_and_failed_checks_from_a_tree(tmp_path):
    """``python -m benchmarks.seeds --tree``: a run's tree at seeds 100-101, one stop, one failed check."""
    import json

    from benchmarks import seeds

    (tmp_path / "run.json").write_text(
        json.dumps({"seeds": [100, 101], "notebooks": ["05_a", "06_b"], "overrides": {"seed": "100"}})
    )

    def check(what: str, value: float, kind: str = "claim", sample: dict | None = None) -> dict:
        return {
            "claim": "A1",
            "what": what,
            "value": value,
            "relation": ">",
            "target": 0.0,
            "tol": 0.0,
            "passed": value > 0,
            "kind": kind,
            "measured": f"{value}",
            "sample": sample,
        }

    def record(name: str, *checks: dict) -> dict:
        return {"notebook": name, "profile": "paper", "checks": list(checks), "complete": True}

    passed, failed = check("x", 1.0), check("a check that failed", -1.0)
    # one seed's instance of a measurement over the seeds' instances: decided pooled, not alone
    alone = check("one instance", -1.0, "measurement", {"test": "instances", "values": [-1.0], "level": 0.01})
    records = {
        tmp_path: {
            "claims/05_a.json": record("05_a", passed, alone),
            "claims/06_b.json": record("06_b", passed),
        },
        tmp_path / "seeds" / "seed=101": {
            "claims/05_a.json": record("05_a", passed, failed, alone),
            "failed/06_b.json": {"error": "SolverError: the method did not converge\n in cell 33"},
        },
    }
    for root, files in records.items():
        for name, payload in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(json.dumps(payload))
    outcomes = seeds.outcomes_of_tree(tmp_path)
    assert [(o.chapter, o.seed, o.completed, o.ok) for o in outcomes] == [
        ("05_a", 100, True, True),
        ("06_b", 100, True, True),
        ("05_a", 101, True, False),
        ("06_b", 101, False, False),
    ]
    table = seeds.format_outcomes(outcomes)
    assert "| 05_a | 2 | 2 of 2 | 1 of 2 | none |" in table
    assert "| 06_b | 2 | 1 of 2 | 1 of 2 | 101 |" in table
    assert "- 06_b at seed 101: SolverError: the method did not converge in cell 33" in table
    assert "- 05_a at seed 101: checks failed: a check that failed" in table
    page = seeds.write_outcomes(outcomes, tmp_path / "out")
    assert page.read_text().startswith(f"# {seeds.TITLE}")
    assert len(json.loads((tmp_path / "out" / "any_seed.json").read_text())["outcomes"]) == 4


def test_the_any_seed_verdicts_stand_beside_the_books_and_count_the_agreements(tmp_path):
    """The verdicts pooled over the untuned seeds beside the book's run; a bad verdicts file is named."""
    import json

    from benchmarks import seeds

    qualified = "reproduced with a qualification (a stated limit of the evidence)"
    verdicts = {"A1": ("reproduced", "why A1"), "B2": (qualified, "why B2"), "B3": (qualified, "why B3")}
    book = tmp_path / "verdicts.json"
    claims = [
        {"id": "A1", "verdict": "reproduced", "kind": ""},
        {"id": "B2", "verdict": "reproduced with a qualification", "kind": "a stated limit of the evidence"},
        {"id": "B3", "verdict": "reproduced with a qualification", "kind": "an asymptotic statement checked"},
    ]
    book.write_text(json.dumps({"claims": claims}))
    table = seeds.format_verdicts(verdicts, seeds.book_verdicts(book), "100-119")
    assert "| A1 | reproduced | reproduced | why A1 |" in table
    assert f"| B2 | {qualified} | {qualified} | why B2 |" in table
    assert "| B3 | reproduced with a qualification (a stated limit" in table  # the same verdict, not kind
    assert "The same verdict and kind for 2 of 3 claims." in table
    alone = seeds.format_verdicts(verdicts, seeds.book_verdicts(tmp_path / "absent.json"), "100-119")
    assert "| claim | seeds 100-119 | why |" in alone and "the book's run" not in alone
    book.write_text('{"claims": [{"verdict": "reproduced"}]}')  # no id
    with pytest.raises(SystemExit, match=f"{book} is not the book's verdicts"):
        seeds.book_verdicts(book)


def test_structure_measures_code_lines_private_imports_and_unused_parameters(tmp_path):
    """benchmarks.structure on a tiny tree: docstrings, comments and blank lines are no code lines."""
    from benchmarks import structure

    (tmp_path / "ntpnb").mkdir()
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "ntpnb" / "cli").mkdir()  # the command line names it: a user's name
    (tmp_path / "ntpnb" / "cli" / "_main.py").write_text("from ..a import used\n")
    (tmp_path / "ntpnb" / "a.py").write_text(
        '"""Module."""\n\nfrom .b import _hidden\n\n\n'
        'def used(x, y, _z):\n    """Doc.\n\n    More doc.\n    """\n    # a comment\n\n    return x\n\n\n'
        "def unused():\n    pass\n"
    )
    (tmp_path / "ntpnb" / "b.py").write_text(
        "import importlib\n\nm = importlib.import_module('os')\n_hidden = 1\n"
    )
    (tmp_path / "ntpnb" / "__init__.py").write_text("")
    (tmp_path / "ntpnb" / "_c.py").write_text("def inside():\n    return 1\n")
    funcs = {f.name: f.code_lines for f in structure.functions(tmp_path)}
    assert funcs == {"used": 2, "unused": 2, "inside": 2}
    assert structure.private_imports(tmp_path) == ["ntpnb/a.py:3 _hidden"]
    assert structure.importlib_uses(tmp_path) == ["ntpnb/b.py:3"]
    assert structure.dead_parameters(tmp_path) == ["ntpnb/a.py:6 used(y)"]
    names, users = structure.public_names(tmp_path)
    # a private module's names are no public names; importing a private module is no private import
    assert names == ["ntpnb.a:unused:function", "ntpnb.a:used:function"]
    assert users == ["ntpnb.a:used:function"]


def test_structure_finds_modules_that_import_each_other_even_from_inside_a_function(tmp_path):
    from benchmarks import structure

    pkg = tmp_path / "ntpnb"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "settings.py").write_text("X = 1\n")
    (pkg / "sub" / "__init__.py").write_text("from ._low import f\n")
    (pkg / "sub" / "_low.py").write_text("from .. import settings\n\n\ndef f():\n    from ._high import g\n")
    (pkg / "sub" / "_high.py").write_text("from ._low import f\n")
    (pkg / "sub" / "_typed.py").write_text("from typing import TYPE_CHECKING\n")
    assert structure.import_cycles(tmp_path) == [["ntpnb/sub/_high.py", "ntpnb/sub/_low.py"]]
    (pkg / "sub" / "_low.py").write_text("from .. import settings\n\n\ndef f():\n    return settings.X\n")
    assert structure.import_cycles(tmp_path) == []
    # a loop through a TYPE_CHECKING import is a loop too
    (pkg / "sub" / "_typed.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from ._high import g\n"
    )
    (pkg / "sub" / "_high.py").write_text("from ._typed import TYPE_CHECKING\n")
    assert structure.import_cycles(tmp_path) == [["ntpnb/sub/_high.py", "ntpnb/sub/_typed.py"]]


def test_the_package_keeps_its_layering_rules():
    """CONTRIBUTING's rules on this checkout: no import loop, no private name imported across modules."""
    from benchmarks import structure

    root = Path(__file__).resolve().parents[1]
    assert structure.import_cycles(root) == []
    assert structure.private_imports(root) == []


def test_structure_counts_a_chapters_calls_into_the_science_and_the_machinery(tmp_path):
    from benchmarks import structure

    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "01_x.md").write_text(
        "---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n"
        "    format_version: 0.13\nkernelspec:\n  display_name: Python 3\n  language: python\n"
        "  name: python3\n---\n\n# X\n\n"
        "```{code-cell} ipython3\nimport numpy as np\nimport ntpnb as ntp\n"
        "from ntpnb import attention as att\nfrom ntpnb.chapter import ClaimLog, glue_number\n"
        "claims = ClaimLog('01_x', 'quick')\n```\n\n"
        "```{code-cell} ipython3\n---\ntags: [hide-input]\n---\n"
        "w = ntp.ntp_svm(att.trial_data(3))\nclaims.check('A1', 'x', np.max(w), '>', 0)\n"
        "glue_number('x', 1.0)\n```\n"
    )
    (calls,) = structure.notebook_calls(tmp_path)
    assert calls == structure.ChapterCalls("01_x", science=2, machinery=3, checks=1, glue=1)
    assert calls.machinery_share == 0.6  # numpy's call is neither


def test_a_time_on_a_page_has_at_most_four_significant_digits():
    from benchmarks.notebooks import format_seconds

    assert [format_seconds(t) for t in (12.34, 999.94, 999.96, 1315.8)] == [
        "12.3 s",
        "999.9 s",
        "1000 s",
        "1316 s",
    ]
