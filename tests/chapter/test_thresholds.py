"""Every threshold a claim check of chapters 1-6 uses is a parameter, named as the check prints it.

A threshold is what a check requires of its value: the target of ``<``, ``<=``, ``>``, ``>=`` and
``in``, the tolerance of ``~`` (whose target is the value a claim predicts, a theory's or a
finding's pinned measurement; ``==`` asks an exact property). It is a parameter of the cell's
*pass/fail thresholds* group, used bare as the check's target or tolerance, so that ``ntpnb
explore -p`` moves exactly what the check prints as required: a ``<`` requires at most the
parameter (``max_...``), a ``>`` at least (``min_...``), ``in`` a range (``..._range``), ``~`` a
tolerance (``..._tol``), each with its claim id and what it requires in its comment
(``A9: required ...``, ``A2: allowed ...``; a parameter two claims share names the other too). A number
typed in a check is 0 or 1 only, the claim's own direction (a difference's sign, a ratio's fall
or rise); a target computed from the run may combine parameters of the experiment (a grid's
resolution, ``1 / m``), never a threshold's. Sanity checks test the code: their tolerances are
properties of the numerics, not the claims', and are not parameters.
"""

from __future__ import annotations

import ast
import re

import jupytext
import pytest

from ntpnb.chapter._parameters import GROUPS, read_parameters_cell
from ntpnb.records._places import notebook_sources

from conftest import ROOT

#: The chapters every threshold of which is a parameter (7 and 8: those their checks' lines name).
CHAPTERS = [s for s in notebook_sources(ROOT) if s.stem[:2] in {"01", "02", "03", "04", "05", "06"}]
#: What a threshold parameter's name says, by the relation it is required in.
NAMED = {"<": "max", "<=": "max", ">": "min", ">=": "min", "in": "range", "~": "tol"}


def checks(path) -> list[ast.Call]:
    """Every ``claims.check(...)`` call in the code cells of the chapter ``path``."""
    calls = []
    for cell in jupytext.read(path).cells:
        if cell.cell_type == "code":
            for node in ast.walk(ast.parse(cell.source)):
                func = getattr(node, "func", None)
                if (
                    isinstance(func, ast.Attribute)
                    and func.attr == "check"
                    and ast.unparse(func.value) == "claims"
                ):
                    calls.append(node)
    return calls


def threshold(call: ast.Call) -> tuple[str, str, ast.expr | None]:
    """The claim id, the relation and the threshold's expression of one check (None: it has none)."""
    keywords = {k.arg: k.value for k in call.keywords}
    claim, relation = ast.literal_eval(call.args[0]), ast.literal_eval(call.args[3])
    if relation == "==":
        return claim, relation, None
    return claim, relation, keywords.get("tol") if relation == "~" else call.args[4]


def is_sanity(call: ast.Call) -> bool:
    kind = {k.arg: k.value for k in call.keywords}.get("kind")
    return isinstance(kind, ast.Constant) and kind.value == "sanity"


def problems(path) -> list[str]:
    """Each threshold of a check of ``path`` that is not a parameter named as the check prints it."""
    cell = read_parameters_cell(path)
    thresholds = {name for name, p in cell.items() if p.group == GROUPS[1]}
    found = []
    for call in (c for c in checks(path) if not is_sanity(c)):
        claim, relation, expr = threshold(call)
        where = f"line {call.lineno}, {claim} {relation} {ast.unparse(expr) if expr is not None else ''}"
        if expr is None:
            continue
        if isinstance(expr, ast.Name) and expr.id in thresholds:
            meaning = cell[expr.id].meaning
            if NAMED[relation] not in expr.id:
                found.append(f"{where}: name it {NAMED[relation]}_..., as the check requires it")
            said = "allowed" if relation == "~" else "required"
            if not re.match(rf"[AB]\d+: {said} ", meaning) or not re.search(rf"\b{claim}\b", meaning):
                found.append(f"{where}: its comment says {meaning!r}, not '{claim}: {said} ...'")
            continue
        names = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}
        numbers = [
            n.value for n in ast.walk(expr) if isinstance(n, ast.Constant) and type(n.value) in (int, float)
        ]
        if names & thresholds:
            found.append(f"{where}: use the threshold parameter bare, the quantity the check prints")
        if any(number not in (0, 1) for number in numbers) or (relation in ("in", "~") and not names):
            found.append(f"{where}: a number typed in the check; make it a parameter of the thresholds group")
    return found


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_threshold_of_a_claim_check_is_a_parameter_named_as_the_check_prints_it(path):
    assert problems(path) == []


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_threshold_parameter_is_what_a_check_requires(path):
    """Each parameter of the thresholds group is some check's target or tolerance, as it is."""
    cell = read_parameters_cell(path)
    used = {
        expr.id
        for call in checks(path)
        if (expr := threshold(call)[2]) is not None and isinstance(expr, ast.Name)
    }
    unused = [
        n for n, p in cell.items() if p.group == GROUPS[1] and n not in used and type(p.value) is not bool
    ]
    assert unused == []


def test_the_check_finds_a_typed_threshold_and_a_threshold_in_an_expression(tmp_path):
    """What c1ba5c6's chapter 3 had: ||W_k|| ratio > 5.0 typed, and 1 - toy_min_corr as the target."""
    source = (ROOT / "notebooks" / "03_gd_implicit_bias.md").read_text()
    typed = source.replace("    toy_min_norm_ratio,\n", "    5.0,\n").replace(
        "    toy_max_corr_gap,\n", "    1 - toy_max_corr_gap,\n"
    )
    (tmp_path / "03_x.md").write_text(typed)
    found = problems(tmp_path / "03_x.md")
    assert any("A9 > 5.0: a number typed in the check" in p for p in found), found
    assert any("A9 < 1 - toy_max_corr_gap: use the threshold parameter bare" in p for p in found), found
