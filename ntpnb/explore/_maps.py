"""Maps of a chapter's checks across a grid of settings: where each holds, and where that changes.

A grid's results (:class:`GridResults`) hold every check made at every point of a
:class:`~ntpnb.explore._grid.Grid` and every seed: run in process by :func:`run_grid` (a
chapter's grids, each check made by :func:`point_check`), or read from an explore tree by
:func:`load_explore` (each run's claim record, verified as the book verifies it). A check is
matched across the seeds and the points by its claim, kind, protocol and what it measures, as a
sweep matches it (:func:`ntpnb.book._verdicts.keyed`), and :func:`check_maps` gives each one's map
(:class:`CheckMap`): its values at every point and seed, the share of seeds at which it passes,
the decision at each point and the boundaries where that decision changes (:class:`Boundary`).

The decision at a point is the book's verdict rule (:class:`ntpnb.book._verdicts.Series`): a
check decided at each seed holds where it holds at every seed; a statistical or count check is
decided on its trials pooled over the seeds; a seed-independent check once. A point is
undecided (None) where a seed's run is missing or did not complete (unless a check decided at
each seed already fails at a seed that ran), or where the pooled sample cannot decide.

A boundary is bracketed by the grid values on either side: on a line, between each pair of
decided neighbours whose decisions differ (the undecided points between them named); on a
heatmap, along each axis at each value of the other. :func:`draw_map` draws a map in the book's
style (a line: the median over the seeds with their range and every seed's value, the required
value, the pass share below; a heatmap: the median, failing cells hatched, the boundaries drawn
between cells); :mod:`._folder` writes every map's figure, ``maps.json`` and ``maps.md``.
"""

from __future__ import annotations

import hashlib
import math
import re
import shlex
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import TYPE_CHECKING, Any

import numpy as np

from .._samples import Sample
from ..book._trees import chapter_problem, shown
from ..book._verdicts import Series, format_seeds, keyed, seed_record
from ..chapter._claims import (
    ChapterRecord,
    Check,
    check_label,
    decided_check,
    load_chapter_record,
)
from ..chapter._layout import EXPLORE_RECORD, OutputLayout
from ..chapter._outputs import read_record
from ..chapter._plotting import COLORS, PHONE_WIDTH, use_style
from ..errors import InvalidDataError, NTPError
from ._grid import Axis, Grid, point_label
from ._grid import value_text as parameter_text

if TYPE_CHECKING:  # matplotlib is imported by the functions that draw, not with the package
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: A point's values, in axis order: the key of a map's values.
PointKey = tuple


# -- the results of a grid ------------------------------------------------------------------------


@dataclass(frozen=True)
class PointRun:
    """The checks one run made at one point of a grid and one seed."""

    point: Mapping[str, Any]
    seed: int
    #: :class:`~ntpnb.chapter._claims.Check`, as the run recorded them.
    checks: tuple[Check, ...]
    #: False: the run failed or stopped, its checks are partial.
    complete: bool = True
    #: The parameters it ran with, as its record says ({} in process).
    parameters: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GridResults:
    """Every run of a grid at every seed: what :func:`check_maps` maps."""

    grid: Grid
    seeds: tuple[int, ...]
    runs: tuple[PointRun, ...]
    title: str = ""
    #: The chapter that ran ("" in process), its profile and its single-valued ``-p`` overrides.
    chapter: str = ""
    profile: str = ""
    fixed: Mapping[str, Any] = field(default_factory=dict)
    #: Why a run of the grid is missing or not counted, one sentence each (:func:`load_explore`).
    notes: tuple[str, ...] = ()
    #: The points that ran a budget (an iteration count) below the paper's, each with its budgets:
    #: ``toy_iters = 5000 (the paper's 100000)`` (:func:`budget_notes`).
    short: Mapping[PointKey, str] = field(default_factory=dict)

    def key(self, point: Mapping[str, Any]) -> PointKey:
        """The point's values in axis order."""
        return tuple(point[axis.name] for axis in self.grid.axes)


def point_check(
    claim: str,
    what: str,
    value: float | Sample,
    relation: str,
    target: float | tuple[float, float],
    *,
    tol: float = 0.0,
    kind: str = "claim",
    **options: Any,
) -> Check:
    """A check made in process, decided as :meth:`~ntpnb.chapter._claims.ClaimLog.check` decides it.

    Not printed and not recorded. A :class:`~ntpnb.statistics.Sample` as ``value`` is a
    statistical check, decided pooled over the seeds at each point (:func:`check_maps`).
    ``options``: ``seed_independent``, ``protocol``, ``paper`` (as :meth:`ClaimLog.check
    <ntpnb.chapter._claims.ClaimLog.check>` takes them).

    Raises
    ------
    InvalidDataError
        As :meth:`~ntpnb.chapter._claims.ClaimLog.check` does (an unknown kind or relation, a
        non-finite value, a measurement of a number ...).
    """
    return decided_check(claim, what, value, relation, target, tol=tol, kind=kind, **options)


def _checked_seeds(seeds: Sequence[int]) -> tuple[int, ...]:
    seeds = tuple(seeds)
    if not seeds or any(isinstance(s, bool) or not isinstance(s, int) for s in seeds):
        raise InvalidDataError(f"a grid runs at one or more integer seeds, got {seeds!r}")
    if len(set(seeds)) != len(seeds):
        raise InvalidDataError(f"the seeds {list(seeds)} repeat a seed")
    return seeds


def _checked_grid(grid: Grid) -> Grid:
    if not 1 <= len(grid.axes) <= 2 or any(not axis.values for axis in grid.axes):
        raise InvalidDataError(
            f"a map is over one or two axes, each with a value; got {[a.name for a in grid.axes]}"
        )
    return grid


def run_grid(
    grid: Grid,
    seeds: Sequence[int],
    measure: Callable[[Mapping[str, Any], int], Sequence[Check]],
    *,
    title: str = "",
    progress: Callable[[int, int], None] | None = None,
) -> GridResults:
    """Every point of ``grid`` at every seed, in this process: ``measure(point, seed)``'s checks.

    ``progress(done, total)`` is called after each run. ``measure`` makes its checks with
    :func:`point_check`.

    Raises
    ------
    InvalidDataError
        If the grid has no axis or more than two, the seeds are not distinct integers, or
        ``measure`` returns anything but checks.
    """
    grid, seeds = _checked_grid(grid), _checked_seeds(seeds)
    points = grid.points()
    total, runs = len(points) * len(seeds), []
    for point in points:
        for seed in seeds:
            checks = tuple(measure(dict(point), seed))
            wrong = [c for c in checks if not isinstance(c, Check)]
            if wrong:
                raise InvalidDataError(
                    f"measure({point_label(point)}, seed {seed}) returned {type(wrong[0]).__name__}, "
                    "not a Check (make each with point_check)"
                )
            runs.append(PointRun(dict(point), seed, checks))
            if progress is not None:
                progress(len(runs), total)
    return GridResults(grid, seeds, tuple(runs), title)


# -- an explore tree ------------------------------------------------------------------------------


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
            seeds = _checked_seeds(data["seeds"])
            grid = _checked_grid(Grid(tuple(_axis_of(a) for a in data["axes"])))
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
        return cls(chapter, profile, seeds, grid, {str(k): v for k, v in fixed.items()}, points, budgets)


def _book_record(
    layout: OutputLayout, chapter: str, seed: int, point: Mapping[str, Any]
) -> ChapterRecord | str:
    """The verified record of ``chapter`` at a point's first seed, or why it is not counted.

    Raises
    ------
    NTPError
        If the record or an output of its run is damaged (:func:`~ntpnb.book._trees.chapter_problem`).
    """
    if (layout.failed / f"{chapter}.json").exists():
        return "its last run failed"
    if not (layout.claims / f"{chapter}.json").exists():
        return "it has not run"
    problem = chapter_problem(layout, chapter)
    if problem:
        raise NTPError(problem)
    record = load_chapter_record(layout.claims / f"{chapter}.json")
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
) -> tuple[list[PointRun], list[str]]:
    """The verified runs of one point at every seed, and why any seed's run is not counted."""
    layout = OutputLayout(tree / folder)
    first, *others = explore.seeds
    book = _book_record(layout, explore.chapter, first, point)
    label = point_label(point)
    if isinstance(book, str):
        return [], [f"{label}: seed {first} is not counted ({book}), nor the point's other seeds"]
    if book.profile != explore.profile:
        return [], [f"{label}: it ran at the {book.profile} profile, the grid at {explore.profile}"]
    runs, notes = [PointRun(dict(point), first, book.checks, parameters=book.parameters or {})], []
    for seed in others:
        seed_tree = layout.seed_layouts().get(seed, OutputLayout(layout.seed_root(seed)))
        if (seed_tree.claims / f"{explore.chapter}.json").exists() and not (
            seed_tree.failed / f"{explore.chapter}.json"
        ).exists():
            problem = chapter_problem(seed_tree, explore.chapter)
            if problem:
                raise NTPError(problem)
        found = seed_record(layout, seed, seed_tree, book)
        if isinstance(found, ChapterRecord):
            runs.append(PointRun(dict(point), seed, found.checks))
        else:
            notes.append(f"{label}: seed {seed} is not counted ({found or 'it has not run'})")
    return runs, notes


def load_explore(tree: str | Path) -> GridResults:
    """The results of the explore tree ``tree``: its ``explore.json`` and every point's claim records.

    Every record is verified as the book verifies a run's (its outputs' digests, its manifest,
    its record; a further seed as a sweep counts it: same chapter, profile, parameters and ntpnb
    sources but the seed). A run that is missing, failed, or is not the point's is not counted
    (its point is undecided; :attr:`GridResults.notes` says why).

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
        if found and (below := _below_budget(found[0].parameters, explore.budgets)):
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


# -- the map of a check ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Boundary:
    """Where a check's decision changes: between two grid values along one axis."""

    axis: str
    #: The adjacent decided grid values between which the decision changes (in the axis's order).
    lower: Any
    upper: Any
    #: The check holds at ``lower`` (and not at ``upper``).
    holds_below: bool
    #: The other axis's value on a heatmap; {} on a line.
    fixed: Mapping[str, Any] = field(default_factory=dict)
    #: The grid values between ``lower`` and ``upper`` where the check is undecided.
    undecided: tuple[Any, ...] = ()


@dataclass(frozen=True)
class CheckMap:
    """One check across a grid: its values, pass share and decision at each point, its boundaries."""

    claim: str
    kind: str
    what: str
    protocol: str
    #: ``"per seed"``, ``"pooled"`` or ``"seed-independent"`` (:attr:`Check.basis`).
    basis: str
    #: As printed, e.g. ``"< 0.01"``.
    required: str
    #: By point (values in axis order): the value at each seed that made it, in the grid's seed order.
    values: Mapping[PointKey, tuple[float, ...]]
    #: The share of those seeds at which it passes.
    share: Mapping[PointKey, float]
    #: The book's rule at that point; None: undecided.
    holds: Mapping[PointKey, bool | None]
    boundaries: tuple[Boundary, ...]
    #: The relation, target and tolerance it is checked with (to draw the required value).
    relation: str
    target: Any
    tol: float

    @property
    def label(self) -> str:
        """``"A8 (sanity) [protocol]"``, as a check line names it."""
        return check_label(self.claim, self.kind, self.protocol)

    @property
    def slug(self) -> str:
        """A file name for it: ``"a8-sanity-w-1-w-5-3f2a9c"`` (its words, then a hash of its key)."""
        words = re.sub(r"[^a-z0-9]+", "-", f"{self.claim} {self.kind} {self.what}".lower()).strip("-")
        digest = hashlib.sha256(repr((self.claim, self.kind, self.protocol, self.what)).encode()).hexdigest()
        return f"{words[:48].rstrip('-')}-{digest[:6]}"


def point_decision(checks: Mapping[int, Check], complete: bool) -> bool | None:
    """The book's decision of one check at one point from its check at each seed (None: undecided).

    ``complete``: every seed of the grid ran to its end at the point. Else only a check decided at
    each seed that fails at a seed that ran is decided (it fails).
    """
    if not checks:
        return None
    series = Series(dict(checks))
    if not complete:
        return False if series.basis == "per seed" and series.failed_seeds else None
    return series.established if series.decidable else None


def _runs_by_point(results: GridResults) -> dict[PointKey, dict[int, PointRun]]:
    by_point: dict[PointKey, dict[int, PointRun]] = {results.key(p): {} for p in results.grid.points()}
    for run in results.runs:
        key = results.key(run.point)
        if key not in by_point:
            raise InvalidDataError(f"a run at {point_label(run.point)} is not a point of the grid")
        if run.seed in by_point[key]:
            raise InvalidDataError(f"{point_label(run.point)} has two runs at seed {run.seed}")
        by_point[key][run.seed] = run
    return by_point


def _line_boundaries(
    axis: Axis, decisions: Sequence[bool | None], fixed: Mapping[str, Any]
) -> list[Boundary]:
    """The boundaries along one line of the grid: between decided neighbours whose decisions differ."""
    found, previous = [], None  # the last decided index
    for i, decision in enumerate(decisions):
        if decision is None:
            continue
        if previous is not None and decisions[previous] != decision:
            between = tuple(axis.values[previous + 1 : i])
            found.append(
                Boundary(
                    axis.name,
                    axis.values[previous],
                    axis.values[i],
                    bool(decisions[previous]),
                    dict(fixed),
                    between,
                )
            )
        previous = i
    return found


def boundaries(grid: Grid, holds: Mapping[PointKey, bool | None]) -> tuple[Boundary, ...]:
    """Every boundary of a map: along a line; on a heatmap, along each axis at each value of the other."""
    axes = grid.axes
    if len(axes) == 1:
        return tuple(_line_boundaries(axes[0], [holds[(v,)] for v in axes[0].values], {}))
    first, second = axes
    found = []
    for y in second.values:  # along the first axis at each value of the second
        found += _line_boundaries(first, [holds[(x, y)] for x in first.values], {second.name: y})
    for x in first.values:
        found += _line_boundaries(second, [holds[(x, y)] for y in second.values], {first.name: x})
    return tuple(found)


def check_maps(results: GridResults) -> list[CheckMap]:
    """The map of every check the grid's runs made, in the order they were first made.

    Raises
    ------
    InvalidDataError
        If a run is at no point of the grid, or a point has two runs at one seed.
    """
    by_point = _runs_by_point(results)
    made: dict[tuple, dict[PointKey, dict[int, Check]]] = {}
    for key, runs in by_point.items():
        for seed in results.seeds:
            if seed in runs:
                for check_key, check in keyed(runs[seed].checks).items():
                    made.setdefault(check_key, {}).setdefault(key, {})[seed] = check
    return [_check_map(results, by_point, at_points) for at_points in made.values()]


def _check_map(
    results: GridResults,
    by_point: Mapping[PointKey, Mapping[int, PointRun]],
    at_points: Mapping[PointKey, Mapping[int, Check]],
) -> CheckMap:
    """The map of one check from its records ``at_points`` (point -> seed -> check).

    Parameters
    ----------
    results
        The grid's results (its grid and seeds).
    by_point
        Every point's runs by seed (:func:`_runs_by_point`): a point where the check was not made
        has no value, and is undecided unless all its runs completed.
    at_points
        The check's records, by point and seed.

    Returns
    -------
    CheckMap
        Its values, share of seeds passing and decision at every point, and its boundaries.
    """
    first = next(iter(next(iter(at_points.values())).values()))
    values, share, holds = {}, {}, {}
    for key, runs in by_point.items():
        checks = at_points.get(key, {})
        complete = all(seed in runs and runs[seed].complete for seed in results.seeds)
        values[key] = tuple(float(c.value) for c in checks.values())
        share[key] = sum(c.passed for c in checks.values()) / len(checks) if checks else math.nan
        holds[key] = point_decision(checks, complete)
    return CheckMap(
        first.claim,
        first.kind,
        first.what,
        first.protocol,
        first.basis,
        first.required,
        values,
        share,
        holds,
        boundaries(results.grid, holds),
        first.relation,
        first.target,
        first.tol,
    )


# -- in words ---------------------------------------------------------------------------------------


def value_text(axis: Axis, value: Any) -> str:
    """A grid value as ``-p`` takes it (the axis's own text)."""
    return dict(zip(axis.values, axis.texts(), strict=True)).get(value, str(value))


def _axis(grid: Grid, name: str) -> Axis:
    return next(axis for axis in grid.axes if axis.name == name)


def _held(holds: bool) -> str:
    return "holds" if holds else "fails"


def boundary_text(boundary: Boundary, grid: Grid) -> str:
    """``"at m = 20, between d = 5 (fails) and 10 (holds; undecided at 7)"``."""
    axis = _axis(grid, boundary.axis)
    at = ", ".join(f"{k} = {value_text(_axis(grid, k), v)}" for k, v in boundary.fixed.items())
    lower, upper = value_text(axis, boundary.lower), value_text(axis, boundary.upper)
    text = (
        f"between {axis.name} = {lower} ({_held(boundary.holds_below)}) and {upper} "
        f"({_held(not boundary.holds_below)}"
    )
    if boundary.undecided:
        text += f"; undecided at {format_seeds(value_text(axis, v) for v in boundary.undecided)}"
    return f"at {at}, {text})" if at else f"{text})"


def where_it_holds(check_map: CheckMap, grid: Grid) -> str:
    """``"holds at 3 of 9 points (0.01 to 0.1), fails at 5, undecided at 1"``, or everywhere / nowhere."""
    decisions = list(check_map.holds.values())
    n = len(decisions)
    held, failed = decisions.count(True), decisions.count(False)
    open_ = n - held - failed
    undecided = f", undecided at {open_}" if open_ else ""
    if held == n:
        return "holds at every point"
    if failed == n:
        return "fails at every point"
    if held == 0 and failed == 0:
        return "undecided at every point"
    where = ""
    if len(grid.axes) == 1:
        axis = grid.axes[0]
        texts = [value_text(axis, k[0]) for k, d in check_map.holds.items() if d]
        where = f" ({axis.name} = {format_seeds(texts)})" if texts else ""
    return f"holds at {held} of {n} points{where}, fails at {failed}{undecided}"


def boundary_summary(check_map: CheckMap, grid: Grid) -> str:
    """Its boundaries in words, or why it has none."""
    if check_map.boundaries:
        return "; ".join(boundary_text(b, grid) for b in check_map.boundaries)
    decisions = set(check_map.holds.values())
    every = "every point" if None not in decisions else "every point where it is decided"
    if decisions - {None} == {True}:
        return f"no boundary: it holds at {every}"
    if decisions - {None} == {False}:
        return f"no boundary: it fails at {every}"
    if decisions == {None}:
        return "no boundary: it is decided at no point"
    return "no boundary found: undecided points lie between where it holds and where it fails"


def seed_means(check_map: CheckMap) -> dict[Any, float]:
    """Each point's value averaged over the seeds that made it, by the point's value (a line's map).

    NaN at a point where no seed made the check.

    Raises
    ------
    InvalidDataError
        If the map is over two axes (a point is then two values).
    """
    if any(len(key) != 1 for key in check_map.values):
        raise InvalidDataError(f"{check_map.what}: seed_means reads a map over one axis")
    return {key[0]: float(np.mean(v)) if v else math.nan for key, v in check_map.values.items()}


def format_by_point(values: Mapping[float, float], fmt: str) -> str:
    """``values`` (by grid value) as ``"v1, v2, ... at x1, x2, ..."``, in the grid values' order.

    Each value in the format ``fmt`` (``".3f"``, ``".0%"`` ...), each grid value as ``{:g}``.
    """
    keys = sorted(values)
    shown = ", ".join(format(values[k], fmt) for k in keys)
    return f"{shown} at {', '.join(f'{k:g}' for k in keys)}"


def summary_lines(results: GridResults, maps: Sequence[CheckMap] | None = None) -> list[str]:
    """One line per check: what it requires, where it holds, its boundary; then the budget notes.

    ``maps``: the results' :func:`check_maps`, where the caller has them already.
    """
    maps = check_maps(results) if maps is None else maps
    lines = [
        f"{m.label} {m.what} (required {m.required}): {where_it_holds(m, results.grid)}; "
        f"{boundary_summary(m, results.grid)}"
        for m in maps
    ]
    return lines + budget_notes(results, maps)


def budget_notes(results: GridResults, maps: Sequence[CheckMap]) -> list[str]:
    """Each check that fails at a point whose run was shorter than the paper's: the budget may be why.

    A map is a measurement at the budget each point ran: a failure at a point that stopped before
    the paper's iteration count (:attr:`GridResults.short`) may be the run's, not the claim's.
    """
    notes = []
    for m in maps:
        failing = [key for key, holds in m.holds.items() if holds is False and key in results.short]
        for budget in dict.fromkeys(results.short[key] for key in failing):
            at = [key for key in failing if results.short[key] == budget]
            points = "; ".join(
                ", ".join(
                    f"{a.name} = {value_text(a, v)}" for a, v in zip(results.grid.axes, key, strict=True)
                )
                for key in at
            )
            notes.append(
                f"{m.label} {m.what} fails at {len(at)} point{'s' * (len(at) != 1)} that ran {budget}: "
                f"{points}; a run that short may fail for want of iterations (the budget), not because "
                "the claim fails there"
            )
    return notes


# -- figures ------------------------------------------------------------------------------------------

#: The width of a map's figure, in inches: shown at its own size it is legible on a phone.
MAP_WIDTH: float = PHONE_WIDTH
#: Where a check holds, fails, or is undecided: marker face colours of a line's points.
_DECISION_FACE = {True: COLORS[0], False: "white", None: "0.75"}


def _numeric(axis: Axis) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in axis.values)


def _positions(axis: Axis) -> list[float]:
    """Where an axis's values are drawn: the values if numbers, else their places."""
    return [float(v) for v in axis.values] if _numeric(axis) else list(range(len(axis.values)))


def _spans_decades(values: Sequence[float]) -> bool:
    finite = [v for v in values if math.isfinite(v)]
    return bool(finite) and min(finite) > 0 and max(finite) / min(finite) >= 100


def _draw_required(ax: Axes, check_map: CheckMap, log_y: bool) -> None:
    """The required value (a line) or interval (a band), labelled as printed."""
    label = f"required {check_map.required.split(',')[0]}"
    target, relation = check_map.target, check_map.relation
    style = {"color": "k", "ls": "--", "lw": 1.2, "label": label}
    if relation == "in" or relation == "~":
        low, high = tuple(target) if relation == "in" else (target - check_map.tol, target + check_map.tol)
        if log_y and low <= 0:
            low = high / 1e3
        ax.axhspan(low, high, color="k", alpha=0.08, label=label)
    elif target is not None and (not log_y or float(target) > 0):
        ax.axhline(float(target), **style)


def _wrapped(text: str, width: int = 42) -> str:
    return "\n".join(textwrap.wrap(text, width))


def fit_title(ax: Axes, width: int = 34) -> None:
    """Wrap the left title of a map's panel (:func:`draw_map`) anew to ``width`` characters.

    ``width``: 34 fits a panel half the page wide at the title's 10 pt.
    """
    title = ax.get_title(loc="left").replace("\n", " ")
    ax.set_title(_wrapped(title, width), loc="left", fontsize=10)


def _draw_line(ax: Axes, check_map: CheckMap, grid: Grid, share_ax: Axes | None) -> None:
    axis = grid.axes[0]
    xs, keys = _positions(axis), [(v,) for v in axis.values]
    values = [check_map.values[k] for k in keys]
    log_y = _spans_decades([v for vs in values for v in vs])
    _draw_seeds(ax, xs, values)
    for x, k in zip(xs, keys, strict=True):
        if check_map.values[k]:
            face = _DECISION_FACE[check_map.holds[k]]
            ax.plot([x], [median(check_map.values[k])], "o", ms=6, mfc=face, mec=COLORS[0], zorder=3)
    _draw_required(ax, check_map, log_y)
    panels = [ax] if share_ax is None else [ax, share_ax]
    for b in check_map.boundaries:
        low, high = (xs[axis.values.index(v)] for v in (b.lower, b.upper))
        for panel in panels:
            panel.axvspan(low, high, color="0.5", alpha=0.15, lw=0)
    ax.set(ylabel="value", yscale="log" if log_y else "linear")
    ax.legend(loc="best", fontsize=9.5)
    if share_ax is not None:
        share = [check_map.share[k] for k in keys]
        share_ax.plot(xs, share, "s-", color=COLORS[1], ms=4)
        share_ax.set(ylim=(-0.08, 1.08), yticks=[0, 1], ylabel="passes")
    bottom = share_ax if share_ax is not None else ax
    bottom.set_xlabel(axis.name)
    for panel in panels:
        if axis.log and _numeric(axis) and min(xs) > 0:
            panel.set_xscale("log")
        if not _numeric(axis):
            panel.set_xticks(xs, axis.texts())


def _draw_seeds(ax: Axes, xs: Sequence[float], values: Sequence[Sequence[float]]) -> None:
    """The seeds' values at each position ``xs``: their range as a band, their median, each as a point."""
    drawn = [(x, vs) for x, vs in zip(xs, values, strict=True) if vs]
    if not drawn:
        return
    color = COLORS[0]
    dx, dv = zip(*drawn, strict=True)
    ax.fill_between(dx, [min(v) for v in dv], [max(v) for v in dv], color=color, alpha=0.2, lw=0)
    ax.plot(dx, [median(v) for v in dv], color=color, label="median over seeds")
    seeds_x = [x for x, vs in drawn for _ in vs]
    ax.scatter(seeds_x, [v for vs in dv for v in vs], s=10, color=color, alpha=0.35, lw=0)


def _draw_heatmap(ax: Axes, check_map: CheckMap, grid: Grid) -> Any:
    import matplotlib.colors as mcolors
    import numpy as np

    xa, ya = grid.axes
    grid_values = np.full((len(ya.values), len(xa.values)), np.nan)
    for (x, y), vs in check_map.values.items():
        if vs:
            grid_values[ya.values.index(y), xa.values.index(x)] = median(vs)
    finite = grid_values[np.isfinite(grid_values)]
    norm = mcolors.LogNorm() if _spans_decades(list(finite)) else None
    mesh = ax.pcolormesh(np.ma.masked_invalid(grid_values), norm=norm, cmap="viridis")
    _mark_cells(ax, check_map, xa, ya)
    for b in check_map.boundaries:
        _draw_cell_boundary(ax, b, xa, ya)
    ax.set_xticks(
        [i + 0.5 for i in range(len(xa.values))], xa.texts(), rotation=45 if len(xa.values) > 4 else 0
    )
    ax.set_yticks([j + 0.5 for j in range(len(ya.values))], ya.texts())
    ax.set(xlabel=xa.name, ylabel=ya.name)
    ax.grid(False)
    return mesh


def _mark_cells(ax: Axes, check_map: CheckMap, xa: Axis, ya: Axis) -> None:
    """Hatch each heatmap cell where the check fails or is undecided; on small grids, write its passes."""
    from matplotlib.patches import Rectangle

    for (x, y), decision in check_map.holds.items():
        i, j = xa.values.index(x), ya.values.index(y)
        if decision is not True:  # fails: hatched; undecided: hatched grey
            hatch, edge = ("///", "white") if decision is False else ("..", "0.4")
            ax.add_patch(Rectangle((i, j), 1, 1, fill=False, hatch=hatch, edgecolor=edge, lw=0))
        n = len(check_map.values[(x, y)])
        if n and len(xa.values) <= 8:
            passed = round(check_map.share[(x, y)] * n)
            ax.text(
                i + 0.5,
                j + 0.5,
                f"{passed}/{n}",
                ha="center",
                va="center",
                fontsize=9.5,
                color="k",
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "alpha": 0.7, "lw": 0},
            )


def _draw_cell_boundary(ax: Axes, boundary: Boundary, xa: Axis, ya: Axis) -> None:
    """A boundary on the heatmap: the cell edges between its bracketing values (dashed if they are apart)."""
    along = xa if boundary.axis == xa.name else ya
    low, high = along.values.index(boundary.lower), along.values.index(boundary.upper)
    ls = "-" if high - low == 1 else "--"
    if boundary.axis == xa.name:
        j = ya.values.index(boundary.fixed[ya.name])
        for edge in range(low + 1, high + 1):
            ax.plot([edge, edge], [j, j + 1], color="#D55E00", lw=2.5, ls=ls)
    else:
        i = xa.values.index(boundary.fixed[xa.name])
        for edge in range(low + 1, high + 1):
            ax.plot([i, i + 1], [edge, edge], color="#D55E00", lw=2.5, ls=ls)


def draw_map(check_map: CheckMap, grid: Grid, ax: Axes | None = None) -> Figure:
    """The figure of one check's map, in the book's style (:func:`~ntpnb.chapter._plotting.use_style`).

    Over one axis: the median over the seeds (markers filled where the check holds, open where it
    fails, grey where undecided), the seeds' range as a band, each seed's value as a faint point,
    the required value dashed (an interval shaded), the boundaries' brackets shaded, and below, the
    share of seeds at which it passes. Over two: a heatmap of the median, cells where it fails
    hatched (undecided: dotted), each cell's passing seeds ``k/n``, the boundaries drawn between
    cells (dashed across undecided cells). Log axes where the axis is log; a log value scale
    where the values are positive and span two decades or more.

    Given ``ax``, the map is drawn into it (a line without its share panel); the figure is ``ax``'s.
    """
    import matplotlib.pyplot as plt

    use_style()
    heat = len(grid.axes) == 2
    share_ax = None
    if ax is None:
        if heat:
            fig, ax = plt.subplots(figsize=(MAP_WIDTH, MAP_WIDTH * 1.05))
        else:
            fig, (ax, share_ax) = plt.subplots(
                2, 1, figsize=(MAP_WIDTH, 3.9), sharex=True, gridspec_kw={"height_ratios": (3, 1)}
            )
    fig = ax.figure
    if heat:
        mesh = _draw_heatmap(ax, check_map, grid)
        fig.colorbar(mesh, ax=ax, location="top", label="median value", shrink=0.9)
    else:
        _draw_line(ax, check_map, grid, share_ax)
    ax.set_title(_wrapped(f"{check_map.label} {check_map.what}"), loc="left", fontsize=10)
    return fig
