"""The domains of parameters: their notation, their words, what they admit."""

from __future__ import annotations

import pytest

from ntpnb.chapter._domains import Domain, closest, domain_of_value, parse_domain, split_declaration
from ntpnb.errors import NTPError


@pytest.mark.parametrize(
    ("notation", "words"),
    [
        ("int", "a whole number"),
        ("int ≥ 1", "a whole number >= 1"),
        ("int >= 1", "a whole number >= 1"),
        ("float > 0", "a number > 0"),
        ("0 < float ≤ 1", "a number > 0 and <= 1"),
        ("-1 <= float <= 1", "a number >= -1 and <= 1"),
        ("bool", "true or false"),
        ("text or None", "a text, or None"),
        ('"uniform" | "zero"', "one of 'uniform', 'zero'"),
        ("list of float > 0", "a non-empty list, each item a number > 0"),
        ("list of pair of int ≥ 1", "a non-empty list, each item a pair [a, b], each a whole number >= 1"),
        ("interval of float > 0", "an interval [low, high] with low < high, each a number > 0"),
    ],
)
def test_a_domain_is_written_compactly_and_said_in_words(notation, words):
    assert parse_domain(notation).describe() == words


@pytest.mark.parametrize(
    ("notation", "inside", "outside"),
    [
        ("int ≥ 1", [1, 7, 2**63 - 1], [0, -3, 1.0, True, "1", 2**63]),
        ("int ≥ 0", [0, 5], [-1]),
        ("float > 0", [0.5, 3, 1e300], [0, 0.0, -1.0, float("inf"), float("nan"), False]),
        ("0 ≤ float < 1", [0.0, 0.99], [1.0, -0.1]),
        ("bool", [True, False], [0, 1, "true"]),
        ('"2D" | "synthetic"', ["2D"], ["3D", 2]),
        ("list of float > 0", [[1.0], [1, 2.5]], [[], [0.0], 1.0, [True]]),
        ("list of pair of int ≥ 1", [[[2, 1]], [(5, 2), [10, 3]]], [[[2]], [[2, 0]], [[2, 1, 3]]]),
        ("interval of float > 0", [[0.5, 1.5]], [[1.5, 0.5], [1.0, 1.0], [0.0, 1.0], [1.0]]),
        ("text or None", [None, "../x"], [3]),
    ],
)
def test_a_domain_admits_its_values_and_no_other(notation, inside, outside):
    domain = parse_domain(notation)
    for value in inside:
        domain.check(value)
    for value in outside:
        with pytest.raises(ValueError, match=r"^(a|an|one|true) "):
            domain.check(value)


def test_a_float_domain_holds_floats_and_a_list_keeps_its_kind():
    assert type(parse_domain("float > 0").check(3)) is float
    assert parse_domain("list of float > 0").check([1, 2]) == [1.0, 2.0]
    assert parse_domain("list of int").check((3, 4)) == (3, 4)


@pytest.mark.parametrize(
    ("notation", "text", "value"),
    [
        ("int ≥ 1", "12", 12),
        ("float > 0", "1e-3", 1e-3),
        ("bool", "False", False),
        ("bool", "true", True),
        ('"uniform" | "zero"', "zero", "zero"),
        ('"uniform" | "zero"', "'zero'", "zero"),
        ("text", "2D", "2D"),
        ("text", "12", "12"),  # a text that looks like a number stays a text
        ('list of "2D" | "synthetic"', "['2D']", ["2D"]),
        ("text or None", "None", None),
    ],
)
def test_a_command_line_text_is_read_in_the_domain(notation, text, value):
    assert parse_domain(notation).read(text) == value


def test_a_value_that_does_not_fit_64_bits_says_so():
    with pytest.raises(ValueError, match="a whole number >= 0 that fits in 64 bits"):
        parse_domain("int ≥ 0").read(str(2**64))


@pytest.mark.parametrize("notation", ["integer", "int >> 1", "list of", "float > x", "'a' | 3"])
def test_a_domain_not_in_the_notation_is_refused(notation):
    with pytest.raises(NTPError, match="not in ntpnb's notation"):
        parse_domain(notation)


def test_the_declaration_opens_the_comment():
    domain, meaning = split_declaration("{int ≥ 1} samples (n)")
    assert domain == Domain("int", ((">=", 1),)) and meaning == "samples (n)"
    assert split_declaration("samples {n}") == (None, "samples {n}")


def test_a_parameter_without_a_declaration_has_the_kind_of_its_value():
    assert domain_of_value(3).describe() == "a whole number"
    assert domain_of_value([1.0, 2.0]).describe() == "a list, each item a number"
    assert domain_of_value([]).check([]) == []
    assert domain_of_value(None).check("anything") == "anything"


def test_a_misspelt_name_gets_the_nearest():
    assert closest("n_gg", ["seed", "n_g", "g_max"]) == " (did you mean 'n_g'?)"
    assert closest("zzz", ["seed", "n_g"]) == ""
