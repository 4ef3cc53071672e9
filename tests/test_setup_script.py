"""``./run.sh setup`` repairs what an interrupted first set-up left behind.

The script runs on a copy with a package of one empty module and no dependencies, so that the
set-up (venv, pip's upgrade, an editable install) takes seconds, not the minutes of the real
one; pip still reaches the package index, as the real set-up does.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.slow

_PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "ntpnb"
version = "0"

[project.optional-dependencies]
book = []
lab = []
test = []

[tool.setuptools]
packages = ["ntpnb"]
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of ``run.sh`` with a package ``ntpnb`` whose only function compiles nothing."""
    shutil.copy(ROOT / "run.sh", tmp_path / "run.sh")
    (tmp_path / "pyproject.toml").write_text(_PYPROJECT)
    (tmp_path / "constraints.txt").write_text("")
    (tmp_path / "ntpnb").mkdir()
    (tmp_path / "ntpnb" / "__init__.py").write_text("def compile_kernels():\n    pass\n")
    return tmp_path


def _setup(project: Path, *level: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "PYTHON": sys.executable, "HOME": str(project)}
    command = ["bash", "run.sh", "setup", *level]
    return subprocess.run(command, cwd=project, capture_output=True, text=True, env=env)


def _stamp(project: Path) -> list[str]:
    return (project / ".venv" / ".ntpnb-installed").read_text().split()


def _works(project: Path) -> bool:
    python = project / ".venv" / "bin" / "python"
    # from the project (``python -c`` imports from its working folder first): its own ntpnb
    proc = subprocess.run([python, "-c", "import pip, ntpnb"], capture_output=True, cwd=project)
    return proc.returncode == 0


def test_a_venv_an_interrupted_set_up_left_is_rebuilt_and_a_good_one_is_kept(project):
    # ``python -m venv`` stopped before ensurepip: an interpreter without pip
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", project / ".venv"], check=True)
    proc = _setup(project)
    assert proc.returncode == 0, proc.stderr
    assert "is incomplete (an interrupted set-up?); rebuilding it" in proc.stdout
    assert re.search(r"run\.sh: installed \d+ packages in \d+ s", proc.stdout)
    assert "installing with pip" not in proc.stdout  # uv, from the index
    assert _works(project)
    again = _setup(project)  # installed and stamped: nothing to do
    assert again.returncode == 0 and again.stdout == ""
    # pip's upgrade uninstalls the old pip before it installs the new one: stopped between
    for pip in (project / ".venv" / "lib").glob("python*/site-packages/pip"):
        shutil.rmtree(pip)
    proc = _setup(project)
    assert proc.returncode == 0, proc.stderr
    assert "rebuilding it" in proc.stdout
    assert _works(project)


def test_a_readers_set_up_installs_the_book_and_the_tests_add_theirs(project):
    proc = _setup(project)  # ./run.sh reproduce's
    assert proc.returncode == 0, proc.stderr
    assert "installing ntpnb[book,pdf] and" in proc.stdout
    assert _stamp(project)[1] == "book,pdf"
    proc = _setup(project, "test")  # ./run.sh test's: the same venv, its extras added
    assert "installing ntpnb[book,lab,pdf,test] and" in proc.stdout and "creating" not in proc.stdout
    assert _stamp(project)[1] == "book,lab,pdf,test"
    assert _setup(project).stdout == ""  # a reader's set-up holds in it
    assert _setup(project, "nope").returncode == 2


def test_without_uv_the_set_up_installs_with_pip_and_says_why(project):
    (project / "constraints.txt").write_text("uv==0.0.1.dev0\n")  # no such release
    proc = _setup(project)
    assert proc.returncode == 0, proc.stderr
    (line,) = [line for line in proc.stdout.splitlines() if "installing with pip" in line]
    assert line.startswith("run.sh: installing with pip (uv could not be installed: ERROR: ")
    assert " uv" in line.partition("ERROR: ")[2]  # what pip said of uv
    assert _works(project)
