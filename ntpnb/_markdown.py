"""Markdown for the generated pages: one way to escape a cell's text, one way to write a table.

Every page the package writes (the report, the claims page, the explore maps, the chapters'
tables, the benchmarks) builds its tables with :func:`markdown_table` and escapes plain text with
:func:`escape_markdown`, below every layer. ``tabulate`` is not used: it pads each column to its
widest cell, which no reader of a rendered page sees and which makes every row's source depend on
its neighbours; a row here is its cells, as written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from markupsafe import Markup

from ._templates import render_inline, words
from ._text import group_thousands_tex, whole_number_pieces
from .errors import InvalidDataError

#: The characters MyST reads as markup, in running text and in a table cell (``|`` ends a cell).
_SPECIAL = re.compile(r"([\\`*_{}\[\]<>|$#~])")


def escape_markdown(text: object) -> str:
    """``text`` as plain words in MyST: every character it would read as markup escaped.

    No emphasis, math, links, roles or column breaks survive; a number or any object is taken as
    its ``str``.
    """
    return _SPECIAL.sub(r"\\\1", str(text))


#: Inline math, ``$...$``, in a text that is otherwise plain words.
_MATH = re.compile(r"(\$[^$\n]+\$)")


def escape_markdown_but_math(text: object) -> str:
    """``text`` as plain words in MyST (:func:`escape_markdown`), but its ``$...$`` typeset as math.

    For a sentence that quotes a text written in MyST (a protocol's words) among plain words.
    """
    parts = _MATH.split(str(text))
    return "".join(
        group_thousands_tex(part) if i % 2 else escape_markdown(part) for i, part in enumerate(parts)
    )


#: Closing punctuation right after inline math or code (``$x$),``), which belongs to its line.
CLOSING_PUNCTUATION = re.compile(r"[)\]},.;:!?]+")
#: The rest of a word that starts with inline math (``$p$-value),``): kept on the math's line.
WORD_AFTER_MATH = re.compile(r"\S+")


def math_html(text: object) -> Markup:
    """``text`` as HTML: plain words escaped, its ``$...$`` as inline math.

    For a sentence written with MyST math shown in an HTML output (a qualification or a check's
    words in a chapter's table of checks), where nothing parses its Markdown. Its words read as a
    page's prose does: long counts grouped, and each number, range or quantity kept on one line
    (:func:`~._text.whole_number_pieces`: ``0.292 nats`` never ends a line at its space), and each
    hyphenated word whole (:func:`~._templates.words`: ``G-test``, ``non-empty``). Math is kept
    on one line with the rest of its word (``$p$-value),``), so no line starts with the ``,`` or
    ``)`` that closes a formula, nor ends on ``$p$-``.
    """
    parts = _MATH.split(str(text))
    pieces: list[tuple[str | Markup, bool]] = []
    for i, part in enumerate(parts):
        if not i % 2:
            for piece, whole in whole_number_pieces(part):
                pieces += [(piece, True)] if whole else words(piece)
            continue
        math = render_inline("math_inline.html", tex=group_thousands_tex(part[1:-1]))
        closing = WORD_AFTER_MATH.match(parts[i + 1]) if i + 1 < len(parts) else None
        if closing:  # the text after it loses the rest of the math's word to the math
            parts[i + 1] = parts[i + 1][closing.end() :]
        pieces.append((math + closing.group(), True) if closing else (math, False))
    return render_inline("words.html", pieces=[(piece, keep) for piece, keep in pieces if piece])


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table: the header row, the separator, one line per row (cells as given).

    The cells are MyST already (escape plain text with :func:`escape_markdown`); a cell must not
    hold a line break.

    Raises
    ------
    InvalidDataError
        If a row does not have as many cells as the header, or a cell holds a line break.
    """
    for row in rows:
        if len(row) != len(header):
            raise InvalidDataError(f"a row of {len(row)} cells in a table of {len(header)} columns: {row!r}")
    cells = [*header, *(cell for row in rows for cell in row)]
    broken = next((c for c in cells if "\n" in str(c)), None)
    if broken is not None:
        raise InvalidDataError(f"a table cell cannot hold a line break: {broken!r}")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + [f"| {' | '.join(str(c) for c in row)} |" for row in rows])


def columns_table(columns: Mapping[str, Mapping[str, object]], corner: str = "quantity") -> str:
    """A Markdown table given by its columns: heading -> (row label -> cell), one column per heading.

    The first column holds the row labels, headed ``corner``, in the order of the first column's;
    every column must have the same labels. Cells and labels are MyST already, as
    :func:`markdown_table`'s (a number is taken as its ``str``). The shape for a few runs or
    instances measured on many quantities: a row per quantity keeps the table as narrow as its
    runs.

    Raises
    ------
    InvalidDataError
        If there is no column, or two columns have different row labels.
    """
    if not columns:
        raise InvalidDataError("a table needs at least one column")
    labels = list(next(iter(columns.values())))
    for heading, column in columns.items():
        if list(column) != labels:
            raise InvalidDataError(f"column {heading!r} has the rows {list(column)}, not {labels}")
    rows = [[label, *(str(column[label]) for column in columns.values())] for label in labels]
    return markdown_table([corner, *columns], rows)
