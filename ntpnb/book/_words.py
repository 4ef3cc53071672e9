"""Words in a table cell stay whole: a cell wraps between words, never inside one.

A browser may end a line inside a word at a hyphen or a slash (``token-priority``,
``d/m``), and the book's tables used to break words anywhere to fit a narrow column. In a
table a word is read as a unit (an id, a number, a name), so every word of a table cell with
such a break opportunity is kept on one line (:func:`split_words` finds them; the Sphinx handler
:func:`keep_table_words` wraps them in an ``ntpnb-word`` span, whose CSS forbids the break;
:func:`words_html` does the same for the book's own raw HTML). A table too wide for a phone
then scrolls sideways inside its own box. Likewise inline math and code keep the punctuation
that closes them on their line (:func:`keep_closing_punctuation`): no line starts with ``)``.
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from markdown_it import MarkdownIt
from markupsafe import Markup, escape
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.myst_role import myst_role_plugin
from sphinx.application import Sphinx

from .._markdown import CLOSING_PUNCTUATION
from .._templates import render, render_inline
from .._text import group_thousands_tex, whole_number_pieces

#: The class of a word kept on one line (``white-space: nowrap`` in the book's stylesheet).
WORD_CLASS = "ntpnb-word"
#: A word inside which a browser may end a line (UAX #14): a hyphen, a dash, a slash, a bar or
#: a closing bracket with more of the word after it (``token-priority``, ``->``, ``d/m``).
_BREAKABLE = re.compile(r"[-\u2010\u2013\u2014/|)\]}?!]\S")
#: Nodes whose text is not prose: math (typeset whole), code and raw markup.
_OPAQUE = (nodes.math, nodes.literal, nodes.raw, nodes.literal_block)


def split_words(text: str) -> list[tuple[str, bool]]:
    """``text`` in pieces that join back to it, each with whether it is a word to keep whole."""
    pieces: list[tuple[str, bool]] = []
    for piece in re.split(r"(\s+)", text):
        if not piece:
            continue
        keep = bool(_BREAKABLE.search(piece))
        if pieces and not keep and not pieces[-1][1]:
            pieces[-1] = (pieces[-1][0] + piece, False)
        else:
            pieces.append((piece, keep))
    return pieces


def words_html(text: str) -> Markup:
    """``text`` as escaped HTML, each word of :func:`split_words` to keep whole in its span."""
    return render_inline("words.html", pieces=split_words(text))


def _prose_texts(entry: nodes.Element) -> list[nodes.Text]:
    """The text nodes of a table cell outside math, code and raw markup."""
    return [
        t for t in entry.findall(nodes.Text) if not any(isinstance(a, _OPAQUE) for a in _ancestors(t, entry))
    ]


def _ancestors(node: nodes.Node, top: nodes.Node) -> list[nodes.Node]:
    out = []
    while node is not top and node.parent is not None:
        node = node.parent
        out.append(node)
    return out


def keep_table_words(_app: Sphinx, doctree: nodes.document, _docname: str) -> None:
    """Wrap every word of every table cell that a browser could break in an ``ntpnb-word`` span."""
    for entry in list(doctree.findall(nodes.entry)):
        for text in _prose_texts(entry):
            pieces = split_words(str(text))
            if not any(keep for _, keep in pieces):
                continue
            parent = text.parent
            new = [nodes.inline(p, p, classes=[WORD_CLASS]) if keep else nodes.Text(p) for p, keep in pieces]
            index = parent.index(text)
            parent.remove(text)
            for offset, node in enumerate(new):
                parent.insert(index + offset, node)


#: U+2060 WORD JOINER: no line may end on either side of it.
WORD_JOINER = "\u2060"


def _closing_after(node: nodes.Node) -> tuple[nodes.Element, int, nodes.Text, re.Match[str]] | None:
    """``node``'s parent, its index, and the text after it with its closing punctuation (None: none)."""
    parent = node.parent
    if parent is None:
        return None
    index = parent.index(node)
    after = parent[index + 1] if index + 1 < len(parent) else None
    closing = CLOSING_PUNCTUATION.match(str(after)) if isinstance(after, nodes.Text) else None
    return (parent, index, after, closing) if closing else None  # type: ignore[return-value]


def keep_closing_punctuation(_app: Sphinx, doctree: nodes.document, _docname: str) -> None:
    """Keep the punctuation that closes inline math or code on its line: no line starts with ``)``.

    A browser may end a line between a typeset formula or a code span and the text after it, so
    that a line starts with ``),`` or ``;``. Math followed by closing punctuation is wrapped with
    it in an ``ntpnb-word`` span (``white-space: nowrap``). Code may be as wide as a phone's line,
    and may still wrap inside (the theme's ``overflow-wrap``), which a span would not stop: a word
    joiner (:data:`WORD_JOINER`) is put before the punctuation after it instead.
    """
    for node in list(doctree.findall(lambda n: isinstance(n, (nodes.math, nodes.literal)))):
        found = _closing_after(node)
        if found is None:
            continue
        parent, index, after, closing = found
        if isinstance(node, nodes.literal):
            parent.replace(after, nodes.Text(WORD_JOINER + str(after)))
            continue
        rest = str(after)[closing.end() :]
        parent.remove(after)
        parent.remove(node)
        parent.insert(index, nodes.inline("", "", node, nodes.Text(closing.group()), classes=[WORD_CLASS]))
        if rest:
            parent.insert(index + 1, nodes.Text(rest))


def keep_numbers_whole(_app: Sphinx, doctree: nodes.document, _docname: str) -> None:
    """Group every long count of the prose by thousands, and keep each number, range and unit on one line.

    In every text outside math, code and raw markup (a paragraph, a caption, a table's cell, a
    glued value), a count of five digits or more is grouped (``k = 1000000`` reads ``k =
    1,000,000``), and a number a browser could break (:func:`~.._text.whole_number_pieces`)
    is wrapped in an ``ntpnb-word`` span (``white-space: nowrap``), its unit joined by a no-break
    space: no line ends on ``1e-`` or ``seeds 0-``.
    """
    for text in list(doctree.findall(nodes.Text)):
        if text.parent is None or any(isinstance(a, _OPAQUE) for a in _ancestors(text, doctree)):
            continue
        pieces = whole_number_pieces(str(text))
        if pieces == [(str(text), False)]:
            continue
        parent = text.parent
        new = [nodes.inline(p, p, classes=[WORD_CLASS]) if keep else nodes.Text(p) for p, keep in pieces]
        index = parent.index(text)
        parent.remove(text)
        for offset, node in enumerate(new):
            parent.insert(index + offset, node)


def setup(app: Sphinx) -> None:
    """Keep words, numbers and the punctuation after inline math and code on their lines.

    A table cell's words whole, a number, range or unit whole, and inline math or code with the
    punctuation that closes it.
    """
    app.connect("doctree-resolved", keep_closing_punctuation)  # first: its punctuation is then in a span
    app.connect("doctree-resolved", keep_numbers_whole)  # before a cell's words: its numbers in spans
    app.connect("doctree-resolved", keep_table_words)


#: Inline MyST (math, roles, emphasis) read as a page reads it, for a sentence the book draws as HTML.
_INLINE = MarkdownIt("commonmark", {"html": False}).use(dollarmath_plugin).use(myst_role_plugin)
#: A role's text and its target: ``pseudo cyclic sets <pseudo cyclic set>``.
_ROLE_TEXT = re.compile(r"^(?P<text>.*?)(?:\s*<[^<>]*>)?$", re.S)


def _math_html(_renderer: Any, tokens: list, index: int, _options: Any, _env: Any) -> str:
    """Inline math as Sphinx writes it, so that the book's MathJax typesets it (its class ``math``).

    Its long counts grouped as TeX groups them (:func:`~.._text.group_thousands_tex`).
    """
    return str(render_inline("math_inline.html", tex=group_thousands_tex(tokens[index].content)))


def _role_html(_renderer: Any, tokens: list, index: int, _options: Any, _env: Any) -> str:
    """A role as its text: ``{term}`pseudo cyclic sets <pseudo cyclic set>``` reads "pseudo cyclic sets"."""
    match = _ROLE_TEXT.match(tokens[index].content)
    return str(escape(match.group("text") if match else tokens[index].content))


def _text_html(_renderer: Any, tokens: list, index: int, _options: Any, _env: Any) -> str:
    """Plain text as :func:`keep_numbers_whole` leaves a page's: long counts grouped, numbers whole."""
    return render("words.html", pieces=whole_number_pieces(tokens[index].content))  # its spaces kept


_INLINE.add_render_rule("math_inline", _math_html)
_INLINE.add_render_rule("myst_role", _role_html)
_INLINE.add_render_rule("text", _text_html)


def inline_myst_html(text: str) -> Markup:
    """A sentence written in inline MyST (math ``$...$``, roles, emphasis) as HTML a page can show.

    For a sentence of the evidence (a claim's summary) that the book draws into a page as HTML:
    its math typeset by the page's MathJax, a role shown as its text, numbers kept whole as the
    pages keep theirs (:func:`keep_numbers_whole`), anything else escaped.
    """
    return Markup(_INLINE.renderInline(text))
