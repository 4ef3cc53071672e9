"""Which notebooks a run executes, with which parameters, and whether they must run again.

Names choose notebooks (:func:`select_notebooks`), the profile and ``-p`` overrides their
parameters (:func:`choose_notebooks`), checked before anything runs. A notebook is not executed
again while its :func:`cache_key` (source, parameters, ``ntpnb`` sources) is unchanged since its
last success into the tree and its outputs are what that run wrote: key and output SHA-256s go to
its manifest (:mod:`ntpnb.chapter.outputs`) after a success (:func:`store_key`) and are removed
on failure (:func:`forget_key`). The longest notebooks start first (:func:`longest_first`), by the
times of earlier runs in the tree's ``timings.json`` (:func:`record_timings`: by profile and
notebook, wall seconds, ``--jobs``, the date in UTC, whether it succeeded; the book's benchmarks
page shows them).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..chapter.domains import closest
from ..chapter.layout import OutputLayout, load_timings, notebook_sources, output_layout
from ..chapter.outputs import (
    Manifest,
    atomic_write_text,
    damaged_outputs,
    load_manifest,
    manifest_path,
    output_digests,
    source_commit,
    write_manifest,
)
from ..chapter.parameters import SLOWEST_FIRST, apply_overrides
from ..errors import NTPError, PathError


@dataclass(frozen=True)
class NotebookRun:
    """One notebook to execute: its source, what papermill injects, where, and its cache key.

    ``sweep`` marks a further seed of a sweep (outputs in its own tree), not the book's seed.
    """

    source: Path
    parameters: dict[str, Any]
    layout: OutputLayout
    key: str
    sweep: bool = False
    package: str = ""  # the fingerprint of the ntpnb sources in its cache key

    @property
    def name(self) -> str:
        """The notebook's name (file stem)."""
        return self.source.stem

    @property
    def seed(self) -> int | None:
        """The seed it runs at (None if the notebook has no ``seed`` parameter)."""
        return int_seed(self.parameters)

    @property
    def label(self) -> str:
        """Its name, with the seed when it is a further seed of the sweep (unique within a run)."""
        return f"{self.name} seed {self.seed}" if self.sweep else self.name

    @property
    def executed(self) -> Path:
        """Where its executed copy goes in the output tree."""
        return self.layout.notebooks / f"{self.name}.ipynb"


def int_seed(parameters: Mapping[str, Any]) -> int | None:
    """The integer ``seed`` parameter, if there is one."""
    seed = parameters.get("seed")
    return seed if isinstance(seed, int) and not isinstance(seed, bool) else None


def select_notebooks(sources: Sequence[Path], names: Sequence[str]) -> list[Path]:
    """The sources named in ``names`` (file stems, or unique prefixes); all if ``names`` is empty.

    Raises
    ------
    NTPError
        If a name matches no notebook or more than one.
    """
    if not names:
        return list(sources)
    chosen = []
    for name in names:
        stem = Path(name).stem
        matches = [s for s in sources if s.stem == stem] or [s for s in sources if s.stem.startswith(stem)]
        if len(matches) != 1:
            known = ", ".join(s.stem for s in sources)
            what = "no notebook" if not matches else "several notebooks"
            near = closest(stem, [s.stem for s in sources]) if not matches else ""
            raise NTPError(f"{what} named {name!r}{near}; the notebooks are: {known}")
        chosen.append(matches[0])
    return chosen


def choose_notebooks(
    root: Path, names: Sequence[str], profile: str, overrides: Mapping[str, str]
) -> list[tuple[Path, dict[str, Any]]]:
    """The notebooks ``names`` choose, each with the profile's parameters and ``overrides`` applied.

    Raises
    ------
    NTPError
        On an unknown notebook, profile or parameter, a value of the wrong type, or a project
        without notebooks.
    """
    sources = select_notebooks(notebook_sources(root), names)
    if not sources:
        raise NTPError(f"no notebooks found in {root / 'notebooks'}")
    return [(source, apply_overrides(source, profile, overrides)) for source in sources]


def seed_runs(
    source: Path,
    parameters: Mapping[str, Any],
    profile: str,
    layout: OutputLayout,
    seeds: int,
    fingerprint: str,
) -> list[NotebookRun]:
    """The runs of one notebook in a sweep of ``seeds`` seeds: the book's first, then the others.

    The further seeds follow the ``seed`` parameter (``seed + 1``, ...), each into its own tree
    under ``layout``. A notebook without an integer ``seed`` parameter runs once. Every run is
    also given the ``profile`` and its ``output_dir``.
    """
    base = int_seed(parameters)
    runs = []
    for i in range(seeds if base is not None else 1):
        tree = layout if i == 0 else output_layout(layout.seed_root(base + i))
        seeded = {**parameters, "seed": base + i} if i else parameters
        # output_dir is relative to the executed notebook's folder, where papermill, nbval and Jupyter run it
        injected = {**seeded, "profile": profile, "output_dir": os.path.relpath(tree.root, tree.notebooks)}
        key = cache_key(source, injected, fingerprint)
        runs.append(NotebookRun(source, injected, tree, key, i > 0, fingerprint))
    return runs


def package_fingerprint() -> str:
    """SHA-256 of the ``ntpnb`` package's Python sources (paths and contents), so a code change shows."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def cache_key(source: Path, parameters: Mapping[str, object], fingerprint: str) -> str:
    """SHA-256 of the notebook source, its parameters and the :func:`package_fingerprint`."""
    digest = hashlib.sha256()
    digest.update(source.read_bytes() + b"\0")
    digest.update(json.dumps(dict(parameters), sort_keys=True, default=repr).encode() + b"\0")
    digest.update(fingerprint.encode())
    return digest.hexdigest()


#: :func:`cache_state` of a notebook that has not completed a run into the tree.
NOT_RUN = "no completed run in this tree"
#: :func:`cache_state` of a notebook whose source, parameters or package changed since.
CHANGED = "its source, parameters or ntpnb changed"


def cache_state(run: NotebookRun) -> str | None:
    """Why ``run`` must execute again, or None when its outputs in place are its last run's.

    :data:`NOT_RUN`, :data:`CHANGED`, the manifest's problem, or a damaged output.
    """
    if not manifest_path(run.executed).is_file():
        return NOT_RUN
    try:
        manifest = load_manifest(run.executed)
    except PathError as exc:
        return str(exc)
    if manifest.key != run.key:
        return CHANGED
    return damaged_outputs(run.layout.root, manifest)


def store_key(run: NotebookRun, seconds: float, outputs: Iterable[Path]) -> None:
    """Record that ``run`` completed (its ``outputs`` in place): key, parameters, time, digests, commit."""
    digests = output_digests(run.layout.root, outputs)
    commit = source_commit(run.source.parents[1])  # the project of notebooks/<name>.md
    manifest = Manifest(run.key, dict(run.parameters), seconds, digests, run.package, commit)
    write_manifest(run.executed, manifest)


def forget_key(executed: Path) -> None:
    """Remove the manifest of ``executed``: a failed run is never cached (unless the folder is read-only)."""
    with suppress(OSError):
        manifest_path(executed).unlink(missing_ok=True)


def last_seconds(layout: OutputLayout, profile: str, name: str) -> float:
    """How long ``name`` took at ``profile`` when last run into ``layout`` (inf if unknown)."""
    record = load_timings(layout).get(profile, {}).get(name, {})
    seconds = record.get("seconds") if isinstance(record, dict) else None
    return float(seconds) if isinstance(seconds, (int, float)) else float("inf")


def recorded_seconds(runs: Sequence[NotebookRun], profile: str) -> dict[str, float]:
    """How long each of ``runs`` took at ``profile`` when last run into its tree, by label (inf if unknown).

    A sweep's seed without a time of its own takes its notebook's time at the book's seed.
    """
    at_book_seed = {run.name: last_seconds(run.layout, profile, run.name) for run in runs if not run.sweep}
    found = {}
    for run in runs:
        seconds = last_seconds(run.layout, profile, run.name)
        if seconds == float("inf") and run.sweep:
            seconds = at_book_seed.get(run.name, seconds)
        found[run.label] = seconds
    return found


def longest_first(runs: Sequence[NotebookRun], profile: str) -> list[NotebookRun]:
    """``runs``, the longest first by its last recorded run at ``profile`` (:func:`recorded_seconds`).

    Untimed notebooks come first, following :data:`~ntpnb.chapter.parameters.SLOWEST_FIRST`, then
    the order asked; of those, every notebook's run at the book's seed before any further seed. On a
    first run the book's-seed runs compile each chapter's kernels once into numba's cache, from
    which the further seeds load them, instead of two seeds of one chapter compiling the same
    kernels side by side.
    """
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    seconds = recorded_seconds(runs, profile)

    def key(run: NotebookRun) -> tuple[float, bool, int]:
        untimed_sweep = run.sweep and seconds[run.label] == float("inf")
        return -seconds[run.label], untimed_sweep, rank.get(run.name, len(rank))

    return sorted(runs, key=key)


def record_timings(
    layout: OutputLayout, profile: str, results: Iterable[object], jobs: int, now: datetime | None = None
) -> Path:
    """Add or replace the entries of the executed (not cached) ``results`` in ``layout.timings``."""
    timings = load_timings(layout)
    date = (now or datetime.now(timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    entries = timings.setdefault(profile, {})
    for r in results:
        if not r.cached:
            entries[r.name] = {"seconds": round(r.seconds, 2), "jobs": jobs, "date": date, "ok": bool(r.ok)}
    return atomic_write_text(layout.timings, json.dumps(timings, indent=1, sort_keys=True) + "\n")
