"""The notebook reproduction times: ``timings.json`` and its table on the benchmarks page."""

from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, replace
from datetime import datetime, timezone
from pathlib import Path

import pytest

from benchmarks.page import (
    REPRODUCE_COMMAND,
    TIMINGS_TITLE,
    format_sweep_timings,
    format_timings,
    render_benchmarks_page,
)
from ntpnb.chapter import _parameters as profiles
from ntpnb.errors import PathError
from ntpnb.records._places import output_tree
from ntpnb.records._run import ChapterRun
from ntpnb.records._timings import (
    BENCHMARK,
    CHAPTER_TIMES,
    THIS_MACHINE,
    ChapterTimes,
    Expected,
    describe_machine,
    describe_record,
    expected_time,
    format_expected,
    load_chapter_times,
    load_timings,
    record_timings,
    reference_seconds,
    slowest_first,
    staleness,
    this_machine,
    write_chapter_times,
)
from ntpnb.records._tree import TreeRecord, write_tree_record
from ntpnb.runner import _plan as choice
from ntpnb.runner import _run as run_module
from ntpnb.runner._plan import recorded_seconds
from ntpnb.runner._run import reproduce
from ntpnb.runner._time_left import TimeLeft, time_left

from fake_notebooks import fake_notebook

WHEN = datetime(2026, 1, 2, 3, 4, tzinfo=timezone.utc)


def result(name: str, seconds: float, ok: bool = True, cached: bool = False) -> ChapterRun:
    return ChapterRun(name, complete=ok, seconds=seconds, executed=Path(f"{name}.ipynb"), cached=cached)


def seeded(name: str, seed: int, seconds: float) -> ChapterRun:
    return replace(result(name, seconds), seed=seed, sweep=True)


def test_the_timings_file_lives_in_the_output_root(tmp_path):
    layout = output_tree(tmp_path / "out")
    assert layout.timings == layout.root / "timings.json"
    assert load_timings(layout) == {}


def test_executed_notebooks_are_recorded_and_cached_ones_are_not(tmp_path):
    layout = output_tree(tmp_path / "out")
    record_timings(layout, "paper", [result("a", 12.345), result("b", 0.0, cached=True)], jobs=2, now=WHEN)
    assert load_timings(layout) == {
        "paper": {"a": {"seconds": 12.35, "jobs": 2, "date": "2026-01-02 03:04 UTC", "ok": True}}
    }


def test_a_rerun_replaces_its_entry_and_keeps_the_others(tmp_path):
    layout = output_tree(tmp_path / "out")
    record_timings(layout, "paper", [result("a", 10.0), result("b", 20.0)], jobs=1, now=WHEN)
    record_timings(layout, "quick", [result("a", 1.0)], jobs=1, now=WHEN)
    record_timings(layout, "paper", [result("b", 25.0, ok=False)], jobs=3, now=WHEN)
    timings = load_timings(layout)
    assert timings["paper"]["a"]["seconds"] == 10.0
    assert timings["paper"]["b"] == {"seconds": 25.0, "jobs": 3, "date": "2026-01-02 03:04 UTC", "ok": False}
    assert timings["quick"] == {"a": {"seconds": 1.0, "jobs": 1, "date": "2026-01-02 03:04 UTC", "ok": True}}
    assert [p.name for p in layout.root.iterdir()].count("timings.json") == 1  # no temporary left


def test_an_unreadable_file_counts_as_no_timings(tmp_path):
    layout = output_tree(tmp_path / "out")
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
    layout = output_tree(tmp_path / "out")
    record_timings(layout, "paper", [result("01_x", 42.0)], jobs=2, now=WHEN)
    assert "seed sweep" not in render_benchmarks_page(layout)  # no sweep ran into the tree
    write_tree_record(layout.root, TreeRecord("paper", {}, (0, 1), ("01_x",)))
    record_timings(output_tree(layout.seed_root(1)), "paper", [result("01_x", 40.0)], jobs=2, now=WHEN)
    page = render_benchmarks_page(layout)
    assert "| 01_x | 42.0 s | 40.0 s | 82.0 s |" in page and "### The seed sweep (`paper`)" in page


def test_without_timings_the_section_names_the_command():
    text = format_timings({})
    assert REPRODUCE_COMMAND in text and "|" not in text


def test_the_page_shows_the_times_with_and_without_benchmark_results(tmp_path):
    layout = output_tree(tmp_path / "out")
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
            report(result(run.notebook, seconds[run.notebook], ok=run.notebook == "a"))
        return False  # not interrupted

    def complete_b(run, claims):  # b is unchanged since its last successful run
        return ChapterRun(run.notebook, "quick", complete=True) if run.notebook == "b" else None

    monkeypatch.setattr(run_module, "run_in_workers", fake_workers)
    monkeypatch.setattr(choice, "chapter_damage", lambda *args, **kwargs: None)  # their outputs are in place
    monkeypatch.setattr(choice, "complete_run", complete_b)
    out = tmp_path / "out"
    reproduce(tmp_path, profile="quick", output_dir=out, log=lambda line: None, jobs=1)
    timings = json.loads((out / "timings.json").read_text())
    assert list(timings) == ["quick"] and list(timings["quick"]) == ["a"]  # b was cached
    assert timings["quick"]["a"]["seconds"] == 3.0 and timings["quick"]["a"]["jobs"] == 1
    monkeypatch.setattr(choice, "complete_run", lambda run, claims: None)
    reproduce(tmp_path, profile="quick", output_dir=out, log=lambda line: None, jobs=1)
    assert json.loads((out / "timings.json").read_text())["quick"]["b"]["ok"] is False


# ----------------------------------------------------------------------------- the time left


def runs_of(tmp_path, names, sweep_seeds=0):
    from ntpnb.records._run import PlannedRun

    layout = output_tree(tmp_path / "out")
    runs = []
    for name in names:
        runs.append(PlannedRun(tmp_path / f"{name}.md", {"seed": 0}, layout, "k"))
        for seed in range(1, sweep_seeds + 1):
            tree = output_tree(layout.seed_root(seed))
            runs.append(PlannedRun(tmp_path / f"{name}.md", {"seed": seed}, tree, "k", sweep=True))
    return layout, runs


def test_the_time_left_counts_this_machines_times_shared_among_the_jobs(tmp_path):
    layout, runs = runs_of(tmp_path, ["a", "b"], sweep_seeds=1)
    record_timings(layout, "quick", [result("a", 30.0), result("b", 10.0)], jobs=2, now=WHEN)
    recorded = recorded_seconds(runs, "quick")
    # a seed without a time takes its book seed's
    left = time_left(runs, recorded, "quick", 2, {}, {})
    assert left.seconds == (30 + 30 + 10 + 10) / 2 and left.basis == "this machine's last run"
    assert time_left(runs, recorded, "quick", 2, {}, {"a": 12.0}).seconds == (18 + 30 + 10 + 10) / 2
    # one run left takes its own time, however many jobs: here half its last, as the others did
    done = {"a seed 1": seeded("a", 1, 15.0), "b": result("b", 5.0)}
    assert time_left(runs[:3], recorded, "quick", 2, done, {}).seconds == pytest.approx(15.0)


def test_the_time_left_follows_the_pace_of_the_runs_finished_in_this_run(tmp_path):
    layout, runs = runs_of(tmp_path, ["a", "b"], sweep_seeds=1)
    record_timings(layout, "quick", [result("a", 30.0), result("b", 10.0)], jobs=1, now=WHEN)
    recorded = recorded_seconds(runs, "quick")
    finished = {"a": result("a", 60.0)}  # twice its last time here: this load, this machine
    left = time_left(runs, recorded, "quick", 1, finished, {})
    assert left.seconds == pytest.approx(2 * (30 + 10 + 10))
    basis = "this machine's last run x2, at this run's pace over its last run"
    assert left.describe() == f"about 2 min left: {basis}"
    # the pace is the last runs' (two a job), so it follows a change of load
    sweep = {"a seed 1": seeded("a", 1, 30.0), "b": result("b", 10.0)}
    assert time_left(runs, recorded, "quick", 1, finished | sweep, {}).seconds == pytest.approx(10.0)


def test_a_chapter_that_runs_slower_here_than_the_others_keeps_its_factor(tmp_path):
    reference = {"a": {"paper": 10.0}, "b": {"paper": 10.0}}
    _, runs = runs_of(tmp_path, ["a", "b"], sweep_seeds=2)
    recorded = recorded_seconds(runs, "paper")
    finished = {"a": result("a", 40.0), "b": result("b", 20.0)}  # pace 3; a at 4/3 of it, b at 2/3
    left = time_left(runs, recorded, "paper", 2, finished, {}, reference)
    assert left.seconds == pytest.approx((40 + 40 + 20 + 20) / 2)
    assert left.basis == "the benchmark record x3, at this run's pace over its last 2 runs"


def test_a_run_that_compiled_the_kernels_counts_only_until_another_ends(tmp_path):
    reference = {"a": {"paper": 10.0}, "b": {"paper": 10.0}}
    _, runs = runs_of(tmp_path, ["a", "b"], sweep_seeds=1)
    recorded = recorded_seconds(runs, "paper")
    compiling = replace(result("a", 100.0), compiled=True)
    assert time_left(runs, recorded, "paper", 1, {"a": compiling}, {}, reference).seconds == 300.0
    finished = {"a": compiling, "b": result("b", 20.0)}  # the kernels are compiled: a loads them now
    assert time_left(runs, recorded, "paper", 1, finished, {}, reference).seconds == 40.0


def test_a_first_run_scales_the_reference_by_how_this_machine_compares(tmp_path):
    reference = {"a": {"paper": 10.0}, "b": {"paper": 40.0}}
    _, runs = runs_of(tmp_path, ["a", "b"])
    recorded = recorded_seconds(runs, "paper")
    before = time_left(runs, recorded, "paper", 1, {}, {}, reference)
    assert before.seconds == 50.0
    assert before.basis == "the benchmark record, on an idle core, until a run ends here"
    finished = {"a": result("a", 20.0)}  # this machine took twice the reference's time
    assert time_left(runs, recorded, "paper", 1, finished, {}, reference).seconds == 80.0
    finished["b"] = result("b", 0.0, cached=True)  # found cached: done, and no measure of the machine
    assert time_left(runs, recorded, "paper", 1, finished, {}, reference).seconds == 0.0


def test_before_any_run_ends_a_run_under_way_past_its_time_sets_the_pace_at_least(tmp_path):
    """Before any run ends, a run under way past its expected time raises the pace; one within it does not."""
    reference = {"a": {"paper": 10.0}, "b": {"paper": 40.0}}
    _, runs = runs_of(tmp_path, ["a", "b"])
    recorded = recorded_seconds(runs, "paper")
    # a has run twice its expected time and not ended: b should take twice its own too
    late = time_left(runs, recorded, "paper", 1, {}, {"a": 20.0}, reference)
    assert late.seconds == 80.0 and late.seconds > 10.0 + 40.0
    assert late.basis == "the benchmark record x2 at least, as no run has ended yet"
    # a run under way within its expected time does not lower the pace: the rest of a, then b
    early = time_left(runs, recorded, "paper", 1, {}, {"a": 5.0}, reference)
    assert early.seconds == 45.0
    assert early.basis == "the benchmark record, on an idle core, until a run ends here"
    # once a run has ended, its pace counts, not the run under way: c expects its reference
    reference["c"] = {"paper": 30.0}
    _, runs = runs_of(tmp_path, ["a", "b", "c"])
    recorded = recorded_seconds(runs, "paper")
    finished = {"a": result("a", 10.0)}  # at the reference's pace, while b runs at twice its time
    assert time_left(runs, recorded, "paper", 1, finished, {"b": 80.0}, reference).seconds == 30.0


def test_a_fully_cached_rerun_counts_down_no_time(tmp_path, monkeypatch):
    """Every run cached: nothing runs, so no line says a time is left (their last times are known)."""
    (tmp_path / "notebooks").mkdir()
    for name in ("a", "b"):
        (tmp_path / "notebooks" / f"{name}.md").write_text(fake_notebook("x"))
    monkeypatch.setattr(profiles, "CHANGES", {n: {} for n in ("a", "b")})
    out = tmp_path / "out"
    record_timings(output_tree(out), "quick", [result("a", 90.0), result("b", 90.0)], jobs=1, now=WHEN)
    monkeypatch.setattr(run_module, "run_in_workers", lambda pending, *args: bool(pending))
    monkeypatch.setattr(choice, "chapter_damage", lambda *args, **kwargs: None)  # their outputs are in place
    monkeypatch.setattr(
        choice, "complete_run", lambda run, claims: ChapterRun(run.notebook, "quick", complete=True)
    )
    lines: list[str] = []
    results = reproduce(tmp_path, profile="quick", output_dir=out, log=lines.append, jobs=1)
    assert [r.cached for r in results] == [True, True]
    assert len(lines) == 2 and not [line for line in lines if "left" in line], lines


def test_a_slow_preparation_of_the_run_is_said_while_it_lasts(tmp_path, monkeypatch):
    """A first run builds matplotlib's font cache before any notebook starts: never a long silence."""
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "a.md").write_text(fake_notebook("x"))
    monkeypatch.setattr(profiles, "CHANGES", {"a": {}})
    monkeypatch.setattr(choice, "QUIET_SECONDS", 0.05)
    monkeypatch.setattr(choice, "warm_font_cache", lambda: time.sleep(0.5))
    monkeypatch.setattr(run_module, "run_in_workers", lambda pending, *args: bool(pending))
    monkeypatch.setattr(choice, "chapter_damage", lambda *args, **kwargs: None)  # found cached
    monkeypatch.setattr(
        choice, "complete_run", lambda run, claims: ChapterRun(run.notebook, "quick", complete=True)
    )
    lines: list[str] = []
    reproduce(tmp_path, profile="quick", output_dir=tmp_path / "out", log=lines.append, jobs=1, seeds=1)
    assert lines[0] == f"ntpnb: preparing 1 run ({choice.PREPARING})"


def test_without_a_time_or_a_reference_the_time_left_is_not_shown(tmp_path):
    _, runs = runs_of(tmp_path, ["never_timed"])
    assert time_left(runs, recorded_seconds(runs, "paper"), "paper", 2, {}, {}).seconds is None
    assert TimeLeft(None).describe() == "" and TimeLeft(0.2, "x").describe() == ""
    assert TimeLeft(4.0).describe() == "about 10 s left" and TimeLeft(44.0).describe() == "about 40 s left"
    assert TimeLeft(250.0, "why").describe() == "about 4 min left: why"


def test_the_progress_lines_tell_the_time_left_and_the_end_names_the_next_command(
    tmp_path, monkeypatch, capsys
):
    from ntpnb import cli

    (tmp_path / "notebooks").mkdir()
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: x\n")
    body = 'from ntpnb.chapter._claims import ClaimLog\nClaimLog("{n}", profile, output_dir).conclude()'
    for name in ("a_one", "b_two"):
        (tmp_path / "notebooks" / f"{name}.md").write_text(fake_notebook(body.format(n=name)))
    monkeypatch.setattr(profiles, "CHANGES", {"a_one": {}, "b_two": {}})
    reference = {"sources": {}, "quick": {"seconds": 600.0}}
    record = ChapterTimes("", "", {}, {name: reference for name in ("a_one", "b_two")})
    (tmp_path / CHAPTER_TIMES).parent.mkdir()
    (tmp_path / CHAPTER_TIMES).write_text(json.dumps(asdict(record)))  # the benchmark record's times
    monkeypatch.chdir(tmp_path)  # the commands it prints are relative to the working folder
    assert cli.main(["reproduce", "--profile", "quick", "--jobs", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    (first,) = [line for line in lines if line.startswith("[1/2]")]
    # 600 s of reference for each, scaled by the first's own time: the second takes as long
    took = float(first.split()[3])
    said = re.search(
        r"\((about .* left): the benchmark record x([\d.e-]+), at this run's pace over its last run\)$",
        first,
    )
    assert said and said[1] == TimeLeft(took).describe(), first
    assert float(said[2]) == pytest.approx(took / 600, rel=0.05)
    (last,) = [line for line in lines if line.startswith("[2/2]")]
    assert "left" not in last
    assert lines[-1].startswith("all 2 notebooks completed (")  # a notebook, notebooks
    assert (
        "next: ntpnb book --run outputs/runs/profile=quick  (the book of this run, in its _book/html)"
        in lines
    )


# ----------------------------------------------------------------------------- the expected times


def test_a_run_records_the_sources_it_ran_beside_its_time(tmp_path):
    layout = output_tree(tmp_path / "out")
    sources = {"a": {"package": "p1", "source": "s1"}}
    record_timings(layout, "paper", [result("a", 3.0)], jobs=1, now=WHEN, sources=sources)
    assert load_timings(layout)["paper"]["a"] == {
        "seconds": 3.0, "jobs": 1, "date": "2026-01-02 03:04 UTC", "ok": True, "package": "p1", "source": "s1"
    }  # fmt: skip


@pytest.mark.parametrize(
    ("recorded", "stale"),
    [
        ({"package": "p", "source": "s"}, ""),
        ({"package": "p", "source": "older"}, "measured with another version of this chapter"),
        ({"package": "older", "source": "s"}, "measured with another version of ntpnb"),
        ({"package": "x", "source": "y"}, "measured with another version of this chapter and of ntpnb"),
        ({"seconds": 3.0}, "its sources were not recorded"),
        (None, "its sources were not recorded"),
    ],
)
def test_a_time_of_other_sources_is_stale_and_says_which(recorded, stale):
    assert staleness(recorded, {"package": "p", "source": "s"}) == stale


def test_the_benchmark_record_round_trips_and_a_failed_time_is_not_expected(tmp_path):
    one_core = {
        "paper": {
            "a": {"seconds": 12.34, "cpu": 5.87, "ok": True, "package": "p", "source": "s"},
            "b": {"seconds": 5.0, "ok": False, "package": "p", "source": "t"},
        },
        "quick": {"a": {"seconds": 2.0, "ok": True, "package": "p", "source": "s"}},
    }
    path = write_chapter_times(tmp_path, one_core, "2026-01-02 03:04 UTC", "abc1234def", {"paper": 3.5})
    assert path == tmp_path / CHAPTER_TIMES and not list(path.parent.glob(".*"))  # written atomically
    record = load_chapter_times(tmp_path)
    assert record.machine == this_machine() and record.commit == "abc1234def"
    assert record.load == {"paper": 3.5}
    assert describe_record(record).startswith(
        "each chapter's CPU time alone on one core, its time on an idle core, of "
        f"{describe_machine(this_machine(), 3.5)}, 2026-01-02 03:04 UTC, commit abc1234 (under that "
        "load, wall times 2.1x these)"
    )
    assert (
        describe_machine({"cpu": "Intel Xeon", "cores": 4}, 12.25)
        == "an Intel Xeon (4 cores, load average 12.2)"
    )
    assert describe_machine({"cpu": "Apple M2"}) == "an Apple M2" and describe_machine({}) == "an unknown CPU"
    assert record.chapters["a"]["sources"] == {"package": "p", "source": "s"}
    # a's CPU time at paper (its time on an idle core), its wall time at quick (no CPU time); b failed
    assert reference_seconds(tmp_path) == {"a": {"paper": 5.9, "quick": 2.0}}
    assert slowest_first({"a": {"paper": 1.0}, "b": {"paper": 9.0}, "c": {"quick": 1.0}}) == ("b", "a")


@pytest.mark.parametrize(
    "content",
    [
        "{",
        "[]",
        '{"chapters": {"a": {"sources": {}, "paper": {"seconds": "fast"}}}, "date": "", "machine": {}}',
    ],
)
def test_a_damaged_benchmark_record_is_named_and_no_time_is_taken_from_it(tmp_path, content):
    assert load_chapter_times(tmp_path) is None and reference_seconds(tmp_path) == {}
    (tmp_path / CHAPTER_TIMES).parent.mkdir()
    (tmp_path / CHAPTER_TIMES).write_text(content)
    with pytest.raises(PathError, match=r"chapter_times\.json"):
        load_chapter_times(tmp_path)
    assert reference_seconds(tmp_path) == {}


def test_a_current_time_comes_before_a_stale_one_and_this_machines_before_the_records(tmp_path):
    current = {"package": "p", "source": "s"}
    layout = output_tree(tmp_path / "out")
    chapters = {"a": {"sources": dict(current), "paper": {"seconds": 10.0, "ok": True}}}
    record = ChapterTimes("2026-01-02 03:04 UTC", "", {"cpu": "elsewhere", "cores": 1}, chapters)
    assert expected_time("a", "paper", current, layout, None) is None
    assert expected_time("a", "paper", current, layout, record) == Expected(10.0, BENCHMARK, "", True)
    record_timings(layout, "paper", [result("a", 30.0)], jobs=1, now=WHEN)  # sources not recorded
    assert expected_time("a", "paper", current, layout, record).where == BENCHMARK
    record_timings(layout, "paper", [result("a", 30.0)], jobs=1, now=WHEN, sources={"a": current})
    assert expected_time("a", "paper", current, layout, record) == Expected(30.0, THIS_MACHINE)
    chapters["a"]["sources"]["source"] = "older"  # both stale: this machine's
    record_timings(
        layout, "paper", [result("a", 30.0)], jobs=1, now=WHEN, sources={"a": {**current, "source": "o"}}
    )
    expected = expected_time("a", "paper", current, layout, record)
    assert (
        expected.where == THIS_MACHINE and expected.stale == "measured with another version of this chapter"
    )


def test_a_first_runs_compiling_never_makes_the_quick_profile_look_slower_than_the_papers(tmp_path):
    """The issue's case: this machine's first quick run compiled numba's kernels (66 s), the paper
    profile was never run here, and the benchmark record is stale: both times come from the record."""
    current = {"package": "p", "source": "s"}
    trees = {"paper": output_tree(tmp_path / "paper"), "quick": output_tree(tmp_path / "quick")}
    compiled = ChapterRun("a", complete=True, seconds=66.0, executed=Path("a.ipynb"), compiled=True)
    record_timings(trees["quick"], "quick", [compiled], jobs=1, now=WHEN, sources={"a": current})
    assert load_timings(trees["quick"])["quick"]["a"]["compiled"] is True
    chapters = {
        "a": {
            "sources": {"package": "old", "source": "s"},
            "paper": {"seconds": 8.0},
            "quick": {"seconds": 7.0},
        }
    }
    record = ChapterTimes("2026-01-02 03:04 UTC", "", this_machine(), chapters)

    def times(record):
        found = [(p, expected_time("a", p, current, trees[p], record)) for p in trees]
        return [(p, e) for p, e in found if e is not None]

    assert format_expected(times(record)) == (
        "paper 8 s, quick 7 s (benchmark record, stale: measured with another version of ntpnb)"
    )
    # with no other time of the quick profile, the compiling one is shown, saying what it includes
    assert format_expected(times(None)) == (
        "quick 66 s (this machine's last run, which includes numba compiling the kernels (a first run))"
    )
    # a later run, which loads the kernels, is this machine's time as ever
    record_timings(trees["quick"], "quick", [result("a", 9.0)], jobs=1, now=WHEN, sources={"a": current})
    assert format_expected(times(record)) == (
        "paper 8 s (benchmark record, stale: measured with another version of ntpnb); quick 9 s "
        "(this machine's last run)"
    )


def test_this_machines_time_is_of_the_seeds_that_did_not_compile_when_the_books_seed_did(tmp_path):
    current = {"package": "p", "source": "s"}
    layout = output_tree(tmp_path / "quick")
    compiled = ChapterRun("a", complete=True, seconds=66.0, executed=Path("a.ipynb"), compiled=True)
    record_timings(layout, "quick", [compiled], jobs=2, now=WHEN, sources={"a": current})
    for seed, seconds in ((1, 30.0), (2, 34.0)):
        tree = output_tree(layout.seed_root(seed))
        record_timings(tree, "quick", [result("a", seconds)], jobs=2, now=WHEN, sources={"a": current})
    assert expected_time("a", "quick", current, layout, None) == Expected(32.0, THIS_MACHINE)
