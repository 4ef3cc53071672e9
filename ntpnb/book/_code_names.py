"""The names a reader must not meet on a page: the identifiers the package defines.

A page is for a reader: it says "the corrected correlation", never ``corr_corrected``; "the
active-set method", never ``ntpnb-active-set``. :func:`defined_names` reads every name the
package defines (its functions, classes, their parameters and fields, module and class
constants, the snake_case strings it uses as keys and kinds, the ``ntpnb-`` ids and classes of
its markup and stylesheets) and keeps those that only code would write (:func:`is_code_name`:
a word with an underscore, a word in CamelCase, an ``ntpnb-`` id); a chapter's parameters join
them (:func:`chapter_parameter_names`). :func:`found_names` finds them in a text.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Iterator
from pathlib import Path

#: The package's folder.
PACKAGE = Path(__file__).resolve().parents[1]

#: A word only code writes: snake_case with a letter or digit either side of an underscore
#: (``corr_corrected``, ``MAX_DENSE_BYTES``, ``dist_F``), CamelCase (``ClaimLog``, ``NTPData``),
#: or an id or class of the book's markup (``ntpnb-active-set``).
_SNAKE = re.compile(r"^_*[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+_*$")
_CAMEL = re.compile(r"^[A-Z][A-Za-z0-9]*(?:[a-z][A-Z]|[A-Z]{2}[a-z])[A-Za-z0-9]*$")
_MARKUP = re.compile(r"ntpnb-[a-z0-9]+(?:-[a-z0-9]+)*")
#: A name of one letter and an index (``W_k``, ``x_t``), which prose writes as math: math that
#: was not typeset is another rule's finding (raw TeX, ASCII math), not a name from the code.
_INDEXED = re.compile(r"^[A-Za-z]_[A-Za-z0-9]{1,3}$")

#: Names of products that the package writes as their makers do, which a page may name too.
PRODUCT_NAMES = frozenset({"MathJax", "JupyterLab", "GitHub", "PyPI", "NumPy", "SciPy", "LaTeX", "OpenBLAS"})

#: A word of a text as code would write it (dotted names are taken word by word), or a markup id.
WORD = re.compile(r"ntpnb-[a-z0-9]+(?:-[a-z0-9]+)*|(?<![\w])[A-Za-z_][A-Za-z0-9_]*(?![\w])")

#: The files whose ``ntpnb-`` ids and classes are the book's markup.
_MARKUP_FILES = ("*.css", "*.html", "*.js", "*.md", "*.py")


def is_code_name(name: str) -> bool:
    """Whether ``name`` is a word only code writes (snake_case, CamelCase or an ``ntpnb-`` id).

    A product's name (:data:`PRODUCT_NAMES`: ``MathJax``) is a word a page may write.
    """
    if _MARKUP.fullmatch(name):
        return True
    if name in PRODUCT_NAMES:
        return False
    if _INDEXED.match(name.strip("_")):
        return False
    return bool(_SNAKE.match(name) or _CAMEL.match(name))


def _arguments(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> Iterator[str]:
    args = node.args
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if arg is not None:
            yield arg.arg


def _targets(node: ast.AST) -> Iterator[str]:
    """The names an assignment at module or class level binds (``x``, ``x, y``, ``self.x``)."""
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, ast.Attribute):
        yield node.attr
    elif isinstance(node, (ast.Tuple, ast.List)):
        for element in node.elts:
            yield from _targets(element)


def module_names(source: str) -> set[str]:
    """Every name the Python ``source`` defines or uses as a key: what :func:`defined_names` reads.

    Functions, classes, their parameters, module and class constants and fields, attributes set
    on an object (``self.x = ...``), keyword arguments passed, and string constants that are one
    word.
    """
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
            body = node.body
            if not isinstance(node, ast.ClassDef):
                found.update(_arguments(node))
            for statement in body:
                if isinstance(statement, ast.AnnAssign):
                    found.update(_targets(statement.target))
                elif isinstance(statement, ast.Assign) and isinstance(node, ast.ClassDef):
                    for target in statement.targets:
                        found.update(_targets(target))
        elif isinstance(node, ast.Module):
            for statement in node.body:
                targets = statement.targets if isinstance(statement, ast.Assign) else []
                if isinstance(statement, ast.AnnAssign):
                    targets = [statement.target]
                for target in targets:
                    found.update(_targets(target))
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found.update(t.attr for t in targets if isinstance(t, ast.Attribute))
        elif isinstance(node, ast.keyword) and node.arg:
            found.add(node.arg)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.update(_MARKUP.findall(node.value))
            if WORD.fullmatch(node.value):
                found.add(node.value)
    return found


def markup_names(text: str) -> set[str]:
    """The ``ntpnb-`` ids and classes a stylesheet, template or script names."""
    return set(_MARKUP.findall(text))


def defined_names(package: Path = PACKAGE) -> frozenset[str]:
    """Every code name of the package in ``package``: what it defines, its markup's ids and classes.

    The names of :func:`module_names` and :func:`markup_names` that are code names
    (:func:`is_code_name`).
    """
    found: set[str] = set()
    for path in sorted(package.rglob("*.py")):
        found |= module_names(path.read_text(encoding="utf-8"))
    for pattern in _MARKUP_FILES:
        for path in sorted(package.rglob(pattern)):
            found |= markup_names(path.read_text(encoding="utf-8"))
    return frozenset(name for name in found if is_code_name(name))


def chapter_parameter_names(notebooks: Path) -> frozenset[str]:
    """The code names among the parameters of every chapter in ``notebooks`` (``NN_name.md``)."""
    from ..chapter._parameters import read_parameters_cell

    names: set[str] = set()
    for source in sorted(notebooks.glob("*.md")):
        names.update(read_parameters_cell(source))
    return frozenset(name for name in names if is_code_name(name))


def found_names(text: str, names: Collection[str]) -> list[tuple[int, int, str]]:
    """Each word of ``text`` that is one of ``names``: ``(start, end, word)`` in order."""
    wanted = names if isinstance(names, (set, frozenset)) else set(names)
    return [(m.start(), m.end(), m.group()) for m in WORD.finditer(text) if m.group() in wanted]
