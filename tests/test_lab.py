"""``./run.sh lab``: JupyterLab on the project, where notebooks/*.md open as notebooks.

The server is started with the README's command (in the set-up's environment, which must be
the one running the tests: ``./run.sh test`` runs them there), then asked through its REST API
whether it reads a MyST source as a notebook (jupytext's contents manager) and opens it with the
notebook editor (the default viewers of the project's settings, which Binder reads too); then
the source is opened in headless Chromium as a reader would, and must show a notebook's cells.
A reader then edits a parameter, runs it, saves and waits past the autosave: the chapter's source
is unchanged (``git diff`` empty), and *Save Notebook As…* keeps the edit in ``my-notebooks/``.

The server reads a copy of the project's JupyterLab settings (``JUPYTERLAB_SETTINGS_DIR``) with an
autosave every :data:`AUTOSAVE_SECONDS`, so that the test waits past one, not two minutes.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import warnings
from pathlib import Path

import pytest
from book.test_browser import browser, save_screenshot  # noqa: F401 (the fixture)

from conftest import ROOT

pytestmark = pytest.mark.slow

SOURCE = "notebooks/01_entropy_separability.md"
#: The chapter the reader edits, and the line of its parameters cell (the issue's example).
EDITED, PARAMETER = "notebooks/03_gd_implicit_bias.md", "toy_lr = 0.5"
#: That line, as the chapter has it.
PARAMETER_LINE = "toy_lr = 0.5  # {float > 0} GD step on the 2D example (Fig. 1)"
_ACTIVE_EDITOR = ".jp-NotebookPanel .jp-Notebook.jp-mod-editMode .jp-Cell.jp-mod-active .cm-editor"
#: JupyterLab's autosave interval in the test's copy of the settings (the default is 120 s).
AUTOSAVE_SECONDS = 3


#: The text each prose cell in view shows rendered ('' while its source shows, or while its
#: rendering is yet to come).
_PROSE_IN_VIEW = """() => Array.from(document.querySelectorAll('.jp-NotebookPanel .jp-MarkdownCell'))
    .filter(c => { const r = c.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; })
    .map(c => { const e = c.querySelector('.jp-InputArea-editor');
                if (e && !e.classList.contains('lm-mod-hidden')) return '';
                return Array.from(c.querySelector('.jp-Cell-inputArea').children)
                  .filter(x => !x.matches('.jp-InputArea-editor, .jp-InputPrompt, .jp-Toolbar'))
                  .map(x => x.textContent).join(' ').trim(); })"""
#: Whether every prose cell in view shows its rendered text.
_IN_VIEW_RENDERED = (
    f"""() => {{ const shown = ({_PROSE_IN_VIEW})(); return shown.length && shown.every(t => t); }}"""
)
#: The code lines each code cell of the notebook in view shows: 0 when collapsed, else its editor's
#: lines (CodeMirror's document; -1 for a cell not drawn yet).
_CODE_LINES_SHOWN = """() => Array.from(document.querySelectorAll(
    '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell'))
  .map(c => {
    if (c.querySelector('.jp-InputPlaceholder')) return 0;
    const content = c.querySelector('.jp-Cell-inputArea .cm-content');
    return content && content.cmView ? content.cmView.view.state.doc.lines : -1; })"""
#: Whether the notebook in view is the file at ``path`` with its ``nCode`` code cells all drawn.
_DRAWN = f"""([path, nCode]) => {{ const n = ({_CODE_LINES_SHOWN})();
    const widget = window.jupyterapp.shell.currentWidget;
    const opened = widget && widget.context && widget.context.path === path;
    return opened && n.length == nCode && !n.includes(-1); }}"""
#: Whether the document in view is the file at ``path``.
_OPENED = """(path) => { const widget = window.jupyterapp.shell.currentWidget;
    return !!(widget && widget.context) && widget.context.path === path; }"""
#: Whether the notebook in view has run its ``n``-th code cell as its ``n``-th execution.
_RAN = """(n) => { const cells = window.jupyterapp.shell.currentWidget.content.widgets
    .filter(c => c.model.type === 'code'); return cells[n - 1].model.executionCount === n; }"""
#: The most code lines a chapter shows when it opens in JupyterLab: its parameters cell and the few
#: lines the book shows too (tests/test_lab_contents.py checks the same in the served notebook).
MAX_SHOWN_CODE_LINES = 150
#: MyST syntax that shows only where the prose is not rendered as MyST.
RAW_MYST = ("{prf:", "{glue", ":label:", "```")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A running ``./run.sh lab``: its URL and token."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token

    def get(self, path: str, method: str = "GET") -> dict:
        request = urllib.request.Request(
            f"{self.url}{path}", headers={"Authorization": f"token {self.token}"}, method=method
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read()
        return json.loads(body) if body else {}

    def shut_down_kernels(self, timeout: float = 10) -> None:
        """Shut down the kernels the tests started, each once it has started.

        Stopping the server while a kernel starts (it opens with the notebook) interrupts the
        kernel's start, and the server can then wait past any timeout for a kernel that died. A
        kernel whose browser tab closed before it connected stays "starting" for good: after
        ``timeout`` it is shut down as it is (the fixture's SIGTERM, then SIGKILL, ends the rest).
        """
        deadline = time.monotonic() + timeout
        for kernel in self.get("/api/kernels"):
            path = f"/api/kernels/{kernel['id']}"
            while self.get(path)["execution_state"] == "starting" and time.monotonic() < deadline:
                time.sleep(0.2)
            self.get(path, method="DELETE")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    venv = Path(sys.prefix)
    if not (venv / ".ntpnb-installed").is_file():
        pytest.skip(f"the tests do not run in an environment ./run.sh set up ({venv})")
    port, token = _free_port(), secrets.token_hex(8)
    folder = tmp_path_factory.mktemp("lab")
    log, settings = folder / "lab.log", folder / "user-settings"
    shutil.copytree(ROOT / ".jupyter" / "lab" / "user-settings", settings)
    docmanager = settings / "@jupyterlab" / "docmanager-extension" / "plugin.jupyterlab-settings"
    values = json.loads("".join(line for line in docmanager.read_text().splitlines() if "//" not in line))
    docmanager.write_text(json.dumps({**values, "autosaveInterval": AUTOSAVE_SECONDS}))
    # every cell drawn at once, so that a test reads each (a reader's JupyterLab draws those in view)
    tracker = settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True, exist_ok=True)
    tracker.write_text(json.dumps({"windowingMode": "none"}))
    cmd = ["./run.sh", "lab", "--no-browser", f"--port={port}", f"--IdentityProvider.token={token}"]
    cmd.append("--LabApp.expose_app_in_browser=True")  # window.jupyterapp: open each chapter in one page
    env = {  # its own settings and workspace: a tab left open by an earlier session is not restored
        **os.environ,
        "NTPNB_VENV": str(venv),
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTERLAB_WORKSPACES_DIR": str(folder / "workspaces"),
    }
    with open(log, "w") as out:
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = Lab(f"http://127.0.0.1:{port}", token)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                server.get("/api/status")
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"./run.sh lab did not start:\n{log.read_text()[-3000:]}")
                time.sleep(0.5)
        yield server
        server.shut_down_kernels()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            # Jupyter Server itself can hang in its extensions' shutdown after SIGTERM (seen once
            # in a full run: "Shutting down 5 extensions", still alive 30 s later) once the
            # browser's websockets closed; not ntpnb's code: the fixture owes no process left.
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            tail = log.read_text()[-1500:]
            warnings.warn(f"JupyterLab outlived SIGTERM by 30 s; killed:\n{tail}", stacklevel=1)


def test_the_server_reads_a_myst_source_as_a_notebook(lab):
    model = lab.get(f"/api/contents/{SOURCE}?type=notebook")
    assert model["type"] == "notebook"
    cells = model["content"]["cells"]
    assert any(c["cell_type"] == "code" and "parameters" in c["metadata"].get("tags", []) for c in cells)


def test_markdown_and_myst_files_open_with_the_notebook_editor(lab):
    settings = lab.get("/lab/api/settings/@jupyterlab/docmanager-extension:plugin")["settings"]
    assert settings["defaultViewers"] == {"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"}


def open_alone(page, lab, path: str) -> None:
    """Open ``path`` in JupyterLab in a workspace of its own, empty: no tab another test left open
    in the shared server's default workspace is restored beside it."""
    workspace = f"alone-{secrets.token_hex(4)}"
    page.goto(f"{lab.url}/lab/workspaces/{workspace}/tree/{path}?reset&token={lab.token}")


def test_a_reader_opening_the_source_sees_a_notebook(lab, browser):  # noqa: F811
    n_cells = len(lab.get(f"/api/contents/{SOURCE}?type=notebook")["content"]["cells"])
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        open_alone(page, lab, SOURCE)
        page.wait_for_selector(".jp-NotebookPanel .jp-Cell.jp-CodeCell", timeout=90_000)
        # JupyterLab adds the cells as it renders them: wait for all of the notebook's
        cells = ".jp-NotebookPanel .jp-Cell"
        shown = f"() => document.querySelectorAll('{cells}').length >= {n_cells}"
        page.wait_for_function(shown, timeout=90_000)
        assert n_cells > 10 and page.locator(cells).count() == n_cells
        assert page.locator(".jp-FileEditor").count() == 0  # not opened as a text file
        # the prose in view renders as MyST (jupyterlab-myst): its theorems in boxes, no syntax as text
        page.wait_for_function(_IN_VIEW_RENDERED, timeout=60_000)
        prose = " ".join(page.evaluate(_PROSE_IN_VIEW))
        assert not [syntax for syntax in RAW_MYST if syntax in prose], prose
        assert re.search(r"(Definition|Lemma|Theorem|Proposition|Assumption) +\(Paper [AB]", prose)
        # the code the book folds is collapsed: the parameters cell's first line shows, a check's does not
        assert page.locator(".jp-NotebookPanel .cm-line", has_text='profile = "paper"').count() == 1
        assert page.locator(".jp-NotebookPanel .jp-InputPlaceholder").count() > 0
        save_screenshot(page, "jupyterlab")
        # it opens clean, its kernel started: closing it untouched asks nothing
        page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=90_000)
        assert page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.dirty") is False
        page.evaluate("() => window.jupyterapp.commands.execute('application:close')")
        page.wait_for_function(f"() => !document.querySelector('{cells}')", timeout=30_000)
        page.wait_for_timeout(1000)  # a question would have come by now
        assert page.locator(".jp-Dialog").count() == 0
    finally:
        page.close()


def git(*args: str, check: bool = True) -> str:
    """The output of ``git ARGS`` in the repository."""
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=check).stdout


@pytest.fixture
def copy_path():
    """A path under my-notebooks/ for the reader's copy, removed afterwards with its checkpoint (and the
    folder, if the test made it)."""
    folder = ROOT / "my-notebooks"
    existed = folder.exists()
    copy = folder / f"03_gd_implicit_bias-{secrets.token_hex(4)}.md"
    yield copy
    if not existed:
        shutil.rmtree(folder, ignore_errors=True)
    checkpoints = folder / ".ipynb_checkpoints"
    for path in (copy, copy.with_suffix(".ipynb"), *checkpoints.glob(f"{copy.stem}-checkpoint.*")):
        path.unlink(missing_ok=True)


def test_a_parameter_edited_run_and_saved_in_jupyterlab_never_changes_the_chapter(lab, browser, copy_path):  # noqa: F811
    source = ROOT / EDITED
    before, status = source.read_bytes(), git("status", "--porcelain", "--", EDITED)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        open_alone(page, lab, EDITED)
        page.wait_for_selector(".jp-NotebookPanel .jp-Cell.jp-CodeCell", timeout=90_000)
        label = page.locator(".jp-NotebookPanel .jp-ToolbarLabelComponent", has_text="notebook is read-only")
        label.wait_for(timeout=90_000)  # JupyterLab shows the source read-only, and never autosaves it
        page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=90_000)  # its kernel started
        page.get_by_text("File", exact=True).click()  # the menu says what the README says
        page.locator(".lm-Menu-itemLabel", has_text="Save Notebook As…").wait_for(timeout=30_000)
        page.keyboard.press("Escape")
        # edit the parameter, as the README says, and run its cell
        page.locator(".jp-NotebookPanel .cm-line", has_text=PARAMETER).first.click()
        # keys go to the cell's editor only once it has focus (in command mode they would be
        # shortcuts: "y" makes a code cell, "2" a heading), so wait for it, and for the edit
        page.wait_for_selector(f"{_ACTIVE_EDITOR}.cm-focused", timeout=30_000)
        page.keyboard.press("End")
        page.keyboard.press("Shift+Home")
        page.keyboard.type("toy_lr = 2.0")
        page.locator(f"{_ACTIVE_EDITOR} .cm-line", has_text="toy_lr = 2.0").wait_for(timeout=30_000)
        page.keyboard.press("Shift+Enter")
        page.wait_for_selector(".jp-NotebookPanel .jp-InputPrompt:has-text('[1]')", timeout=90_000)
        for n in (2, 3):  # and the set-up cells after it (collapsed), which glue the parameters for the prose
            page.keyboard.press("Shift+Enter")
            page.wait_for_function(_RAN, arg=n, timeout=120_000)
        page.keyboard.press("Control+s")  # JupyterLab says where a save goes instead
        toast = page.locator(".Toastify__toast", has_text=f'{EDITED} is read-only. Use "Save as…" instead.')
        toast.wait_for(timeout=30_000)
        page.wait_for_timeout(3 * AUTOSAVE_SECONDS * 1000)  # past the autosave, which skips it
        assert source.read_bytes() == before
        assert git("status", "--porcelain", "--", EDITED) == status
        if not status:  # a clean checkout (CI, a reader's clone): git sees no change at all
            assert git("diff", "--", EDITED) == ""
        # Save As proposes the reader's own folder, which git ignores, and keeps the edit there
        page.keyboard.press("Control+Shift+s")
        field = page.locator(".jp-Dialog input")
        field.wait_for(timeout=30_000)
        page.wait_for_function(
            "() => document.querySelector('.jp-Dialog input').value.startsWith('my-notebooks/')",
            timeout=30_000,
        )
        assert field.input_value() == f"my-notebooks/{source.name}"
        field.fill(copy_path.relative_to(ROOT).as_posix())
        page.keyboard.press("Enter")
        # the copy opens in the chapter's place, nothing asked: the edit is in the copy
        page.wait_for_function(_OPENED, arg=copy_path.relative_to(ROOT).as_posix(), timeout=30_000)
        assert page.locator(".jp-Dialog").count() == 0
        deadline = time.monotonic() + 30
        while not copy_path.is_file() and time.monotonic() < deadline:
            time.sleep(0.2)
        # the copy differs from the chapter only in the line the reader changed
        diff = git("diff", "--no-index", "--unified=0", "--", EDITED, str(copy_path), check=False)
        changed = [line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
        assert changed == [f"-{PARAMETER_LINE}", "+toy_lr = 2.0"], diff
        assert git("status", "--porcelain", "--ignored", "--", str(copy_path)).startswith("!! ")
        assert source.read_bytes() == before
        save_screenshot(page, "jupyterlab-saved-copy")
    finally:
        page.close()
    reopened_copy_shows_its_run(lab, browser, copy_path)


def reopened_copy_shows_its_run(lab, browser, copy_path) -> None:  # noqa: F811
    """The copy, opened again: the outputs of the run on screen, and its numbers in the prose."""
    path = copy_path.relative_to(ROOT).as_posix()
    served = lab.get(f"/api/contents/{path}?type=notebook")["content"]["cells"]
    glued = {
        e["expression"]: e["result"]["data"]["text/plain"]
        for c in served
        for e in c["metadata"].get("user_expressions", [])
    }
    assert glued.get('glued("par_toy_lr")') == "2", glued  # the reader's value, not the book's
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        open_alone(page, lab, path)
        page.wait_for_selector(".jp-NotebookPanel .jp-Cell.jp-CodeCell", timeout=90_000)
        setting = page.locator(".jp-NotebookPanel .jp-CodeCell").nth(1)  # the cell that prints the run's
        setting.locator(".jp-OutputArea-output").first.wait_for(timeout=60_000)
        assert "Set here: toy_lr=2." in setting.locator(".jp-OutputArea").inner_text()
        prose = page.locator(".jp-NotebookPanel .jp-MarkdownCell", has_text="(toy_lr)").first
        prose.wait_for(timeout=60_000)
        assert "= 2 (toy_lr)" in " ".join(prose.inner_text().split()), prose.inner_text()
    finally:
        page.close()


def test_every_chapter_opens_with_at_most_150_lines_of_code_in_view(lab, browser):  # noqa: F811
    sources = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "notebooks").glob("*.md"))
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    shown = {}
    try:
        # a workspace of its own, empty: no tab of the other tests restored
        page.goto(f"{lab.url}/lab/workspaces/chapters-{secrets.token_hex(4)}?reset&token={lab.token}")
        page.wait_for_function("() => window.jupyterapp && window.jupyterapp.started", timeout=90_000)
        for source in sources:  # each opened as a reader opens it (the notebook editor), in turn
            cells = lab.get(f"/api/contents/{source}?type=notebook")["content"]["cells"]
            n_code = sum(c["cell_type"] == "code" for c in cells)
            page.evaluate(
                "(path) => { window.jupyterapp.commands.execute('docmanager:open', {path}); }", source
            )
            page.wait_for_function(_DRAWN, arg=[source, n_code], timeout=180_000)
            shown[source] = sum(page.evaluate(_CODE_LINES_SHOWN))
    finally:
        page.close()
    print("code lines shown when a chapter opens:", shown)
    # the parameters cell open, the bookkeeping folded
    assert all(0 < lines <= MAX_SHOWN_CODE_LINES for lines in shown.values()), shown
