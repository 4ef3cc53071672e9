"""The chapters' drawing helpers (ntpnb.chapter._figures): what each puts on its axes."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

import ntpnb as ntp
from ntpnb import _optim as optim
from ntpnb import attention as att
from ntpnb.chapter import (
    COLORS,
    band,
    draw_contexts,
    draw_graph,
    draw_rows,
    four_panels,
    unit_rows,
)


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_four_panels_plot_the_trace_on_log_iterations():
    toy = ntp.toy2d_instance(0)
    trace = ntp.train(toy, optim.gd(0.5), 100, n_records=10, lim=ntp.limits(toy))
    _, axes = plt.subplots(1, 4)
    four_panels(axes, trace, ntp.entropy(toy), label="GD", color=COLORS[0])
    keep = trace.iterations >= 1
    np.testing.assert_array_equal(axes[0].lines[0].get_ydata(), trace.ce[keep])
    assert axes[0].lines[1].get_ydata()[0] == ntp.entropy(toy)  # the entropy, dotted
    np.testing.assert_array_equal(axes[2].lines[1].get_ydata(), trace.corr_corrected[keep])
    assert all(ax.get_xscale() == "log" for ax in axes) and axes[3].get_yscale() == "log"


def test_draw_contexts_writes_each_support_in_the_colors_of_its_tokens():
    toy = ntp.toy2d_instance(0)
    _, ax = plt.subplots()
    draw_contexts(ax, toy, ["A", "B", "C"])
    texts = list(ax.texts)
    assert [t.get_text() for t in texts if t.get_text() in "ABC"] == ["A", "B", "C"]
    digits = [t for t in texts if t.get_text().isdigit()]
    assert len(digits) == int(toy.support_mask.sum())
    assert all(matplotlib.colors.same_color(t.get_color(), COLORS[int(t.get_text()) - 1]) for t in digits)


def test_draw_rows_as_vectors_or_normal_lines():
    W = np.array([[1.0, 0.0], [0.0, 2.0], [-1.0, -1.0], [0.5, 0.5], [1.0, 0.0]])
    _, (left, right) = plt.subplots(1, 2)
    draw_rows(left, W)
    tips = [line.get_xydata()[0] for line in left.lines]
    np.testing.assert_allclose(tips, W)
    draw_rows(right, W, normal_lines=True)
    for line, w in zip(right.lines, W, strict=True):
        direction = np.diff(line.get_xydata(), axis=0)[0]
        assert abs(direction @ w) < 1e-12  # the line normal to w_v
    assert right.lines[4].get_linestyle() == "--"  # w_5 dashed over w_1


def test_unit_rows_moves_only_the_iterate_between_frames():
    toy = ntp.toy2d_instance(0)
    lim = ntp.limits(toy)
    trace = ntp.train(toy, optim.gd(0.5), 50, n_records=5, lim=lim, keep_iterates=True)
    target = lim.W_mm_unit
    _, ax = plt.subplots()
    show = unit_rows(ax, trace, target, toy.H, 1.5)
    artists = list(ax.get_children())
    for i in (1, 4):
        show(i)
        W = trace.iterates[i] / np.linalg.norm(trace.iterates[i])
        np.testing.assert_allclose([line.get_xydata()[1] for line in ax.lines[1::2]], W)
        np.testing.assert_allclose([line.get_xydata()[1] for line in ax.lines[::2]], target)
        corr = trace.corr[i]
        assert ax.get_title() == rf"$k$ = {trace.iterations[i]}, $\operatorname{{corr}}$ = {corr:.3f}"
    assert list(ax.get_children()) == artists  # the same artists, moved
    assert ax.get_xlim() == (-1.5, 1.5)


def test_draw_graph_draws_every_edge_and_shades_the_sccs():
    tpg = att.token_priority_graphs(
        att.as_token_data([[4, 3, 0], [2, 4, 1], [3, 2, 1], [4, 3, 1]], [3, 2, 3, 4], 6)
    )
    g = tpg[1]
    _, ax = plt.subplots()
    draw_graph(ax, g, 6)
    assert len(ax.texts) - len(g.nodes) == len(g.edges)  # one arrow (annotation) per edge
    assert len(ax.patches) == len(g.cyclic_components)
    # numbered from 1, as the papers number tokens: the code's last token 1 is G^(2)
    assert ax.get_title() == r"$\mathcal{G}^{(2)}$"
    labels = sorted(text.get_text() for text in ax.texts if text.get_text())
    assert labels == sorted(str(v + 1) for v in g.nodes)


def test_band_is_the_mean_and_the_10_90_spread():
    it = np.array([0, 1, 10, 100])
    values = np.random.default_rng(0).standard_normal((4, 50))
    _, ax = plt.subplots()
    band(ax, it, values, COLORS[1], "x")
    np.testing.assert_allclose(ax.lines[0].get_ydata(), values.mean(axis=1)[1:])
    lo, hi = np.quantile(values, [0.1, 0.9], axis=1)[:, 1:]
    ys = ax.collections[0].get_paths()[0].vertices[:, 1]  # the shaded band's outline
    assert all(np.isclose(ys, v).any() for v in np.r_[lo, hi])
    assert ax.get_xscale() == "log"
