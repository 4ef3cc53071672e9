"""Worker processes, one notebook each, in sessions of their own, and how a run's processes end.

A Ctrl-C (or SIGTERM: :data:`STOP_SIGNALS`) reaches only the parent, which ends every worker and
kernel of the run within seconds (a second Ctrl-C kills them at once). A worker whose parent dies
ends the run's processes and itself. jupyter_client starts every kernel in a session of its own,
which neither a Ctrl-C nor a signal to its worker reaches: so the run marks its environment
(:data:`~._jupyter_kernel.RUN_MARKER`, unique to the run), which every descendant inherits, and ends
them by that mark (:func:`end_processes`; on Linux, read in ``/proc/<pid>/environ``; elsewhere
only the workers' groups are signalled, and kernels end when their parent is gone).
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import suppress
from multiprocessing.connection import Connection
from multiprocessing.context import SpawnContext
from multiprocessing.process import BaseProcess
from pathlib import Path

from ..chapter._parameters import PROJECT_VAR
from ..chapter._progress import PROGRESS_FILE_VAR
from ..records._places import FIGURES_VAR
from ..records._run import ChapterRun, PlannedRun, failed_run
from ..settings import STOP_CHECK_SECONDS
from ._display import Display
from ._execute import run_notebook
from ._jupyter_kernel import RUN_FOLDER_PREFIX, RUN_MARKER, blas_variables, progress_file, run_folder
from ._signals import STOP_SIGNALS, signals_handled


def marked_processes(variable: str, value: str) -> list[int]:
    """Process ids (other than this process) whose environment has ``variable=value`` (Linux)."""
    needle = b"\0" + f"{variable}={value}".encode() + b"\0"
    proc = Path("/proc")
    if not value or not proc.is_dir():
        return []
    found = []
    for entry in proc.iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            with suppress(OSError):  # gone, or not ours
                if needle in b"\0" + (entry / "environ").read_bytes():
                    found.append(int(entry.name))
    return found


def end_processes(
    value: str,
    groups: Iterable[int] = (),
    grace: float = 3.0,
    hurry: Callable[[], bool] = lambda: False,
    variable: str = RUN_MARKER,
) -> None:
    """End every process marked ``variable=value`` and every process group in ``groups``.

    SIGTERM first, then SIGKILL after ``grace`` seconds, or as soon as ``hurry()`` is true.
    """
    groups = list(groups) if hasattr(os, "killpg") else []

    def send(signum: int, pids: Iterable[int], groups: Iterable[int]) -> None:
        sends = [(os.killpg, pgid) for pgid in groups] + [(os.kill, pid) for pid in pids]
        for kill, target in sends:
            with suppress(OSError):  # gone, or not ours
                kill(target, signum)

    send(signal.SIGTERM, marked_processes(variable, value), groups)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and not hurry() and marked_processes(variable, value):
        time.sleep(0.1)
    for attempt in range(10):
        left = marked_processes(variable, value)
        send(signal.SIGKILL, left, groups if attempt == 0 else ())
        if not left:
            break
        time.sleep(0.1)


def kernel_variables(run: PlannedRun) -> dict[str, str]:
    """The kernel's environment: its project, progress file, BLAS threads; for a sweep's seed no figures."""
    variables = {PROJECT_VAR: str(run.source.parent.parent), PROGRESS_FILE_VAR: str(progress_file(run.label))}
    variables |= blas_variables()
    if run.sweep:
        variables[FIGURES_VAR] = "off"
    return variables


def _worker(sender: Connection, run: PlannedRun) -> None:
    """A worker process: run one notebook, send the result back (and each cell's start).

    If the parent dies, the worker ends the run's processes and itself (:func:`orphan_watchdog`):
    nothing writes the outputs after their lock is gone.
    """
    if hasattr(os, "setsid"):
        os.setsid()
    threading.Thread(target=orphan_watchdog, args=(os.getppid(),), daemon=True).start()
    os.environ.update(kernel_variables(run))  # the kernel inherits them
    sender.send(run_notebook(run, lambda cell, cells: sender.send((cell, cells))))
    sender.close()


def orphan_watchdog(parent: int, every: float = 0.5, variable: str = RUN_MARKER) -> None:
    """In a worker: once the parent ``parent`` is gone, end the processes this one marks, then exit.

    ``variable`` names the mark: the run's (a local worker), or a Dask task's.
    """
    while os.getppid() == parent:
        time.sleep(every)
    end_processes(os.environ[variable], grace=0.0, variable=variable)
    if Path(run_folder()).name.startswith(RUN_FOLDER_PREFIX):  # the parent would have removed it
        shutil.rmtree(run_folder(), ignore_errors=True)
    os._exit(1)


def run_in_workers(
    pending: Sequence[PlannedRun],
    jobs: int,
    report: Callable[[ChapterRun], None],
    mark: str,
    display: Display,
) -> bool:
    """Run ``pending``, ``jobs`` worker processes at once; every result goes to ``report``.

    A result's ``seconds`` is the wall time from its worker's start to its answer. On SIGINT, no new
    notebook starts and every worker and kernel of the run (marked ``mark``) is ended (SIGTERM, then
    SIGKILL after a few seconds or at a second SIGINT). Returns whether the run was interrupted.
    """
    # spawn, not fork: the parent may hold threads (matplotlib, zmq) that fork would copy badly
    context = multiprocessing.get_context("spawn")
    queue = list(pending)
    running: dict[Connection, tuple[BaseProcess, PlannedRun]] = {}
    started: dict[str, float] = {}  # when each notebook's worker started (time.monotonic)
    stops: list[int] = []  # SIGINT and SIGTERM stop the run: no new notebook starts, the running end
    with signals_handled(STOP_SIGNALS, lambda signum, _frame: stops.append(signum)):
        try:
            while (queue or running) and not stops:
                while queue and len(running) < jobs:
                    run = queue.pop(0)
                    receiver, process = _start_worker(context, run)
                    running[receiver] = (process, run)
                    started[run.label] = time.monotonic()
                    display.started(run.label, progress_file(run.label))
                for receiver in multiprocessing.connection.wait(list(running), timeout=STOP_CHECK_SECONDS):
                    process, run = running[receiver]
                    message = _answer(receiver, process, run)
                    if not isinstance(message, ChapterRun):  # a code cell started
                        display.cell(run.label, *message)
                        continue
                    del running[receiver]
                    receiver.close()
                    process.join()
                    # the time the reader waited: the worker's start and imports, the kernel, the cells
                    report(dataclasses.replace(message, seconds=time.monotonic() - started[run.label]))
                display.tick()
            if not stops:
                return False
            display.close()
            display.log("ntpnb: interrupted; stopping the notebooks (Ctrl-C again to kill them at once)")
            _stop_workers(running, mark, hurry=lambda: len(stops) > 1)
            return True
        except BaseException:  # a closed output pipe, a bug: the workers end too
            end_processes(mark, [p.pid for p, _ in running.values() if p.pid], grace=1.0)
            raise


def _start_worker(context: SpawnContext, run: PlannedRun) -> tuple[Connection, BaseProcess]:
    """Start the worker process of ``run``; return the end of its pipe the parent reads, and it."""
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_worker, args=(sender, run), daemon=True)
    # A worker is in the terminal's process group until os.setsid, importing: a Ctrl-C
    # then would print its traceback. An ignored SIGINT stays ignored across exec (a
    # blocked one would not); the parent loses a Ctrl-C only in these milliseconds.
    with signals_handled([signal.SIGINT], signal.SIG_IGN):
        process.start()
    sender.close()
    return receiver, process


def _stop_workers(
    running: Mapping[Connection, tuple[BaseProcess, PlannedRun]], mark: str, hurry: Callable[[], bool]
) -> None:
    """End every worker of ``running`` and every process of the run marked ``mark``, then close their pipes.

    SIGTERM first, SIGKILL after a few seconds or once ``hurry()`` (a second SIGINT).
    """
    groups = [p.pid for p, _ in running.values() if p.pid]  # each worker leads its own session
    end_processes(mark, groups, hurry=hurry)
    for receiver, (process, _) in running.items():
        process.join(5)
        receiver.close()


def _answer(receiver: Connection, process: BaseProcess, run: PlannedRun) -> ChapterRun | tuple[int, int]:
    """What the worker of ``run`` sent: its result, or a started cell's ``(cell, cells)``.

    A worker that died before it could answer gives a failed result saying so, with its exit code.
    """
    try:
        return receiver.recv()
    except (EOFError, OSError):  # the worker died before it could answer
        process.join(5)
        why = f"the process running {run.label} ended (exit code {process.exitcode})"
        return failed_run(run, f"WorkerDied: {why}")
