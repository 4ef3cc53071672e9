"""Every notebook at the quick profile: it runs, its claims pass, nbval reproduces its output."""

from __future__ import annotations

import json
import subprocess
import sys

import jupytext
import pytest

from ntpnb.book.compare import SANITIZE_CONFIG
from ntpnb.chapter.paths import notebook_sources
from ntpnb.runner.kernels import kernel_environment

from conftest import ROOT

pytestmark = pytest.mark.slow
NAMES = [p.stem for p in notebook_sources(ROOT)]


@pytest.mark.parametrize("name", NAMES)
def test_notebook_ran_and_every_claim_passed(quick_run, name):
    executed = json.loads((quick_run / "notebooks" / f"{name}.ipynb").read_text())
    outputs = [o for c in executed["cells"] for o in c.get("outputs", [])]
    assert not [o for o in outputs if o["output_type"] == "error"]
    assert not [o for o in outputs if o.get("name") == "stderr"], "a notebook must not warn"
    record = json.loads((quick_run / "claims" / f"{name}.json").read_text())
    assert record["profile"] == "quick"
    assert record["checks"], f"{name} checks no claim"
    assert all(c["passed"] for c in record["checks"])


def test_every_figure_is_written(quick_run):
    pngs = sorted(p.stem for p in (quick_run / "figures").glob("*.png"))
    pdfs = sorted(p.stem for p in (quick_run / "figures").glob("*.pdf"))
    assert pngs and pngs == pdfs
    for name in NAMES:
        source = (ROOT / "notebooks" / f"{name}.md").read_text()
        assert any(f'"{figure}"' in source for figure in pngs), f"{name} saves no figure"


def test_nbval_reproduces_every_output(quick_run):
    notebooks = sorted(str(p) for p in (quick_run / "notebooks").glob("*.ipynb"))
    cmd = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", "--nbval-current-env",
        "--nbval-sanitize-with", str(SANITIZE_CONFIG), *notebooks,
    ]  # fmt: skip
    with kernel_environment():  # the BLAS threads of the first run: the same rounding
        proc = subprocess.run(cmd, cwd=quick_run, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


@pytest.mark.parametrize("name", NAMES)
def test_notebook_code_is_linted_and_formatted(tmp_path, name):
    """Ruff on the notebook's code cells, at 88 columns (the width of the book's code column)."""
    target = tmp_path / f"{name}.ipynb"
    jupytext.write(jupytext.read(ROOT / "notebooks" / f"{name}.md"), target)
    ruff = [sys.executable, "-m", "ruff"]
    opts = ["--line-length", "88", "--config", str(ROOT / "pyproject.toml")]
    for args in (["check", *opts, "--extend-ignore", "N816"], ["format", "--check", *opts]):
        proc = subprocess.run([*ruff, *args, str(target)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
