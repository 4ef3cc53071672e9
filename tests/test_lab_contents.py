"""The contents manager of JupyterLab and Binder (:mod:`ntpnb.lab`): a save never changes a chapter."""

from __future__ import annotations

import difflib
import json

import jupytext
import pytest
from tornado.web import HTTPError

from ntpnb.chapter import glue_text, glued
from ntpnb.errors import InvalidDataError
from ntpnb.lab import FOLDED_TAGS, ORIGIN_KEY, ChapterContentsManager, book_glue, kernel_metadata
from ntpnb.records._cache import package_fingerprint
from ntpnb.records._files import file_digest

from conftest import ROOT
from fake_notebooks import fake_notebook

#: The most code lines a chapter shows when it opens in JupyterLab (the parameters cell and the few
#: lines the book shows too); tests/test_lab.py counts them in Chromium.
MAX_SHOWN_CODE_LINES = 150


@pytest.fixture
def manager(tmp_path):
    """The manager on a project with one chapter, as ``./run.sh lab`` serves the repository."""
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: x\n")
    (tmp_path / "notebooks" / "01_a.md").write_text(fake_notebook("print(1)", "n = 5  # {int ≥ 1} n\n"))
    return ChapterContentsManager(root_dir=str(tmp_path))


def test_the_project_serves_its_chapters_with_this_manager():
    config = (ROOT / ".jupyter" / "jupyter_server_config.py").read_text()
    assert 'c.ServerApp.contents_manager_class = "ntpnb.lab.ChapterContentsManager"' in config


def test_a_chapter_opens_as_a_read_only_notebook_and_is_never_written(manager, tmp_path):
    source = tmp_path / "notebooks" / "01_a.md"
    before = source.read_bytes()
    model = manager.get("notebooks/01_a.md", type="notebook")
    assert model["type"] == "notebook" and model["writable"] is False  # JupyterLab: no save, no autosave
    assert [m["writable"] for m in manager.get("notebooks")["content"]] == [False]
    (cell,) = [c for c in model["content"].cells if "parameters" in c.metadata.get("tags", [])]
    cell.source = cell.source.replace("n = 5", "n = 2")  # an edited parameter
    for attempt in (
        lambda: manager.save(model, "notebooks/01_a.md"),
        lambda: manager.save(model, "/notebooks/01_a.md"),
        lambda: manager.save(model, "notebooks/01_a-Copy1.md"),  # a new source would be a chapter
        lambda: manager.rename_file("notebooks/01_a.md", "notebooks/01_b.md"),
        lambda: manager.delete_file("notebooks/01_a.md"),
        lambda: manager.copy("notebooks/01_a.md", "notebooks"),
    ):
        with pytest.raises(HTTPError) as refused:
            attempt()
        assert refused.value.status_code == 403
        assert "which the book runs: JupyterLab does not" in refused.value.log_message
        assert "File > Save Notebook As… my-notebooks/01_a" in refused.value.log_message
    assert source.read_bytes() == before and sorted(p.name for p in source.parent.iterdir()) == ["01_a.md"]
    # the reader's copy: saved under my-notebooks/, made on the first save, and writable
    saved = manager.save(model, "my-notebooks/01_a.md")
    assert saved["writable"] is True and "n = 2" in (tmp_path / "my-notebooks" / "01_a.md").read_text()


def test_an_author_may_edit_the_chapters(tmp_path, manager):
    manager.chapters_read_only = False
    model = manager.get("notebooks/01_a.md", type="notebook")
    assert model["writable"] is True
    manager.save(model, "notebooks/01_a.md")


@pytest.fixture
def project(tmp_path):
    """A copy of the project's chapters, served as ``./run.sh lab`` serves the repository."""
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: x\n")
    (tmp_path / "notebooks").mkdir()
    for source in sorted((ROOT / "notebooks").glob("*.md")):
        (tmp_path / "notebooks" / source.name).write_bytes(source.read_bytes())
    return tmp_path


def _code_cells(model: dict) -> list[dict]:
    return [c for c in model["content"]["cells"] if c["cell_type"] == "code"]


def test_a_chapter_opens_with_the_code_the_book_folds_collapsed_and_its_parameters_open(project):
    manager = ChapterContentsManager(root_dir=str(project))
    for source in sorted((project / "notebooks").glob("*.md")):
        cells = _code_cells(manager.get(f"notebooks/{source.name}", type="notebook"))
        for cell in cells:
            tags = set(cell["metadata"].get("tags", []))
            hidden = cell["metadata"].get("jupyter", {}).get("source_hidden", False)
            assert hidden == bool(tags & FOLDED_TAGS and "parameters" not in tags), (source.name, tags)
        shown = sum(len(c["source"].splitlines()) for c in cells if not c["metadata"].get("jupyter"))
        assert 0 < shown <= MAX_SHOWN_CODE_LINES, (source.name, shown)  # the parameters cell, at least


def test_a_chapters_glue_opens_as_inline_expressions_and_is_saved_as_the_books_roles_again(project):
    manager = ChapterContentsManager(root_dir=str(project), chapters_read_only=False)
    for source in sorted((project / "notebooks").glob("*.md")):
        model = manager.get(f"notebooks/{source.name}", type="notebook")
        prose = "".join(c["source"] for c in model["content"]["cells"] if c["cell_type"] == "markdown")
        assert "{glue" not in prose and '{eval}`glued("' in prose, source.name
        manager.save(model, f"notebooks/{source.name}")  # an author's save: the cells as they were
        saved, before = (jupytext.read(path) for path in (source, ROOT / "notebooks" / source.name))
        assert [(c.source, c.metadata) for c in saved.cells] == [(c.source, c.metadata) for c in before.cells]


def test_an_expression_of_a_name_glued_in_the_kernel_shows_its_text_and_an_unknown_one_says_so():
    glue_text("t_number", "0.123")
    assert repr(glued("t_number")) == "0.123" and glued("t_number", markdown=True).data == "0.123"
    with pytest.raises(InvalidDataError, match="nothing is glued under 'missing' yet"):
        glued("missing")


def _book_run(project, name: str, glued_texts: dict[str, str], **record) -> None:
    """A book's run of the chapter ``name`` in ``project/outputs``: its executed notebook and timings."""
    outputs = project / "outputs"
    (outputs / "notebooks").mkdir(parents=True, exist_ok=True)
    prefix = "application/papermill.record/"
    outputs_ = [
        {
            "output_type": "display_data",
            "data": {f"{prefix}text/plain": repr(text)},
            "metadata": {"scrapbook": {"name": name, "mime_prefix": prefix}},
        }
        for name, text in glued_texts.items()
    ]
    executed = {"cells": [{"cell_type": "code", "source": "", "metadata": {}, "outputs": outputs_}]}
    (outputs / "notebooks" / f"{name}.ipynb").write_text(json.dumps(executed))
    entry = {"ok": True, "source": file_digest(project / "notebooks" / f"{name}.md")}
    entry["package"] = package_fingerprint()
    (outputs / "timings.json").write_text(json.dumps({"paper": {name: {**entry, **record}}}))


def test_the_prose_shows_the_books_numbers_only_from_a_run_of_this_source_and_package(project):
    name = "03_gd_implicit_bias"
    source = project / "notebooks" / f"{name}.md"
    _book_run(project, name, {"par_toy_lr": "0.5", "par_toy_iters": "100000"})
    assert book_glue(source) == {"par_toy_lr": "0.5", "par_toy_iters": "100000"}
    manager = ChapterContentsManager(root_dir=str(project))
    cells = manager.get(f"notebooks/{name}.md", type="notebook")["content"]["cells"]
    shown = [e for c in cells for e in c["metadata"].get("user_expressions", [])]
    assert {e["expression"]: e["result"]["data"]["text/plain"] for e in shown} == {
        'glued("par_toy_lr")': "0.5",
        'glued("par_toy_iters")': "100000",
    }
    for stale in ({"source": "0" * 64}, {"package": "0" * 64}, {"ok": False}):
        _book_run(project, name, {"par_toy_lr": "0.5"}, **stale)
        assert book_glue(source) == {}, stale
    source.write_text(source.read_text() + "\n")  # the source changed since the book's run
    _book_run(project, name, {"par_toy_lr": "0.5"})
    source.write_text(source.read_text() + "\n")
    assert book_glue(source) == {}


def _edited(model: dict, old: str, new: str) -> dict:
    """``model`` (a notebook's) with ``old`` replaced by ``new`` in its parameters cell."""
    (cell,) = [c for c in model["content"]["cells"] if "parameters" in c["metadata"].get("tags", [])]
    assert old in cell["source"]
    cell["source"] = cell["source"].replace(old, new, 1)
    return model


def _changed_lines(a: str, b: str) -> list[str]:
    """The lines ``difflib`` finds removed from ``a`` or added in ``b``."""
    diff = difflib.unified_diff(a.splitlines(), b.splitlines(), n=0, lineterm="")
    return [line for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def test_a_copy_differs_from_its_chapter_only_in_what_the_reader_changed(project):
    manager = ChapterContentsManager(root_dir=str(project))
    for source in sorted((project / "notebooks").glob("*.md")):
        model = manager.get(f"notebooks/{source.name}", type="notebook")
        first = next(line for line in _parameter_lines(model) if "=" in line)
        manager.save(_edited(model, first, f"{first}  # mine"), f"my-notebooks/{source.name}")
        copy = (project / "my-notebooks" / source.name).read_text(encoding="utf-8")
        assert _changed_lines(source.read_text(encoding="utf-8"), copy) == [f"-{first}", f"+{first}  # mine"]
        # saved again after another edit: the copy as it was is the text kept
        model = manager.get(f"my-notebooks/{source.name}", type="notebook")
        manager.save(
            _edited(model, f"{first}  # mine", f"{first}  # mine, twice"), f"my-notebooks/{source.name}"
        )
        again = (project / "my-notebooks" / source.name).read_text(encoding="utf-8")
        assert _changed_lines(copy, again) == [f"-{first}  # mine", f"+{first}  # mine, twice"]


def _parameter_lines(model: dict) -> list[str]:
    (cell,) = [c for c in model["content"]["cells"] if "parameters" in c["metadata"].get("tags", [])]
    return cell["source"].splitlines()


def test_a_copy_keeps_the_outputs_of_its_run_and_shows_its_glued_numbers_when_reopened(project):
    manager = ChapterContentsManager(root_dir=str(project))
    name = "03_gd_implicit_bias"
    model = manager.get(f"notebooks/{name}.md", type="notebook")
    assert model["content"]["metadata"][ORIGIN_KEY] == {"source": f"notebooks/{name}.md"}
    code = [c for c in model["content"]["cells"] if c["cell_type"] == "code"]
    prefix = "application/papermill.record/"
    code[0]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "toy_lr=2.0\n"}]
    code[1]["outputs"] = [
        {
            "output_type": "display_data",
            "data": {f"{prefix}text/plain": repr("2")},
            "metadata": {"scrapbook": {"name": "par_toy_lr", "mime_prefix": prefix}},
        }
    ]
    manager.save(_edited(model, "toy_lr = 0.5", "toy_lr = 2.0"), f"my-notebooks/{name}.md")
    assert (project / "my-notebooks" / f"{name}.ipynb").is_file()  # the outputs, beside the copy
    for saved in ("md", "ipynb"):  # the origin is the server's note, not the reader's
        assert ORIGIN_KEY not in jupytext.read(project / "my-notebooks" / f"{name}.{saved}").metadata
    reopened = manager.get(f"my-notebooks/{name}.md", type="notebook")["content"]
    code = [c for c in reopened["cells"] if c["cell_type"] == "code"]
    assert code[0]["outputs"][0]["text"] == "toy_lr=2.0\n"
    shown = {
        e["expression"]: e["result"]["data"]["text/plain"]
        for c in reopened["cells"]
        for e in c["metadata"].get("user_expressions", [])
    }
    assert shown == {'glued("par_toy_lr")': "2"}


def test_a_chapter_opens_with_the_metadata_its_kernel_sets_so_that_it_opens_unchanged(manager):
    metadata = manager.get("notebooks/01_a.md", type="notebook")["content"]["metadata"]
    expected = kernel_metadata("python3")
    assert expected["kernelspec"]["display_name"] and expected["language_info"]["name"] == "python"
    assert {k: metadata[k] for k in expected} == expected
