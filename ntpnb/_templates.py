"""The package's markup lives in templates: Jinja2, one file each under ``ntpnb/templates/``.

No module writes HTML in a Python string (a test holds the package to it): the badges, the
scoreboard, a chapter's table of checks, the report's collapsed blocks, the execution footer's
link and the figures' ``<picture>`` are rendered here from their templates. A template whose name
ends in ``.html`` is escaped automatically (a value is text unless the caller passes markup it
rendered itself, marked :func:`markup`); a ``.md`` template writes MyST markdown and escapes
what it inserts into HTML with ``|e``.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from ._text import group_thousands
from .errors import InvalidDataError

#: A word with a hyphen inside (``1e-06``, ``sub-problems``): a browser may break a line after it.
_HYPHENATED = re.compile(r"\S+-\S+")


def words(text: Any) -> list[tuple[str, bool]]:
    r"""``text`` in pieces (words and the space between), each with whether to keep it on one line.

    A word with a hyphen inside is kept whole (a table cell that wraps never shows ``1e-`` above
    ``06``), and a long count is grouped by thousands (:func:`~._text.group_thousands`); text
    with math (``$`` or ``\(``), or markup, is one piece, as it is.
    """
    if isinstance(text, Markup) or "$" in str(text) or "\\(" in str(text):
        return [(text, False)]
    pieces = re.split(r"(\s+)", group_thousands(str(text)))
    return [(piece, bool(_HYPHENATED.fullmatch(piece))) for piece in pieces if piece]


@cache
def _environment() -> Environment:
    """The one Jinja2 environment: the package's templates, HTML ones escaped, a missing value an error."""
    environment = Environment(
        loader=PackageLoader("ntpnb", "templates"),
        autoescape=select_autoescape(enabled_extensions=("html",), default_for_string=False),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    environment.filters["words"] = words
    return environment


def render(name: str, **context: Any) -> str:
    """The template ``name`` rendered with ``context``.

    Raises
    ------
    InvalidDataError
        Naming the template, if a value it uses is missing.
    """
    from jinja2 import UndefinedError

    try:
        return _environment().get_template(name).render(**context)
    except UndefinedError as exc:
        raise InvalidDataError(f"template {name}: {exc}") from None


def render_inline(name: str, **context: Any) -> Markup:
    """A template that renders one line of markup (a badge, a link): its text, stripped, as markup.

    Raises
    ------
    InvalidDataError
        If it renders more than one line (it goes into a table cell or a line of text).
    """
    text = render(name, **context).strip()
    if "\n" in text:
        raise InvalidDataError(f"template {name} must render one line, got {text!r}")
    return Markup(text)


def markup(text: str) -> Markup:
    """``text`` marked as markup already (rendered by a template): an HTML template inserts it as it is."""
    return Markup(text)
