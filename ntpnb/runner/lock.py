"""One ``ntpnb`` command at a time per output folder: an exclusive lock on ``<output>/.lock``.

``ntpnb reproduce`` holds it while it runs (so two runs never write the same outputs at once)
and ``ntpnb book`` holds it while it reads the outputs (so it builds from a consistent
snapshot, never from a run half way through). The lock is :class:`filelock.FileLock` (an
operating-system lock, ``flock`` on POSIX): the system releases it when the holding process
ends, however it ends (even ``kill -9``), so a stale lock cannot block later runs. The holder
writes its process id and command line into the file, which a waiting command names in its
message.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from ..errors import OutputLockedError, PathError

__all__ = ["LOCK_NAME", "output_lock", "lock_holder"]

LOCK_NAME = ".lock"


def lock_holder(root: Path) -> str:
    """Who holds (or last held) the lock of ``root``, as its holder wrote it ("" if unknown)."""
    try:
        return (root / LOCK_NAME).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def _write_holder(fd: int) -> None:
    """Say who holds the lock, in the lock file ``fd``.

    Written in place (it cannot be replaced, the lock belongs to this inode), read only for messages.
    """
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, f"process {os.getpid()} ({' '.join(sys.argv)})\n".encode())


@contextmanager
def output_lock(root: Path, wait: bool = True, log: Callable[[str], None] = print) -> Iterator[None]:
    """Within: this process alone holds the output folder ``root``.

    Parameters
    ----------
    root
        The output folder (it must exist).
    wait
        If another process holds it: wait for it (after saying so through ``log``), or, if
        False, raise at once.
    log
        Where the waiting message goes.

    Raises
    ------
    OutputLockedError
        If another process holds it and ``wait`` is False.
    PathError
        If the lock file cannot be created (the folder is not writable).
    """
    lock = FileLock(root / LOCK_NAME, preserve_lock_file=True, on_acquired=_write_holder)
    try:
        try:
            lock.acquire(timeout=0)
        except Timeout:
            holder = lock_holder(root) or "another process"
            if not wait:
                raise OutputLockedError(
                    f"the output folder {root} is in use by {holder}; wait for it, or choose another --out"
                ) from None
            log(f"ntpnb: waiting for {holder} to finish with {root} (Ctrl-C to give up)")
            lock.acquire()
    except OSError as exc:
        problem = f"cannot write in the output folder {root}: {exc.strerror}"
        raise PathError(f"{problem}; choose another --out") from exc
    try:
        yield
    finally:
        lock.release()
