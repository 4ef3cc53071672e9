"""``ntpnb book`` on a damaged, stopped or unwritable tree: one clear line, the last book kept.

Each test works on its own copy of the quick-profile outputs (``book_copy``); the checks of the
records run before anything is built, so only the tests of a build stopped or refused by its
folder build a book.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from runner.test_faults import read_only, skip_mount

from conftest import ROOT

pytestmark = pytest.mark.slow

CHAPTER = "01_entropy_separability"


def book(root: Path, *args: str, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """``ntpnb book --root ROOT ARGS``, run from the project root."""
    cmd = [*prefix, sys.executable, "-m", "ntpnb.cli", "book", "--root", str(root), *args]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=300, env=env)


def one_line(proc: subprocess.CompletedProcess) -> str:
    """The one error line of a refused command (asserting there is one, and no traceback)."""
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def _first_figure(outputs: Path) -> Path:
    manifest = json.loads((outputs / "notebooks" / f"{CHAPTER}.key.json").read_text())
    return outputs / next(p for p in manifest["outputs"] if p.startswith("figures/"))


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda o: (o / "claims" / f"{CHAPTER}.json").unlink(), f"claims/{CHAPTER}.json is missing"),
        (lambda o: _first_figure(o).unlink(), "is missing"),
        (
            lambda o: (o / "notebooks" / f"{CHAPTER}.ipynb").write_text("[]"),
            "differs from what its run wrote",
        ),
        (lambda o: (o / "notebooks" / f"{CHAPTER}.key.json").write_text("[]"), "is damaged: no cache key"),
    ],
    ids=["claim-record-deleted", "figure-deleted", "notebook-replaced-by-[]", "manifest-damaged"],
)
def test_a_damaged_record_is_refused_in_one_line_with_the_command_that_remakes_it(book_copy, damage, said):
    outputs = book_copy / "outputs"
    damage(outputs)
    line = one_line(book(book_copy))
    assert said in line and "ntpnb reproduce 01" in line and "to run that chapter again" in line
    assert not (outputs / "report.md").exists()  # no verdict written from a damaged tree
    assert not (book_copy / "_build").exists()


def test_an_executed_notebook_of_the_wrong_shape_is_refused_even_without_a_manifest(book_copy):
    """With the manifest gone too, the notebook's own shape is checked: ``[]``, or cut short."""
    outputs = book_copy / "outputs"
    (outputs / "notebooks" / f"{CHAPTER}.key.json").unlink()
    (outputs / "failed").mkdir(exist_ok=True)
    (outputs / "failed" / f"{CHAPTER}.json").write_text('{"error": "x"}')  # its last run failed
    executed = outputs / "notebooks" / f"{CHAPTER}.ipynb"
    text = executed.read_text()
    for bad, said in [("[]", "it is a list, not an object"), (text[: len(text) // 2], "cut short or broken")]:
        executed.write_text(bad)
        line = one_line(book(book_copy))
        assert f"the executed notebook {executed}" in line and said in line


def test_a_damaged_run_record_is_refused_in_one_line(book_copy):
    (book_copy / "outputs" / "run.json").write_text('{"profile": 3}')
    line = one_line(book(book_copy))
    assert "the run record" in line and "is damaged" in line and "delete it and run" in line


def test_compare_refuses_inputs_of_the_wrong_shape_in_one_line(tmp_path, quick_run):
    other = tmp_path / "other"
    shutil.copytree(quick_run / "notebooks", other / "notebooks")
    (other / "notebooks" / f"{CHAPTER}.ipynb").write_text('{"cells": [1]}')
    cmd = [sys.executable, "-m", "ntpnb.cli", "compare", str(quick_run), str(other)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    line = one_line(proc)
    assert "is not a notebook: cell 0 is a number, not an object" in line


def test_another_run_renders_as_a_book_of_its_own_labelled_by_its_run_record(tmp_path, quick_run):
    root = tmp_path / "project"
    root.mkdir()
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(ROOT / name, root / name)
    shutil.copytree(ROOT / "book", root / "book")
    shutil.copytree(ROOT / "notebooks", root / "notebooks")
    run = root / "outputs" / "runs" / "profile=quick"
    shutil.copytree(quick_run, run)
    proc = book(root, "--run", str(run))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "profile quick; seeds 0-2" in proc.stdout
    intro = (run / "_book" / "html" / "book" / "intro.html").read_text()
    assert "profile quick; seeds 0-2" in intro
    assert not (root / "_build").exists()  # the book's own site is untouched
    assert not list((run / "_book").glob(".staging-*"))


def _jupyter_book_running(root: Path) -> bool:
    return any(str(root) in " ".join(p) for p in _processes())


def _processes() -> list[list[str]]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                found.append((entry / "cmdline").read_bytes().decode(errors="replace").split("\0"))
            except OSError:
                continue
    return [cmd for cmd in found if any("jupyter-book" in part or "sphinx" in part for part in cmd)]


@pytest.mark.parametrize("signum", [signal.SIGTERM], ids=["sigterm"])
def test_a_stopped_build_ends_its_children_and_keeps_the_last_complete_book(book_copy, signum):
    first = book(book_copy)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    index = book_copy / "_build" / "html" / "index.html"
    before = index.read_bytes()
    cmd = [sys.executable, "-m", "ntpnb.cli", "book", "--root", str(book_copy)]
    proc = subprocess.Popen(cmd, cwd=book_copy, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not _jupyter_book_running(book_copy):
        assert time.monotonic() < deadline and proc.poll() is None, "jupyter-book never started"
        time.sleep(0.05)
    time.sleep(1.0)  # well inside Sphinx's work
    proc.send_signal(signum)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "Traceback" not in err, err
    deadline = time.monotonic() + 10
    while _jupyter_book_running(book_copy) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _jupyter_book_running(book_copy)
    assert index.read_bytes() == before  # the last complete book, whole
    assert not list((book_copy / "_build").glob(".staging-*"))


def test_a_read_only_site_gives_one_line_that_names_it(book_copy):
    site = book_copy / "_build"
    site.mkdir()
    prefix, undo = read_only(site)
    try:
        line = one_line(book(book_copy, prefix=prefix))
    finally:
        undo()
    assert "cannot write the book into" in line and "_build" in line
    assert "make it writable" in line and "--out" not in line


def test_a_full_site_gives_one_line_and_keeps_no_half_book(book_copy):
    site = book_copy / "_build"
    site.mkdir()
    mount = f"mount -t tmpfs -o size=256k tmpfs '{site}'"
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        skip_mount("a small tmpfs in a private mount namespace needs root and unshare -m")
    if subprocess.run(["unshare", "-m", "sh", "-c", mount], capture_output=True).returncode != 0:
        skip_mount("no private mount namespace (unshare -m) allowed here")
    prefix = ("unshare", "-m", "sh", "-c", f'{mount} && exec "$@"', "sh")
    line = one_line(book(book_copy, prefix=prefix))
    assert "cannot write the book into" in line and "free space" in line and "--out" not in line
