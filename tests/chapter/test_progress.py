"""The progress of a chapter's long loops (:mod:`ntpnb.chapter._progress`)."""

from __future__ import annotations

import importlib

import pytest

from ntpnb.chapter._progress import PROGRESS_FILE_VAR, QUIET_VAR, ProgressState, progress, read_progress

# the module, not the function that ntpnb.chapter exports under its name
progress_module = importlib.import_module("ntpnb.chapter._progress")


@pytest.fixture
def clock(monkeypatch):
    """A settable clock for the module (seconds)."""
    now = [100.0]
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: now[0])
    return now


def test_the_state_reads_as_a_percentage():
    state = ProgressState("long runs", 410_000, 1_000_000, 9.4)
    assert state.describe() == "long runs 41%"
    assert state.line() == "long runs: 41% (410,000 of 1,000,000), 9 s"
    assert ProgressState("draws", 7, 0, 1.0).describe() == "draws 7"  # no total known
    assert ProgressState("x", 12, 10, 0.0).describe() == "x 100%"  # never above 100


def test_under_the_runner_the_state_goes_to_its_file_and_is_removed_at_the_end(tmp_path, monkeypatch, clock):
    path = tmp_path / "progress-03.json"
    monkeypatch.setenv(PROGRESS_FILE_VAR, str(path))
    with progress("trials") as tick:
        tick(1, 10)
        assert read_progress(path) == ProgressState("trials", 1, 10, 0.0)
        clock[0] += 0.1
        tick(2)  # within half a second: not written again
        assert read_progress(path).done == 1
        clock[0] += 0.5
        tick(5, 20)
        assert read_progress(path) == ProgressState("trials", 5, 20, pytest.approx(0.6))
        assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left
    assert not path.exists()


def test_a_file_that_cannot_be_written_does_not_stop_the_loop(tmp_path, monkeypatch):
    monkeypatch.setenv(PROGRESS_FILE_VAR, str(tmp_path / "missing" / "p.json"))
    with progress("trials") as tick:
        tick(1, 2)
    assert not (tmp_path / "missing").exists()


def test_in_jupyter_one_line_is_updated_in_place(monkeypatch, clock):
    monkeypatch.delenv(PROGRESS_FILE_VAR, raising=False)
    monkeypatch.delenv(QUIET_VAR, raising=False)
    monkeypatch.setattr(progress_module, "_in_jupyter_kernel", lambda: True)
    shown = []

    class Handle:
        def update(self, data, raw):
            shown.append(("update", data["text/plain"]))

    def display(data, raw, display_id):
        assert raw and display_id
        shown.append(("display", data["text/plain"]))
        return Handle()

    import IPython.display

    monkeypatch.setattr(IPython.display, "display", display)
    with progress("draws") as tick:
        for i in range(4):
            tick(i + 1, 4)
            clock[0] += 0.3
    assert shown[0] == ("display", "draws: 25% (1 of 4), 0 s")
    assert [kind for kind, _ in shown[1:]] == ["update"] * (len(shown) - 1)
    assert shown[-1] == ("update", "draws: 100% (4 of 4), 1 s")  # the last state stays


def test_quiet_and_outside_jupyter_nothing_is_shown(monkeypatch, tmp_path):
    monkeypatch.delenv(PROGRESS_FILE_VAR, raising=False)
    monkeypatch.setenv(QUIET_VAR, "off")
    monkeypatch.setattr(progress_module, "_in_jupyter_kernel", lambda: True)
    with progress("draws") as tick:
        tick(1, 2)
        assert not tick._jupyter
    monkeypatch.undo()
    assert not progress_module._in_jupyter_kernel()  # pytest is no Jupyter kernel
