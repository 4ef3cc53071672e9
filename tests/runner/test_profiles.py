"""The parameters cell of a notebook: its values and what each parameter means."""

from __future__ import annotations

import textwrap

import pytest

from ntpnb.chapter.paths import notebook_sources
from ntpnb.errors import NTPError
from ntpnb.runner.profiles import parse_parameters_cell, read_parameters_cell

from conftest import ROOT
from fake_notebooks import fake_notebook

SOURCES = notebook_sources(ROOT)


def meanings(cell: str) -> dict[str, str]:
    return {name: p.meaning for name, p in parse_parameters_cell(textwrap.dedent(cell)).items()}


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_every_parameter_of_every_notebook_says_what_it_means(path):
    missing = [name for name, p in read_parameters_cell(path).items() if not p.meaning.strip()]
    assert not missing, f"{path.name}: give these a comment in the parameters cell: {', '.join(missing)}"


def test_the_meaning_is_the_comment_ending_the_line():
    cell = """
        n = 5000  # samples
        sizes = [
            1,
            2,
        ]  # sizes swept
        plain = 3
    """
    assert meanings(cell) == {"n": "samples", "sizes": "sizes swept", "plain": ""}


def test_a_comment_line_heads_the_assignments_below_it_up_to_a_blank_line():
    cell = """
        seed = 0  # seed
        # synthetic instance
        # (Figs. 3-5)
        n = 5000  # samples
        m = 50

        lr = 0.5  # step size
        # another group
        k = 3  # steps
        # a note on nothing below

        last = 1  # alone
    """
    assert meanings(cell) == {
        "seed": "seed",
        "n": "synthetic instance (Figs. 3-5): samples",
        "m": "synthetic instance (Figs. 3-5)",
        "lr": "step size",
        "k": "another group: steps",
        "last": "alone",
    }


def test_the_values_are_the_literals_of_the_cell():
    cell = 'a = 1_000  # x\nb = [[2, 1], [5, 2]]  # y\nc = "uniform"  # z\nd = None  # w\n'
    assert {k: p.value for k, p in parse_parameters_cell(cell).items()} == {
        "a": 1000,
        "b": [[2, 1], [5, 2]],
        "c": "uniform",
        "d": None,
    }


@pytest.mark.parametrize(
    ("cell", "says"),
    [
        ("import os\n", "line 1 of its parameters cell is not NAME = VALUE"),
        ("a = b = 1\n", "line 1 of its parameters cell is not NAME = VALUE"),
        ("a = 1\nx.y = 2\n", "line 2 of its parameters cell is not NAME = VALUE"),
        ("a = f(1)  # computed\n", "the parameter a is not a Python literal"),
        ("a = (1\n", "its parameters cell is not Python"),
    ],
)
def test_a_cell_that_is_not_assignments_of_literals_is_refused_in_one_line(cell, says):
    with pytest.raises(NTPError) as error:
        parse_parameters_cell(cell, "x.md")
    message = str(error.value)
    assert message.startswith("x.md: ") and says in message and "\n" not in message


def test_a_notebook_without_a_parameters_cell_is_refused(tmp_path):
    path = tmp_path / "01_x.md"
    path.write_text(fake_notebook("print(1)").replace(":tags: [parameters]", ""))
    with pytest.raises(NTPError) as error:
        read_parameters_cell(path)
    assert str(error.value) == "01_x.md: needs one code cell tagged 'parameters', has 0"
