"""Before a book is built, every record it reads is checked: damaged records are refused in one line.

A chapter's run records the SHA-256 of each of its outputs in its manifest
``notebooks/<name>.key.json`` (:mod:`ntpnb.chapter.provenance`). :func:`verify_tree` checks every
chapter of the tree a book is built from, and of every seed tree of its sweep (whose claim records
the verdicts read): its outputs have the digests its run recorded, its executed notebook reads
(:func:`~ntpnb.book.executed.read_notebook`) and its claim record too, so no claim is ever reported
*not tested* because its record is gone. A chapter without a manifest is trusted only where its
last run failed (the runner keeps the outputs of the last run that succeeded); a seed whose last
run failed is not counted by the verdicts, and not checked. Anything else refuses the build with
one line naming the first damaged file and the ``ntpnb reproduce`` command that runs those
chapters again (:meth:`~ntpnb.book.trees.BookTree.rerun_advice`).
"""

from __future__ import annotations

from ..chapter.claims import load_chapter_record
from ..chapter.layout import OutputLayout
from ..chapter.provenance import chapter_damage, manifest_path
from ..errors import NTPError, PathError
from .executed import read_notebook
from .trees import BookTree, shown, visible

__all__ = ["chapter_problem", "tree_problems", "verify_tree"]


def _tree_chapters(layout: OutputLayout) -> set[str]:
    """The chapters with an executed notebook or a claim record in ``layout``."""
    notebooks = visible(layout.notebooks.glob("*.ipynb")) if layout.notebooks.is_dir() else []
    records = visible(layout.claims.glob("*.json")) if layout.claims.is_dir() else []
    return {p.stem for p in [*notebooks, *records]}


def chapter_problem(layout: OutputLayout, name: str) -> str | None:
    """Why the outputs of chapter ``name`` in ``layout`` cannot be built from (naming the file), or None.

    The manifest's verdict (or its absence, unless the chapter's last run failed), then the
    executed notebook's shape and the claim record's.
    """
    executed = layout.notebooks / f"{name}.ipynb"
    record = layout.claims / f"{name}.json"
    manifest = manifest_path(executed)
    if manifest.exists():
        if problem := chapter_damage(layout.root, executed, where=f"{shown(layout.root)}/"):
            return problem
    elif not (layout.failed / f"{name}.json").exists():
        return (
            f"{shown(manifest)} is missing, so nothing says what the run of {name} wrote (a run "
            "made before outputs were recorded, or the file was deleted)"
        )
    missing = {
        executed: f"{shown(executed)} is missing (its claim record {shown(record)} is there)",
        record: f"{shown(record)} is missing: {name} has an executed notebook but no claim record",
    }
    for path, read in ((executed, read_notebook), (record, load_chapter_record)):
        if not path.exists():
            return missing[path]
        try:
            read(path)
        except PathError as exc:
            return str(exc)
    return None


def tree_problems(layout: OutputLayout) -> dict[str, str]:
    """Chapter -> its first problem (:func:`chapter_problem`), in ``layout`` and its seed trees.

    A seed tree is checked for the chapters of ``layout`` only (the verdicts read no other),
    except where that seed's last run failed (the verdicts do not count it, and say so).
    """
    chapters = sorted(_tree_chapters(layout))
    problems: dict[str, str] = {}
    for tree in [layout, *layout.seed_layouts().values()]:
        present = _tree_chapters(tree)
        for name in chapters:
            if name in problems or name not in present:
                continue
            if tree is not layout and (tree.failed / f"{name}.json").exists():
                continue
            if problem := chapter_problem(tree, name):
                problems[name] = problem
    return problems


def verify_tree(tree: BookTree) -> None:
    """Refuse, in one line, a tree whose records cannot be trusted (see the module docstring).

    Raises
    ------
    NTPError
        Naming the first damaged file, how many chapters are damaged, and the ``ntpnb reproduce``
        command that runs them again.
    """
    problems = tree_problems(tree.layout)
    if problems:
        first, *others = names = sorted(problems)
        more = f" (and in {len(others)} more chapter{'s' * (len(others) > 1)}: {', '.join(others)})"
        raise NTPError(f"{problems[first]}{more if others else ''}; {tree.rerun_advice(names)}")
