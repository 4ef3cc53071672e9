"""The maps folder of an explore tree: every map's figure, ``maps.json`` and ``maps.md``, written atomically.

:func:`write_maps` draws each map of :mod:`._decide` (:func:`~._draw.draw_map`) into ``<slug>.png`` and
``.pdf``, records every map with its figures' digests in ``maps.json`` (:func:`map_record`) and writes
the page of :func:`~._page.map_page` as ``maps.md``. A figure is drawn again only when what it is
drawn from changed (:func:`figure_key`: its data and the code that draws it) or its files did: an
entry of the one content-addressed cache, :mod:`ntpnb.records._cache`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..chapter import _plotting as plotting
from ..chapter._plotting import write_figure
from ..errors import PathError
from ..records._cache import content_key, outputs_damage
from ..records._files import atomic_write_json, atomic_write_text, file_digest, read_record
from . import _draw as draw_module
from ._boundaries import Boundary
from ._decide import CheckMap, check_maps
from ._draw import MapLabels, Mark, draw_map, paper_marks
from ._grid import Grid
from ._page import map_page
from ._results import GridResults
from ._words import budget_notes, where_it_holds

#: The folder of an explore tree that holds its maps.
MAPS_DIRNAME = "maps"


def map_record(check_map: CheckMap, grid: Grid) -> dict[str, Any]:
    """One map as ``maps.json`` holds it: the check, each point's values, share, decision; boundaries."""
    return {
        "claim": check_map.claim,
        "kind": check_map.kind,
        "what": check_map.what,
        "protocol": check_map.protocol,
        "basis": check_map.basis,
        "required": check_map.required,
        "slug": check_map.slug,
        "where": where_it_holds(check_map, grid),
        "points": [
            {
                "values": dict(zip((a.name for a in grid.axes), key, strict=True)),
                "measured": list(check_map.values[key]),
                "share": None if math.isnan(check_map.share[key]) else check_map.share[key],
                "holds": check_map.holds[key],
            }
            for key in check_map.holds
        ],
        "boundaries": [_boundary_record(b) for b in check_map.boundaries],
    }


def _boundary_record(boundary: Boundary) -> dict[str, Any]:
    """One boundary as ``maps.json`` holds it."""
    return {
        "axis": boundary.axis,
        "lower": boundary.lower,
        "upper": boundary.upper,
        "holds_below": boundary.holds_below,
        "fixed": dict(boundary.fixed),
        "undecided": list(boundary.undecided),
    }


def figure_key(check_map: CheckMap, grid: Grid, marks: Sequence[Mark] = ()) -> str:
    """SHA-256 of what a map's figure is drawn from: its data, its marks and the code that draws it."""
    drawn = {"map": map_record(check_map, grid), "marks": [asdict(mark) for mark in marks]}
    data = json.dumps(drawn, sort_keys=True, default=repr).encode()
    code = (Path(module).read_bytes() for module in (draw_module.__file__, plotting.__file__))
    return content_key(data, *code)


def kept_figures(folder: Path) -> dict[str, list[Path]]:
    """The figures an earlier :func:`write_maps` wrote into ``folder`` that are still as written, by key.

    Read from its ``maps.json``; a figure whose file is missing or changed is not kept (it is drawn
    again), and neither is any when ``maps.json`` cannot be read.
    """
    try:
        written = read_record(folder / "maps.json", "maps record", lambda data: dict(data["figures"]))
    except PathError:
        return {}
    kept = {}
    for key, files in written.items():
        paths = [folder / name for name in files if Path(name).name == name]
        if paths and outputs_damage(folder, {p.name: files[p.name] for p in paths}) is None:
            kept[key] = paths
    return kept


def write_maps(
    results: GridResults,
    folder: str | Path,
    maps: Sequence[CheckMap] | None = None,
    progress: Callable[[str, str], None] | None = None,
) -> list[Path]:
    """Write every map into ``folder`` atomically: ``<slug>.png``, ``.pdf``, ``maps.json``, ``maps.md``.

    ``maps.md`` is :func:`~._page.map_page`; the paths written are returned. ``maps``:
    the results' :func:`check_maps`, where the caller has them already; ``progress`` is told
    before each map is drawn (``"drawing the maps", "3 of 12"``), which takes seconds each.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    maps = check_maps(results) if maps is None else maps
    paths, figures, drawn = [], {}, {}
    kept = kept_figures(folder)
    labels = MapLabels(marks=paper_marks(results.grid, results.paper))
    for n, check_map in enumerate(maps, 1):
        key = figure_key(check_map, results.grid, labels.marks)
        written = kept.get(key)
        if progress is not None:
            progress("drawing the maps" if written is None else "maps drawn before", f"{n} of {len(maps)}")
        if written is None:  # not drawn from these data by this code, or its files changed since
            written = _draw_into(check_map, results.grid, folder, labels)
        paths += written
        figures[check_map.slug] = written[0].name
        drawn[key] = {path.name: file_digest(path) for path in written}
    paths.append(atomic_write_json(folder / "maps.json", _maps_data(results, maps, drawn)))
    paths.append(atomic_write_text(folder / "maps.md", map_page(results, figures, maps)))
    return paths


def _draw_into(check_map: CheckMap, grid: Grid, folder: Path, labels: MapLabels) -> list[Path]:
    """Draw one check's map and write its figure files into ``folder``; return their paths."""
    import matplotlib.pyplot as plt

    fig = draw_map(check_map, grid, labels=labels)
    try:
        return write_figure(fig, folder / check_map.slug)
    finally:
        plt.close(fig)


def _maps_data(
    results: GridResults, maps: Sequence[CheckMap], drawn: Mapping[str, Mapping[str, str]]
) -> dict[str, Any]:
    """What ``maps.json`` holds: the grid's setting, every map (:func:`map_record`), its figures' digests."""
    return {
        "title": results.title,
        "chapter": results.chapter,
        "profile": results.profile,
        "seeds": list(results.seeds),
        "axes": [
            {"name": a.name, "spec": a.spec, "values": list(a.values), "log": a.log}
            for a in results.grid.axes
        ],
        "fixed": dict(results.fixed),
        "paper": dict(results.paper),
        "notes": list(results.notes),
        "budget_notes": budget_notes(results, maps),
        "maps": [map_record(m, results.grid) for m in maps],
        "figures": dict(drawn),
    }
