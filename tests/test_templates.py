"""The pages' markup lives in templates (ntpnb/templates/), never in a Python string of the package."""

from __future__ import annotations

import ast
import re

import pytest
from markupsafe import Markup

from ntpnb._templates import render, render_inline
from ntpnb.errors import InvalidDataError

from conftest import ROOT

#: An HTML tag the package writes into its pages.
_TAG = re.compile(
    r"</?(a|br|code|details|div|img|li|p|picture|source|span|strong|summary|table|t[dhr]|ul)\b[ >]"
)
#: Modules allowed to hold a tag: the figure code edits matplotlib's own animation markup in place
#: (it writes no page of its own).
_ALLOWED = {"ntpnb/chapter/_plotting.py"}


def _strings(path):
    """Every string constant of a module but its docstrings (the parts of an f-string too), with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    documented = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, documented)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.lineno, node.value


def test_no_module_writes_html_in_a_python_string():
    found = [
        f"{name}:{line}: {text[:60]!r}"
        for path in sorted((ROOT / "ntpnb").rglob("*.py"))
        if (name := path.relative_to(ROOT).as_posix()) not in _ALLOWED
        for line, text in _strings(path)
        if _TAG.search(text)
    ]
    assert not found, "HTML in Python strings (write it in ntpnb/templates/):\n" + "\n".join(found)


def test_a_template_escapes_text_and_refuses_a_missing_value():
    badge = render_inline(
        "badge.html",
        id="A1",
        verdict="does not reproduce",
        kind="a <counterexample>",
        title="a <b> & 'c'",
        link=None,
        with_id=True,
    )
    assert 'title="a &lt;b&gt; &amp; &#39;c&#39;"' in badge and "ntpnb-v-does-not-reproduce" in badge
    assert '<span class="ntpnb-badge-kind">a &lt;counterexample&gt;</span>' in badge
    assert isinstance(badge, Markup)  # inserted into another template as it is
    with pytest.raises(InvalidDataError, match=r"template badge.html: 'verdict' is undefined"):
        render("badge.html", id="A1", title="", link=None, with_id=True)
    with pytest.raises(InvalidDataError, match=r"must render one line"):
        render_inline("details.md", summary="s", body="b", classes="", id="", count="")


def test_a_check_tables_hyphenated_words_are_kept_on_one_line_and_math_and_markup_left_whole():
    from ntpnb._templates import words

    assert words("below 1e-06 (e^{-gamma}) and -x") == [
        ("below", False),
        (" ", False),
        ("1e-06", True),
        (" ", False),
        ("(e^{-gamma})", True),
        (" ", False),
        ("and", False),
        (" ", False),
        ("-x", False),  # a sign, not a hyphen inside a word
    ]
    assert words("$e^{-\\gamma}$ in 1e-06") == [("$e^{-\\gamma}$ in 1e-06", False)]  # math unsplit
    assert [piece for piece, _ in words("GD at k = 1000000")][-1] == "1,000,000"  # a count grouped
    link = Markup('<a href="x">sub-problems</a>')
    assert words(link) == [(link, False)]


def test_a_claim_table_keeps_a_number_with_an_exponent_whole_and_escapes_its_cells():
    from ntpnb.chapter._claims import ClaimTable
    from ntpnb.evidence._checks import Check

    check = Check(
        claim="A1",
        what="gap < 1e-06 & more",
        value=1e-7,
        relation="<",
        target=1e-6,
        tol=0.0,
        paper="",
        passed=True,
        profile="quick",
    )
    html = ClaimTable(title="Checks of this section", checks=(check,))._repr_html_()
    assert '<span class="ntpnb-word">1e-06</span>' in html and "&amp; more" in html
