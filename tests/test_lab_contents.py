"""The contents manager of JupyterLab and Binder (:mod:`ntpnb.lab`): a save never changes a chapter."""

from __future__ import annotations

import pytest
from tornado.web import HTTPError

from ntpnb.lab import ChapterContentsManager

from conftest import ROOT
from fake_notebooks import fake_notebook


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
