"""Maps of checks across a grid (ntpnb.explore._results to _draw): decisions, boundaries, figures, trees."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import itertools
import json
import shlex
import warnings
from dataclasses import replace

import matplotlib
import pytest

from ntpnb.book._trees import shown
from ntpnb.chapter._claims import ClaimLog
from ntpnb.chapter._plotting import LEGIBLE_PIXELS, PHONE_PIXELS, figure_record, show_figure, text_pixels
from ntpnb.errors import InvalidDataError, NTPError
from ntpnb.evidence._samples import sample_of
from ntpnb.evidence._series import Series, Sweep, series_of
from ntpnb.explore import (
    Axis,
    Boundary,
    Grid,
    GridResults,
    boundary_summary,
    check_maps,
    draw_map,
    point_check,
    point_run,
    run_grid,
    summary_lines,
)
from ntpnb.explore._folder import write_maps
from ntpnb.explore._grid import point_label
from ntpnb.explore._read import load_explore
from ntpnb.records._files import is_temporary
from ntpnb.records._places import output_tree
from ntpnb.records._run import ChapterRun

from .map_trees import CHAPTER, write_explore

LINE = Grid((Axis("lr", (1, 2, 3, 4, 5, 6)),))


def below(threshold):
    """A measure whose check ``lr < threshold`` holds below it at every seed, and one that always holds."""

    def measure(point, seed):
        return [
            point_check("A2", "error after the budget", point["lr"] + 0.01 * seed, "<", threshold),
            point_check("A2", "loss is finite", 1.0, ">", 0.0, kind="sanity"),
        ]

    return measure


def test_a_check_made_in_process_is_decided_as_the_claim_log_decides_it(tmp_path):
    log = ClaimLog(CHAPTER, "", tmp_path, 0)
    sample = sample_of("mean", [0.98 + 0.01 * (i % 3) for i in range(60)])
    cases = [
        ("A2", "x", 1.0000665, "~", 1.0, {"tol": 1e-6}),
        ("A2", "y", 3, "<", 4, {}),
        ("A2", "z", sample, ">", 0.985, {}),
        ("A2", "w", sample, "<", 0.99, {"kind": "measurement"}),
    ]
    with contextlib.redirect_stdout(io.StringIO()):
        logged = [log.check(*args[:5], **args[5]).check for args in cases]
    made = [point_check(*args[:5], **args[5]) for args in cases]
    assert made == logged
    assert made[0].measured == "1.0001" and not made[0].passed  # a failure prints its digits
    with pytest.raises(InvalidDataError, match="unknown relation"):
        point_check("A2", "x", 1.0, "<>", 0.0)
    with pytest.raises(InvalidDataError, match="a measurement is decided pooled"):
        point_check("A2", "x", 1.0, "<", 0.0, kind="measurement")
    with pytest.raises(InvalidDataError, match="is nan"):
        point_check("A2", "x", float("nan"), "<", 0.0)


def test_a_boundary_on_a_line_is_bracketed_by_the_grid_values_either_side():
    results = run_grid(LINE, (0, 1, 2), below(3.5))
    error, finite = check_maps(results)
    assert error.holds == {(1,): True, (2,): True, (3,): True, (4,): False, (5,): False, (6,): False}
    assert error.boundaries == (Boundary("lr", 3, 4, True, {}),)
    assert error.values[(2,)] == (2.0, 2.01, 2.02)
    assert error.share[(3,)] == 1.0 and error.share[(4,)] == 0.0
    # a check that holds everywhere has no boundary and says so
    assert finite.boundaries == () and set(finite.holds.values()) == {True}
    lines = summary_lines(results)
    assert lines[0] == (
        "A2 error after the budget (required < 3.5): holds at 3 of 6 points (lr = 1, 2 and 3), fails at 3; "
        "between lr = 3 (holds) and 4 (fails)"
    )
    assert lines[1].endswith("holds at every point; no boundary: it holds at every point")
    # a page may name the axis by its symbol
    named = boundary_summary(error, results.grid, {"lr": r"$\eta$"})
    assert named == r"between $\eta$ = 3 (holds) and 4 (fails)"


def test_a_flip_back_gives_two_boundaries_and_the_seeds_share_is_per_seed():
    # holds at 2..4 only; at lr = 4 seed 2 alone misses: the point fails (every seed must hold)
    def measure(point, seed):
        value = abs(point["lr"] - 3) + (0.6 if (point["lr"], seed) == (4, 2) else 0.0)
        return [point_check("A2", "distance", value, "<=", 1.2)]

    (m,) = check_maps(run_grid(LINE, (0, 1, 2), measure))
    assert m.share[(4,)] == pytest.approx(2 / 3)
    assert m.holds[(4,)] is False
    assert m.boundaries == (Boundary("lr", 1, 2, False, {}), Boundary("lr", 3, 4, True, {}))


def without(results, point, seed):
    """``results`` without the run at ``point`` and ``seed`` (a run that did not happen)."""
    runs = tuple(r for r in results.runs if (r.point, r.seed) != (point_label(point), seed))
    return GridResults(results.grid, results.seeds, runs)


def test_an_undecided_point_breaks_the_bracket_and_says_so():
    results = run_grid(LINE, (0, 1), below(4.5))
    # lr = 4 holds at seed 0, and seed 1 did not run there: undecided
    (error, finite) = check_maps(without(results, {"lr": 4}, 1))
    assert error.holds[(4,)] is None and finite.holds[(4,)] is None
    assert error.boundaries == (Boundary("lr", 3, 5, True, {}, (4,)),)
    assert error.share[(4,)] == 1.0 and error.values[(4,)] == (4.0,)
    assert finite.boundaries == ()  # undecided is no decision: no boundary
    lines = summary_lines(without(results, {"lr": 4}, 1))
    assert lines[0].endswith("between lr = 3 (holds) and 5 (fails; undecided at 4)")
    assert "holds at 5 of 6 points" in lines[1] and "undecided at 1" in lines[1]
    # a seed that ran and failed decides a check decided at each seed, whatever the others did
    (error, _) = check_maps(without(results, {"lr": 5}, 1))
    assert error.holds[(5,)] is False
    # a run that stopped counts as not run, and its checks as far as they went
    runs = tuple(dataclasses.replace(r, complete=(r.point, r.seed) != ("lr=2", 0)) for r in results.runs)
    (error, _) = check_maps(GridResults(LINE, (0, 1), runs))
    assert error.holds[(2,)] is None and error.share[(2,)] == 1.0


def expected_heatmap_boundaries(xs, ys, holds):
    """The boundaries of ``holds(x, y)`` by brute force, along each axis at each value of the other."""
    found = set()
    for y in ys:
        for a, b in itertools.pairwise(xs):
            if holds(a, y) != holds(b, y):
                found.add(("x", a, b, holds(a, y), ("y", y)))
    for x in xs:
        for a, b in itertools.pairwise(ys):
            if holds(x, a) != holds(x, b):
                found.add(("y", a, b, holds(x, a), ("x", x)))
    return found


def test_the_boundaries_of_a_heatmap_are_found_along_each_axis_at_each_value_of_the_other():
    xs, ys = (0.1, 0.3, 1.0, 3.0), (1, 2, 4)
    grid = Grid((Axis("x", xs, log=True), Axis("y", ys)))
    results = run_grid(grid, (0, 1), lambda p, s: [point_check("B3", "x y", p["x"] * p["y"], "<", 1.5)])
    (m,) = check_maps(results)
    found = {(b.axis, b.lower, b.upper, b.holds_below, *b.fixed.items()) for b in m.boundaries}
    assert found == expected_heatmap_boundaries(xs, ys, lambda x, y: x * y < 1.5)
    assert len(found) == 4  # three along x (one per y), one along y (at x = 1)
    assert m.holds[(1.0, 1)] is True and m.holds[(1.0, 2)] is False


SPREAD = [0.987 + 0.02 * ((i % 2) * 2 - 1) for i in range(100)]  # mean 0.987, se 0.002 per seed


def test_a_statistical_check_is_decided_on_its_trials_pooled_over_the_seeds_as_the_verdicts_decide():
    """A mean of 0.987 misses "> 0.99" at each seed and pooled over 5 seeds (only surer there)."""
    grid = Grid((Axis("shift", (0.0, 0.01)),))

    def measure(point, seed):
        values = [v + point["shift"] for v in SPREAD]
        return [point_check("B11", "mean corr", sample_of("mean", values), ">", 0.99)]

    seeds = tuple(range(5))
    results = run_grid(grid, seeds, measure)
    (m,) = check_maps(results)
    assert m.basis == "pooled"
    assert m.share[(0.0,)] == 0.0  # every seed's own estimate misses the bound ...
    assert m.holds[(0.0,)] is False  # ... and pooled it is missed too, as the verdicts decide
    assert m.share[(0.01,)] == 1.0
    assert m.holds[(0.01,)] is True
    assert m.boundaries == (Boundary("shift", 0.0, 0.01, False, {}),)
    for shift in (0.0, 0.01):  # the verdicts' decision of the same records
        records = {
            r.seed: ChapterRun(CHAPTER, "quick", r.checks, seed=r.seed, complete=True)
            for r in results.runs
            if r.point == point_label({"shift": shift})
        }
        (series,) = series_of(Sweep(records[0], records))
        assert m.holds[(shift,)] is series.established
    # one instance per seed of an "instances" test: one seed alone cannot decide
    single = run_grid(
        grid,
        (0,),
        lambda p, s: [point_check("B11", "mean", sample_of("instances", [0.5]), ">", 0.1)],
    )
    (m,) = check_maps(single)
    assert set(m.holds.values()) == {None}
    assert not Series({0: single.runs[0].checks[0]}).decidable


def test_a_map_shades_a_change_of_decision_only_where_both_sides_are_settled():
    """M5's case: estimates a hair either side of "> 0.99" within their noise are no boundary."""
    grid = Grid((Axis("n", (4, 16, 32, 64)),))
    means = {4: 0.999, 16: 0.991, 32: 0.989, 64: 0.95}  # 16 and 32 within the noise of 0.99

    def measure(point, seed):
        values = [means[point["n"]] + 0.02 * ((i % 2) * 2 - 1) for i in range(20)]
        return [point_check("B10", "mean local corr", sample_of("mean", values), ">", 0.99)]

    (m,) = check_maps(run_grid(grid, (0, 1), measure))
    assert [m.holds[(n,)] for n in (4, 16, 32, 64)] == [True, None, None, False]
    (boundary,) = m.boundaries  # from the last settled hold to the first settled failure
    assert (boundary.lower, boundary.upper, boundary.undecided) == (4, 64, (16, 32))
    # the verdicts' own rule still decides each point on its estimate: 16 holds, 32 is missed
    records = {0: ChapterRun(CHAPTER, "quick", tuple(measure({"n": 32}, 0)), seed=0, complete=True)}
    (series,) = series_of(Sweep(records[0], records))
    assert not series.established and not series.settled and series.outcome == "missed"


def test_a_seed_independent_check_is_decided_once_and_fails_where_seeds_measure_differently():
    grid = Grid((Axis("n", (1, 2)),))

    def measure(point, seed):
        value = 0.5 + (0.1 * seed if point["n"] == 2 else 0.0)  # at n = 2 it is not seed-independent
        return [point_check("A1", "gap", value, "<", 1.0, seed_independent=True)]

    (m,) = check_maps(run_grid(grid, (0, 1), measure))
    assert m.basis == "seed-independent"
    assert m.holds == {(1,): True, (2,): False}


def test_grids_and_results_refuse_what_is_not_a_grid():
    with pytest.raises(InvalidDataError, match="one or two axes"):
        run_grid(Grid(()), (0,), below(1))
    with pytest.raises(InvalidDataError, match="repeat a seed"):
        run_grid(LINE, (0, 0), below(1))
    with pytest.raises(InvalidDataError, match="not a Check"):
        run_grid(LINE, (0,), lambda p, s: [1.0])
    progress = []
    run_grid(LINE, (0, 1), below(1), progress=lambda done, total: progress.append((done, total)))
    assert progress == [(i, 12) for i in range(1, 13)]
    stray = point_run({"lr": 9}, 0, ())
    with pytest.raises(InvalidDataError, match="lr=9 is not a point of the grid"):
        check_maps(GridResults(LINE, (0,), (stray,)))


def legible_on_a_phone(fig, tmp_path):
    path = tmp_path / "fig.png"
    fig.savefig(path)
    from PIL import Image

    with Image.open(path) as png:
        width = png.size[0]
    record = figure_record(fig, width, float(matplotlib.rcParams["savefig.dpi"]))
    return text_pixels(record["text_points"], record["width_points"], min(width, PHONE_PIXELS))


def test_maps_are_drawn_over_one_and_two_axes_without_warnings_legible_on_a_phone(tmp_path):
    import matplotlib.pyplot as plt

    line = run_grid(Grid((Axis("lr", (0.01, 0.1, 1.0, 10.0), log=True),)), (0, 1), below(0.5))
    heat = run_grid(
        Grid((Axis("x", (0.1, 0.3, 1.0)), Axis("name", ("a", "b")))),
        (0, 1),
        lambda p, s: [point_check("A2", "interval", p["x"], "in", (0.2, 2.0))],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for results in (line, heat):
            for m in check_maps(results):
                fig = draw_map(m, results.grid)
                assert fig.axes
                assert legible_on_a_phone(fig, tmp_path) >= LEGIBLE_PIXELS
                plt.close(fig)
        fig, ax = plt.subplots()
        assert draw_map(check_maps(line)[0], line.grid, ax=ax) is fig
        plt.close(fig)
    fig = draw_map(check_maps(line)[0], line.grid)
    assert fig.axes[0].get_xscale() == "log" and fig.axes[0].get_yscale() == "log"  # 0.01 to 10
    plt.close(fig)


def test_a_chapter_shows_a_map_with_show_figure_without_a_warning(tmp_path):
    """What a chapter does with a map: show_figure warns (failing the book) on text too small anywhere."""
    wide = run_grid(
        Grid((Axis("x", tuple(range(10))), Axis("y", (1, 2, 3)))),
        (0, 1),
        lambda p, s: [point_check("A2", "a long description of the value measured, ||W_k||", p["x"], "<", 4)],
    )
    layout = output_tree(tmp_path)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("error")
        for results in (run_grid(LINE, (0, 1), below(3.5)), wide):
            for m in check_maps(results):
                show_figure(draw_map(m, results.grid), m.slug, layout)
    assert len(list(layout.figures.glob("*.png"))) == 3


def test_write_maps_says_each_map_it_draws_or_keeps(tmp_path):
    results = run_grid(LINE, (0, 1), below(3.5))
    told: list[tuple[str, str]] = []
    write_maps(results, tmp_path, progress=lambda phase, share: told.append((phase, share)))
    n = len(check_maps(results))
    assert told == [("drawing the maps", f"{i} of {n}") for i in range(1, n + 1)]
    told.clear()
    write_maps(results, tmp_path, progress=lambda phase, share: told.append((phase, share)))
    assert told == [("maps drawn before", f"{i} of {n}") for i in range(1, n + 1)]


def test_write_maps_writes_figures_data_and_page_atomically(tmp_path, monkeypatch):
    results = run_grid(LINE, (0, 1), below(3.5))
    folder = tmp_path / "maps"
    paths = write_maps(results, folder)
    names = sorted(p.name for p in paths)
    slugs = [m.slug for m in check_maps(results)]
    assert names == sorted([f"{s}.{ext}" for s in slugs for ext in ("png", "pdf")] + ["maps.json", "maps.md"])
    data = json.loads((folder / "maps.json").read_text())
    first = data["maps"][0]
    assert first["boundaries"] == [
        {"axis": "lr", "lower": 3, "upper": 4, "holds_below": True, "fixed": {}, "undecided": []}
    ]
    assert [p["holds"] for p in first["points"]] == [True, True, True, False, False, False]
    before = {p.name: p.read_bytes() for p in folder.iterdir()}

    # a write that stops midway leaves the last complete maps and no temporary file
    import ntpnb.explore._folder as folder_module

    def broken(fig, stem):
        raise KeyboardInterrupt

    monkeypatch.setattr(folder_module, "write_figure", broken)
    with pytest.raises(KeyboardInterrupt):
        write_maps(run_grid(LINE, (0, 1), below(5.5)), folder)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert not [p for p in folder.iterdir() if is_temporary(p)]


def test_write_maps_draws_a_map_again_only_when_its_data_or_its_files_changed(tmp_path, monkeypatch):
    import ntpnb.explore._folder as folder_module

    folder = tmp_path / "maps"
    write_maps(run_grid(LINE, (0, 1), below(3.5)), folder)
    drawn = []
    draw = folder_module.draw_map

    def counted(check_map, grid, labels):
        drawn.append(check_map.slug)
        return draw(check_map, grid, labels=labels)

    monkeypatch.setattr(folder_module, "draw_map", counted)
    write_maps(run_grid(LINE, (0, 1), below(3.5)), folder)  # the same data: every figure kept
    assert drawn == []
    slug = check_maps(run_grid(LINE, (0, 1), below(3.5)))[0].slug
    (folder / f"{slug}.png").write_bytes(b"damaged")
    write_maps(run_grid(LINE, (0, 1), below(3.5)), folder)  # a changed file is not trusted
    assert drawn == [slug]
    assert (folder / f"{slug}.png").read_bytes().startswith(b"\x89PNG")
    write_maps(run_grid(LINE, (0, 1), below(4.5)), folder)  # other data: drawn again
    assert drawn == [slug, slug]
    marked = replace(run_grid(LINE, (0, 1), below(4.5)), paper={"lr": 2.0})
    write_maps(marked, folder)  # the paper's setting marked: every map drawn again
    assert drawn[2:] == [m.slug for m in check_maps(marked)]


# -- an explore tree ----------------------------------------------------------------------------------


TREE_GRID = Grid((Axis("lr", (0.1, 1.0, 10.0), "0.1..10:log:3", log=True),))


def tree_checks(point, seed):
    return [
        ("A2", "error after the budget", point["lr"] * (1 + seed / 10), "<", 2.0, {}),
        ("A2", "loss is finite", 1.0, ">", 0.0, {"kind": "sanity"}),
    ]


def test_load_explore_reads_every_point_at_every_seed_as_recorded(tmp_path):
    write_explore(tmp_path, TREE_GRID, (0, 1, 2), tree_checks, fixed={"iters": "200"})
    results = load_explore(tmp_path)
    assert results.seeds == (0, 1, 2) and results.chapter == CHAPTER and results.profile == "quick"
    assert results.grid == TREE_GRID and results.fixed == {"iters": "200"} and results.notes == ()
    assert len(results.runs) == 9
    error, finite = check_maps(results)
    assert error.holds == {(0.1,): True, (1.0,): True, (10.0,): False}
    assert error.values[(1.0,)] == pytest.approx((1.0, 1.1, 1.2))
    assert error.boundaries == (Boundary("lr", 1.0, 10.0, True, {}),)
    assert set(finite.holds.values()) == {True}


def test_a_failed_or_missing_run_is_an_undecided_point_with_the_reason(tmp_path):
    failed = [({"lr": 1.0}, 2), ({"lr": 10.0}, 0)]
    write_explore(tmp_path, TREE_GRID, (0, 1, 2), tree_checks, failed=failed)
    results = load_explore(tmp_path)
    assert results.notes == (
        "lr=1.0: seed 2 is not counted (its last run failed (ValueError: diverged))",
        "lr=10.0: seed 0 is not counted (its last run failed), nor the point's other seeds",
    )
    error, _ = check_maps(results)
    assert error.holds == {(0.1,): True, (1.0,): None, (10.0,): None}
    assert error.boundaries == ()
    assert summary_lines(results)[0].endswith(
        "holds at 1 of 3 points (lr = 0.1), fails at 0, undecided at 2; no boundary: it holds at "
        "every point where it is decided"
    )


def test_a_run_of_another_point_is_not_counted(tmp_path):
    write_explore(tmp_path, TREE_GRID, (0, 1), tree_checks)
    # the record at lr = 10 says it ran at lr = 1 (a tree put together wrongly)
    from .map_trees import write_run

    write_run(tmp_path / "points" / "lr=10.0", 0, {"lr": 1.0}, tree_checks({"lr": 1.0}, 0))
    results = load_explore(tmp_path)
    assert results.notes == (
        "lr=10.0: seed 0 is not counted (it ran with other values of the grid's parameters "
        "(lr=1.0)), nor the point's other seeds",
    )


def test_a_damaged_record_is_refused_naming_it(tmp_path):
    write_explore(tmp_path, TREE_GRID, (0, 1), tree_checks)
    record = tmp_path / "points" / "lr=0.1" / "seeds" / "seed=1" / "claims" / f"{CHAPTER}.json"
    record.write_text(record.read_text().replace('"passed": true', '"passed": false', 1))
    with pytest.raises(NTPError, match=r"claims/01_demo.json differs from what its run wrote") as raised:
        load_explore(tmp_path)
    # the command that made the tree, into the same tree, which runs that point again
    out = shlex.quote(shown(tmp_path))
    command = f"ntpnb explore 01 -p lr=0.1..10:log:3 --seeds 2 --profile quick --out {out}"
    assert f"run `{command}` again" in str(raised.value)
    (tmp_path / "explore.json").write_text('{"chapter": "x"}')
    with pytest.raises(NTPError, match=r"explore record .* is damaged"):
        load_explore(tmp_path)
    (tmp_path / "explore.json").unlink()
    with pytest.raises(NTPError, match="not an explore tree"):
        load_explore(tmp_path)


def test_a_map_says_where_a_failure_may_be_the_budget_rather_than_the_claim(tmp_path):
    """A check that fails where the run stopped before the paper's iteration count is said to."""
    grid = Grid((Axis("iters", (10, 1000), "10,1000"),))

    def checks_at(point, seed):  # converged only with the paper's budget
        return [("A9", "the gap at the end", 1.0 / point["iters"], "<", 0.01, {})]

    tree = write_explore(tmp_path / "grid", grid, [0, 1], checks_at, budgets={"iters": 1000})
    results = load_explore(tree)
    assert results.short == {(10,): "iters = 10 (the paper's 1000)"}
    notes = summary_lines(results)[1:]
    assert notes == [
        "A9 the gap at the end fails at 1 point that ran iters = 10 (the paper's 1000): iters = 10; a run "
        "that short may fail for want of iterations (the budget), not because the claim fails there"
    ]
    page = (write_maps(results, tree / "maps")[-1]).read_text()
    assert "Where a failure may be the budget, not the claim:" in page and notes[0].split(":")[0] in page
    assert json.loads((tree / "maps" / "maps.json").read_text())["budget_notes"] == notes


def test_seed_means_average_each_points_seeds_and_refuse_a_heatmap():
    from ntpnb.explore import seed_means

    results = run_grid(LINE, (0, 1, 2), below(3.5))
    corr = check_maps(results)[0]
    means = seed_means(corr)
    assert list(means) == list(LINE.axes[0].values)
    for lr, mean in means.items():
        assert mean == pytest.approx(sum(lr + 0.01 * s for s in (0, 1, 2)) / 3, rel=1e-12)
    heat = run_grid(
        Grid((Axis("x", (0.1, 1.0)), Axis("name", ("a", "b")))),
        (0,),
        lambda p, s: [point_check("A2", "interval", p["x"], "in", (0.2, 2.0))],
    )
    with pytest.raises(InvalidDataError, match="one axis"):
        seed_means(check_maps(heat)[0])


def test_format_by_point_lists_the_values_in_the_grids_order():
    from ntpnb.explore import format_by_point

    assert format_by_point({0.1: 0.5, 0.01: 0.25, 1.0: 1.0}, ".0%") == "25%, 50%, 100% at 0.01, 0.1, 1"
    assert format_by_point({4: 0.98765}, ".3f") == "0.988 at 4"


def test_fit_title_wraps_a_maps_title_anew_to_the_width():
    import matplotlib.pyplot as plt

    from ntpnb.explore import fit_title

    results = run_grid(LINE, (0,), below(3.5))
    fig, ax = plt.subplots()
    m = check_maps(results)[0]
    draw_map(m, results.grid, ax=ax)
    fit_title(ax, width=20)
    lines = ax.get_title(loc="left").split("\n")
    assert len(lines) > 1 and all(len(line) <= 20 for line in lines)
    assert " ".join(lines) == f"{m.label} {m.what}"
    plt.close(fig)
