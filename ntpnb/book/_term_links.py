"""Each term's first use on a page linked to the book's glossary (:mod:`._glossary`).

When Sphinx writes a page, :func:`link_first_uses` finds the first use of every glossary term in
what a reader reads, in page order: the prose (a paragraph, a list, a table's cell, a caption, a
cell's Markdown output) and the HTML a cell or the report writes itself (a table of checks, a
card; not one with a script, as an animation's), but not a heading, code, math, a link or a
block's summary line. It makes that use a link to the term's entry, as MyST's ``{term}`` role
does. A term the page links itself (a ``{term}`` role) is its use there: a use before it is
the first and is linked, one after it is not. On the single page the PDF prints, each document
it includes links its own first uses, as its page does. A book without the glossary page (an
explore tree's) is left as it is.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.util.nodes import make_refnode

from .._templates import render
from ._glossary import GLOSSARY_DOC, TERMS, first_uses

#: Nodes whose text is not read as prose to link: headings, code, math, raw markup, links.
_NOT_LINKED = (
    nodes.title,
    nodes.subtitle,
    nodes.rubric,
    nodes.literal,
    nodes.literal_block,
    nodes.math,
    nodes.math_block,
    nodes.raw,  # its text is HTML: read as such (its own strings)
    nodes.reference,
    nodes.term,
    nodes.comment,
    nodes.system_message,
    addnodes.pending_xref,
    addnodes.desc_signature,
)
#: The classes Sphinx gives a term's link (the text inside it).
TERM_CLASSES = ("xref", "std", "std-term")
#: Elements of a page's own HTML whose text is not linked: links, code, math, a block's summary line.
_NOT_LINKED_HTML = (
    "a",
    "code",
    "pre",
    "kbd",
    "script",
    "style",
    "summary",
    "mjx-container",
    "h1",
    "h2",
    "h3",
)


def _linkable(node: nodes.Node, top: nodes.Node) -> bool:
    """Whether ``node`` (a text, or raw HTML) sits where a term's use is linked."""
    parent = node.parent
    while parent is not None and parent is not top:
        if isinstance(parent, _NOT_LINKED):
            return False
        parent = parent.parent
    return node.parent is not None


#: A string of HTML holding math MathJax typesets (TeX between its delimiters): never linked inside.
_TEX = ("\\(", "\\[", "$")


def _html_texts(soup: Any) -> list[Any]:
    """The strings of a page's own HTML (parsed) whose words may be linked, in order."""
    return [
        text
        for text in soup.find_all(string=True)
        if type(text).__name__ == "NavigableString"
        and not any(mark in text for mark in _TEX)
        and not any(p.name in _NOT_LINKED_HTML or "math" in (p.get("class") or ()) for p in text.parents)
    ]


def _pieces(doctree: nodes.document, soups: dict[int, Any]) -> Iterator[tuple[nodes.Node, Any, str]]:
    """The texts to search, in page order: ``(node, soup string or None, text)``.

    A raw HTML node's parsed HTML is kept in ``soups`` (by the node's id), to be written back. A
    link of the page's own to a term (:func:`_own_term_link`) is a piece too, its text the term's
    as written: ``(node, None, text)`` with ``node`` the link.
    """
    from bs4 import BeautifulSoup  # the book's theme needs it: installed with the book

    for node in doctree.findall(lambda n: isinstance(n, (nodes.Text, nodes.raw)) or _own_term_link(n)):
        if _own_term_link(node):
            yield node, None, node.astext()
            continue
        if not _linkable(node, doctree):
            continue
        if isinstance(node, nodes.Text):
            yield node, None, str(node)
        elif "html" in node.get("format", "").split() and "<script" not in node.astext():
            soup = soups.setdefault(id(node), BeautifulSoup(node.astext(), "html.parser"))
            for text in _html_texts(soup):
                yield node, text, str(text)


def _term_targets(app: Sphinx) -> dict[str, tuple[str, str]] | None:
    """Each term's glossary entry (its document and id), or None if the book has no glossary page."""
    if GLOSSARY_DOC not in app.env.all_docs:
        return None
    defined = app.env.get_domain("std")._terms  # term (lower case) -> (document, id)
    return {term.lower(): defined[term.lower()] for term in TERMS if term.lower() in defined}


def _own_term_link(node: nodes.Node) -> bool:
    """Whether ``node`` is the page's own link to a term (a ``{term}`` role, resolved)."""
    return isinstance(node, nodes.reference) and any(
        isinstance(child, nodes.inline) and set(TERM_CLASSES) <= set(child["classes"])
        for child in node.children
    )


def link_first_uses(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Link the first use of every glossary term on the page ``docname`` (see the module docstring)."""
    targets = _term_targets(app)
    if targets is None or docname == GLOSSARY_DOC:
        return
    _adopt_inlined_documents(doctree)
    soups: dict[int, Any] = {}
    pieces = list(_pieces(doctree, soups))
    uses: dict[int, list[tuple[int, int, str]]] = {}
    for page, indices in _by_page(pieces).items():
        if page == GLOSSARY_DOC:
            continue
        found = _first_uses([pieces[i] for i in indices], targets)
        uses |= {indices[i]: at for i, at in found.items()}
    changed: dict[int, nodes.raw] = {}
    for index, found in uses.items():
        node, string, text = pieces[index]
        hrefs = [_term_uri(app, docname, targets[term.lower()]) for *_, term in found]
        if string is None:
            _replace_text(node, text, found, hrefs)
        else:
            _replace_string(string, text, found, hrefs)
            changed[id(node)] = node
    for key, node in changed.items():
        node.replace_self(nodes.raw("", str(soups[key]), format=node["format"]))


def _page_of(node: nodes.Node) -> str | None:
    """The document ``node`` comes from on the single page (its ``start_of_file``), else None."""
    parent = node.parent
    while parent is not None and not isinstance(parent, addnodes.start_of_file):
        parent = parent.parent
    return None if parent is None else parent["docname"]


def _adopt_inlined_documents(doctree: nodes.document) -> None:
    """Make each document inlined in the single page the parent of its top nodes.

    Sphinx's ``inline_all_toctrees`` moves a document's nodes into its ``start_of_file`` by
    assigning the children list, so their ``parent`` is still the document they were read
    from: walking up from a text would never reach its ``start_of_file`` (:func:`_page_of`),
    and a node replaced through its parent would change that document, not the printed page.
    """
    for part in doctree.findall(addnodes.start_of_file):
        for child in part.children:
            child.parent = part


def _by_page(pieces: list[tuple[nodes.Node, Any, str]]) -> dict[str | None, list[int]]:
    """The pieces' indices by the page they come from (None: the page written).

    On the single page that prints the book (``singlehtml``), each of its documents, so that each
    links its own first uses.
    """
    pages: dict[str | None, list[int]] = {}
    for index, (node, *_) in enumerate(pieces):
        pages.setdefault(_page_of(node), []).append(index)
    return pages


def _first_uses(
    pieces: list[tuple[nodes.Node, Any, str]], targets: dict[str, tuple[str, str]]
) -> dict[int, list[tuple[int, int, str]]]:
    """The first use of each term in ``pieces`` (:func:`_pieces`), by piece: ``(start, end, term)``.

    A link of the page's own to a term is that term's use where it stands (found by its target,
    else by its words), so only a use before it is linked; a term without an entry is never.
    """
    term_of_id = {entry_id: term for term, (_, entry_id) in targets.items()}
    seen = {term for term in (t.lower() for t in TERMS) if term not in targets}
    uses: dict[int, list[tuple[int, int, str]]] = {}
    for index, (node, _, text) in enumerate(pieces):
        if _own_term_link(node):
            anchor = node.get("refuri", "").rpartition("#")[2] or node.get("refid", "")
            seen |= (
                {term_of_id[anchor]} if anchor in term_of_id else {t.lower() for *_, t in first_uses([text])}
            )
            continue
        for _, start, end, term in first_uses([text], seen):
            uses.setdefault(index, []).append((start, end, term))
    return uses


def _term_uri(app: Sphinx, docname: str, target: tuple[str, str]) -> str:
    """The link from the page ``docname`` to a term's entry (its document and id), as written.

    ``glossary.html#term-KKT`` from a chapter; on the single page, the entry's place there.
    """
    return make_refnode(app.builder, docname, target[0], target[1], nodes.Text(""))["refuri"]


def _replace_text(
    text: nodes.Text, content: str, found: list[tuple[int, int, str]], hrefs: list[str]
) -> None:
    """Put links to ``hrefs`` in place of the uses ``found`` in the text node ``text``."""
    parent, at, new = text.parent, 0, []
    for (start, end, _), href in zip(found, hrefs, strict=True):
        word = content[start:end]
        shown = nodes.inline(word, word, classes=list(TERM_CLASSES))
        new += [nodes.Text(content[at:start]), nodes.reference("", "", shown, internal=True, refuri=href)]
        at = end
    new.append(nodes.Text(content[at:]))
    position = parent.index(text)
    parent.remove(text)
    for offset, piece in enumerate(p for p in new if not (isinstance(p, nodes.Text) and not str(p))):
        parent.insert(position + offset, piece)


def _replace_string(string: Any, content: str, found: list[tuple[int, int, str]], hrefs: list[str]) -> None:
    """Put links to ``hrefs`` in place of the uses ``found`` in ``string``, a text of parsed HTML."""
    from bs4 import BeautifulSoup

    at, pieces = 0, []
    for (start, end, _), href in zip(found, hrefs, strict=True):
        pieces += [(content[at:start], None), (content[start:end], href)]
        at = end
    pieces.append((content[at:], None))
    string.replace_with(BeautifulSoup(render("term_links.html", pieces=pieces), "html.parser"))


def setup(app: Sphinx) -> None:
    """Link each glossary term's first use on every page, as the page is written."""
    app.connect("doctree-resolved", link_first_uses)
