"""The benchmarks page is generated at book-build time, never committed; both cases build."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from benchmarks.page import BENCHMARKS_COMMAND, render_benchmarks_page, write_benchmarks_page
from ntpnb.book import _build as build
from ntpnb.book._trees import BookTree
from ntpnb.book._words import WORD_JOINER
from ntpnb.errors import NTPError
from ntpnb.records._places import output_tree
from ntpnb.records._platform import format_platform

from conftest import ROOT, build_book


def test_without_results_the_page_says_so_and_names_the_command(tmp_path):
    layout = output_tree(tmp_path / "outputs")
    page = write_benchmarks_page(layout).read_text()
    assert page == render_benchmarks_page(layout)
    assert "No benchmark has been run" in page
    assert BENCHMARKS_COMMAND in page
    assert "|" not in page  # no table, so no number standing in for a measurement
    assert "ntpnb reproduce --profile" in page  # nor for a notebook time: the command instead


def test_with_results_the_page_is_the_last_run(tmp_path):
    layout = output_tree(tmp_path / "outputs")
    layout.benchmarks.mkdir()
    (layout.benchmarks / "benchmarks.md").write_text("# Benchmarks\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    page = write_benchmarks_page(layout)
    assert page == layout.root / "benchmarks.md"
    assert page.read_text().startswith((layout.benchmarks / "benchmarks.md").read_text())
    assert "Notebook reproduction times" in page.read_text()  # then the times (test_timings.py)


def test_the_book_build_writes_the_page_with_the_projects_benchmarks(tmp_path):
    layout = output_tree(tmp_path / "run")
    page = build.write_benchmarks_page(BookTree(ROOT, layout, None))  # another tree than the book's
    assert page == layout.root / "benchmarks.md"
    assert page.read_text() == render_benchmarks_page(layout, own=False)
    assert f"{BENCHMARKS_COMMAND} --out {layout.benchmarks}" in page.read_text()
    elsewhere = tmp_path / "project"  # a project without benchmarks/: refused, naming the command
    elsewhere.mkdir()
    with pytest.raises(NTPError, match=r"-m benchmarks.page .* failed in .*project: .*No module named"):
        build.write_benchmarks_page(BookTree(elsewhere, layout, None))


def test_the_page_command_refuses_a_tree_that_does_not_exist(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "benchmarks.page", str(tmp_path / "none")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2 and "no output tree" in run.stderr and not (tmp_path / "none").exists()


def test_the_toc_points_at_the_generated_page_and_none_is_committed():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    assert "outputs/benchmarks" in files  # where write_benchmarks_page writes it
    assert not (ROOT / "book" / "benchmarks.md").exists()
    tracked = subprocess.run(["git", "ls-files", "outputs"], cwd=ROOT, capture_output=True, text=True)
    assert tracked.stdout.strip() == ""


def page_text(root) -> str:
    """The text of the built benchmarks page as a reader reads it: tags removed (code blocks are
    highlighted in spans), and the invisible word joiners that keep punctuation by its code."""
    page = (root / "_build" / "html" / "outputs" / "benchmarks.html").read_text()
    return html.unescape(re.sub(r"<[^>]+>", "", page)).replace(WORD_JOINER, "")


@pytest.mark.slow
def test_the_book_without_benchmark_results_says_none_were_run(built_book):
    page = page_text(built_book)
    assert "No benchmark has been run" in page
    assert BENCHMARKS_COMMAND in page


@pytest.mark.slow
def test_the_book_builds_with_benchmark_results(book_copy):
    out = book_copy / "outputs" / "benchmarks"
    cmd = [sys.executable, "-m", "benchmarks", "--sizes", "20,5,25,3", "--skip-lp", "--out", str(out)]
    cmd += ["--attention-trials", "2", "--attention-iters", "50"]
    cmd += ["--path-sizes", "20,5,25,3", "--attention-svm-sizes", "6,8,6,4"]
    cmd += ["--training-iterations", "10", "20", "--training-m", "4", "6", "--training-n", "4", "6"]
    cmd += ["--joint-chars", "20", "--joint-lp-chars", "20", "--joint-w-star-chars", "50"]
    cmd += ["--joint-scale-chars", "50"]  # the default prefixes take minutes
    run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert (out / "benchmarks.json").is_file()
    proc = build_book(book_copy, "--no-pdf")  # the suite's book has the PDF (test_browser)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "WARNING" not in proc.stdout + proc.stderr
    html_page = (book_copy / "_build" / "html" / "outputs" / "benchmarks.html").read_text()
    assert "<table" in html_page
    for stem in ("scaling_ntp_svm", "scaling_regularization_path", "scaling_graph_svm"):
        assert (out / f"{stem}.png").is_file()
        assert re.search(rf'<img[^>]+src="[^"]*{stem}\.png"', html_page), stem  # the figure, shown
    page = page_text(book_copy)
    assert "No benchmark has been run" not in page
    assert "(20, 5, 25, 3)" in page
    assert "fitted exponent" in page
    assert "Attention training" in page
    for section in (
        "Regularization path",
        "Graph-SVM",
        "Cyclic correction W^cyc",
        "Training, Paper A: iterations",
        "Training, Paper B: samples n",
        "Fitted cost growth",
        "joint problem of App. C",
        "machine of this run",
        "Notebook reproduction times",
    ):
        assert f"{section}" in page
    assert "Not measured in this run: separability (--skip-lp)" in page  # code, not smart-quoted


def test_a_benchmark_run_records_its_platform_and_the_page_shows_it(tmp_path, monkeypatch):
    """The page shows the machine the benchmark ran on (recorded by that run), not the builder's."""
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    layout = output_tree(tmp_path / "outputs")
    skip = ["--skip-lp", "--skip-regpath", "--skip-attention-svm", "--skip-attention", "--skip-training"]
    skip += ["--skip-joint"]
    cmd = [sys.executable, "-m", "benchmarks", "--sizes", "3,5,4,2", *skip, "--out", str(layout.benchmarks)]
    # the threads unset, as on a reader's machine: python -m benchmarks then sets one (a value the
    # caller sets is kept)
    threads = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
    env = {k: v for k, v in os.environ.items() if k not in threads} | {"OPENBLAS_CORETYPE": "Prescott"}
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, capture_output=True, timeout=300)
    recorded = json.loads((layout.benchmarks / "benchmarks.json").read_text())["platform"]
    assert recorded["openblas_coretype"] == "Prescott"
    assert recorded["thread_env"]["OPENBLAS_NUM_THREADS"] == "1"  # python -m benchmarks sets it
    blas = [lib for lib in recorded["threadpools"] if lib["user_api"] == "blas"]
    assert blas and all(lib["num_threads"] == 1 for lib in blas)
    page = write_benchmarks_page(layout).read_text()
    section = page.split("## Platform\n", 1)[1]
    assert format_platform(recorded) in section
    assert "| `OPENBLAS_CORETYPE` | Prescott |" in section
    for lib in blas:
        assert f"`{lib['file']}`" in section and f"kernel {lib['architecture']}" in section
