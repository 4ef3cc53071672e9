"""How long each notebook took to reproduce, per profile: ``<output root>/timings.json``.

By profile and notebook: wall seconds, ``--jobs``, the date (UTC) and whether it succeeded; read
by :func:`~ntpnb.chapter.layout.load_timings` for the book's benchmarks page.
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
    """Add or replace the entries of the executed (not cached) ``results`` and write the file."""
    timings = load_timings(layout)
    date = (now or datetime.now(timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    entries = timings.setdefault(profile, {})
    for r in results:
        if not r.cached:
            entries[r.name] = {"seconds": round(r.seconds, 2), "jobs": jobs, "date": date, "ok": bool(r.ok)}
    return atomic_write_text(layout.timings, json.dumps(timings, indent=1, sort_keys=True) + "\n")
