"""Every command the book or the CLI suggests runs as printed.

A suggested command is collected from where a reader meets it (a page of the book, a message of
``ntpnb``, the README and the *How to reproduce* page) and checked by :func:`ntpnb.cli._checks.check_command`:
``ntpnb``'s own parser, then every check the command makes before it runs (for ``reproduce``, each
``-p`` in its chapter's domain and the setting of the tree ``--out`` names). Nothing runs.
"""

from __future__ import annotations

import argparse
import ast
import re
import shlex
from pathlib import Path

import pytest

from ntpnb import cli
from ntpnb.book._build import stage_sources, unrun_note, unrun_refusal
from ntpnb.book._compare import compare_runs
from ntpnb.book._trees import book_tree
from ntpnb.chapter import _parameters as parameters
from ntpnb.cli._checks import check_command
from ntpnb.cli._commands import _next_step
from ntpnb.cli._parser import parse_command
from ntpnb.errors import NTPError, PathError
from ntpnb.records._tree import TreeRecord, write_tree_record

from conftest import ROOT
from fake_notebooks import fake_notebook

#: A command in backquotes (as every page and message quotes one), or after ``next: ``.
QUOTED = re.compile(r"`((?:\.venv/bin/)?ntpnb [^`]+)`")
NEXT = re.compile(r"^next: (ntpnb .+?)  \(", re.MULTILINE)


def suggested(text: str) -> list[list[str]]:
    """The ``ntpnb`` command lines ``text`` suggests, each as its arguments after ``ntpnb``."""
    found = [*QUOTED.findall(text), *NEXT.findall(text)]
    return [shlex.split(command)[1:] for command in found]


def runs_as_printed(argv: list[str]) -> argparse.Namespace | None:
    """Check ``ntpnb ARGV`` as the command would before running (and a benchmarks command's own options)."""
    args = check_command(argv)
    if args is not None and args.command == "benchmarks":
        from benchmarks.run import build_parser

        build_parser().parse_args(args.extra[1:] if args.extra[:1] == ["--"] else args.extra)
    return args


def check_all(text: str, at_least: int = 1) -> list[list[str]]:
    """Assert every command ``text`` suggests runs as printed (and that it suggests some).

    Returns them, but the bare ``ntpnb reproduce`` that prose names (checked too).
    """
    commands = suggested(text)
    assert len(commands) >= at_least, text
    for argv in commands:
        try:
            runs_as_printed(argv)
        except NTPError as exc:  # _UsageError is one
            pytest.fail(f"`ntpnb {shlex.join(argv)}`, suggested in\n{text}\nfails: {exc}")
    return [argv for argv in commands if argv != ["reproduce"]]


@pytest.fixture
def project(tmp_path, monkeypatch):
    """Two chapters: ``01_a`` (seed, n) and ``03_c`` (seed, lr, which ``01_a`` does not have); cwd there."""
    root = tmp_path / "project"
    (root / "notebooks").mkdir(parents=True)
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/intro\n")
    cells = {
        "01_a": "seed = 0  # {int ≥ 0} the seed\nn = 50  # {int ≥ 1} samples\n",
        "03_c": "seed = 0  # {int ≥ 0} the seed\nlr = 0.5  # {float > 0} the step\n",
    }
    for name, cell in cells.items():
        (root / "notebooks" / f"{name}.md").write_text(fake_notebook("print(1)", cell, title=name))
    monkeypatch.setattr(parameters, "CHANGES", {"01_a": {"quick": {"n": 5}}, "03_c": {"quick": {"lr": 0.1}}})
    monkeypatch.chdir(root)
    return root


def tree_of(root: Path, folder: str, record: TreeRecord | None, ran: tuple[str, ...] = ("03_c",)) -> Path:
    """An output tree under ``root/outputs/runs`` that ran ``ran``, with ``record`` as its run.json."""
    tree = root / "outputs" / "runs" / folder
    (tree / "notebooks").mkdir(parents=True)
    (tree / "claims").mkdir()
    for name in ran:
        (tree / "notebooks" / f"{name}.ipynb").write_text('{"cells": []}')
    if record is not None:
        write_tree_record(tree, record)
    return tree


# ----------------------------------------------------------------------------- the checker itself


def test_the_check_refuses_what_the_command_would_refuse_and_writes_nothing(project):
    tree = tree_of(project, "lr=0.1", TreeRecord("paper", {"lr": "0.1"}, (0,), ("03_c",)))
    refused = {
        # the hint the book gave after `ntpnb reproduce 03 -p lr=0.1`, for a chapter without lr
        f"reproduce 01 -p lr=0.1 --seeds 1 --out {tree}": "01_a has no parameter 'lr'",
        "reproduce 03 -p profile=quick": "the profile is chosen with `--profile quick`",
        "reproduce 03 -p output_dir=elsewhere": "the output folder is chosen with `--out elsewhere`",
        "reproduce 03 -p lr=-1": "lr='-1' is not a number > 0",
        "reproduce 03 --seeds 0": "--seeds",
        f"reproduce 03 --out {tree}": "holds a run of profile paper with lr=0.1",
        "reproduce 03 --profile fast": "invalid choice: 'fast'",
        "reproduce 03 --jobs two": "invalid int value",
        "compare outputs/runs/lr=0.2 outputs": "does not exist (did you mean outputs/runs/lr=0.1?)",
        "book --run outputs/runs/lr=0.2": "--run outputs/runs/lr=0.2 does not exist",
        "list 02": "no notebook named '02'",
    }
    before = sorted(p.relative_to(project) for p in project.rglob("*"))
    for command, said in refused.items():
        with pytest.raises(NTPError) as exc:
            runs_as_printed(shlex.split(command))
        assert said in str(exc.value), command
    assert sorted(p.relative_to(project) for p in project.rglob("*")) == before  # nothing written
    assert runs_as_printed(["reproduce", "--help"]) is None  # prints its help only


@pytest.mark.parametrize(
    ("command", "suggestion"),
    [
        ("reproduce 03 -p lr=0.1,1", ["explore", "03", "-p", "lr=0.1,1"]),
        (
            "reproduce 03_c --profile quick -p lr=0.1..1:log:3",
            ["explore", "03", "--profile", "quick", "-p", "lr=0.1..1:log:3"],
        ),
    ],
)
def test_a_list_given_to_reproduce_is_named_an_axis_with_the_explore_that_runs_it(
    project, command, suggestion
):
    with pytest.raises(NTPError) as refused:
        runs_as_printed(shlex.split(command))
    message = str(refused.value)
    assert "is not a number > 0" in message  # the domain, as before
    assert "several values are an axis of a grid, not one setting" in message
    assert check_all(message) == [suggestion]


# ----------------------------------------------------------------------------- the book's hints


def test_the_book_of_a_run_with_a_changed_parameter_suggests_only_commands_that_run(project):
    """After `ntpnb reproduce 03 -p lr=0.1`: 01_a has no lr, so the tree cannot take it; 03_c can."""
    tree_root = tree_of(project, "lr=0.1", TreeRecord("paper", {"lr": "0.1"}, (0,), ("03_c",)), ran=())
    book = book_tree(project, tree_root)
    missing = ["01_a", "03_c"]
    assert book.split_missing(missing) == (
        ["03_c"],
        {"01_a": "the setting changes lr, which is not its parameter (a parameter of 03_c only)"},
    )
    page = book.missing_advice("01_a")  # what its page in the book says
    assert page.startswith("It cannot run into this tree: the setting changes lr, which is not its parameter")
    assert check_all(page) == [["reproduce", "01", "--seeds", "1"]]  # without the change, a tree of its own
    assert check_all(book.missing_advice("03_c")) == [
        ["reproduce", "03", "-p", "lr=0.1", "--seeds", "1", "--out", "outputs/runs/lr=0.1"]
    ]
    refusal = unrun_refusal(book, missing)  # nothing ran: the build is refused, saying what runs
    assert "01_a cannot run into this tree" in refusal
    check_all(refusal, at_least=2)  # the reproduce of 03_c and the --run-missing
    (tree_root / "notebooks" / "03_c.ipynb").write_text('{"cells": []}')
    note = unrun_note(book, ["01_a"])  # 03_c ran: its book is built, 01_a's page says why not
    assert "01_a cannot run into this tree" in note and "--run-missing" not in note
    assert suggested(note) == []
    runs_as_printed(["book", "--run", str(tree_root), "--run-missing"])  # runs nothing, refuses nothing


def test_a_missing_chapters_page_carries_its_hint(project):
    tree_root = tree_of(project, "lr=0.1", TreeRecord("paper", {"lr": "0.1"}, (0,), ("03_c",)))
    for name in ("_config.yml",):
        (project / name).write_text("title: x\n")
    (project / "book").mkdir()
    for page in ("report.md", "claim_list.md", "verdicts.md", "verdicts.json", "benchmarks.md"):
        (tree_root / page).write_text("")
    book = book_tree(project, tree_root)
    stage_sources(book, project / "staged", ["01_a"])
    page = (project / "staged" / "outputs" / "notebooks" / "01_a.md").read_text()
    assert book.missing_advice("01_a") in page
    check_all(page)


def test_every_chapter_can_run_into_a_tree_whose_setting_all_have(project):
    root = tree_of(project, "profile=quick,seed=3", TreeRecord("quick", {"seed": "3"}, (3, 4), ("03_c",)))
    book = book_tree(project, root)
    assert book.split_missing(["01_a"]) == (["01_a"], {})
    assert check_all(book.missing_advice("01_a")) == [
        [
            "reproduce",
            "01",
            "--profile",
            "quick",
            "-p",
            "seed=3",
            "--seeds",
            "2",
            "--out",
            str(book.tree.root.relative_to(project)),
        ]
    ]
    note = unrun_note(book, ["01_a"])
    assert check_all(note) == [["book", "--run", "outputs/runs/profile=quick,seed=3", "--run-missing"]]


def test_an_interactive_runs_tree_is_never_given_to_ntpnb_reproduce(project):
    record = TreeRecord("quick", {"lr": "0.2"}, (0,), ("03_c",), interactive=True)
    tree_root = tree_of(project, "interactive/profile=quick,lr=0.2", record)
    book = book_tree(project, tree_root)
    for text in (book.missing_advice("01_a"), book.missing_advice("03_c")):
        for argv in check_all(text):
            assert "--out" not in argv
    assert "run that chapter again as it ran, in JupyterLab" in book.rerun_advice(["03_c"])
    assert suggested(book.rerun_advice(["03_c"])) == [["reproduce"]]  # named, not suggested
    with pytest.raises(NTPError) as refused:
        book.rerun_setting(["01_a"])  # what --run-missing meets
    assert "cannot run its missing notebooks, as the tree of an interactive run" in str(refused.value)
    check_all(str(refused.value))
    with pytest.raises(NTPError, match="cannot run its missing notebooks"):
        runs_as_printed(["book", "--run", str(tree_root), "--run-missing"])
    with pytest.raises(NTPError) as refused:  # each chapter into the tree its own setting gives
        book.rerun_setting(["01_a", "03_c"])
    assert check_all(str(refused.value)) == [
        ["reproduce", "01", "--profile", "quick", "--seeds", "1"],
        ["reproduce", "03", "--profile", "quick", "-p", "lr=0.2", "--seeds", "1"],
    ]
    plain = tree_of(project, "interactive/profile=quick", TreeRecord("quick", {}, (0,), (), interactive=True))
    with pytest.raises(NTPError) as refused:  # every chapter, in one command that names none
        book_tree(project, plain).rerun_setting(["01_a", "03_c"])
    assert check_all(str(refused.value)) == [["reproduce", "--profile", "quick", "--seeds", "1"]]


def test_a_tree_without_a_run_record_names_the_chapters_to_run(project):
    tree_root = tree_of(project, "old", None, ran=())
    book = book_tree(project, tree_root)
    with pytest.raises(NTPError) as refused:
        book.rerun_setting(["01_a"])
    assert check_all(str(refused.value)) == [["reproduce", "01", "--out", "outputs/runs/old"]]
    with pytest.raises(NTPError) as refused:
        book.rerun_setting(["01_a", "03_c"])  # every chapter: none named
    assert check_all(str(refused.value)) == [["reproduce", "--out", "outputs/runs/old"]]
    check_all(unrun_refusal(book, ["01_a", "03_c"]))


# ----------------------------------------------------------------------------- the CLI's messages


def test_the_end_of_a_run_names_a_book_command_that_runs_from_where_it_was_run(
    project, tmp_path, monkeypatch
):
    tree_root = tree_of(project, "profile=quick", TreeRecord("quick", {}, (0,), ("03_c",)))
    assert check_all(_next_step(project, tree_root)) == [["book", "--run", "outputs/runs/profile=quick"]]
    (project / "outputs" / "notebooks").mkdir()
    assert check_all(_next_step(project, project / "outputs")) == [["book"]]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # `ntpnb reproduce --root PROJECT` run from another folder
    assert check_all(_next_step(project, tree_root)) == [
        ["book", "--run", str(tree_root.resolve()), "--root", str(project.resolve())]
    ]


def test_list_ends_with_a_change_that_runs(project, capsys):
    assert cli.main(["list", "03"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert check_all(last) == [["reproduce", "03", "-p", "seed=1"]]
    assert last.endswith("(outputs go to outputs/runs/seed=1)")


def test_compare_suggests_a_run_only_into_an_empty_folder(project):
    (project / "empty").mkdir()
    with pytest.raises(PathError) as refused:
        compare_runs(Path("empty"), Path("empty"))
    assert check_all(str(refused.value)) == [["reproduce", "--out", "empty"]]
    tree_root = tree_of(
        project, "profile=quick,n=9", TreeRecord("quick", {"n": "9"}, (0,), ("01_a",)), ("01_a",)
    )
    other = tree_of(project, "copy", None, ("01_a",))
    (tree_root / "notebooks" / "01_a.ipynb").write_text("[]")  # damaged: the message says how to remake it
    with pytest.raises(PathError) as refused:
        compare_runs(other, tree_root)
    assert check_all(str(refused.value)) == [
        [
            "reproduce",
            "01",
            "--profile",
            "quick",
            "-p",
            "n=9",
            "--seeds",
            "1",
            "--out",
            "outputs/runs/profile=quick,n=9",
        ]
    ]


# ----------------------------------------------------------------------------- the README and the book


def code_commands(path: Path) -> list[list[str]]:
    """The ``ntpnb`` command lines of the shell code blocks of the Markdown file ``path``."""
    blocks = re.findall(r"```(?:bash|sh|console)\n(.*?)```", path.read_text(encoding="utf-8"), re.DOTALL)
    commands = []
    for line in (line for block in blocks for line in block.splitlines()):
        words = shlex.split(line, comments=True)
        if words and Path(words[0]).name == "ntpnb":
            commands.append(words[1:])
    return commands


@pytest.mark.parametrize("page", ["README.md", "book/reproduce.md"])
def test_the_commands_of_the_readme_and_the_how_to_page_run(page, monkeypatch):
    """Parsed and checked; a folder a command reads (``book --run``, ``compare``) is made by one before it."""
    monkeypatch.chdir(ROOT)
    commands = code_commands(ROOT / page)
    assert commands
    for argv in commands:
        if argv[0] in ("book", "compare"):  # their folders are those earlier commands write
            parse_command(argv)
        else:
            runs_as_printed(argv)


def test_the_benchmark_pages_commands_run(monkeypatch):
    from benchmarks.page import format_timings, not_run_text
    from ntpnb.records._places import OutputTree

    monkeypatch.chdir(ROOT)
    for text in (format_timings({}), not_run_text(OutputTree(ROOT / "outputs"))):
        commands = suggested(text)
        assert commands
        for argv in commands:
            if argv[0] != "book":  # the book of the tree the commands before it make
                runs_as_printed(argv)


#: A command in single backquotes in a message's text (not a docstring's ``literal``).
MESSAGE_COMMAND = re.compile(r"(?<!`)`((?:\.venv/bin/)?ntpnb [^`]+)`(?!`)")


def message_commands(path: Path) -> list[str]:
    """The ``ntpnb`` commands the string literals of the module ``path`` quote, but its docstrings.

    An f-string's command counts when it has no placeholder (a command built from a run's setting
    is checked where it is built, by the tests above).
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    texts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            texts.append("".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            texts.append(node.value)
    return [c for text in texts for c in MESSAGE_COMMAND.findall(text) if "{}" not in c]


def test_every_fixed_command_a_message_of_the_package_quotes_runs(monkeypatch):
    """``ntpnb reproduce --seeds N`` and the like: a command in a message is one a reader can paste."""
    monkeypatch.chdir(ROOT)
    found = {
        command: path
        for folder in ("ntpnb", "benchmarks")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for command in message_commands(path)
    }
    assert "ntpnb reproduce --seeds 5" in found  # the report's, when no seed sweep ran
    for command, path in found.items():
        argv = shlex.split(command)[1:]
        try:
            parse_command(argv) if argv[0] in ("book", "compare") else runs_as_printed(argv)
        except NTPError as exc:
            pytest.fail(f"`{command}` in {path.relative_to(ROOT)} fails: {exc}")
