"""Grids of a chapter's settings and maps of where its checks hold across them.

One word, one thing: a *map* is a grid of a chapter's parameters with the checks measured at each
point (what ``ntpnb explore`` draws, and what chapter 8's M1-M5 are: each a registry entry,
:class:`~ntpnb.evidence._registry.MapSpec`, and one *measure*, run at each point); a *check's map*
(:class:`CheckMap`) is one check across that grid, the figure a map is drawn in.

:mod:`._grid`: the axes and points of a grid, read from ``-p`` and checked in their domains;
:mod:`._results`: a grid's results, run in process; :mod:`._read`: an explore tree's results, verified;
:mod:`._decide`: the map of every check (values, pass shares, the book's decision at each point);
:mod:`._boundaries`: where a decision changes; :mod:`._words`: the maps in words; :mod:`._draw`:
their figures;
:mod:`._beyond_maps`: the measures of chapter 8's maps, each point's run and its checks;
:mod:`._page`: the page of the maps; :mod:`._folder`: the maps folder of an explore tree (figures,
``maps.json``, the page); :mod:`._book`: an explore tree's book, that page alone.
It never imports the runner (:mod:`ntpnb.runner`): maps are
drawn in a chapter's kernel too.
"""

from __future__ import annotations

from typing import Any

from ..records._ownership import is_explore_tree
from ._boundaries import Boundary
from ._decide import CheckMap, check_maps
from ._draw import MapLabels, Mark, draw_map, fit_title, legend_words, shared_legend
from ._grid import Axis, Grid, split_parameters
from ._results import GridResults, point_check, point_run, run_grid
from ._words import boundary_summary, format_by_point, seed_means, summary_lines

#: The grid, the maps a chapter draws in its kernel, and what the command line calls.
__all__ = [
    "Axis",
    "Grid",
    "split_parameters",
    "Boundary",
    "CheckMap",
    "GridResults",
    "point_run",
    "run_grid",
    "point_check",
    "check_maps",
    "draw_map",
    "MapLabels",
    "Mark",
    "shared_legend",
    "legend_words",
    "summary_lines",
    "boundary_summary",
    "seed_means",
    "format_by_point",
    "fit_title",
    "build_explore_book",
    "is_explore_tree",
]

#: The measures of chapter 8's maps (M1-M5), each a ``measure`` of :func:`run_grid`.
__all__ += [
    "StepSizeMeasure",
    "HorizonMeasure",
    "ConditionsMeasure",
    "AttentionStepMeasure",
    "AttentionSamplesMeasure",
]


#: The names loaded on first use (PEP 562), by module: the book build (:mod:`._book`), and chapter
#: 8's measures (:mod:`._beyond_maps`, which load the linear and attention experiments).
_LAZY = {
    "build_explore_book": "_book",
    **dict.fromkeys(
        (
            "StepSizeMeasure",
            "HorizonMeasure",
            "ConditionsMeasure",
            "AttentionStepMeasure",
            "AttentionSamplesMeasure",
        ),
        "_beyond_maps",
    ),
}


def __getattr__(name: str) -> Any:
    """A name of :data:`_LAZY`, loaded from its module on first use.

    The maps need no book, and a command line needs no experiment: a chapter's kernel loads no
    book, and a refused ``ntpnb explore`` neither the book nor the experiments.
    """
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
