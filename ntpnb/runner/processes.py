"""The processes of one ``ntpnb reproduce`` run, found and ended together, and the signals that stop it.

jupyter_client starts every kernel in a session of its own, which neither a Ctrl-C nor a signal to
its worker reaches. So the run marks its environment (:data:`RUN_MARKER`, unique to the run), which
every descendant inherits, and ends them by that mark (on Linux, read in ``/proc/<pid>/environ``;
elsewhere only the workers' groups are signalled, and kernels end when their parent is gone).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

__all__ = [
    "RUN_MARKER",
    "STOP_SIGNALS",
    "signals_handled",
    "marked_processes",
    "signal_processes",
    "end_processes",
]

#: The environment variable whose value marks the processes of one run.
RUN_MARKER = "NTPNB_RUN_ID"
#: The signals that stop a command: Ctrl-C, and ``kill`` or a job scheduler acting as one.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def signals_handled(signals: Iterable[int], handler: Any) -> Iterator[None]:
    """Within (in the main thread only; elsewhere nothing changes): ``handler`` handles ``signals``."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, handler) for signum in signals}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def marked_processes(variable: str, value: str) -> list[int]:
    """Process ids (other than this process) whose environment has ``variable=value`` (Linux)."""
    needle = f"{variable}={value}".encode() + b"\0"
    found: list[int] = []
    proc = Path("/proc")
    if not value or not proc.is_dir():
        return found
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # gone, or not ours
            continue
        if (b"\0" + environ).find(b"\0" + needle) >= 0:
            found.append(int(entry.name))
    return found


def signal_processes(pids: Iterable[int], signum: int, groups: Iterable[int] = ()) -> None:
    """Send ``signum`` to every process in ``pids`` and every process group in ``groups``."""
    sends = [(os.killpg, pgid) for pgid in groups] if hasattr(os, "killpg") else []
    for send, target in [*sends, *((os.kill, pid) for pid in pids)]:
        with suppress(OSError):  # gone, or not ours
            send(target, signum)


def end_processes(
    value: str, groups: Iterable[int] = (), grace: float = 3.0, hurry: Callable[[], bool] = lambda: False
) -> list[int]:
    """End every process marked with ``value`` and every process group in ``groups``.

    SIGTERM first, then SIGKILL after ``grace`` seconds, or as soon as ``hurry()`` is true.
    Returns the ids of the marked processes still alive at the end (normally none).
    """
    groups = list(groups)
    signal_processes(marked_processes(RUN_MARKER, value), signal.SIGTERM, groups)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and not hurry() and marked_processes(RUN_MARKER, value):
        time.sleep(0.1)
    for _ in range(10):
        left = marked_processes(RUN_MARKER, value)
        signal_processes(left, signal.SIGKILL, groups)
        groups = []
        if not left:
            break
        time.sleep(0.1)
    return marked_processes(RUN_MARKER, value)
