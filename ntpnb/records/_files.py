"""Files written atomically and records read back verified.

A file is written to a temporary file in its folder, then moved into place with :func:`os.replace`
(atomic on POSIX and Windows), so a reader sees the old file or the new one, never half of one.
Temporary files are named ``.<name>.tmp-<pid>-<random><suffix>``: hidden, in the target's folder
(the rename never crosses a file system), with the target's suffix (matplotlib chooses the format
from it), and recognisable (:func:`is_temporary`), so that a run removes those a killed process
left behind (:func:`~._staging.remove_leftovers`). A record that does not read or has the wrong
shape raises a PathError naming the file (:func:`read_record`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from ..errors import PathError

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


def atomic_write_json(path: str | Path, data: object, sort_keys: bool = False) -> Path:
    """Write ``data`` as indented JSON (what is not JSON as its ``repr``) to ``path`` atomically."""
    return atomic_write_text(path, json.dumps(data, indent=1, sort_keys=sort_keys, default=repr) + "\n")


#: A record read from JSON (:class:`TreeRecord` or :class:`Manifest`).
_Record = TypeVar("_Record")


def texts_by_name(data: object) -> bool:
    """Whether ``data`` is a dict of texts by text."""
    return isinstance(data, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in data.items())


def read_record(path: Path, what: str, parse: Callable[[Any], _Record]) -> _Record:
    """The record ``parse`` makes of the JSON in ``path``; PathError naming the file if it cannot.

    The one verified read of the records a run wrote (run record, manifests, claim records).
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else f"{type(exc).__name__}: {exc}"
        raise PathError(f"cannot read the {what} {path}: {reason}") from exc
    try:
        return parse(data)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        reason = exc if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
        raise PathError(f"the {what} {path} is damaged: {reason}") from exc


def file_digest(path: Path) -> str:
    """The SHA-256 of the file at ``path`` (hex), read in blocks of 1 MiB."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:  # hashlib.file_digest needs Python 3.11; the package supports 3.10
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
