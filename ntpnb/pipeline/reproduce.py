"""Execute the notebooks: Jupytext source -> papermill (with a profile) -> executed ``.ipynb``.

One failed notebook does not stop the others: each result is reported, and the executed
notebook is kept even when it failed (papermill writes the error into it), for debugging.

With ``jobs > 1`` (the default is one per CPU core) the notebooks run in parallel, each in its
own worker process and kernel; the parent prints one progress line per notebook as it finishes,
so the lines never interleave. The notebooks that took longest on their last run start first.

Every kernel runs its BLAS with :data:`ntpnb.settings.BLAS_THREADS` threads (unless the
environment already sets ``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` or ``MKL_NUM_THREADS``):
the notebooks' matrices are small, so more threads only wait for each other, and notebooks
running side by side would otherwise ask for more threads than there are cores.

A notebook is not executed again when nothing that determines its outputs changed since its
last successful run into the same output tree: its :func:`cache_key` (a hash of the notebook's
source, its parameters (profile and ``-p`` overrides) and the sources of the ``ntpnb`` package)
is stored beside the executed notebook (``<name>.key.json``) after every successful run and
removed before every new one. ``force=True`` (``ntpnb reproduce --force``) runs it anyway.

The wall time of every executed notebook is recorded in ``<output root>/timings.json``
(:mod:`ntpnb.pipeline.timings`), which the book's benchmarks page shows.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import default

from .. import settings
from ..errors import NTPError
from .paths import DEFAULT_OUTPUT_DIRNAME, OutputLayout, output_layout, override_output_dir
from .profiles import PROFILE_NAMES, apply_overrides
from .timings import load_timings, record_timings

__all__ = [
    "RunResult",
    "cache_key",
    "default_jobs",
    "execute_notebook",
    "notebook_sources",
    "package_fingerprint",
    "reproduce",
    "select_notebooks",
]

KERNEL_NAME = "python3"

#: The thread-count variables of the BLAS libraries numpy and scipy may load.
BLAS_ENV_VARS: tuple[str, ...] = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def default_jobs() -> int:
    """How many notebooks run at once by default: one per CPU core."""
    return max(1, os.cpu_count() or 1)


@contextmanager
def kernel_environment() -> Iterator[None]:
    """Within: kernels started from this process use :data:`ntpnb.settings.BLAS_THREADS` threads.

    Variables the user has set are left alone; the environment is restored afterwards.
    """
    added = [var for var in BLAS_ENV_VARS if var not in os.environ]
    for var in added:
        os.environ[var] = str(settings.BLAS_THREADS)
    try:
        yield
    finally:
        for var in added:
            os.environ.pop(var, None)


class IPCKernelManager(AsyncKernelManager):
    """A kernel manager that talks to its kernel over Unix-domain sockets instead of TCP.

    The kernel then needs no network interface at all (not even loopback), and ipykernel
    does not warn about unencrypted TCP on every start.
    """

    @default("transport")
    def _default_transport(self) -> str:
        return "ipc"

    def _ip_default(self) -> str:
        # jupyter_client's default, ``kernel-ipc`` in the working folder, is shared by kernels
        # started there at once (``--jobs``), which then answer each other's messages: give
        # every kernel its own socket prefix in the temporary folder.
        return os.path.join(tempfile.gettempdir(), f"ntpnb-kernel-{uuid.uuid4().hex}-ipc")


@dataclass(frozen=True)
class RunResult:
    """Outcome of executing one notebook."""

    name: str
    ok: bool
    seconds: float
    executed: Path
    error: str | None = None
    cached: bool = False  # not executed: unchanged since its last successful run


def notebook_sources(root: Path) -> list[Path]:
    """The Jupytext sources ``<root>/notebooks/*.md``, sorted by name."""
    return sorted((root / "notebooks").glob("*.md"))


def select_notebooks(sources: Sequence[Path], names: Sequence[str]) -> list[Path]:
    """The sources named in ``names`` (file stems, or unique prefixes); all if ``names`` is empty.

    Raises
    ------
    NTPError
        If a name matches no notebook or more than one.
    """
    if not names:
        return list(sources)
    chosen = []
    for name in names:
        stem = Path(name).stem
        matches = [s for s in sources if s.stem == stem] or [s for s in sources if s.stem.startswith(stem)]
        if len(matches) != 1:
            known = ", ".join(s.stem for s in sources)
            what = "no notebook" if not matches else "several notebooks"
            raise NTPError(f"{what} named {name!r}; the notebooks are: {known}")
        chosen.append(matches[0])
    return chosen


def _warm_matplotlib() -> None:
    """Build matplotlib's font cache now, so its one-time notice never lands in a notebook."""
    import matplotlib.font_manager  # noqa: F401


def notebook_parameters(
    source: Path, profile: str, layout: OutputLayout, overrides: Mapping[str, str] | None = None
) -> dict[str, object]:
    """Every parameter papermill injects into ``source``: the profile's, overridden, and where to write.

    ``overrides`` maps parameter names to text values (see
    :func:`~ntpnb.pipeline.profiles.apply_overrides`).
    """
    parameters = apply_overrides(source.stem, profile, overrides or {})
    # relative to the executed notebook's folder, where papermill, nbval and Jupyter run it
    parameters.update(profile=profile, output_dir=os.path.relpath(layout.root, layout.notebooks))
    return parameters


def package_fingerprint() -> str:
    """SHA-256 of the ``ntpnb`` package's Python sources (paths and contents), so a code change shows."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def cache_key(source: Path, parameters: Mapping[str, object], fingerprint: str | None = None) -> str:
    """SHA-256 of the notebook source, its parameters and the package fingerprint."""
    digest = hashlib.sha256()
    digest.update(source.read_bytes() + b"\0")
    digest.update(json.dumps(dict(parameters), sort_keys=True, default=repr).encode() + b"\0")
    digest.update((fingerprint or package_fingerprint()).encode())
    return digest.hexdigest()


def _key_path(executed: Path) -> Path:
    return executed.with_name(f"{executed.stem}.key.json")


def _last_seconds(layout: OutputLayout, profile: str, name: str) -> float:
    """How long ``name`` took at ``profile`` when last run into ``layout`` (inf if unknown)."""
    record = load_timings(layout).get(profile, {}).get(name, {})
    seconds = record.get("seconds") if isinstance(record, dict) else None
    return float(seconds) if isinstance(seconds, (int, float)) else float("inf")


def _is_cached(executed: Path, key: str) -> bool:
    path = _key_path(executed)
    if not (executed.is_file() and path.is_file()):
        return False
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("key") == key
    except (ValueError, AttributeError):
        return False


def _run_papermill(
    source: Path, parameters: Mapping[str, object], layout: OutputLayout, key: str
) -> RunResult:
    """Execute ``source`` with ``parameters`` into ``layout``; record ``key`` if it succeeds."""
    import jupytext
    import papermill

    name = source.stem
    executed = layout.notebooks / f"{name}.ipynb"
    _key_path(executed).unlink(missing_ok=True)  # a failed or interrupted run leaves no key
    start = time.perf_counter()
    try:
        with kernel_environment():
            papermill.execute_notebook(
                jupytext.read(source),
                str(executed),
                parameters=dict(parameters),
                cwd=str(layout.notebooks),
                kernel_name=KERNEL_NAME,
                kernel_manager_class=IPCKernelManager,
                progress_bar=False,
                log_output=False,
            )
    except Exception as exc:  # report any failure, go on with the others
        summary = _summarize(exc)
        return RunResult(name, False, time.perf_counter() - start, executed, summary)
    seconds = time.perf_counter() - start
    hide_injected_parameters(executed)
    record = {"key": key, "parameters": dict(parameters), "seconds": round(seconds, 3)}
    _key_path(executed).write_text(json.dumps(record, indent=1, default=repr) + "\n", encoding="utf-8")
    return RunResult(name, True, seconds, executed)


def hide_injected_parameters(executed: Path) -> None:
    """Collapse the cell papermill injects (tag ``injected-parameters``) in the rendered book.

    The notebook's own ``parameters`` cell shows the paper's values right above it; the
    injected cell, which holds the values this run used, is kept (a reader can expand it) but
    tagged ``hide-input`` so the page does not show two parameter listings one after the other.
    """
    import nbformat

    nb = nbformat.read(executed, as_version=4)
    for cell in nb.cells:
        tags = cell.metadata.setdefault("tags", [])
        if "injected-parameters" in tags and "hide-input" not in tags:
            tags.append("hide-input")
    nbformat.write(nb, executed)


def execute_notebook(
    source: Path,
    profile: str,
    layout: OutputLayout,
    overrides: Mapping[str, str] | None = None,
    force: bool = False,
) -> RunResult:
    """Execute one Jupytext notebook with papermill under ``profile`` into ``layout``.

    Unless ``force``, a notebook whose :func:`cache_key` equals the one stored by its last
    successful run into ``layout`` is not executed (the result says ``cached``).
    """
    parameters = notebook_parameters(source, profile, layout, overrides)
    key = cache_key(source, parameters)
    executed = layout.notebooks / f"{source.stem}.ipynb"
    if not force and _is_cached(executed, key):
        return RunResult(source.stem, True, 0.0, executed, cached=True)
    return _run_papermill(source, parameters, layout, key)


def _summarize(exc: Exception) -> str:
    ename = getattr(exc, "ename", type(exc).__name__)
    evalue = getattr(exc, "evalue", str(exc))
    first = str(evalue).strip().splitlines()[0] if str(evalue).strip() else ""
    return f"{ename}: {first}"


def reproduce(
    root: Path,
    names: Sequence[str] = (),
    profile: str = "paper",
    output_dir: str | Path | None = None,
    log: Callable[[str], None] = print,
    overrides: Mapping[str, str] | None = None,
    jobs: int | None = None,
    force: bool = False,
) -> list[RunResult]:
    """Execute the selected notebooks of the project at ``root``; one progress line each.

    Parameters
    ----------
    root
        Project root (holds ``notebooks/``).
    names
        Notebook names to run (all if empty).
    profile
        ``"paper"`` or ``"quick"``.
    output_dir
        Root of the output tree (default ``<root>/outputs``, or
        ``<root>/outputs/runs/<overrides>`` when there are overrides, so that such a run never
        replaces the canonical outputs the book and its report are built from).
    log
        Where progress lines go (one per notebook, in the order they finish).
    overrides
        Parameter values (text, ``{"seed": "3"}``) that replace the profile's; checked against
        every selected notebook before anything runs.
    jobs
        How many notebooks run at once (each in its own process and kernel); default
        :func:`default_jobs`, one per CPU core.
    force
        Execute every notebook even if its cache key is unchanged.

    Returns
    -------
    list of RunResult
        In the order of the selected notebooks.

    Raises
    ------
    NTPError
        On an unknown notebook, profile or parameter, a value of the wrong type, or ``jobs < 1``.
    """
    sources = select_notebooks(notebook_sources(root), names)
    if not sources:
        raise NTPError(f"no notebooks found in {root / 'notebooks'}")
    if profile not in PROFILE_NAMES:
        raise NTPError(f"unknown profile {profile!r}; use one of {', '.join(PROFILE_NAMES)}")
    if jobs is None:
        jobs = default_jobs()
    if jobs < 1:
        raise NTPError(f"--jobs must be at least 1, got {jobs}")
    overrides = dict(overrides or {})
    for source in sources:  # fail on a bad override before running anything
        apply_overrides(source.stem, profile, overrides)
    if output_dir is None:
        output_dir = override_output_dir(root, overrides) if overrides else root / DEFAULT_OUTPUT_DIRNAME
    layout = output_layout(output_dir)
    if overrides:
        run = {"profile": profile, "overrides": overrides, "notebooks": [s.stem for s in sources]}
        (layout.root / "run.json").write_text(json.dumps(run, indent=1) + "\n")
    _warm_matplotlib()

    fingerprint = package_fingerprint()
    width = max(len(s.stem) for s in sources)
    results: dict[str, RunResult] = {}

    def report(result: RunResult) -> None:
        results[result.name] = result
        status = "cached" if result.cached else ("ok" if result.ok else "FAILED")
        line = f"[{len(results)}/{len(sources)}] {result.name:<{width}}  {status:<6}"
        if result.cached:
            line += "  unchanged since its last successful run (--force reruns it)"
        else:
            line += f" {result.seconds:7.1f} s"
        if result.error:
            line += f"  {result.error}"
        log(line)

    pending = []
    for source in sources:
        parameters = notebook_parameters(source, profile, layout, overrides)
        key = cache_key(source, parameters, fingerprint)
        executed = layout.notebooks / f"{source.stem}.ipynb"
        if not force and _is_cached(executed, key):
            report(RunResult(source.stem, True, 0.0, executed, cached=True))
        else:
            pending.append((source, parameters, layout, key))
    # longest first (by the last recorded run at this profile; unknown counts as longest): the
    # slowest notebook does not start last and leave the other workers idle
    pending.sort(key=lambda args: -_last_seconds(layout, profile, args[0].stem))
    if jobs == 1 or len(pending) <= 1:
        for args in pending:
            report(_run_papermill(*args))
    else:
        # spawn, not fork: the parent may hold threads (matplotlib, zmq) that fork would copy badly
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=min(jobs, len(pending)), mp_context=context) as pool:
            futures = {pool.submit(_run_papermill, *args): args[0] for args in pending}
            for future in as_completed(futures):
                source = futures[future]
                try:
                    report(future.result())
                except Exception as exc:  # the worker itself died: report it, go on
                    executed = layout.notebooks / f"{source.stem}.ipynb"
                    report(RunResult(source.stem, False, 0.0, executed, _summarize(exc)))
    if pending:  # with the number of notebooks that actually ran side by side
        record_timings(layout, profile, results.values(), min(jobs, len(pending)))
    return [results[s.stem] for s in sources]
