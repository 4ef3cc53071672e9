"""The kernel launcher: ipykernel's shutdown race answered, every other error raised, the command used."""

from __future__ import annotations

import atexit
import os
import sys
import threading

import pytest
import zmq
from ipykernel.iostream import IOPubThread

from ntpnb.runner import _jupyter_kernel as jupyter_kernel
from ntpnb.runner._kernel_launch import guard_wakeup_after_stop


@pytest.fixture
def stopped_iopub():
    """An IOPub thread stopped after this thread woke it once, seen as still running (the race)."""
    context = zmq.Context()
    socket = context.socket(zmq.PUB)
    socket.linger = 0
    socket.bind("inproc://ntpnb-test-iopub")
    thread = IOPubThread(socket)
    thread.start()
    woken = threading.Event()
    thread.schedule(woken.set)  # this thread's wake-up pipe now exists
    assert woken.wait(10), "the IOPub thread did not run an event"
    thread.stop()  # joins the thread and closes every wake-up pipe
    thread.thread.is_alive = lambda: True  # the check ran just before the stop
    yield thread
    del thread.thread.is_alive
    atexit.unregister(thread.stop)
    thread.close()
    context.term()


def test_the_race_raises_in_ipykernel_itself(stopped_iopub):
    # the error the launcher answers: without the guard, the wake-up hits a closed pipe
    with pytest.raises(zmq.ZMQError) as raised:
        stopped_iopub.schedule(lambda: None)
    assert raised.value.errno == zmq.ENOTSOCK


def test_the_guard_runs_the_event_when_the_thread_stopped_mid_call(stopped_iopub):
    class Guarded(IOPubThread):
        pass

    guard_wakeup_after_stop(Guarded)
    stopped_iopub.__class__ = Guarded
    ran = []
    stopped_iopub.schedule(lambda: ran.append(True))
    assert ran == [True]
    assert IOPubThread.schedule is not Guarded.schedule  # ipykernel's class is left alone


def test_the_guard_raises_when_the_thread_was_not_stopped(stopped_iopub):
    class Guarded(IOPubThread):
        pass

    guard_wakeup_after_stop(Guarded)
    stopped_iopub.__class__ = Guarded
    stopped_iopub._stopped = False  # a closed pipe in a running kernel is a real fault
    with pytest.raises(zmq.ZMQError):
        stopped_iopub.schedule(lambda: None)


def test_kernels_of_the_runner_start_through_the_launcher():
    km = jupyter_kernel.IPCKernelManager(kernel_name=jupyter_kernel.KERNEL_NAME)
    cmd = km.format_kernel_cmd()
    assert cmd[:2] == [sys.executable, str(jupyter_kernel.KERNEL_LAUNCHER)]
    assert cmd[2:4] == ["-f", os.path.realpath(km.connection_file)]
