"""Outputs written and verified: how the pipeline writes into an output tree, and trusts what it reads back.

* **Atomic writes** (:func:`atomic_path`, :func:`atomic_write_text`): a file is written to a
  temporary file in its folder, then moved into place with :func:`os.replace` (atomic on POSIX and
  Windows), so a reader sees the old file or the new one, never half of one. Temporary files are
  named ``.<name>.tmp-<pid>-<random><suffix>``: hidden, in the target's folder (the rename never
  crosses a file system), with the target's suffix (matplotlib chooses the format from it), and
  recognisable (:func:`is_temporary`), so that a run removes those a killed process left behind
  (:func:`remove_leftovers`).
* **One command at a time** per output tree (:func:`output_lock`): ``ntpnb reproduce`` holds an
  exclusive lock on ``<tree>/.lock`` while it writes the outputs, ``ntpnb book`` while it reads
  them. An operating-system lock (:class:`filelock.FileLock`) is released however its holder ends
  (even ``kill -9``); the holder writes its process id and command line into the file, for messages.
* **Staging**: each notebook executes in ``<tree>/.staging/<name>/``, laid out as the output tree.
  Only on success are its files moved into place (:func:`promote`), the executed notebook last; a
  failed notebook's executed copy and failure record go to ``<tree>/failed/`` (:func:`keep_failure`)
  until its next success. Why a notebook failed is said in one line, the error and the cell it
  failed in (:func:`describe_failure`): what ``ntpnb reproduce`` prints, and what the failure
  record and the book's report keep.
* **Records** that make a tree trustworthy when read again (by the runner's cache, by ``ntpnb book``):
  the **run record** ``<tree>/run.json`` (:class:`RunRecord`: the profile, ``-p`` overrides, seeds
  and notebooks that ran into the tree; a tree holds one setting, and ``<root>/outputs`` only
  the book's runs: profile paper, no overrides) and each chapter's **output manifest**
  ``<tree>/notebooks/<name>.key.json`` (:class:`Manifest`: the completed run's cache key, the
  SHA-256 of every file it wrote, which :func:`chapter_damage` checks, and the git commit its
  sources were at, :func:`source_commit`, which the book's pages show). A record that does not read
  or has the wrong shape raises a PathError naming the file.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

from ..errors import NTPError, OutputLockedError, PathError
from ._layout import OutputLayout, output_layout

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


#: A record read from JSON (:class:`RunRecord` or :class:`Manifest`).
_Record = TypeVar("_Record")

#: The run record's file name, at the root of an output tree.
RUN_RECORD_NAME = "run.json"


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

    @property
    def overrides_text(self) -> str:
        """The ``-p`` overrides as ``k=v, ...`` in name order ("" without any)."""
        return ", ".join(f"{k}={v}" for k, v in sorted(self.overrides.items()))

    def describe(self) -> str:
        """``profile paper, seeds 0-4`` or ``profile quick with n_g=121, seed=3; seed 3``.

        An interactive run says so first: ``interactive run (not ntpnb reproduce), profile quick; seed 0``.
        """
        text = "interactive run (not ntpnb reproduce), " if self.interactive else ""
        text += f"profile {self.profile}"
        if self.overrides:
            text += " with " + self.overrides_text
        seeds = sorted(self.seeds)
        if len(seeds) == 1:
            text += f"; seed {seeds[0]}"
        elif seeds and seeds == list(range(seeds[0], seeds[-1] + 1)):
            text += f"; seeds {seeds[0]}-{seeds[-1]}"
        elif seeds:
            text += "; seeds " + ", ".join(map(str, seeds))
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


def load_run_record(root: Path) -> RunRecord | None:
    """The run record of the tree at ``root`` (None when no run wrote one; PathError when damaged)."""
    path = Path(root) / RUN_RECORD_NAME
    if not path.exists():
        return None
    return read_record(path, "run record", RunRecord.from_json)


def write_run_record(root: Path, record: RunRecord) -> Path:
    """Write ``record`` as the run record of the tree at ``root`` (atomically)."""
    return atomic_write_json(Path(root) / RUN_RECORD_NAME, asdict(record))


def check_setting(root: Path, record: RunRecord) -> RunRecord | None:
    """The run record of the tree at ``root`` (None without one), if ``record``'s run may write there.

    A tree holds one setting (profile, overrides, interactive or not): NTPError if it holds a run
    of another setting (or a damaged record).
    """
    try:
        held = load_run_record(root)
    except PathError as exc:
        raise NTPError(
            f"{exc}; if the tree holds only runs of {record.describe()}, delete that file and rerun"
        ) from exc
    if held is not None:
        setting = (record.profile, record.overrides, record.interactive)
        if (held.profile, held.overrides, held.interactive) != setting:
            raise NTPError(
                f"{root} holds a run of {held.describe()}; this run is {record.describe()}: "
                "choose another --out, or leave --out out (each setting then gets a tree of its own)"
            )
    return held


def claim_tree(root: Path, record: RunRecord) -> None:
    """Record in the ``run.json`` of the tree at ``root`` that ``record``'s run writes there (under its lock).

    Runs of the same profile and overrides add their seeds and notebooks to its record; NTPError
    if it holds a run of another setting (or a damaged record: :func:`check_setting`).
    """
    held = check_setting(root, record)
    if held is not None:
        seeds = tuple(dict.fromkeys((*held.seeds, *record.seeds)))
        notebooks = tuple(sorted({*held.notebooks, *record.notebooks}))
        record = replace(record, seeds=seeds, notebooks=notebooks, version=record.version or held.version)
    write_run_record(root, record)


#: The files of the project that decide what a run computes (relative to its root): a change to
#: one of them that is not committed marks a run's commit as modified.
RUN_SOURCES = ("notebooks", "ntpnb", "pyproject.toml", "constraints.txt")


@dataclass(frozen=True)
class SourceCommit:
    """The git commit a project's sources were at when a run was recorded, as its manifest says.

    ``sha`` is "" when it is unknown (not a git checkout, git missing, or a run recorded before
    commits were); ``modified``: the :data:`RUN_SOURCES` had uncommitted changes; ``changes``: how
    the chapter's own source differed from the commit (:func:`~ntpnb.chapter._sources.source_changes`;
    "" when it was as committed).
    """

    sha: str = ""
    modified: bool = False
    changes: str = ""

    def describe(self) -> str:
        """``commit 452b334``, ``commit 452b334 with uncommitted changes`` or ``commit not recorded``."""
        if not self.sha:
            return "commit not recorded"
        return f"commit {self.sha[:7]}" + (" with uncommitted changes" if self.modified else "")


def git_output(root: Path, *args: str) -> str | None:
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
    head = git_output(root, "rev-parse", "--verify", "HEAD")
    if not head:
        return SourceCommit()
    status = git_output(root, "status", "--porcelain", "--", *RUN_SOURCES)
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
            or not isinstance(commit.get("changes", ""), str)
        ):
            raise ValueError("'commit' is not a commit (a 'sha' text, a 'modified' flag, its 'changes')")
        source = SourceCommit(commit.get("sha", ""), commit.get("modified", False), commit.get("changes", ""))
        return cls(data["key"], parameters, float(seconds), dict(outputs), package, source)


def manifest_path(executed: Path) -> Path:
    """Where the manifest of the executed notebook ``executed`` lives: ``<name>.key.json`` beside it."""
    return executed.with_name(f"{executed.stem}.key.json")


def file_digest(path: Path) -> str:
    """The SHA-256 of the file at ``path`` (hex), read in blocks of 1 MiB."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:  # hashlib.file_digest needs Python 3.11; the package supports 3.10
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def output_digests(root: Path, files: Iterable[Path]) -> dict[str, str]:
    """``{path relative to root: SHA-256}`` of ``files`` (which lie under ``root``)."""
    return {Path(f).relative_to(root).as_posix(): file_digest(Path(f)) for f in files}


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
    problems = []  # the outputs missing or differing
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


STAGING_DIRNAME = ".staging"


def staging_layout(layout: OutputLayout, name: str) -> OutputLayout:
    """The private output tree notebook ``name`` executes into (emptied first)."""
    root = layout.root / STAGING_DIRNAME / name
    shutil.rmtree(root, ignore_errors=True)
    return output_layout(root)


def remove_leftovers(layout: OutputLayout) -> None:
    """Remove what killed runs left in ``layout`` (staging trees, temporary files); under the output lock."""
    shutil.rmtree(layout.root / STAGING_DIRNAME, ignore_errors=True)
    for folder in (layout.root, layout.notebooks, layout.figures, layout.claims, layout.failed):
        for path in folder.glob(".*"):
            if path.is_file() and is_temporary(path):
                path.unlink(missing_ok=True)


def promote(stage: OutputLayout, layout: OutputLayout, executed: Path) -> list[Path]:
    """Move every file of ``stage`` to the same place in ``layout``; the files now in place.

    The cell papermill injects is tagged ``hide-input`` first (the book then shows one parameter
    listing) and target folders checked, so an unwritable one fails before any file moves; the
    executed notebook moves last, and the kept copy and record of the notebook's last failure go.
    """
    import nbformat

    staged = stage.notebooks / executed.name
    nb = nbformat.read(staged, as_version=4)
    for cell in nb.cells:
        tags = cell.metadata.setdefault("tags", [])
        if "injected-parameters" in tags and "hide-input" not in tags:
            tags.append("hide-input")
    with atomic_path(staged) as tmp:
        nbformat.write(nb, tmp)
    files = sorted(p for p in stage.root.rglob("*") if p.is_file() and p != staged)
    targets = [layout.root / p.relative_to(stage.root) for p in files]
    for folder in sorted({t.parent for t in targets} | {executed.parent}):
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK):
            raise PermissionError(errno.EACCES, "the folder is not writable", str(folder))
    for path, target in zip(files, targets, strict=True):
        os.replace(path, target)
    os.replace(staged, executed)
    for stale in (layout.failed / executed.name, layout.failed / f"{executed.stem}.json"):
        stale.unlink(missing_ok=True)  # the record of the notebook's last failure
    return [*targets, executed]


def keep_failure(
    layout: OutputLayout,
    stage: OutputLayout,
    name: str,
    error: str,
    parameters: Mapping[str, object],
    checks: Sequence[object],
) -> Path | None:
    """Keep a failed run's executed notebook and a failure record in ``layout.failed``, if possible.

    The record holds the error, parameters, date and the claim ``checks`` (as JSON) recorded
    before the failure; the copy is kept only if it is a whole notebook. Returns the kept
    notebook, or None.
    """
    kept = layout.failed / f"{name}.ipynb"
    staged = stage.notebooks / f"{name}.ipynb"
    record = {
        "notebook": name,
        "error": error,
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "parameters": dict(parameters),
        "checks": list(checks),
    }
    with suppress(OSError):  # the folder cannot be written: the error line already says why
        layout.failed.mkdir(parents=True, exist_ok=True)
        if _read_notebook(staged) is not None:  # a whole notebook, not one cut short
            os.replace(staged, kept)
        else:
            kept.unlink(missing_ok=True)  # an earlier failure's copy would be mistaken for this one's
        atomic_write_json(layout.failed / f"{name}.json", record)
    return kept if kept.is_file() else None


def _read_notebook(path: Path) -> Any:
    """The notebook at ``path``, or None if it does not read (missing, cut short by a failed write)."""
    import nbformat

    try:
        return nbformat.read(path, as_version=4)
    except Exception:  # missing, truncated JSON, not a notebook
        return None


def describe_failure(exc: BaseException, staged: Path | None = None, outputs: Path | None = None) -> str:
    """One line: the error of a failed notebook and, when known, the cell it failed in.

    A kernel that died (crashed, killed, out of memory) is named as such, with its cell; an
    operating-system error of the run itself (not raised in the notebook) is a failure to write
    the outputs (:func:`describe_write_failure`).

    The cell is the one papermill marked failed in the executed copy ``staged``, or else the cell
    the kernel started and never answered (no ``shell.execute_reply`` time: the kernel died in
    it), or else the last code cell papermill started: a kernel that dies before it acknowledges
    the cell leaves no execution metadata, and papermill then marks every started cell completed.
    """
    from nbclient.exceptions import DeadKernelError

    if isinstance(exc, OSError) and not hasattr(exc, "ename"):
        return describe_write_failure(exc, outputs)
    ename = getattr(exc, "ename", type(exc).__name__)
    evalue = str(getattr(exc, "evalue", exc)).strip()
    first = evalue.splitlines()[0] if evalue else ""
    nb = _read_notebook(staged) if staged is not None else None
    code = [(i, cell.metadata) for i, cell in enumerate(nb.cells) if cell.cell_type == "code"] if nb else []
    failed = [i for i, meta in code if meta.get("papermill", {}).get("status") == "failed"]
    died = [i for i, meta in code if (times := meta.get("execution")) and "shell.execute_reply" not in times]
    started = [i for i, meta in code[::-1] if meta.get("papermill", {}).get("start_time") is not None]
    where = ""
    if (index := next(iter(failed + died + started), None)) is not None:
        lines = nb.cells[index].source.strip().splitlines()
        where = f" in cell {index} ({(lines[0] if lines else '')[:60]!r})"
    if isinstance(exc, DeadKernelError):
        return f"KernelDied: the kernel died{where}"
    return f"{ename}: {first}" + (where if ename != "ClaimCheckError" else "")


def describe_write_failure(exc: OSError, outputs: Path | None = None) -> str:
    """One line for an output that could not be written: the cause, its errno, and where.

    Where is the file the error names, else the output folder ``outputs`` (a write into an open
    file, e.g. papermill's, names no file).
    """
    cause = exc.strerror or str(exc) or type(exc).__name__
    code = f" (errno {exc.errno})" if exc.errno else ""
    where = exc.filename if exc.filename else outputs
    return f"could not write the outputs: {cause}{code}" + (f": {where}" if where else "")
