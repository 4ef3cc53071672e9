"""Worker processes, one notebook each, in sessions of their own.

A Ctrl-C reaches only the parent, which ends every worker and kernel of the run (:mod:`.processes`)
within seconds (a second Ctrl-C kills them at once). A worker whose parent dies ends the run's
processes and itself.
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
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path

from ..chapter.layout import FIGURES_VAR
from ..chapter.parameters import PROJECT_VAR
from ..chapter.progress import PROGRESS_FILE_VAR
from .choice import NotebookRun
from .display import Display
from .execute import RunResult, failed_result, run_or_fail
from .jupyter_kernel import RUN_FOLDER_PREFIX, progress_file, run_folder
from .processes import RUN_MARKER, STOP_SIGNALS, end_processes, signals_handled

__all__ = ["default_jobs", "kernel_variables", "run_in_workers", "Interrupts"]


def default_jobs() -> int:
    """How many notebooks run at once by default: one per CPU core."""
    return max(1, os.cpu_count() or 1)


class Interrupts:
    """Within (in the main thread): SIGINT and SIGTERM are counted instead of raising.

    Either stops the run: no new notebook starts and the running ones are ended.
    """

    def __init__(self) -> None:
        self.count = 0
        self._within = signals_handled(STOP_SIGNALS, self._handler)

    def _handler(self, signum: int, frame: object) -> None:
        self.count += 1

    def __enter__(self) -> Interrupts:
        self._within.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._within.__exit__(*exc)


@contextmanager
def _ended_on_error(
    running: Mapping[Connection, tuple[BaseProcess, NotebookRun]], mark: str
) -> Iterator[None]:
    """Within: if anything raises (a closed output pipe, a bug), the workers of ``running`` end too."""
    try:
        yield
    except BaseException:
        end_processes(mark, [process.pid for process, _ in running.values() if process.pid], grace=1.0)
        raise


def kernel_variables(run: NotebookRun) -> dict[str, str]:
    """The kernel's environment: its project, its progress file, for a sweep's seed no figures."""
    variables = {PROJECT_VAR: str(run.source.parent.parent), PROGRESS_FILE_VAR: str(progress_file(run.label))}
    if run.sweep:
        variables[FIGURES_VAR] = "off"
    return variables


def _worker(sender: Connection, run: NotebookRun) -> None:
    """A worker process: run one notebook, send the result back (and each cell's start).

    If the parent dies, the worker ends the run's processes and itself (:func:`_orphan_watchdog`):
    nothing writes the outputs after their lock is gone.
    """
    if hasattr(os, "setsid"):
        os.setsid()
    watchdog = threading.Thread(target=_orphan_watchdog, args=(os.getppid(),), daemon=True)
    watchdog.start()
    os.environ.update(kernel_variables(run))  # the kernel inherits them

    def cell_started(cell: int, cells: int) -> None:
        sender.send((cell, cells))

    sender.send(run_or_fail(run, cell_started))
    sender.close()


def _orphan_watchdog(parent: int, every: float = 0.5) -> None:
    """In a worker: once the parent ``parent`` is gone, end every process of the run, then exit."""
    while os.getppid() == parent:
        time.sleep(every)
    end_processes(os.environ[RUN_MARKER], grace=0.0)
    if Path(run_folder()).name.startswith(RUN_FOLDER_PREFIX):  # the parent would have removed it
        shutil.rmtree(run_folder(), ignore_errors=True)
    os._exit(1)


def run_in_workers(
    pending: Sequence[NotebookRun],
    jobs: int,
    report: Callable[[RunResult], None],
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
    running: dict[Connection, tuple[BaseProcess, NotebookRun]] = {}
    started: dict[str, float] = {}  # when each notebook's worker started (time.monotonic)
    with Interrupts() as interrupts, _ended_on_error(running, mark):
        while (queue or running) and not interrupts.count:
            while queue and len(running) < jobs:
                run = queue.pop(0)
                receiver, sender = context.Pipe(duplex=False)
                process = context.Process(target=_worker, args=(sender, run), daemon=True)
                # A worker is in the terminal's process group until os.setsid, importing: a Ctrl-C
                # then would print its traceback. An ignored SIGINT stays ignored across exec (a
                # blocked one would not); the parent loses a Ctrl-C only in these milliseconds.
                with signals_handled([signal.SIGINT], signal.SIG_IGN):
                    process.start()
                sender.close()
                running[receiver] = (process, run)
                started[run.label] = time.monotonic()
                display.started(run.label, progress_file(run.label))
            for receiver in multiprocessing.connection.wait(list(running), timeout=0.2):
                process, run = running[receiver]
                try:
                    message = receiver.recv()
                except (EOFError, OSError):  # the worker died before it could answer
                    process.join(5)
                    code = process.exitcode
                    message = failed_result(
                        run, f"WorkerDied: the process running {run.label} ended (exit code {code})"
                    )
                if not isinstance(message, RunResult):  # a code cell started
                    display.cell(run.label, *message)
                    continue
                del running[receiver]
                receiver.close()
                process.join()
                # the time the reader waited: the worker's start and imports, the kernel, the cells
                report(dataclasses.replace(message, seconds=time.monotonic() - started[run.label]))
            display.tick()
        if not interrupts.count:
            return False
        display.close()
        display.log("ntpnb: interrupted; stopping the notebooks (Ctrl-C again to kill them at once)")
        groups = [process.pid for process, _ in running.values() if process.pid]
        end_processes(mark, groups, hurry=lambda: interrupts.count > 1)
        for receiver, (process, _) in running.items():
            process.join(5)
            receiver.close()
    return True
