"""The drawing helpers of the chapters' figures: the same panel drawn the same way everywhere.

Each draws on the axes it is given and returns nothing (:func:`unit_rows` returns the function
that moves its frame); the notebook lays out the figure and saves it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ._plotting import COLORS

if TYPE_CHECKING:  # matplotlib is imported by the functions that draw, not with the package
    from matplotlib.axes import Axes

_FOUR_PANEL_LABELS = (
    r"$\operatorname{CE}(W_k)$ (dotted: $\mathcal{H}$)",
    r"$\|W_k\|$",
    r"$\operatorname{corr}(W_k, W^{\rm mm})$ (dashed: $W_k - W^\star$)",
    r"$\|\mathcal{P}_\mathscr{F}(W_k) - W^\star\|$",
)


def four_panels(
    axes: Sequence[Axes], trace, entropy: float, label: str | None = None, color: str | None = None
) -> None:
    """The four panels of Paper A's Figs. 1 (right), 4 and 5 for the :class:`~ntpnb._optim.Trace` of one run.

    Pass the axes of a 2 x 2 grid (``axes.ravel()``): the page's width holds two panels.
    """
    k = trace.iterations
    keep = k >= 1  # log-scaled iteration axis
    for ax, key, ylabel in zip(axes, ("ce", "norm", "corr", "dist_F"), _FOUR_PANEL_LABELS, strict=True):
        ax.plot(k[keep], getattr(trace, key)[keep], label=label, color=color)
        ax.set(xscale="log", xlabel="iteration $k$", ylabel=ylabel)
    axes[0].axhline(entropy, color="k", ls=":", lw=1.2)
    axes[2].plot(k[keep], trace.corr_corrected[keep], color=color, ls="--", lw=1.2)
    axes[3].set_yscale("log")


def draw_contexts(ax: Axes, data, names: Sequence[str]) -> None:
    """Black circles at the context embeddings (2-D), named, with their supports ``{z ...}`` in colour."""
    supports = [[int(z) + 1 for z in s] for s in data.supports]
    ax.scatter(*data.H.T, s=60, color="k", zorder=3)
    for name, h, sup in zip(names, data.H, supports, strict=True):
        away = 14 * h / np.linalg.norm(h)  # write the labels on the far side
        ax.annotate(name, h, xytext=away, textcoords="offset points", weight="bold")
        pieces = [("{", "k")] + [(f"{z}", COLORS[z - 1]) for z in sup] + [("}", "k")]
        for i, (text, color) in enumerate(pieces):
            offset = (away[0] + 8 + 8 * i, away[1] - 12)
            ax.annotate(text, h, xytext=offset, textcoords="offset points", color=color, weight="bold")


def draw_rows(ax: Axes, W: np.ndarray, normal_lines: bool = False) -> None:
    """The rows ``w_v`` of a 2-D decoder as lines with star tips (``w_5`` dashed), or lines normal to them."""
    for v, w in enumerate(W):
        color, ls = COLORS[v], ("--" if v == 4 else "-")  # w_5 dashed over w_1
        label = f"$w_{v + 1}$"
        if normal_lines:
            t = np.array([-1, 1]) * 10
            u = np.array([-w[1], w[0]]) / np.linalg.norm(w)
            ax.plot(t * u[0], t * u[1], color=color, ls=ls, label=label)
        else:
            ax.annotate("", w, (0, 0), arrowprops={"arrowstyle": "-", "color": color, "ls": ls})
            size = {0: 17, 4: 9}.get(v, 12)  # w_5 drawn inside w_1 where they coincide
            ax.plot(*w, marker="*", ms=size, color=color, ls="none", label=label)


def unit_rows(ax: Axes, trace, target: np.ndarray, H: np.ndarray, scale: float) -> Callable[[int], None]:
    """Draw the frame of a 2-D training run on ``ax``; return ``show(i)``, which shows record ``i``.

    The frame holds the faint rows of ``target`` and the contexts; ``show(i)`` moves the rows of
    ``W_k / ||W_k||`` (``trace`` holds ``iterates`` and ``corr``) without rebuilding the axes.
    """
    rows = []
    for v in range(target.shape[0]):
        ax.plot([0, target[v, 0]], [0, target[v, 1]], color=COLORS[v], alpha=0.3, lw=4)
        (line,) = ax.plot([0, 0], [0, 0], color=COLORS[v], ls="--" if v == 4 else "-", marker="*")
        rows.append(line)
    ax.scatter(*(H.T / 3), color="k", s=20)
    ax.set(xlim=(-scale, scale), ylim=(-scale, scale), aspect="equal")

    def show(i: int) -> None:
        Wn = trace.iterates[i] / np.linalg.norm(trace.iterates[i])
        for line, w in zip(rows, Wn, strict=True):
            line.set_data([0, w[0]], [0, w[1]])
        ax.set_title(rf"$k$ = {trace.iterations[i]}, $\operatorname{{corr}}$ = {trace.corr[i]:.3f}")

    return show


def draw_graph(ax: Axes, g, K: int) -> None:
    """A graph of :func:`ntpnb.attention.token_priority_graphs` over ``K`` tokens, its SCCs shaded.

    Its tokens and its title's last token are numbered from 1, as the papers number them (the
    code's token ``v`` is labelled ``v + 1``).
    """
    from matplotlib.patches import Polygon

    angle = 2 * np.pi * np.arange(K) / K
    pos = {k: (np.cos(a), np.sin(a)) for k, a in zip(range(K), angle, strict=True)}
    for comp in g.cyclic_components:
        pts = np.array([pos[v] for v in comp])
        c = pts.mean(axis=0)
        pts = pts[np.argsort(np.arctan2(*(pts - c).T[::-1]))]  # around the centroid
        halo = {"color": COLORS[1], "alpha": 0.18, "lw": 42, "joinstyle": "round"}
        ax.add_patch(Polygon(pts, closed=True, capstyle="round", **halo))
    for i, j in g.edges:
        color = COLORS[1] if g.same_component(i, j) else "black"
        ax.annotate(
            "", pos[j], pos[i], arrowprops={"arrowstyle": "-|>", "color": color, "shrinkA": 11, "shrinkB": 11}
        )
    for v in g.nodes:
        ax.scatter(*pos[v], s=380, color=COLORS[0], zorder=3)
        ax.text(*pos[v], str(v + 1), color="white", ha="center", va="center", zorder=4)
    ax.set(xlim=(-1.6, 1.6), ylim=(-1.6, 1.6), aspect="equal", title=rf"$\mathcal{{G}}^{{({g.k + 1})}}$")
    ax.axis("off")


def band(ax: Axes, it: np.ndarray, values: np.ndarray, color: str, label: str) -> None:
    """The mean over trials (``values`` ``(n_records, B)``) with its 10-90% spread, log iterations."""
    lo, hi = np.quantile(values, [0.1, 0.9], axis=1)
    ax.plot(it[1:], values.mean(axis=1)[1:], color=color, label=label)
    ax.fill_between(it[1:], lo[1:], hi[1:], color=color, alpha=0.2)
    ax.set_xscale("log")
