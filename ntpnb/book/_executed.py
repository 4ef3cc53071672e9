"""An executed notebook read (or refused in one line naming the file), and what keeps it out of the book.

Everything of the book that reads an executed notebook (the report's sections and titles, the
Sphinx extension's check, ``ntpnb compare``, the check of a tree before a build) reads it with
:func:`read_notebook`, never meeting a traceback from deep inside a page generator. The shape
asked for is what those readers use, not a full nbformat validation (the runner wrote these files
with nbformat; this catches what damage and hand-made files bring). :func:`notebook_problems`
says what keeps a notebook that reads out of the book (an error, stderr output, a bad figure cell).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..chapter._plotting import figure_cell_problems
from ..errors import PathError


def _kind(value: object) -> str:
    """The JSON kind of ``value`` in words: ``a list``, ``a number``..."""
    names = {dict: "an object", list: "a list", str: "a text", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def is_text(value: object) -> bool:
    """Whether ``value`` is notebook text: a string, or a list of strings."""
    return isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))


def _shape_problem(data: object) -> str | None:
    """What in ``data`` is not of an executed notebook's shape (``"it is a list, not an object"``) or None."""
    if not isinstance(data, dict):
        return f"it is {_kind(data)}, not an object"
    if not isinstance(data.get("cells"), list):
        return "it has no list of 'cells'"
    if not isinstance(data.get("metadata", {}), dict):
        return "its 'metadata' is not an object"
    for index, cell in enumerate(data["cells"]):
        where = f"cell {index}"
        if not isinstance(cell, dict):
            return f"{where} is {_kind(cell)}, not an object"
        if not isinstance(cell.get("cell_type"), str):
            return f"{where} has no 'cell_type'"
        if not is_text(source := cell.get("source", "")):
            return f"{where} has a 'source' that is {_kind(source)}, not text"
        if not isinstance(outputs := cell.get("outputs", []), list):
            return f"{where} has 'outputs' that are {_kind(outputs)}, not a list"
        for k, output in enumerate(outputs):
            at = f"output {k} of {where}"
            if not isinstance(output, dict):
                return f"{at} is {_kind(output)}, not an object"
            if "data" in output and not isinstance(output["data"], dict):
                return f"{at} has 'data' that is {_kind(output['data'])}, not an object"
            if not is_text(text := output.get("text", "")):
                return f"{at} has 'text' that is {_kind(text)}, not text"
    return None


def read_notebook(path: Path) -> dict[str, Any]:
    """The executed notebook at ``path``; a PathError naming it if it does not read as a notebook."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise PathError(f"cannot read the executed notebook {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise PathError(f"the executed notebook {path} is not UTF-8 text ({exc.reason})") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        why = "it is empty" if not text.strip() else f"its JSON is cut short or broken ({exc})"
        raise PathError(f"the executed notebook {path} is not a notebook: {why}") from None
    if problem := _shape_problem(data):
        raise PathError(f"the executed notebook {path} is not a notebook: {problem}")
    return data


#: The source of a chapter's last cell, which fails it with the list of its failed claim checks.
CONCLUDING_CELL = "claims.conclude()"


def notebook_problems(path: Path) -> list[str]:
    """Problems of an executed notebook: errors, stderr output, papermill's exception flag.

    A figure without a caption, name or alt text (:func:`figure_cell_problems`) is one too.
    The chapter's concluding error (:data:`CONCLUDING_CELL` raising ``ClaimCheckError``) is
    none: every cell ran, and the report gives the failed checks their verdict.
    """
    try:
        nb = read_notebook(path)
    except PathError as exc:
        return [str(exc)]
    problems = []
    concluded = False
    for index, cell in enumerate(nb["cells"]):
        source = "".join(cell.get("source", ""))
        if cell.get("cell_type") == "code":
            for problem in figure_cell_problems(source, cell.get("metadata", {})):
                problems.append(f"cell {index} shows a figure: {problem}")
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                if source.strip() == CONCLUDING_CELL and out.get("ename") == "ClaimCheckError":
                    concluded = True
                else:
                    problems.append(f"cell {index} raised {out.get('ename')}: {out.get('evalue')}")
            elif out.get("output_type") == "stream" and out.get("name") == "stderr":
                text = "".join(out.get("text", ""))[:200].strip()
                problems.append(f"cell {index} wrote to stderr: {text}")
    if nb.get("metadata", {}).get("papermill", {}).get("exception") and (problems or not concluded):
        problems.insert(0, "papermill recorded an exception during execution")
    return problems
