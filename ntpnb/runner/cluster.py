"""The runs of a sweep on a Dask cluster (``ntpnb reproduce --scheduler ADDRESS``).

Every (notebook, seed) run is one task of a `dask.distributed <https://distributed.dask.org>`_
cluster whose workers share the project's file system, in a process of its own with the run's
mark (:mod:`.workers`), so a Ctrl-C ends the started ones on every worker.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from ..chapter.atomic import atomic_path
from ..chapter.layout import FIGURES_VAR
from ..chapter.progress import PROGRESS_FILE_VAR
from ..errors import NTPError
from ..settings import STOP_CHECK_SECONDS
from .choice import NotebookRun
from .display import Display
from .execute import RunResult, failed_result, run_or_fail
from .jupyter_kernel import RUN_FOLDER_PREFIX, RUN_MARKER
from .workers import end_processes, kernel_variables, stops_counted


def run_task(run: NotebookRun, mark: str) -> RunResult:
    """One Dask task: run ``run`` in a process of its own (:func:`_remote`), marked ``mark``; its result.

    A process that dies (ended by a Ctrl-C of the run) gives a failed result.
    """
    with tempfile.TemporaryDirectory(prefix=RUN_FOLDER_PREFIX, ignore_cleanup_errors=True) as folder:
        result_file = Path(folder) / "result.pickle"
        env = {**os.environ, **kernel_variables(run), RUN_MARKER: mark, "JUPYTER_RUNTIME_DIR": folder}
        env.pop(PROGRESS_FILE_VAR)  # no progress display on a cluster
        if not run.sweep:
            env.pop(FIGURES_VAR, None)
        command = [sys.executable, "-c", _REMOTE, str(result_file)]
        proc = subprocess.run(command, input=pickle.dumps(run), env=env, capture_output=True, check=False)
        if proc.returncode == 0 and result_file.is_file():
            return pickle.loads(result_file.read_bytes())
    lines = proc.stderr.decode(errors="replace").strip().splitlines()
    why = lines[-1] if lines else f"exit code {proc.returncode}"
    return failed_result(run, f"WorkerDied: the process running {run.label} ended: {why}")


#: The program of :func:`run_task`'s process: :func:`_remote` with the result file's path.
_REMOTE = "import sys; from ntpnb.runner.cluster import _remote; _remote(sys.argv[1])"


def _remote(result_file: str) -> None:
    """A task's process: run the pickled run read from standard input; its pickled result to ``result_file``.

    In a session of its own, so that ending its group ends its kernel too.
    """
    if hasattr(os, "setsid"):
        os.setsid()
    result = run_or_fail(pickle.loads(sys.stdin.buffer.read()))
    with atomic_path(Path(result_file)) as tmp:
        tmp.write_bytes(pickle.dumps(result))


def run_on_dask(
    pending: Sequence[NotebookRun],
    address: str,
    report: Callable[[RunResult], None],
    mark: str,
    display: Display,
) -> bool:
    """Run ``pending`` as tasks of the Dask cluster at ``address``; every result goes to ``report``.

    A result's ``seconds`` is the wall time from its submission to its answer. On SIGINT the tasks
    not yet started are cancelled and the processes of the run are ended on every worker.
    Returns whether the run was interrupted; raises NTPError if ``distributed`` is missing or no
    scheduler answers.
    """
    try:
        import distributed
    except ImportError:
        raise NTPError("--scheduler needs dask.distributed: pip install 'dask[distributed]'") from None
    try:
        client = distributed.Client(address, timeout="10s", set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise NTPError(f"no Dask scheduler answers at {address}: {exc}") from exc
    try:
        submitted = time.monotonic()
        futures = {}
        for run in pending:
            futures[client.submit(run_task, run, mark, pure=False, key=f"ntpnb-{run.label}-{mark}")] = run
            display.started(run.label)
        left = set(futures)
        with stops_counted() as stops, client.as_current():
            while left and not stops:
                try:
                    done, left = distributed.wait(
                        list(left), timeout=STOP_CHECK_SECONDS, return_when="FIRST_COMPLETED"
                    )
                except TimeoutError:  # none finished within the timeout
                    done = set()
                for future in done:
                    run = futures[future]
                    try:
                        result = future.result()
                    except Exception as exc:  # the task itself failed (a lost worker)
                        result = failed_result(run, f"TaskFailed: {type(exc).__name__}: {exc}")
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
