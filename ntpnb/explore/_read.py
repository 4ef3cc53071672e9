"""An explore tree read: its ``explore.json`` and every point's claim records, verified as the book does.

:func:`load_explore` gives the tree's :class:`~ntpnb.explore._results.GridResults`: each run's
claim record, verified as the book verifies a run's; a run that is missing, failed or is not
the point's is not counted, and its notes say why.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .._validation import is_real
from ..book._trees import chapter_problem, shown
from ..errors import InvalidDataError, NTPError
from ..records._files import read_record
from ..records._places import EXPLORE_RECORD, OutputTree
from ..records._run import ChapterRun, load_chapter_run
from ..records._sweep import seed_record
from ._grid import Axis, Grid, point_label
from ._grid import value_text as parameter_text
from ._results import GridResults, checked_map_grid, checked_seeds


def _axis_of(data: Mapping[str, Any]) -> Axis:
    values = data["values"]
    if not isinstance(values, list) or not values or not isinstance(data["name"], str):
        raise ValueError(f"axis {data.get('name')!r} has no list of values")
    return Axis(data["name"], tuple(values), str(data.get("spec", "")), bool(data.get("log", False)))


@dataclass(frozen=True)
class _ExploreRecord:
    """``explore.json``, parsed (see the contract in the module docstring of :mod:`ntpnb.explore`)."""

    chapter: str
    profile: str
    seeds: tuple[int, ...]
    grid: Grid
    #: The single-valued overrides of every point, each as its parameter takes it.
    fixed: Mapping[str, Any]
    #: Each point's folder (relative to the tree) and values.
    points: tuple[tuple[str, Mapping[str, Any]], ...]
    #: The chapter's iteration budgets at the paper's values (none in older records).
    budgets: Mapping[str, Any] = field(default_factory=dict)
    #: The paper's value of each axis that has one (none in older records).
    paper: Mapping[str, float] = field(default_factory=dict)

    def command(self, tree: Path) -> str:
        """The ``ntpnb explore`` command of this grid into ``tree``: it runs what is missing again."""
        words = ["ntpnb", "explore", self.chapter.split("_", 1)[0]]
        for axis in self.grid.axes:
            words += ["-p", f"{axis.name}={axis.spec or ','.join(axis.texts())}"]
        for name, value in sorted(self.fixed.items()):
            words += ["-p", f"{name}={parameter_text(value)}"]
        words += ["--seeds", str(len(self.seeds)), "--profile", self.profile, "--out", shown(tree)]
        return shlex.join(words)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> _ExploreRecord:
        chapter, profile = data["chapter"], data["profile"]
        if not isinstance(chapter, str) or not isinstance(profile, str) or not chapter:
            raise ValueError("'chapter' or 'profile' is not a text")
        try:
            seeds = checked_seeds(data["seeds"])
            grid = checked_map_grid(Grid(tuple(_axis_of(a) for a in data["axes"])))
        except InvalidDataError as exc:
            raise ValueError(str(exc)) from None
        fixed = data.get("fixed", {})
        if not isinstance(fixed, dict):
            raise ValueError("'fixed' is not a mapping of parameters to values")
        points = tuple((str(p["dir"]), dict(p["values"])) for p in data["points"])
        for folder, _ in points:
            if Path(folder).is_absolute() or ".." in Path(folder).parts:
                raise ValueError(f"the point folder {folder!r} is not inside the tree")
        expected = sorted(map(point_label, grid.points()))
        if sorted(point_label(values) for _, values in points) != expected:
            raise ValueError("its points are not the grid of its axes")
        budgets = data.get("budgets", {})
        if not isinstance(budgets, dict):
            raise ValueError("'budgets' is not a mapping of parameters to values")
        paper = data.get("paper", {})
        if not isinstance(paper, dict) or not all(is_real(v) and math.isfinite(v) for v in paper.values()):
            raise ValueError("'paper' is not a mapping of parameters to numbers")
        fixed = {str(k): v for k, v in fixed.items()}
        return cls(chapter, profile, seeds, grid, fixed, points, budgets, paper)


def _book_record(tree: OutputTree, chapter: str, seed: int, point: Mapping[str, Any]) -> ChapterRun | str:
    """The verified record of ``chapter`` at a point's first seed, or why it is not counted.

    Raises
    ------
    NTPError
        If the record or an output of its run is damaged (:func:`~ntpnb.book._trees.chapter_problem`).
    """
    if (tree.failed / f"{chapter}.json").exists():
        return "its last run failed"
    if not (tree.claims / f"{chapter}.json").exists():
        return "it has not run"
    problem = chapter_problem(tree, chapter)
    if problem:
        raise NTPError(problem)
    record = load_chapter_run(tree.claims / f"{chapter}.json")
    params = record.parameters
    if record.notebook != chapter:
        return f"the record is of {record.notebook}"
    if not record.complete:
        return "the run did not reach its end"
    if (record.seed if record.seed is not None else 0) != seed:
        return f"the record says seed {record.seed}"
    if params is None:
        return "the record does not say which parameters it ran with"
    changed = sorted(k for k, v in point.items() if params.get(k) != v)
    if changed:
        ran = ", ".join(f"{k}={params.get(k)!r}" for k in changed)
        return f"it ran with other values of the grid's parameters ({ran})"
    return record


def _point_runs(
    tree: Path, explore: _ExploreRecord, folder: str, point: Mapping[str, Any]
) -> tuple[list[ChapterRun], list[str]]:
    """The verified runs of one point at every seed, and why any seed's run is not counted."""
    point_tree = OutputTree(tree / folder)
    first, *others = explore.seeds
    book = _book_record(point_tree, explore.chapter, first, point)
    label = point_label(point)
    if isinstance(book, str):
        return [], [f"{label}: seed {first} is not counted ({book}), nor the point's other seeds"]
    if book.profile != explore.profile:
        return [], [f"{label}: it ran at the {book.profile} profile, the grid at {explore.profile}"]
    runs = [replace(book, point=label)]  # its record, as the point's run
    notes: list[str] = []
    for seed in others:
        seed_tree = point_tree.seed_trees().get(seed, OutputTree(point_tree.seed_root(seed)))
        if (seed_tree.claims / f"{explore.chapter}.json").exists() and not (
            seed_tree.failed / f"{explore.chapter}.json"
        ).exists():
            problem = chapter_problem(seed_tree, explore.chapter)
            if problem:
                raise NTPError(problem)
        found = seed_record(point_tree, seed, seed_tree, book)
        if isinstance(found, ChapterRun):
            runs.append(replace(found, point=label))
        else:
            notes.append(f"{label}: seed {seed} is not counted ({found or 'it has not run'})")
    return runs, notes


def load_explore(tree: str | Path) -> GridResults:
    """The results of the explore tree ``tree``: its ``explore.json`` and every point's claim records.

    Every record is verified as the book verifies a run's (its outputs' digests, its manifest,
    its record; a further seed as a sweep counts it: same chapter, profile, parameters and ntpnb
    sources but the seed). A run that is missing, failed, or is not the point's is not counted
    (its point is undecided; :attr:`~ntpnb.explore._results.GridResults.notes` says why).

    Raises
    ------
    NTPError
        If ``explore.json`` is missing or damaged, or a record or an output of a run is damaged
        (naming the file and the command that runs that point again).
    """
    tree = Path(tree)
    path = tree / EXPLORE_RECORD
    if not path.is_file():
        raise NTPError(f"{shown(tree)} is not an explore tree (it has no {EXPLORE_RECORD})")
    explore = read_record(path, "explore record", _ExploreRecord.from_json)
    runs, notes, short = [], [], {}
    for folder, values in explore.points:
        point = {axis.name: values[axis.name] for axis in explore.grid.axes}
        try:
            found, why = _point_runs(tree, explore, folder, point)
        except NTPError as exc:
            raise NTPError(
                f"{exc}; run `{explore.command(tree)}` again: "
                "it runs that point again (the others are cached)"
            ) from None
        runs += found
        notes += why
        if found and (below := _below_budget(found[0].parameters or {}, explore.budgets)):
            short[tuple(point[a.name] for a in explore.grid.axes)] = below
    title = f"{explore.chapter} across {' and '.join(a.name for a in explore.grid.axes)}"
    return GridResults(
        explore.grid,
        explore.seeds,
        tuple(runs),
        title,
        explore.chapter,
        explore.profile,
        explore.fixed,
        tuple(notes),
        short,
        explore.paper,
    )


def _below_budget(parameters: Mapping[str, Any], budgets: Mapping[str, Any]) -> str:
    """``toy_iters = 5000 (the paper's 100000)``: the budgets a run's ``parameters`` set below the paper's."""
    below = [
        f"{name} = {parameters[name]} (the paper's {paper})"
        for name, paper in budgets.items()
        if isinstance(parameters.get(name), (int, float))
        and isinstance(paper, (int, float))
        and parameters[name] < paper
    ]
    return ", ".join(below)
