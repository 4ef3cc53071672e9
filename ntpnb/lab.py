"""JupyterLab and Binder on the project: the chapters open as notebooks, and a save never changes them.

The project's Jupyter settings (``.jupyter/jupyter_server_config.py``, which ``./run.sh lab`` and
Binder read) make :class:`ChapterContentsManager` the server's contents manager: Jupytext's, which
opens the MyST sources ``notebooks/*.md`` as notebooks, with one difference. A chapter's source is
what the book runs, so it is *read-only* there: JupyterLab shows it so, never autosaves it, and
says on Ctrl+S to use *Save Notebook As…*; the server refuses to write, rename or delete it, or to
add a source beside it (a new ``notebooks/*.md`` would be a chapter). A reader's edited copy is
saved under ``my-notebooks/`` (:data:`~ntpnb.chapter._layout.COPIES_DIRNAME`, which git ignores,
made on the first save), where it runs as the chapter does (its outputs under
``outputs/runs/interactive/``). A run of an edited source is never silent either: ``ntpnb
reproduce`` names what differs from the commit.

An author who edits a chapter in JupyterLab starts it with
``./run.sh lab --ChapterContentsManager.chapters_read_only=False``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jupytext import TextFileContentsManager
from tornado.web import HTTPError
from traitlets import Bool

from .chapter._layout import COPIES_DIRNAME

__all__ = ["ChapterContentsManager"]


def _in_project(os_path: Path, folder: str) -> bool:
    """Whether ``os_path`` lies directly in the folder ``folder`` of a project (beside its ``_toc.yml``)."""
    return os_path.parent.name == folder and (os_path.parent.parent / "_toc.yml").is_file()


def _is_chapter_source(os_path: Path) -> bool:
    """Whether ``os_path`` is (or would be) a chapter's source: ``<project>/notebooks/<name>.md``."""
    return os_path.suffix == ".md" and _in_project(os_path, "notebooks")


class ChapterContentsManager(TextFileContentsManager):
    """Jupytext's contents manager, with the chapters' sources read-only (the module docstring)."""

    chapters_read_only = Bool(
        True, help="Keep the chapters' sources (notebooks/*.md) read-only: a save goes to my-notebooks/"
    ).tag(config=True)

    def _guarded(self, path: str) -> bool:
        """Whether the file at the API path ``path`` is a chapter's source this manager keeps."""
        return bool(self.chapters_read_only) and _is_chapter_source(Path(self._get_os_path(path)))

    def _refuse(self, path: str, what: str) -> HTTPError:
        """The error (403) refusing to ``what`` the chapter source ``path``: why, and where a copy goes."""
        path = path.strip("/")
        which = "is a chapter's source"
        if not Path(self._get_os_path(path)).exists():
            which = "would be a chapter's source (every notebooks/*.md is one)"
        copy = f"{COPIES_DIRNAME}/{Path(path).stem}.md"
        return HTTPError(
            403,
            f"{path} {which}, which the book runs: JupyterLab does not {what} it here. Keep your "
            f"changes with File > Save Notebook As… {copy} ({COPIES_DIRNAME}/ is yours: git ignores "
            "it); a run of either writes to outputs/runs/interactive/, never the book's outputs.",
        )

    def get(self, path: str, content: bool = True, type: str | None = None, **kwargs: Any) -> dict:
        """The model of ``path``, a chapter's source marked read-only (JupyterLab then never saves it)."""
        model = super().get(path, content=content, type=type, **kwargs)
        if model.get("type") != "directory" and self._guarded(path):
            model["writable"] = False
        return model

    def save(self, model: dict, path: str = "") -> dict:
        """Save ``model`` at ``path``; a chapter's source (or a new one) is refused, a copy's folder made."""
        if self._guarded(path):
            raise self._refuse(path, "write")
        target = Path(self._get_os_path(path))
        if _in_project(target, COPIES_DIRNAME):
            target.parent.mkdir(exist_ok=True)  # the reader's folder, made on its first save
        return super().save(model, path)

    def rename_file(self, old_path: str, new_path: str) -> None:
        """Rename a file; never a chapter's source, nor a file into one."""
        for path in (old_path, new_path):
            if self._guarded(path):
                raise self._refuse(path, "rename")
        super().rename_file(old_path, new_path)

    def delete_file(self, path: str) -> None:
        """Delete a file; never a chapter's source."""
        if self._guarded(path):
            raise self._refuse(path, "delete")
        super().delete_file(path)
