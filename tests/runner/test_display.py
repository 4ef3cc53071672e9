"""What ``ntpnb reproduce`` shows while it runs (:mod:`ntpnb.runner._display`)."""

from __future__ import annotations

import io
import json
import sys

import pytest

from ntpnb.chapter._progress import ProgressState
from ntpnb.runner._display import Display
from ntpnb.settings import QUIET_SECONDS


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_status_lines_name_the_cell_the_time_and_the_loop(monkeypatch):
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    shown = Display(lambda line: None, 6, footer=lambda: "about 40 s left")
    monkeypatch.setattr(shown.throttle, "seconds", float("inf"))  # drawn by started() only
    monkeypatch.setattr("time.monotonic", lambda: 10.0)
    shown.started("03_gd")
    shown.running["03_gd"].cell, shown.running["03_gd"].cells = 12, 31
    shown.running["03_gd"].loop = "long runs 41%"
    monkeypatch.setattr("time.monotonic", lambda: 40.0)
    shown.started("04_x")
    monkeypatch.setattr("time.monotonic", lambda: 55.0)
    shown.cell("03_gd", 12, 31)  # not redrawn: throttled
    shown._redraw()
    assert terminal.getvalue().rpartition("\x1b[J")[2].splitlines() == [
        "  03_gd   cell 12/31     45 s  long runs 41%",
        "  04_x    starting       15 s",
        "  about 40 s left",
    ]


def test_without_a_terminal_one_line_at_the_start_and_one_at_the_end(monkeypatch):
    lines, stream = [], io.StringIO()
    monkeypatch.setattr(sys, "stdout", stream)
    shown = Display(lines.append, 5, footer=lambda: "")
    assert not shown.live
    shown.started("a")
    shown.cell("a", 3, 9)
    shown.tick()
    shown.finished("a", "[1/1] a  ok")
    shown.close()
    assert lines == ["  a      started", "[1/1] a  ok"]
    assert stream.getvalue() == ""  # nothing redrawn


def test_without_a_terminal_a_quiet_log_gets_a_line_of_what_runs_and_the_time_left(monkeypatch):
    lines, clock = [], [0.0]
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    monkeypatch.setattr("time.monotonic", lambda: clock[0])
    shown = Display(lines.append, 5, footer=lambda: "about 4 min left: this machine's last run")
    shown.started("a")
    shown.cell("a", 3, 9)
    clock[0] = QUIET_SECONDS - 1
    shown.tick()  # a line came less than QUIET_SECONDS ago
    assert lines == ["  a      started"]
    clock[0] = QUIET_SECONDS + 1
    shown.tick()
    shown.tick()  # and the next only after another QUIET_SECONDS
    assert lines[1:] == ["  running: a cell 3/9 9 s; about 4 min left: this machine's last run"]
    clock[0] = 2 * QUIET_SECONDS + 2
    shown.tick()
    assert len(lines) == 3


def test_a_terminal_redraws_the_block_in_place(monkeypatch, tmp_path):
    lines, terminal = [], FakeTerminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    shown = Display(lambda line: (lines.append(line), terminal.write(line + "\n")), 4, footer=lambda: "")
    assert shown.live
    progress = tmp_path / "progress-a.json"
    shown.started("a", progress)
    shown.started("b")
    assert terminal.getvalue().endswith("  a     starting        0 s\n  b     starting        0 s\n")
    progress.write_text(json.dumps(ProgressState("trials", 3, 10, 1.0).__dict__))
    monkeypatch.setattr(shown.throttle, "seconds", 0.0)
    shown.cell("a", 2, 5)
    drawn = terminal.getvalue()
    assert "\x1b[2F\x1b[J" in drawn  # the two lines were cleared before the redraw
    assert "cell 2/5" in drawn.splitlines()[-2] and "trials 30%" in drawn.splitlines()[-2]
    shown.finished("a", "[1/2] a  ok")
    after = terminal.getvalue()[len(drawn) :]
    assert after.startswith("\x1b[2F\x1b[J[1/2] a  ok\n")  # the end line stays above the block
    assert after.rstrip("\n").splitlines()[-1].startswith("  b ")
    shown.close()
    assert terminal.getvalue().endswith("\x1b[1F\x1b[J")  # the block is gone
    assert lines == ["[1/2] a  ok"]  # on a terminal only the end lines are logged


@pytest.mark.parametrize("text", ["", "{", json.dumps({"label": "x"})])
def test_an_unreadable_progress_file_shows_no_loop(tmp_path, monkeypatch, text):
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    shown = Display(lambda line: None, 1, footer=lambda: "")
    progress = tmp_path / "p.json"
    progress.write_text(text)
    monkeypatch.setattr(shown.throttle, "seconds", 0.0)
    shown.started("a", progress)
    shown.tick()
    assert shown.running["a"].loop == ""
