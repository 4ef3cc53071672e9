"""Sphinx extension: a notebook with an error or a warning in its outputs fails the book build.

The book renders executed notebooks without executing them, so Sphinx would happily render a
notebook whose cell raised. This extension warns (and ``-W`` turns the warning into a failed
build) for every executed notebook that holds an ``error`` output, a ``stderr`` stream, or
papermill's exception marker.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import logging

__all__ = ["notebook_problems", "setup"]

logger = logging.getLogger(__name__)


def notebook_problems(path: Path) -> list[str]:
    """Problems of an executed notebook: errors, stderr output, papermill's exception flag."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    problems = []
    if nb.get("metadata", {}).get("papermill", {}).get("exception"):
        problems.append("papermill recorded an exception during execution")
    for index, cell in enumerate(nb.get("cells", [])):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                problems.append(f"cell {index} raised {out.get('ename')}: {out.get('evalue')}")
            elif out.get("output_type") == "stream" and out.get("name") == "stderr":
                text = "".join(out.get("text", ""))[:200].strip()
                problems.append(f"cell {index} wrote to stderr: {text}")
    return problems


def _check(app: Sphinx, env: BuildEnvironment) -> None:
    # every document, every build: an unchanged notebook that Sphinx does not re-read is
    # checked again, so a second build cannot pass where the first one failed
    for docname in sorted(env.found_docs):
        path = Path(env.doc2path(docname))
        if path.suffix != ".ipynb":
            continue
        for problem in notebook_problems(path):
            logger.warning(f"executed notebook {path.name}: {problem}", location=docname)


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the check with Sphinx."""
    app.connect("env-updated", _check)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
