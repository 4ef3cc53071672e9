"""The one content-addressed cache of runs and figures: a key from what an output is made of.

An entry is a key (:func:`content_key`: the SHA-256 of the contents that decide an output) and
the SHA-256 of every file it wrote (:func:`output_digests`). An entry is a hit when the key is
the same and every file is still as written (:func:`outputs_damage`): a chapter's run (its key:
source, parameters, :func:`package_fingerprint`; its entry: the manifest, :mod:`._manifest`) and a
map's figure (its key: its data and the code that draws it; its entry: ``maps.json``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from ._files import file_digest


def content_key(*parts: bytes) -> str:
    """The SHA-256 (hex) of ``parts`` joined by NUL bytes: the key of what an output is made of."""
    return hashlib.sha256(b"\0".join(parts)).hexdigest()


def run_key(source: Path, injected: Mapping[str, object], fingerprint: str) -> str:
    """The cache key of a chapter's run: its source, the parameters papermill injects, the package."""
    parameters = json.dumps(injected, sort_keys=True, default=repr).encode()
    return content_key(source.read_bytes(), parameters, fingerprint.encode())


def output_digests(root: Path, files: Iterable[Path]) -> dict[str, str]:
    """``{path relative to root: SHA-256}`` of ``files`` (which lie under ``root``)."""
    return {Path(f).relative_to(root).as_posix(): file_digest(Path(f)) for f in files}


def package_fingerprint() -> str:
    """SHA-256 of the package's ``.py`` and ``.json`` files (paths and contents), so a change shows."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(p for pattern in ("*.py", "*.json") for p in package.rglob(pattern)):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def outputs_damage(root: Path, outputs: Mapping[str, str], where: str = "") -> str | None:
    """Why the files of a cache entry are not as written (one phrase), or None when all are.

    ``outputs`` maps each file (relative to ``root``, with ``/``) to its SHA-256; the phrase names
    the first missing, differing or unreadable one (prefixed with ``where``), and how many more are.
    """
    problems = []  # the outputs missing or differing
    for relative, digest in outputs.items():
        path = Path(root) / relative
        try:
            if file_digest(path) != digest:
                problems.append(f"{where}{relative} differs from what its run wrote")
        except FileNotFoundError:
            problems.append(f"{where}{relative} is missing")
        except OSError as exc:
            problems.append(f"{where}{relative} cannot be read ({exc.strerror or exc})")
    if not problems:
        return None
    more = f" (and {len(problems) - 1} more of its outputs)" if len(problems) > 1 else ""
    return problems[0] + more
