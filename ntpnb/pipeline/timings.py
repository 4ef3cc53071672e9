"""How long each notebook took to reproduce, per profile: ``<output root>/timings.json``.

``ntpnb reproduce`` records every notebook it executes (not the cached ones) there, keyed by
profile and notebook name: wall seconds, ``--jobs``, the date (UTC) and whether it succeeded. A
later run of the same notebook at the same profile replaces its entry. The book's benchmarks
page renders the file as a table (:func:`format_timings`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path

from .atomic import atomic_write_text
from .paths import OutputLayout
from .profiles import PROFILE_NAMES

__all__ = ["REPRODUCE_COMMAND", "format_timings", "load_timings", "record_timings"]

#: The command whose runs the file records.
REPRODUCE_COMMAND = "ntpnb reproduce --profile PROFILE"

Timings = dict[str, dict[str, dict[str, object]]]  # profile -> notebook -> record


def load_timings(layout: OutputLayout) -> Timings:
    """The recorded timings of ``layout`` (empty when there are none or the file is unreadable)."""
    try:
        timings = json.loads(layout.timings.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return timings if isinstance(timings, dict) else {}


def record_timings(
    layout: OutputLayout, profile: str, results: Iterable[object], jobs: int, now: datetime | None = None
) -> Path:
    """Add or replace the entries of the executed (not cached) ``results`` and write the file.

    ``results`` are :class:`~ntpnb.pipeline.reproduce.RunResult` (``name``, ``ok``, ``seconds``,
    ``cached``). The file is replaced atomically.
    """
    timings = load_timings(layout)
    date = (now or datetime.now(timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    entries = timings.setdefault(profile, {})
    for r in results:
        if not r.cached:
            entries[r.name] = {"seconds": round(r.seconds, 2), "jobs": jobs, "date": date, "ok": bool(r.ok)}
    return atomic_write_text(layout.timings, json.dumps(timings, indent=1, sort_keys=True) + "\n")


def _profiles(timings: Mapping[str, object]) -> list[str]:
    known = [p for p in PROFILE_NAMES if timings.get(p)]
    return known + sorted(p for p in timings if p not in PROFILE_NAMES and timings[p])


def format_timings(timings: Timings, wall: Mapping[str, float] | None = None) -> str:
    """A Markdown table: one row per notebook, one column per profile, then totals and how run.

    ``wall`` optionally gives the measured wall time of a whole run per profile (with
    ``--jobs > 1`` it is less than the sum of the notebooks' times).
    """
    profiles = _profiles(timings)
    if not profiles:
        return (
            "No notebook reproduction has been timed in this output tree. Run, from the "
            f"repository root, `{REPRODUCE_COMMAND}` (PROFILE `paper` or `quick`; `--force` reruns "
            "notebooks that are cached), then `ntpnb book`."
        )
    names = sorted({name for p in profiles for name in timings[p]})
    lines = ["| notebook | " + " | ".join(profiles) + " |", "|---|" + "---|" * len(profiles)]

    def cell(rec: Mapping[str, object] | None) -> str:
        if rec is None:
            return "not run"
        return f"{float(rec['seconds']):.1f} s" + ("" if rec.get("ok") else " (FAILED)")

    for name in names:
        lines.append(f"| {name} | " + " | ".join(cell(timings[p].get(name)) for p in profiles) + " |")
    totals = [sum(float(r["seconds"]) for r in timings[p].values()) for p in profiles]
    lines.append("| sum of the notebooks | " + " | ".join(f"{t:.1f} s" for t in totals) + " |")
    if wall:
        lines.append("| wall time of the run | " + " | ".join(_wall(wall, p) for p in profiles) + " |")
    notes = []
    for p in profiles:
        jobs = sorted({int(r["jobs"]) for r in timings[p].values()})
        dates = sorted({str(r["date"]) for r in timings[p].values()})
        when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
        failed = [n for n, r in timings[p].items() if not r.get("ok")]
        note = f"- `{p}`: `ntpnb reproduce --profile {p} --jobs {'/'.join(map(str, jobs))}`, {when}"
        notes.append(note + (f"; failed: {', '.join(sorted(failed))}" if failed else ""))
    return "\n".join(lines) + "\n\n" + "\n".join(notes)


def _wall(wall: Mapping[str, float], profile: str) -> str:
    return f"{wall[profile]:.1f} s" if profile in wall else "n/a"
