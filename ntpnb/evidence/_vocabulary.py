"""The one vocabulary in which the evidence is said: counts, seeds, outcomes, verdicts and their kinds.

Every sentence a page, a chapter's printout or a map writes about a decision is made from the
words here, so that one decision is said one way wherever it appears.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._text import join_words


def seeds_count(n: int) -> str:
    """``"1 seed"``, ``"5 seeds"``."""
    return f"{n} seed{'s' * (n != 1)}"


def at_seeds(seeds: Sequence[int]) -> str:
    """``"seed 3"``, ``"seeds 2 and 3"``."""
    return f"seed{'s' * (len(seeds) != 1)} {join_words(seeds)}"
