"""The book's references in one style: cited by author and year, listed by surname.

The chapters cite as ``[Thrampoulidis, 2024]`` (sphinxcontrib-bibtex's ``author_year`` reference
style, ``_config.yml``); the references page lists every entry without a label of another style
(a bullet list, ``book/references.md``), each opening with its authors and ending with its year,
sorted by the first author's surname as a reader sorts it: accents set aside, so that Çakmak
sorts as Cakmak (:func:`folded`), not after Z. :class:`Style` is pybtex's ``plain`` style with
that order, registered as the formatting style :data:`STYLE_NAME` (``bibtex_default_style``).
"""

from __future__ import annotations

import unicodedata
from typing import Any

from pybtex.plugin import register_plugin
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.sorting.author_year_title import SortingStyle as AuthorYearTitle
from sphinx.application import Sphinx

#: The name of the book's bibliography style (``bibtex_default_style`` in ``_config.yml``).
STYLE_NAME = "ntpnb"


def folded(text: str) -> str:
    """``text`` as a sort key: its accents dropped (``Çakmak``: ``cakmak``), in lower case."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


class SurnameSorting(AuthorYearTitle):
    """Pybtex's author, year and title order, on the names and titles with their accents folded."""

    def sorting_key(self, entry: Any) -> tuple[str, str, str]:
        author, year, title = super().sorting_key(entry)
        return folded(author), year, folded(title)


class Style(PlainStyle):
    """Pybtex's ``plain`` entries, sorted by :class:`SurnameSorting`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sort = SurnameSorting().sort


def setup(app: Sphinx) -> None:
    """Register :class:`Style` as pybtex's formatting style :data:`STYLE_NAME`."""
    register_plugin("pybtex.style.formatting", STYLE_NAME, Style)
