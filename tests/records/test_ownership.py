"""Which folders a command may write into (:mod:`ntpnb.records._ownership`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ntpnb.book._build import GENERATED_PAGES
from ntpnb.book._scoreboard import SCOREBOARD_FILE
from ntpnb.book._trees import RUN_SITE_DIRNAME
from ntpnb.errors import NTPError
from ntpnb.explore._folder import MAPS_DIRNAME
from ntpnb.records._lock import LOCK_NAME
from ntpnb.records._ownership import (
    EXPLORE_TREE,
    RUN_TREE,
    TREE_ENTRIES,
    check_output_folder,
    replaceable_files,
    tree_kind,
)
from ntpnb.records._places import OutputTree
from ntpnb.records._tree import TreeRecord, write_tree_record


def test_what_ntpnb_writes_at_a_trees_root_is_never_taken_for_the_users():
    layout = OutputTree(Path("t"))
    written = {layout.notebooks.name, layout.figures.name, layout.claims.name, layout.failed.name}
    written |= {layout.timings.name, layout.benchmarks.name, layout.sweep.name}
    written |= {*GENERATED_PAGES, SCOREBOARD_FILE, RUN_SITE_DIRNAME, MAPS_DIRNAME}
    assert written <= TREE_ENTRIES


def test_a_folder_is_one_kind_of_tree(tmp_path):
    assert tree_kind(tmp_path) == "" and tree_kind(tmp_path / "none") == ""
    write_tree_record(tmp_path, TreeRecord("quick"))
    assert tree_kind(tmp_path) == RUN_TREE
    check_output_folder(tmp_path, RUN_TREE, "x")
    with pytest.raises(NTPError, match=r"holds a run's tree \(profile quick; run\.json\)"):
        check_output_folder(tmp_path, EXPLORE_TREE, "x", force=True)
    (tmp_path / "explore.json").write_text("{}")
    with pytest.raises(NTPError, match="holds both a run"):
        tree_kind(tmp_path)


def test_a_folder_of_the_users_is_written_only_when_asked(tmp_path):
    check_output_folder(tmp_path / "new", RUN_TREE, "new")  # nothing there yet
    check_output_folder(tmp_path, RUN_TREE, "here")  # empty
    (tmp_path / ".lock").write_text("")  # what ntpnb leaves is not the user's
    (tmp_path / "runs").mkdir()
    check_output_folder(tmp_path, RUN_TREE, "here")
    for name in ("a", "b", "c", "d", "e"):
        (tmp_path / name).mkdir()
    with pytest.raises(NTPError, match=r"holds files ntpnb did not write \(a/, b/, c/, and 2 more\)"):
        check_output_folder(tmp_path, RUN_TREE, "here")
    check_output_folder(tmp_path, RUN_TREE, "here", force=True)


def test_a_folder_of_the_users_is_said_so_with_every_file_force_could_replace(tmp_path):
    """A run.json the user wrote is theirs, not a damaged tree; a file under figures/ is listed too."""
    (tmp_path / "run.json").write_text('{"mine": 1}')
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "myplot.png").write_bytes(b"png")
    (tmp_path / "notes.txt").write_text("notes")
    for kind in (RUN_TREE, EXPLORE_TREE):
        with pytest.raises(NTPError) as refused:
            check_output_folder(tmp_path, kind, "~")
        message = str(refused.value)
        assert message.startswith("--out ~ is a folder of your own, not a tree ntpnb wrote")
        assert "run.json (not ntpnb's: it does not read as a run record)" in message
        assert message.endswith("--force could replace these 2 files of yours: figures/myplot.png, run.json")
    check_output_folder(tmp_path, RUN_TREE, "~", force=True)


def test_replaceable_files_are_those_where_a_tree_writes(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "run.json").write_text("{}")  # not where a tree writes
    (tmp_path / "claims" / "deep").mkdir(parents=True)
    (tmp_path / "claims" / "deep" / "x.json").write_text("{}")
    (tmp_path / "timings.json").write_text("{}")
    (tmp_path / LOCK_NAME).write_text("")  # ntpnb's own
    assert replaceable_files(tmp_path) == ["claims/deep/x.json", "timings.json"]
