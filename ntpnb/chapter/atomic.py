"""Atomic file writes: the one way the pipeline writes a file.

Every file the pipeline writes (executed notebooks, figures, claim records, cache keys,
timings, generated pages) is first written to a temporary file in the same folder and then
moved into place with :func:`os.replace`, which is atomic on POSIX and Windows. A reader (a
book build, another run) therefore sees either the old file or the new one, never a half
written one; a write that fails or is interrupted leaves the old file as it was and removes
its temporary file.

Temporary files are named ``.<name>.tmp-<pid>-<random><suffix>``: hidden, in the target's
folder (so the final rename never crosses a file system), with the target's suffix (so
writers that choose a format from the suffix, like matplotlib, still do), and recognisable by
:func:`is_temporary` so that a run can remove those a killed process left behind.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["atomic_path", "atomic_write_bytes", "atomic_write_text", "is_temporary", "remove_temporaries"]

_TEMPORARY = re.compile(r"^\..+\.tmp-\d+-[0-9a-f]{8}(\.[^.]+)?$")


def _temporary_name(path: Path) -> Path:
    return path.with_name(f".{path.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}{path.suffix}")


def is_temporary(path: Path) -> bool:
    """Whether ``path`` is named like a temporary file of :func:`atomic_path`."""
    return bool(_TEMPORARY.match(path.name))


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Within: a temporary path to write; on leaving normally, it replaces ``path``.

    The temporary path is in ``path``'s folder and has ``path``'s suffix. If the block raises
    (or is interrupted), the temporary file is removed and ``path`` is left as it was.

    Examples
    --------
    >>> with atomic_path(folder / "fig.png") as tmp:  # doctest: +SKIP
    ...     fig.savefig(tmp)
    """
    path = Path(path)
    tmp = _temporary_name(path)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (flushed to disk before the rename); return ``path``."""
    path = Path(path)
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    return path


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; return ``path``."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def remove_temporaries(folder: Path) -> list[Path]:
    """Remove the temporary files that killed writers left in ``folder`` (not recursive).

    Call it only while no writer can be active in ``folder`` (under the output lock).
    """
    removed = []
    if folder.is_dir():
        for path in folder.iterdir():
            if path.is_file() and is_temporary(path):
                path.unlink(missing_ok=True)
                removed.append(path)
    return removed
