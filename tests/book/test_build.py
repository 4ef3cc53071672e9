"""The pieces of the atomic book build, and the reading of executed notebooks, without a build."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from ntpnb.book import _build as build
from ntpnb.book._build import Staging, build_messages, clear_stale, disk_errno, run_owned, swap_in
from ntpnb.book._executed import read_notebook
from ntpnb.errors import NTPError, PathError
from ntpnb.runner._workers import signals_handled

#: What jupyter-book prints when its output folder fills up (shortened from a real run).
FULL_OUTPUT = """\
Running Jupyter-Book v1.0.4.post1
Source Folder: {stage}/source
\x1b[91mWARNING: Failed to copy a file in html_static_file: /venv/core.js: OSError(28, 'No space')\x1b[0m

\x1b[91mException occurred:\x1b[39;49;00m
OSError: [Errno 28] No space left on device: '/src/intro.md' -> '{stage}/_build/html/_sources/intro.md'
The full traceback has been saved in /tmp/sphinx-err-x.log, if you want to report the issue to the developers.
Please also report this if it was a user error, so that a better error message can be provided next time.
Traceback (most recent call last):
  File "jupyter-book", line 6, in <module>
RuntimeError:
===============================================================================
There was an error in building your book. Look above for the cause.
"""


def test_a_full_folder_is_recognised_only_where_the_build_writes(tmp_path):
    output = FULL_OUTPUT.format(stage=tmp_path)
    assert disk_errno(output, tmp_path) == 28
    quoted = "WARNING: executed notebook 01.ipynb: cell 3 wrote to stderr: [Errno 13] Permission denied"
    assert disk_errno(quoted, tmp_path) is None  # a notebook's output is no reason to blame the folder
    assert disk_errno("Exception occurred:\nOSError: [Errno 28] No space left on device", tmp_path) == 28


def test_a_failed_build_shows_sphinxs_messages_without_banner_or_traceback(tmp_path):
    lines = build_messages(FULL_OUTPUT.format(stage=tmp_path))
    assert lines[0].startswith("WARNING: Failed to copy") and "\x1b" not in "".join(lines)
    assert any(line.startswith("OSError: [Errno 28]") for line in lines)
    assert not any("Traceback" in line or "Jupyter-Book" in line or "Please also" in line for line in lines)


def _book(folder, text):
    folder.mkdir(parents=True)
    (folder / "index.html").write_text(text)
    return folder


def test_the_swap_keeps_the_previous_book_until_the_new_one_is_in_place(tmp_path):
    target = _book(tmp_path / "html", "old")
    stage = Staging(tmp_path / ".staging-1-00000000")
    _book(stage.html, "new")
    swap_in(stage, target)
    assert (target / "index.html").read_text() == "new"
    assert (stage.previous / "index.html").read_text() == "old" and stage.complete.exists()


@pytest.mark.parametrize("complete", [True, False], ids=["new-book-complete", "only-the-previous"])
def test_a_build_killed_mid_swap_leaves_a_book_the_next_build_puts_back(tmp_path, complete):
    stage = Staging(tmp_path / ".staging-7-0123abcd")
    _book(stage.html, "new")
    _book(stage.previous, "old")
    if complete:
        stage.complete.touch()
    other = _book(tmp_path / ".staging-8-89abcdef" / "_build" / "html", "half")  # an interrupted build
    assert clear_stale(tmp_path) == [stage.path, other.parent.parent]
    assert (tmp_path / "html" / "index.html").read_text() == ("new" if complete else "old")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["html"]


def test_stale_staging_never_replaces_a_book_in_place(tmp_path):
    _book(tmp_path / "html", "current")
    stage = Staging(tmp_path / ".staging-7-0123abcd")
    _book(stage.html, "stale")
    stage.complete.touch()
    clear_stale(tmp_path)
    assert (tmp_path / "html" / "index.html").read_text() == "current"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["html"]


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"[]", "it is a list, not an object"),
        (b'{"cells": [1]}', "cell 0 is a number, not an object"),
        (b'{"cells": [{"cell_type": "code", "outputs": {}}]}', "cell 0 has 'outputs' that are an object"),
        (b'{"cells": [{"cell_type": "code", "outputs": [{"data": "x"}]}]}', "output 0 of cell 0 has 'data'"),
        (b'{"cells": [', "its JSON is cut short or broken"),
        (b"", "it is empty"),
        (b"\xff\xfe{", "is not UTF-8 text"),
    ],
)
def test_an_executed_notebook_of_the_wrong_shape_is_one_line_naming_it(tmp_path, content, said):
    path = tmp_path / "01_x.ipynb"
    path.write_bytes(content)
    with pytest.raises(PathError) as caught:
        read_notebook(path)
    message = str(caught.value)
    assert str(path) in message and said in message and "\n" not in message


def test_a_notebook_reads_as_its_json(tmp_path):
    nb = {"cells": [{"cell_type": "markdown", "source": ["# T"]}], "metadata": {}, "nbformat": 4}
    path = tmp_path / "ok.ipynb"
    path.write_text(json.dumps(nb))
    assert read_notebook(path) == nb
    with pytest.raises(PathError, match="cannot read the executed notebook"):
        read_notebook(tmp_path / "missing.ipynb")


def test_jupyter_book_is_found_beside_this_python_and_a_missing_one_is_named(tmp_path, monkeypatch):
    jb = build.jupyter_book()
    assert jb.parent == Path(sys.executable).parent and os.access(jb, os.X_OK)
    monkeypatch.setattr(build.sys, "executable", str(tmp_path / "bin" / "python"))
    with pytest.raises(
        NTPError,
        match=r"a book needs jupyter-book, which is not installed for .*: `\./run\.sh setup` installs it",
    ):
        build.jupyter_book()


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def test_a_stop_signal_that_lands_on_another_thread_ends_the_child_at_once(tmp_path):
    """The kernel may deliver a process's SIGTERM to any thread (``ntpnb`` has OpenBLAS's): the
    child is still ended then, not left to run until its output ends (a whole book build)."""
    assert threading.current_thread() is threading.main_thread()  # where the handler runs
    finished = tmp_path / "finished"
    child = ["sh", "-c", f"for i in $(seq 300); do echo line $i; sleep 0.1; done; touch '{finished}'"]

    def signal_this_thread() -> None:
        time.sleep(0.5)
        signal.pthread_kill(threading.get_ident(), signal.SIGTERM)

    with signals_handled([signal.SIGTERM], _interrupt):
        threading.Thread(target=signal_this_thread, daemon=True).start()
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            run_owned(child, tmp_path)
        stopped = time.monotonic() - started
    assert not finished.exists(), f"the child ran its 30 s to the end ({stopped:.1f} s)"
