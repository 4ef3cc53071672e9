"""Which folders a command may write into: every output folder belongs to one kind of tree.

An output tree is a run's (``ntpnb reproduce``, or a notebook run interactively: its record is
``run.json``, :data:`~ntpnb.records._tree.RUN_RECORD_NAME`) or an explore's (``ntpnb
explore``: ``explore.json``, :data:`~ntpnb.records._places.EXPLORE_RECORD`), never both
(:func:`tree_kind`). Before a command writes into a folder that ``--out`` or ``--run`` names,
:func:`check_output_folder` refuses a file, a tree of the other kind, and a folder holding what
ntpnb did not write (the user's own files), naming what is there: nothing of the user's is
overwritten, and a refused command leaves nothing behind (not even its lock file).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from ..errors import NTPError, PathError
from ._files import is_temporary
from ._lock import LOCK_NAME
from ._places import EXPLORE_RECORD, POINTS_DIRNAME
from ._staging import STAGING_DIRNAME
from ._tree import RUN_RECORD_NAME, load_tree_record

#: The kinds of output tree (:func:`tree_kind`).
RUN_TREE, EXPLORE_TREE = "run", "explore"
#: The record at the root of each kind of tree.
_RECORDS = {RUN_TREE: RUN_RECORD_NAME, EXPLORE_TREE: EXPLORE_RECORD}

#: What ntpnb writes at the root of an output tree of either kind (:mod:`ntpnb.records._places`),
#: besides its record: the run's folders and files, the pages ``ntpnb book`` writes there, the
#: folder of its book, the trees of other runs under the book's own, an explore's points and maps.
TREE_ENTRIES = frozenset(
    {
        *("notebooks", "figures", "claims", "failed", "benchmarks", "timings.json"),
        *("seeds", "runs", "explore", POINTS_DIRNAME, "maps", "_book"),
        *("report.md", "claim_list.md", "verdicts.md", "verdicts.json", "benchmarks.md"),
        *(RUN_RECORD_NAME, EXPLORE_RECORD, LOCK_NAME, STAGING_DIRNAME),
    }
)


def tree_kind(root: Path) -> str:
    """The kind of the output tree at ``root``: :data:`RUN_TREE`, :data:`EXPLORE_TREE`, or "" (neither).

    Raises
    ------
    NTPError
        If ``root`` holds both records (a folder that two kinds of command wrote into).
    """
    kinds = [kind for kind, record in _RECORDS.items() if (Path(root) / record).is_file()]
    if len(kinds) > 1:
        raise NTPError(
            f"{root} holds both a run ({RUN_RECORD_NAME}) and an explore ({EXPLORE_RECORD}): a folder "
            "holds one kind of tree, so no command reads or writes it; move one of the two records "
            "with what it made, or choose another folder"
        )
    return kinds[0] if kinds else ""


def is_explore_tree(path: str | Path) -> bool:
    """Whether ``path`` is an explore tree (``explore.json``; NTPError if a run's too: :func:`tree_kind`)."""
    return tree_kind(Path(path).expanduser()) == EXPLORE_TREE


def check_output_folder(root: Path, kind: str, asked: str | Path, force: bool = False) -> None:
    """Refuse to write a tree of ``kind`` into the folder ``root`` (``asked``: as the user wrote it).

    A folder that does not exist, is empty, or holds a tree of ``kind`` may be written (a tree
    whose record does not read, beside nothing but what ntpnb writes, is a damaged tree: the run's
    own checks name it). A folder holding files ntpnb did not write is the user's own, and so is
    its record (``run.json``, ``explore.json``) if that does not read as one ntpnb writes: written
    only with ``force``, and the refusal lists every file of the user's that a tree written there
    could replace (:func:`replaceable_files`).

    Raises
    ------
    NTPError
        If ``root`` is a file, holds the other kind of tree (or both), or holds files ntpnb did not
        write and ``force`` is False; each message names what is there.
    """
    root = Path(root)
    if root.exists() and not root.is_dir():
        raise NTPError(
            f"the output folder {root} exists and is not a folder (--out {asked} is a file); choose "
            "another --out, a new or empty folder"
        )
    if not root.is_dir():
        return
    held = tree_kind(root)
    unread = unread_record(root, held)
    foreign = _foreign_entries(root.iterdir())
    if held and not (unread and foreign):  # a tree, its record read or (alone with ntpnb's) damaged
        if held != kind:
            raise NTPError(
                f"--out {asked} holds {_describe_tree(root, held)}; {_WRITES[kind]}, never into another "
                "kind of tree: choose another folder, or leave --out out (it then gets a tree of its own)"
            )
        return
    if unread:
        foreign = sorted({*foreign, f"{_RECORDS[held]} ({unread})"})
    if foreign and not force:
        raise NTPError(_own_folder_refusal(root, kind, asked, foreign))


def unread_record(root: Path, kind: str) -> str:
    """Why the record of the tree of ``kind`` at ``root`` is not one ntpnb wrote ("" if it is, or none)."""
    if kind == RUN_TREE:
        try:
            load_tree_record(root)
        except PathError:
            return "not ntpnb's: it does not read as a run record"
    elif kind == EXPLORE_TREE:
        try:
            data = json.loads((root / EXPLORE_RECORD).read_text(encoding="utf-8"))
            if not isinstance(data, dict) or not {"chapter", "axes"} <= data.keys():
                raise ValueError("not an explore record")
        except (OSError, ValueError):
            return "not ntpnb's: it does not read as an explore record"
    return ""


def _own_folder_refusal(root: Path, kind: str, asked: str | Path, foreign: list[str]) -> str:
    """Why a command refuses the user's folder ``root``: what it holds, and what ``--force`` could replace."""
    more = f", and {len(foreign) - 3} more" if len(foreign) > 3 else ""
    text = (
        f"--out {asked} is a folder of your own, not a tree ntpnb wrote: it holds files ntpnb did not "
        f"write ({', '.join(foreign[:3])}{more}). Choose a new or empty folder, or add --force to "
        f"write {_TREES[kind]} into it"
    )
    replaced = replaceable_files(root)
    if not replaced:
        return f"{text} (no file there has the name of one a tree holds: --force replaces none of them)"
    these = "this file" if len(replaced) == 1 else f"these {len(replaced)} files"
    return f"{text}; --force could replace {these} of yours: {', '.join(replaced)}"


def replaceable_files(root: Path) -> list[str]:
    """Every file in ``root`` where a tree written there could write one: its records, and its folders' files.

    The files at the root that have the name of a tree's record or page (``run.json``,
    ``timings.json``, ...), and every file under a folder a tree writes into (``figures/``,
    ``notebooks/``, ...), relative to ``root``, sorted; ntpnb's own lock and leftovers are not
    listed.
    """
    found = []
    for entry in Path(root).iterdir():
        if entry.name not in TREE_ENTRIES or entry.name in (LOCK_NAME, STAGING_DIRNAME):
            continue
        files = sorted(p for p in entry.rglob("*") if p.is_file()) if entry.is_dir() else [entry]
        found += [p.relative_to(root).as_posix() for p in files if not is_temporary(p)]
    return sorted(found)


#: What each kind of command writes.
_WRITES = {
    RUN_TREE: "ntpnb reproduce writes a run's tree",
    EXPLORE_TREE: "ntpnb explore writes an explore tree",
}
#: Each kind of tree, as a sentence names it.
_TREES = {RUN_TREE: "a run's tree", EXPLORE_TREE: "an explore tree"}


def _foreign_entries(entries: Iterable[Path]) -> list[str]:
    """The names of ``entries`` (a folder's) that ntpnb does not write at a tree's root, sorted."""
    return sorted(
        p.name + ("/" if p.is_dir() else "")
        for p in entries
        if p.name not in TREE_ENTRIES and not is_temporary(p)
    )


def _describe_tree(root: Path, kind: str) -> str:
    """``a run's tree (profile quick; seed 0; run.json)``, ``an explore tree of 03_x across toy_lr (...)``."""
    if unread_record(root, kind):
        return f"{_TREES[kind]} (its {_RECORDS[kind]} does not read)"
    if kind == RUN_TREE:
        record = load_tree_record(root)
        what = record.describe() if record is not None else "a run"
        return f"a run's tree ({what}; {RUN_RECORD_NAME})"
    data = json.loads((root / EXPLORE_RECORD).read_text(encoding="utf-8"))
    axes = ", ".join(str(axis.get("name")) for axis in data["axes"] if isinstance(axis, dict))
    return f"an explore tree of {data['chapter']} across {axes} ({EXPLORE_RECORD})"
