"""A chapter run as JupyterLab runs it (its own parameters, no runner) leaves the book's outputs alone."""

from __future__ import annotations

import hashlib
import json

import jupytext
import pytest

from ntpnb.chapter import _parameters as parameters
from ntpnb.chapter._parameters import PROJECT_VAR
from ntpnb.runner import reproduce

from fake_notebooks import fake_notebook

pytestmark = pytest.mark.slow

CELL = """\
seed = 0  # {int ≥ 0} the seed
n = 50  # {int ≥ 1} samples
"""
SETUP = """\
from ntpnb.chapter import _parameters as parameters, chapter_parameters

parameters.CHANGES["07_fake"] = {"quick": {"n": 5}}  # the fake chapter's quick profile

globals().update(chapter_parameters("07_fake", globals()))
"""
BODY = """\
from ntpnb.chapter import ClaimLog, output_tree

layout = output_tree(output_dir)
claims = ClaimLog("07_fake", profile, output_dir, seed=seed)
(layout.figures / "07_fake.png").write_bytes(bytes([n % 256]) * n)
claims.check("A1", "n is positive", n, ">", 0)
print("n =", n)
claims.conclude()
"""


def lab_notebook(profile: str) -> str:
    """A chapter as the book's are: its parameters cell, the cell that checks them, its body."""
    text = fake_notebook(BODY, CELL)
    text = text.replace('profile = "paper"', f'profile = "{profile}"  # {{"paper" | "quick"}} the profile')
    return text.replace(
        "```\n\n```{code-cell} ipython3\n",
        f"```\n\n```{{code-cell}} ipython3\n{SETUP}```\n\n```{{code-cell}} ipython3\n",
        1,
    )


def digests(folder):
    """SHA-256 of every file under ``folder`` but the trees of other runs (``runs/``)."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.relative_to(folder).parts[0] != "runs"
    }


@pytest.mark.parametrize("profile", ["paper", "quick"])
def test_a_chapter_run_as_jupyterlab_runs_it_leaves_the_books_outputs_byte_identical(
    tmp_path, monkeypatch, profile
):
    import papermill

    root = tmp_path / "project"
    (root / "notebooks").mkdir(parents=True)
    (root / "_toc.yml").write_text("format: jb-book\nroot: x\n")
    source = root / "notebooks" / "07_fake.md"
    source.write_text(lab_notebook("paper"))
    monkeypatch.setattr(parameters, "CHANGES", {"07_fake": {"quick": {"n": 5}}})
    reproduce(root, profile="paper", seeds=1, log=lambda line: None)  # the book's own run
    book = root / "outputs"
    before = digests(book)
    assert "claims/07_fake.json" in before and "figures/07_fake.png" in before

    # as JupyterLab runs it: the source with its own values (here the profile edited in the cell),
    # in the notebook's folder, without the runner's environment or injected parameters
    source.write_text(lab_notebook(profile))
    monkeypatch.delenv(PROJECT_VAR, raising=False)
    executed = tmp_path / "lab.ipynb"
    papermill.execute_notebook(
        jupytext.read(source), str(executed), cwd=str(root / "notebooks"), kernel_name="python3",
        progress_bar=False,
    )  # fmt: skip

    assert digests(book) == before
    tree = book / "runs" / "interactive" / f"profile={profile}"
    figure = (tree / "figures" / "07_fake.png").read_bytes()
    assert figure == bytes([50 if profile == "paper" else 5]) * (50 if profile == "paper" else 5)
    assert json.loads((tree / "run.json").read_text())["interactive"] is True
    cells = json.loads(executed.read_text())["cells"]
    first = next(o for c in cells if c["cell_type"] == "code" for o in c.get("outputs", []))
    assert "".join(first["text"]).startswith(f"Interactive run (not ntpnb reproduce) at profile {profile}")
