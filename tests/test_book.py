"""The book builds from the executed notebooks with zero warnings, and refuses a broken one."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def build(root):
    cmd = [sys.executable, "-m", "ntpnb.pipeline.cli", "book", "--root", str(root)]
    return subprocess.run(cmd, cwd=root, capture_output=True, text=True)


def test_book_builds_without_warnings(book_copy):
    proc = build(book_copy)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "WARNING" not in proc.stdout + proc.stderr
    html = book_copy / "_build" / "html"
    assert (html / "index.html").exists()
    chapter = (html / "outputs" / "notebooks" / "01_entropy_separability.html").read_text()
    assert "[PASS] A2" in chapter
    assert "[FAIL]" not in chapter
    assert "Proposition 1" in chapter
    assert "<img" in chapter  # the figures are rendered
    references = (html / "book" / "references.html").read_text()
    for author in ("Thrampoulidis", "Soudry", "Telgarsky", "Rosset"):
        assert author in references


def test_a_notebook_with_an_error_fails_the_build(book_copy):
    path = book_copy / "outputs" / "notebooks" / "01_entropy_separability.ipynb"
    nb = json.loads(path.read_text())
    cell = next(c for c in nb["cells"] if c["cell_type"] == "code")
    cell["outputs"].append(
        {"output_type": "error", "ename": "ClaimCheckError", "evalue": "A2 broke", "traceback": []}
    )
    path.write_text(json.dumps(nb))
    for attempt in ("first build", "second build, nothing changed"):
        proc = build(book_copy)
        assert proc.returncode != 0, attempt
        assert "01_entropy_separability.ipynb: cell" in proc.stdout + proc.stderr, attempt
        assert "ClaimCheckError: A2 broke" in proc.stdout + proc.stderr, attempt
