"""The book's references in one style: cited and listed by author and year, sorted by surname.

The chapters cite as ``[Thrampoulidis, 2024]`` (sphinxcontrib-bibtex's ``author_year`` reference
style, ``_config.yml``), and the references page labels each entry the same way
(:func:`author_year_label`: ``Thrampoulidis, 2024``, ``Ji and Telgarsky, 2018``, ``Li et al.,
2024``), sorted by the first author's surname as a reader sorts it: accents set aside, so that
Çakmak sorts as Cakmak (:func:`folded`), not after Z. :class:`Style` is pybtex's ``plain`` style
with those labels and that order, registered as the formatting style :data:`STYLE_NAME`
(``bibtex_default_style``).
"""

from __future__ import annotations

import unicodedata
from typing import Any

from pybtex.plugin import register_plugin
from pybtex.richtext import Text
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


def _surname(person: Any) -> str:
    """A person's last names as text (a name written with LaTeX accents decoded: ``Candès``)."""
    return Text.from_latex(" ".join(person.prelast_names + person.last_names)).render_as("text")


def author_year_label(entry: Any) -> str:
    """``Thrampoulidis, 2024``, ``Ji and Telgarsky, 2018``, ``Li et al., 2024``: as the text cites it."""
    authors = [_surname(p) for p in entry.persons.get("author", [])]
    if len(authors) > 2:
        names = f"{authors[0]} et al."
    else:
        names = " and ".join(authors)
    return f"{names}, {entry.fields.get('year', '')}"


def author_year_labels(entries: list[Any]) -> list[str]:
    """Each entry's :func:`author_year_label`, told apart by a letter where two would be the same."""
    labels = [author_year_label(entry) for entry in entries]
    for label in set(labels):
        same = [i for i, other in enumerate(labels) if other == label]
        if len(same) > 1:
            for letter, i in zip("abcdefghijklmnopqrstuvwxyz", same, strict=False):
                labels[i] = f"{label}{letter}"
    return labels


class Style(PlainStyle):
    """Pybtex's ``plain`` entries, labelled by author and year, sorted by :class:`SurnameSorting`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sort = SurnameSorting().sort
        self.format_labels = author_year_labels


def setup(app: Sphinx) -> None:
    """Register :class:`Style` as pybtex's formatting style :data:`STYLE_NAME`."""
    register_plugin("pybtex.style.formatting", STYLE_NAME, Style)
