"""Where a chapter's claims stop holding: grids of its settings, and a map of every check over them.

A grid (:mod:`.grid`) is one or two parameters of a chapter, each over a list or a range of
values, checked in their domains; ``ntpnb explore`` (:mod:`ntpnb.runner.explore`) runs the
chapter at every point and seed of it into an explore tree. This package never imports the
runner: a chapter's kernel draws maps of grids too.
"""

from __future__ import annotations

from .grid import Axis, Grid, checked_grid, parse_axis, point_label, split_parameters

__all__ = ["Axis", "Grid", "checked_grid", "parse_axis", "point_label", "split_parameters"]
