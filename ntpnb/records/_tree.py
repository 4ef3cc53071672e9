"""The record of an output tree, ``<tree>/run.json`` (:class:`TreeRecord`).

It says the profile, ``-p`` overrides, seeds and notebooks that ran into the tree; a tree holds
one setting (:func:`check_setting`), and ``<root>/outputs`` only the book's runs: profile paper,
no overrides.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ..errors import NTPError, PathError
from ._files import atomic_write_json, read_record, texts_by_name
from ._places import OutputTree

#: The run record's file name, at the root of an output tree.
RUN_RECORD_NAME = "run.json"


@dataclass(frozen=True)
class TreeRecord:
    """What ran into one output tree (``run.json``).

    ``seeds`` (the book's first) and ``notebooks`` grow as runs of the same setting add to the tree.
    """

    profile: str
    overrides: dict[str, str] = field(default_factory=dict)
    seeds: tuple[int, ...] = ()
    notebooks: tuple[str, ...] = ()
    #: Whether the notebooks ran outside ``ntpnb reproduce`` (JupyterLab, Binder, papermill), with
    #: ``overrides`` the values that differ from the profile's.
    interactive: bool = False
    #: The version of ``ntpnb`` that ran into the tree last ("" in older records).
    version: str = ""

    @property
    def overrides_text(self) -> str:
        """The ``-p`` overrides as ``k=v, ...`` in name order ("" without any)."""
        return ", ".join(f"{k}={v}" for k, v in sorted(self.overrides.items()))

    def setting(self) -> str:
        """``profile paper`` or ``profile quick with n_g=121, seed=3``: what ran, without its seeds.

        An interactive run says so first: ``interactive run (not ntpnb reproduce), profile quick``.
        """
        text = "interactive run (not ntpnb reproduce), " if self.interactive else ""
        text += f"profile {self.profile}"
        return text + (" with " + self.overrides_text if self.overrides else "")

    def describe(self) -> str:
        """``profile paper; seeds 0-4`` or ``profile quick with n_g=121, seed=3; seed 3``.

        Its seeds are every seed any of its notebooks ran at (:func:`chapter_seeds` tells them apart).
        """
        return f"{self.setting()}; {seeds_text(self.seeds)}" if self.seeds else self.setting()

    @classmethod
    def from_json(cls, data: object) -> TreeRecord:
        """The record in JSON data; ValueError when its shape is not a run record's."""
        if not isinstance(data, dict) or not isinstance(data.get("profile"), str):
            raise ValueError("not a run record (no 'profile')")
        overrides = data.get("overrides", {})
        seeds = data.get("seeds", [])
        notebooks = data.get("notebooks", [])
        if not texts_by_name(overrides):
            raise ValueError("'overrides' is not a mapping of names to texts")
        if not isinstance(seeds, list) or not all(type(s) is int for s in seeds):
            raise ValueError("'seeds' is not a list of integers")
        if not isinstance(notebooks, list) or not all(isinstance(n, str) for n in notebooks):
            raise ValueError("'notebooks' is not a list of names")
        interactive, version = data.get("interactive", False), data.get("version", "")
        if not isinstance(interactive, bool) or not isinstance(version, str):
            raise ValueError("'interactive' is not true or false, or 'version' not a text")
        return cls(data["profile"], dict(overrides), tuple(seeds), tuple(notebooks), interactive, version)


def seeds_text(seeds: Iterable[int]) -> str:
    """``seed 3``, ``seeds 0-4`` (consecutive) or ``seeds 0, 2, 5``."""
    seeds = sorted(set(seeds))
    if len(seeds) == 1:
        return f"seed {seeds[0]}"
    if seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"seeds {seeds[0]}-{seeds[-1]}"
    return "seeds " + ", ".join(map(str, seeds))


def chapter_seeds(root: Path, record: TreeRecord | None) -> dict[str, tuple[int, ...]]:
    """The seeds each notebook of the tree at ``root`` ran at, by name, as its files show.

    A notebook of the tree is one it holds the executed copy of, at the book's seed (the first of
    ``record``'s seeds: none is known without a record); its seeds are the book's and each seed
    of the sweep whose tree (``seeds/seed=S``) holds its executed copy too.
    """
    if record is None or not record.seeds:
        return {}
    tree = OutputTree(Path(root))
    found = {p.stem: [record.seeds[0]] for p in sorted(tree.notebooks.glob("*.ipynb")) if p.name[0] != "."}
    for seed, seed_tree in tree.seed_trees().items():
        for name, seeds in found.items():
            if (seed_tree.notebooks / f"{name}.ipynb").is_file():
                seeds.append(seed)
    return {name: tuple(seeds) for name, seeds in found.items()}


def load_tree_record(root: Path) -> TreeRecord | None:
    """The run record of the tree at ``root`` (None when no run wrote one; PathError when damaged)."""
    path = Path(root) / RUN_RECORD_NAME
    if not path.exists():
        return None
    return read_record(path, "run record", TreeRecord.from_json)


def write_tree_record(root: Path, record: TreeRecord) -> Path:
    """Write ``record`` as the run record of the tree at ``root`` (atomically)."""
    return atomic_write_json(Path(root) / RUN_RECORD_NAME, asdict(record))


def check_setting(root: Path, record: TreeRecord, replace_unread: bool = False) -> TreeRecord | None:
    """The run record of the tree at ``root`` (None without one), if ``record``'s run may write there.

    A tree holds one setting (profile, overrides, interactive or not): NTPError if it holds a run
    of another setting, or a ``run.json`` that does not read as a run record, unless
    ``replace_unread`` (``--force``: the run then writes its own over it, as None says).
    """
    try:
        held = load_tree_record(root)
    except PathError as exc:
        if replace_unread:
            return None
        raise NTPError(
            f"{exc}; if the tree holds only runs of {record.describe()}, delete that file and rerun (or "
            "add --force, which writes this run's record over it)"
        ) from exc
    if held is not None:
        setting = (record.profile, record.overrides, record.interactive)
        if (held.profile, held.overrides, held.interactive) != setting:
            raise NTPError(
                f"{root} holds a run of {held.describe()}; this run is {record.describe()}: "
                "choose another --out, or leave --out out (each setting then gets a tree of its own)"
            )
    return held


def claim_tree(root: Path, record: TreeRecord, replace_unread: bool = False) -> None:
    """Record in the ``run.json`` of the tree at ``root`` that ``record``'s run writes there (under its lock).

    Runs of the same profile and overrides add their seeds and notebooks to its record; NTPError
    if it holds a run of another setting (or a record that does not read, unless
    ``replace_unread``: :func:`check_setting`).
    """
    held = check_setting(root, record, replace_unread)
    if held is not None:
        seeds = tuple(dict.fromkeys((*held.seeds, *record.seeds)))
        notebooks = tuple(sorted({*held.notebooks, *record.notebooks}))
        record = replace(record, seeds=seeds, notebooks=notebooks, version=record.version or held.version)
    write_tree_record(root, record)
