"""Outputs survive interruption and failure: a notebook writes into a staging tree first.

Each notebook executes in ``<output root>/.staging/<name>/``, laid out as the output tree. Only on
success are its files moved into place (:func:`promote`), the executed notebook last; a failed
notebook's executed copy and failure record go to ``<output root>/failed/`` (:func:`keep_failure`)
until its next success. Why a notebook failed is said in one line, the
error and the cell it failed in (:func:`describe_failure`): what ``ntpnb reproduce`` prints, and
what the failure record and the book's report keep.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from collections.abc import Mapping
from contextlib import suppress
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..chapter.atomic import atomic_path, atomic_write_text, remove_temporaries
from ..chapter.claims import load_chapter_record
from ..chapter.layout import OutputLayout, output_layout
from ..errors import PathError

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
        remove_temporaries(folder)


def hide_injected_parameters(executed: Path) -> None:
    """Tag ``hide-input`` the cell papermill injects, so the book does not show two parameter listings."""
    import nbformat

    nb = nbformat.read(executed, as_version=4)
    for cell in nb.cells:
        tags = cell.metadata.setdefault("tags", [])
        if "injected-parameters" in tags and "hide-input" not in tags:
            tags.append("hide-input")
    with atomic_path(executed) as tmp:
        nbformat.write(nb, tmp)


def promote(stage: OutputLayout, layout: OutputLayout, executed: Path) -> list[Path]:
    """Move every file of ``stage`` to the same place in ``layout``; the files now in place.

    The injected parameters are hidden first (:func:`hide_injected_parameters`) and target folders
    checked, so an unwritable one fails before any file moves; the executed notebook moves last,
    and the kept copy and record of the notebook's last failure go.
    """
    staged = stage.notebooks / executed.name
    hide_injected_parameters(staged)
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
    layout: OutputLayout, stage: OutputLayout, name: str, error: str, parameters: Mapping[str, object]
) -> Path | None:
    """Keep a failed run's executed notebook and a failure record in ``layout.failed``, if possible.

    The record holds the error, parameters, date and the claim checks recorded before the
    failure; the copy is kept only if it is a whole notebook. Returns the kept notebook, or None.
    """
    kept = layout.failed / f"{name}.ipynb"
    staged = stage.notebooks / f"{name}.ipynb"
    try:
        checks = [c.to_json() for c in load_chapter_record(stage.claims / f"{name}.json").checks]
    except PathError:  # no record (or half of one) yet
        checks = []
    record = {
        "notebook": name,
        "error": error,
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "parameters": dict(parameters),
        "checks": checks,
    }
    with suppress(OSError):  # the folder cannot be written: the error line already says why
        layout.failed.mkdir(parents=True, exist_ok=True)
        if _read_notebook(staged) is not None:  # a whole notebook, not one cut short
            os.replace(staged, kept)
        else:
            kept.unlink(missing_ok=True)  # an earlier failure's copy would be mistaken for this one's
        atomic_write_text(layout.failed / f"{name}.json", json.dumps(record, indent=1, default=repr) + "\n")
    return kept if kept.is_file() else None


def _read_notebook(path: Path) -> Any:
    """The notebook at ``path``, or None if it does not read (missing, cut short by a failed write)."""
    import nbformat

    try:
        return nbformat.read(path, as_version=4)
    except Exception:  # missing, truncated JSON, not a notebook
        return None


def failed_cell(staged: Path) -> tuple[int, str] | None:
    """Index and first source line of the cell a run failed in, if the executed copy shows it.

    That is the cell papermill marked failed, or else the cell the kernel started and never
    answered (no ``shell.execute_reply`` time: the kernel died in it), or else the last code
    cell papermill started: a kernel that dies before it acknowledges the cell leaves no
    execution metadata, and papermill then marks every started cell completed.
    """
    nb = _read_notebook(staged)
    if nb is None:
        return None

    def meta(cell: dict, key: str) -> dict:
        return cell.get("metadata", {}).get(key, {})

    cells = list(enumerate(nb.cells))
    tests = (
        (lambda cell: meta(cell, "papermill").get("status") == "failed", cells),
        (lambda cell: (times := meta(cell, "execution")) and "shell.execute_reply" not in times, cells),
        (lambda cell: meta(cell, "papermill").get("start_time") is not None, cells[::-1]),
    )
    for test, order in tests:
        for index, cell in order:
            if cell.cell_type == "code" and test(cell):
                lines = cell.source.strip().splitlines()
                return index, lines[0] if lines else ""
    return None


def describe_failure(exc: BaseException, staged: Path | None = None, outputs: Path | None = None) -> str:
    """One line: the error of a failed notebook and, when known, the cell it failed in.

    A kernel that died (crashed, killed, out of memory) is named as such, with its cell; an
    operating-system error of the run itself (not raised in the notebook) is a failure to write
    the outputs (:func:`describe_write_failure`).
    """
    from nbclient.exceptions import DeadKernelError

    if isinstance(exc, OSError) and not hasattr(exc, "ename"):
        return describe_write_failure(exc, outputs)
    ename = getattr(exc, "ename", type(exc).__name__)
    evalue = str(getattr(exc, "evalue", exc)).strip()
    first = evalue.splitlines()[0] if evalue else ""
    cell = failed_cell(staged) if staged is not None else None
    where = f" in cell {cell[0]} ({cell[1][:60]!r})" if cell else ""
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
