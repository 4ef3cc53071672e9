"""The benchmarks page's figures: solve time against problem size, one figure per table."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from ntpnb.chapter import COLORS, use_style
from ntpnb.chapter._plotting import write_figure

from .scaling import Table

MARKERS = ("o", "s", "^", "D", "v", "P")


def figure_stem(problem: str) -> str:
    """The file name (without suffix) of a table's figure: ``scaling_<problem as a slug>``."""
    return "scaling_" + re.sub(r"[^a-z0-9]+", "_", problem.lower()).strip("_")


def scaling_figure(table: Table, fit_kind: Callable, fit: Callable) -> Figure:
    """Seconds against the table's count on log-log axes, each method with its fitted power law.

    Filled markers are the sizes of the fitted kind (Paper A: ``d > m``), open ones the others;
    the dashed line is ``c count^a`` over the points of the fit (``fit(table, method, fit_kind)``
    gives ``(a, log c)``); the dotted line is the table's budget.
    """
    use_style()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for k, name in enumerate(table.methods):
        color, marker = COLORS[k % len(COLORS)], MARKERS[k % len(MARKERS)]
        done = [m for m in table.measurements if m.method == name and m.seconds is not None]
        if not done:
            continue
        params = fit(table, name, fit_kind)
        label = f"{name} (a = {params[0]:.2f})" if params else f"{name} (no fit)"
        for kind in (True, False):
            pts = [(m.count, m.seconds) for m in done if bool(fit_kind(m.size)) == kind]
            if pts:
                x, y = np.array(pts).T
                ax.loglog(
                    x, y, marker, color=color, mfc=color if kind else "none", label=label if kind else None
                )
        if params:
            x = np.array(sorted({m.count for m in done if fit_kind(m.size)}), dtype=float)
            ax.loglog(x, np.exp(params[1]) * x ** params[0], "--", color=color, lw=1)
        elif not any(fit_kind(m.size) for m in done):
            ax.plot([], [], marker, color=color, mfc="none", label=label)
    if table.budget is not None:
        ax.axhline(table.budget, ls=":", color="0.4", lw=1, label=f"budget {table.budget:g} s")
    ax.set_xlabel(table.count_label)
    ax.set_ylabel("wall-clock seconds")
    ax.set_title(f"{table.problem}: time against size ({table.fit_label} filled)")
    ax.legend(loc="upper left", fontsize=8)
    return fig


def write_scaling_figure(table: Table, fit_kind: Callable, fit: Callable, out: Path) -> Path:
    """Draw :func:`scaling_figure`, write it to ``<out>/<figure_stem>.png`` and ``.pdf``; return the PNG."""
    fig = scaling_figure(table, fit_kind, fit)
    try:
        return write_figure(fig, out / figure_stem(table.problem))[0]
    finally:
        plt.close(fig)
