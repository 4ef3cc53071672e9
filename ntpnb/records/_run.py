"""What a chapter's run produced (:class:`ChapterRun`), a run planned (:class:`PlannedRun`).

A chapter run's record (:meth:`ChapterRun.dump`, ``<tree>/claims/<notebook>.json``) holds what
the chapter wrote: its checks, qualifications, headlines, platform, seed and parameters. The
runner adds what it saw (its time, whether it was cached, its error, where its executed copy is);
a failed run, a further seed of a sweep and an explore's point are views of the same record.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from ..errors import PathError
from ..evidence._checks import Check, Statement
from ._files import read_record
from ._places import OutputTree

#: The profiles a chapter runs at, which its record names: ``paper`` (the papers' settings) and
#: ``quick`` (the seconds-scale run of the test suite). Their parameter values are the runner's.
PROFILE_NAMES: tuple[str, ...] = ("paper", "quick")


class _Labelled:
    """A notebook at a seed, named by its :attr:`label` (a run planned, or what it produced)."""

    notebook: str
    seed: int | None
    sweep: bool  # a further seed of the sweep (outputs in its own tree), not the book's seed
    #: The point of an explore's grid it runs at (:func:`~ntpnb.explore._grid.point_label`); "" for none.
    point: str

    @property
    def label(self) -> str:
        """Its name, with the seed when it is a further seed of the sweep (unique within a run).

        A run at a point of a grid (one chapter) is named by its point and seed: ``lr=0.1 seed 2``.
        """
        if self.point:
            return f"{self.point} seed {self.seed}"
        return f"{self.notebook} seed {self.seed}" if self.sweep else self.notebook


@dataclass(frozen=True)
class ChapterRun(_Labelled):
    """What one run of a chapter produced: its record, and what the runner saw of it.

    The fields up to ``headlines`` are what the chapter recorded (:meth:`dump`); the others, what
    the run that executed it saw. ``ok`` means it ran to its end with every check passing;
    ``complete`` that it ran to its end (its outputs are in place), though the checks of
    :attr:`failed_checks` failed. A failure (``error``, the date of its record in ``failed/``),
    a further seed (``sweep``) and an explore's point (``point``) are the same record.
    """

    #: The notebook's name (file stem), the profile it ran at, every check in the order made.
    notebook: str
    profile: str = ""
    checks: tuple[Check, ...] = ()
    #: Every qualification (:meth:`~ntpnb.chapter._claims.ClaimLog.qualify`).
    qualifications: tuple[Statement, ...] = ()
    #: :func:`~ntpnb.records._platform.platform_info` of the kernel that ran it (None in older records).
    platform: Mapping[str, Any] | None = None
    #: The seed the chapter ran at (None when it did not say, or it has no seed parameter).
    seed: int | None = None
    #: Whether the chapter ran to its end (:meth:`~ntpnb.chapter._claims.ClaimLog.conclude`), so
    #: every check is recorded (and, run by the runner, its outputs are in place).
    complete: bool = False
    #: Every parameter of the run, recorded by ``ntpnb reproduce`` (None outside the runner): the
    #: verdicts pool only seeds of runs that differ in nothing else.
    parameters: Mapping[str, Any] | None = None
    #: Each claim's headline this chapter leads (:meth:`~ntpnb.chapter._claims.ClaimLog.headline`).
    headlines: tuple[Statement, ...] = ()
    #: The point of an explore's grid it ran at ("" for none).
    point: str = ""
    #: A further seed of the sweep, not the book's.
    sweep: bool = False
    #: Why it failed (one line), or how many checks failed; None when it is ``ok``.
    error: str | None = None
    #: Its wall time in seconds; not executed (``cached``): unchanged since its last run to its end;
    #: ``compiled``: numba compiled kernels while it ran (:func:`~ntpnb._compiled.cache_state`).
    seconds: float = 0.0
    cached: bool = False
    compiled: bool = False
    #: Its executed copy (for a failure, the kept copy; None when none could be kept).
    executed: Path | None = None
    #: The figures it wrote, relative to its tree (``figures/<name>.png``, ...).
    figures: tuple[str, ...] = ()
    #: When its failure was recorded (UTC), as its record in ``failed/`` says ("" for none).
    date: str = ""

    @property
    def ok(self) -> bool:
        """Whether it ran to its end with every check passing."""
        return self.complete and self.error is None

    @property
    def failed(self) -> tuple[Check, ...]:
        """The checks that failed and fail the chapter (those that print ``FAIL``)."""
        return tuple(c for c in self.checks if c.result == "FAIL")

    @property
    def failed_checks(self) -> tuple[str, ...]:
        """One line for each failed check (:attr:`~ntpnb.evidence._checks.Check.failure`)."""
        return tuple(c.failure for c in self.failed)

    def dump(self) -> str:
        """What the chapter recorded, as JSON text: what ``<tree>/claims/<notebook>.json`` holds."""
        data = asdict(self)
        recorded = {f.name: data[f.name] for f in fields(self)[:RECORDED_FIELDS]}
        return json.dumps(recorded, indent=1) + "\n"

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ChapterRun:
        """The run a chapter recorded, from the JSON of ``<tree>/claims/<notebook>.json``."""
        profile = data.get("profile", "")
        return cls(
            notebook=data["notebook"],
            profile=profile,
            checks=tuple(Check.from_json(c, profile) for c in data.get("checks", [])),
            qualifications=_statements(data.get("qualifications", [])),
            platform=data.get("platform"),
            seed=data.get("seed"),
            complete=bool(data.get("complete", False)),
            parameters=data.get("parameters"),
            headlines=_statements(data.get("headlines", [])),
        )


#: How many of :class:`ChapterRun`'s fields, from the first, the chapter records (:meth:`ChapterRun.dump`).
RECORDED_FIELDS = 9


def _statements(items: Any) -> tuple[Statement, ...]:
    """The statements a record holds (each validated as any statement is)."""
    return tuple(
        Statement(q["claim"], q["text"], q.get("numbers", {}), q.get("samples", {}), q.get("limit", ""))
        for q in items
    )


def load_chapter_run(path: Path) -> ChapterRun:
    """The chapter run recorded in the JSON file ``path``; PathError naming it if it does not hold one."""
    return read_record(path, "claim record", ChapterRun.from_json)


def load_chapter_runs(folder: Path) -> list[ChapterRun]:
    """Every chapter run recorded in ``folder`` (``*.json``, by file name; none if it does not exist)."""
    return [load_chapter_run(path) for path in sorted(Path(folder).glob("*.json"))]


def failed_runs(tree: OutputTree) -> tuple[ChapterRun, ...]:
    """The failed last runs of ``tree.failed`` (``*.json`` records that are readable dicts), by file name.

    Each as its record states it: the notebook, the date and the error, as ``str`` of what it holds.
    """
    failed = []
    for path in sorted(tree.failed.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            notebook, date, error = (str(data.get(key)) for key in ("notebook", "date", "error"))
            failed.append(ChapterRun(notebook, error=error, date=date))
    return tuple(failed)


@dataclass(frozen=True)
class PlannedRun(_Labelled):
    """One notebook to execute: its source, what papermill injects, into which tree, its cache key."""

    source: Path
    parameters: dict[str, Any]
    tree: OutputTree
    key: str
    sweep: bool = False
    package: str = ""  # the fingerprint of the ntpnb sources in its cache key
    point: str = ""

    @property
    def notebook(self) -> str:
        """The notebook's name (file stem)."""
        return self.source.stem

    @property
    def seed(self) -> int | None:
        """The seed it runs at (None if the notebook has no ``seed`` parameter)."""
        return int_seed(self.parameters)

    @property
    def executed(self) -> Path:
        """Where its executed copy goes in the output tree."""
        return self.tree.notebooks / f"{self.notebook}.ipynb"


def int_seed(parameters: Mapping[str, Any]) -> int | None:
    """The integer ``seed`` parameter, if there is one."""
    seed = parameters.get("seed")
    return seed if isinstance(seed, int) and not isinstance(seed, bool) else None


def complete_run(run: PlannedRun, claims: Path) -> ChapterRun | None:
    """The record of ``run`` in ``claims``, if it reads and is complete (empty if it keeps none)."""
    path = claims / f"{run.notebook}.json"
    if not path.exists():
        return ChapterRun(run.notebook, str(run.parameters.get("profile", "")), complete=True)
    try:
        record = load_chapter_run(path)
    except PathError:
        return None
    return record if record.complete else None


def completed_run(
    run: PlannedRun,
    record: ChapterRun,
    seconds: float = 0.0,
    cached: bool = False,
    compiled: bool = False,
    figures: tuple[str, ...] = (),
) -> ChapterRun:
    """What ``run`` produced, which ran to its end and wrote ``record`` (``cached``: in an earlier run).

    ``compiled``: numba compiled kernels while it ran; ``figures``: those it wrote.
    """
    failed = record.failed_checks
    error = f"{len(failed)} of {len(record.checks)} checks failed" if failed else None
    return replace(
        record,
        notebook=run.notebook,
        seed=run.seed,
        complete=True,
        point=run.point,
        sweep=run.sweep,
        error=error,
        seconds=seconds,
        cached=cached,
        compiled=compiled,
        executed=run.executed,
        figures=figures,
    )


def failed_run(run: PlannedRun, error: str, seconds: float = 0.0, kept: Path | None = None) -> ChapterRun:
    """What ``run`` produced when it failed before its end, with ``error`` (one line)."""
    profile = str(run.parameters.get("profile", ""))
    return ChapterRun(
        run.notebook,
        profile,
        seed=run.seed,
        point=run.point,
        sweep=run.sweep,
        error=error,
        seconds=seconds,
        executed=kept,
    )
