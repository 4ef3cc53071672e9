"""Every notebook at the quick profile and several seeds: it runs, its claims pass, nbval reproduces it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import jupytext
import pytest

from ntpnb.book._compare import SANITIZE_CONFIG
from ntpnb.chapter._parameters import PROJECT_VAR
from ntpnb.records._places import notebook_sources, output_tree
from ntpnb.records._run import load_chapter_run
from ntpnb.runner._jupyter_kernel import blas_variables

from conftest import QUICK_SEEDS, ROOT

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
    # a check decided at one seed must pass at the book's; a statistical one is decided on
    # the samples of every seed pooled (the sweep's verdict, which decides the run's exit code)
    assert all(c["passed"] for c in record["checks"] if c.get("sample") is None)


@pytest.mark.parametrize("name", NAMES)
def test_every_seed_of_the_sweep_makes_the_same_checks(quick_run, name):
    """The sweep's seeds ran to their end and made the book seed's checks, matched by what they measure."""
    layout = output_tree(quick_run)
    book = load_chapter_run(layout.claims / f"{name}.json")
    assert book.complete and book.seed == 0
    trees = layout.seed_trees()
    assert sorted(trees) == list(range(1, QUICK_SEEDS))
    keys = [(c.claim, c.kind, c.what) for c in book.checks]
    for seed, tree in trees.items():
        record = load_chapter_run(tree.claims / f"{name}.json")
        assert record.complete and record.seed == seed
        assert [(c.claim, c.kind, c.what) for c in record.checks] == keys, f"seed {seed}"
        assert {k: v for k, v in record.parameters.items() if k != "seed"} == {
            k: v for k, v in book.parameters.items() if k != "seed"
        }
        assert not list(tree.figures.glob("*.png")), "the sweep's further seeds write no figures"


def test_a_failed_check_does_not_stop_its_chapter(tmp_path, quick_run):
    """A check made to fail: the chapter runs on, writes every figure, records every check, then fails."""
    name = "05_overparameterization"
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "ntpnb.cli", "reproduce", name, "--profile", "quick", "--out", str(out)]
    cmd += ["-p", "gd_max_gap_ratio=1e-300"]  # the A2 sanity bound on GD's remaining gap, made impossible
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "(at the book's seed)" in proc.stderr
    assert (
        r"A2 (sanity) separable, not compatible: $\operatorname{CE}(W_k) - \inf \operatorname{CE}$, "
        "step 2000 vs step 1: measured " in proc.stderr
    )
    assert "required < 1e-300 (relation <, value 1e-300, tolerance 0)" in proc.stderr
    passing = load_chapter_run(quick_run / "claims" / f"{name}.json")
    record = load_chapter_run(out / "claims" / f"{name}.json")
    assert record.complete and len(record.checks) == len(passing.checks)
    failed = [c for c in record.checks if not c.passed]
    assert len(failed) >= 2 and {c.what.split(":")[0] for c in failed} >= {
        "compatible, not separable",
        "separable, not compatible",
    }
    saved = re.findall(r'show_figure\(\s*\w+,\s*"(\w+)"', (ROOT / "notebooks" / f"{name}.md").read_text())
    assert len(saved) >= 4
    assert sorted(p.name for p in (out / "figures").iterdir()) == sorted(
        f"{stem}{suffix}" for stem in saved for suffix in (".pdf", ".png")
    )
    executed = json.loads((out / "notebooks" / f"{name}.ipynb").read_text())
    (error,) = [o for c in executed["cells"] for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert error["ename"] == "ClaimCheckError" and f"{len(failed)} of {len(record.checks)}" in error["evalue"]


def test_the_readme_example_completes(tmp_path):
    """``ntpnb reproduce 01 -p n_g=121 -p seed=3``, the README's example, at the paper profile."""
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "ntpnb.cli", "reproduce", "01", "-p", "n_g=121", "-p", "seed=3"]
    proc = subprocess.run([*cmd, "--out", str(out)], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = load_chapter_run(out / "claims" / "01_entropy_separability.json")
    assert record.seed == 3 and record.complete and not record.failed


def test_chapter_5_completes_at_seed_7(tmp_path):
    """Chapter 5 at ``-p seed=7``, the paper profile with overrides that keep the failing comparison.

    The quick profile completes at seed 7 even on the old code, so this runs the paper profile,
    with ``configs=[[2, 1], [5, 1], [5, 2]]`` (first the (V, S) whose nested-vs-independent
    comparison stopped the chapter: its draws and its comparison point are those of the full run,
    the first point of each sweep; a second one-hot pair and one with S > 1 for the cells after
    it) and smaller sweeps elsewhere (Cover's, the scaling's, GD). On the starting commit this
    stops in the comparison with NumericallyAmbiguousError (V = 2, m = 30, d = 15, normalized
    margin 1.5e-5) in about 10 s; now the NTP-SVM of the reach check falls back to the verified
    reference and the chapter completes (its checks at these small sweeps may fail: not asserted).
    """
    out = tmp_path / "out"
    overrides = [
        "seed=7",
        "configs=[[2, 1], [5, 1], [5, 2]]",
        "n_trials_cover=20",
        "n_trials_scaling=4",
        "gd_steps=2000",
    ]
    cmd = [sys.executable, "-m", "ntpnb.cli", "reproduce", "05", *(f"-p{o}" for o in overrides)]
    proc = subprocess.run([*cmd, "--out", str(out)], cwd=ROOT, capture_output=True, text=True)
    assert not (out / "failed").exists() or not list((out / "failed").iterdir()), proc.stdout + proc.stderr
    record = load_chapter_run(out / "claims" / "05_overparameterization.json")
    assert record.seed == 7 and record.complete
    executed = (out / "notebooks" / "05_overparameterization.ipynb").read_text()
    assert "| 2 | 1 | separable | 0.500 |" in executed  # the comparison that stopped the old run
    assert "Numerically ambiguous independent draws, each replaced by a fresh draw: 0." in executed


def test_every_figure_is_written(quick_run):
    pngs = sorted(p.stem for p in (quick_run / "figures").glob("*.png"))
    pdfs = sorted(p.stem for p in (quick_run / "figures").glob("*.pdf"))
    assert pngs and pngs == pdfs
    for name in NAMES:
        source = (ROOT / "notebooks" / f"{name}.md").read_text()
        assert any(f'"{figure}"' in source for figure in pngs), f"{name} saves no figure"


@pytest.mark.parametrize("name", NAMES)
def test_nbval_reproduces_every_output(tmp_path, quick_run, monkeypatch, name):
    """The executed notebook ``name``, run again by nbval, prints what it printed.

    The run writes its records into the tree its notebook names (``output_dir = ".."``): a copy
    of the shared quick run at the book's seed, which the other tests read meanwhile. One test a
    notebook, so that the test workers share them.
    """
    monkeypatch.setenv(PROJECT_VAR, str(ROOT))  # where the kernels find the sources, as the runner says
    tree = shutil.copytree(quick_run, tmp_path / "outputs", ignore=shutil.ignore_patterns("seeds"))
    notebook = tree / "notebooks" / f"{name}.ipynb"
    cmd = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", "--nbval-current-env",
        "--nbval-sanitize-with", str(SANITIZE_CONFIG), str(notebook),
    ]  # fmt: skip
    env = {**os.environ, **blas_variables()}  # the BLAS threads of the first run: the same rounding
    proc = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, env=env)
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
