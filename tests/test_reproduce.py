"""Notebook sources, profiles and the reproduce command (fast tests; execution is in test_notebooks)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import jupytext
import pytest

from ntpnb.errors import NTPError
from ntpnb.pipeline import profiles
from ntpnb.pipeline.reproduce import notebook_sources, reproduce, select_notebooks

from conftest import ROOT

SOURCES = notebook_sources(ROOT)


def parameters_cell(path):
    nb = jupytext.read(path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    tagged = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, f"{path.name}: needs exactly one cell tagged 'parameters'"
    assert tagged[0] is code[0], f"{path.name}: the parameters cell must be the first code cell"
    values = {}
    for node in ast.parse(tagged[0].source).body:
        assert isinstance(node, ast.Assign), f"{path.name}: parameters must be plain assignments"
        values[node.targets[0].id] = ast.literal_eval(node.value)
    return values


def test_there_are_notebooks():
    assert SOURCES


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_parameters_cell_holds_the_paper_profile(path):
    values = parameters_cell(path)
    assert values.pop("profile") == "paper"
    assert values.pop("output_dir") is None
    assert values == profiles.PROFILES[path.stem]["paper"]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_quick_profile_sets_the_same_parameters(path):
    per = profiles.PROFILES[path.stem]
    assert set(per) == set(profiles.PROFILE_NAMES)
    assert set(per["quick"]) == set(per["paper"])


def test_every_profile_belongs_to_a_notebook_and_every_notebook_is_in_the_book():
    assert set(profiles.PROFILES) == {p.stem for p in SOURCES}
    toc = (ROOT / "_toc.yml").read_text()
    for path in SOURCES:
        assert f"outputs/notebooks/{path.stem}" in toc


def test_profile_parameters_rejects_unknown_names():
    with pytest.raises(NTPError, match="unknown profile"):
        profiles.profile_parameters(SOURCES[0].stem, "fast")
    with pytest.raises(NTPError, match="has no profile"):
        profiles.profile_parameters("99_nope", "paper")


def test_select_notebooks_by_name_and_prefix():
    assert select_notebooks(SOURCES, []) == SOURCES
    assert select_notebooks(SOURCES, [SOURCES[0].stem]) == [SOURCES[0]]
    assert select_notebooks(SOURCES, [SOURCES[0].stem[:2]]) == [SOURCES[0]]
    with pytest.raises(NTPError, match="no notebook named 'zz'"):
        select_notebooks(SOURCES, ["zz"])


def test_cli_names_an_unknown_notebook():
    proc = subprocess.run(
        [sys.executable, "-m", "ntpnb.pipeline.cli", "reproduce", "zz"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "no notebook named 'zz'" in proc.stderr


NOTEBOOK = """\
---
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

```{{code-cell}} ipython3
:tags: [parameters]

profile = "paper"
output_dir = None
value = 1
```

```{{code-cell}} ipython3
{body}
```
"""


@pytest.mark.slow
def test_a_failing_notebook_does_not_stop_the_others(tmp_path, monkeypatch):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: x\n")
    bodies = {"a_fails": "raise ValueError('broken on purpose')", "b_works": "print(value * 2)"}
    for name, body in bodies.items():
        (tmp_path / "notebooks" / f"{name}.md").write_text(NOTEBOOK.format(body=body))
    fake = {name: {"paper": {"value": 1}, "quick": {"value": 21}} for name in bodies}
    monkeypatch.setattr(profiles, "PROFILES", fake)
    lines = []
    results = reproduce(tmp_path, profile="quick", log=lines.append)
    assert [r.ok for r in results] == [False, True]
    assert "ValueError: broken on purpose" in results[0].error
    assert lines[0].startswith("[1/2] a_fails") and "FAILED" in lines[0]
    assert lines[1].startswith("[2/2] b_works") and " ok " in lines[1]
    # both executed notebooks are kept; the failed one holds the error for debugging
    failed = json.loads(results[0].executed.read_text())
    assert any(o.get("output_type") == "error" for c in failed["cells"] for o in c.get("outputs", []))
    worked = json.loads(results[1].executed.read_text())
    assert "42" in json.dumps(worked)  # the quick profile's value was injected
