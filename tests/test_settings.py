"""Every tolerance of the package lives in :mod:`ntpnb.settings`, with a comment saying what it bounds.

The scan reads the package's source (AST, nothing is imported). Outside ``settings.py`` no
module or class may bind a tolerance-named constant (``*TOL*``, ``*EPS*``, ``*RCOND*``, ``*RIDGE*``) to a
number, no parameter, keyword argument or options entry so named may be given a number other
than 0, and no literal below :data:`SMALL` may be compared with a computed value: each names its
settings constant instead. What the scan cannot see (a tolerance under another name passed
positionally) is for review; :data:`NOT_TOLERANCES` lists what it flags that is no tolerance.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import ntpnb
from ntpnb import settings

PACKAGE = Path(ntpnb.__file__).parent
SETTINGS = PACKAGE / "settings.py"

#: A tolerance's name: a part TOL (RTOL, ATOL, XTOL, ...), EPS, RCOND or RIDGE, any case.
TOLERANCE_NAME = re.compile(r"(?:^|_)(?:[a-z]*tol(?:erance)?|eps|rcond|ridge)s?(?:_|$)", re.IGNORECASE)

#: Literals below this (in absolute value) compared with a computed value read as tolerances.
SMALL = 1e-2

#: Names and literals the scan would flag that are not tolerances of the package, and why.
NOT_TOLERANCES = {
    ("_digits.py", 1e-3): "the range printed without an exponent",
    ("chapter/_plotting.py", 1e-9): "figure layout: whether a text is below the smallest size",
    ("chapter/_log_scale.py", 1e-9): "figure layout: whether a tick is a power of ten",
    ("_qp.py", 1e-300): "a positive floor that keeps a zero largest multiplier from zeroing the test",
}


def _numeric(node: ast.AST) -> bool:
    """Whether ``node`` is a number written in place: literals and arithmetic on them, or numpy.finfo."""
    if any(isinstance(n, ast.Attribute) and n.attr == "finfo" for n in ast.walk(node)):
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_numeric(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return any(_numeric(v) for v in node.values)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float":
        return all(_numeric(a) for a in node.args)
    if not all(
        isinstance(n, (ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop))
        for n in ast.walk(node)
    ):
        return False
    value = eval(compile(ast.Expression(node), "<literal>", "eval"), {"__builtins__": {}})  # literals only
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _small_literals(node: ast.AST) -> list[float]:
    return [
        n.value
        for n in ast.walk(node)
        if isinstance(n, ast.Constant) and isinstance(n.value, float) and 0 < abs(n.value) < SMALL
    ]


def _zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0 and not isinstance(node.value, bool)


def candidates(source: str, where: str) -> list[tuple[str, object]]:
    """``(place and reason, key)`` for every number in ``source`` that reads as a tolerance."""
    tree = ast.parse(source)
    found = []
    bodies = [tree.body] + [n.body for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    for stmt in (s for body in bodies for s in body):
        if isinstance(stmt, ast.Assign):
            targets = stmt.targets
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets = [stmt.target]
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name) and TOLERANCE_NAME.search(target.id) and _numeric(stmt.value):
                found.append((f"{where}:{stmt.lineno}: {target.id} is a number written in place", target.id))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            positional = args.posonlyargs + args.args
            pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True))
            pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
            for arg, default in pairs:
                if TOLERANCE_NAME.search(arg.arg) and _numeric(default) and not _zero(default):
                    found.append(
                        (f"{where}:{default.lineno}: parameter {arg.arg} defaults to a number", arg.arg)
                    )
        elif isinstance(node, ast.Compare):
            for value in _small_literals(node):
                found.append((f"{where}:{node.lineno}: compares with the literal {value!r}", value))
        elif isinstance(node, ast.keyword) and node.arg and TOLERANCE_NAME.search(node.arg):
            if _numeric(node.value) and not _zero(node.value):
                found.append((f"{where}:{node.value.lineno}: passes {node.arg} as a number", node.arg))
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                named = isinstance(key, ast.Constant) and isinstance(key.value, str)
                if named and TOLERANCE_NAME.search(key.value) and _numeric(value) and not _zero(value):
                    found.append((f"{where}:{value.lineno}: sets {key.value!r} to a number", key.value))
    return found


def tolerances_outside_settings(source: str, where: str) -> list[str]:
    """What in ``source`` (the file ``where``, relative to the package) should name a settings constant."""
    return [place for place, key in candidates(source, where) if (where, key) not in NOT_TOLERANCES]


def test_no_tolerance_is_defined_outside_settings():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path != SETTINGS:
            found += tolerances_outside_settings(
                path.read_text(encoding="utf-8"), path.relative_to(PACKAGE).as_posix()
            )
    assert not found, "tolerances outside ntpnb/settings.py:\n" + "\n".join(found)


def test_the_exceptions_are_still_there():
    """An exception that no longer matches anything is removed from the list, not kept as a loophole."""
    for where, key in NOT_TOLERANCES:
        keys = {k for _, k in candidates((PACKAGE / where).read_text(encoding="utf-8"), where)}
        assert key in keys, (where, key)


@pytest.mark.parametrize(
    "source",
    [
        "_STEP_RTOL = 1e-12",
        "_EPS = float(np.finfo(float).eps)",
        "HALF_EPS: float = 2.0**-53",
        "class A:\n    TOL = 1e-9",
        "PROX_RTOLS = (1e-3, 1e-5)",
        "_PROX_RIDGES = (1e-3, 1e-1, 1e-5)",
        "def solve(S, b, ridge=1e-12): pass",
        "def f(x, tol=1e-9): pass",
        "def f(x, *, rcond: float = 1e-12): pass",
        "def f(x, tol=0.5): pass",
        "ok = abs(a - b) <= 1e-9 * scale",
        "brentq(f, a, b, xtol=1e-14)",
        "brentq(f, a, b, rtol=4 * np.finfo(float).eps)",
        "minimize(f, x0, options={'gtol': 1e-11})",
    ],
)
def test_the_scan_finds_a_tolerance_written_in_place(source):
    assert tolerances_outside_settings(source, "module.py")


@pytest.mark.parametrize(
    "source",
    [
        "_STEP_RTOL = settings.HINGE_STEP_RTOL",
        "AUTHORS_NGD_EPS: float = settings.FLOAT64_EPS",
        "def f(x, tol=settings.BEST_LOSS_TOL, eps=0.0): pass",
        "ok = abs(a - b) <= settings.PVALUE_TIE_RTOL * scale",
        "MAX_ITER = 100",
        "half = x > 0.5",
    ],
)
def test_the_scan_passes_what_names_settings(source):
    assert tolerances_outside_settings(source, "module.py") == []


def test_every_setting_has_a_comment():
    """Each constant of settings.py follows a ``#:`` comment of its own (Sphinx's doc comment: the
    API page shows it with the constant; a constant without one would not be listed there)."""
    source = SETTINGS.read_text(encoding="utf-8")
    lines = source.splitlines()
    constants = [stmt for stmt in ast.parse(source).body if isinstance(stmt, (ast.Assign, ast.AnnAssign))]
    assert constants, "settings.py binds no constant at its top level: nothing was checked"
    for stmt in constants:
        above = lines[stmt.lineno - 2].strip()
        assert above.startswith("#:"), f"settings.py:{stmt.lineno} has no #: comment of its own"


def test_machine_epsilon_is_float64s():
    import numpy as np

    assert settings.FLOAT64_EPS == np.finfo(np.float64).eps
    assert settings.PATH_MIN_LAMBDA == np.finfo(np.float64).tiny / np.finfo(np.float64).eps
