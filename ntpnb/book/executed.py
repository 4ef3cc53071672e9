"""An executed notebook, read as JSON of a notebook's shape, or refused in one line naming the file.

Everything of the book that reads an executed notebook (the report's sections and titles, the
Sphinx extension's check, ``ntpnb compare``, the check of a tree before a build) reads it with
:func:`read_notebook`, never meeting a traceback from deep inside a page generator. The shape
asked for (:func:`notebook_shape`) is what those readers use, not a full nbformat validation (the
runner wrote these files with nbformat; this catches what damage and hand-made files bring).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import PathError

__all__ = ["NotebookShapeError", "is_text", "notebook_shape", "read_notebook"]


class NotebookShapeError(ValueError):
    """JSON data that is not of an executed notebook's shape (the message says where)."""


def _kind(value: object) -> str:
    """The JSON kind of ``value`` in words: ``a list``, ``a number``..."""
    names = {dict: "an object", list: "a list", str: "a text", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def is_text(value: object) -> bool:
    """Whether ``value`` is notebook text: a string, or a list of strings."""
    return isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))


def _check_output(output: object, where: str) -> None:
    if not isinstance(output, dict):
        raise NotebookShapeError(f"{where} is {_kind(output)}, not an object")
    if "data" in output and not isinstance(output["data"], dict):
        raise NotebookShapeError(f"{where} has 'data' that is {_kind(output['data'])}, not an object")
    if not is_text(text := output.get("text", "")):
        raise NotebookShapeError(f"{where} has 'text' that is {_kind(text)}, not text")


def _check_cell(cell: object, index: int) -> None:
    where = f"cell {index}"
    if not isinstance(cell, dict):
        raise NotebookShapeError(f"{where} is {_kind(cell)}, not an object")
    if not isinstance(cell.get("cell_type"), str):
        raise NotebookShapeError(f"{where} has no 'cell_type'")
    if not is_text(source := cell.get("source", "")):
        raise NotebookShapeError(f"{where} has a 'source' that is {_kind(source)}, not text")
    outputs = cell.get("outputs", [])
    if not isinstance(outputs, list):
        raise NotebookShapeError(f"{where} has 'outputs' that are {_kind(outputs)}, not a list")
    for k, output in enumerate(outputs):
        _check_output(output, f"output {k} of {where}")


def notebook_shape(data: object) -> dict[str, Any]:
    """``data`` itself when it has an executed notebook's shape.

    That is an object with a list of ``cells``, each an object with a ``cell_type`` text; a code
    cell's ``outputs`` a list of objects; ``metadata``, if present, an object.

    Raises
    ------
    NotebookShapeError
        Saying what is of the wrong shape, e.g. ``"it is a list, not an object"``.
    """
    if not isinstance(data, dict):
        raise NotebookShapeError(f"it is {_kind(data)}, not an object")
    cells = data.get("cells")
    if not isinstance(cells, list):
        raise NotebookShapeError("it has no list of 'cells'")
    if not isinstance(data.get("metadata", {}), dict):
        raise NotebookShapeError("its 'metadata' is not an object")
    for index, cell in enumerate(cells):
        _check_cell(cell, index)
    return data


def read_notebook(path: Path) -> dict[str, Any]:
    """The executed notebook at ``path`` as JSON data of a notebook's shape.

    Raises
    ------
    PathError
        One line naming ``path`` when it cannot be read, is not JSON (cut short, say) or is JSON
        of another shape.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PathError(f"cannot read the executed notebook {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise PathError(f"the executed notebook {path} is not UTF-8 text ({exc.reason})") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        why = "it is empty" if not text.strip() else f"its JSON is cut short or broken ({exc})"
        raise PathError(f"the executed notebook {path} is not a notebook: {why}") from None
    try:
        return notebook_shape(data)
    except NotebookShapeError as exc:
        raise PathError(f"the executed notebook {path} is not a notebook: {exc}") from None
