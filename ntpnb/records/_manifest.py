"""Each chapter's output manifest ``<tree>/notebooks/<name>.key.json`` (:class:`Manifest`).

It holds the completed run's cache key, the SHA-256 of every file it wrote (the entry of the
content-addressed cache, :mod:`._cache`, which :func:`chapter_damage` checks), and the git commit
its sources were at (:func:`~._commit.source_commit`), which the book's pages show.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import PathError
from ._cache import outputs_damage
from ._commit import SourceCommit
from ._files import atomic_write_json, read_record, texts_by_name


@dataclass(frozen=True)
class Manifest:
    """A chapter's last completed run in a tree: its cache key, parameters, time, outputs and commit.

    ``outputs`` maps each file written (path relative to the tree, with ``/``) to its SHA-256;
    ``package`` fingerprints the ``ntpnb`` sources (seeds pool only when it is the same);
    ``commit`` is where the project's sources were (unknown for a run recorded before commits were).
    """

    key: str
    parameters: dict[str, Any]
    seconds: float
    outputs: dict[str, str]
    package: str = ""
    commit: SourceCommit = SourceCommit()  # noqa: RUF009 (a frozen dataclass: one shared default is safe)

    @classmethod
    def from_json(cls, data: object) -> Manifest:
        """The manifest in JSON data; ValueError when its shape is not a manifest's."""
        if not isinstance(data, dict) or not isinstance(data.get("key"), str):
            raise ValueError("no cache key")
        outputs = data.get("outputs")
        if not texts_by_name(outputs):
            raise ValueError("no digests of the outputs (written before they were recorded)")
        parameters = data.get("parameters", {})
        seconds = data.get("seconds", 0.0)
        package = data.get("package", "")
        commit = data.get("commit", {})
        if (
            not isinstance(parameters, dict)
            or type(seconds) not in (int, float)
            or not isinstance(package, str)
        ):
            raise ValueError("'parameters', 'seconds' or 'package' has the wrong type")
        if (
            not isinstance(commit, dict)
            or not isinstance(commit.get("sha", ""), str)
            or type(commit.get("modified", False)) is not bool
            or not isinstance(commit.get("changes", ""), str)
        ):
            raise ValueError("'commit' is not a commit (a 'sha' text, a 'modified' flag, its 'changes')")
        source = SourceCommit(commit.get("sha", ""), commit.get("modified", False), commit.get("changes", ""))
        return cls(data["key"], parameters, float(seconds), dict(outputs), package, source)


def manifest_path(executed: Path) -> Path:
    """Where the manifest of the executed notebook ``executed`` lives: ``<name>.key.json`` beside it."""
    return executed.with_name(f"{executed.stem}.key.json")


def load_manifest(executed: Path) -> Manifest:
    """The manifest of the executed notebook ``executed``; PathError naming it when missing or damaged."""
    return read_record(manifest_path(executed), "output manifest", Manifest.from_json)


def write_manifest(executed: Path, manifest: Manifest) -> Path:
    """Write the manifest of ``executed`` (atomically), once its outputs are in place."""
    data = asdict(manifest) | {
        "seconds": round(manifest.seconds, 3),
        "outputs": dict(sorted(manifest.outputs.items())),
    }
    return atomic_write_json(manifest_path(executed), data)


#: :func:`chapter_damage` of a run to come whose chapter has not completed a run into the tree.
NOT_RUN = "no completed run in this tree"


#: :func:`chapter_damage` of a run to come whose source, parameters or package changed since.
CHANGED = "its source, parameters or ntpnb changed"


def chapter_damage(root: Path, executed: Path, where: str = "", key: str | None = None) -> str | None:
    """Why the outputs of the chapter executed as ``executed`` cannot be trusted (one phrase), or None.

    The manifest does not read, or the first output it lists (under ``root``) is missing or
    differs (and how many more do).

    Given the cache ``key`` of a run to come, the run's cache state: also :data:`NOT_RUN` when no
    run of the chapter completed into the tree, :data:`CHANGED` when the last one had another key.
    """
    if key is not None and not manifest_path(executed).is_file():
        return NOT_RUN
    try:
        manifest = load_manifest(executed)
    except PathError as exc:
        return str(exc)
    if key is not None and manifest.key != key:
        return CHANGED
    return outputs_damage(root, manifest.outputs, where)


def written_figures(outputs: Mapping[str, str]) -> tuple[str, ...]:
    """The figures among a run's ``outputs`` (paths relative to its tree, as its manifest lists them)."""
    return tuple(path for path in sorted(outputs) if path.startswith("figures/"))


def recorded_figures(executed: Path) -> tuple[str, ...]:
    """The figures the last run of the executed notebook ``executed`` wrote (none without a manifest)."""
    try:
        return written_figures(load_manifest(executed).outputs)
    except PathError:
        return ()
