"""The ``ntpnb`` command on top of the runner and the book: compare and benchmarks pass through."""

from __future__ import annotations

import argparse
import ast
import json
import re
import shutil
import subprocess
import sys

import pytest

from ntpnb import cli
from ntpnb.cli import _commands, _list, _parser
from ntpnb.runner import select_notebooks

from conftest import ROOT


def test_ntpnb_compare_is_the_comparison_of_two_runs(tmp_path, capsys):
    (tmp_path / "a" / "notebooks").mkdir(parents=True)
    (tmp_path / "a" / "notebooks" / "01_x.ipynb").write_text('{"cells": []}')
    assert cli.main(["compare", str(tmp_path / "a"), str(tmp_path / "a")]) == 0
    assert "the same printed outputs and claim checks in the 1 notebook both" in capsys.readouterr().out
    assert cli.main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 2
    assert f"{tmp_path / 'b'} does not exist; give the output folder of a run" in capsys.readouterr().err


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
    monkeypatch.setattr(_commands.subprocess, "call", lambda cmd, cwd: calls.append((cmd, cwd)) or 0)
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


@pytest.mark.parametrize(
    "command",
    [["list"], ["reproduce", "01"], ["explore", "03", "-p", "toy_lr=0.1,1"], ["book"], ["benchmarks"]],
)
def test_outside_any_project_the_refusal_names_the_option_that_points_at_it(
    tmp_path, monkeypatch, capsys, command
):
    monkeypatch.chdir(tmp_path)  # no project at or above it
    assert cli.main(command) == 2
    err = capsys.readouterr().err
    assert f"no ntpnb project (a folder with _toc.yml and notebooks) at or above {tmp_path.resolve()}" in err
    assert "point at it with --root PATH" in err, err
    # the option it names is the command's: with it, the same line finds the project
    assert _parser.parse_command([*command, "--root", str(ROOT)]).root == ROOT.resolve()


def test_version_is_the_installed_distributions(capsys):
    from importlib import metadata

    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"ntpnb {metadata.version('ntpnb')}\n"


def test_the_command_runs_as_python_m_ntpnb_and_as_python_m_ntpnb_cli():
    """``python -m ntpnb`` and ``python -m ntpnb.cli`` are the console script's ``main``."""
    for module in ("ntpnb", "ntpnb.cli"):
        proc = subprocess.run(
            [sys.executable, "-m", module, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 0 and proc.stdout.startswith("usage: ntpnb "), (module, proc.stderr)


def test_the_console_script_is_the_cli_packages_main():
    from importlib import metadata

    (script,) = [e for e in metadata.entry_points(group="console_scripts") if e.name == "ntpnb"]
    assert script.value == "ntpnb.cli:main" and script.load() is cli.main


def test_version_without_an_installed_distribution_says_so(monkeypatch, capsys):
    def not_installed(name):
        raise _parser.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(_parser.metadata, "version", not_installed)
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == "ntpnb unknown (not installed)\n"


def test_list_shows_the_named_notebooks_with_what_each_parameter_means(monkeypatch, capsys):
    from ntpnb.chapter._parameters import profile_parameters, read_parameters_cell

    monkeypatch.setenv("COLUMNS", "100")
    assert cli.main(["list", "--root", str(ROOT), "04_gd", "01"]) == 0
    out = capsys.readouterr().out
    headers = [line for line in out.splitlines() if re.fullmatch(r"\d\d_\w+", line)]
    assert headers == ["04_gd_synthetic_instance", "01_entropy_separability"]
    assert all(len(line) <= 100 for line in out.splitlines())
    flat = " ".join(out.split())  # the meanings, unwrapped
    for name in headers:
        cell = read_parameters_cell(ROOT / "notebooks" / f"{name}.md")
        for parameter in profile_parameters(ROOT / "notebooks" / f"{name}.md", "paper"):
            meaning = " ".join(cell[parameter].meaning.split())
            domain = cell[parameter].domain.describe()
            assert f" {parameter} {meaning} ({domain}) paper " in flat
    assert " n synthetic instance (Figs. 3-5): samples (a whole number >= 1) paper 5000 | quick 5000 " in flat
    assert " experiment settings: seed " in flat and " pass/fail thresholds: max_gap_ratio " in flat


@pytest.mark.parametrize(
    ("name", "what"),
    [
        ("99", "no notebook named '99'; the notebooks are: 01_entropy"),
        # the notebooks it matches, named, and how to name one
        ("0", "several notebooks named '0': 01_entropy_separability, 02_regularization_path, "),
        ("0", ", 08_beyond; name one of them, e.g. 01"),
    ],
)
def test_list_refuses_a_name_that_is_not_one_notebook_in_one_line(capsys, name, what):
    assert cli.main(["list", "--root", str(ROOT), "01", name]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("ntpnb: error: ") and what in captured.err
    assert captured.err.count("\n") == 1


@pytest.mark.parametrize(("name", "stem"), [("3", "03_gd_implicit_bias"), ("03", "03_gd_implicit_bias")])
def test_a_chapter_is_named_by_its_number_too(name, stem):
    assert [s.stem for s in select_notebooks(ROOT, [name])] == [stem]


def test_the_listed_values_wrap_between_profiles_never_inside_a_value():
    per_profile = {
        "paper": {"configs": [[2, 1], [5, 1], [10, 1]], "n": 1},
        "quick": {"configs": [[2, 1]], "n": 2},
    }
    meanings = {"configs": "(V, S) pairs swept at every dimension of the grid", "n": "samples"}
    lines = _list._format_parameters(per_profile, meanings, width=40)
    assert lines == [
        "  configs  (V, S) pairs swept at every",
        "           dimension of the grid",
        "           paper [[2, 1], [5, 1], [10, 1]]",
        "           quick [[2, 1]]",
        "  n        samples",
        "           paper 1 | quick 2",
    ]
    assert _list._format_parameters({"paper": {"k": 1}}, {}) == [
        "  k  (no comment in the notebook's parameters cell)",
        "     paper 1",
    ]


COMMANDS = ["reproduce", "explore", "book", "list", "compare", "benchmarks"]


def undescribed_options(help_text: str) -> list[str]:
    """The entries of an argparse help's argument sections that have no description.

    An entry is a line indented by two or four spaces in a section (``options:``, ``positional
    arguments:``); its description follows it on the same line after two spaces or more, or on
    the next line, indented further.
    """
    lines = help_text.splitlines()
    missing, in_section = [], False
    for i, line in enumerate(lines):
        if not line.strip():
            in_section = False
        elif not line.startswith(" "):
            in_section = line.endswith(":")
        elif in_section and re.match(r" {2}(  )?\S", line):
            indent = len(line) - len(line.lstrip())
            after = lines[i + 1] if i + 1 < len(lines) else ""
            if not re.search(r"\S {2,}\S", line) and len(after) - len(after.lstrip()) <= indent:
                missing.append(line.strip())
    return missing


def test_the_check_of_help_texts_finds_an_option_without_one():
    text = "options:\n  -h, --help   show this\n  --root ROOT\n  --budget BUDGET\n        seconds\n  --bare\n"
    assert undescribed_options(text) == ["--root ROOT", "--bare"]


def test_every_command_is_checked_for_its_help():
    (sub,) = [a for a in _parser._parser()._actions if isinstance(a, argparse._SubParsersAction)]
    assert list(sub.choices) == COMMANDS


@pytest.mark.parametrize(
    "command", [[], *([name] for name in COMMANDS)], ids=lambda c: " ".join(c) or "ntpnb"
)
def test_every_option_of_every_command_says_what_it_does(monkeypatch, capsys, command):
    monkeypatch.chdir(ROOT)
    with pytest.raises(SystemExit) as exit_:
        cli.main([*command, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: {' '.join(['ntpnb', *command])} ")
    assert re.findall(r"^  (?:  )?-", out, re.M), "no option found: is the help laid out as argparse does?"
    assert undescribed_options(out) == []
    if command:  # a description between its usage and its first section
        assert not out.split("\n\n")[1].splitlines()[0].endswith(":")


def test_benchmarks_help_lists_the_options_it_passes_on(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["benchmarks", "--root", str(ROOT), "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    own, passed = out.split("goes to python -m benchmarks; its help:")
    assert "usage: ntpnb benchmarks [-h] [--root ROOT] [ARGS ...]" in own and "--root ROOT" in own
    assert passed.lstrip().startswith("usage: python -m benchmarks")
    for option in ("--sizes", "--skip-lp", "--budget", "--notebooks", "--out"):
        assert f"  {option}" in passed


def test_benchmarks_help_says_why_it_cannot_show_the_options_it_passes_on(tmp_path, capsys):
    (tmp_path / "notebooks").mkdir()  # a project without benchmarks/
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: x\n")
    with pytest.raises(SystemExit) as exit_:
        cli.main(["benchmarks", "--root", str(tmp_path), "--help"])
    assert exit_.value.code == 0
    last = capsys.readouterr().out.splitlines()[-1]
    failed = f"(its options cannot be shown: python -m benchmarks --help failed in {tmp_path}: "
    assert last.startswith(failed)
    assert last.endswith("No module named benchmarks)")


@pytest.mark.parametrize("command", [[], ["reproduce"], ["book"], ["list"], ["compare"], ["benchmarks"]])
def test_help_texts_show_no_restructuredtext_markup(capsys, command):
    with pytest.raises(SystemExit):
        cli.main([*command, "--help"])
    out = capsys.readouterr().out
    assert "ntpnb" in out or "benchmarks" in out
    assert "``" not in out and ":func:`" not in out and ":mod:`" not in out, out


def test_plain_text_keeps_the_words_of_the_markup():
    assert _parser.plain_text("The ``ntpnb`` command, :func:`~ntpnb.x.y` and *this* (``python -m\nb``)") == (
        "The ntpnb command, ntpnb.x.y and this (python -m\nb)"
    )
    assert _parser.plain_text("a * b * c and 2*3") == "a * b * c and 2*3"


def test_one_notebook_run_is_not_runs():
    from ntpnb.errors import RunInterruptedError

    assert "after 0 of 1 notebook run;" in str(RunInterruptedError(0, 1))
    assert "after 1 of 4 notebook runs;" in str(RunInterruptedError(1, 4))


def test_an_explore_of_one_seed_says_one_seed_each():
    from ntpnb.runner import ChapterRun

    def results(n: int) -> list[ChapterRun]:
        return [ChapterRun("03_x", complete=True, seconds=1.0, point=f"lr={i}") for i in range(n)]

    line = _commands._explored_line(results(2), 2, "quick", "outputs/explore/x")
    assert line.startswith("all 2 runs (2 points, 1 seed each) completed (2.0 s of notebook time")
    assert "(2 points, 2 seeds each)" in _commands._explored_line(results(4), 2, "quick", "outputs/explore/x")


#: The modules of the commands themselves: what a command loads when it runs, never for its help.
COMMAND_MODULES = ("ntpnb.runner", "ntpnb.book", "ntpnb.explore", "jupyter_client", "papermill", "sphinx")


def loaded_by(call: str, modules: tuple[str, ...]) -> tuple[subprocess.CompletedProcess, list[str]]:
    """Run the Python statement ``call`` in a fresh interpreter; it, and which of ``modules`` it loaded."""
    code = (
        f"import sys\nfrom ntpnb import cli\n{call}\n"
        f"print(sorted(m for m in sys.modules if m.startswith({modules!r})))"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return proc, ast.literal_eval(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("command", [[], ["reproduce"], ["explore"], ["book"], ["list"], ["compare"]])
def test_help_loads_none_of_the_commands_modules(command):
    """`ntpnb ... --help` prints at once: the parser is built without importing what the commands run."""
    argv = [*command, "--help"]
    call = f"try:\n    cli.main({argv!r})\nexcept SystemExit as exc:\n    assert exc.code == 0"
    proc, loaded = loaded_by(call, COMMAND_MODULES)
    assert "usage: ntpnb" in proc.stdout
    assert loaded == [], loaded


def test_a_refused_explore_reads_no_chapter_and_loads_no_experiment():
    """`explore --out outputs` is refused from the command line alone: no experiment, no chapter read."""
    argv = ["explore", "03", "--profile", "quick", "-p", "toy_lr=0.1,1", "--out", "outputs"]
    call = f"assert cli.main({argv!r}) == 2"
    experiments = ("ntpnb.linear", "ntpnb.attention", "ntpnb.explore._beyond_maps")
    proc, loaded = loaded_by(call, (*experiments, "jupytext"))
    assert "is the book's own tree" in proc.stderr, proc.stderr
    assert loaded == [], loaded


def test_list_shows_each_chapters_expected_time_per_profile(tmp_path, capsys, monkeypatch):
    """Without a run here, the benchmark record's times, with where and when they were measured."""
    from ntpnb.records._cache import package_fingerprint
    from ntpnb.records._places import output_tree
    from ntpnb.records._run import ChapterRun
    from ntpnb.records._timings import (
        CHAPTER_TIMES,
        describe_machine,
        record_timings,
        run_sources,
        this_machine,
    )

    monkeypatch.setenv("COLUMNS", "100")  # a narrower terminal wraps the line
    root = tmp_path / "project"
    shutil.copytree(ROOT / "notebooks", root / "notebooks")
    (root / "_toc.yml").write_text("format: jb-book\nroot: x\n")
    source = root / "notebooks" / "03_gd_implicit_bias.md"
    current = run_sources(source, package_fingerprint())
    record = {
        "date": "2026-11-27 05:00 UTC",
        "commit": "0123456789abcdef",
        "machine": {"cpu": "Some Other CPU", "cores": 64},
        "chapters": {
            "03_gd_implicit_bias": {
                "sources": dict(current),
                "paper": {"seconds": 36.4, "ok": True},
                "quick": {"seconds": 12.0, "ok": True},
            }
        },
    }
    (root / CHAPTER_TIMES).parent.mkdir()
    (root / CHAPTER_TIMES).write_text(json.dumps(record))
    assert cli.main(["list", "--root", str(root), "03"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == " expected time at one seed: paper 36 s, quick 12 s (benchmark record)"
    said = " ".join(line.strip() for line in lines)
    assert (
        "the benchmark record: each chapter's CPU time alone on one core, its time on an idle core, of a "
        f"Some Other CPU (64 cores), 2026-11-27 05:00 UTC, commit 0123456; this machine "
        f"({describe_machine(this_machine())}) is "
        "another kind and may differ by 2-3x"
    ) in said
    assert "stale" not in said

    # measured with another version of the chapter: said so, with the command that measures it again
    record["chapters"]["03_gd_implicit_bias"]["sources"]["source"] = "0" * 64
    (root / CHAPTER_TIMES).write_text(json.dumps(record))
    assert cli.main(["list", "--root", str(root), "03"]) == 0
    lines = capsys.readouterr().out.splitlines()
    said = " ".join(line.strip() for line in lines)
    assert said.startswith(
        "03_gd_implicit_bias expected time at one seed: paper 36 s, quick 12 s (benchmark record, stale: "
        "measured with another version of this chapter)"
    )
    assert "`ntpnb benchmarks --chapter-times` measures the record again (about 1 min)" in said

    # this machine's own run of these sources comes first
    ran = ChapterRun("03_gd_implicit_bias", complete=True, seconds=123.0)
    sources = {"03_gd_implicit_bias": current}
    record_timings(output_tree(root / "outputs"), "paper", [ran], jobs=2, sources=sources)
    assert cli.main(["list", "--root", str(root), "03"]) == 0
    line = " ".join(line.strip() for line in capsys.readouterr().out.splitlines()[1:3])
    assert line.startswith(
        "expected time at one seed: paper 2 min (this machine's last run); quick 12 s (benchmark record, "
        "stale: measured with another version of this chapter)"
    )


def test_list_without_a_benchmark_record_shows_no_time(tmp_path, capsys):
    root = tmp_path / "project"
    shutil.copytree(ROOT / "notebooks", root / "notebooks")
    (root / "_toc.yml").write_text("format: jb-book\nroot: x\n")
    assert cli.main(["list", "--root", str(root), "03"]) == 0
    out = capsys.readouterr().out
    assert "expected time" not in out and "benchmark record" not in out
    (root / "benchmarks").mkdir()
    (root / "benchmarks" / "chapter_times.json").write_text("{")
    assert cli.main(["list", "--root", str(root), "03"]) == 0
    assert "no benchmark record times: cannot read the benchmark record" in capsys.readouterr().out


#: What a run loads to run: a refused run loads none of it.
RUN_MODULES = ("ntpnb.runner._run", "ntpnb.runner._workers", "ntpnb.explore._book", "papermill", "matplotlib")


@pytest.mark.parametrize(
    "command",
    [
        ["reproduce", "99"],
        ["reproduce", "03", "-p", "seed=-3"],
        ["explore", "03", "-p", "toy_lr=1,2", "--out", "outputs"],
    ],
)
def test_a_refused_run_loads_none_of_what_a_run_needs(command):
    """A refusal comes at once: the run's modules (workers, kernels, the maps' book) load after the check."""
    proc, loaded = loaded_by(f"assert cli.main({command!r}) == 2", RUN_MODULES)
    assert "ntpnb: error:" in proc.stderr
    assert loaded == [], loaded


def test_reproduce_with_book_builds_the_book_of_its_run(tmp_path, monkeypatch, capsys):
    import ntpnb.book as book_face
    from ntpnb import cli
    from ntpnb.chapter import _parameters as profiles

    from fake_notebooks import fake_notebook

    (tmp_path / "notebooks").mkdir()
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: x\n")
    body = 'from ntpnb.chapter._claims import ClaimLog\nClaimLog("a_one", profile, output_dir).conclude()'
    (tmp_path / "notebooks" / "a_one.md").write_text(fake_notebook(body))
    monkeypatch.setattr(profiles, "CHANGES", {"a_one": {}})
    built = []
    monkeypatch.setattr(book_face, "build_book", lambda book: built.append(book.tree.root) or 0)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["reproduce", "--profile", "quick", "--jobs", "1", "--seeds", "1", "--book"]) == 0
    assert built == [(tmp_path / "outputs" / "runs" / "profile=quick").resolve()]
    assert "next: ntpnb book" not in capsys.readouterr().out  # it is built: no command left to run


@pytest.fixture
def one_chapter(tmp_path, monkeypatch):
    """A project of one chapter, ``a_one``, at the quick profile; the working folder."""
    from ntpnb.chapter import _parameters as profiles

    from fake_notebooks import fake_notebook

    (tmp_path / "notebooks").mkdir()
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: x\n")
    (tmp_path / "notebooks" / "a_one.md").write_text(fake_notebook("print(1)"))
    monkeypatch.setattr(profiles, "CHANGES", {"a_one": {}})
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    ("run", "book", "status"),
    [
        ("ok", 0, 0),
        ("check failed", 0, 1),
        ("ok", 1, _parser.BOOK_FAILED),
        ("check failed", 1, _parser.BOOK_FAILED),  # its checks are listed above the book's messages
        ("crashed", 0, 1),  # no book is built
    ],
)
def test_reproduce_with_book_tells_a_failed_book_build_from_failed_runs(
    one_chapter, monkeypatch, capsys, run, book, status
):
    """Its exit status says what failed, so that ./run.sh reproduce can say it too."""
    import ntpnb.book as book_face
    from ntpnb.records._run import ChapterRun
    from ntpnb.runner import _run

    tree = one_chapter / "outputs" / "runs" / "profile=quick"
    (tree / "notebooks").mkdir(parents=True)
    result = ChapterRun(
        "a_one",
        "quick",
        complete=run != "crashed",
        error=None if run == "ok" else run,
        executed=tree / "notebooks" / "a_one.ipynb",
    )
    monkeypatch.setattr(_run, "run_checked", lambda *args, **kwargs: [result])  # no kernel runs
    built = []
    monkeypatch.setattr(book_face, "build_book", lambda book_of_run: built.append(book_of_run) or book)
    assert cli.main(["reproduce", "--profile", "quick", "--seeds", "1", "--book"]) == status
    assert len(built) == (run != "crashed")
    assert len({0, 1, 2, _parser.BOOK_FAILED, 130}) == 5  # told apart from every other status


def test_book_exits_with_its_own_status_when_the_build_fails(one_chapter, monkeypatch):
    import ntpnb.book as book_face

    (one_chapter / "outputs" / "notebooks").mkdir(parents=True)
    codes = iter([1, 0])  # jupyter-book's status of a failed build, then of a built book
    monkeypatch.setattr(book_face, "build_book", lambda book, pdf=True: next(codes))
    assert cli.main(["book", "--no-pdf"]) == _parser.BOOK_FAILED
    assert cli.main(["book", "--no-pdf"]) == 0


def test_the_help_of_the_commands_that_build_a_book_names_its_failed_builds_status(capsys):
    for command in ("reproduce", "book"):
        with pytest.raises(SystemExit):
            cli.main([command, "--root", str(ROOT), "--help"])
        said = " ".join(capsys.readouterr().out.split())
        assert f"; {_parser.BOOK_FAILED} " in said and "the book build failed" in said, said


def test_list_says_when_this_machine_is_busy(monkeypatch):
    monkeypatch.setattr(_list.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(_list.os, "getloadavg", lambda: (10.7, 9.0, 8.0))
    assert _list._busy_note().startswith("this machine is busy now (load average 10.7 on 2 cores)")
    monkeypatch.setattr(_list.os, "getloadavg", lambda: (1.5, 1.0, 1.0))
    assert _list._busy_note() == ""
