"""How long each notebook took to reproduce, per profile: ``<output root>/timings.json``.

``ntpnb reproduce`` records every notebook it executes (not the cached ones) there, keyed by
profile and notebook name: wall seconds, ``--jobs``, the date (UTC) and whether it succeeded. A
later run of the same notebook at the same profile replaces its entry. The file is read by
:func:`~ntpnb.chapter.layout.load_timings`; the book's benchmarks page renders it as a table
(:func:`~ntpnb.book.benchmarks_page.format_timings`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path

from ..chapter.atomic import atomic_write_text
from ..chapter.layout import OutputLayout, load_timings

__all__ = ["record_timings"]


def record_timings(
    layout: OutputLayout, profile: str, results: Iterable[object], jobs: int, now: datetime | None = None
) -> Path:
    """Add or replace the entries of the executed (not cached) ``results`` and write the file.

    ``results`` are :class:`~ntpnb.runner.execute.RunResult` (``name``, ``ok``, ``seconds``,
    ``cached``). The file is replaced atomically.
    """
    timings = load_timings(layout)
    date = (now or datetime.now(timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    entries = timings.setdefault(profile, {})
    for r in results:
        if not r.cached:
            entries[r.name] = {"seconds": round(r.seconds, 2), "jobs": jobs, "date": date, "ok": bool(r.ok)}
    return atomic_write_text(layout.timings, json.dumps(timings, indent=1, sort_keys=True) + "\n")
