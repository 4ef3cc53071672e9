"""Words for the generated text, below every layer.

A list of items joined as a sentence says it, and a value's range over the seeds as every page
shows it.
"""

from __future__ import annotations

from collections.abc import Iterable


def join_words(items: Iterable[object]) -> str:
    """``"1, 3 and 4"``: the items in words, each as its ``str``, the last two joined by "and"."""
    names = [str(item) for item in items]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def value_range(low: str, high: str) -> str:
    """``"[0.2, 0.39]"``: a value's range (lowest, highest as printed), in brackets.

    A sentence that says "from ... to ..." around it still reads one way.
    """
    return f"[{low}, {high}]"
