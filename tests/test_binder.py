"""Binder's build, as closely as it can be run here: environment.yml's packages, postBuild, a chapter.

repo2docker creates a conda environment from ``environment.yml``, runs ``postBuild`` in the
repository, and starts JupyterLab. Conda cannot reach its channels here, so this test builds a
fresh virtual environment from the same list with pip (every package at its pinned version,
their own dependencies resolved by pip as conda would resolve them, no constraints file), runs
``postBuild`` in it, and runs one chapter at the quick profile with the environment's ``ntpnb``.
What it cannot check is conda-forge's builds of the same versions.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT

pytestmark = pytest.mark.slow

ENVIRONMENT = yaml.safe_load((ROOT / "environment.yml").read_text())


def environment_requirements() -> tuple[str, list[str]]:
    """environment.yml as pip requirements: the Python version, then every other package pinned."""
    python, packages = None, []
    for dep in ENVIRONMENT["dependencies"]:
        for spec in dep["pip"] if isinstance(dep, dict) else [dep]:
            name, _, version = spec.partition("==")
            if name == "python":
                python = version
            else:
                packages.append(f"{name}=={version}")
    assert python is not None, "environment.yml pins no python"
    return python, packages


def run(cmd: list[str], env: dict[str, str], cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def test_environment_requirements_are_read_from_the_file():
    python, packages = environment_requirements()
    assert python.count(".") == 2
    names = [p.split("==")[0] for p in packages]
    assert names[0] == "pip" and "setuptools" in names and "jupyter-book" in names and "numpy" in names


def test_a_binder_build_from_environment_yml_runs_a_chapter(tmp_path):
    python, packages = environment_requirements()
    wanted = tuple(int(x) for x in python.split(".")[:2])
    if sys.version_info[:2] != wanted:
        pytest.skip(f"environment.yml's Python is {python}; this is {sys.version.split()[0]}")
    venv = tmp_path / "binder-env"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    bin_dir = venv / "bin"
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(venv))
    # no bytecode compiled at install (Python compiles what it imports): the same packages resolved
    pip = [str(bin_dir / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    pip += ["--no-compile"]
    run([*pip, packages[0]], env, tmp_path, timeout=300)  # pip itself first, as conda installs it
    run([*pip, *packages[1:]], env, tmp_path, timeout=900)

    run(["bash", str(ROOT / "postBuild")], env, ROOT, timeout=600)
    where = run([str(bin_dir / "python"), "-c", "import ntpnb; print(ntpnb.__file__)"], env, tmp_path, 60)
    assert Path(where.stdout.strip()).parent == ROOT / "ntpnb"  # the repository's package, editable

    out = tmp_path / "outputs"
    cmd = [str(bin_dir / "ntpnb"), "reproduce", "01", "--profile", "quick", "--seeds", "1", "--out", str(out)]
    proc = run(cmd, env, ROOT, timeout=600)
    assert "all 1 notebook completed" in proc.stdout, proc.stdout
    assert (out / "notebooks" / "01_entropy_separability.ipynb").is_file()
