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
  the **run record** ``<tree>/run.json`` (:class:`TreeRecord`: the profile, ``-p`` overrides, seeds
  and notebooks that ran into the tree; a tree holds one setting, and ``<root>/outputs`` only
  the book's runs: profile paper, no overrides) and each chapter's **output manifest**
  ``<tree>/notebooks/<name>.key.json`` (:class:`Manifest`: the completed run's cache key, the
  SHA-256 of every file it wrote, which :func:`chapter_damage` checks, and the git commit its
  sources were at, :func:`source_commit`, which the book's pages show). A record that does not read
  or has the wrong shape raises a PathError naming the file.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Mapping, Sequence
from contextlib import suppress
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ._files import atomic_path, atomic_write_json, is_temporary
from ._places import OutputTree, output_tree

STAGING_DIRNAME = ".staging"


def staging_tree(tree: OutputTree, name: str) -> OutputTree:
    """The private output tree notebook ``name`` executes into (emptied first)."""
    root = tree.root / STAGING_DIRNAME / name
    shutil.rmtree(root, ignore_errors=True)
    return output_tree(root)


def remove_leftovers(tree: OutputTree) -> None:
    """Remove what killed runs left in ``tree`` (staging trees, temporary files); under the output lock."""
    shutil.rmtree(tree.root / STAGING_DIRNAME, ignore_errors=True)
    for folder in (tree.root, tree.notebooks, tree.figures, tree.claims, tree.failed):
        for path in folder.glob(".*"):
            if path.is_file() and is_temporary(path):
                path.unlink(missing_ok=True)


def promote(stage: OutputTree, tree: OutputTree, executed: Path) -> list[Path]:
    """Move every file of ``stage`` to the same place in ``tree``; the files now in place.

    The cell papermill injects is tagged ``remove-cell`` first (the book then shows one parameters
    cell, the chapter's own, which reads the profile the injected cell names) and target folders
    checked, so an unwritable one fails before any file moves; the executed notebook moves last,
    and the kept copy and record of the notebook's last failure go.
    """
    import nbformat

    staged = stage.notebooks / executed.name
    nb = nbformat.read(staged, as_version=4)
    for cell in nb.cells:
        tags = cell.metadata.setdefault("tags", [])
        if "injected-parameters" in tags and "remove-cell" not in tags:
            tags.append("remove-cell")
    with atomic_path(staged) as tmp:
        nbformat.write(nb, tmp)
    files = sorted(p for p in stage.root.rglob("*") if p.is_file() and p != staged)
    targets = [tree.root / p.relative_to(stage.root) for p in files]
    for folder in sorted({t.parent for t in targets} | {executed.parent}):
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK):
            raise PermissionError(errno.EACCES, "the folder is not writable", str(folder))
    for path, target in zip(files, targets, strict=True):
        os.replace(path, target)
    os.replace(staged, executed)
    for stale in (tree.failed / executed.name, tree.failed / f"{executed.stem}.json"):
        stale.unlink(missing_ok=True)  # the record of the notebook's last failure
    return [*targets, executed]


def keep_failure(
    tree: OutputTree,
    stage: OutputTree,
    name: str,
    error: str,
    parameters: Mapping[str, object],
    checks: Sequence[object],
) -> Path | None:
    """Keep a failed run's executed notebook and a failure record in ``tree.failed``, if possible.

    The record holds the error, parameters, date and the claim ``checks`` (as JSON) recorded
    before the failure; the copy is kept only if it is a whole notebook. Returns the kept
    notebook, or None.
    """
    kept = tree.failed / f"{name}.ipynb"
    staged = stage.notebooks / f"{name}.ipynb"
    record = {
        "notebook": name,
        "error": error,
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "parameters": dict(parameters),
        "checks": list(checks),
    }
    with suppress(OSError):  # the folder cannot be written: the error line already says why
        tree.failed.mkdir(parents=True, exist_ok=True)
        if _read_notebook(staged) is not None:  # a whole notebook, not one cut short
            os.replace(staged, kept)
        else:
            kept.unlink(missing_ok=True)  # an earlier failure's copy would be mistaken for this one's
        atomic_write_json(tree.failed / f"{name}.json", record)
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
