"""The execution footer of the book's pages: when, from which commit, in which run."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone

import pytest

from ntpnb.book._footers import Execution, Footers, read_footers, stage_seeds
from ntpnb.errors import PathError
from ntpnb.records._commit import SourceCommit
from ntpnb.records._manifest import Manifest, write_manifest
from ntpnb.records._places import OutputTree
from ntpnb.records._tree import TreeRecord, chapter_seeds, load_tree_record, write_tree_record

SHA = "452b3341a0c9e7d0c3b1d3f5e2a4b6c8d0e2f4a6"
REPOSITORY = "https://github.com/owner/project"


def _whole(text: str) -> str:
    """A date and time as a footer keeps it on one line (a phone broke "2026-" / "11-29")."""
    return f'<span class="ntpnb-word">{text}</span>'


def _executed(folder, name, end_time):
    """An executed notebook ``name`` in ``folder`` whose papermill run ended at ``end_time``."""
    folder.mkdir(parents=True, exist_ok=True)
    notebook = {
        "cells": [],
        "metadata": {"papermill": {"end_time": end_time}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = folder / f"{name}.ipynb"
    path.write_text(json.dumps(notebook))
    return path


def test_a_chapter_page_says_when_from_which_commit_and_in_which_run_it_was_executed(tmp_path):
    layout = OutputTree(tmp_path)
    executed = _executed(layout.notebooks, "01_a", "2026-05-02T14:06:03.470235+00:00")
    write_manifest(executed, Manifest("key", {}, 1.0, {}, "pkg", SourceCommit(SHA)))
    execution = read_footers(layout).executions["01_a"]
    assert execution == Execution(datetime(2026, 5, 2, 14, 6, 3, 470235, timezone.utc), SourceCommit(SHA))
    footers = Footers("profile paper; seeds 0-4", {"01_a": execution}, repository=REPOSITORY)
    assert footers.chapter("01_a") == (
        f"Executed {_whole('2026-05-02 14:06 UTC')} · commit "
        f'<a href="{REPOSITORY}/commit/{SHA}"><code>452b334</code></a> · run: profile paper; seeds 0-4'
    )
    assert footers.chapter("02_b") == "Not executed in this run · run: profile paper; seeds 0-4"


def test_a_chapter_without_a_manifest_or_a_time_says_what_is_not_recorded(tmp_path):
    layout = OutputTree(tmp_path)
    _executed(layout.notebooks, "01_a", None)  # its last run failed: no manifest
    assert read_footers(layout).executions == {"01_a": Execution(None, SourceCommit())}
    footers = Footers("profile <quick>", read_footers(layout).executions)
    assert footers.chapter("01_a") == "Executed · commit not recorded · run: profile &lt;quick&gt;"


def test_every_other_page_gives_the_span_of_the_run_and_its_commits_and_the_build(tmp_path):
    built = datetime(2026, 5, 3, 9, 0, tzinfo=timezone.utc)
    day = {
        "01_a": Execution(datetime(2026, 5, 2, 14, 5, tzinfo=timezone.utc), SourceCommit(SHA)),
        "02_b": Execution(datetime(2026, 5, 2, 14, 9, tzinfo=timezone.utc), SourceCommit(SHA)),
    }
    footers = Footers("profile paper; seeds 0-4", day, built)
    assert footers.book() == (
        f"Chapters executed {_whole('2026-05-02 14:05')} to {_whole('14:09 UTC')} · commit 452b334 · run: "
        f"profile paper; seeds 0-4 · book built {_whole('2026-05-03 09:00 UTC')}"
    )
    modified = SourceCommit("869dee5" + "0" * 33, modified=True)
    days = {**day, "03_c": Execution(datetime(2026, 5, 3, 8, 0, tzinfo=timezone.utc), modified)}
    spanned = f"Chapters executed {_whole('2026-05-02 14:05')} to {_whole('2026-05-03 08:00 UTC')}"
    commits = "commit 452b334, commit 869dee5 with uncommitted changes"
    assert Footers("x", days, built).book().startswith(f"{spanned} · {commits} · run: x")
    assert (
        Footers("x", {}, built).book()
        == f"No chapter executed in this run · run: x · book built {_whole('2026-05-03 09:00 UTC')}"
    )


def test_the_footers_of_a_tree_read_its_run_record_and_every_executed_chapter(tmp_path):
    layout = OutputTree(tmp_path)
    write_tree_record(tmp_path, TreeRecord("quick", {"n_g": "121"}, (0,)))
    _executed(layout.notebooks, "01_a", "2026-05-02T14:06:00")  # no time zone: UTC
    footers = read_footers(layout, REPOSITORY)
    assert footers.label == "profile quick with n_g=121; seed 0" and footers.repository == REPOSITORY
    assert footers.executions == {
        "01_a": Execution(datetime(2026, 5, 2, 14, 6, tzinfo=timezone.utc), SourceCommit())
    }
    assert read_footers(OutputTree(tmp_path / "none")).label.startswith("nothing yet")
    (layout.notebooks / "01_a.key.json").write_text("{")
    with pytest.raises(PathError, match=r"01_a\.key\.json"):
        read_footers(layout)


def test_each_page_says_the_seeds_its_chapters_ran_at(tmp_path):
    """A tree whose chapter 3 ran at seeds 0-4 and the others at seed 0: its run record says seeds
    0-4 (every seed any chapter ran at), its pages say which chapter ran at which."""
    layout = OutputTree(tmp_path)
    write_tree_record(tmp_path, TreeRecord("quick", {}, (0, 1, 2, 3, 4), ("01_a", "03_c", "04_d")))
    for name in ("01_a", "03_c", "04_d"):
        _executed(layout.notebooks, name, "2026-05-02T14:06:03+00:00")
    for seed in (1, 2, 3, 4):
        _executed(OutputTree(layout.seed_root(seed)).notebooks, "03_c", "2026-05-02T14:07:03+00:00")
    footers = read_footers(layout)
    assert footers.label == "profile quick; seeds 0-4 for chapter 3 and seed 0 for chapters 1, 4"
    assert footers.chapter("01_a").endswith("run: profile quick; seed 0")
    assert footers.chapter("03_c").endswith("run: profile quick; seeds 0-4")
    assert chapter_seeds(tmp_path, None) == {}  # no record: the book's seed is unknown
    # the book's staged copy holds no seed trees: the seeds go with it
    staged = OutputTree(tmp_path / "staged")
    shutil.copytree(layout.notebooks, staged.notebooks)
    shutil.copy(tmp_path / "run.json", staged.root / "run.json")
    stage_seeds(staged.root, chapter_seeds(tmp_path, load_tree_record(tmp_path)))
    assert read_footers(staged).chapter("03_c").endswith("run: profile quick; seeds 0-4")


def test_a_chapter_is_the_trees_only_where_it_ran_at_the_books_seed(tmp_path):
    layout = OutputTree(tmp_path)
    record = TreeRecord("quick", {}, (0, 1), ("01_a",))
    _executed(layout.notebooks, "01_a", "2026-05-02T14:06:03+00:00")
    _executed(OutputTree(layout.seed_root(1)).notebooks, "02_b", "2026-05-02T14:07:03+00:00")
    assert chapter_seeds(tmp_path, record) == {"01_a": (0,)}
