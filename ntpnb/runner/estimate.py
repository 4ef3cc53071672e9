"""How long a run has left: each run's expected time, from this machine's past runs or a reference.

A run's expected seconds are its notebook's last time in its tree (``timings.json``; a sweep's
seed without one takes the book seed's). A notebook never timed here takes its
:data:`~ntpnb.chapter.parameters.REFERENCE_SECONDS`, scaled by how the chapters finished so far
compare with theirs (a first run on a slower or faster machine). The time left is the work left
(what the running ones still need, and the ones not started) shared among the jobs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from ..chapter.layout import OutputLayout, output_tree
from ..chapter.parameters import REFERENCE_SECONDS
from .choice import NotebookRun, last_seconds


class TimeLeft:
    """The time left of a run of ``runs`` at ``profile``, ``jobs`` at once, as runs finish.

    ``recorded``: each run's last time in its tree, by label (:func:`~.choice.recorded_seconds`).
    """

    def __init__(
        self, runs: Sequence[NotebookRun], recorded: Mapping[str, float], profile: str, jobs: int
    ) -> None:
        self.jobs = max(1, min(jobs, len(runs)))
        self.measured: dict[str, float] = {}  # by label: this machine's own time
        self.reference: dict[str, float] = {}  # by label: the reference machine's
        for run in runs:
            if recorded[run.label] < float("inf"):
                self.measured[run.label] = recorded[run.label]
            elif profile in REFERENCE_SECONDS.get(run.name, {}):
                self.reference[run.label] = REFERENCE_SECONDS[run.name][profile]
        self.labels = [run.label for run in runs]
        self.done: set[str] = set()
        self._ours = self._theirs = 0.0  # the finished runs that had only a reference: their times

    def finished(self, label: str, seconds: float, executed: bool = True) -> None:
        """The run ``label`` ended after ``seconds`` (``executed``: not found cached)."""
        self.done.add(label)
        if executed and label in self.reference and seconds > 0:
            self._ours += seconds
            self._theirs += self.reference[label]

    def seconds(self, running: Mapping[str, float]) -> float | None:
        """The wall seconds left, given the seconds each running run has run (None: unknown)."""
        scale = self._ours / self._theirs if self._theirs else 1.0  # this machine to the reference
        work = 0.0
        for label in self.labels:
            if label in self.done:
                continue
            if label in self.measured:
                expected = self.measured[label]
            elif label in self.reference:
                expected = self.reference[label] * scale
            else:
                return None
            work += max(expected - running.get(label, 0.0), 0.0)
        return work / self.jobs


def describe_time_left(seconds: float | None) -> str:
    """``about 4 min left``, ``about 40 s left``; ``""`` when unknown or nothing is left."""
    if seconds is None or seconds < 1:
        return ""
    if seconds < 90:
        return f"about {max(10, round(seconds / 10) * 10)} s left"
    return f"about {round(seconds / 60)} min left"


def chapter_seconds(root: Path, name: str, profile: str) -> tuple[float, str] | None:
    """What chapter ``name`` takes at ``profile`` at one seed, and where that comes from; None if unknown.

    This machine's last run into the profile's own tree (the book's for ``paper``, else
    ``outputs/runs/profile=...``), else :data:`~ntpnb.chapter.parameters.REFERENCE_SECONDS`.
    """
    seconds = last_seconds(OutputLayout(output_tree(root, profile, {}, None)), profile, name)
    if seconds < float("inf"):
        return seconds, "this machine's last run"
    if profile in REFERENCE_SECONDS.get(name, {}):
        return REFERENCE_SECONDS[name][profile], "a two-core reference machine"
    return None
