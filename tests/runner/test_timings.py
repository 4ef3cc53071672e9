"""The notebook reproduction times: ``timings.json`` and its table on the benchmarks page."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from benchmarks.page import (
    REPRODUCE_COMMAND,
    TIMINGS_TITLE,
    format_sweep_timings,
    format_timings,
    render_benchmarks_page,
)
from ntpnb.chapter import parameters as profiles
from ntpnb.chapter.claims import ChapterRecord
from ntpnb.chapter.layout import load_timings, output_layout
from ntpnb.chapter.outputs import RunRecord, write_run_record
from ntpnb.runner import choice
from ntpnb.runner import run as run_module
from ntpnb.runner.choice import record_timings, recorded_seconds
from ntpnb.runner.execute import RunResult
from ntpnb.runner.run import reproduce

from fake_notebooks import fake_notebook

WHEN = datetime(2026, 1, 2, 3, 4, tzinfo=timezone.utc)


def result(name: str, seconds: float, ok: bool = True, cached: bool = False) -> RunResult:
    return RunResult(name, ok, seconds, Path(f"{name}.ipynb"), cached=cached)


def test_the_timings_file_lives_in_the_output_root(tmp_path):
    layout = output_layout(tmp_path / "out")
    assert layout.timings == layout.root / "timings.json"
    assert load_timings(layout) == {}


def test_executed_notebooks_are_recorded_and_cached_ones_are_not(tmp_path):
    layout = output_layout(tmp_path / "out")
    record_timings(layout, "paper", [result("a", 12.345), result("b", 0.0, cached=True)], jobs=2, now=WHEN)
    assert load_timings(layout) == {
        "paper": {"a": {"seconds": 12.35, "jobs": 2, "date": "2026-01-02 03:04 UTC", "ok": True}}
    }


def test_a_rerun_replaces_its_entry_and_keeps_the_others(tmp_path):
    layout = output_layout(tmp_path / "out")
    record_timings(layout, "paper", [result("a", 10.0), result("b", 20.0)], jobs=1, now=WHEN)
    record_timings(layout, "quick", [result("a", 1.0)], jobs=1, now=WHEN)
    record_timings(layout, "paper", [result("b", 25.0, ok=False)], jobs=3, now=WHEN)
    timings = load_timings(layout)
    assert timings["paper"]["a"]["seconds"] == 10.0
    assert timings["paper"]["b"] == {"seconds": 25.0, "jobs": 3, "date": "2026-01-02 03:04 UTC", "ok": False}
    assert timings["quick"] == {"a": {"seconds": 1.0, "jobs": 1, "date": "2026-01-02 03:04 UTC", "ok": True}}
    assert [p.name for p in layout.root.iterdir()].count("timings.json") == 1  # no temporary left


def test_an_unreadable_file_counts_as_no_timings(tmp_path):
    layout = output_layout(tmp_path / "out")
    layout.timings.write_text("{not json")
    assert load_timings(layout) == {}
    record_timings(layout, "quick", [result("a", 1.0)], jobs=1, now=WHEN)
    assert list(load_timings(layout)) == ["quick"]


def test_the_table_has_a_row_per_notebook_a_column_per_profile_and_totals():
    timings = {
        "quick": {"a": {"seconds": 1.0, "jobs": 2, "date": "d1", "ok": True}},
        "paper": {
            "a": {"seconds": 10.0, "jobs": 1, "date": "d2", "ok": True},
            "b": {"seconds": 20.5, "jobs": 1, "date": "d2", "ok": False},
        },
    }
    text = format_timings(timings)
    lines = text.splitlines()
    assert lines[0] == "| notebook | paper | quick |"  # the profiles in their canonical order
    assert "| a | 10.0 s | 1.0 s |" in lines
    assert "| b | 20.5 s (FAILED) | not run |" in lines
    assert "| sum of the notebooks | 30.5 s | 1.0 s |" in lines
    assert "- `paper`: `ntpnb reproduce --profile paper --jobs 1`, d2; failed: b" in lines
    assert "- `quick`: `ntpnb reproduce --profile quick --jobs 2`, d1" in lines


def test_the_sweep_table_has_a_column_per_seed_the_books_first_and_totals():
    rec = lambda seconds: {"seconds": seconds, "jobs": 2, "date": "d", "ok": True}
    per_seed = {3: {"a": rec(2.0)}, 0: {"a": rec(10.0), "b": rec(4.0)}, 1: {"a": rec(3.0), "b": rec(5.0)}}
    lines = format_sweep_timings(per_seed, book_seed=0).splitlines()
    assert lines[0] == "| notebook | seed 0 (the book's) | seed 1 | seed 3 | all seeds |"
    assert "| a | 10.0 s | 3.0 s | 2.0 s | 15.0 s |" in lines
    assert "| b | 4.0 s | 5.0 s | not run | 9.0 s |" in lines
    assert lines[-1] == "| sum of the notebooks | 14.0 s | 8.0 s | 2.0 s | 24.0 s |"


def test_the_page_shows_the_sweeps_cost_from_each_seeds_tree(tmp_path):
    layout = output_layout(tmp_path / "out")
    record_timings(layout, "paper", [result("01_x", 42.0)], jobs=2, now=WHEN)
    assert "seed sweep" not in render_benchmarks_page(layout)  # no sweep ran into the tree
    write_run_record(layout.root, RunRecord("paper", {}, (0, 1), ("01_x",)))
    record_timings(output_layout(layout.seed_root(1)), "paper", [result("01_x", 40.0)], jobs=2, now=WHEN)
    page = render_benchmarks_page(layout)
    assert "| 01_x | 42.0 s | 40.0 s | 82.0 s |" in page and "### The seed sweep (`paper`)" in page


def test_without_timings_the_section_names_the_command():
    text = format_timings({})
    assert REPRODUCE_COMMAND in text and "|" not in text


def test_the_page_shows_the_times_with_and_without_benchmark_results(tmp_path):
    layout = output_layout(tmp_path / "out")
    record_timings(layout, "paper", [result("01_x", 42.0)], jobs=1, now=WHEN)
    without = render_benchmarks_page(layout)
    assert "No benchmark has been run" in without
    assert f"## {TIMINGS_TITLE}" in without and "| 01_x | 42.0 s |" in without
    layout.benchmarks.mkdir()
    (layout.benchmarks / "benchmarks.md").write_text("# Benchmarks\n\n| a |\n|---|\n| 1 |\n")
    page = render_benchmarks_page(layout)
    assert page.startswith("# Benchmarks\n\n| a |\n|---|\n| 1 |\n\n")
    assert f"## {TIMINGS_TITLE}" in page and "| 01_x | 42.0 s |" in page


def test_reproduce_records_what_it_executed(tmp_path, monkeypatch):
    (tmp_path / "notebooks").mkdir()
    for name in ("a", "b"):
        (tmp_path / "notebooks" / f"{name}.md").write_text(fake_notebook("x"))
    monkeypatch.setattr(profiles, "CHANGES", {n: {} for n in ("a", "b")})
    seconds = {"a": 3.0, "b": 4.0}

    def fake_workers(pending, jobs, report, mark, display):  # what the workers would report
        for run in pending:
            report(result(run.name, seconds[run.name], ok=run.name == "a"))
        return False  # not interrupted

    def complete_b(run, claims):  # b is unchanged since its last successful run
        return ChapterRecord(run.name, "quick", complete=True) if run.name == "b" else None

    monkeypatch.setattr(run_module, "run_in_workers", fake_workers)
    monkeypatch.setattr(choice, "chapter_damage", lambda *args, **kwargs: None)  # their outputs are in place
    monkeypatch.setattr(choice, "complete_record", complete_b)
    out = tmp_path / "out"
    reproduce(tmp_path, profile="quick", output_dir=out, log=lambda line: None, jobs=1)
    timings = json.loads((out / "timings.json").read_text())
    assert list(timings) == ["quick"] and list(timings["quick"]) == ["a"]  # b was cached
    assert timings["quick"]["a"]["seconds"] == 3.0 and timings["quick"]["a"]["jobs"] == 1
    monkeypatch.setattr(choice, "complete_record", lambda run, claims: None)
    reproduce(tmp_path, profile="quick", output_dir=out, log=lambda line: None, jobs=1)
    assert json.loads((out / "timings.json").read_text())["quick"]["b"]["ok"] is False


# ----------------------------------------------------------------------------- the time left


def runs_of(tmp_path, names, sweep_seeds=0):
    from ntpnb.runner.choice import NotebookRun

    layout = output_layout(tmp_path / "out")
    runs = []
    for name in names:
        runs.append(NotebookRun(tmp_path / f"{name}.md", {"seed": 0}, layout, "k"))
        for seed in range(1, sweep_seeds + 1):
            tree = output_layout(layout.seed_root(seed))
            runs.append(NotebookRun(tmp_path / f"{name}.md", {"seed": seed}, tree, "k", sweep=True))
    return layout, runs


def test_the_time_left_counts_this_machines_times_shared_among_the_jobs(tmp_path):
    from ntpnb.runner.run import seconds_left

    layout, runs = runs_of(tmp_path, ["a", "b"], sweep_seeds=1)
    record_timings(layout, "quick", [result("a", 30.0), result("b", 10.0)], jobs=2, now=WHEN)
    recorded = recorded_seconds(runs, "quick")
    # a seed without a time takes its book seed's
    assert seconds_left(runs, recorded, "quick", 2, {}, {}) == (30 + 30 + 10 + 10) / 2
    assert seconds_left(runs, recorded, "quick", 2, {}, {"a": 12.0}) == (18 + 30 + 10 + 10) / 2
    finished = {"a": result("a", 29.0)}  # and one past its time has none left
    assert seconds_left(runs, recorded, "quick", 2, finished, {"a seed 1": 40.0}) == (0 + 10 + 10) / 2


def test_a_first_run_scales_the_reference_by_how_this_machine_compares(tmp_path, monkeypatch):
    monkeypatch.setattr(run_module, "REFERENCE_SECONDS", {"a": {"paper": 10.0}, "b": {"paper": 40.0}})
    _, runs = runs_of(tmp_path, ["a", "b"])
    recorded = recorded_seconds(runs, "paper")
    assert run_module.seconds_left(runs, recorded, "paper", 1, {}, {}) == 50.0
    finished = {"a": result("a", 20.0)}  # this machine took twice the reference's time
    assert run_module.seconds_left(runs, recorded, "paper", 1, finished, {}) == 80.0
    finished["b"] = result("b", 0.0, cached=True)  # found cached: done, and no measure of the machine
    assert run_module.seconds_left(runs, recorded, "paper", 1, finished, {}) == 0.0


def test_without_a_time_or_a_reference_the_time_left_is_not_shown(tmp_path):
    from ntpnb.runner.run import describe_time_left, seconds_left

    _, runs = runs_of(tmp_path, ["never_timed"])
    assert seconds_left(runs, recorded_seconds(runs, "paper"), "paper", 2, {}, {}) is None
    assert describe_time_left(None) == "" and describe_time_left(0.2) == ""
    assert describe_time_left(4.0) == "about 10 s left" and describe_time_left(44.0) == "about 40 s left"
    assert describe_time_left(250.0) == "about 4 min left"


def test_the_progress_lines_tell_the_time_left_and_the_end_names_the_next_command(
    tmp_path, monkeypatch, capsys
):
    from ntpnb import cli

    (tmp_path / "notebooks").mkdir()
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: x\n")
    body = 'from ntpnb.chapter.claims import ClaimLog\nClaimLog("{n}", profile, output_dir).conclude()'
    for name in ("a_one", "b_two"):
        (tmp_path / "notebooks" / f"{name}.md").write_text(fake_notebook(body.format(n=name)))
    monkeypatch.setattr(profiles, "CHANGES", {"a_one": {}, "b_two": {}})
    monkeypatch.setattr(
        run_module, "REFERENCE_SECONDS", {"a_one": {"quick": 600.0}, "b_two": {"quick": 600.0}}
    )
    assert cli.main(["reproduce", "--root", str(tmp_path), "--profile", "quick", "--jobs", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    (first,) = [line for line in lines if line.startswith("[1/2]")]
    assert first.endswith("(about 10 s left)")  # 600 s of reference, scaled by the first: seconds
    (last,) = [line for line in lines if line.startswith("[2/2]")]
    assert "left" not in last
    assert lines[-1].startswith("all 2 notebooks completed (")  # a notebook, notebooks
    assert (
        "next: ntpnb book --run outputs/runs/profile=quick  (the book of this run, in its _book/html)"
        in lines
    )
