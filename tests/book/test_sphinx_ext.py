"""The book-build check that refuses notebooks with errors or stderr output."""

from __future__ import annotations

import json

from ntpnb.book.sphinx_ext import notebook_problems


def write(tmp_path, outputs, metadata=None, source="x"):
    nb = {
        "cells": [{"cell_type": "code", "source": source, "metadata": {}, "outputs": outputs}],
        "metadata": metadata or {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(nb))
    return path


def test_clean_notebook_has_no_problems(tmp_path):
    path = write(tmp_path, [{"output_type": "stream", "name": "stdout", "text": "ok\n"}])
    assert notebook_problems(path) == []


def test_error_output_is_a_problem(tmp_path):
    error = {"output_type": "error", "ename": "ClaimCheckError", "evalue": "A2 failed", "traceback": []}
    (problem,) = notebook_problems(write(tmp_path, [error]))
    assert "cell 0 raised ClaimCheckError: A2 failed" in problem


def test_stderr_output_is_a_problem(tmp_path):
    warning = {"output_type": "stream", "name": "stderr", "text": "RuntimeWarning: overflow\n"}
    (problem,) = notebook_problems(write(tmp_path, [warning]))
    assert "stderr" in problem and "overflow" in problem


def test_papermill_exception_flag_is_a_problem(tmp_path):
    path = write(tmp_path, [], metadata={"papermill": {"exception": True}})
    assert notebook_problems(path) == ["papermill recorded an exception during execution"]


def test_the_concluding_list_of_failed_checks_is_no_problem(tmp_path):
    error = {"output_type": "error", "ename": "ClaimCheckError", "evalue": "2 checks failed", "traceback": []}
    flag = {"papermill": {"exception": True}}
    assert notebook_problems(write(tmp_path, [error], flag, source="claims.conclude()\n")) == []
    other = {"output_type": "error", "ename": "ValueError", "evalue": "bad", "traceback": []}
    problems = notebook_problems(write(tmp_path, [other], flag, source="claims.conclude()"))
    assert problems == ["papermill recorded an exception during execution", "cell 0 raised ValueError: bad"]


def test_a_figure_without_caption_or_alt_text_is_a_problem(tmp_path):
    image = {"output_type": "display_data", "data": {"image/png": ""}, "metadata": {}}
    source = 'show_figure(fig, "a1_gap", layout)'
    problems = notebook_problems(write(tmp_path, [image], source=source))
    assert problems == [
        "cell 0 shows a figure: no caption (cell metadata mystnb.figure.caption)",
        "cell 0 shows a figure: no name (cell metadata mystnb.figure.name)",
        "cell 0 shows a figure: no alt text (cell metadata mystnb.image.alt)",
    ]
