"""The ``ntpnb`` command on top of the runner and the book: compare and benchmarks pass through."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ntpnb import cli

from conftest import ROOT


def test_ntpnb_compare_is_the_comparison_of_two_runs(tmp_path, capsys):
    (tmp_path / "a" / "notebooks").mkdir(parents=True)
    (tmp_path / "a" / "notebooks" / "01_x.ipynb").write_text('{"cells": []}')
    assert cli.main(["compare", str(tmp_path / "a"), str(tmp_path / "a")]) == 0
    assert "the same printed outputs in all 1 notebooks" in capsys.readouterr().out
    assert cli.main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 2
    assert "no executed notebooks" in capsys.readouterr().err


def test_python_m_compare_still_works(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "ntpnb.book.compare", str(tmp_path), str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "no executed notebooks" in proc.stderr


@pytest.mark.parametrize(
    ("args", "passed"),
    [
        (["--sizes", "10,5,20,3", "--skip-lp"], ["--sizes", "10,5,20,3", "--skip-lp"]),
        (["--", "--help"], ["--help"]),
        ([], []),
    ],
)
def test_ntpnb_benchmarks_runs_python_m_benchmarks_in_the_root(monkeypatch, args, passed):
    calls = []
    monkeypatch.setattr(cli.subprocess, "call", lambda cmd, cwd: calls.append((cmd, cwd)) or 0)
    assert cli.main(["benchmarks", "--root", str(ROOT), *args]) == 0
    assert calls == [([sys.executable, "-m", "benchmarks", *passed], ROOT)]


def test_other_commands_refuse_unknown_arguments(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["list", "--sizes", "1"])
    assert exit_.value.code == 2 and "unrecognized arguments: --sizes 1" in capsys.readouterr().err


def test_reproduce_into_an_existing_file_is_a_named_error(tmp_path, capsys):
    from ntpnb.cli import main

    target = tmp_path / "a-file"
    target.write_text("")
    assert main(["reproduce", "01", "--profile", "quick", "--out", str(target)]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_a_reader_that_leaves_early_gets_no_traceback():
    """``ntpnb list | head -0``: the pipe closes before the first line; exit 141, nothing on stderr."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "ntpnb.cli", "list"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141 and err == ""


def test_version_is_the_installed_distributions(capsys):
    from importlib import metadata

    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"ntpnb {metadata.version('ntpnb')}\n"


def test_version_without_an_installed_distribution_says_so(monkeypatch, capsys):
    def not_installed(name):
        raise cli.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(cli.metadata, "version", not_installed)
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == "ntpnb unknown (not installed)\n"
