"""What values a chapter's parameter may take: its domain, declared beside its meaning.

A notebook's ``parameters`` cell declares each parameter's domain in braces at the start of the
comment ending its line (``n_g = 61  # {int ≥ 2} number of scales``); the runner reads it to
refuse a bad ``-p`` before any kernel starts, and the chapter's kernel to refuse a bad value set
in the cell (:func:`ntpnb.chapter._parameters.chapter_parameters`). The grammar:

=================================  ====================================================
``int``, ``float``                 a whole number; a finite number
``int ≥ 1``, ``0 < float ≤ 1``     ... with bounds (``<``, ``≤``, ``>``, ``≥``; or ``<=``, ``>=``)
``bool``, ``text``                 true or false; a text
``"uniform" | "normal"``           one of these texts
``list of D``                      a non-empty list whose items are in ``D``
``pair of D``                      a list of two items in ``D``
``interval of D``                  a list ``[low, high]`` of items in ``D``, ``low < high``
``D or None``                      ``None``, or a value in ``D``
=================================  ====================================================

A parameter that declares none has the domain of its value's kind (:func:`domain_of_value`).
A cell writes ``≥`` and ``≤``: papermill reads a line holding two ``=`` as no parameter.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import NTPError

#: The integers a whole-number parameter may hold: numpy's int64 (2**64 as a seed would fail
#: inside a chapter).
INT_RANGE = (-(2**63), 2**63 - 1)

_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_SCALAR = re.compile(
    rf"^(?:(?P<lo>{_NUMBER})\s*(?P<lop><=?)\s*)?(?P<kind>int|float)"
    rf"(?:\s*(?P<op>[<>]=?)\s*(?P<hi>{_NUMBER}))?$"
)
_CONTAINERS = ("list", "pair", "interval")
_NOUNS = {"int": "a whole number", "float": "a number", "bool": "true or false", "text": "a text"}


@dataclass(frozen=True)
class Domain:
    """The values a parameter may take (see the module docstring for the notation).

    ``kind`` is ``int``, ``float``, ``bool``, ``text``, ``any``, ``choice`` (``choices``), a
    container (``list``, ``pair``, ``interval`` of ``item``) or ``optional`` (``item`` or None);
    ``bounds`` are ``(relation, number)`` pairs a number must satisfy (``(">=", 1)``).
    """

    kind: str
    bounds: tuple[tuple[str, float], ...] = ()
    choices: tuple[str, ...] = ()
    item: Domain | None = None
    empty: bool = False  # whether a ``list`` may be empty (only one a cell's value implies)

    def describe(self) -> str:
        """The domain in words: ``a whole number >= 1``, ``one of 'a', 'b'``, ``a list of numbers > 0``."""
        if self.kind == "optional":
            return f"{self.item.describe()}, or None"  # type: ignore[union-attr]
        if self.kind == "choice":
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.kind in _CONTAINERS:
            items = self.item.describe()  # type: ignore[union-attr]
            if self.kind == "list":
                return f"a {'' if self.empty else 'non-empty '}list, each item {items}"
            if self.kind == "pair":
                return f"a pair [a, b], each {items}"
            return f"an interval [low, high] with low < high, each {items}"
        if self.kind == "any":
            return "a Python literal"
        bounds = " and ".join(f"{relation} {number:g}" for relation, number in self.bounds)
        return f"{_NOUNS[self.kind]} {bounds}".strip()

    def check(self, value: Any) -> Any:
        """``value`` as this domain holds it (an int as a float for ``float``), else ValueError."""
        fitted = self._fit(value)
        if fitted is _OUT:
            wide = isinstance(value, int) and not INT_RANGE[0] <= value <= INT_RANGE[1]
            raise ValueError(self.describe() + (" that fits in 64 bits" if wide else ""))
        return fitted

    def read(self, text: str) -> Any:
        """The value the command-line text ``text`` stands for (``true``, ``3``, ``[1, 2]``, a bare word)."""
        inner = self.item if self.kind == "optional" and self.item else self  # the domain but None
        word = text.strip().lower()
        if inner.kind == "bool" and word in ("true", "false"):
            return self.check(word == "true")
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            value = text  # a bare word is a text
        takes_text = inner.kind in ("text", "choice", "any")
        if takes_text and not isinstance(value, str) and self._fit(value) is _OUT:
            value = text  # a text that looks like a number: 2D, 1e3x
        return self.check(value)

    def _fit(self, value: Any) -> Any:
        kind = self.kind
        if kind == "any":
            return value
        if kind == "optional":
            return None if value is None else self.item._fit(value)  # type: ignore[union-attr]
        if kind == "bool":
            return value if isinstance(value, bool) else _OUT
        if kind == "text":
            return value if isinstance(value, str) else _OUT
        if kind == "choice":
            return value if isinstance(value, str) and value in self.choices else _OUT
        if kind in _CONTAINERS:
            if not isinstance(value, (list, tuple)) or not (value or self.empty):
                return _OUT
            items = [self.item._fit(v) for v in value]  # type: ignore[union-attr]
            if any(item is _OUT for item in items) or (kind != "list" and len(items) != 2):
                return _OUT
            if kind == "interval" and not items[0] < items[1]:
                return _OUT
            return tuple(items) if isinstance(value, tuple) else items
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return _OUT
        if kind == "int":
            if not isinstance(value, int) or not INT_RANGE[0] <= value <= INT_RANGE[1]:
                return _OUT
        elif not math.isfinite(value):
            return _OUT
        else:
            value = float(value)
        return value if all(_COMPARE[r](value, n) for r, n in self.bounds) else _OUT


_OUT = object()  # marks a value outside a domain
#: The domain of a parameter whose value may be anything (None in its cell).
ANY = Domain("any")


def parse_domain(text: str) -> Domain:
    """The :class:`Domain` written ``text`` (the notation of the module docstring); NTPError if it is not."""
    written = " ".join(text.split())
    text = written.replace("≥", ">=").replace("≤", "<=")
    if text.endswith(" or None"):
        return Domain("optional", item=parse_domain(text[: -len(" or None")]))
    for container in _CONTAINERS:
        if text.startswith(f"{container} of "):
            return Domain(container, item=parse_domain(text[len(container) + 4 :]))
    if text in ("bool", "text"):
        return Domain(text)
    if text[:1] in "\"'":
        try:
            choices = tuple(ast.literal_eval(part.strip()) for part in text.split("|"))
        except (ValueError, SyntaxError):
            choices = ()
        if choices and all(isinstance(c, str) for c in choices):
            return Domain("choice", choices=choices)
    match = _SCALAR.match(text)
    if match is None:
        raise NTPError(f"the domain {{{written}}} is not in ntpnb's notation (see ntpnb.chapter._domains)")
    bounds = []
    if match["lo"] is not None:  # 0 < float: float > 0
        bounds.append((_MIRROR[match["lop"]], float(match["lo"])))
    if match["op"] is not None:
        bounds.append((match["op"], float(match["hi"])))
    return Domain(match["kind"], tuple((r, int(n) if n == int(n) else n) for r, n in bounds))


#: A declared domain: braces opening the comment of a parameter's line.
_DECLARED = re.compile(r"^\{(?P<domain>[^{}]*)\}\s*(?P<meaning>.*)$", re.DOTALL)


def split_declaration(comment: str) -> tuple[Domain | None, str]:
    """The domain a line's comment declares (None if it declares none) and the meaning after it.

    ``"{int >= 1} samples"`` gives ``(Domain("int", ((">=", 1),)), "samples")``.
    """
    match = _DECLARED.match(comment.strip())
    if match is None:
        return None, comment.strip()
    return parse_domain(match["domain"]), match["meaning"].strip()


def domain_of_value(value: Any) -> Domain:
    """The domain of a parameter that declares none: the kind of its value (``any`` for None).

    A list whose items share one kind is a list of that kind; an empty or mixed one, any list.
    """
    if isinstance(value, bool):
        return Domain("bool")
    if isinstance(value, int):
        return Domain("int")
    if isinstance(value, float):
        return Domain("float")
    if isinstance(value, str):
        return Domain("text")
    if isinstance(value, (list, tuple)) and len({type(item) for item in value}) == 1:
        return Domain("list", item=domain_of_value(value[0]), empty=True)
    if isinstance(value, (list, tuple)):
        return Domain("list", item=ANY, empty=True)
    return ANY


def closest(name: str, known: Sequence[str]) -> str:
    """`` (did you mean 'n_g'?)`` for the known name nearest ``name``, or ``""`` when none is near."""
    import difflib

    near = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f" (did you mean {near[0]!r}?)" if near else ""
