"""The notebook libraries load without jsonschema's IRI grammar, and still validate notebooks."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT


def python(code: str) -> dict:
    """Run ``code`` in a fresh interpreter (nothing imported yet); its last printed line, as JSON."""
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_reading_a_chapter_does_not_build_the_iri_grammar_and_notebooks_still_validate():
    plain = python("import json, sys, jsonschema; print(json.dumps('rfc3987_syntax' in sys.modules))")
    if not plain:
        pytest.skip("this environment's jsonschema loads no IRI grammar (constraints.txt holds it at 4.23.0)")
    seen = python(
        "import json, sys\n"
        "from ntpnb.chapter._parameters import read_parameters_cell\n"
        "from ntpnb.records._places import notebook_sources\n"
        "from pathlib import Path\n"
        "read_parameters_cell(notebook_sources(Path('.'))[0])\n"
        "import nbformat\n"
        "nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('x = 1')])\n"
        "nbformat.validate(nb)\n"
        "bad = nbformat.v4.new_notebook(); bad.cells.append({'cell_type': 'code'})\n"
        "try:\n"
        "    nbformat.validate(bad); invalid = False\n"
        "except nbformat.ValidationError:\n"
        "    invalid = True\n"
        "loaded = 'rfc3987_syntax' in sys.modules\n"
        "try:\n"
        "    import rfc3987_syntax; importable = True\n"
        "except ImportError:\n"
        "    importable = False\n"
        "print(json.dumps({'loaded': loaded, 'invalid': invalid, 'importable': importable}))\n"
    )
    assert seen["loaded"] is False  # jsonschema was imported without it
    assert seen["invalid"] is True  # a cell without its fields is still refused
    import importlib.util

    if importlib.util.find_spec("rfc3987_syntax") is not None:
        assert seen["importable"] is True  # left importable for whoever asks for it


def test_an_already_loaded_jsonschema_is_left_as_it_is():
    seen = python(
        "import json, sys\n"
        "import jsonschema\n"
        "before = sorted(jsonschema.FormatChecker.checkers)\n"
        "from ntpnb._jupyter_imports import import_jsonschema_without_iri_grammar\n"
        "import_jsonschema_without_iri_grammar()\n"
        "print(json.dumps({'same': before == sorted(jsonschema.FormatChecker.checkers)}))\n"
    )
    assert seen["same"] is True
