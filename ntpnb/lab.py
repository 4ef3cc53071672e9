"""JupyterLab and Binder on the project: the chapters open as notebooks, and a save never changes them.

The project's Jupyter settings (``.jupyter/jupyter_server_config.py``, which ``./run.sh lab`` and
Binder read) make :class:`ChapterContentsManager` the server's contents manager: Jupytext's, which
opens the MyST sources ``notebooks/*.md`` as notebooks, with one difference. A chapter's source is
what the book runs, so it is *read-only* there: JupyterLab shows it so, never autosaves it, and
says on Ctrl+S to use *Save Notebook As…*; the server refuses to write, rename or delete it, or to
add a source beside it (a new ``notebooks/*.md`` would be a chapter). A reader's edited copy is
saved under ``my-notebooks/`` (:data:`~ntpnb.records._places.COPIES_DIRNAME`, which git ignores,
made on the first save), where it runs as the chapter does (its outputs under
``outputs/runs/interactive/``). A run of an edited source is never silent either: ``ntpnb
reproduce`` names what differs from the commit.

An author who edits a chapter in JupyterLab starts it with
``./run.sh lab --ChapterContentsManager.chapters_read_only=False``.

A chapter opens as the book shows it: the code of every cell the book folds or removes (tagged
:data:`FOLDED_TAGS`: the claim checks, the glue, the setup, the figures' code) is collapsed
(``jupyter.source_hidden``), one click away; the parameters cell, where a reader changes a run,
stays open. The prose renders as MyST (the ``jupyterlab-myst`` extension of the ``lab`` extra),
its glued numbers as inline expressions (``{glue:text}`name``` opens as ``{eval}`glued("name")```,
which shows the number once the chapter has run; a copy is saved with the book's roles again).
Until then the prose shows the book's numbers, where the book's run in ``outputs/`` is of this
source and this package (:func:`book_glue`), as the book's page does; otherwise the expressions.
"""

from __future__ import annotations

import ast
import functools
import json
import re
from pathlib import Path
from typing import Any

from tornado.web import HTTPError
from traitlets import Bool

from ._extras import install_advice

try:  # jupytext's contents manager exists where jupyter_server does (the ``lab`` extra)
    from jupytext.sync_contentsmanager import TextFileContentsManager
except ImportError as missing:
    raise ImportError(
        f"ntpnb.lab is JupyterLab's contents manager and needs the lab extra ({missing}): "
        f"{install_advice('lab')}"
    ) from missing

from .records._cache import package_fingerprint
from .records._files import file_digest
from .records._places import BOOK_PROFILE, COPIES_DIRNAME, DEFAULT_OUTPUT_DIRNAME, OutputTree
from .records._timings import load_timings

__all__ = [
    "FOLDED_TAGS",
    "ChapterContentsManager",
    "as_glue_roles",
    "as_inline_expressions",
    "as_the_kernel_sets",
    "fold_as_the_book",
    "unfold_as_saved",
]

#: The cell tags with which the book (MyST-NB) folds or removes a cell's code.
FOLDED_TAGS = frozenset({"hide-input", "hide-cell", "remove-input", "remove-cell"})


def _in_project(os_path: Path, folder: str) -> bool:
    """Whether ``os_path`` lies directly in the folder ``folder`` of a project (beside its ``_toc.yml``)."""
    return os_path.parent.name == folder and (os_path.parent.parent / "_toc.yml").is_file()


def _is_chapter_source(os_path: Path) -> bool:
    """Whether ``os_path`` is (or would be) a chapter's source: ``<project>/notebooks/<name>.md``."""
    return os_path.suffix == ".md" and _in_project(os_path, "notebooks")


def _folded(cell: dict) -> bool:
    """Whether JupyterLab shows ``cell`` collapsed: a code cell the book folds, not the parameters."""
    tags = set(cell.get("metadata", {}).get("tags", []))
    return cell.get("cell_type") == "code" and bool(tags & FOLDED_TAGS) and "parameters" not in tags


def fold_as_the_book(notebook: dict) -> dict:
    """``notebook`` (a notebook's JSON content) with the code the book folds collapsed.

    Each code cell tagged one of :data:`FOLDED_TAGS`, except the parameters cell, gets the
    metadata ``jupyter.source_hidden`` that JupyterLab honours; nothing else changes.
    """
    for cell in notebook.get("cells", []):
        if _folded(cell):
            cell.setdefault("metadata", {}).setdefault("jupyter", {})["source_hidden"] = True
    return notebook


#: A glue role or directive of the book: ``{glue:text}`name```, ``{glue}`name```, ``{glue:md}`name```,
#: or a ``{glue:md} name`` fence of its own.
_GLUE_ROLE = re.compile(r"\{glue(?::(?P<kind>text|md))?\}`(?P<name>[^`]+)`")
_GLUE_FENCE = re.compile(r"^```\{glue:md\} (?P<name>\S+)\n(?::format: (?P<format>\w+)\n)?```$", re.M)
#: The inline expression a glue role or fence opens as in JupyterLab (``markdown``: ``True`` for
#: an inline ``{glue:md}``, a format's name for a fence of its own), and back.
_EXPRESSION = re.compile(
    r"\{eval\}`glued\(\"(?P<name>[^\"`]+)\"(?:, markdown=(?:(?P<md>True)|\"(?P<format>\w+)\"))?\)`"
)
#: The format of a ``{glue:md}`` fence without a ``:format:`` option (myst-nb's default).
_DEFAULT_FORMAT = "commonmark"


def _expression(name: str, markdown: bool | str) -> str:
    """The inline expression showing what is glued under ``name`` (see :data:`_EXPRESSION`)."""
    argument = ", markdown=True" if markdown is True else f', markdown="{markdown}"' if markdown else ""
    return f'{{eval}}`glued("{name}"{argument})`'


def _block_expression(match: re.Match) -> str:
    """The inline expression of the ``{glue:md}`` fence ``match``."""
    return _expression(match["name"], match["format"] or _DEFAULT_FORMAT)


def _markdown_cells(notebook: dict) -> list[dict]:
    return [cell for cell in notebook.get("cells", []) if cell.get("cell_type") == "markdown"]


def _glued_outputs(executed: dict) -> dict[str, str]:
    """The texts an executed notebook glued, by name (``myst_nb.glue``'s outputs)."""
    found = {}
    for cell in executed.get("cells", []):
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            text = output.get("data", {}).get("application/papermill.record/text/plain")
            if isinstance(name, str) and isinstance(text, str):
                try:
                    value = ast.literal_eval(text)
                except (ValueError, SyntaxError):
                    continue
                if isinstance(value, str):
                    found[name] = value
    return found


def book_glue(source: Path) -> dict[str, str]:
    """What the book's run of the chapter ``source`` glued, if it is a run of this source and package.

    The book's run is the executed notebook in the project's ``outputs/`` (the paper profile, the
    book's seed); its ``timings.json`` names the source (SHA-256) and package (fingerprint) it
    ran, both compared with today's. Empty when there is no such run, it failed, or it is stale.
    """
    tree = OutputTree(source.parent.parent / DEFAULT_OUTPUT_DIRNAME)
    record = load_timings(tree).get(BOOK_PROFILE, {}).get(source.stem, {})
    executed = tree.notebooks / f"{source.stem}.ipynb"
    if not (isinstance(record, dict) and record.get("ok") is True and executed.is_file()):
        return {}
    if record.get("source") != file_digest(source) or record.get("package") != package_fingerprint():
        return {}
    try:
        return _glued_outputs(json.loads(executed.read_text(encoding="utf-8")))
    except (OSError, ValueError, AttributeError):
        return {}


def _results(source: str, values: dict[str, str]) -> list[dict]:
    """jupyterlab-myst's evaluated results of the expressions in ``source`` whose value is known."""
    results = []
    for match in _EXPRESSION.finditer(source):
        if match["name"] in values:
            mime = "text/markdown" if match["md"] or match["format"] else "text/plain"
            result = {"status": "ok", "data": {mime: values[match["name"]]}, "metadata": {}}
            results.append({"expression": match[0][len("{eval}`") : -1], "result": result})
    return results


def as_inline_expressions(notebook: dict, values: dict[str, str] | None = None) -> dict:
    """``notebook`` with its markdown's glue roles as the inline expressions jupyterlab-myst evaluates.

    ``values``: the glued texts known already (:func:`book_glue`), shown until the chapter runs.
    """
    for cell in _markdown_cells(notebook):
        fence = _GLUE_FENCE.sub(_block_expression, cell["source"])
        cell["source"] = _GLUE_ROLE.sub(lambda m: _expression(m["name"], m["kind"] == "md"), fence)
        results = _results(cell["source"], values or {})
        if results:
            cell.setdefault("metadata", {})["user_expressions"] = results
            cell["metadata"]["trusted"] = True  # ntpnb's own run wrote them, not the file's metadata
    return notebook


def _glue_role(match: re.Match) -> str:
    """The book's glue role (or ``{glue:md}`` fence) for the inline expression ``match``."""
    if match["format"]:
        option = "" if match["format"] == _DEFAULT_FORMAT else f":format: {match['format']}\n"
        return f"```{{glue:md}} {match['name']}\n{option}```"
    return f"{{glue:{'md' if match['md'] else 'text'}}}`{match['name']}`"


def as_glue_roles(notebook: dict) -> dict:
    """The inverse of :func:`as_inline_expressions`: the book's glue roles, no evaluated results kept."""
    for cell in _markdown_cells(notebook):
        cell["source"] = _EXPRESSION.sub(_glue_role, cell["source"])
        cell.get("metadata", {}).pop("user_expressions", None)
        cell.get("metadata", {}).pop("trusted", None)
    return notebook


def _is_copy(os_path: Path) -> bool:
    """Whether ``os_path`` is (or would be) a reader's copy of a chapter: ``<project>/my-notebooks/*.md``."""
    return os_path.suffix == ".md" and _in_project(os_path, COPIES_DIRNAME)


def _is_chapter(os_path: Path) -> bool:
    """Whether ``os_path`` is a chapter's source or a reader's copy of one (``my-notebooks/*.md``)."""
    return _is_chapter_source(os_path) or _is_copy(os_path)


#: The formats a reader's copy is saved in: its MyST text, which runs as the chapter does, paired
#: with a notebook beside it (``<name>.ipynb``) that keeps the outputs of the run on screen.
COPY_FORMATS = "ipynb,md:myst"
#: The notebook metadata through which a chapter opened in JupyterLab names its source, so that a
#: copy saved from it is written as that source is (:func:`~ntpnb._myst_text.kept_text`).
ORIGIN_KEY = "ntpnb"


@functools.cache
def kernel_metadata(name: str) -> dict[str, Any]:
    """The notebook metadata a kernel ``name`` sets when it starts: its ``kernelspec``, its ``language_info``.

    JupyterLab writes them into a notebook when its kernel starts, which marks a notebook without
    them changed: a chapter served with them opens clean. The language details are IPython's, the
    kernel of every chapter; empty for a kernel not installed here.
    """
    from ipykernel.ipkernel import IPythonKernel
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        spec = KernelSpecManager().get_kernel_spec(name)
    except NoSuchKernel:
        return {}
    found: dict[str, Any] = {
        "kernelspec": {"name": name, "display_name": spec.display_name, "language": spec.language}
    }
    if spec.language == "python":
        found["language_info"] = dict(IPythonKernel.language_info)
    return found


def as_the_kernel_sets(notebook: dict) -> dict:
    """``notebook`` with the metadata its kernel will set (:func:`kernel_metadata`): it opens clean."""
    metadata = notebook.setdefault("metadata", {})
    name = (metadata.get("kernelspec") or {}).get("name") or "python3"
    metadata.update(kernel_metadata(name))
    return notebook


def unfold_as_saved(notebook: dict) -> dict:
    """The inverse of :func:`fold_as_the_book`: the file keeps its tags, not JupyterLab's folding."""
    for cell in notebook.get("cells", []):
        jupyter = cell.get("metadata", {}).get("jupyter", {})
        if _folded(cell) and "source_hidden" in jupyter:
            del jupyter["source_hidden"]
            if not jupyter:
                del cell["metadata"]["jupyter"]
    return notebook


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
        """The model of ``path``, a chapter's source as JupyterLab shows it.

        The source is read-only (JupyterLab then never saves it); opened as a notebook, the code the
        book folds is collapsed and its glue roles are inline expressions.
        """
        model = super().get(path, content=content, type=type, **kwargs)
        os_path = Path(self._get_os_path(path))
        if model.get("type") == "directory" or not _is_chapter(os_path):
            return model
        if self._guarded(path):
            model["writable"] = False
        if model.get("type") == "notebook" and model.get("content"):
            notebook = model["content"]
            glued = _glued_outputs(notebook) or book_glue(os_path)  # a copy's own run, else the book's
            as_the_kernel_sets(as_inline_expressions(fold_as_the_book(notebook), glued))
            if _is_chapter_source(os_path):
                notebook["metadata"][ORIGIN_KEY] = {"source": path.strip("/")}
        return model

    def get_config(self, path: str, use_cache: bool = False) -> Any:
        """Jupytext's settings for ``path``: a copy's pair it with a notebook (:data:`COPY_FORMATS`)."""
        from jupytext.config import JupytextConfiguration

        config = super().get_config(path, use_cache=use_cache)
        if not _is_copy(Path(self._get_os_path(path))):
            return config
        options = {name: getattr(config, name) for name in JupytextConfiguration.class_own_traits()}
        return JupytextConfiguration(**{**options, "formats": COPY_FORMATS})

    def save(self, model: dict, path: str = "") -> dict:
        """Save ``model`` at ``path``; a chapter's source (or a new one) is refused, a copy's folder made.

        A reader's copy is saved as its MyST text, which keeps as written every cell the reader did
        not change (:func:`~ntpnb._myst_text.kept_text`: as the copy was last saved, or as the
        chapter it was copied from is), with the run's outputs in the notebook paired with it.
        """
        if self._guarded(path):
            raise self._refuse(path, "write")
        target = Path(self._get_os_path(path))
        if _in_project(target, COPIES_DIRNAME):
            target.parent.mkdir(exist_ok=True)  # the reader's folder, made on its first save
        notebook = model.get("content") if model.get("type") == "notebook" else None
        origin = (notebook or {}).get("metadata", {}).pop(ORIGIN_KEY, None)
        if notebook is None or not _is_chapter(target):
            return super().save(model, path)
        unfold_as_saved(as_glue_roles(notebook))  # a copy runs as the chapter does
        baseline = self._baseline(target, origin)
        saved = super().save(model, path)
        if baseline is None:
            return saved
        import nbformat

        from ._myst_text import kept_text

        text = kept_text(baseline, nbformat.from_dict(notebook))
        self.super.save({"type": "file", "format": "text", "content": text}, path)
        return self.get(path, content=False)

    def _baseline(self, target: Path, origin: object) -> str | None:
        """The MyST text a save of the copy ``target`` replaces: the copy as it is, else its chapter's source.

        ``origin``: the chapter the notebook was opened from (:data:`ORIGIN_KEY`); None when the
        copy is new and its chapter unknown.
        """
        if target.is_file():
            return target.read_text(encoding="utf-8")
        source = origin.get("source") if isinstance(origin, dict) else None
        if isinstance(source, str) and _is_chapter_source(Path(self._get_os_path(source))):
            return Path(self._get_os_path(source)).read_text(encoding="utf-8")
        return None

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
