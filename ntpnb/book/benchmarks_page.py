"""The book's benchmarks page: made at build time from the last ``python -m benchmarks`` run.

``python -m benchmarks`` writes its results under the output tree (``outputs/benchmarks/``:
``benchmarks.md``, the page with every table, and ``benchmarks.json``, the measurements).
``ntpnb book`` calls :func:`write_benchmarks_page` before building, which copies that page to
``outputs/benchmarks.md`` (the document ``_toc.yml`` lists), or, when no benchmark has been run
into this output tree, writes a page that says so and names the command. The book therefore never
shows a number that no run produced, and nothing generated is committed.

Either way the page ends with the section "Notebook reproduction times", rendered from
``<output root>/timings.json`` (what ``ntpnb reproduce`` recorded for this output tree: ``./run.sh
reproduce`` runs the paper profile and then ``ntpnb book``, so the page shows those times), or
naming the command when no notebook has been timed there (:func:`format_timings`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..chapter.atomic import atomic_write_text
from ..chapter.claims import PROFILE_NAMES
from ..chapter.paths import OutputLayout, Timings, load_timings

__all__ = [
    "BENCHMARKS_DOCNAME",
    "BENCHMARKS_COMMAND",
    "REPRODUCE_COMMAND",
    "TIMINGS_TITLE",
    "format_timings",
    "render_benchmarks_page",
    "render_timings_section",
    "write_benchmarks_page",
]

#: The page's place in the book, relative to the project root (``_toc.yml`` lists it).
BENCHMARKS_DOCNAME = "outputs/benchmarks"
#: The command that measures the benchmarks (run from the project root).
BENCHMARKS_COMMAND = "python -m benchmarks"

NOT_RUN = f"""\
# Benchmarks

No benchmark has been run for this build of the book, so this page shows no solver timing.
Run, from the repository root,

```bash
{BENCHMARKS_COMMAND}
ntpnb book
```

The first command times every solver against problem size (about half an hour on 2 cores) and writes
`outputs/benchmarks/benchmarks.md` and `outputs/benchmarks/benchmarks.json`; the second rebuilds
the book, with the measured tables on this page.
"""


TIMINGS_TITLE = "Notebook reproduction times"
#: The command whose runs ``timings.json`` records.
REPRODUCE_COMMAND = "ntpnb reproduce --profile PROFILE"


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


def render_timings_section(layout: OutputLayout) -> str:
    """The section: each notebook's last reproduction time in ``layout``, per profile."""
    return (
        f"## {TIMINGS_TITLE}\n\n"
        f"The wall time of each notebook's last execution into this output tree (`{layout.root.name}/`), "
        "by profile, as `ntpnb reproduce` recorded it in `timings.json` (cached notebooks are not "
        "executed and keep their earlier time). With `--jobs N` the notebooks ran N at a time on a "
        "shared machine, so each took longer than alone.\n\n"
        f"{format_timings(load_timings(layout))}\n"
    )


def render_benchmarks_page(layout: OutputLayout) -> str:
    """The page: the last run's ``benchmarks/benchmarks.md`` (or the not-run text), then the times."""
    results = layout.benchmarks / "benchmarks.md"
    page = results.read_text(encoding="utf-8") if results.is_file() else NOT_RUN
    return page.rstrip("\n") + "\n\n" + render_timings_section(layout)


def write_benchmarks_page(layout: OutputLayout) -> Path:
    """Write the page to ``<layout.root>/benchmarks.md`` and return its path."""
    path = layout.root / "benchmarks.md"
    atomic_write_text(path, render_benchmarks_page(layout))
    return path
