"""Numbers glued into the prose: rounded as the claim checks print them, in myst-nb's format."""

from __future__ import annotations

import pytest
from myst_nb.core.variables import format_plain_text
from myst_nb.ext.glue import GLUE_PREFIX, extract_glue_data_cell
from nbformat.v4 import new_code_cell, new_output

from ntpnb.chapter import _prose as prose
from ntpnb.chapter import columns_table, describe_change, markdown_table, sentences
from ntpnb.errors import InvalidDataError


def test_a_number_is_glued_rounded_under_its_name(monkeypatch):
    shown = []
    monkeypatch.setattr("myst_nb.ext.glue.ipy_display", lambda *a, **k: shown.append((a, k)))

    def glued(*args, **kwargs):
        """The text glue_number glued; it returns nothing (no stray cell output)."""
        assert prose.glue_number(*args, **kwargs) is None
        (bundle,), _ = shown[-1]
        return eval(bundle[GLUE_PREFIX + "text/plain"])

    assert glued("gap", 1.7234e-13, digits=2) == "1.7e-13"
    assert glued("beta", 0.33012) == "0.33"
    assert glued("radius", 64.0) == "64"
    assert glued("tiny", 2.04e-5, digits=1) == "2e-05"
    assert glued("count", 5) == "5"
    (bundle,), kwargs = shown[0]
    assert bundle == {GLUE_PREFIX + "text/plain": "'1.7e-13'"}  # hidden: only under myst-nb's prefix
    assert kwargs == {"raw": True, "metadata": {"scrapbook": {"name": "gap", "mime_prefix": GLUE_PREFIX}}}


def test_myst_nb_reads_the_glued_record_back(monkeypatch):
    outputs = []
    monkeypatch.setattr(
        "myst_nb.ext.glue.ipy_display",
        lambda data, raw, metadata: outputs.append(new_output("display_data", data=data, metadata=metadata)),
    )
    prose.glue_number("gap", 1.7234e-13, digits=2)
    cell = new_code_cell(outputs=outputs)
    ((name, output),) = extract_glue_data_cell(cell)
    assert name == "gap" and cell.outputs == []  # shown only where the prose pastes it
    assert format_plain_text(output["data"]["text/plain"], "") == "1.7e-13"


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "1.0", True, None])
def test_a_value_that_is_not_a_finite_number_is_refused(value):
    with pytest.raises(InvalidDataError, match="finite number"):
        prose.glue_number("x", value)


def test_an_empty_name_or_text_is_refused():
    with pytest.raises(InvalidDataError, match="name"):
        prose.glue_text("", "a")
    with pytest.raises(InvalidDataError, match="text"):
        prose.glue_text("a", " ")
    with pytest.raises(InvalidDataError, match="digits"):
        prose.glue_number("a", 1.0, digits=0)


# ----------------------------------------------------------------------------- phrases
# Phrases a chapter writes from its numbers: a change with its error, sentences, a table.


def test_describe_change_against_two_standard_errors():
    assert describe_change(0.01, 0.02) == "changes by +0.010 ± 0.020 (within 2 standard errors)"
    assert describe_change(-0.08, 0.02) == "falls by 0.080 ± 0.020 (4.0 standard errors)"
    assert describe_change(0.05, 0.01) == "rises by 0.050 ± 0.010 (5.0 standard errors)"
    with pytest.raises(InvalidDataError, match="se > 0"):
        describe_change(0.1, 0.0)


def test_sentences_and_markdown_table():
    assert sentences(["A7: slow", "A12: far"], "none.") == "A7: slow; A12: far."
    assert sentences([], "none.") == "none."
    table = markdown_table(("a", "b"), [("1", "2"), ("**s**", "")])
    assert table.splitlines() == ["| a | b |", "|---|---|", "| 1 | 2 |", "| **s** |  |"]
    with pytest.raises(InvalidDataError, match="3 cells in a table of 2 columns"):
        markdown_table(("a", "b"), [("1", "2", "3")])


def test_a_table_given_by_its_columns_has_a_row_per_label():
    table = columns_table({"2D": {"$m$": 3, "$d$": 2}, "synthetic": {"$m$": 50, "$d$": 60}}, corner="size")
    assert table.splitlines() == [
        "| size | 2D | synthetic |",
        "|---|---|---|",
        "| $m$ | 3 | 50 |",
        "| $d$ | 2 | 60 |",
    ]
    with pytest.raises(InvalidDataError, match="column 'b' has the rows"):
        columns_table({"a": {"x": 1}, "b": {"y": 2}})
    with pytest.raises(InvalidDataError, match="at least one column"):
        columns_table({})


def test_escape_markdown_but_math_keeps_inline_math_and_escapes_the_rest():
    from ntpnb._markdown import escape_markdown, escape_markdown_but_math

    text = r"under [authors' loss] (the loss $(1-\mathrm{softmax}(Ef_W(X))_y)^2$, not *stated*): 0.99"
    assert escape_markdown_but_math(text) == (
        r"under \[authors' loss\] (the loss $(1-\mathrm{softmax}(Ef_W(X))_y)^2$, not \*stated\*): 0.99"
    )
    assert escape_markdown_but_math("costs $5, or [more]") == escape_markdown("costs $5, or [more]")


def test_math_html_typesets_math_and_keeps_the_punctuation_closing_it_on_its_line():
    from ntpnb._markdown import math_html

    def math(tex):
        return f'<span class="math notranslate nohighlight">\\({tex}\\)</span>'

    html = math_html(r"$\lVert W\rVert$ / at $W_0$, largest step (exact $W^\star$) & 100000 < 2")
    norm, star = math(r"\lVert W\rVert"), math(r"W^\star")
    assert html == (
        f'{norm} / at <span class="ntpnb-word">{math("W_0")},</span> largest step (exact '
        f'<span class="ntpnb-word">{star})</span> &amp; 100,000 &lt; 2'
    )
    assert math_html("no math: a < b") == "no math: a &lt; b"
