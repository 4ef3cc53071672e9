"""Comparing the printed outputs of two runs (ntpnb.book._compare)."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest
from explore.map_trees import write_explore

from ntpnb.book._compare import compare_claims, compare_runs, explore_runs, print_comparison, sanitizers
from ntpnb.chapter._claims import ClaimLog
from ntpnb.errors import PathError
from ntpnb.explore import Axis, Grid
from ntpnb.records._commit import SourceCommit
from ntpnb.records._manifest import Manifest, write_manifest
from ntpnb.records._platform import cpu_model
from ntpnb.records._tree import TreeRecord, write_tree_record


def write_run(root, cells_by_notebook):
    (root / "notebooks").mkdir(parents=True)
    for name, printed in cells_by_notebook.items():
        cells = [
            {"cell_type": "code", "outputs": [{"output_type": "stream", "name": "stdout", "text": t}]}
            for t in printed
        ]
        (root / "notebooks" / f"{name}.ipynb").write_text(json.dumps({"cells": cells}))
    return root


def test_same_outputs_up_to_timings(tmp_path, capsys):
    a = write_run(tmp_path / "a", {"01_x": ["corr 0.9991\n", "took 3.2 s\n"]})
    b = write_run(tmp_path / "b", {"01_x": ["corr 0.9991\n", "took 17 s\n"]})
    both, diffs, unprinted = compare_runs(a, b)
    assert both == ["01_x"] and diffs == [] and unprinted == {}
    assert print_comparison(a, b) == 0
    assert "the same printed outputs and claim checks in the 1 notebook both" in capsys.readouterr().out


def test_a_changed_digit_and_a_missing_notebook_are_differences(tmp_path, capsys):
    a = write_run(tmp_path / "a", {"01_x": ["corr 0.9991\n"], "02_y": ["ok\n"]})
    b = write_run(tmp_path / "b", {"01_x": ["corr 0.9992\n"]})
    diffs = compare_runs(a, b).diffs
    assert [(d.notebook, d.cell) for d in diffs] == [("02_y", -1), ("01_x", 0)]
    assert print_comparison(a, b) == 1
    out = capsys.readouterr().out
    assert "- corr 0.9991" in out and "+ corr 0.9992" in out


def test_a_folder_that_is_not_a_runs_is_named(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    said = "is not the output folder of a run (it has no notebooks/ or claims/ folder); give the folder"
    with pytest.raises(PathError, match=re.escape(f"{empty} {said}")) as refused:
        compare_runs(empty, empty)
    assert str(refused.value).endswith(f"or run `ntpnb reproduce --out {empty}` first")
    assert print_comparison(empty, empty) == 2
    (empty / "x").write_text("x")  # a folder of something else: no reproduction is suggested into it
    with pytest.raises(PathError, match=re.escape(said)) as refused:
        compare_runs(empty, empty)
    assert "ntpnb reproduce" not in str(refused.value).split("wrote")[1]
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(PathError, match=r"a_file is not a folder; give the output folder of a run"):
        compare_runs(tmp_path / "a_file", tmp_path)


def test_a_misspelt_folder_is_said_not_to_exist_with_the_nearest_one(tmp_path, monkeypatch, capsys):
    """Not a reproduction into the typo: the folder does not exist, and which one was likely meant."""
    write_run(tmp_path / "outputs" / "runs" / "profile=quick,toy_lr=0.05", {"01_x": ["ok\n"]})
    monkeypatch.chdir(tmp_path)
    for typo in ("outputs/runs/profile=quick,toy_lr=0.5", "outptus/run/profile=quik,toy_lr=0.05"):
        assert print_comparison(Path(typo), Path("outputs")) == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert line == (
            f"ntpnb: error: {typo} does not exist (did you mean outputs/runs/profile=quick,toy_lr=0.05?); "
            "give the output folder of a run (e.g. outputs or outputs/runs/profile=quick)"
        )
    assert print_comparison(Path("elsewhere"), Path("outputs")) == 2
    assert "elsewhere does not exist; give the output folder" in capsys.readouterr().err
    assert not (tmp_path / "elsewhere").exists()


def test_an_interactive_run_compares_by_its_claim_records(tmp_path, capsys):
    """A chapter run in JupyterLab keeps its claim record, not its executed notebook: its checks compare."""
    a = claim_run(tmp_path / "a", 1.0, True)
    b = claim_run(tmp_path / "b", 1.0, True)
    (b / "notebooks" / "01_x.ipynb").unlink()  # as an interactive run leaves its tree
    write_tree_record(b, TreeRecord("paper", {}, (0,), ("01_x",), interactive=True))
    assert compare_runs(a, b) == (["01_x"], [], {"01_x": b})
    assert print_comparison(a, b) == 0
    out = capsys.readouterr().out
    assert (
        f"printed lines not compared for 01_x: {b} kept no executed notebook of it (an interactive run "
        "keeps only its claim records); the claim checks are compared"
    ) in out
    assert out.endswith(
        "the same claim checks in the 1 chapter both runs ran (printed lines compared in none)\n"
    )
    c = claim_run(tmp_path / "c", 1.0, False)  # another decision is found by the records alone
    assert print_comparison(c, b) == 1
    assert "01_x A1 the gap: FAIL measured 1.000 | PASS measured 1.000" in capsys.readouterr().out
    (b / "claims" / "01_x.json").unlink()  # a chapter neither record nor notebook keeps: a difference
    assert [(d.notebook, d.a, d.b) for d in compare_runs(a, b).diffs] == [("01_x", "executed", "missing")]


def test_a_notebook_of_the_wrong_shape_names_the_command_that_remakes_it(tmp_path, capsys):
    a = write_run(tmp_path / "a", {"01_x": ["ok\n"]})
    b = write_run(tmp_path / "b", {"01_x": ["ok\n"]})
    (b / "notebooks" / "01_x.ipynb").write_text('{"cells": [{"cell_type": "code", "outputs": [7]}]}')
    write_tree_record(b, TreeRecord("quick", {"n_g": "11"}, (3,), ("01_x",)))
    assert print_comparison(a, b) == 2
    (line,) = capsys.readouterr().err.splitlines()
    notebook = b / "notebooks" / "01_x.ipynb"
    assert line.startswith(f"ntpnb: error: the executed notebook {notebook} is not a notebook: ")
    assert "output 0 of cell 0 is a number, not an object" in line
    command = f"ntpnb reproduce 01 --profile quick -p n_g=11 --seeds 1 --out {b}"
    assert line.endswith(f"run `{command}` to run that chapter again")


def test_the_rules_are_nbvals():
    patterns = [r.pattern for r, _ in sanitizers()]
    assert any("ms|s|sec" in p for p in patterns) and any("0x" in p for p in patterns)


def test_the_platforms_come_from_the_claim_records_and_a_broken_one_is_skipped(tmp_path, capsys):
    a = write_run(tmp_path / "a", {"01_x": ["ok\n"]})
    b = write_run(tmp_path / "b", {"01_x": ["ok\n"]})
    ClaimLog("01_x", "quick", a).check("A1", "x", 1.0, ">", 0.0)
    (b / "claims").mkdir()
    (b / "claims" / "01_x.json").write_text("{")
    capsys.readouterr()
    assert print_comparison(a, b) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"settings not compared: no run record (run.json) in {a} and {b}"
    assert lines[1].startswith(f"{a}: {cpu_model()}; ") and " x" in lines[1]  # the BLAS and its threads
    assert lines[2] == f"{b}: no platform recorded"


# ----------------------------------------------------------------------------- line by line
# The cells that print a line do not matter, the lines do.


def write_cells(root, name, cells):
    """A run whose notebook ``name`` has one code cell per entry (``None``: a cell printing nothing)."""
    (root / "notebooks").mkdir(parents=True, exist_ok=True)
    out = []
    for text in cells:
        outputs = [] if text is None else [{"output_type": "stream", "name": "stdout", "text": text}]
        out.append({"cell_type": "code", "outputs": outputs})
    (root / "notebooks" / f"{name}.ipynb").write_text(json.dumps({"cells": out}))
    return root


def test_the_same_lines_cut_into_other_cells_compare_equal(tmp_path):
    a = write_cells(tmp_path / "a", "01_x", [None, "H = 0.8811\n[PASS] A8\n", None, "done\n"])
    b = write_cells(tmp_path / "b", "01_x", ["H = 0.8811\n", "[PASS] A8\n", "done\n"])
    assert compare_runs(a, b) == (["01_x"], [], {})
    assert print_comparison(a, b) == 0


def test_a_changed_line_names_its_cell_and_both_lines(tmp_path, capsys):
    a = write_cells(tmp_path / "a", "01_x", [None, "H = 0.8811\n", "corr 0.99\n"])
    b = write_cells(tmp_path / "b", "01_x", ["H = 0.8811\n", "corr 0.98\n"])
    diffs = compare_runs(a, b).diffs
    assert [(d.cell, d.a, d.b) for d in diffs] == [(2, "corr 0.99", "corr 0.98")]
    assert print_comparison(a, b) == 1
    out = capsys.readouterr().out
    assert "01_x cell 2" in out and "- corr 0.99" in out and "+ corr 0.98" in out


def test_a_line_printed_only_by_one_run_is_a_difference(tmp_path):
    a = write_cells(tmp_path / "a", "01_x", ["one\n", "two\n"])
    b = write_cells(tmp_path / "b", "01_x", ["one\n", "two\nthree\n"])
    diffs = compare_runs(a, b).diffs
    assert [(d.cell, d.a, d.b) for d in diffs] == [(1, "<no line>", "three")]


def test_reordered_lines_are_a_difference(tmp_path):
    a = write_cells(tmp_path / "a", "01_x", ["one\n", "two\n"])
    b = write_cells(tmp_path / "b", "01_x", ["two\n", "one\n"])
    assert compare_runs(a, b).diffs


def test_a_displayed_result_stands_on_its_own_line(tmp_path):
    image = {"output_type": "display_data", "data": {"text/plain": "<Image object>"}, "metadata": {}}

    def run(root, cells):
        (root / "notebooks").mkdir(parents=True)
        nb = {"cells": [{"cell_type": "code", "outputs": outputs} for outputs in cells]}
        (root / "notebooks" / "01_x.ipynb").write_text(json.dumps(nb))
        return root

    printed = {"output_type": "stream", "name": "stdout", "text": "B = 166.3\n"}
    a = run(tmp_path / "a", [[image, printed]])
    b = run(tmp_path / "b", [[image], [printed]])
    assert compare_runs(a, b) == (["01_x"], [], {})


# ----------------------------------------------------------------------------- settings and claim records


def test_the_settings_that_differ_are_said_first(tmp_path, capsys):
    a = write_run(tmp_path / "a", {"01_x": ["ok\n"]})
    b = write_run(tmp_path / "b", {"01_x": ["ok\n"]})
    write_tree_record(a, TreeRecord("paper", {}, (0, 1, 2), ("01_x",), version="0.1.0"))
    write_tree_record(b, TreeRecord("quick", {"n_g": "11"}, (0, 1, 2), ("01_x",), version="0.2.0"))
    assert print_comparison(a, b) == 0  # the same lines and decisions: the settings only inform
    lines = capsys.readouterr().out.splitlines()
    assert lines[:4] == [
        f"the two runs' settings differ ({a} | {b}):",
        "  profile: paper | quick",
        "  overrides: none | n_g=11",
        "  ntpnb version: 0.1.0 | 0.2.0",
    ]


def test_a_run_of_an_edited_chapter_source_is_named_among_the_settings(tmp_path, capsys):
    """The issue's run at toy_lr = 2.0 saved into the source: compare names it, though -p did not."""
    runs = [write_run(tmp_path / name, {"03_x": ["ok\n"]}) for name in ("a", "b")]
    changes = ("", "differs from commit 1478a4c: toy_lr = 2.0 (committed: 0.5)")
    for run, change in zip(runs, changes, strict=True):
        write_tree_record(run, TreeRecord("quick", {}, (0,), ("03_x",)))
        commit = SourceCommit("1478a4c" + "0" * 33, bool(change), change)
        write_manifest(
            run / "notebooks" / "03_x.ipynb", Manifest("k", {}, 1.0, {"x": "0" * 64}, "pkg", commit)
        )
    assert print_comparison(*runs) == 0
    assert capsys.readouterr().out.splitlines()[:2] == [
        f"the two runs' settings differ ({runs[0]} | {runs[1]}):",
        "  chapter sources: as committed | 03_x differs from commit 1478a4c: toy_lr = 2.0 (committed: 0.5)",
    ]


def claim_run(root, value, passes, relation=">"):
    """A run of ``01_x`` whose record holds one check, printed as its line is (the same in both runs)."""
    run = write_run(root, {"01_x": ["[A1] the gap\n"]})
    log = ClaimLog("01_x", "paper", run)
    with contextlib.redirect_stdout(io.StringIO()):
        log.check("A1", "the gap", value, relation if passes else "<", 0.5)
    return run


def test_a_changed_decision_exits_1_even_when_the_printed_lines_agree(tmp_path, capsys):
    a, b = claim_run(tmp_path / "a", 1.0, True), claim_run(tmp_path / "b", 1.0, False)
    assert compare_runs(a, b)[1] == []  # the masked lines agree
    assert print_comparison(a, b) == 1
    out = capsys.readouterr().out
    assert (
        "1 claim check decided otherwise:\n  01_x A1 the gap: PASS measured 1.000 | FAIL measured 1.000\n"
        in out
    )


def test_a_value_is_compared_to_the_precision_its_check_prints(tmp_path, capsys):
    a, b = claim_run(tmp_path / "a", 1.00001, True), claim_run(tmp_path / "b", 1.00002, True)
    assert compare_claims(a, b, ["01_x"]) == []  # both print 1.000
    c = claim_run(tmp_path / "c", 1.2, True)
    (diff,) = compare_claims(a, c, ["01_x"])
    assert not diff.decision_changed
    assert print_comparison(a, c) == 1
    assert "01_x A1 the gap: PASS measured 1.000 | PASS measured 1.200" in capsys.readouterr().out


def test_two_explore_trees_name_every_differing_setting_first_and_pair_only_runs_at_one_seed(
    tmp_path, capsys
):
    """The same grid at seed 0 and (with -p seed=1) at seed 1: no run is paired, the seeds are named."""
    grid = Grid((Axis("lr", (0.5, 1.5), "0.5,1.5"),))

    def checks(point, seed):
        return [("A9", "a step below one", point["lr"], "<", 1.0, {})]

    a = write_explore(tmp_path / "a", grid, [0], checks)
    b = write_explore(tmp_path / "b", grid, [1], checks, fixed={"seed": 1})
    assert sorted(explore_runs(a)) == ["lr=0.5 seed 0", "lr=1.5 seed 0"]
    assert print_comparison(a, b) == 1
    out = capsys.readouterr().out
    assert out.startswith(
        f"the two explore trees' settings differ ({a} | {b}):\n  fixed: none | seed=1\n  seeds: 0 | 1\n"
    )
    assert "lr=0.5 seed 0: only in" in out and "lr=0.5 seed 1: only in" in out
    assert "claim check" not in out  # seed 0's runs are never compared with seed 1's
