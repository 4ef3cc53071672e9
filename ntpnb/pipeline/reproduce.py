"""Execute the notebooks: Jupytext source -> papermill (with a profile) -> executed ``.ipynb``.

One failed notebook does not stop the others: each result is reported.

Outputs survive interruption and failure. Each notebook executes in a private staging tree
``<output root>/.staging/<name>/`` with the layout of the output tree (papermill's working
folder is its ``notebooks/``, so the ``output_dir`` the notebook is given, ``..``, is the
staging root): its figures, claim records and executed notebook land there. Only when the
notebook succeeded are they moved into place (each file with :func:`os.replace`), the
executed notebook last, and then its cache key. A notebook that fails, or a run that is
interrupted, leaves the previous good outputs as they were; a failed notebook's executed copy
and a record of the failure (error, cell, the claim checks it made) are kept in
``<output root>/failed/`` for debugging, and removed by its next success. Every file is
written atomically (:mod:`ntpnb.pipeline.atomic`).

Only one run at a time writes an output tree (:mod:`ntpnb.pipeline.lock`); a second one waits
for it (or, with ``wait=False``, refuses).

Every notebook runs in its own worker process (``jobs`` at once, the default is one per CPU
core), in a session of its own: a Ctrl-C in the terminal reaches only the parent, which then
ends every worker and kernel of the run (:mod:`ntpnb.pipeline.processes`) within seconds (a
second Ctrl-C kills them at once) and raises :class:`~ntpnb.errors.RunInterruptedError`. The parent
prints one progress line per notebook as it finishes, so the lines never interleave. The
notebooks that took longest on their last run start first.

Every kernel runs its BLAS with :data:`ntpnb.settings.BLAS_THREADS` threads (unless the
environment already sets ``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` or ``MKL_NUM_THREADS``):
the notebooks' matrices are small, so more threads only wait for each other, and notebooks
running side by side would otherwise ask for more threads than there are cores.

A notebook is not executed again when nothing that determines its outputs changed since its
last successful run into the same output tree: its :func:`cache_key` (a hash of the notebook's
source, its parameters (profile and ``-p`` overrides) and the sources of the ``ntpnb`` package)
is stored beside the executed notebook (``<name>.key.json``) after every successful run, once
its outputs are in place, and removed when a run of it fails. ``force=True`` (``ntpnb
reproduce --force``) runs it anyway.

The wall time of every executed notebook is recorded in ``<output root>/timings.json``
(:mod:`ntpnb.pipeline.timings`), which the book's benchmarks page shows.
"""

from __future__ import annotations

import errno
import hashlib
import json
import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime, timezone
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import default

from .. import settings
from ..errors import NTPError, PathError, RunInterruptedError
from .atomic import atomic_path, atomic_write_text, remove_temporaries
from .claims import load_chapter_record
from .lock import output_lock
from .paths import DEFAULT_OUTPUT_DIRNAME, OutputLayout, output_layout, override_output_dir
from .processes import RUN_MARKER, end_processes
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
#: The name of every run's private folder (kernel sockets and connection files) starts so.
RUN_FOLDER_PREFIX = "ntpnb-run-"

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
        # every kernel its own socket prefix, in the run's folder (see :func:`_run_folder`).
        return os.path.join(_run_folder(), f"ntpnb-kernel-{uuid.uuid4().hex[:16]}-ipc")

    @default("connection_file")
    def _default_connection_file(self) -> str:
        # jupyter_client's default is a new file in the temporary folder, left there when the
        # kernel is killed: in the run's folder instead, which the run removes
        return os.path.join(_run_folder(), f"kernel-{uuid.uuid4().hex[:16]}.json")


def _run_folder() -> str:
    """The private folder of the current run (its kernels' sockets and connection files).

    ``JUPYTER_RUNTIME_DIR`` as :func:`_run_environment` sets it; outside a run, the
    temporary folder.
    """
    folder = os.environ.get("JUPYTER_RUNTIME_DIR") if os.environ.get(RUN_MARKER) else None
    return folder or tempfile.gettempdir()


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


STAGING_DIRNAME = ".staging"


def _is_cached(executed: Path, key: str) -> bool:
    path = _key_path(executed)
    if not (executed.is_file() and path.is_file()):
        return False
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("key") == key
    except (ValueError, AttributeError):
        return False


def staging_layout(layout: OutputLayout, name: str) -> OutputLayout:
    """The private output tree notebook ``name`` executes into (emptied first)."""
    root = layout.root / STAGING_DIRNAME / name
    shutil.rmtree(root, ignore_errors=True)
    return output_layout(root)


def remove_leftovers(layout: OutputLayout) -> None:
    """Remove what killed runs left in ``layout``: staging trees and temporary files.

    Call it only under the output lock (no other run can be writing).
    """
    shutil.rmtree(layout.root / STAGING_DIRNAME, ignore_errors=True)
    for folder in (layout.root, layout.notebooks, layout.figures, layout.claims, layout.failed):
        remove_temporaries(folder)


def _promote(stage: OutputLayout, layout: OutputLayout, executed: Path) -> None:
    """Move every file of ``stage`` to the same place in ``layout``, the executed notebook last.

    Each move is an :func:`os.replace`. The target folders are checked first, so that a folder
    that cannot be written fails the promotion before any file has moved.
    """
    staged = stage.notebooks / executed.name
    files = sorted(p for p in stage.root.rglob("*") if p.is_file() and p != staged)
    targets = [layout.root / p.relative_to(stage.root) for p in files]
    for folder in sorted({t.parent for t in targets} | {executed.parent}):
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK):
            raise PermissionError(errno.EACCES, "the folder is not writable", str(folder))
    for path, target in zip(files, targets, strict=True):
        os.replace(path, target)
    os.replace(staged, executed)


def _failed_cell(staged: Path) -> tuple[int, str] | None:
    """Index and first source line of the cell a run failed in, if the executed copy shows it.

    That is the cell papermill marked failed, or else the cell the kernel started and never
    answered (no ``shell.execute_reply`` time: the kernel died in it), or else the last code
    cell papermill started: a kernel that dies before it acknowledges the cell leaves no
    execution metadata, and papermill then marks every started cell completed.
    """
    import nbformat

    try:
        nb = nbformat.read(staged, as_version=4)
    except (OSError, ValueError):
        return None

    def failed(cell: dict) -> bool:
        return cell.get("metadata", {}).get("papermill", {}).get("status") == "failed"

    def unanswered(cell: dict) -> bool:
        execution = cell.get("metadata", {}).get("execution", {})
        return bool(execution) and "shell.execute_reply" not in execution

    def started(cell: dict) -> bool:
        return cell.get("metadata", {}).get("papermill", {}).get("start_time") is not None

    cells = list(enumerate(nb.cells))
    for test, order in ((failed, cells), (unanswered, cells), (started, cells[::-1])):
        for index, cell in order:
            if cell.cell_type == "code" and test(cell):
                lines = cell.source.strip().splitlines()
                return index, lines[0] if lines else ""
    return None


def describe_failure(exc: BaseException, staged: Path | None = None) -> str:
    """One line: the error of a failed notebook and, when known, the cell it failed in.

    A kernel that died (crashed, killed, out of memory) is named as such, with its cell.
    """
    from nbclient.exceptions import DeadKernelError

    ename = getattr(exc, "ename", type(exc).__name__)
    evalue = str(getattr(exc, "evalue", exc)).strip()
    first = evalue.splitlines()[0] if evalue else ""
    cell = _failed_cell(staged) if staged is not None else None
    where = f" in cell {cell[0]} ({cell[1][:60]!r})" if cell else ""
    if isinstance(exc, DeadKernelError):
        return f"KernelDied: the kernel died{where}"
    return f"{ename}: {first}" + (where if ename != "ClaimCheckError" else "")


def _keep_failure(
    layout: OutputLayout, stage: OutputLayout, name: str, error: str, parameters: Mapping[str, object]
) -> Path:
    """Keep a failed run's executed notebook and a failure record in ``layout.failed``.

    The record holds the error, the parameters, the date and the claim checks the notebook
    recorded before it failed. Returns the kept notebook (or where it would be).
    """
    layout.failed.mkdir(parents=True, exist_ok=True)
    kept = layout.failed / f"{name}.ipynb"
    staged = stage.notebooks / f"{name}.ipynb"
    if staged.is_file():
        os.replace(staged, kept)
    try:
        checks = [c.to_json() for c in load_chapter_record(stage.claims / f"{name}.json").checks]
    except PathError:  # no record (or half of one) yet
        checks = []
    record = {
        "notebook": name,
        "error": error,
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "parameters": dict(parameters),
        "checks": checks,
    }
    atomic_write_text(layout.failed / f"{name}.json", json.dumps(record, indent=1, default=repr) + "\n")
    return kept


def _run_papermill(
    source: Path, parameters: Mapping[str, object], layout: OutputLayout, key: str
) -> RunResult:
    """Execute ``source`` with ``parameters``; on success move its outputs into ``layout``.

    See the module docstring: the notebook runs in a staging tree; a failure keeps the
    previous outputs and puts the failed copy and a record in ``layout.failed``.
    """
    import jupytext
    import papermill

    name = source.stem
    executed = layout.notebooks / f"{name}.ipynb"
    stage = staging_layout(layout, name)
    staged = stage.notebooks / executed.name
    start = time.perf_counter()
    try:
        with kernel_environment():
            papermill.execute_notebook(
                jupytext.read(source),
                str(staged),
                parameters=dict(parameters),
                cwd=str(stage.notebooks),  # output_dir ".." is the staging root
                kernel_name=KERNEL_NAME,
                kernel_manager_class=IPCKernelManager,
                progress_bar=False,
                log_output=False,
            )
        seconds = time.perf_counter() - start
        hide_injected_parameters(staged)
        _promote(stage, layout, executed)
    except Exception as exc:  # report any failure, go on with the others
        seconds = time.perf_counter() - start
        error = describe_failure(exc, staged)
        if isinstance(exc, OSError) and not hasattr(exc, "ename"):
            error = f"could not write the outputs: {exc.strerror}: {exc.filename}"
        with suppress(OSError):  # a failed run is never cached (unless the folder is read-only)
            _key_path(executed).unlink(missing_ok=True)
        kept = _keep_failure(layout, stage, name, error, parameters)
        shutil.rmtree(stage.root, ignore_errors=True)
        return RunResult(name, False, seconds, kept, error)
    record = {"key": key, "parameters": dict(parameters), "seconds": round(seconds, 3)}
    atomic_write_text(_key_path(executed), json.dumps(record, indent=1, default=repr) + "\n")
    for stale in (layout.failed / f"{name}.ipynb", layout.failed / f"{name}.json"):
        stale.unlink(missing_ok=True)
    shutil.rmtree(stage.root, ignore_errors=True)
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
    with atomic_path(executed) as tmp:
        nbformat.write(nb, tmp)


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


class _Interrupts:
    """Within (in the main thread): SIGINT is counted instead of raising KeyboardInterrupt."""

    def __init__(self) -> None:
        self.count = 0
        self._previous: object = None

    def _handler(self, signum: int, frame: object) -> None:
        self.count += 1

    def __enter__(self) -> _Interrupts:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handler)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)  # type: ignore[arg-type]


@contextmanager
def _run_environment() -> Iterator[str]:
    """Within: the environment that workers and kernels inherit marks the run.

    It holds the run's mark (:data:`~ntpnb.pipeline.processes.RUN_MARKER`, yielded) and a
    private Jupyter runtime folder. Afterwards the environment is restored and the folder
    (connection files, kernel sockets) removed, even when kernels were killed.
    """
    mark = uuid.uuid4().hex
    runtime = tempfile.mkdtemp(prefix=RUN_FOLDER_PREFIX)
    saved = {var: os.environ.get(var) for var in (RUN_MARKER, "JUPYTER_RUNTIME_DIR")}
    os.environ.update({RUN_MARKER: mark, "JUPYTER_RUNTIME_DIR": runtime})
    try:
        yield mark
    finally:
        for var, value in saved.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value
        shutil.rmtree(runtime, ignore_errors=True)


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """Within: SIGINT is ignored, and so in the processes started meanwhile, for their life.

    A worker process is in the terminal's process group until it calls :func:`os.setsid`, and
    spends its first seconds importing: a Ctrl-C then would print a traceback from it. An
    ignored signal stays ignored across ``exec`` (a blocked one does not stay blocked through
    multiprocessing's start), so the worker starts deaf to it; the parent is deaf only while
    it starts the process (a Ctrl-C in those milliseconds is lost, the next one counts).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _worker(sender: Connection, args: tuple) -> None:
    """A worker process: run one notebook (:func:`_run_papermill`), send the result back.

    It starts a session of its own, so that a terminal's Ctrl-C reaches only the parent,
    which decides how the run stops. If the parent dies (``kill -9``), the worker ends the
    run's processes and itself (:func:`_orphan_watchdog`): nothing writes the outputs after
    their lock is gone.
    """
    if hasattr(os, "setsid"):
        os.setsid()
    watchdog = threading.Thread(target=_orphan_watchdog, args=(os.getppid(),), daemon=True)
    watchdog.start()
    sender.send(_run_papermill(*args))
    sender.close()


def _orphan_watchdog(parent: int, every: float = 0.5) -> None:
    """In a worker: once the parent ``parent`` is gone, end every process of the run, then exit."""
    while os.getppid() == parent:
        time.sleep(every)
    end_processes(os.environ[RUN_MARKER], grace=0.0)
    if Path(_run_folder()).name.startswith(RUN_FOLDER_PREFIX):  # the parent would have removed it
        shutil.rmtree(_run_folder(), ignore_errors=True)
    os._exit(1)


def _run_in_workers(
    pending: Sequence[tuple],
    jobs: int,
    report: Callable[[RunResult], None],
    mark: str,
    log: Callable[[str], None],
) -> bool:
    """Run ``pending`` (arguments of :func:`_run_papermill`), ``jobs`` worker processes at once.

    Every result goes to ``report`` as it arrives. On SIGINT, stop: no new notebook starts,
    and every worker and kernel of the run is ended (SIGTERM, then SIGKILL after a few
    seconds or at a second SIGINT). Returns whether the run was interrupted.
    """
    # spawn, not fork: the parent may hold threads (matplotlib, zmq) that fork would copy badly
    context = multiprocessing.get_context("spawn")
    queue = list(pending)
    running: dict[Connection, tuple[BaseProcess, tuple]] = {}
    with _Interrupts() as interrupts:
        while (queue or running) and not interrupts.count:
            while queue and len(running) < jobs:
                args = queue.pop(0)
                receiver, sender = context.Pipe(duplex=False)
                process = context.Process(target=_worker, args=(sender, args), daemon=True)
                with _sigint_ignored():  # the worker has no session of its own yet
                    process.start()
                sender.close()
                running[receiver] = (process, args)
            for receiver in multiprocessing.connection.wait(list(running), timeout=0.2):
                process, args = running.pop(receiver)
                try:
                    result = receiver.recv()
                except (EOFError, OSError):  # the worker died before it could answer
                    process.join(5)
                    name = args[0].stem
                    error = f"WorkerDied: the process running {name} ended (exit code {process.exitcode})"
                    result = RunResult(name, False, 0.0, args[2].failed / f"{name}.ipynb", error)
                receiver.close()
                process.join()
                report(result)
        if not interrupts.count:
            return False
        log("ntpnb: interrupted; stopping the notebooks (Ctrl-C again to kill them at once)")
        groups = [process.pid for process, _ in running.values() if process.pid]
        end_processes(mark, groups, hurry=lambda: interrupts.count > 1)
        for receiver, (process, _) in running.items():
            process.join(5)
            receiver.close()
    return True


def reproduce(
    root: Path,
    names: Sequence[str] = (),
    profile: str = "paper",
    output_dir: str | Path | None = None,
    log: Callable[[str], None] = print,
    overrides: Mapping[str, str] | None = None,
    jobs: int | None = None,
    force: bool = False,
    wait: bool = True,
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
    wait
        If another process is writing the output tree, wait for it (the default), or raise.

    Returns
    -------
    list of RunResult
        In the order of the selected notebooks.

    Raises
    ------
    NTPError
        On an unknown notebook, profile or parameter, a value of the wrong type, or ``jobs < 1``.
    PathError
        If the output folder cannot be created or written.
    OutputLockedError
        If another process holds the output folder and ``wait`` is False.
    RunInterruptedError
        On SIGINT (Ctrl-C): the notebooks that finished keep their outputs (and timings).
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
    with output_lock(layout.root, wait=wait, log=log), _run_environment() as mark:
        remove_leftovers(layout)
        if overrides:
            run = {"profile": profile, "overrides": overrides, "notebooks": [s.stem for s in sources]}
            atomic_write_text(layout.root / "run.json", json.dumps(run, indent=1) + "\n")
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
        interrupted = _run_in_workers(pending, jobs, report, mark, log)
        remove_leftovers(layout)  # the staging folder, and the trees of notebooks that were stopped
        executed_now = [r for r in results.values() if not r.cached]
        if executed_now:  # with the number of notebooks that actually ran side by side
            record_timings(layout, profile, executed_now, min(jobs, len(pending)))
    if interrupted:
        raise RunInterruptedError(len(results), len(sources))
    return [results[s.stem] for s in sources]
