"""What ran into an output tree, and what it wrote: read back only when it checks out.

Two records make an output tree trustworthy when read again (by the runner's cache, by
``ntpnb book``):

* the **run record** ``<tree>/run.json`` (:class:`RunRecord`): the profile, ``-p`` overrides,
  seeds and notebooks that ran into the tree. A tree holds one setting: a run of another profile
  or overrides is refused. It labels the tree (:meth:`RunRecord.describe`); ``<root>/outputs``
  holds only :func:`is_book_run` runs.
* each chapter's **output manifest** ``<tree>/notebooks/<name>.key.json`` (:class:`Manifest`):
  the completed run's cache key, the SHA-256 of every file it wrote (:func:`damaged_outputs` says
  which are missing or differ) and the git commit its sources were at (:func:`source_commit`),
  which the book's pages show.

A record that does not read or has the wrong shape raises a PathError naming the file.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ..errors import PathError
from .atomic import atomic_write_text

#: A record read from JSON (:class:`RunRecord` or :class:`Manifest`).
_Record = TypeVar("_Record")

#: The profile of the book's own run (its figures and pages are the papers' settings).
BOOK_PROFILE = "paper"
#: The run record's file name, at the root of an output tree.
RUN_RECORD_NAME = "run.json"


def is_book_run(profile: str, overrides: Mapping[str, object]) -> bool:
    """Whether a run is the book's own: the paper profile, no overrides (at any number of seeds)."""
    return profile == BOOK_PROFILE and not overrides


@dataclass(frozen=True)
class RunRecord:
    """What ran into one output tree (``run.json``).

    ``seeds`` (the book's first) and ``notebooks`` grow as runs of the same setting add to the tree.
    """

    profile: str
    overrides: dict[str, str] = field(default_factory=dict)
    seeds: tuple[int, ...] = ()
    notebooks: tuple[str, ...] = ()
    #: Whether the notebooks ran outside ``ntpnb reproduce`` (JupyterLab, Binder, papermill), with
    #: ``overrides`` the values that differ from the profile's.
    interactive: bool = False
    #: The version of ``ntpnb`` that ran into the tree last ("" in older records).
    version: str = ""

    def same_setting(self, other: RunRecord) -> bool:
        """Whether ``other`` ran the same profile with the same overrides (it may add seeds)."""
        return (self.profile, self.overrides, self.interactive) == (
            other.profile,
            other.overrides,
            other.interactive,
        )

    def merged(self, other: RunRecord) -> RunRecord:
        """The record with the seeds and notebooks of ``other`` (a run of the same setting) added."""
        seeds = tuple(dict.fromkeys((*self.seeds, *other.seeds)))
        notebooks = tuple(sorted({*self.notebooks, *other.notebooks}))
        version = other.version or self.version
        return RunRecord(self.profile, dict(self.overrides), seeds, notebooks, self.interactive, version)

    def describe(self) -> str:
        """``profile paper, seeds 0-4`` or ``profile quick with n_g=121, seed=3; seed 3``.

        An interactive run says so first: ``interactive run (not ntpnb reproduce), profile quick; seed 0``.
        """
        text = "interactive run (not ntpnb reproduce), " if self.interactive else ""
        text += f"profile {self.profile}"
        if self.overrides:
            text += " with " + ", ".join(f"{k}={v}" for k, v in sorted(self.overrides.items()))
        if self.seeds:
            text += "; " + _describe_seeds(self.seeds)
        return text

    @classmethod
    def from_json(cls, data: object) -> RunRecord:
        """The record in JSON data; ValueError when its shape is not a run record's."""
        if not isinstance(data, dict) or not isinstance(data.get("profile"), str):
            raise ValueError("not a run record (no 'profile')")
        overrides = data.get("overrides", {})
        seeds = data.get("seeds", [])
        notebooks = data.get("notebooks", [])
        if not _texts_by_name(overrides):
            raise ValueError("'overrides' is not a mapping of names to texts")
        if not isinstance(seeds, list) or not all(type(s) is int for s in seeds):
            raise ValueError("'seeds' is not a list of integers")
        if not isinstance(notebooks, list) or not all(isinstance(n, str) for n in notebooks):
            raise ValueError("'notebooks' is not a list of names")
        interactive, version = data.get("interactive", False), data.get("version", "")
        if not isinstance(interactive, bool) or not isinstance(version, str):
            raise ValueError("'interactive' is not true or false, or 'version' not a text")
        return cls(data["profile"], dict(overrides), tuple(seeds), tuple(notebooks), interactive, version)


def _texts_by_name(data: object) -> bool:
    """Whether ``data`` is a dict of texts by text."""
    return isinstance(data, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in data.items())


def _describe_seeds(seeds: Sequence[int]) -> str:
    """``seed 3``, ``seeds 0-4`` (consecutive) or ``seeds 0, 2, 7``."""
    ordered = sorted(seeds)
    if len(ordered) == 1:
        return f"seed {ordered[0]}"
    if ordered == list(range(ordered[0], ordered[-1] + 1)):
        return f"seeds {ordered[0]}-{ordered[-1]}"
    return "seeds " + ", ".join(map(str, ordered))


def _read_record(path: Path, what: str, parse: Callable[[object], _Record]) -> _Record:
    """The record ``parse`` makes of the JSON in ``path``; PathError naming the file if it cannot."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else f"{type(exc).__name__}: {exc}"
        raise PathError(f"cannot read the {what} {path}: {reason}") from exc
    try:
        return parse(data)
    except ValueError as exc:
        raise PathError(f"the {what} {path} is damaged: {exc}") from exc


def load_run_record(root: Path) -> RunRecord | None:
    """The run record of the tree at ``root`` (None when no run wrote one; PathError when damaged)."""
    path = Path(root) / RUN_RECORD_NAME
    if not path.exists():
        return None
    return _read_record(path, "run record", RunRecord.from_json)


def write_run_record(root: Path, record: RunRecord) -> Path:
    """Write ``record`` as the run record of the tree at ``root`` (atomically)."""
    return atomic_write_text(Path(root) / RUN_RECORD_NAME, json.dumps(asdict(record), indent=1) + "\n")


#: The files of the project that decide what a run computes (relative to its root): a change to
#: one of them that is not committed marks a run's commit as modified.
RUN_SOURCES = ("notebooks", "ntpnb", "pyproject.toml", "constraints.txt")


@dataclass(frozen=True)
class SourceCommit:
    """The git commit a project's sources were at when a run was recorded, as its manifest says.

    ``sha`` is "" when it is unknown (not a git checkout, git missing, or a run recorded before
    commits were); ``modified``: the :data:`RUN_SOURCES` had uncommitted changes.
    """

    sha: str = ""
    modified: bool = False

    def describe(self) -> str:
        """``commit 452b334``, ``commit 452b334 with uncommitted changes`` or ``commit not recorded``."""
        if not self.sha:
            return "commit not recorded"
        return f"commit {self.sha[:7]}" + (" with uncommitted changes" if self.modified else "")


def _git(root: Path, *args: str) -> str | None:
    """The output of ``git -C root ARGS``; None when git is missing, fails or takes over 10 s."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def source_commit(root: Path) -> SourceCommit:
    """The commit the project at ``root`` is checked out at, and whether its run sources changed since.

    Unknown (``SourceCommit()``) outside a git checkout or without git.
    """
    head = _git(root, "rev-parse", "--verify", "HEAD")
    if not head:
        return SourceCommit()
    status = _git(root, "status", "--porcelain", "--", *RUN_SOURCES)
    return SourceCommit(head.strip(), status is None or bool(status.strip()))


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
    commit: SourceCommit = SourceCommit()

    @classmethod
    def from_json(cls, data: object) -> Manifest:
        """The manifest in JSON data; ValueError when its shape is not a manifest's."""
        if not isinstance(data, dict) or not isinstance(data.get("key"), str):
            raise ValueError("no cache key")
        outputs = data.get("outputs")
        if not _texts_by_name(outputs):
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
        ):
            raise ValueError("'commit' is not a commit (a 'sha' text and a 'modified' flag)")
        source = SourceCommit(commit.get("sha", ""), commit.get("modified", False))
        return cls(data["key"], parameters, float(seconds), dict(outputs), package, source)


def manifest_path(executed: Path) -> Path:
    """Where the manifest of the executed notebook ``executed`` lives: ``<name>.key.json`` beside it."""
    return executed.with_name(f"{executed.stem}.key.json")


def file_digest(path: Path) -> str:
    """The SHA-256 of the file at ``path`` (hex)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def output_digests(root: Path, files: Iterable[Path]) -> dict[str, str]:
    """``{path relative to root: SHA-256}`` of ``files`` (which lie under ``root``)."""
    return {Path(f).relative_to(root).as_posix(): file_digest(Path(f)) for f in files}


def load_manifest(executed: Path) -> Manifest:
    """The manifest of the executed notebook ``executed``; PathError naming it when missing or damaged."""
    return _read_record(manifest_path(executed), "output manifest", Manifest.from_json)


def write_manifest(executed: Path, manifest: Manifest) -> Path:
    """Write the manifest of ``executed`` (atomically), once its outputs are in place."""
    data = asdict(manifest) | {
        "seconds": round(manifest.seconds, 3),
        "outputs": dict(sorted(manifest.outputs.items())),
    }
    return atomic_write_text(manifest_path(executed), json.dumps(data, indent=1, default=repr) + "\n")


def damaged_outputs(root: Path, manifest: Manifest, where: str = "") -> str | None:
    """The first output of ``manifest`` (under ``root``) missing or differing, and how many more; or None."""
    problems = []
    for relative, digest in manifest.outputs.items():
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


def chapter_damage(root: Path, executed: Path, where: str = "") -> str | None:
    """Why the outputs of the chapter executed as ``executed`` cannot be trusted (one phrase), or None."""
    try:
        manifest = load_manifest(executed)
    except PathError as exc:
        return str(exc)
    return damaged_outputs(root, manifest, where)
