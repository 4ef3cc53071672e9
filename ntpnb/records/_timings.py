"""What a chapter is expected to take: the times ``ntpnb list`` shows, and a run's first estimate.

Two records hold measured times, each entry with the sources that ran (:func:`run_sources`: the
fingerprint of the ``ntpnb`` sources and the SHA-256 of the chapter's source):

* an output tree's ``timings.json``: every notebook ``ntpnb reproduce`` executed into it, on this
  machine (:func:`record_timings`);
* the project's benchmark record :data:`CHAPTER_TIMES` (``benchmarks/chapter_times.json``,
  committed): each chapter alone on one core at every profile, its CPU time (its time on an idle
  core, whatever else the measuring machine ran) and wall time, with the machine, its load, the
  date and the commit, written by ``python -m benchmarks --notebooks`` or ``--chapter-times``
  (:func:`write_chapter_times`).

A time measured with other sources than the current ones is *stale*, and a time measured on
another machine may differ from this one's by :data:`MACHINE_SPREAD`: :class:`Expected` says both
(:func:`expected_time`). The benchmark record's times also give a first run its estimate of the
time left (:func:`reference_seconds`, scaled by how this machine compares as chapters finish) and
its start order (:func:`slowest_first`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import PathError
from ._files import atomic_write_json, file_digest, read_record
from ._places import OutputTree
from ._platform import cpu_model

#: The benchmark record of the chapters' times, relative to the project root (committed).
CHAPTER_TIMES = Path("benchmarks") / "chapter_times.json"
#: How much a chapter's time may differ between machines (a reader's estimate, said with it).
MACHINE_SPREAD = "2-3x"
#: The command that measures the benchmark record again (``python -m benchmarks --chapter-times``).
REFRESH_COMMAND = "ntpnb benchmarks --chapter-times"
#: Where an expected time comes from (:attr:`Expected.where`).
THIS_MACHINE, BENCHMARK = "this machine's last run", "benchmark record"


def run_sources(source: Path, package: str) -> dict[str, str]:
    """The sources a run of the chapter ``source`` ran: ``package`` (fingerprint) and its SHA-256."""
    return {"package": package, "source": file_digest(source)}


def this_machine() -> dict[str, Any]:
    """The machine of this process as a timing record names it: its CPU model and number of cores."""
    return {"cpu": cpu_model(), "cores": os.cpu_count()}


def describe_machine(machine: Mapping[str, Any], load: float | None = None) -> str:
    """``an AMD EPYC 7B13 (2 cores)``; with its ``load`` average, ``... (2 cores, load average 3.5)``."""
    cpu = str(machine.get("cpu") or "unknown CPU")
    about = [f"{machine['cores']} cores"] if machine.get("cores") else []
    about += [f"load average {load:.3g}"] if load is not None else []
    article = "an" if cpu[:1].lower() in "aeiou" else "a"
    return f"{article} {cpu}" + (f" ({', '.join(about)})" if about else "")


@dataclass(frozen=True)
class ChapterTimes:
    """The benchmark record (:data:`CHAPTER_TIMES`): each chapter alone on one core, per profile.

    ``chapters`` maps a chapter to its ``sources`` (:func:`run_sources`) and, per profile, a
    ``{"seconds", "cpu", "ok"}`` record (the wall time, the CPU time: :meth:`seconds`);
    ``machine`` is :func:`this_machine` of the measuring one; ``load``: its 1-minute load average
    when each profile's runs started (a shared machine's wall times are longer by about the load
    per core, its CPU times are not).
    """

    date: str
    commit: str
    machine: dict[str, Any]
    chapters: dict[str, dict[str, Any]]
    load: dict[str, float] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: object) -> ChapterTimes:
        """The record in JSON data; ValueError when its shape is not a benchmark record's."""
        if not isinstance(data, dict) or not isinstance(data.get("chapters"), dict):
            raise ValueError("no 'chapters'")
        date, commit, machine = data.get("date"), data.get("commit", ""), data.get("machine")
        if not isinstance(date, str) or not isinstance(commit, str) or not isinstance(machine, dict):
            raise ValueError("its 'date', 'commit' or 'machine' is of the wrong kind")
        load = data.get("load", {})
        if not isinstance(load, dict) or not all(_is_time({"seconds": x}) for x in load.values()):
            raise ValueError("its 'load' is not load averages by profile")
        for name, chapter in data["chapters"].items():
            if not isinstance(chapter, dict) or not isinstance(chapter.get("sources"), dict):
                raise ValueError(f"{name} has no 'sources'")
            for profile, entry in chapter.items():
                if profile != "sources" and not _is_time(entry):
                    raise ValueError(f"{name} at {profile} is not a time in seconds")
        return cls(date, commit, machine, data["chapters"], load)

    def seconds(self, name: str, profile: str) -> float | None:
        """The time ``name`` takes at ``profile`` on an idle core (None: not measured, or it failed).

        Its CPU time alone on one core (``cpu``), which is its wall time there when nothing else
        runs; a record without one gives the wall time it measured (``seconds``).
        """
        entry = self.chapters.get(name, {}).get(profile)
        if not _is_time(entry) or not entry.get("ok", True):
            return None
        cpu = entry.get("cpu")
        return float(cpu) if _is_time({"seconds": cpu}) else float(entry["seconds"])


def _is_time(entry: object) -> bool:
    """Whether ``entry`` is a timing entry: a dict with a finite, non-negative ``seconds``."""
    seconds = entry.get("seconds") if isinstance(entry, dict) else None
    return isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and 0 <= seconds < float("inf")


def load_chapter_times(root: Path) -> ChapterTimes | None:
    """The benchmark record of the project at ``root`` (None when it has none).

    Raises
    ------
    PathError
        If it does not read or is not of a benchmark record's shape (naming it).
    """
    path = Path(root) / CHAPTER_TIMES
    if not path.exists():
        return None
    return read_record(path, "benchmark record of the chapters' times", ChapterTimes.from_json)


def write_chapter_times(
    root: Path,
    one_core: Mapping[str, Mapping[str, Mapping[str, Any]]],
    date: str,
    commit: str,
    load: Mapping[str, float] | None = None,
) -> Path:
    """Write the benchmark record of the project at ``root``; its path.

    ``one_core`` holds each chapter's run alone on one core, by profile, as ``timings.json``
    records it (with the sources it ran: :func:`record_timings`); ``commit``: the
    project's commit (``""`` unknown); ``load``: the 1-minute load average when each profile's
    runs started. Written atomically.
    """
    chapters: dict[str, dict[str, Any]] = {}
    for profile, entries in one_core.items():
        for name, entry in entries.items():
            sources = {key: entry[key] for key in ("package", "source") if key in entry}
            chapter = chapters.setdefault(name, {"sources": sources})
            chapter[profile] = {"seconds": round(float(entry["seconds"]), 1), "ok": bool(entry.get("ok"))}
            if "cpu" in entry:
                chapter[profile]["cpu"] = round(float(entry["cpu"]), 1)
    data = {
        "date": date,
        "commit": commit,
        "machine": this_machine(),
        "load": dict(load or {}),
        "chapters": dict(sorted(chapters.items())),
    }
    path = Path(root) / CHAPTER_TIMES
    path.parent.mkdir(parents=True, exist_ok=True)
    return atomic_write_json(path, data)


def reference_seconds(root: Path) -> dict[str, dict[str, float]]:
    """Each chapter's benchmark-record time by profile (empty when the record is missing or damaged)."""
    try:
        record = load_chapter_times(root)
    except PathError:
        return {}
    if record is None:
        return {}
    found: dict[str, dict[str, float]] = {}
    for name, chapter in record.chapters.items():
        for profile in chapter:
            if profile != "sources" and (seconds := record.seconds(name, profile)) is not None:
                found.setdefault(name, {})[profile] = seconds
    return found


def slowest_first(reference: Mapping[str, Mapping[str, float]], profile: str = "paper") -> tuple[str, ...]:
    """The chapters of ``reference`` (:func:`reference_seconds`), the slowest at ``profile`` first."""
    timed = [name for name in reference if profile in reference[name]]
    return tuple(sorted(timed, key=lambda name: -reference[name][profile]))


@dataclass(frozen=True)
class Expected:
    """A chapter's expected time at a profile, where it was measured, and whether it still holds."""

    seconds: float
    #: :data:`THIS_MACHINE` or :data:`BENCHMARK`.
    where: str
    #: Why it may not hold for the current sources ("" when it was measured with them).
    stale: str = ""
    #: Whether it was measured on another machine (the benchmark record's, of another kind).
    other_machine: bool = False
    #: Whether it includes numba's compiling of the kernels (a first run: later ones load them).
    compiled: bool = False

    def describe(self) -> str:
        """``paper 18 s`` or ``quick 2 min``, the time only."""
        return f"{self.seconds:.0f} s" if self.seconds < 90 else f"{self.seconds / 60:.0f} min"

    def rank(self) -> tuple[bool, bool, bool]:
        """Its order among the times of one chapter: one that includes compiling last, then a stale one."""
        return (self.compiled, bool(self.stale), self.other_machine)


def staleness(recorded: Mapping[str, Any] | None, current: Mapping[str, str]) -> str:
    """Why a time run with the ``recorded`` sources may not hold for the ``current`` ones ("" if it does)."""
    if not isinstance(recorded, Mapping) or not recorded.get("package") or not recorded.get("source"):
        return "its sources were not recorded"
    changed = [
        what
        for key, what in (("source", "this chapter"), ("package", "ntpnb"))
        if recorded.get(key) != current[key]
    ]
    return f"measured with another version of {' and of '.join(changed)}" if changed else ""


def measured_times(
    name: str,
    profile: str,
    current: Mapping[str, str],
    tree: OutputTree,
    record: ChapterTimes | None,
) -> list[Expected]:
    """Every time measured of ``name`` at ``profile``: this machine's last run into ``tree``, the record's.

    ``current``: the sources now (:func:`run_sources`), against which each time is stale or not.
    This machine's is its last run at the book's seed, or, where that compiled numba's kernels,
    the mean of its last runs at the sweep's further seeds (``tree``'s seed trees) that did not.
    """
    found = []
    entries = [load_timings(seed_tree).get(profile, {}).get(name) for seed_tree in tree.seed_trees().values()]
    entries = [e for e in [load_timings(tree).get(profile, {}).get(name), *entries] if _is_time(e)]
    warm = [e for e in entries if e.get("compiled") is not True]
    if warm and warm[0] is not entries[0]:  # the book's seed compiled: the seeds after it did not
        seconds = sum(float(e["seconds"]) for e in warm) / len(warm)
        found.append(Expected(seconds, THIS_MACHINE, staleness(warm[0], current)))
    elif entries:
        entry = entries[0]
        compiled = entry.get("compiled") is True
        found.append(
            Expected(float(entry["seconds"]), THIS_MACHINE, staleness(entry, current), compiled=compiled)
        )
    seconds = record.seconds(name, profile) if record is not None else None
    if record is not None and seconds is not None:
        stale = staleness(record.chapters[name].get("sources"), current)
        other = record.machine != this_machine()
        found.append(Expected(seconds, BENCHMARK, stale, other))
    return found


def expected_time(
    name: str,
    profile: str,
    current: Mapping[str, str],
    tree: OutputTree,
    record: ChapterTimes | None,
) -> Expected | None:
    """The time ``name`` is expected to take at ``profile`` (None when nothing measured it).

    Of this machine's last run into ``tree`` (its ``timings.json``) and the benchmark ``record``,
    a time measured with the ``current`` sources (:func:`run_sources`) comes first, then this
    machine's, so a stale time is shown only when no current one exists; a time that includes
    numba's compiling comes last of all (:meth:`Expected.rank`).
    """
    return min(measured_times(name, profile, current, tree, record), key=Expected.rank, default=None)


def describe_record(record: ChapterTimes) -> str:
    """What the benchmark record measured, where and when, and how far this machine may be from it."""
    commit = f", commit {record.commit[:7]}" if record.commit else ""
    machine = describe_machine(record.machine, max(record.load.values()) if record.load else None)
    what = "each chapter's CPU time alone on one core, its time on an idle core"
    text = f"{what}, of {machine}, {record.date}{commit}"
    ratios = [
        entry["seconds"] / entry["cpu"]
        for chapter in record.chapters.values()
        for profile, entry in chapter.items()
        if profile != "sources"
        and _is_time(entry)
        and _is_time({"seconds": entry.get("cpu")})
        and entry["cpu"]
    ]
    if ratios and max(ratios) >= 1.5:  # its load showed: what a shared machine's wall times are
        low, high = f"{min(ratios):.1f}", f"{max(ratios):.1f}"
        text += f" (under that load, wall times {low if low == high else f'{low}-{high}'}x these)"
    if record.machine != this_machine():
        text += (
            f"; this machine ({describe_machine(this_machine())}) is another kind and may differ by "
            f"{MACHINE_SPREAD}"
        )
    return text


def refresh_minutes(record: ChapterTimes) -> int:
    """About how many minutes measuring the benchmark record again takes (the sum of its times)."""
    total = sum(
        entry["seconds"]
        for chapter in record.chapters.values()
        for profile, entry in chapter.items()
        if profile != "sources" and _is_time(entry)
    )
    return max(1, round(total / 60))


def format_expected(times: Sequence[tuple[str, Expected]]) -> str:
    """``paper 18 s, quick 9 s (benchmark record)``: the times of one chapter, grouped by where measured."""
    groups: dict[tuple[str, str, bool], list[str]] = {}
    for profile, expected in times:
        key = (expected.where, expected.stale, expected.compiled)
        groups.setdefault(key, []).append(f"{profile} {expected.describe()}")
    return "; ".join(
        f"{', '.join(shown)} ({where}{f', stale: {stale}' if stale else ''}"
        f"{', which includes numba compiling the kernels (a first run)' if compiled else ''})"
        for (where, stale, compiled), shown in groups.items()
    )


#: The recorded times of the chapters: profile -> notebook -> its record.
Timings = dict[str, dict[str, dict[str, object]]]


def load_timings(tree: OutputTree) -> Timings:
    """The times ``ntpnb reproduce`` recorded in ``tree`` (empty when none, or unreadable).

    ``timings.json`` maps profile -> notebook -> ``seconds``, ``jobs``, ``date`` (UTC) and ``ok``
    (written by :func:`ntpnb.records._timings.record_timings`).
    """
    try:
        timings = json.loads(tree.timings.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return timings if isinstance(timings, dict) else {}


def last_seconds(tree: OutputTree, profile: str, name: str) -> float:
    """How long ``name`` took at ``profile`` when last run into ``tree`` (inf if unknown)."""
    record = load_timings(tree).get(profile, {}).get(name, {})
    seconds = record.get("seconds") if isinstance(record, dict) else None
    return float(seconds) if isinstance(seconds, (int, float)) else float("inf")


def record_timings(
    tree: OutputTree,
    profile: str,
    results: Iterable[object],
    jobs: int,
    now: datetime | None = None,
    sources: Mapping[str, Mapping[str, str]] | None = None,
) -> Path:
    """Add or replace the entries of the executed (not cached) ``results`` in ``tree.timings``.

    ``sources``: the sources each notebook ran, by name (:func:`~._timings.run_sources`), kept with
    its time so that a time of other sources is known as such (:func:`~._timings.staleness`); a
    time that includes numba's compiling is marked ``compiled``.
    """
    timings = load_timings(tree)
    date = (now or datetime.now(timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    entries = timings.setdefault(profile, {})
    for r in results:
        if not r.cached:
            entry = {"seconds": round(r.seconds, 2), "jobs": jobs, "date": date, "ok": bool(r.ok)}
            entry |= {"compiled": True} if getattr(r, "compiled", False) else {}
            entries[r.notebook] = entry | dict((sources or {}).get(r.notebook, {}))
    return atomic_write_json(tree.timings, timings, sort_keys=True)
