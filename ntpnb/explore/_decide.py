"""The map of each check across a grid: its values, the share of seeds passing, the decision at each point.

A check is matched across the seeds and the points by its claim, kind, protocol and what it
measures, as a sweep matches it (:func:`ntpnb.evidence._series.keyed`), and :func:`check_maps` gives
each one's map (:class:`CheckMap`): its values at every point and seed, the share of seeds at which
it passes, the decision at each point and its boundaries (:mod:`._boundaries`).

The decision at a point is the evidence's (:meth:`ntpnb.evidence._series.Series.point_decision`):
a check decided at each seed holds where it holds at every seed; a statistical or count check is
decided on its trials pooled over the seeds; a seed-independent check once. A point is
undecided (None) where a seed's run is missing or did not complete (unless a check decided at
each seed already fails at a seed that ran), where the pooled sample cannot decide, or where a
bound's estimate lies within its test's noise (a map shades a change of decision only where
both sides are settled).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidDataError
from ..evidence._checks import Check, check_label
from ..evidence._series import Series, keyed
from ..records._run import ChapterRun
from ._boundaries import Boundary, boundaries
from ._grid import point_label
from ._results import GridResults, PointKey


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
        what = re.sub(r"\\[A-Za-z]+", " ", self.what)  # a TeX command is no word of it
        words = re.sub(r"[^a-z0-9]+", "-", f"{self.claim} {self.kind} {what}".lower()).strip("-")
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
    return series.point_decision()


def _runs_by_point(results: GridResults) -> dict[PointKey, dict[int, ChapterRun]]:
    keys = {point_label(p): results.key(p) for p in results.grid.points()}
    by_point: dict[PointKey, dict[int, ChapterRun]] = {key: {} for key in keys.values()}
    for run in results.runs:
        key = keys.get(run.point)
        if key is None:
            raise InvalidDataError(f"a run at {run.point} is not a point of the grid")
        if run.seed in by_point[key]:
            raise InvalidDataError(f"{run.point} has two runs at seed {run.seed}")
        by_point[key][run.seed] = run
    return by_point


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
    by_point: Mapping[PointKey, Mapping[int, ChapterRun]],
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
