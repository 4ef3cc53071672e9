"""Each term's first use on a page linked to the book's glossary (:mod:`._glossary`).

When Sphinx has read a page, :func:`link_first_uses` finds the first use of every glossary term in
the text a reader reads (a paragraph, a list, a table's cell, a caption, a cell's Markdown output;
not a heading, code, math, a link or a term the page links itself) and makes it a reference to the
term's entry, as MyST's ``{term}`` role would. A book without the glossary page (an explore
tree's) is left as it is.
"""

from __future__ import annotations

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx

from ._glossary import GLOSSARY_DOC, first_uses

#: Nodes whose text is not read as prose to link: headings, code, math, raw markup, links.
_NOT_LINKED = (
    nodes.title,
    nodes.subtitle,
    nodes.rubric,
    nodes.literal,
    nodes.literal_block,
    nodes.math,
    nodes.math_block,
    nodes.raw,
    nodes.reference,
    nodes.term,
    nodes.comment,
    nodes.system_message,
    addnodes.pending_xref,
    addnodes.desc_signature,
)


def _linkable(text: nodes.Text, top: nodes.Node) -> bool:
    node = text.parent
    while node is not None and node is not top:
        if isinstance(node, _NOT_LINKED):
            return False
        node = node.parent
    return text.parent is not None


def term_reference(word: str, term: str, docname: str) -> addnodes.pending_xref:
    """A reference to ``term``'s glossary entry showing ``word``, as MyST's ``{term}`` role makes it."""
    shown = nodes.inline(word, word, classes=["xref", "std", "std-term"])
    return addnodes.pending_xref(
        "",
        shown,
        refdomain="std",
        reftype="term",
        reftarget=term.lower(),  # Sphinx keys terms in lower case
        refexplicit=True,
        refwarn=True,
        refdoc=docname,
    )


def link_first_uses(app: Sphinx, doctree: nodes.document) -> None:
    """Link the first use of every glossary term on the page just read (see the module docstring)."""
    env = app.env
    if GLOSSARY_DOC not in env.found_docs or env.docname == GLOSSARY_DOC:
        return
    linked = {
        str(ref["reftarget"]).lower()
        for ref in doctree.findall(addnodes.pending_xref)
        if ref.get("reftype") == "term"
    }
    texts = [t for t in doctree.findall(nodes.Text) if _linkable(t, doctree)]
    found: dict[int, list[tuple[int, int, str]]] = {}
    for index, start, end, term in first_uses([str(t) for t in texts], linked):
        found.setdefault(index, []).append((start, end, term))
    for index, uses in found.items():
        text = texts[index]
        content, parent = str(text), text.parent
        pieces: list[nodes.Node] = []
        at = 0
        for start, end, term in uses:
            pieces += [nodes.Text(content[at:start]), term_reference(content[start:end], term, env.docname)]
            at = end
        pieces.append(nodes.Text(content[at:]))
        position = parent.index(text)
        parent.remove(text)
        for offset, piece in enumerate(p for p in pieces if not (isinstance(p, nodes.Text) and not str(p))):
            parent.insert(position + offset, piece)


def setup(app: Sphinx) -> None:
    """Link each glossary term's first use on every page, once the page is read."""
    app.connect("doctree-read", link_first_uses)
