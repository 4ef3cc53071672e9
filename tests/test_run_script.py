"""``./run.sh reproduce`` says what failed: the run's notebooks and checks, or the book build.

The script runs on a copy whose set-up is already done (a venv stamped as installed, whose
``ntpnb`` is a stand-in ending with a chosen exit status), so nothing is installed or run.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ntpnb.cli._parser import BOOK_FAILED

from conftest import ROOT

#: The stand-in for ``ntpnb``: it records its arguments, then ends with ``$NTPNB_STATUS``.
_FAKE_NTPNB = """\
#!/bin/sh
echo "$@" > "$(dirname "$0")/../ntpnb-args"
exit "$NTPNB_STATUS"
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of ``run.sh`` whose reader's set-up is done, with the stand-in ``ntpnb`` in its venv."""
    shutil.copy(ROOT / "run.sh", tmp_path / "run.sh")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'ntpnb'\n")
    (tmp_path / "constraints.txt").write_text("")
    venv = tmp_path / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("")
    (venv / "bin" / "python").symlink_to(sys.executable)  # an interpreter with pip: the venv works
    # the set-up's stamp: the hash of the declarations it installed, then the extras
    declared = b"".join((tmp_path / name).read_bytes() for name in ("pyproject.toml", "constraints.txt"))
    (venv / ".ntpnb-installed").write_text(f"{hashlib.sha256(declared).hexdigest()} book,pdf\n")
    (venv / "bin" / "ntpnb").write_text(_FAKE_NTPNB)
    (venv / "bin" / "ntpnb").chmod(0o755)
    return tmp_path


def reproduce(project: Path, status: int) -> subprocess.CompletedProcess:
    """``./run.sh reproduce --profile quick`` where ``ntpnb`` ends with ``status``."""
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHON": sys.executable,
        "HOME": str(project),
        "NTPNB_STATUS": str(status),
    }
    command = ["bash", "run.sh", "reproduce", "--profile", "quick"]
    return subprocess.run(command, cwd=project, capture_output=True, text=True, env=env)


@pytest.mark.parametrize(
    ("status", "said", "not_said"),
    [
        (0, "", "run.sh:"),
        (1, "run.sh: some notebooks or claim checks failed", "book build failed"),
        (
            BOOK_FAILED,
            "run.sh: every notebook ran to its end, but the book build failed",
            "notebooks or claim",
        ),
        (2, "", "run.sh:"),  # ntpnb said why itself
    ],
)
def test_reproduce_says_whether_the_run_or_the_book_build_failed(project, status, said, not_said):
    proc = reproduce(project, status)
    assert proc.returncode == status, proc.stderr
    assert (project / ".venv" / "ntpnb-args").read_text().split() == [
        "reproduce",
        "--book",
        "--profile",
        "quick",
    ]
    assert said in proc.stderr and not_said not in proc.stderr + proc.stdout, proc.stderr
    if status == BOOK_FAILED:
        assert "its messages are above" in proc.stderr
