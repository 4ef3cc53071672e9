"""A chapter's source against its git commit: what an uncommitted edit changed, said exactly.

A run of a chapter whose source ``notebooks/<name>.md`` differs from the commit the project is
checked out at is not the commit's run. :func:`source_changes` says how it differs, in one line:
each parameter of the ``parameters`` cell whose value changed (``toy_lr = 2.0 (committed: 0.5)``),
then how many other lines differ; ``ntpnb reproduce`` prints it, records it in the chapter's
manifest (:class:`~ntpnb.records._commit.SourceCommit`) and refuses such a run into the book's own
outputs unless asked (``--uncommitted``); ``ntpnb compare`` names it among the settings.
"""

from __future__ import annotations

import difflib
import functools
from pathlib import Path
from typing import Any

from .._jupyter_imports import import_jsonschema_without_iri_grammar
from ..errors import NTPError
from ..records._commit import git_output
from ._parameters import parse_parameters_cell


def source_changes(source: Path) -> str:
    """How the chapter ``source`` differs from the commit checked out (``""``: as committed, or no git).

    ``differs from commit 1a2b3c4: toy_lr = 2.0 (committed: 0.5); 3 other lines differ``, or
    ``is not in commit 1a2b3c4 (git does not track it)``.
    """
    stat = source.stat()
    return _source_changes(source.resolve(), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=64)
def _source_changes(source: Path, mtime_ns: int, size: int) -> str:
    """:func:`source_changes` of ``source`` as it is at ``mtime_ns`` and ``size`` (read once each)."""
    project, relative = source.parents[1], source.relative_to(source.parents[1]).as_posix()
    status = git_output(project, "status", "--porcelain", "--", relative)
    head = git_output(project, "rev-parse", "--short", "HEAD")
    if not status or not head:  # as committed, or not a git checkout
        return ""
    committed = git_output(project, "show", f"HEAD:{relative}")
    if status.startswith("??") or committed is None:
        return f"is not in commit {head.strip()} (git does not track it)"
    text = source.read_text(encoding="utf-8")
    parts = _parameter_changes(committed, text, source.name)
    others = _other_lines(committed, text)
    if others:
        parts.append(f"{others} other line{'s' * (others != 1)} differ{'s' * (others == 1)}")
    return f"differs from commit {head.strip()}: " + ("; ".join(parts) or "only in its whitespace")


def _parameters_cell(text: str) -> str:
    """The source of the cell tagged ``parameters`` of the Jupytext text ``text`` ("" if none or several)."""
    import_jsonschema_without_iri_grammar()
    import jupytext

    cells = [c for c in jupytext.reads(text, fmt="md").cells if "parameters" in c.metadata.get("tags", [])]
    return cells[0].source if len(cells) == 1 and cells[0].cell_type == "code" else ""


def _values(cell: str, name: str) -> dict[str, Any]:
    """The values of the parameters cell ``cell`` (empty when it does not read)."""
    try:
        return {key: p.value for key, p in parse_parameters_cell(cell, name).items()}
    except NTPError:
        return {}


def _parameter_changes(committed: str, text: str, name: str) -> list[str]:
    """``toy_lr = 2.0 (committed: 0.5)``: each parameter whose value differs between the two texts."""
    old, new = (_values(_parameters_cell(t), name) for t in (committed, text))
    changes = []
    for key in dict.fromkeys([*new, *old]):
        if key not in old:
            changes.append(f"{key} = {new[key]!r} (not in the commit)")
        elif key not in new:
            changes.append(f"{key} removed (committed: {old[key]!r})")
        elif new[key] != old[key] or type(new[key]) is not type(old[key]):
            changes.append(f"{key} = {new[key]!r} (committed: {old[key]!r})")
    return changes


def _other_lines(committed: str, text: str) -> int:
    """How many lines differ between the two texts outside their parameters cells (a changed line once)."""
    inside = {line for t in (committed, text) for line in _parameters_cell(t).splitlines()}
    old, new = ([line for line in t.splitlines() if line not in inside] for t in (committed, text))
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")
