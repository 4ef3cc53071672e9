"""Explore trees written by hand, as ``ntpnb explore`` lays them out, for the maps' tests."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import nbformat

from ntpnb.chapter._claims import ClaimLog
from ntpnb.errors import ClaimCheckError
from ntpnb.explore._grid import Grid, point_label
from ntpnb.records._cache import output_digests
from ntpnb.records._manifest import Manifest, write_manifest
from ntpnb.records._places import output_tree

CHAPTER = "01_demo"

#: A check as ClaimLog.check takes it: (claim, what, value, relation, target, keywords).
CheckArgs = tuple[str, str, Any, str, Any, Mapping[str, Any]]


def write_run(
    root: Path, seed: int, parameters: Mapping[str, Any], checks: Sequence[CheckArgs], profile: str = "quick"
) -> Path:
    """A completed run of :data:`CHAPTER` into ``root``: its claim record (ClaimLog's), notebook, manifest."""
    layout = output_tree(root)
    log = ClaimLog(CHAPTER, profile, root, seed)
    with contextlib.redirect_stdout(io.StringIO()):
        for claim, what, value, relation, target, keywords in checks:
            log.check(claim, what, value, relation, target, **keywords)
        with contextlib.suppress(ClaimCheckError):
            log.conclude()
    record = dataclasses.replace(log.record, parameters={"seed": seed, **parameters, "output_dir": ".."})
    claims = layout.claims / f"{CHAPTER}.json"
    claims.write_text(record.dump())
    executed = layout.notebooks / f"{CHAPTER}.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), executed)
    digests = output_digests(layout.root, [executed, claims])
    write_manifest(executed, Manifest(f"key-{seed}", dict(parameters), 1.0, digests, "sources"))
    return claims


def write_failure(root: Path) -> None:
    """A run of :data:`CHAPTER` into ``root`` that failed (the runner's failure record, no claim record)."""
    layout = output_tree(root)
    layout.failed.mkdir(exist_ok=True)
    (layout.failed / f"{CHAPTER}.json").write_text(json.dumps({"error": "ValueError: diverged\nmore"}))


def write_explore(
    tree: Path,
    grid: Grid,
    seeds: Sequence[int],
    checks_at: Any,
    *,
    failed: Sequence[tuple[Mapping[str, Any], int]] = (),
    fixed: Mapping[str, Any] | None = None,
    budgets: Mapping[str, int] | None = None,
    paper: Mapping[str, float] | None = None,
) -> Path:
    """An explore tree: ``explore.json`` and every point at every seed (``checks_at(point, seed)``'s checks).

    The runs in ``failed`` (point, seed) failed instead; ``budgets``: the chapter's iteration
    budgets at the paper's values, as ``explore.json`` records them; ``paper``: the paper's value
    of an axis.
    """
    points = []
    for point in grid.points():
        folder = f"points/{point_label(point)}"
        points.append({"dir": folder, "values": point})
        for i, seed in enumerate(seeds):
            root = tree / folder if i == 0 else tree / folder / "seeds" / f"seed={seed}"
            if (point, seed) in [(dict(p), s) for p, s in failed]:
                write_failure(root)
            else:
                write_run(root, seed, point, checks_at(point, seed))
    record = {
        "chapter": CHAPTER,
        "profile": "quick",
        "seeds": list(seeds),
        "axes": [{"name": a.name, "spec": a.spec, "values": list(a.values), "log": a.log} for a in grid.axes],
        "fixed": dict(fixed or {}),
        "points": points,
        "budgets": dict(budgets or {}),
        **({"paper": dict(paper)} if paper is not None else {}),
        "version": "0.1.0",
    }
    (tree / "explore.json").write_text(json.dumps(record, indent=1))
    return tree
