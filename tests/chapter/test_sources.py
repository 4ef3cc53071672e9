"""A chapter's source against its commit (:mod:`ntpnb.chapter._sources`), and what a run does with it."""

from __future__ import annotations

import json
import subprocess

import pytest

from ntpnb.chapter import _parameters as parameters
from ntpnb.chapter._sources import source_changes
from ntpnb.errors import NTPError
from ntpnb.records._manifest import load_manifest
from ntpnb.runner import check_run, reproduce

from fake_notebooks import fake_notebook

CELL = "seed = 0  # {int ≥ 0} the seed\nlr = 0.5  # {float > 0} the step\n"
BODY = """\
from ntpnb.chapter._claims import ClaimLog
print("lr", lr)
ClaimLog("01_a", profile, output_dir).conclude()
"""


def git(root, *args) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True)
    return done.stdout.strip()


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A git checkout of a project with one chapter, committed."""
    root = tmp_path / "project"
    (root / "notebooks").mkdir(parents=True)
    (root / "_toc.yml").write_text("format: jb-book\nroot: x\n")
    (root / "notebooks" / "01_a.md").write_text(fake_notebook(BODY, CELL, title="A chapter"))
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "a")
    monkeypatch.setattr(parameters, "CHANGES", {"01_a": {"quick": {}}})
    return root


def edit(root, old: str, new: str) -> None:
    source = root / "notebooks" / "01_a.md"
    source.write_text(source.read_text().replace(old, new))


def test_a_source_as_committed_has_no_changes_and_an_edited_one_says_exactly_what_differs(project, tmp_path):
    source = project / "notebooks" / "01_a.md"
    head = git(project, "rev-parse", "--short", "HEAD")
    assert source_changes(source) == ""
    edit(project, "lr = 0.5", "lr = 2.0")
    assert source_changes(source) == f"differs from commit {head}: lr = 2.0 (committed: 0.5)"
    edit(project, "# A chapter", "# A chapter, edited")
    assert (
        source_changes(source)
        == f"differs from commit {head}: lr = 2.0 (committed: 0.5); 1 other line differs"
    )
    other = project / "notebooks" / "02_b.md"
    other.write_text(source.read_text())
    assert source_changes(other) == f"is not in commit {head} (git does not track it)"
    outside = tmp_path / "elsewhere" / "notebooks" / "01_a.md"  # not a git checkout
    outside.parent.mkdir(parents=True)
    outside.write_text("x")
    assert source_changes(outside) == ""


def test_a_run_of_an_edited_source_into_the_books_outputs_is_refused_unless_asked(project):
    edit(project, "lr = 0.5", "lr = 2.0")
    with pytest.raises(NTPError) as refused:
        check_run(project, ["01"], "paper", {}, None, 1, 1)
    said = str(refused.value)
    assert said.startswith("notebooks/01_a.md differs from commit ") and ": lr = 2.0 (committed: 0.5)" in said
    assert "the book's outputs are the committed chapters' runs" in said and "add --uncommitted" in said
    assert not (project / "outputs").exists()
    assert check_run(project, ["01"], "paper", {}, None, 1, 1, uncommitted=True).changed == {
        "01_a": said.partition(" ")[2].partition(": the book's")[0]
    }
    quick = check_run(project, ["01"], "quick", {}, None, 1, 1)  # a tree of its own: run, and said
    assert list(quick.changed) == ["01_a"]


@pytest.mark.slow
def test_the_run_of_an_edited_source_says_what_differs_and_records_it(project):
    edit(project, "lr = 0.5", "lr = 2.0")
    lines: list[str] = []
    (result,) = reproduce(project, ["01"], "quick", log=lines.append, seeds=1)
    head = git(project, "rev-parse", "--short", "HEAD")
    said = f"ntpnb: 01_a: its source notebooks/01_a.md differs from commit {head}: lr = 2.0 (committed: 0.5)"
    assert lines[0].startswith(said), lines
    assert result.ok
    commit = load_manifest(result.executed).commit
    assert commit.modified and commit.changes == f"differs from commit {head}: lr = 2.0 (committed: 0.5)"
    printed = json.loads(result.executed.read_text())
    assert "lr 2.0" in json.dumps(printed)
