"""One command at a time per output tree (:func:`output_lock`).

``ntpnb reproduce`` holds an exclusive lock on ``<tree>/.lock`` while it writes the outputs,
``ntpnb book`` while it reads them. An operating-system lock (:class:`filelock.FileLock`) is
released however its holder ends (even ``kill -9``); the holder writes its process id and command
line into the file, for messages.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from ..errors import OutputLockedError, PathError

#: The lock file's name, at the root of an output tree.
LOCK_NAME = ".lock"


def _write_holder(fd: int) -> None:
    """Say who holds the lock, in place in the lock file ``fd`` (the lock belongs to this inode)."""
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
        If another process holds it: wait for it (after saying so through ``log``), or raise.

    Raises
    ------
    OutputLockedError
        If another process holds it and ``wait`` is False.
    PathError
        If the lock file cannot be created (the folder is not writable).
    """
    from filelock import FileLock, Timeout  # a tenth of a second: not for every chapter's import

    lock = FileLock(root / LOCK_NAME, preserve_lock_file=True, on_acquired=_write_holder)
    try:
        try:
            held = lock.acquire(timeout=0)
        except Timeout:
            holder = "another process"
            with suppress(OSError):  # as the holder wrote it into the file
                holder = (root / LOCK_NAME).read_text(encoding="utf-8", errors="replace").strip() or holder
            if not wait:
                raise OutputLockedError(
                    f"the output folder {root} is in use by {holder}; wait for it, or choose another --out"
                ) from None
            log(f"ntpnb: waiting for {holder} to finish with {root} (Ctrl-C to give up)")
            held = lock.acquire()
    except OSError as exc:
        problem = f"cannot write in the output folder {root}: {exc.strerror}"
        raise PathError(f"{problem}; choose another --out") from exc
    with held:  # released on leaving
        yield
