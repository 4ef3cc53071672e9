"""``ntpnb explore``: a grid's runs, their trees, the cache, resume after Ctrl-C, Dask, compare.

The fast tests check what an explore refuses and records before anything runs. The slow ones run
a tiny chapter (:data:`BODY`, named like chapter 3 so that its profiles exist; it checks
``toy_lr`` against a bound, so the check's decision changes across the grid) end to end, and
chapter 3 itself at the quick profile; the maps of :mod:`ntpnb.explore._draw` are drawn at their
end (their own tests check them).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import jupytext
import pytest

from ntpnb import cli
from ntpnb.book._compare import compare_explores, explore_runs, print_comparison
from ntpnb.chapter import _parameters as profiles
from ntpnb.cli._checks import check_command
from ntpnb.cli._parser import EXPLORE_EXAMPLE
from ntpnb.errors import NTPError
from ntpnb.explore import split_parameters
from ntpnb.explore._grid import parse_axis
from ntpnb.records._run import load_chapter_run
from ntpnb.records._tree import TreeRecord, write_tree_record
from ntpnb.runner._explore import check_explore, explore

from conftest import ROOT, local_dask
from fake_notebooks import fake_notebook

CHAPTER = "03_gd_implicit_bias"

BODY = """\
import os
import time

from ntpnb.chapter._claims import ClaimLog

claims = ClaimLog("{name}", profile, output_dir, seed=seed)
end = time.monotonic() + float(os.environ.get("NTPNB_TEST_SLEEP", "0"))
gate = os.environ.get("NTPNB_TEST_GATE", "") + f"-{{toy_lr}}"  # a file whose creation ends the sleep
while time.monotonic() < end and not os.path.exists(gate):
    time.sleep(0.1)
claims.check("A9", "a step below one", toy_lr + seed / 100, "<", 1.0)
print("toy_lr", toy_lr, "seed", seed)
claims.conclude()
"""


@pytest.fixture
def project(tmp_path):
    """A project whose one chapter is :data:`BODY`, with chapter 3's parameters cell and profiles."""
    root = tmp_path / "project"
    (root / "notebooks").mkdir(parents=True)
    (root / "_toc.yml").write_text("format: jb-book\nroot: x\n")
    cells = jupytext.read(ROOT / "notebooks" / f"{CHAPTER}.md").cells
    (cell,) = [c.source for c in cells if "parameters" in c.metadata.get("tags", [])]
    run = tuple(f"{name} = " for name in profiles.RUN_PARAMETERS)  # fake_notebook writes them
    lines = "\n".join(line for line in cell.splitlines() if not line.startswith(run))
    (root / "notebooks" / f"{CHAPTER}.md").write_text(fake_notebook(BODY.format(name=CHAPTER), lines))
    return root


def test_a_refused_grid_writes_nothing(project):
    cases = [
        (["toy_lr=0.1,-1"], "toy_lr='-1' is not a number > 0"),
        (["toy_lr=0.1,1", "toy_iters=0"], "toy_iters='0' is not a whole number >= 1"),
        (["toy_lr=0.1,1", "n_frames=2,3", "toy_iters=5,6"], "a grid has one or two axes"),
        (["seed=1,2"], "seed is not an axis"),
    ]
    for pairs, message in cases:
        axes, fixed = split_parameters(pairs)
        with pytest.raises(NTPError, match=None) as caught:
            run_quietly(project, "03", axes, fixed, profile="quick")
        assert message in str(caught.value)
    with pytest.raises(NTPError, match="--seeds must be a positive integer"):
        run_quietly(project, "03", [parse_axis("toy_lr=0.1,1")], seeds=0)
    with pytest.raises(NTPError, match="no notebook named 'zz'"):
        run_quietly(project, "zz", [parse_axis("toy_lr=0.1,1")])
    with pytest.raises(NTPError, match="lies inside the project's notebooks/"):
        run_quietly(project, "03", [parse_axis("toy_lr=0.1,1")], output_dir=project / "notebooks" / "x")
    assert not (project / "outputs").exists()


def test_the_record_names_the_grid_its_seeds_and_each_points_tree(project):
    axes, fixed = split_parameters(["toy_lr=0.01..1:log:3", "toy_iters=7", "n_frames=2,3"])
    checked = check_explore(project, "03", axes, fixed, profile="quick", seeds=2)
    tree = (
        project.resolve()
        / "outputs"
        / "explore"
        / CHAPTER
        / "profile=quick,toy_lr=0.01..1_log_3,n_frames=2,3,toy_iters=7,seeds=2"
    )
    assert checked.tree == tree
    record = checked.record
    assert record["chapter"] == CHAPTER and record["profile"] == "quick" and record["seeds"] == [0, 1]
    assert record["axes"] == [
        {"name": "toy_lr", "values": [0.01, 0.1, 1.0], "spec": "0.01..1:log:3", "log": True},
        {"name": "n_frames", "values": [2, 3], "spec": "2,3", "log": False},
    ]
    assert record["fixed"] == {"toy_iters": 7}  # as the parameter takes it: a number stays a number
    assert record["budgets"] == {"toy_iters": 100_000}  # the paper's: a shorter point's map says so
    assert record["paper"] == {"toy_lr": 0.5, "n_frames": 40}  # each axis's: the maps mark it
    assert [p["dir"] for p in record["points"][:2]] == [
        "points/toy_lr=0.01,n_frames=2",
        "points/toy_lr=0.01,n_frames=3",
    ]
    assert record["points"][5]["values"] == {"toy_lr": 1.0, "n_frames": 3}
    # each point is a run as reproduce checks it, into its tree, named by its point
    point = checked.points[1]
    assert (
        point.tree == tree / "points" / "toy_lr=0.01,n_frames=3" and point.point == "toy_lr=0.01,n_frames=3"
    )
    assert point.record.overrides == {"toy_iters": "7", "toy_lr": "0.01", "n_frames": "3"}
    assert point.chosen[0][1]["toy_lr"] == 0.01 and point.chosen[0][1]["n_frames"] == 3
    assert not (project / "outputs").exists()


def test_a_tree_holds_one_grid(project):
    axes = [parse_axis("toy_lr=0.1,1")]
    checked = check_explore(project, "03", axes, {}, profile="quick", output_dir=project / "out")
    (project / "out").mkdir()
    (project / "out" / "explore.json").write_text(json.dumps(checked.record))
    check_explore(project, "03", axes, {}, profile="quick", output_dir=project / "out")  # the same request
    # another number of seeds is another request: its own tree by default, refused in this one
    with pytest.raises(
        NTPError, match=re.escape("(its seeds 0, 1, 2 there, 0, 1 asked: see its explore.json)")
    ):
        check_explore(project, "03", axes, {}, profile="quick", output_dir=project / "out", seeds=2)
    assert check_explore(project, "03", axes, {}, profile="quick", seeds=2).tree.name.endswith(",seeds=2")
    assert check_explore(project, "03", axes, {}, profile="quick", seeds=1).tree.name.endswith(",seeds=1")
    with pytest.raises(
        NTPError, match=re.escape("another grid (its axes toy_lr=0.1,1 there, toy_lr=0.1,2 asked")
    ):
        check_explore(
            project, "03", [parse_axis("toy_lr=0.1,2")], {}, profile="quick", output_dir=project / "out"
        )
    # a point's tree that holds a run of another setting is refused as reproduce refuses it
    (project / "out2" / "points" / "toy_lr=0.1").mkdir(parents=True)
    write_tree_record(project / "out2" / "points" / "toy_lr=0.1", TreeRecord("paper"))
    with pytest.raises(NTPError, match="holds a run of profile paper"):
        check_explore(project, "03", axes, {}, profile="quick", output_dir=project / "out2")


def listing(folder: Path) -> list[str]:
    """Every path under ``folder``, relative to it (hidden ones too: a lock file shows)."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def test_every_output_folder_holds_one_kind_of_tree_and_nothing_of_the_users(project, capsys):
    """--out refuses a run's tree to explore, an explore tree to reproduce, and a folder of one's own."""
    root = ["--root", str(project)]
    mine = project / "mine"  # the user's own folder: a notebook of the same name as a chapter's output
    mine.mkdir()
    (mine / f"{CHAPTER}.ipynb").write_text("my notes")
    (mine / "notes.txt").write_text("mine")
    run_tree = project / "outputs" / "runs" / "profile=quick"
    run_tree.mkdir(parents=True)
    write_tree_record(run_tree, TreeRecord("quick", {}, (0,), (CHAPTER,)))
    explore_tree = project / "grid"
    explore_tree.mkdir()
    (explore_tree / "explore.json").write_text(json.dumps({"chapter": CHAPTER, "axes": [{"name": "toy_lr"}]}))
    before = listing(project)
    refused = {
        ("explore", "03", "-p", "toy_lr=0.1,1", "--out", str(run_tree)): (
            f"--out {run_tree} holds a run's tree (profile quick; seed 0; run.json); ntpnb explore writes "
            "an explore tree, never into another kind of tree"
        ),
        ("reproduce", "03", "--profile", "quick", "--out", str(explore_tree)): (
            f"--out {explore_tree} holds an explore tree of {CHAPTER} across toy_lr (explore.json); "
            "ntpnb reproduce writes a run's tree"
        ),
        ("reproduce", "03", "--profile", "quick", "--out", str(mine)): (
            f"--out {mine} is a folder of your own, not a tree ntpnb wrote: it holds files ntpnb did not "
            f"write ({CHAPTER}.ipynb, notes.txt). Choose a new or empty folder, or add --force"
        ),
        ("explore", "03", "-p", "toy_lr=0.1,1", "--seeds", "2", "--out", str(project / "outputs")): (
            f"is the book's own tree, which only the book's run writes (profile paper, no -p); leave out "
            f"--out (this run then goes to {project.resolve() / 'outputs' / 'explore' / CHAPTER}/"
            "toy_lr=0.1,1,seeds=2) or choose another folder"
        ),
        ("explore", "03", "-p", "toy_lr=0.1,1", "--out", str(mine)): "is a folder of your own",
        ("explore", "03", "-p", "toy_lr=0.1,1", "--out", str(mine / "notes.txt")): (
            f"the output folder {mine / 'notes.txt'} exists and is not a folder (--out {mine / 'notes.txt'} "
            "is a file)"
        ),
    }
    for argv, said in refused.items():
        assert cli.main([*argv, *root]) == 2, argv
        err = capsys.readouterr().err
        assert said in err, err
        with pytest.raises(NTPError, match=re.escape(said[:40])):
            check_command([*argv, *root])
    assert listing(project) == before  # nothing written: no lock, no record, no folder
    # --force writes into a folder of one's own (its outputs replace files of the same names)
    assert check_command(["reproduce", "03", "--out", str(mine), "--force", *root]) is not None
    assert check_command(["explore", "03", "-p", "toy_lr=0.1,1", "--out", str(mine), "--force", *root])
    # never into a tree of another kind; and a folder holding both kinds is read by no command
    with pytest.raises(NTPError, match="never into another kind of tree"):
        check_command(["explore", "03", "-p", "toy_lr=0.1,1", "--out", str(run_tree), "--force", *root])
    write_tree_record(explore_tree, TreeRecord("quick"))
    for argv in (["book", "--run", str(explore_tree), *root], ["compare", str(explore_tree), str(run_tree)]):
        assert cli.main(argv) == 2
        assert "holds both a run (run.json) and an explore (explore.json)" in capsys.readouterr().err
    assert not (explore_tree / "_book").exists()


def test_an_out_refused_for_its_place_suggests_the_explores_own_folder(project, capsys, monkeypatch):
    """The book's tree, or a folder in the sources: the hint is the explore's folder, never a run's."""
    monkeypatch.chdir(project)  # --out as a user types it, relative to the project
    own = project.resolve() / "outputs" / "explore" / CHAPTER / "toy_lr=0.1,1,seeds=1"
    before = listing(project)
    for out in ("outputs", "notebooks/grid"):
        assert cli.main(["explore", "03", "-p", "toy_lr=0.1,1", "--seeds", "1", "--out", out]) == 2
        err = capsys.readouterr().err
        assert f"--out {out} " in err and f"goes to {own})" in err, err
        assert "outputs/runs" not in err, err
    assert listing(project) == before  # refused: nothing written


def test_the_command_line_is_checked_as_explore_checks_it(project):
    assert check_command(["explore", "03", "--root", str(project), "-p", "toy_lr=0.1,1"]).chapter == "03"
    with pytest.raises(NTPError, match="explore needs an axis"):
        check_command(["explore", "03", "--root", str(project), "-p", "toy_lr=0.1"])
    assert check_command(EXPLORE_EXAMPLE.split()[1:]) is not None  # the example of --help


def run_quietly(root, *args, scheduler=None, **kwargs):
    """Check an explore (:func:`check_explore` ``ARGS``), run it; its result and progress lines."""
    lines: list[str] = []
    done = explore(root, check_explore(root, *args, **kwargs), log=lines.append, scheduler=scheduler)
    return done, lines


def run_on_dask(root, pairs, out):
    """``pairs``'s grid of :data:`CHAPTER` at the quick profile, two seeds, into ``out``, on Dask."""
    with local_dask(processes=True) as client:
        axes, fixed = split_parameters(pairs)
        done, _ = run_quietly(
            root,
            "03",
            axes,
            fixed,
            profile="quick",
            seeds=2,
            output_dir=out,
            scheduler=client.scheduler.address,
        )
    return done


@pytest.mark.slow
def test_a_grid_runs_every_point_at_every_seed_into_its_tree_then_is_cached(project):
    axes, fixed = split_parameters(["toy_lr=0.5,1.5", "toy_iters=9"])
    done, lines = run_quietly(project, "03", axes, fixed, profile="quick", seeds=2, jobs=2)
    tree = done.tree
    assert [(r.point, r.seed, r.sweep) for r in done.results] == [
        ("toy_lr=0.5", 0, False),
        ("toy_lr=0.5", 1, True),
        ("toy_lr=1.5", 0, False),
        ("toy_lr=1.5", 1, True),
    ]
    assert all(r.complete for r in done.results)
    assert [r.ok for r in done.results] == [True, True, False, False]  # the check fails at 1.5
    record = json.loads((tree / "explore.json").read_text())
    assert record["seeds"] == [0, 1] and [p["dir"] for p in record["points"]] == [
        "points/toy_lr=0.5",
        "points/toy_lr=1.5",
    ]
    for point, lr in (("toy_lr=0.5", 0.5), ("toy_lr=1.5", 1.5)):
        for seed, where in ((0, tree / "points" / point), (1, tree / "points" / point / "seeds" / "seed=1")):
            claims = load_chapter_run(where / "claims" / f"{CHAPTER}.json")
            assert claims.complete and claims.seed == seed
            assert claims.parameters["toy_lr"] == lr and claims.parameters["toy_iters"] == 9
            (check,) = claims.checks
            assert check.passed == (lr + seed / 100 < 1)
            assert (where / "notebooks" / f"{CHAPTER}.ipynb").is_file()
    # the progress says the points done; then the maps are drawn, and summed up a line per check
    assert any("2 of 2 points done" in line for line in lines), lines
    assert (tree / "maps" / "maps.json").is_file() and done.maps
    assert "A9" in lines[-1], lines
    # a second explore runs nothing
    again, lines = run_quietly(project, "03", axes, fixed, profile="quick", seeds=2, jobs=2)
    assert all(r.cached for r in again.results)
    assert "[4/4] toy_lr=1.5 seed 1  cached" in "\n".join(lines)


def wait_for(condition, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def running_points(tree: Path) -> list[str]:
    """The points of the explore tree ``tree`` whose chapter is executing now (its claims staged)."""
    return sorted({p.parents[3].name for p in tree.glob(f"points/*/.staging/*/claims/{CHAPTER}.json")})


@pytest.mark.slow
def test_an_interrupted_explore_stops_quietly_and_resumes(project):
    gates = project / "gate"
    cmd = [sys.executable, "-m", "ntpnb.cli", "explore", "03", "--root", str(project), "--profile", "quick"]
    cmd += ["-p", "toy_lr=0.2,0.4,0.6", "--seeds", "1", "--jobs", "1"]
    env = {**os.environ, "NTPNB_TEST_SLEEP": "60", "NTPNB_TEST_GATE": str(gates), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    tree = project.resolve() / "outputs" / "explore" / CHAPTER / "profile=quick,toy_lr=0.2,0.4,0.6,seeds=1"
    wait_for(lambda: running_points(tree), "a first point running")
    (first,) = running_points(tree)
    Path(f"{gates}-{first.partition('=')[2]}").touch()  # it ends; the next starts, and sleeps
    key = tree / "points" / first / "notebooks" / f"{CHAPTER}.key.json"
    wait_for(lambda: key.is_file() and running_points(tree) not in ([], [first]), "the next point running")
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in a terminal
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in out + err
    assert "interrupted after 1 of 3 notebook runs; completed outputs kept; rerun to resume" in err
    assert json.loads((tree / "explore.json").read_text())["seeds"] == [0]
    assert not list(tree.rglob(".staging"))
    # the rerun resumes: the finished point is cached, the others run
    axes, fixed = split_parameters(["toy_lr=0.2,0.4,0.6"])
    for value in ("0.2", "0.4", "0.6"):
        Path(f"{gates}-{value}").touch()
    done, _ = run_quietly(project, "03", axes, fixed, profile="quick", seeds=1, jobs=2)
    assert [r.cached for r in done.results] == [r.point == first for r in done.results]
    assert all(r.ok for r in done.results) and (tree / "maps" / "maps.json").is_file()


@pytest.mark.slow
def test_a_grid_on_a_dask_cluster_equals_the_local_one(project, tmp_path, capsys):
    axes, fixed = split_parameters(["toy_lr=0.5,1.5"])
    local, _ = run_quietly(
        project, "03", axes, fixed, profile="quick", seeds=2, output_dir=tmp_path / "local"
    )
    remote = run_on_dask(project, ["toy_lr=0.5,1.5"], tmp_path / "dask")
    assert [r.complete for r in remote.results] == [True] * 4
    assert sorted(explore_runs(local.tree)) == [
        "toy_lr=0.5 seed 0",
        "toy_lr=0.5 seed 1",
        "toy_lr=1.5 seed 0",
        "toy_lr=1.5 seed 1",
    ]
    assert compare_explores(local.tree, remote.tree) == 0
    assert "the same printed outputs and claim checks in all 4 runs" in capsys.readouterr().out
    # a changed printed line at one point and seed is found, and named
    executed = remote.tree / "points" / "toy_lr=1.5" / "seeds" / "seed=1" / "notebooks" / f"{CHAPTER}.ipynb"
    executed.write_text(executed.read_text().replace("seed 1", "seed 7"))
    assert print_comparison(local.tree, remote.tree) == 1
    out = capsys.readouterr().out
    assert "toy_lr=1.5 seed 1:" in out and "+ toy_lr 1.5 seed 7" in out


@pytest.mark.slow
def test_chapter_3_over_a_threshold_at_the_quick_profile(tmp_path, capsys):
    """Chapter 3's A9 gap check over its threshold: each point's record holds its threshold, its check."""
    axes, fixed = split_parameters(["toy_max_gap_ratio=1e-6,0.05"])
    out = tmp_path / "ch3"
    done, _ = run_quietly(ROOT, "03", axes, fixed, profile="quick", seeds=2, output_dir=out, jobs=2)
    assert [r.complete for r in done.results] == [True] * 4
    for point, ratio in (("toy_max_gap_ratio=1e-06", 1e-6), ("toy_max_gap_ratio=0.05", 0.05)):
        for where in (out / "points" / point, out / "points" / point / "seeds" / "seed=1"):
            record = load_chapter_run(where / "claims" / f"{CHAPTER}.json")
            assert record.parameters["toy_max_gap_ratio"] == ratio
            gap = [c for c in record.checks if c.claim == "A9" and c.relation == "<" and c.target == ratio]
            assert gap, [(c.claim, c.what, c.relation, c.target) for c in record.checks]
    again, _ = run_quietly(ROOT, "03", axes, fixed, profile="quick", seeds=2, output_dir=out, jobs=2)
    assert all(r.cached for r in again.results)
    remote = run_on_dask(ROOT, ["toy_max_gap_ratio=1e-6,0.05"], tmp_path / "dask")
    capsys.readouterr()
    assert compare_explores(out, remote.tree) == 0, capsys.readouterr().out
