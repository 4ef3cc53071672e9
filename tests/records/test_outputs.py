"""The run record and output manifests: what ran into a tree, and whether its files are its run's."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from ntpnb.errors import NTPError, PathError
from ntpnb.records._cache import output_digests
from ntpnb.records._commit import SourceCommit, source_commit
from ntpnb.records._manifest import Manifest, chapter_damage, load_manifest, write_manifest
from ntpnb.records._places import output_tree, tree_root
from ntpnb.records._staging import describe_failure, promote
from ntpnb.records._tree import TreeRecord, claim_tree, load_tree_record, write_tree_record


def test_a_run_record_says_what_ran_and_reads_back(tmp_path):
    record = TreeRecord("quick", {"n_g": "121", "seed": "3"}, (3,), ("01_entropy_separability",))
    assert record.describe() == "profile quick with n_g=121, seed=3; seed 3"
    assert TreeRecord("paper", {}, (0, 1, 2, 3, 4)).describe() == "profile paper; seeds 0-4"
    assert TreeRecord("paper", {}, (0, 2, 7)).describe() == "profile paper; seeds 0, 2, 7"
    assert load_tree_record(tmp_path) is None  # no run wrote one
    write_tree_record(tmp_path, record)
    assert load_tree_record(tmp_path) == record


def test_runs_of_one_setting_merge_and_others_do_not_match(tmp_path):
    claim_tree(tmp_path, TreeRecord("paper", {}, (0, 1), ("a",)))
    claim_tree(tmp_path, TreeRecord("paper", {}, (0, 1, 2), ("b",)))
    assert load_tree_record(tmp_path) == TreeRecord("paper", {}, (0, 1, 2), ("a", "b"))
    for other in (TreeRecord("quick", {}, (0,)), TreeRecord("paper", {"n": "1"}, (0,))):
        with pytest.raises(NTPError, match="holds a run of profile paper; seeds 0-2"):
            claim_tree(tmp_path, other)


def test_only_the_books_run_writes_the_books_tree(tmp_path):
    assert tree_root(tmp_path, "paper", {}, None) == (tmp_path / "outputs").resolve()
    for profile, overrides in (("quick", {}), ("paper", {"n": "1"})):
        assert tree_root(tmp_path, profile, overrides, None).parent == tmp_path.resolve() / "outputs" / "runs"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[]", "not a run record"),
        ('{"profile": 1}', "not a run record"),
        ('{"profile": "paper", "seeds": [true]}', "'seeds' is not a list of integers"),
        ('{"profile": "paper", "overrides": {"n": 1}}', "'overrides' is not a mapping"),
        ('{"profile": "paper", "notebooks": "01"}', "'notebooks' is not a list"),
        ('{"profile": "pa', "JSONDecodeError"),
    ],
)
def test_a_damaged_run_record_is_named_in_one_line(tmp_path, text, problem):
    (tmp_path / "run.json").write_text(text)
    with pytest.raises(PathError, match=str(tmp_path / "run.json")) as err:
        load_tree_record(tmp_path)
    assert problem in str(err.value) and "\n" not in str(err.value)


def _chapter(tmp_path):
    """A tree with one chapter's executed copy, claim record and figure, and its manifest."""
    files = {
        "notebooks/c.ipynb": '{"cells": []}',
        "claims/c.json": '{"notebook": "c"}',
        "figures/c_fig.png": "png",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    executed = tmp_path / "notebooks" / "c.ipynb"
    digests = output_digests(tmp_path, [tmp_path / name for name in files])
    write_manifest(executed, Manifest("key", {"seed": 0}, 1.5, digests, "pkg"))
    return executed


def test_a_manifest_reads_back_and_vouches_for_its_outputs(tmp_path):
    executed = _chapter(tmp_path)
    manifest = load_manifest(executed)
    assert manifest.key == "key" and manifest.package == "pkg" and len(manifest.outputs) == 3
    assert chapter_damage(tmp_path, executed) is None


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda root: (root / "claims" / "c.json").unlink(), "claims/c.json is missing"),
        (lambda root: (root / "figures" / "c_fig.png").write_text("other"), "figures/c_fig.png differs"),
        (lambda root: (root / "notebooks" / "c.ipynb").write_text("[]"), "notebooks/c.ipynb differs"),
        (lambda root: (root / "notebooks" / "c.key.json").write_text("{"), "cannot read the output manifest"),
        (
            lambda root: (root / "notebooks" / "c.key.json").write_text('{"key": "k"}'),
            "no digests of the outputs",
        ),
        (lambda root: (root / "notebooks" / "c.key.json").unlink(), "No such file"),
    ],
)
def test_a_missing_or_changed_output_is_named(tmp_path, damage, said):
    executed = _chapter(tmp_path)
    damage(tmp_path)
    assert said in chapter_damage(tmp_path, executed)


def test_several_damaged_outputs_are_counted(tmp_path):
    executed = _chapter(tmp_path)
    (tmp_path / "claims" / "c.json").unlink()
    (tmp_path / "figures" / "c_fig.png").unlink()
    assert chapter_damage(tmp_path, executed) == "claims/c.json is missing (and 1 more of its outputs)"


def test_a_manifest_records_the_commit_and_one_written_before_commits_were_reads_as_unknown(tmp_path):
    executed = tmp_path / "c.ipynb"
    commit = SourceCommit("452b334" + "0" * 33, modified=True)
    write_manifest(executed, Manifest("key", {}, 1.0, {}, "pkg", commit))
    assert load_manifest(executed).commit == commit
    assert commit.describe() == "commit 452b334 with uncommitted changes"
    (tmp_path / "c.key.json").write_text('{"key": "k", "outputs": {}}')
    assert load_manifest(executed).commit == SourceCommit()
    assert SourceCommit().describe() == "commit not recorded"
    (tmp_path / "c.key.json").write_text('{"key": "k", "outputs": {}, "commit": {"modified": "no"}}')
    with pytest.raises(PathError, match="'commit' is not a commit"):
        load_manifest(executed)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_source_commit_is_the_checkout_and_says_when_the_run_sources_changed(tmp_path):
    assert source_commit(tmp_path) == SourceCommit()  # not a git checkout

    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "01_a.md").write_text("a")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "a")
    head = subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True, text=True)
    assert source_commit(tmp_path) == SourceCommit(head.stdout.strip(), modified=False)
    (tmp_path / "scratch.txt").write_text("not a source of the run")
    assert not source_commit(tmp_path).modified
    (tmp_path / "notebooks" / "01_a.md").write_text("b")
    assert source_commit(tmp_path) == SourceCommit(head.stdout.strip(), modified=True)


def test_promote_moves_a_staged_run_into_place_with_the_injected_parameters_removed_from_the_page(tmp_path):
    import nbformat

    stage, layout = output_tree(tmp_path / "stage"), output_tree(tmp_path / "tree")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("seed = 0"), nbformat.v4.new_code_cell("seed = 1")]
    nb.cells[0].metadata["tags"] = ["parameters"]
    nb.cells[1].metadata["tags"] = ["injected-parameters"]
    nbformat.write(nb, stage.notebooks / "nb.ipynb")
    (stage.figures / "f.png").write_bytes(b"png")
    executed = layout.notebooks / "nb.ipynb"
    assert promote(stage, layout, executed) == [layout.figures / "f.png", executed]
    cells = nbformat.read(executed, as_version=4).cells  # the book shows one parameter listing
    assert cells[0].metadata["tags"] == ["parameters"]
    assert cells[1].metadata["tags"] == ["injected-parameters", "remove-cell"]


def test_the_failed_cell_is_found_when_the_kernel_died_before_acknowledging_it(tmp_path):
    """Papermill then marks every started cell completed and the dying one has no execution
    metadata (seen in CI): the cell is the last code cell papermill started."""
    import nbformat
    from nbclient.exceptions import DeadKernelError

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"x = {i}") for i in range(4)]
    for cell in nb.cells[:3]:
        cell.metadata["papermill"] = {"status": "completed", "start_time": "2026-11-23T12:00:00"}
    nb.cells[3].metadata["papermill"] = {"status": "pending", "start_time": None}
    path = tmp_path / "died.ipynb"
    nbformat.write(nb, path)
    died = DeadKernelError("Kernel died")
    assert describe_failure(died, path) == "KernelDied: the kernel died in cell 2 ('x = 2')"
    nb.cells[1].metadata["papermill"]["status"] = "failed"  # a marked failure comes first
    nbformat.write(nb, path)
    assert describe_failure(died, path) == "KernelDied: the kernel died in cell 1 ('x = 1')"
    assert describe_failure(died, tmp_path / "missing.ipynb") == "KernelDied: the kernel died"
