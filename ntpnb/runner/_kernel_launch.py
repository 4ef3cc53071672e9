"""Start an IPython kernel whose end never logs a shutdown race as an error (run as a script).

ipykernel 7.4 publishes an "idle" status from its control thread after answering the shutdown
request, while its main thread stops the IOPub thread and closes the pipes that wake it. When the
stop falls between :meth:`IOPubThread.schedule`'s check that the thread runs and its wake-up, the
wake-up raises ``ZMQError(ENOTSOCK)`` and tornado logs "ERROR ... Uncaught exception in ZMQStream
callback" after a notebook that succeeded (about once in a few hundred kernels, more often with
notebooks side by side). ipykernel's own guard (PR #1518) covers the send, not the wake-up.
:func:`guard_wakeup_after_stop` answers that case as upstream answers a stopped thread: the event
runs in the calling thread. Every other error is raised as before.

This file is run by path (:class:`~ntpnb.runner._jupyter_kernel.IPCKernelManager`), so the kernel
starts without importing :mod:`ntpnb`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def guard_wakeup_after_stop(iopub_thread_class: type) -> None:
    """Make ``iopub_thread_class.schedule`` run the event itself when the thread stopped mid-call."""
    import zmq

    upstream = iopub_thread_class.schedule

    def schedule(self: Any, f: Callable[[], Any]) -> None:
        try:
            upstream(self, f)
        except zmq.ZMQError as error:
            if error.errno != zmq.ENOTSOCK or not getattr(self, "_stopped", False):
                raise
            # the thread was joined and its wake-up pipes closed: nothing else will run ``f``
            f()

    schedule.__doc__ = upstream.__doc__
    iopub_thread_class.schedule = schedule


if __name__ == "__main__":  # launch the kernel as ``python -m ipykernel_launcher`` does, with the guard
    # the script's folder (this package's modules) must not shadow the notebook's imports;
    # ipykernel puts the working folder back on the path, as for ipykernel_launcher
    if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        del sys.path[0]
    from ipykernel import iostream, kernelapp

    guard_wakeup_after_stop(iostream.IOPubThread)
    kernelapp.launch_new_instance()
