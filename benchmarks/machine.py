"""The machine of a benchmark run: its platform record, the date, and the load before and after.

The page shows it first, as a short table (:func:`format_machine`); the full platform record
(:func:`ntpnb.chapter.platform_info` of the run) ends the page.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ntpnb.chapter import markdown_table


@dataclass(frozen=True)
class Machine:
    """Where and when this run measured: its platform record, its date, the load before and after."""

    platform: dict
    date: str
    load_start: list[float]
    load_end: list[float]


def load_average() -> list[float]:
    """The 1, 5 and 15 minute load averages (empty where the platform has none)."""
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else []


def _blas(info: Mapping) -> str:
    """Each BLAS library of a platform record: its version, kernel and threads, as threadpoolctl reports."""
    libs = [lib for lib in info.get("threadpools") or [] if lib.get("user_api") == "blas"]
    if not libs:
        return "none reported by threadpoolctl"
    return "; ".join(
        f"{lib.get('internal_api')} {lib.get('version')}, kernel {lib.get('architecture')}, "
        f"{lib.get('num_threads')} thread(s)"
        for lib in libs
    )


def _loads(values: Sequence[float]) -> str:
    """Load averages as ``1, 2, 3`` (``n/a`` where none were read)."""
    return ", ".join(f"{v:g}" for v in values) if values else "n/a"


def format_machine(machine: Machine) -> str:
    """The machine of the run, as a short Markdown table (the full record: section Platform)."""
    info = machine.platform
    packages = info.get("packages") or {}
    rows = [
        ["date (start of the run)", machine.date],
        ["CPU", str(info.get("cpu"))],
        ["cores", str(info.get("cores"))],
        ["BLAS", _blas(info)],
        ["Python", str(info.get("python"))],
        ["numpy, numba", f"{packages.get('numpy')}, {packages.get('numba')}"],
        [
            "load average (1, 5, 15 min) at start, at end",
            f"{_loads(machine.load_start)}; {_loads(machine.load_end)}",
        ],
    ]
    return markdown_table(["machine of this run", ""], rows)
