"""The runs of a sweep on a Dask cluster (``ntpnb reproduce --scheduler ADDRESS``).

Every (notebook, seed) run is one task of a `dask.distributed <https://distributed.dask.org>`_
cluster whose workers share the project's file system, in a process of its own with the run's
mark (:mod:`._workers`), so a Ctrl-C ends the started ones on every worker.

Work lost with a process is done again: a task whose process ended without a result (killed, say
by the kernel's out-of-memory killer) raises :class:`LostRunError`, which Dask retries up to
:data:`TASK_RETRIES` times; a worker that dies has its task moved to another by Dask itself, and
the processes that task had started end with it (:func:`~._workers.orphan_watchdog`), so two
attempts never write at once. A notebook that fails is a result, not lost work: never retried.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .._extras import missing_extra
from ..chapter._progress import PROGRESS_FILE_VAR
from ..errors import NTPError
from ..records._files import atomic_path
from ..records._places import FIGURES_VAR
from ..records._run import ChapterRun, PlannedRun, failed_run
from ..settings import SCHEDULER_TIMEOUT_SECONDS, STOP_CHECK_SECONDS
from ._display import Display
from ._execute import run_notebook
from ._jupyter_kernel import RUN_FOLDER_PREFIX, RUN_MARKER
from ._signals import STOP_SIGNALS, signals_handled
from ._workers import end_processes, kernel_variables, orphan_watchdog

#: How many times Dask runs a task again whose process ended without a result (Dask's ``retries=``).
TASK_RETRIES = 2
#: The environment variable marking the processes of one attempt of one task (its kernel among them).
TASK_MARKER = "NTPNB_TASK_ID"


class LostRunError(NTPError):
    """A task's process ended without a result: the work is lost, and Dask runs the task again."""


def run_task(run: PlannedRun, mark: str) -> ChapterRun:
    """One Dask task: run ``run`` in a process of its own (:func:`_remote`), marked ``mark``; its result."""
    with tempfile.TemporaryDirectory(prefix=RUN_FOLDER_PREFIX, ignore_cleanup_errors=True) as folder:
        result_file = Path(folder) / "result.pickle"
        env = {**os.environ, **kernel_variables(run), RUN_MARKER: mark, "JUPYTER_RUNTIME_DIR": folder}
        env[TASK_MARKER] = uuid.uuid4().hex
        env.pop(PROGRESS_FILE_VAR)  # no progress display on a cluster
        if not run.sweep:
            env.pop(FIGURES_VAR, None)
        command = [sys.executable, "-c", _REMOTE, str(result_file)]
        try:
            proc = subprocess.run(command, input=pickle.dumps(run), env=env, capture_output=True, check=False)
        finally:  # what the process left running (its kernel, when it was killed)
            end_processes(env[TASK_MARKER], grace=1.0, variable=TASK_MARKER)
        if proc.returncode == 0 and result_file.is_file():
            return pickle.loads(result_file.read_bytes())
    lines = proc.stderr.decode(errors="replace").strip().splitlines()
    why = lines[-1] if lines else f"exit code {proc.returncode}"
    raise LostRunError(f"the process running {run.label} ended without a result: {why}")


#: The program of :func:`run_task`'s process: :func:`_remote` with the result file's path.
_REMOTE = "import sys; from ntpnb.runner._cluster import _remote; _remote(sys.argv[1])"


def _remote(result_file: str) -> None:
    """A task's process: run the pickled run read from standard input; its pickled result to ``result_file``.

    In a session of its own, so that ending its group ends its kernel too; if its worker dies, it
    ends its kernel and itself (the task runs again elsewhere).
    """
    if hasattr(os, "setsid"):
        os.setsid()
    watchdog = threading.Thread(target=orphan_watchdog, args=(os.getppid(), 0.2, TASK_MARKER), daemon=True)
    watchdog.start()
    result = run_notebook(pickle.loads(sys.stdin.buffer.read()))
    with atomic_path(Path(result_file)) as tmp:
        tmp.write_bytes(pickle.dumps(result))


def run_on_dask(
    pending: Sequence[PlannedRun],
    address: str,
    report: Callable[[ChapterRun], None],
    mark: str,
    display: Display,
) -> bool:
    """Run ``pending`` as tasks of the Dask cluster at ``address``; every result goes to ``report``.

    A result's ``seconds`` is the wall time from its submission to its answer. On SIGINT the tasks
    not yet started are cancelled and the processes of the run are ended on every worker.
    Returns whether the run was interrupted.
    """
    distributed, client = _dask_client(address)
    try:
        submitted = time.monotonic()
        futures = _submit(client, pending, mark, display)
        left = set(futures)
        stops: list[int] = []  # SIGINT and SIGTERM stop the run
        counted = signals_handled(STOP_SIGNALS, lambda signum, _frame: stops.append(signum))
        with counted, client.as_current():
            while left and not stops:
                done, left = _wait_some(distributed, left)
                for future in done:
                    result = _task_result(future, futures[future])
                    report(dataclasses.replace(result, seconds=time.monotonic() - submitted))
                display.tick()
            if not stops:
                return False
            display.log("ntpnb: interrupted; cancelling the tasks and ending their processes on the cluster")
            client.cancel(list(left))
            client.run(end_processes, mark, (), 3.0)
            return True
    finally:
        client.close()


def _wait_some(distributed: Any, left: set[Any]) -> tuple[set[Any], set[Any]]:
    """Wait at most a stop check's time for a task of ``left`` to finish: (finished, not yet)."""
    try:
        done, left = distributed.wait(list(left), timeout=STOP_CHECK_SECONDS, return_when="FIRST_COMPLETED")
    except TimeoutError:  # none finished within the timeout
        return set(), left
    return set(done), set(left)


def _dask_client(address: str) -> tuple[Any, Any]:
    """``dask.distributed`` and a client of the scheduler at ``address``.

    Raises
    ------
    NTPError
        If dask.distributed is not installed, or no scheduler answers at ``address`` within
        :data:`~ntpnb.settings.SCHEDULER_TIMEOUT_SECONDS`.
    """
    try:
        import distributed
    except ImportError:
        raise NTPError(missing_extra("--scheduler", "distributed", "test")) from None
    try:
        client = distributed.Client(address, timeout=f"{SCHEDULER_TIMEOUT_SECONDS}s", set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise NTPError(f"no Dask scheduler answers at {address}: {exc}") from exc
    return distributed, client


def _submit(client: Any, pending: Sequence[PlannedRun], mark: str, display: Display) -> dict[Any, PlannedRun]:
    """Submit each run of ``pending`` to ``client`` as a task (retried); return future -> run."""
    futures = {}
    for run in pending:
        key = f"ntpnb-{run.label}-{mark}"
        futures[client.submit(run_task, run, mark, pure=False, key=key, retries=TASK_RETRIES)] = run
        display.started(run.label)
    return futures


def _task_result(future: Any, run: PlannedRun) -> ChapterRun:
    """The result of the finished task ``future`` of ``run``; a failed result if the task failed."""
    try:
        return future.result()
    except Exception as exc:  # lost at every attempt, or on every worker Dask tried
        attempts = f"{TASK_RETRIES + 1} attempts" if isinstance(exc, LostRunError) else "Dask"
        return failed_run(run, f"TaskFailed ({attempts}): {type(exc).__name__}: {exc}")
