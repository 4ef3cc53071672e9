"""Comparing runs line by line: the cells that print a line do not matter, the lines do."""

from __future__ import annotations

import json

from ntpnb.book.compare import compare_runs, main


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
    assert compare_runs(a, b) == (["01_x"], [])
    assert main([str(a), str(b)]) == 0


def test_a_changed_line_names_its_cell_and_both_lines(tmp_path, capsys):
    a = write_cells(tmp_path / "a", "01_x", [None, "H = 0.8811\n", "corr 0.99\n"])
    b = write_cells(tmp_path / "b", "01_x", ["H = 0.8811\n", "corr 0.98\n"])
    _, diffs = compare_runs(a, b)
    assert [(d.cell, d.a, d.b) for d in diffs] == [(2, "corr 0.99", "corr 0.98")]
    assert main([str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "01_x cell 2" in out and "- corr 0.99" in out and "+ corr 0.98" in out


def test_a_line_printed_only_by_one_run_is_a_difference(tmp_path):
    a = write_cells(tmp_path / "a", "01_x", ["one\n", "two\n"])
    b = write_cells(tmp_path / "b", "01_x", ["one\n", "two\nthree\n"])
    _, diffs = compare_runs(a, b)
    assert [(d.cell, d.a, d.b) for d in diffs] == [(1, "<no line>", "three")]


def test_reordered_lines_are_a_difference(tmp_path):
    a = write_cells(tmp_path / "a", "01_x", ["one\n", "two\n"])
    b = write_cells(tmp_path / "b", "01_x", ["two\n", "one\n"])
    _, diffs = compare_runs(a, b)
    assert diffs


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
    assert compare_runs(a, b) == (["01_x"], [])
