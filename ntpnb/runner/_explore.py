"""``ntpnb explore``: a chapter at every point of a grid of its settings and at every seed, then its maps.

Every point of the grid (:mod:`ntpnb.explore._grid`) times every seed is one run of the chapter
with its own output tree, planned, cached, executed and resumed exactly as a sweep of ``ntpnb
reproduce`` is (:func:`~._plan.planned_runs`, :func:`~._run.execute_plan`): on the local pool or
as tasks of a Dask cluster (with its retries), cached by content (source, parameters, ntpnb), a
Ctrl-C keeping what finished. The explore tree (default
``<root>/outputs/explore/<chapter>/<what was asked>``)::

    explore.json                    the grid (written atomically before any run): the chapter,
                                    profile, seeds, axes, fixed overrides, each point's folder
    points/<point>/                 the point's tree at the chapter's seed (an ordinary output tree)
    points/<point>/seeds/seed=<s>/  the point's further seeds, as a sweep places them
    maps/                           a map of every check over the grid (:func:`finish_explore`)

Every input is checked first (:func:`check_explore`: the chapter, every value of every axis in
its domain, each point's run as ``reproduce`` checks it, the tree): a refused grid writes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from .._validation import as_count
from ..chapter._parameters import apply_overrides, budget_parameters, paper_setting
from ..errors import NTPError, PathError, RunInterruptedError
from ..explore._grid import Axis, Grid, checked_grid, point_label, value_text
from ..records._files import atomic_write_json, read_record
from ..records._lock import output_lock
from ..records._ownership import EXPLORE_TREE, check_output_folder
from ..records._places import (
    DEFAULT_OUTPUT_DIRNAME,
    EXPLORE_RECORD,
    EXPLORE_SEEDS,
    POINTS_DIRNAME,
    folder_name,
    tree_root,
)
from ..records._run import ChapterRun
from ._check import CheckedRun, check_run, select_notebooks

if TYPE_CHECKING:  # a run's modules load when it runs: a refused explore loads none of them
    from ._plan import RunPlan

#: The folder of ``outputs/`` that holds the explore trees, one folder per chapter.
EXPLORE_DIRNAME = "explore"
#: What defines an explore, all of which a tree's ``explore.json`` and a grid that runs into it
#: must agree on (another request gets a tree of its own: :func:`explore_tree`).
_SETTING = ("chapter", "profile", "axes", "fixed", "seeds")


@dataclass(frozen=True)
class CheckedExplore:
    """The inputs of an explore, checked: its grid, its tree, each point's checked run, its record."""

    grid: Grid
    tree: Path
    points: tuple[CheckedRun, ...]  # in the grid's order (:meth:`~ntpnb.explore._grid.Grid.points`)
    record: dict[str, Any]  # what ``explore.json`` holds


@dataclass(frozen=True)
class ExploreRun:
    """What an explore did: its tree, grid, every run's result (by point, then seed), the maps it wrote."""

    tree: Path
    grid: Grid
    results: tuple[ChapterRun, ...]
    maps: tuple[Path, ...]


def explore_tree(
    root: Path,
    chapter: str,
    profile: str,
    axes: Sequence[Axis],
    fixed: Mapping[str, str],
    seeds: int,
    output_dir: str | Path | None,
) -> Path:
    """The root of the explore tree: ``output_dir``, or ``<root>/outputs/explore/<chapter>/<what was asked>``.

    What was asked names the folder: the profile (when not ``paper``), each axis as written, the
    fixed overrides, the number of seeds (:func:`~ntpnb.records._places.folder_name`), so that
    each request has a tree of its own.

    Raises
    ------
    NTPError
        If ``output_dir`` lies at or above the project's root, inside its sources, or is the
        book's tree (:func:`~ntpnb.records._places.tree_root`).
    """
    asked: dict[str, object] = {"profile": profile} if profile != "paper" else {}
    asked |= {axis.name: axis.spec or ",".join(axis.texts()) for axis in axes}
    asked |= dict(sorted(fixed.items())) | {"seeds": seeds}
    default = root.resolve() / DEFAULT_OUTPUT_DIRNAME / EXPLORE_DIRNAME / chapter / folder_name(asked)
    return tree_root(root, profile, asked, output_dir, default)


def explore_record(
    chapter: str,
    profile: str,
    grid: Grid,
    fixed: Mapping[str, Any],
    seeds: Sequence[int],
    budgets: Mapping[str, int] | None = None,
    paper: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """What ``explore.json`` records of a grid: the setting, its seeds, each point's folder and values.

    ``fixed``: the single-valued overrides, each as its parameter takes it (a number stays a number);
    ``budgets``: the chapter's iteration budgets at the paper's values
    (:func:`~ntpnb.chapter._parameters.budget_parameters`), against which the maps name a point
    that ran shorter; ``paper``: the paper's value of each axis that has one
    (:func:`~ntpnb.chapter._parameters.paper_setting`), which the maps mark.
    """
    return {
        "chapter": chapter,
        "profile": profile,
        "seeds": list(seeds),
        "axes": [{**asdict(axis), "values": list(axis.values)} for axis in grid.axes],
        "fixed": dict(fixed),
        "points": [
            {"dir": f"{POINTS_DIRNAME}/{point_label(point)}", "values": point} for point in grid.points()
        ],
        "budgets": dict(budgets or {}),
        "paper": dict(paper or {}),
        "version": __version__,
    }


def _parse_record(data: object) -> dict[str, Any]:
    """An explore record read from JSON; ValueError when it lacks one of its settings."""
    if not isinstance(data, dict) or any(key not in data for key in _SETTING):
        raise ValueError(f"not an explore record (it needs {', '.join(_SETTING)})")
    return data


def check_explore_tree(tree: Path, record: Mapping[str, Any]) -> None:
    """Refuse to run the grid of ``record`` into ``tree`` if it holds an explore of another request.

    Raises
    ------
    NTPError
        If ``tree``'s ``explore.json`` records another chapter, profile, axes, fixed overrides
        or seeds (naming each, there and asked), or does not read.
    """
    path = tree / EXPLORE_RECORD
    if not path.exists():
        return
    try:
        held = read_record(path, "explore record", _parse_record)
    except PathError as exc:
        raise NTPError(f"{exc}; if {tree} holds only this grid's runs, delete that file and rerun") from exc
    differ = [
        f"{key} {_setting_text(held, key)} there, {_setting_text(record, key)} asked"
        for key in _SETTING
        if _setting_json(held, key) != _setting_json(record, key)
    ]
    if differ:
        raise NTPError(
            f"{tree} holds an explore of another grid (its {'; '.join(differ)}: see its "
            f"{EXPLORE_RECORD}); choose another --out, or leave --out out (each grid then gets a tree "
            "of its own)"
        )


def _setting_json(record: Mapping[str, Any], key: str) -> str:
    """One setting of an explore record as JSON text; a fixed value as ``-p`` writes it (``5000``)."""
    value = record.get(key)
    if key == "fixed" and isinstance(value, Mapping):
        value = {name: value_text(v) for name, v in value.items()}
    return json.dumps(value, sort_keys=True, default=repr)


def _setting_text(record: Mapping[str, Any], key: str) -> str:
    """One setting of an explore record as a reader reads it: ``toy_lr=0.1,1``, ``0, 1``, ``none``."""
    value = record.get(key)
    if key == "axes" and isinstance(value, list):
        return "; ".join(
            f"{axis.get('name')}={axis.get('spec') or ','.join(map(value_text, axis.get('values', [])))}"
            for axis in value
            if isinstance(axis, Mapping)
        )
    if key == "fixed" and isinstance(value, Mapping):
        return ", ".join(f"{name}={value_text(v)}" for name, v in sorted(value.items())) or "none"
    if key == "seeds" and isinstance(value, list):
        return ", ".join(map(str, value))
    return str(value)


def check_explore(
    root: Path,
    chapter: str,
    axes: Sequence[Axis],
    fixed: Mapping[str, str] | None = None,
    profile: str = "paper",
    output_dir: str | Path | None = None,
    jobs: int | None = None,
    seeds: int | None = None,
    force: bool = False,
    scheduler: str | None = None,
) -> CheckedExplore:
    """Check every input of an explore of ``chapter`` of the project at ``root``; write and start nothing.

    ``axes``: one or two (:func:`~ntpnb.explore._grid.parse_axis`); ``fixed``: single-valued
    ``-p`` overrides of every point, as text; ``seeds``: per point (default
    :data:`~ntpnb.records._places.EXPLORE_SEEDS`), from the chapter's seed (or ``-p seed=S``);
    ``output_dir``: the explore tree's root (default :func:`explore_tree`); ``jobs`` as
    ``reproduce`` takes it;
    ``force``: an ``output_dir`` holding files ntpnb did not write may be written
    (:func:`~ntpnb.records._ownership.check_output_folder`); ``scheduler``: a Dask cluster's address,
    which needs Dask's distributed.

    Raises
    ------
    NTPError
        On an unknown chapter or profile, a grid :func:`~ntpnb.explore._grid.checked_grid`
        refuses, anything ``reproduce`` refuses of a point's run (:func:`~._check.check_run`),
        an output folder that is a file, a run's tree or (without ``force``) a folder of files
        ntpnb did not write, a tree that holds another grid, or a ``scheduler`` without Dask's
        distributed installed.
    """
    fixed = dict(fixed or {})
    (source,) = select_notebooks(root, [chapter])
    seeds = EXPLORE_SEEDS if seeds is None else as_count(seeds, "--seeds")
    # where the explore goes, named by the axes as written: refused before the chapter is read
    tree = explore_tree(root, source.stem, profile, axes, fixed, seeds, output_dir)
    check_output_folder(
        tree, EXPLORE_TREE, tree if output_dir is None else output_dir, force or output_dir is None
    )
    grid = checked_grid(source, profile, axes, fixed)
    points = []
    for point in grid.points():
        label = point_label(point)
        overrides = {**fixed, **{name: value_text(value) for name, value in point.items()}}
        into = tree / POINTS_DIRNAME / label
        checked = check_run(
            root, [source.stem], profile, overrides, into, jobs, seeds, force, scheduler=scheduler
        )
        points.append(replace(checked, point=label))
    typed = apply_overrides(source, profile, fixed)  # each fixed value as its parameter takes it
    fixed_values = {name: typed[name] for name in fixed}
    record = explore_record(
        source.stem,
        profile,
        grid,
        fixed_values,
        points[0].record.seeds,
        budget_parameters(source),
        paper_setting(source, (axis.name for axis in grid.axes)),
    )
    check_explore_tree(tree, record)
    return CheckedExplore(grid, tree, tuple(points), record)


def points_done(plan: RunPlan) -> Callable[[Mapping[str, ChapterRun]], str]:
    """``2 of 9 points done``, of the results so far: a point is done when all its seeds are."""
    by_point: dict[str, list[str]] = {}
    for run in plan.runs:
        by_point.setdefault(run.point, []).append(run.label)

    def status(results: Mapping[str, ChapterRun]) -> str:
        done = sum(all(label in results for label in labels) for labels in by_point.values())
        return f"{done} of {len(by_point)} points done"

    return status


def explore(
    root: Path,
    checked: CheckedExplore,
    log: Callable[[str], None] = print,
    force: bool = False,
    wait: bool = True,
    scheduler: str | None = None,
) -> ExploreRun:
    """Run the ``checked`` explore (:func:`check_explore`) of the project at ``root``.

    Under the explore tree's lock, its ``explore.json`` is written, then every point at every
    seed runs as one plan (:func:`~._plan.planned_runs`, :func:`~._run.execute_plan`: cached
    runs are not run again, progress lines say the points done and the time left); then the maps
    are drawn (:func:`finish_explore`). ``log``, ``force``, ``wait`` and ``scheduler`` are as
    :func:`~._run.reproduce` takes them.

    Raises
    ------
    NTPError
        If the tree came to hold another grid since the check.
    PathError
        If the tree cannot be created or written.
    RunInterruptedError
        On SIGINT (Ctrl-C) or SIGTERM: finished runs keep their outputs; a rerun resumes.
    """
    from ._plan import planned_runs
    from ._run import changed_lines, execute_plan

    tree = checked.tree
    try:
        tree.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PathError(f"cannot create the output folder {exc.filename or tree}: {exc.strerror}") from exc
    for line in changed_lines(checked.points[0].changed):  # one chapter, at every point
        log(line)
    with output_lock(tree, wait=wait, log=log):
        check_explore_tree(tree, checked.record)  # another grid may have come while this one waited
        atomic_write_json(tree / EXPLORE_RECORD, checked.record)
        with planned_runs(root, checked.points, force, wait, log) as plan:
            results, interrupted = execute_plan(plan, log, scheduler, status=points_done(plan))
        if interrupted:
            raise RunInterruptedError(len(results), len(plan.runs))
        maps = finish_explore(tree, log)
    return ExploreRun(tree, checked.grid, tuple(results[run.label] for run in plan.runs), tuple(maps))


def finish_explore(tree: Path, log: Callable[[str], None]) -> list[Path]:
    """Draw the maps of the explore tree ``tree`` into its ``maps/``; one line per check to ``log``.

    The maps are :mod:`ntpnb.explore._decide`'s (:func:`~ntpnb.explore._folder.write_maps`, with
    :func:`~ntpnb.explore._words.summary_lines`); a line says each step, and the maps drawn
    while they take seconds each (:class:`~ntpnb.book._progress.StepProgress`). Returns the files
    written.
    """
    from ..book._progress import StepProgress
    from ..explore._decide import check_maps
    from ..explore._folder import MAPS_DIRNAME, write_maps
    from ..explore._read import load_explore
    from ..explore._words import summary_lines

    progress = StepProgress("the maps", lambda line: None, log)
    progress.at("reading every run's records")
    results = load_explore(tree)
    progress.at("deciding each check's map")
    maps = check_maps(results)  # decided once, for the files and the lines
    written = write_maps(results, tree / MAPS_DIRNAME, maps, progress.at)
    for line in summary_lines(results, maps):
        log(line)
    return list(written)
