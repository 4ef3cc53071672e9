"""The signals that stop a command, and handling them for a while (the command line sets them first)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

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
