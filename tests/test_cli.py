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
        cli.main(["list", "01", "--sizes", "1"])
    assert exit_.value.code == 2 and "unrecognized arguments: --sizes 1\n" in capsys.readouterr().err


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


def test_list_shows_the_named_notebooks_with_what_each_parameter_means(monkeypatch, capsys):
    from ntpnb.runner import PROFILES, read_parameters_cell

    monkeypatch.setenv("COLUMNS", "100")
    assert cli.main(["list", "--root", str(ROOT), "03_gd", "01"]) == 0
    out = capsys.readouterr().out
    headers = [line for line in out.splitlines() if not line.startswith(" ")]
    assert headers[:-1] == ["03_gd_implicit_bias", "01_entropy_separability"]
    assert all(len(line) <= 100 for line in out.splitlines())
    flat = " ".join(out.split())  # the meanings, unwrapped
    for name in headers[:-1]:
        cell = read_parameters_cell(ROOT / "notebooks" / f"{name}.md")
        for parameter in PROFILES[name]["paper"]:
            meaning = " ".join(cell[parameter].meaning.split())
            assert f" {parameter} {meaning} paper " in flat
    assert " n synthetic instance (Figs. 3-5): samples paper 5000 | quick 5000 " in flat


@pytest.mark.parametrize(("name", "what"), [("99", "no notebook"), ("0", "several notebooks")])
def test_list_refuses_a_name_that_is_not_one_notebook_in_one_line(capsys, name, what):
    assert cli.main(["list", "--root", str(ROOT), "01", name]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"ntpnb: error: {what} named {name!r}; the notebooks are: 01_entropy")
    assert captured.err.count("\n") == 1


def test_the_listed_values_wrap_between_profiles_never_inside_a_value():
    per_profile = {
        "paper": {"configs": [[2, 1], [5, 1], [10, 1]], "n": 1},
        "quick": {"configs": [[2, 1]], "n": 2},
    }
    meanings = {"configs": "(V, S) pairs swept at every dimension of the grid", "n": "samples"}
    lines = cli.format_parameters(per_profile, meanings, width=40)
    assert lines == [
        "  configs  (V, S) pairs swept at every",
        "           dimension of the grid",
        "           paper [[2, 1], [5, 1], [10, 1]]",
        "           quick [[2, 1]]",
        "  n        samples",
        "           paper 1 | quick 2",
    ]
    assert cli.format_parameters({"paper": {"k": 1}}, {}) == [
        "  k  (no comment in the notebook's parameters cell)",
        "     paper 1",
    ]
