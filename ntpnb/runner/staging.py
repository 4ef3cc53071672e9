"""Outputs survive interruption and failure: a notebook writes into a staging tree first.

Each notebook executes in ``<output root>/.staging/<name>/``, laid out as the output tree. Only on
success are its files moved into place (:func:`promote`), the executed notebook last; a failed
notebook's executed copy and failure record go to ``<output root>/failed/`` (:func:`keep_failure`)
until its next success (:func:`clear_failure`).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path

from ..chapter.atomic import atomic_path, atomic_write_text, remove_temporaries
from ..chapter.claims import load_chapter_record
from ..chapter.layout import OutputLayout, output_layout
from ..errors import PathError

__all__ = [
    "STAGING_DIRNAME",
    "staging_layout",
    "remove_leftovers",
    "hide_injected_parameters",
    "promote",
    "keep_failure",
    "clear_failure",
]

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

    Target folders are checked first, so an unwritable one fails before any file moves; the
    executed notebook moves last.
    """
    staged = stage.notebooks / executed.name
    files = sorted(p for p in stage.root.rglob("*") if p.is_file() and p != staged)
    targets = [layout.root / p.relative_to(stage.root) for p in files]
    for folder in sorted({t.parent for t in targets} | {executed.parent}):
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK):
            raise PermissionError(errno.EACCES, "the folder is not writable", str(folder))
    for path, target in zip(files, targets, strict=True):
        os.replace(path, target)
    os.replace(staged, executed)
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
    try:
        layout.failed.mkdir(parents=True, exist_ok=True)
        if _is_whole_notebook(staged):
            os.replace(staged, kept)
        else:
            kept.unlink(missing_ok=True)  # an earlier failure's copy would be mistaken for this one's
        atomic_write_text(layout.failed / f"{name}.json", json.dumps(record, indent=1, default=repr) + "\n")
    except OSError:  # the folder cannot be written: the error line already says why
        pass
    return kept if kept.is_file() else None


def _is_whole_notebook(path: Path) -> bool:
    """Whether ``path`` holds a notebook that reads (not one cut short by a failed write)."""
    import nbformat

    try:
        nbformat.read(path, as_version=4)
    except Exception:  # missing, truncated JSON, not a notebook
        return False
    return True


def clear_failure(layout: OutputLayout, name: str) -> None:
    """Remove the kept copy and record of ``name``'s last failure (it has just succeeded)."""
    for stale in (layout.failed / f"{name}.ipynb", layout.failed / f"{name}.json"):
        stale.unlink(missing_ok=True)
