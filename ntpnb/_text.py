"""Words for the generated text: a list of items joined as a sentence says it, below every layer."""

from __future__ import annotations

from collections.abc import Iterable


def join_words(items: Iterable[object]) -> str:
    """``"1, 3 and 4"``: the items in words, each as its ``str``, the last two joined by "and"."""
    names = [str(item) for item in items]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
