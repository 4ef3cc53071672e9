"""Atomic file writes: the one way the pipeline writes a file.

A file is written to a temporary file in its folder, then moved into place with :func:`os.replace`
(atomic on POSIX and Windows): a reader sees the old file or the new one, never half of one, and a
failed write leaves the old file as it was. Temporary files are named
``.<name>.tmp-<pid>-<random><suffix>``: hidden, in the target's folder (the rename never crosses a
file system), with the target's suffix (matplotlib chooses the format from it), and recognisable
(:func:`is_temporary`), so that a run can remove those a killed process left behind.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_TEMPORARY = re.compile(r"^\..+\.tmp-\d+-[0-9a-f]{8}(\.[^.]+)?$")


def is_temporary(path: Path) -> bool:
    """Whether ``path`` is named like a temporary file of :func:`atomic_path`."""
    return bool(_TEMPORARY.match(path.name))


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Within: a temporary path to write (``fig.savefig(tmp)``); leaving normally, it replaces ``path``.

    If the block raises (or is interrupted), the temporary file is removed.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}{path.suffix}")
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (flushed to disk before the rename); return ``path``."""
    path = Path(path)
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        fh.write(text.encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())
    return path


def remove_temporaries(folder: Path) -> list[Path]:
    """Remove the temporary files killed writers left in ``folder`` (not recursive; under the output lock)."""
    removed = [path for path in folder.glob(".*") if path.is_file() and is_temporary(path)]
    for path in removed:
        path.unlink(missing_ok=True)
    return removed
