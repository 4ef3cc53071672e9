"""Words for the generated text, below every layer.

A list of items joined as a sentence says it, a value's range over the seeds as every page
shows it, a long count grouped by thousands as a reader reads it, and a number, range or
quantity kept whole where a line could end inside it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: A count of five digits or more, as a run writes it (``1000000``). Not a count, so never grouped:
#: a number with fewer digits (a year, ``2024``), part of a decimal, of a longer word or of a
#: number already grouped (``51,009``, ``100_000``), an identifier or a version (``arXiv:2402.18551``,
#: ``1.26.4``, ``#12345``, a commit's hash), a path (``runs/12345``), and the number that names a
#: seed or a commit (``seed 12345``, ``seed=12345``, ``commit 1234567``).
LONG_COUNT = re.compile(
    r"(?<![\w.,:/#\u2212-])(?<!seed )(?<!seed=)(?<!seeds )(?<!commit )\d{5,}(?![\w]|[.,]\d)"
)


def group_thousands(text: str) -> str:
    """``text`` with each count of five digits or more (:data:`LONG_COUNT`) grouped by thousands.

    ``k = 1000000`` reads ``k = 1,000,000``.
    """
    return LONG_COUNT.sub(lambda m: f"{int(m.group()):,}", text)


#: A count of five digits or more in TeX: not part of a name, a command, a decimal or a longer
#: number (``k = 1000000``, ``(10000/1000000)^{1/2}``).
LONG_COUNT_TEX = re.compile(r"(?<![\w.,\\])\d{5,}(?![\w]|[.,]\d|\{,\})")


def group_thousands_tex(tex: str) -> str:
    """``tex`` with each count of five digits or more (:data:`LONG_COUNT_TEX`) grouped as TeX groups it.

    ``k = 1000000`` reads ``k = 1{,}000{,}000`` (``{,}``: a comma without the space TeX puts after
    punctuation).
    """
    return LONG_COUNT_TEX.sub(lambda m: f"{int(m.group()):,}".replace(",", "{,}"), tex)


#: A number, range or quantity a line must not end inside: a power in exponent form (``1e-08``),
#: a range (``0-4``, ``10-90%``), a number and its unit (``19.4 GiB``, ``0.08 s``).
_NUMBER = r"\d[\d,]*(?:\.\d+)?(?:[eE][-+\u2212]?\d+)?"
_UNIT = r"(?:%|s|ms|min|h|GiB|MiB|KiB|GB|MB|kB|px|pt|nats?|bits?)(?![\w])"
_WHOLE_NUMBER = re.compile(rf"(?<![\w.]){_NUMBER}(?:\s?[-\u2013]\s?{_NUMBER})?(?:\s?{_UNIT})?(?![\w.]\d)")
#: The space kept between a number and its unit, or inside a range.
NO_BREAK_SPACE = "\u00a0"


def number_pieces(text: str) -> list[tuple[str, bool]]:
    """``text`` in pieces that join back to it, each with whether it is a number to keep on one line.

    A number is kept whole where a browser could end a line inside it: at a hyphen or a dash
    (``1e-08``, ``0-4``, ``10-90%``) or at the space before its unit (``19.4 GiB``).
    """
    pieces: list[tuple[str, bool]] = []
    at = 0
    for match in _WHOLE_NUMBER.finditer(text):
        token = match.group()
        if not re.search(r"[-\u2013\s]", token):
            continue
        if match.start() > at:
            pieces.append((text[at : match.start()], False))
        pieces.append((token, True))
        at = match.end()
    if at < len(text):
        pieces.append((text[at:], False))
    return pieces


def whole_number_pieces(text: str) -> list[tuple[str, bool]]:
    """``text`` as a page shows it: long counts grouped (:func:`group_thousands`), numbers whole.

    The pieces of :func:`number_pieces`, each number to keep on one line with its spaces made
    no-break (``0.292\u00a0nats``): a page wraps such a piece in a word's span (``white-space:
    nowrap``), so that no line ends on ``1e-``, ``seeds 0-`` or before a unit.
    """
    pieces = number_pieces(group_thousands(text))
    return [(re.sub(r"\s", NO_BREAK_SPACE, p) if keep else p, keep) for p, keep in pieces]


def join_words(items: Iterable[object]) -> str:
    """``"1, 3 and 4"``: the items in words, each as its ``str``, the last two joined by "and"."""
    names = [str(item) for item in items]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def value_range(low: str, high: str) -> str:
    """``"[0.2, 0.39]"``: a value's range (lowest, highest as printed), in brackets.

    A sentence that says "from ... to ..." around it still reads one way.
    """
    return f"[{low}, {high}]"
