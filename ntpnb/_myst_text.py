"""A notebook saved as MyST text that keeps, as written, every cell the reader did not change.

Jupytext writes a whole notebook anew: its header (the notebook's metadata, with jupytext's own
version), and every cell in its own way (a caption's YAML re-wrapped, the kernelspec's keys
reordered). A reader's copy of a chapter saved from JupyterLab should differ from the chapter only
where the reader changed it. :func:`kept_text` writes the notebook with jupytext, then takes back
from the text it replaces (the copy as last saved, or the chapter it was copied from) the header,
if the notebook's metadata did not change, and each cell that did not change, as written there; a
cell whose source alone changed keeps its options as written too. The result is read back and
must be the notebook jupytext wrote, else jupytext's text is kept: nothing the reader wrote is
lost to the merge.

A MyST text is cut into its header and a piece per cell (:func:`cell_pieces`) by the parser
jupytext reads it with (``jupytext.myst.get_parser``), with the same rule for where a cell
begins.
"""

from __future__ import annotations

import difflib
import itertools
import json
import re
import textwrap
from typing import Any

#: The jupytext format of the chapters' sources.
MYST = "md:myst"
#: Notebook metadata that JupyterLab and jupytext set on their own, not the reader: the kernel's
#: language details, the kernel's display name, and jupytext's record of its own version.
_VOLATILE = ("language_info",)


def cell_pieces(text: str) -> tuple[str, list[str]]:
    """``text`` (a MyST notebook) cut into its header and a piece per cell, which joined make ``text``.

    A code or raw cell's piece starts at its fence, a markdown cell's at the ``+++`` break before
    it (which carries its metadata), else at the line after the cell before; each piece runs to
    the next one's start, blank lines included. The cells are those jupytext reads
    (``jupytext.myst.myst_to_notebook``, whose walk through the parser's tokens this follows).
    """
    from jupytext.myst import CODE_DIRECTIVE, RAW_DIRECTIVE, get_parser

    lines = text.splitlines(keepends=True)
    tokens = get_parser().parse(text + "\n")
    header_end = tokens[0].map[1] if tokens and tokens[0].type == "front_matter" else 0
    starts: list[int] = []
    markdown_from, break_at, level = header_end, None, 0

    def flush(until: int) -> None:
        """The markdown up to line ``until`` is a cell, if it holds text (jupytext's rule)."""
        if any(line.strip() for line in lines[markdown_from:until]):
            starts.append(markdown_from if break_at is None else break_at)

    for token in tokens[1 if header_end else 0 :]:
        level += token.nesting
        if level != 0:
            continue  # a fence nested in a list or a directive is the markdown's
        if token.type == "fence" and token.info.startswith((CODE_DIRECTIVE, RAW_DIRECTIVE)):
            flush(token.map[0])
            starts.append(token.map[0])
            markdown_from, break_at = token.map[1], None
        elif token.type == "myst_block_break":
            flush(token.map[0])
            markdown_from, break_at = token.map[1], token.map[0]
    flush(len(lines))
    bounds = [*starts, len(lines)]
    header = "".join(lines[: starts[0] if starts else len(lines)])
    return header, ["".join(lines[a:b]) for a, b in itertools.pairwise(bounds)]


#: The fence of a code cell in a MyST notebook (jupytext's ``CODE_DIRECTIVE``).
CODE_FENCE = "{code-cell}"


def _myst_parser() -> Any:
    """The block parser jupytext reads a MyST notebook with (``jupytext.myst.get_parser``)."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin
    from mdit_py_plugins.myst_blocks import myst_block_plugin
    from mdit_py_plugins.myst_role import myst_role_plugin

    parser = MarkdownIt("commonmark").enable("table").use(front_matter_plugin).use(myst_block_plugin)
    return parser.use(myst_role_plugin).disable("inline", True)


def _cell_options(content: str) -> tuple[dict[str, Any], str]:
    """A code cell's fence content cut into its options and its source, by jupytext's rule.

    The options are a YAML block between ``---`` lines, or ``:key: value`` lines; one blank line
    after them is not the source's. Raises ``yaml.YAMLError`` if they are not YAML.
    """
    import yaml

    block = ""
    if content.startswith("---"):
        content = "\n".join(content.splitlines()[1:])
        end = re.search(r"^-{3,}", content, re.MULTILINE)
        block, content = (content[: end.start()], content[end.end() + 1 :]) if end else (content, "")
        block = textwrap.dedent(block)
    elif content.lstrip().startswith(":"):
        lines = content.splitlines()
        options = list(itertools.takewhile(lambda line: line.lstrip().startswith(":"), lines))
        block, content = "\n".join(o.lstrip()[1:] for o in options), "\n".join(lines[len(options) :])
    body = content.splitlines()
    if body and not body[0].strip():
        body = body[1:]
    return (yaml.safe_load(block) or {}) if block else {}, "\n".join(body)


def code_cells(text: str) -> list[tuple[dict[str, Any], str]]:
    """Each code cell of ``text`` (a MyST notebook): its options (its tags...) and its source.

    The cells and sources jupytext reads (``jupytext.reads(text, "md:myst")``; a test holds the
    two equal on every chapter), without loading jupytext and nbformat, which take longer than a
    command that reads a chapter's parameters to refuse a value should (half a second).
    """
    level, found = 0, []
    for token in _myst_parser().parse(text + "\n"):
        level += token.nesting
        if level == 0 and token.type == "fence" and token.info.startswith(CODE_FENCE):
            found.append(_cell_options(token.content))
    return found


def _key(cell: Any) -> str:
    """A cell as a comparable text: its type, source and metadata."""
    return json.dumps([cell["cell_type"], cell["source"], cell.get("metadata", {})], sort_keys=True)


def _comparable(metadata: dict[str, Any]) -> str:
    """A notebook's metadata without what the kernel and jupytext set themselves (:data:`_VOLATILE`)."""
    kept = {k: v for k, v in metadata.items() if k not in _VOLATILE}
    if isinstance(kept.get("kernelspec"), dict):
        kept["kernelspec"] = kept["kernelspec"].get("name")
    if isinstance(kept.get("jupytext"), dict):
        kept["jupytext"] = {k: v for k, v in kept["jupytext"].items() if k != "text_representation"}
    return json.dumps(kept, sort_keys=True)


def _with_new_source(piece: str, old: str, new: str) -> str | None:
    """``piece`` (a cell's text) with its source ``old`` replaced by ``new``; None unless found once."""
    if not old.strip() or piece.count(old) != 1:
        return None
    return piece.replace(old, new)


def kept_text(baseline: str, notebook: Any) -> str:
    """The MyST text of ``notebook`` that keeps, as written in ``baseline``, what did not change.

    ``baseline``: the MyST text the save replaces; ``notebook``: what is saved (a notebook as
    nbformat reads it). See the module docstring; the text returned reads as the notebook that
    jupytext alone would write.
    """
    import jupytext

    written = jupytext.writes(notebook, fmt=MYST)
    saved = jupytext.reads(written, fmt=MYST)  # the notebook as jupytext keeps it (its metadata filtered)
    try:
        before = jupytext.reads(baseline, fmt=MYST)
        old_header, old_pieces = cell_pieces(baseline)
        header, pieces = cell_pieces(written)
    except Exception:  # a baseline jupytext cannot read is no baseline
        return written
    if len(old_pieces) != len(before.cells) or len(pieces) != len(saved.cells):
        return written
    if _comparable(before.metadata) == _comparable(saved.metadata):
        header = old_header
    merged = list(pieces)
    matcher = difflib.SequenceMatcher(None, [_key(c) for c in before.cells], [_key(c) for c in saved.cells])
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for i, j in zip(range(i1, i2), range(j1, j2), strict=False):  # a replace may differ in length
            old, new = before.cells[i], saved.cells[j]
            if tag == "equal":
                merged[j] = old_pieces[i]
            elif tag == "replace" and _key({**old, "source": ""}) == _key({**new, "source": ""}):
                merged[j] = _with_new_source(old_pieces[i], old.source, new.source) or pieces[j]
    text = header + "".join(merged)
    try:
        again = jupytext.reads(text, fmt=MYST)
    except Exception:
        return written
    same = [_key(c) for c in again.cells] == [_key(c) for c in saved.cells]
    return text if same and _comparable(again.metadata) == _comparable(saved.metadata) else written
