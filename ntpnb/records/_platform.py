"""The machine that produced a run's numbers: CPU, BLAS (kernel, threads), library versions.

Numbers that pass on one CPU can fail on another (OpenBLAS picks its kernels by CPU; a rank
decision near machine epsilon once flipped on a Haswell kernel). So :func:`platform_info` is
recorded by every :class:`~ntpnb.chapter._claims.ClaimLog` and in ``benchmarks.json``; the report
and benchmarks page render what the runs recorded (:func:`format_platform`,
:func:`platform_section`), never the machine building the book.
"""

from __future__ import annotations

import os
import platform as _platform
import sys
from collections.abc import Mapping
from contextlib import suppress
from importlib import metadata
from pathlib import Path
from typing import Any

from threadpoolctl import threadpool_info

from .._markdown import markdown_table

#: The packages whose versions a run records (the numerical stack of ntpnb).
PACKAGES = ("numpy", "scipy", "numba", "cvxpy", "clarabel", "osqp", "scs", "highspy", "threadpoolctl")

#: The fields of each library threadpoolctl reports that a run records.
LIBRARY_KEYS = ("user_api", "internal_api", "version", "architecture", "threading_layer", "num_threads")

#: Environment variables that set thread counts (recorded when set).
THREAD_ENV: tuple[str, ...] = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def cpu_model() -> str:
    """The CPU's model name (Linux: ``model name`` of /proc/cpuinfo), else what ``platform`` says."""
    with suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "cpu model") and value.strip():
                return value.strip()
    return _platform.processor() or _platform.machine() or "unknown"


def platform_info() -> dict[str, Any]:
    """Where this process runs, as plain JSON data.

    Returns
    -------
    dict
        ``cpu`` (model name), ``cores``, ``machine``, ``os``, ``python``, ``packages`` (name ->
        version, None when not installed), ``threadpools`` (per loaded BLAS/OpenMP library, the
        :data:`LIBRARY_KEYS` and ``file``), ``openblas_coretype`` and ``thread_env``. numpy's and
        scipy's BLAS are loaded first, so every run of a machine records the same.
    """
    import numpy  # noqa: F401  (loads numpy's OpenBLAS)
    import scipy.linalg  # noqa: F401  (loads scipy's, a separate library)

    pools = [
        {**{k: lib.get(k) for k in LIBRARY_KEYS}, "file": Path(lib.get("filepath") or "").name}
        for lib in threadpool_info()
    ]
    pools.sort(key=lambda lib: (str(lib["user_api"]), lib["file"]))
    packages: dict[str, str | None] = dict.fromkeys(PACKAGES)  # None: not installed
    for name in PACKAGES:
        loaded = getattr(sys.modules.get(name), "__version__", None)
        with suppress(metadata.PackageNotFoundError):
            packages[name] = loaded if isinstance(loaded, str) else metadata.version(name)
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "machine": _platform.machine(),
        "os": f"{_platform.system()} {_platform.release()}",
        "python": f"{_platform.python_implementation()} {_platform.python_version()}",
        "packages": packages,
        "threadpools": pools,
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
        "thread_env": {k: os.environ[k] for k in THREAD_ENV if k in os.environ},
    }


def _cell(value: object) -> str:
    text = "not set" if value is None or value == {} else str(value)
    return text.replace("|", "\\|")


def _rows(info: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(what, value)`` rows of one platform record (missing entries say so)."""
    packages = ", ".join(f"{n} {v}" for n, v in (info.get("packages") or {}).items() if v) or "not recorded"
    rows = [
        ("CPU", _cell(info.get("cpu"))),
        ("cores", _cell(info.get("cores"))),
        ("OS, architecture", f"{_cell(info.get('os'))}, {_cell(info.get('machine'))}"),
        ("Python", _cell(info.get("python"))),
        ("packages", packages),
    ]
    for lib in info.get("threadpools") or []:
        # a library is named by its file (two copies of one OpenBLAS version can be loaded)
        label = f"{_cell(lib.get('user_api'))} library `{_cell(lib.get('file'))}`"
        value = f"{_cell(lib.get('internal_api'))} {_cell(lib.get('version'))}"
        if lib.get("architecture"):
            value += f", kernel {_cell(lib.get('architecture'))}"
        value += f", {_cell(lib.get('num_threads'))} thread(s)"
        if lib.get("threading_layer"):
            value += f" ({_cell(lib.get('threading_layer'))})"
        rows.append((label, value))
    if not info.get("threadpools"):
        rows.append(("BLAS", "no library reported by threadpoolctl"))
    rows.append(("`OPENBLAS_CORETYPE`", _cell(info.get("openblas_coretype"))))
    env = info.get("thread_env") or {}
    rows.append(("thread variables", ", ".join(f"`{k}={v}`" for k, v in env.items()) or "not set"))
    return rows


def format_platform(info: Mapping[str, Any]) -> str:
    """One platform record as a markdown table (what, value)."""
    return markdown_table(("", "recorded by the run"), _rows(info)) + "\n"


def platform_section(records: Mapping[str, Mapping[str, Any] | None], what: str = "run") -> str:
    """Markdown for the platforms of several runs: one table per distinct platform, naming its runs.

    ``records`` maps a run's name to its :func:`platform_info` (None when it recorded none);
    ``what`` is what a run is called in the text ("chapter", "run").
    """
    unrecorded = [name for name, info in records.items() if info is None]
    groups: dict[str, tuple[Mapping[str, Any], list[str]]] = {}
    for name, info in records.items():
        if info is not None:
            groups.setdefault(format_platform(info), (info, []))[1].append(name)
    parts = []
    if not groups and not unrecorded:
        return f"No {what} has recorded its platform yet.\n"
    if len(groups) == 1 and not unrecorded:
        ((table, (_, names)),) = groups.items()
        return f"Every {what} ({', '.join(names)}) ran on:\n\n{table}"
    if len(groups) > 1:
        tables = [dict(_rows(info)) for info, _ in groups.values()]
        labels = dict.fromkeys(label for table in tables for label in table)  # a missing row differs too
        differ = [label for label in labels if len({table.get(label, "absent") for table in tables}) > 1]
        parts.append(
            f"The {what}s ran on {len(groups)} different platforms; they differ in: {', '.join(differ)}.\n"
        )
    for table, (_, names) in groups.items():
        label = what if len(names) == 1 else f"{what}s"
        parts.append(f"{label.capitalize()} {', '.join(names)}:\n\n{table}")
    if unrecorded:
        parts.append(f"No platform recorded (an older run): {', '.join(unrecorded)}.\n")
    return "\n".join(parts)
