"""The inputs of a run, checked before anything is written: notebooks, parameters, seeds, tree.

Names choose notebooks (:func:`select_notebooks`), the profile and ``-p`` overrides their
parameters, ``--seeds`` their sweep, ``--out`` the output tree
(:func:`~ntpnb.records._places.tree_root`); :func:`check_run` refuses what ``ntpnb reproduce``
refuses before it runs (a hint's command is checked with it too), writing nothing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from .._extras import require
from .._validation import as_count
from ..chapter._domains import INT_RANGE, closest
from ..chapter._parameters import apply_overrides
from ..chapter._sources import source_changes
from ..errors import NTPError
from ..records._ownership import RUN_TREE, check_output_folder
from ..records._places import DEFAULT_OUTPUT_DIRNAME, DEFAULT_SEEDS, notebook_sources, tree_root
from ..records._run import int_seed
from ..records._tree import TreeRecord, check_setting


def select_notebooks(root: Path, names: Sequence[str]) -> list[Path]:
    """The notebooks of the project at ``root`` named in ``names`` (all if none).

    A name is a notebook's stem, a unique prefix of one (``03``, ``03_gd``) or its number
    (``3`` is chapter ``03``).

    Raises
    ------
    NTPError
        If the project has no notebooks, or a name matches no notebook or more than one (naming
        those it matches).
    """
    sources = notebook_sources(root)
    if not sources:
        raise NTPError(f"no notebooks found in {root / 'notebooks'}")
    if not names:
        return sources
    chosen = []
    for name in names:
        matches = _matching_notebooks(sources, Path(name).stem)
        if len(matches) != 1:
            known = ", ".join(s.stem for s in sources)
            if matches:
                shown = ", ".join(s.stem for s in matches)
                raise NTPError(
                    f"several notebooks named {name!r}: {shown}; name one of them, e.g. "
                    f"{matches[0].stem.split('_')[0]}"
                )
            near = closest(Path(name).stem, [s.stem for s in sources])
            raise NTPError(f"no notebook named {name!r}{near}; the notebooks are: {known}")
        chosen.append(matches[0])
    return chosen


def _matching_notebooks(sources: Sequence[Path], stem: str) -> list[Path]:
    """The notebooks of ``sources`` that ``stem`` names: by stem, by number (``3``: ``03_x``), by prefix."""
    exact = [s for s in sources if s.stem == stem]
    numbered = [s for s in sources if stem.isdigit() and s.stem.split("_")[0].isdigit()]
    by_number = [s for s in numbered if int(s.stem.split("_")[0]) == int(stem)]
    return exact or by_number or [s for s in sources if s.stem.startswith(stem)]


@dataclass(frozen=True)
class CheckedRun:
    """The inputs of a run, checked: its notebooks with their parameters, jobs, seeds, tree, setting."""

    chosen: tuple[tuple[Path, dict[str, Any]], ...]
    jobs: int
    seeds: int
    #: The root of the output tree of the book's seed (:func:`~ntpnb.records._places.tree_root`).
    tree: Path
    #: Its setting, with the seeds it runs and the notebooks (as :func:`planned_run` records it).
    record: TreeRecord
    #: The point of an explore's grid it is (:func:`~ntpnb.explore._grid.point_label`); "" for none.
    point: str = ""
    #: How each chosen chapter's source differs from its commit, by name (those that do only:
    #: :func:`~ntpnb.chapter._sources.source_changes`).
    changed: Mapping[str, str] = field(default_factory=dict)


def check_run(
    root: Path,
    names: Sequence[str],
    profile: str,
    overrides: Mapping[str, str],
    output_dir: str | Path | None,
    jobs: int | None,
    seeds: int | None,
    force: bool = False,
    uncommitted: bool = False,
    scheduler: str | None = None,
) -> CheckedRun:
    """Check every input of a run of the project at ``root`` (the parameters of :func:`~._run.reproduce`).

    Writes nothing and starts nothing: what ``ntpnb reproduce`` refuses before it runs, refused
    here (a hint's command is checked with it too: :func:`ntpnb.cli._checks.check_command`). ``force``:
    an ``output_dir`` holding files ntpnb did not write may be written
    (:func:`~ntpnb.records._ownership.check_output_folder`); ``uncommitted``: a chapter whose
    source differs from its commit may run into the book's own tree (:func:`uncommitted_changes`);
    ``scheduler``: the address of a Dask cluster to run on, which needs Dask's distributed.

    Raises
    ------
    NTPError
        On an unknown notebook, profile or parameter, a value outside its domain, ``jobs < 1``,
        ``seeds < 1``, a sweep beyond the largest seed, an output folder that may not be written
        (a file, an explore tree, or, without ``force``, a folder of files ntpnb did not write),
        a tree that holds a run of another setting, or, without ``uncommitted``, a chapter whose
        source differs from its commit to run into the book's tree, or a ``scheduler`` without
        Dask's distributed installed.
    """
    if scheduler:
        require("--scheduler", "distributed", "test")  # Dask's distributed
    overrides = dict(overrides)
    sources = select_notebooks(root, names)
    tree = tree_root(root, profile, overrides, output_dir)
    # a folder that may not be written is refused before the chapters are read (a second of imports)
    check_output_folder(
        tree, RUN_TREE, tree if output_dir is None else output_dir, force or output_dir is None
    )
    chosen = tuple((source, apply_overrides(source, profile, overrides)) for source in sources)
    jobs = max(1, os.cpu_count() or 1) if jobs is None else as_count(jobs, "--jobs")  # one notebook per core
    seeds = (1 if overrides else DEFAULT_SEEDS) if seeds is None else as_count(seeds, "--seeds")
    ran: dict[int, None] = {}
    for source, parameters in chosen:
        base = int_seed(parameters)
        if base is not None and base + seeds - 1 > INT_RANGE[1]:
            raise NTPError(
                f"{source.stem}: a sweep of {seeds} seeds from seed={base} would reach seed "
                f"{base + seeds - 1}, beyond {INT_RANGE[1]} (the largest integer a parameter may hold)"
            )
        ran.update(dict.fromkeys(range(base, base + seeds)) if base is not None else {})
    record = TreeRecord(
        profile, overrides, tuple(ran), tuple(sorted(s.stem for s, _ in chosen)), version=__version__
    )
    check_setting(tree, record, force)
    changed = uncommitted_changes(root, [source for source, _ in chosen], tree, uncommitted)
    return CheckedRun(chosen, jobs, seeds, tree, record, changed=changed)


def uncommitted_changes(root: Path, sources: Sequence[Path], tree: Path, allowed: bool) -> dict[str, str]:
    """How each of the chapters ``sources`` differs from its commit, by name (those that do only).

    Raises
    ------
    NTPError
        If one does, ``tree`` is the book's own and ``allowed`` is False: the book's outputs are the
        committed chapters' (the message says what differs, and how to go on).
    """
    changed = {source.stem: change for source in sources if (change := source_changes(source))}
    if changed and not allowed and tree == (root / DEFAULT_OUTPUT_DIRNAME).resolve():
        names = " ".join(name.split("_")[0] for name in changed)
        files = " ".join(f"notebooks/{name}.md" for name in changed)
        what = "; ".join(f"notebooks/{name}.md {change}" for name, change in changed.items())
        raise NTPError(
            f"{what}: the book's outputs are the committed chapters' runs. Commit the change, or undo it "
            f"(git restore {files}), or run it into a tree of its own (`ntpnb reproduce {names} "
            f"--profile quick`), or add --uncommitted to run it into the book's outputs anyway (the run "
            "records what differs)"
        )
    return changed
