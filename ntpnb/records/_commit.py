"""The git commit stamp of a run: where the project's sources were (:func:`source_commit`)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

#: The files of the project that decide what a run computes (relative to its root): a change to
#: one of them that is not committed marks a run's commit as modified.
RUN_SOURCES = ("notebooks", "ntpnb", "pyproject.toml", "constraints.txt")


@dataclass(frozen=True)
class SourceCommit:
    """The git commit a project's sources were at when a run was recorded, as its manifest says.

    ``sha`` is "" when it is unknown (not a git checkout, git missing, or a run recorded before
    commits were); ``modified``: the :data:`RUN_SOURCES` had uncommitted changes; ``changes``: how
    the chapter's own source differed from the commit (:func:`~ntpnb.chapter._sources.source_changes`;
    "" when it was as committed).
    """

    sha: str = ""
    modified: bool = False
    changes: str = ""

    def describe(self) -> str:
        """``commit 452b334``, ``commit 452b334 with uncommitted changes`` or ``commit not recorded``."""
        if not self.sha:
            return "commit not recorded"
        return f"commit {self.sha[:7]}" + (" with uncommitted changes" if self.modified else "")


def git_output(root: Path, *args: str) -> str | None:
    """The output of ``git -C root ARGS``; None when git is missing, fails or takes over 10 s."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def source_commit(root: Path) -> SourceCommit:
    """The commit the project at ``root`` is checked out at, and whether its run sources changed since.

    Unknown (``SourceCommit()``) outside a git checkout or without git.
    """
    head = git_output(root, "rev-parse", "--verify", "HEAD")
    if not head:
        return SourceCommit()
    status = git_output(root, "status", "--porcelain", "--", *RUN_SOURCES)
    return SourceCommit(head.strip(), status is None or bool(status.strip()))
