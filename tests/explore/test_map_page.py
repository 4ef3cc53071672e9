"""The page of a grid's maps (ntpnb.explore._page) and the book of an explore tree (ntpnb book --run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ntpnb.errors import NTPError
from ntpnb.explore import Axis, Grid, check_maps, point_check, run_grid
from ntpnb.explore._page import map_page
from ntpnb.explore._read import load_explore

from .map_trees import CHAPTER, write_explore

ROOT = Path(__file__).resolve().parents[2]

GRID = Grid((Axis("lr", (0.1, 1.0, 10.0), "0.1..10:log:3", log=True),))


def tree_checks(point, seed):
    return [
        ("A2", r"$\lVert W_k\rVert / k$ after the budget", point["lr"] * (1 + seed / 10), "<", 2.0, {}),
        ("A2", "loss is finite", 1.0, ">", 0.0, {"kind": "sanity"}),
    ]


def test_the_map_page_says_what_was_explored_then_summarizes_and_shows_every_map(tmp_path):
    write_explore(tmp_path, GRID, (0, 1, 2), tree_checks, fixed={"iters": "200"}, failed=[({"lr": 10.0}, 2)])
    results = load_explore(tmp_path)
    maps = check_maps(results)
    page = map_page(results, {maps[0].slug: f"{maps[0].slug}.png"})
    lines = page.splitlines()
    assert lines[0] == r"# 01\_demo across lr"  # escaped: MyST reads it as written
    assert lines[2] == (
        f"Explored: chapter `{CHAPTER}` at the quick profile, at seeds 0, 1 and 2, over `lr` = "
        "`0.1..10:log:3` (0.1, 1.0, 10.0, log scale); fixed: `iters=200`: 3 points, each at every seed."
    )
    assert "- lr=10.0: seed 2 is not counted (its last run failed (ValueError: diverged))" in lines
    # the summary: one row per check, its math typeset; where it holds and its boundary
    assert (
        r"| A2 | $\lVert W_k\rVert / k$ after the budget | \< 2 | holds at 2 of 3 points (lr = 0.1 and 1.0), "
        r"fails at 1 | between lr = 1.0 (holds) and 10.0 (fails) |"
    ) in lines
    assert (
        r"| A2 (sanity) | loss is finite | \> 0 | holds at 2 of 3 points (lr = 0.1 and 1.0), fails at 0, "
        "undecided at 1 | no boundary: it holds at every point where it is decided |" in lines
    )
    # each map: a heading, the figure where there is one (named, with alt text), its numbers
    assert r"## 1. A2: $\lVert W_k\rVert / k$ after the budget" in lines
    assert f"```{{figure}} {maps[0].slug}.png" in lines and f":name: map-{maps[0].slug}" in lines
    assert "## 2. A2 (sanity): loss is finite" in lines
    assert page.count("```{figure}") == 1  # the second map has no figure: its caption and numbers
    assert "| 1.0 | 1.10 | [1.00, 1.20] | 3 of 3 seeds | holds |" in lines
    # at lr = 10 a seed failed to run: the two seeds that ran fail there, so the point fails
    assert "| 10.0 | 10.5 | [10.0, 11.0] | 0 of 2 seeds | fails |" in lines


def test_the_map_page_names_the_papers_setting_and_one_outside_a_heatmaps_grid(tmp_path):
    write_explore(tmp_path / "line", GRID, (0,), tree_checks, paper={"lr": 0.5})
    line = map_page(load_explore(tmp_path / "line"), {})
    assert line.count("Solid black: the paper's setting, lr = 0.5.") == 2  # one per map
    grid = Grid((*GRID.axes, Axis("m", (2, 4), "2,4")))
    write_explore(tmp_path / "heat", grid, (0,), tree_checks, paper={"lr": 100.0, "m": 4})
    heat = map_page(load_explore(tmp_path / "heat"), {})
    assert (
        "Solid black: the paper's setting, lr = 100, outside the grid's values (not drawn) and m = 4."
    ) in heat
    # a record from before the paper's setting was recorded: no sentence, no mark
    write_explore(tmp_path / "old", GRID, (0,), tree_checks)
    assert "the paper's setting" not in map_page(load_explore(tmp_path / "old"), {})


def test_an_explore_record_with_a_papers_setting_that_is_not_a_number_is_refused(tmp_path):
    write_explore(tmp_path, GRID, (0,), tree_checks, paper={"lr": "fast"})
    with pytest.raises(NTPError, match="'paper' is not a mapping of parameters to numbers"):
        load_explore(tmp_path)


def test_a_page_of_an_in_process_grid_and_of_a_grid_without_checks():
    results = run_grid(
        GRID, (0,), lambda p, s: [point_check("A2", "x", p["lr"], ">", 0.5)], title="Step size"
    )
    page = map_page(results, {})
    assert page.startswith(
        "# Step size\n\nExplored: a chapter's experiment, in process, at seed 0, over `lr`"
    )
    assert "between lr = 0.1 (fails) and 1.0 (holds)" in page
    empty = run_grid(GRID, (0,), lambda p, s: [])
    assert "No run of this grid made a check." in map_page(empty, {})


@pytest.mark.slow
def test_ntpnb_book_run_builds_the_map_page_of_an_explore_tree(tmp_path):
    tree = write_explore(tmp_path / "explore", GRID, (0, 1), tree_checks, failed=[({"lr": 1.0}, 1)])
    cmd = [sys.executable, "-m", "ntpnb.cli", "book", "--root", str(ROOT), "--run", str(tree), "--no-pdf"]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert r"A2 $\lVert W_k\rVert / k$ after the budget (required < 2): holds at 1 of 3 points" in proc.stdout
    maps = tree / "maps"
    assert (maps / "maps.md").is_file() and (maps / "maps.json").is_file()
    assert len(list(maps.glob("*.png"))) == len(list(maps.glob("*.pdf"))) == 2
    html = tree / "_book" / "html"
    page = (html / "maps" / "maps.html").read_text(encoding="utf-8")
    assert f"{CHAPTER} across lr" in page
    assert "between lr = 0.1 (holds) and 10.0 (fails; undecided at 1.0)" in page
    assert page.count("<img") >= 2
    for image in maps.glob("*.png"):
        assert (html / "_images" / image.name).is_file() or image.name in page
