"""The records of a sweep: a chapter's record at every seed that may be pooled with the book's.

A chapter runs at the book's seed and, in a sweep, at further seeds, each into its own tree
(:mod:`ntpnb.runner._run`). :func:`load_sweeps` gathers each chapter's records that may be pooled
with the book's (complete; same notebook, profile, parameters and ``ntpnb`` sources but the
seed; others are set aside with the reason), as a :class:`~ntpnb.evidence._series.Sweep`, which
the evidence layer decides.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from ..errors import PathError
from ..evidence._series import Sweep
from ._manifest import load_manifest
from ._places import OutputTree
from ._run import ChapterRun, load_chapter_run

#: Parameters that differ between the seeds of one sweep (everything else must be equal).
SWEPT_PARAMETERS: frozenset[str] = frozenset({"seed", "output_dir"})


def seed_record(
    tree: OutputTree, seed: int, seed_tree: OutputTree, book: ChapterRun
) -> ChapterRun | str | None:
    """The record of ``book``'s chapter in ``seed_tree``, or why it is not counted (None: none).

    ``seed_tree`` is the tree of seed ``seed`` of the sweep whose book's seed ran into ``tree``.
    """
    failure = seed_tree.failed / f"{book.notebook}.json"
    if failure.exists():  # its last run stopped before its end (a record in place is older)
        return _failed_run_reason(failure)
    path = seed_tree.claims / f"{book.notebook}.json"
    if not path.exists():
        return None
    try:
        record = load_chapter_run(path)
    except PathError as exc:
        return str(exc)
    why = _not_comparable(record, seed, book)
    if why is not None:
        return why
    try:  # the ntpnb sources both ran with, by their manifests
        ours = load_manifest(tree.notebooks / f"{book.notebook}.ipynb").package
        theirs = load_manifest(seed_tree.notebooks / f"{book.notebook}.ipynb").package
    except PathError:
        return record  # no manifests to compare (a hand-made tree): the checks above decide
    if ours and theirs and ours != theirs:
        return (
            "it ran with other ntpnb sources than the book's seed (rerun the sweep, e.g. "
            "`ntpnb reproduce --seeds 5`: every seed whose sources changed runs again)"
        )
    return record


def _failed_run_reason(failure: Path) -> str:
    """Why a seed's run is not counted when its last run failed: the failure record's one-line error.

    ``failure`` is the record the runner kept (:mod:`ntpnb.records._staging`).
    """
    try:
        error = json.loads(failure.read_text(encoding="utf-8")).get("error")
    except (OSError, ValueError, AttributeError):
        return "its last run failed (its failure record does not read)"
    return f"its last run failed ({str(error).splitlines()[0] if error else 'no error recorded'})"


def _not_comparable(record: ChapterRun, seed: int, book: ChapterRun) -> str | None:
    """Why a seed tree's ``record`` (at ``seed``) cannot count beside the book's seed's ``book``, or None.

    It must be the same chapter's, complete, at the seed its tree says and not the book's, at the
    book's profile and parameters (but for the swept ones).
    """
    if record.notebook != book.notebook:
        return f"the record is of {record.notebook}"
    if not record.complete:
        return "the run did not reach its end"
    if record.seed != seed:
        return f"the record says seed {record.seed}"
    if seed == book.seed:
        return "it repeats the book's seed"
    if record.profile != book.profile:
        return f"it ran at the {record.profile} profile, the book's seed at {book.profile}"
    ours, theirs = book.parameters, record.parameters
    if ours is None or theirs is None:
        return "a record does not say which parameters it ran with"
    changed = sorted(
        k for k in (ours.keys() | theirs.keys()) - SWEPT_PARAMETERS if ours.get(k) != theirs.get(k)
    )
    if changed:
        return f"it ran with other parameters ({', '.join(changed)})"
    return None


def load_sweeps(tree: OutputTree, book_records: Sequence[ChapterRun]) -> list[Sweep]:
    """Every chapter of ``book_records`` with the records of the sweep's seeds under ``tree``."""
    trees = tree.seed_trees()
    sweeps = []
    for book in book_records:
        found = {seed: seed_record(tree, seed, seed_tree, book) for seed, seed_tree in trees.items()}
        records = {seed: r for seed, r in found.items() if isinstance(r, ChapterRun)}
        excluded = {seed: r for seed, r in found.items() if isinstance(r, str)}
        sweeps.append(Sweep(book, {book.seed if book.seed is not None else 0: book, **records}, excluded))
    return sweeps
