"""A grid's results: every check made at every point of a :class:`~ntpnb.explore._grid.Grid` and every seed.

:class:`GridResults` holds them, one run per point and seed (a :class:`~ntpnb.records._run.ChapterRun`
labelled by its point, :func:`point_run`): run in process by
:func:`run_grid` (a chapter's grids, each check made by :func:`point_check`), or read from an
explore tree by :func:`~ntpnb.explore._read.load_explore`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidDataError
from ..evidence._checks import Check
from ..evidence._decide import decided_check
from ..evidence._samples import Sample
from ..records._run import ChapterRun
from ._grid import Grid, point_label

#: A point's values, in axis order: the key of a map's values.
PointKey = tuple


def point_run(
    point: Mapping[str, Any],
    seed: int,
    checks: Sequence[Check],
    *,
    complete: bool = True,
    parameters: Mapping[str, Any] | None = None,
    notebook: str = "",
) -> ChapterRun:
    """The run of one point of a grid at one seed: a chapter's run labelled by its point.

    ``point``'s label (:func:`~ntpnb.explore._grid.point_label`) names it, as the runner names an
    explore's runs; ``complete`` False: the run failed or stopped, its checks are partial;
    ``parameters``: what it ran with, as its record says (None in process).
    """
    return ChapterRun(
        notebook,
        checks=tuple(checks),
        seed=seed,
        complete=complete,
        parameters=parameters,
        point=point_label(point),
    )


@dataclass(frozen=True)
class GridResults:
    """Every run of a grid at every seed: what :func:`~ntpnb.explore._decide.check_maps` maps."""

    grid: Grid
    seeds: tuple[int, ...]
    #: One run a point and seed (:func:`point_run`), labelled by its point.
    runs: tuple[ChapterRun, ...]
    title: str = ""
    #: The chapter that ran ("" in process), its profile and its single-valued ``-p`` overrides.
    chapter: str = ""
    profile: str = ""
    fixed: Mapping[str, Any] = field(default_factory=dict)
    #: Why a run of the grid is missing or not counted, one sentence each
    #: (:func:`~ntpnb.explore._read.load_explore`).
    notes: tuple[str, ...] = ()
    #: The points that ran a budget (an iteration count) below the paper's, each with its budgets:
    #: ``toy_iters = 5000 (the paper's 100000)`` (:func:`~ntpnb.explore._words.budget_notes`).
    short: Mapping[PointKey, str] = field(default_factory=dict)
    #: The paper's value of each axis that has one (the chapter's ``parameters`` cell), which the
    #: maps mark.
    paper: Mapping[str, float] = field(default_factory=dict)

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
    statistical check, decided pooled over the seeds at each point
    (:func:`~ntpnb.explore._decide.check_maps`).
    ``options``: ``seed_independent``, ``protocol``, ``paper`` (as :meth:`ClaimLog.check
    <ntpnb.chapter._claims.ClaimLog.check>` takes them).

    Raises
    ------
    InvalidDataError
        As :meth:`~ntpnb.chapter._claims.ClaimLog.check` does (an unknown kind or relation, a
        non-finite value, a measurement of a number ...).
    """
    return decided_check(claim, what, value, relation, target, tol=tol, kind=kind, **options)


def checked_seeds(seeds: Sequence[int]) -> tuple[int, ...]:
    seeds = tuple(seeds)
    if not seeds or any(isinstance(s, bool) or not isinstance(s, int) for s in seeds):
        raise InvalidDataError(f"a grid runs at one or more integer seeds, got {seeds!r}")
    if len(set(seeds)) != len(seeds):
        raise InvalidDataError(f"the seeds {list(seeds)} repeat a seed")
    return seeds


def checked_map_grid(grid: Grid) -> Grid:
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
    grid, seeds = checked_map_grid(grid), checked_seeds(seeds)
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
            runs.append(point_run(point, seed, checks))
            if progress is not None:
                progress(len(runs), total)
    return GridResults(grid, seeds, tuple(runs), title)
