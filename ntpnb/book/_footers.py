"""The line at the foot of every page of the book: when, from which commit and in which run it was executed.

A chapter's page says when its executed notebook ran (papermill's end time, in the notebook) and
the commit its manifest recorded (:class:`~ntpnb.records._commit.SourceCommit`). Every other
page (the introduction, the report, the reference pages) says the same of the run as a whole:
the span of its chapters' times and their commits, and when the book was built. Each ends with
the run's label (:func:`~ntpnb.book._trees.describe_run`), the label its report gives it.

The Sphinx extension reads the tree once per build (:func:`read_footers`) and puts
:meth:`Footers.chapter` (a chapter's page) or :meth:`Footers.book` (any other) into the
theme's footer of each page.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from html import escape
from pathlib import Path

from .._templates import render_inline
from ..records._commit import SourceCommit
from ..records._files import read_record
from ..records._manifest import load_manifest, manifest_path
from ..records._places import OutputTree
from ..records._tree import chapter_seeds, load_tree_record
from ._executed import read_notebook
from ._trees import describe_run, visible


@dataclass(frozen=True)
class Execution:
    """When one chapter's executed notebook finished (None: not recorded), and from which commit."""

    finished: datetime | None
    commit: SourceCommit


def format_time(moment: datetime) -> str:
    """``2026-05-02 14:06 UTC``."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def whole_html(text: str) -> str:
    """``text`` (a date and time) as HTML kept on one line: no line ends at ``2026-`` / ``05-02``."""
    return str(render_inline("words.html", pieces=[(text, True)]))


def commit_html(commit: SourceCommit, repository: str = "") -> str:
    """``commit.describe()`` as HTML, its short hash linked to the commit in ``repository`` (if given)."""
    text = escape(commit.describe())
    if not commit.sha or not repository:
        return text
    short = commit.sha[:7]
    link = render_inline("commit_link.html", repository=repository.rstrip("/"), sha=commit.sha, short=short)
    return text.replace(short, link, 1)


@dataclass(frozen=True)
class Footers:
    """The footer lines of one build: the run's label, its chapters' executions, the build's time."""

    label: str
    executions: Mapping[str, Execution] = field(default_factory=dict)
    built: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    repository: str = ""
    #: Each chapter's own label, with the seeds it ran at (else :attr:`label`).
    chapter_labels: Mapping[str, str] = field(default_factory=dict)

    def chapter(self, name: str) -> str:
        """The footer of chapter ``name``'s page (HTML)."""
        execution = self.executions.get(name)
        run = f"run: {escape(self.chapter_labels.get(name, self.label))}"
        if execution is None:
            return f"Not executed in this run · {run}"
        when = f"Executed {whole_html(format_time(execution.finished))}" if execution.finished else "Executed"
        return f"{when} · {commit_html(execution.commit, self.repository)} · {run}"

    def book(self) -> str:
        """The footer of every other page (HTML): the run's chapters, and when the book was built."""
        run = f"run: {escape(self.label)}"
        built = f"book built {whole_html(format_time(self.built))}"
        if not self.executions:
            return f"No chapter executed in this run · {run} · {built}"
        times = [e.finished for e in self.executions.values() if e.finished is not None]
        when = "Chapters executed"
        if times:  # "2026-05-02 14:05 UTC", "2026-05-02 14:05 to 14:09 UTC" or "... to 2026-05-03 09:00 UTC"
            first, last = format_time(min(times)), format_time(max(times))
            same_day = last[11:] if first[:10] == last[:10] else last
            start, end = whole_html(first.removesuffix(" UTC")), whole_html(same_day)
            when += f" {whole_html(first)}" if first == last else f" {start} to {end}"
        commits = dict.fromkeys(e.commit for e in self.executions.values())
        sources = ", ".join(commit_html(c, self.repository) for c in commits)
        return f"{when} · {sources} · {run} · {built}"


#: The seeds each chapter ran at, written beside the run record into the tree a book is built from
#: (its staged copy holds no seed trees to read them from): :func:`stage_seeds`.
STAGED_SEEDS = "chapter_seeds.json"


def stage_seeds(folder: Path, seeds: Mapping[str, Sequence[int]]) -> None:
    """Write ``seeds`` (:func:`~ntpnb.records._tree.chapter_seeds`) into the staged tree ``folder``."""
    (folder / STAGED_SEEDS).write_text(json.dumps({k: list(v) for k, v in seeds.items()}), encoding="utf-8")


def staged_seeds(tree: OutputTree) -> dict[str, tuple[int, ...]]:
    """The seeds each chapter ran at, as :func:`stage_seeds` wrote them into ``tree``.

    Raises
    ------
    PathError
        If the file does not read as seeds by chapter.
    """

    def parse(data: object) -> dict[str, tuple[int, ...]]:
        if not isinstance(data, dict) or not all(
            isinstance(v, list) and all(type(s) is int for s in v) for v in data.values()
        ):
            raise ValueError("not lists of seeds by chapter")
        return {str(k): tuple(v) for k, v in data.items()}

    return read_record(tree.root / STAGED_SEEDS, "record of each chapter's seeds", parse)


def read_footers(tree: OutputTree, repository: str = "") -> Footers:
    """The footers of the book of ``tree``: its run record's label and each executed chapter's execution.

    A chapter's commit is its manifest's (not recorded when it has none: its last run failed, and
    the notebook is the run's before).
    """
    executions = {}
    for path in sorted(visible(tree.notebooks.glob("*.ipynb"))):
        end = read_notebook(path).get("metadata", {}).get("papermill", {}).get("end_time")  # ISO 8601
        try:
            finished = datetime.fromisoformat(end) if isinstance(end, str) else None
        except ValueError:
            finished = None
        if finished is not None and finished.tzinfo is None:
            finished = finished.replace(tzinfo=timezone.utc)
        commit = load_manifest(path).commit if manifest_path(path).is_file() else SourceCommit()
        executions[path.stem] = Execution(finished, commit)
    record = load_tree_record(tree.root)
    seeds = staged_seeds(tree) if (tree.root / STAGED_SEEDS).is_file() else chapter_seeds(tree.root, record)
    own = {name: describe_run(record, seeds={name: ran}) for name, ran in seeds.items()}
    return Footers(describe_run(record, seeds=seeds), executions, repository=repository, chapter_labels=own)
