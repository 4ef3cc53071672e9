"""Grids of a chapter's settings: ``-p`` lists and ranges, and every refusal, before anything runs."""

from __future__ import annotations

import itertools

import pytest

from ntpnb.chapter._parameters import split_values
from ntpnb.errors import NTPError
from ntpnb.explore import Axis, Grid, split_parameters
from ntpnb.explore._grid import checked_grid, parse_axis, point_label

from conftest import ROOT

CHAPTER_3 = ROOT / "notebooks" / "03_gd_implicit_bias.md"


def test_a_list_is_an_axis_of_literals():
    axis = parse_axis("toy_lr=0.1, 0.5,1")
    assert axis == Axis("toy_lr", (0.1, 0.5, 1), "0.1, 0.5,1", log=False)
    assert axis.texts() == ("0.1", "0.5", "1")
    # a comma inside brackets or quotes belongs to its value
    assert parse_axis("configs=[[2, 1]],[[5, 2], [1, 1]]").values == ([[2, 1]], [[5, 2], [1, 1]])
    assert split_values("'a,b',c") == ["'a,b'", "c"]
    assert parse_axis("loss=ce,'hinge'").texts() == ("ce", "hinge")


def test_a_list_spanning_two_decades_is_drawn_on_a_log_scale():
    assert parse_axis("lr=0.01,0.1,1").log
    assert not parse_axis("lr=0.02,0.1,1").log  # 50 times: linear
    assert not parse_axis("lr=-1,10,100").log
    assert not parse_axis("mode=a,b").log


def test_a_log_range_is_evenly_spaced_in_log_to_six_digits():
    axis = parse_axis("toy_lr=0.01..10:log:4")
    assert axis.values == (0.01, 0.1, 1.0, 10.0) and axis.log
    assert axis.spec == "0.01..10:log:4"
    values = parse_axis("x=1..100:log:5").values
    assert values == (1.0, 3.16228, 10.0, 31.6228, 100.0)
    ratios = [b / a for a, b in itertools.pairwise(values)]
    assert max(ratios) / min(ratios) < 1 + 1e-5


def test_a_lin_range_is_evenly_spaced():
    axis = parse_axis("x=-1..1:lin:5")
    assert axis.values == (-1.0, -0.5, 0.0, 0.5, 1.0) and not axis.log


def test_one_value_is_a_fixed_override_and_several_an_axis():
    axes, fixed = split_parameters(["toy_lr=0.1,1", "toy_iters=2000", "x=[1, 2]", "y=1..2:lin:2"])
    assert [a.name for a in axes] == ["toy_lr", "y"]
    assert fixed == {"toy_iters": "2000", "x": "[1, 2]"}


@pytest.mark.parametrize(
    "text, message",
    [
        ("toy_lr", "bad parameter override 'toy_lr': write KEY=VALUE"),
        ("toy_lr=", "-p toy_lr= gives no value"),
        ("toy_lr=0.1,,1", "value 2 of 3 is empty"),
        ("toy_lr=0.1,", "value 2 of 2 is empty"),
        ("toy_lr=0.1..1", "is not a range: write LO..HI:log:N or LO..HI:lin:N"),
        ("toy_lr=0.1..1:log", "is not a range"),
        ("toy_lr=a..1:log:3", "LO and HI must be numbers"),
        ("toy_lr=0.1..1:exp:3", "the scale is 'exp', neither log nor lin"),
        ("toy_lr=0.1..1:log:1", "N = '1' is not a whole number >= 2"),
        ("toy_lr=0.1..1:log:x", "N = 'x' is not a whole number >= 2"),
        ("toy_lr=1..1:lin:3", "LO = 1 must be below HI = 1"),
        ("toy_lr=2..1:lin:3", "LO = 2 must be below HI = 1"),
        ("toy_lr=0..1:log:3", "a log range needs LO > 0 (it is 0)"),
        ("toy_lr=-1..1:log:3", "a log range needs LO > 0 (it is -1)"),
        ("toy_lr=0.1..inf:lin:3", "both finite"),
    ],
)
def test_bad_axes_are_refused_with_what_is_wrong(text, message):
    with pytest.raises(NTPError) as caught:
        parse_axis(text)
    assert message in str(caught.value)


def test_a_name_given_twice_is_refused():
    with pytest.raises(NTPError, match="parameter 'toy_lr' is overridden twice"):
        split_parameters(["toy_lr=0.1,1", "toy_lr=2"])


def test_the_grid_has_the_points_of_its_axes_the_last_fastest():
    grid = Grid((Axis("a", (1, 2)), Axis("b", (0.5, "x", True))))
    assert grid.shape() == (2, 3)
    assert grid.points()[:4] == [
        {"a": 1, "b": 0.5},
        {"a": 1, "b": "x"},
        {"a": 1, "b": True},
        {"a": 2, "b": 0.5},
    ]
    assert [point_label(p) for p in grid.points()[:3]] == ["a=1,b=0.5", "a=1,b=x", "a=1,b=True"]
    assert point_label({"s": "a b/c", "lr": 1e-5}) == "s=a_b_c,lr=1e-05"


def test_checked_values_are_the_parameters_and_whole_numbers_are_rounded():
    axes = (parse_axis("toy_lr=0.01..10:log:4"), parse_axis("toy_iters=1000..100000:log:5"))
    grid = checked_grid(CHAPTER_3, "quick", axes, {"n_frames": "4"})
    lr, iters = grid.axes
    assert lr.values == (0.01, 0.1, 1.0, 10.0) and all(type(v) is float for v in lr.values)
    assert iters.values == (1000, 3162, 10000, 31623, 100000) and all(type(v) is int for v in iters.values)
    assert iters.log and iters.spec == "1000..100000:log:5"
    assert grid.shape() == (4, 5)
    # a list over a float parameter: whole numbers become numbers
    (axis,) = checked_grid(CHAPTER_3, "quick", [parse_axis("toy_lr=1,2")], {}).axes
    assert axis.values == (1.0, 2.0) and axis.texts() == ("1.0", "2.0")


@pytest.mark.parametrize(
    "pairs, message",
    [
        (["toy_lr=0.1,-1"], "toy_lr='-1' is not a number > 0 (toy_lr: GD step"),
        (["toy_lr=0.1,-1"], "(a value of -p toy_lr=0.1,-1)"),
        (["toy_lr=-1..1:lin:3"], "toy_lr='-1.0' is not a number > 0"),
        (["toy_iters=1.5,2"], "toy_iters='1.5' is not a whole number >= 1"),
        (["toy_iters=0..4:lin:3"], "toy_iters='0' is not a whole number >= 1"),
        (["toy_iters=2..4:lin:5"], "round to 2, 2, 3, 4, 4, some twice; ask for fewer values"),
        (["toy_lr=1,1.0"], "the same value twice (toy_lr=1.0)"),
        (["toy_lr=0.1,1", "n_frames=1"], "n_frames='1' is not a whole number >= 2"),
        (["toy_lrr=0.1,1"], "has no parameter 'toy_lrr' (did you mean 'toy_lr'?)"),
        (["profile=quick,paper"], "-p profile=quick sets no parameter of a chapter"),
        (["output_dir=a,b"], "-p output_dir=a sets no parameter of a chapter"),
        (["seed=0,1"], "seed is not an axis"),
        (["toy_iters=10"], "explore needs an axis"),
        (["toy_lr=0.1,1", "toy_iters=10,20", "n_frames=2,3"], "a grid has one or two axes"),
    ],
)
def test_every_value_is_checked_in_its_domain_before_anything_runs(pairs, message):
    axes, fixed = split_parameters(pairs)
    with pytest.raises(NTPError) as caught:
        checked_grid(CHAPTER_3, "quick", axes, fixed)
    assert message in str(caught.value)


def test_in_process_axes_are_checked_alike():
    with pytest.raises(NTPError, match="the axis toy_lr has 1 value"):
        checked_grid(CHAPTER_3, "quick", [Axis("toy_lr", (0.1,))], {})
    with pytest.raises(NTPError, match="parameter 'toy_lr' is given twice"):
        checked_grid(CHAPTER_3, "quick", [Axis("toy_lr", (0.1, 1.0))], {"toy_lr": "2"})
    (axis,) = checked_grid(CHAPTER_3, "quick", [Axis("toy_lr", (0.01, 1.0))], {}).axes
    assert axis.log  # a list spanning two decades


def test_the_nearest_value_of_an_axis_is_by_ratio_on_a_log_axis_and_by_difference_otherwise():
    steps = Axis("lr", (0.001, 0.01, 0.1, 1.0), log=True)
    assert steps.nearest(0.02) == 0.01  # 2x above 0.01, 5x below 0.1
    assert steps.nearest(0.06) == 0.1
    assert steps.nearest(0.01) == 0.01 and steps.nearest(50.0) == 1.0
    assert Axis("m", (10, 20, 40)).nearest(31) == 40  # 9 from 40, 11 from 20 (by ratio: 20)
    with pytest.raises(NTPError, match="positive"):
        steps.nearest(0.0)
    with pytest.raises(NTPError, match="no nearest"):
        Axis("name", ("a", "b")).nearest(1.0)
