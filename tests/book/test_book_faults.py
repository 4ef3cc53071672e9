"""``ntpnb book`` on a damaged, stopped or unwritable tree: one clear line, the last book kept.

Each test works on its own copy of the quick-profile outputs (``book_copy``); the checks of the
records run before anything is built, so only the tests of a build stopped or refused by its
folder build a book.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from runner.test_faults import read_only, skip_mount

from ntpnb.book._pdf import PDF_NAME
from ntpnb.records._tree import TreeRecord, write_tree_record

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
    assert line.endswith(
        f"run `ntpnb reproduce 01 --out {other}` to run that chapter again, with the --profile and -p it "
        "ran with (it has no run.json to say)"
    )


def test_a_p_run_of_one_chapter_renders_as_a_book_of_its_own_labelled_by_its_run_record(tmp_path, quick_run):
    root = tmp_path / "project"
    root.mkdir()
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(ROOT / name, root / name)
    shutil.copytree(ROOT / "book", root / "book")
    shutil.copytree(ROOT / "notebooks", root / "notebooks")
    shutil.copytree(ROOT / "benchmarks", root / "benchmarks")  # benchmarks.page writes a page
    run = root / "outputs" / "runs" / "n_g=31"
    shutil.copytree(quick_run, run)
    others = [p.stem for p in (root / "notebooks").glob("*.md") if p.stem != CHAPTER]
    for name in others:  # as `ntpnb reproduce 01 --profile quick -p n_g=31 --seeds 3` leaves it
        for path in (f"notebooks/{name}.ipynb", f"notebooks/{name}.key.json", f"claims/{name}.json"):
            (run / path).unlink()
    write_tree_record(run, TreeRecord("quick", {"n_g": "31"}, (0, 1, 2), (CHAPTER,)))
    stale = run / "_book" / ".staging-1-0123abcd" / "_build" / "html"  # an interrupted build's
    stale.mkdir(parents=True)
    (stale / "searchindex.js").write_text("stale")
    proc = book(root, "--run", str(run), "--no-pdf")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    label = "profile quick with n_g=31; seeds 0-2"
    assert label in proc.stdout and f"has not run {', '.join(sorted(others))}" in proc.stdout
    assert "the book will have no PDF: not asked for (--no-pdf)" in proc.stdout
    html = run / "_book" / "html"
    intro = re.sub(r"<[^>]+>", "", (html / "book" / "intro.html").read_text())
    assert f"Verdicts of the runs that built this book ({label})" in intro
    assert "This tree has not run" in intro
    assert "This build of the book has no PDF" in intro and not (html / PDF_NAME).exists()
    unrun = html / "outputs" / "notebooks" / f"{sorted(others)[0]}.html"
    assert f"Not executed in this run · run: {label}" in re.sub(r"<[^>]+>", "", unrun.read_text())
    report = (run / "report.md").read_text()
    assert "What ran: the quick test settings with n\\_g=31, seeds 0-2 for chapter 1," in report
    placeholder = (html / "outputs" / "notebooks" / f"{sorted(others)[0]}.html").read_text()
    assert "has not run into the tree this book shows" in placeholder
    assert (html / "searchindex.js").read_text() != "stale"
    assert not list((run / "_book").glob(".staging-*"))  # the stale one removed, its own too
    assert not (root / "_build").exists()  # the book's own site is untouched


def test_a_tree_that_does_not_say_what_it_ran_is_not_run_in_a_guessed_setting(tmp_path):
    run = tmp_path / "old-run"
    (run / "notebooks").mkdir(parents=True)  # an output tree, with no run.json
    line = one_line(book(ROOT, "--run", str(run), "--run-missing"))
    assert f"{run} has no run.json, so what it ran (profile, -p) is unknown" in line
    assert f"run its missing notebooks with `ntpnb reproduce --out {run}` and the --profile" in line
    line = one_line(book(ROOT, "--run", str(run)))
    assert f"run `ntpnb reproduce --out {run}` first, with the --profile and -p it ran with" in line
    assert "--run-missing" not in line
    assert sorted(p.name for p in run.iterdir() if p.name != ".lock") == ["notebooks"]  # nothing written


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


def _as_a_background_job() -> None:
    """Start with SIGINT ignored, as a shell's background job (``cmd &``) starts: Python then keeps
    it ignored unless the program sets its own handler, and an explicit ``kill -INT`` is lost."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_a_stopped_build_ends_its_children_and_keeps_the_last_complete_book(book_copy, built_book, signum):
    # the last complete book: the one the suite built from the same outputs
    shutil.copytree(built_book / "_build" / "html", book_copy / "_build" / "html")
    index = book_copy / "_build" / "html" / "index.html"
    before = index.read_bytes()
    cmd = [sys.executable, "-m", "ntpnb.cli", "book", "--root", str(book_copy)]
    proc = subprocess.Popen(
        cmd,
        cwd=book_copy,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_as_a_background_job,
    )
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


@pytest.mark.parametrize("size", ["256k", "12m"], ids=["full-at-the-start", "full-while-sphinx-writes"])
def test_a_full_site_gives_one_line_and_keeps_no_half_book(book_copy, tmp_path, size):
    site = book_copy / "_build"
    left = tmp_path / "left"  # what the build left in the site (the tmpfs vanishes with the namespace)
    site.mkdir()
    mount = f"mount -t tmpfs -o size={size} tmpfs '{site}'"
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        skip_mount("a small tmpfs in a private mount namespace needs root and unshare -m")
    if subprocess.run(["unshare", "-m", "sh", "-c", mount], capture_output=True).returncode != 0:
        skip_mount("no private mount namespace (unshare -m) allowed here")
    script = f"""{mount} && {{ "$@"; code=$?; }}; ls -A '{site}' > '{left}'; exit $code"""
    line = one_line(book(book_copy, prefix=("unshare", "-m", "sh", "-c", script, "sh")))
    assert "cannot write the book into" in line and "free space" in line and "--out" not in line
    assert left.read_text() == ""  # no staging folder, no half-built book
