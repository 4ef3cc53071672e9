"""Words for the generated text, below every layer.

A list of items joined as a sentence says it, a value's range over the seeds as every page
shows it, and a long count grouped by thousands as a reader reads it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: A count of five digits or more, as a run writes it (``1000000``): not part of a decimal, a
#: longer word or a number already grouped (``51,009``), an identifier (``arXiv:2402.18551``) or
#: a path.
_LONG_COUNT = re.compile(r"(?<![\w.,:/#\u2212-])\d{5,}(?![\w]|[.,]\d)")


def group_thousands(text: str) -> str:
    """``text`` with each count of five digits or more grouped by thousands (``1,000,000``)."""
    return _LONG_COUNT.sub(lambda m: f"{int(m.group()):,}", text)


def join_words(items: Iterable[object]) -> str:
    """``"1, 3 and 4"``: the items in words, each as its ``str``, the last two joined by "and"."""
    names = [str(item) for item in items]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def value_range(low: str, high: str) -> str:
    """``"[0.2, 0.39]"``: a value's range (lowest, highest as printed), in brackets.

    A sentence that says "from ... to ..." around it still reads one way.
    """
    return f"[{low}, {high}]"
