"""Phrases a chapter writes from its numbers: a change with its error, a range of decades,
sentences, a table."""

from __future__ import annotations

import pytest

from ntpnb.chapter import describe_change, format_decade_range, markdown_table, sentences
from ntpnb.errors import InvalidDataError


def test_describe_change_against_two_standard_errors():
    assert describe_change(0.01, 0.02) == "changes by +0.010 ± 0.020 (within 2 standard errors)"
    assert describe_change(-0.08, 0.02) == "falls by 0.080 ± 0.020 (4.0 standard errors)"
    assert describe_change(0.05, 0.01) == "rises by 0.050 ± 0.010 (5.0 standard errors)"
    with pytest.raises(InvalidDataError, match="se > 0"):
        describe_change(0.1, 0.0)


@pytest.mark.parametrize(
    ("lo", "hi", "text"),
    [
        (3e-15, 2e-14, "between 1e-15 and 1e-13"),
        (0.8e-14, 2.4e-14, "between 1e-15 and 1e-13"),
        (2e-16, 5e-16, "between 1e-17 and 1e-15"),
        (2.0, 9.0, "between 1e-01 and 1e+01"),
        (2.0, 30.0, "between 1e-01 and 1e+03"),
    ],
)
def test_format_decade_range_brackets_by_odd_powers_of_ten(lo, hi, text):
    assert format_decade_range(lo, hi) == text
    down, up = (float(s) for s in text.split()[1::2])
    assert down <= lo <= hi <= up


def test_format_decade_range_needs_an_ordered_positive_range():
    with pytest.raises(InvalidDataError, match="0 < lo <= hi"):
        format_decade_range(1e-3, 1e-4)
    with pytest.raises(InvalidDataError, match="0 < lo <= hi"):
        format_decade_range(0.0, 1.0)


def test_sentences_and_markdown_table():
    assert sentences(["A7: slow", "A12: far"], "none.") == "A7: slow; A12: far."
    assert sentences([], "none.") == "none."
    table = markdown_table(("a", "b"), [("1", "2"), ("**s**", "")])
    assert table.splitlines() == ["| a | b |", "|---|---|", "| 1 | 2 |", "| **s** |  |"]
    with pytest.raises(InvalidDataError, match="3 cells in a table of 2 columns"):
        markdown_table(("a", "b"), [("1", "2", "3")])
