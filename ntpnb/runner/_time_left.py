"""The time a run has left, from what was measured before, corrected by the runs it has finished.

Each run a plan has still to execute expects a time (:func:`time_left`): its last time on this
machine (its tree's ``timings.json``), else the benchmark record's
(:func:`~ntpnb.records._timings.reference_seconds`), multiplied by this run's pace (:func:`pace`:
how its last finished runs compare with what was measured of them, which follows the load and
the machine now; before any run ends, at least that of the slowest run under way) and by its
chapter's factor (how that chapter's runs here compared with the others'). A run that compiled
numba's kernels counts only while no other ended. The time left is
that work shared among the jobs, said with what it rests on (:meth:`TimeLeft.describe`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..records._run import ChapterRun, PlannedRun
from ..records._timings import BENCHMARK, THIS_MACHINE

#: What a run's expected time comes from besides :data:`THIS_MACHINE` and :data:`BENCHMARK`.
THIS_RUN = "this run's own times"
#: Each source of a time, as an estimate names it.
_WORDS = {THIS_MACHINE: THIS_MACHINE, BENCHMARK: f"the {BENCHMARK}"}
#: How many of the last finished runs, per job, give the pace (:func:`pace`): recent enough to
#: follow a change of load, enough to average out one run's noise.
PACE_RUNS_PER_JOB = 2


@dataclass(frozen=True)
class TimeLeft:
    """The wall seconds a run has left (None: unknown), and what the estimate rests on."""

    seconds: float | None
    #: Where the expected times come from, and the pace that multiplied them (:func:`time_left`).
    basis: str = ""

    def describe(self) -> str:
        """``about 4 min left: this machine's last run x1.3, ...``; ``""`` when unknown or none left.

        What it rests on follows a colon: a finished run's line prints it in brackets.
        """
        if self.seconds is None or self.seconds < 1:
            return ""
        if self.seconds < 90:
            when = f"about {max(10, round(self.seconds / 10) * 10)} s left"
        else:
            when = f"about {round(self.seconds / 60)} min left"
        return f"{when}: {self.basis}" if self.basis else when


def base_seconds(
    run: PlannedRun,
    recorded: Mapping[str, float],
    profile: str,
    reference: Mapping[str, Mapping[str, float]],
) -> tuple[float, str] | None:
    """What was measured of ``run`` before this run: its last time here, else the benchmark record's.

    ``recorded``: each run's last time in its tree by label (inf: none,
    :func:`~._plan.recorded_seconds`); ``reference``: the benchmark record's times by notebook and
    profile. Returns the seconds and where they come from; None when neither has it.
    """
    if recorded.get(run.label, float("inf")) < float("inf"):
        return recorded[run.label], THIS_MACHINE
    if profile in reference.get(run.notebook, {}):
        return reference[run.notebook][profile], BENCHMARK
    return None


def _timed(finished: Mapping[str, ChapterRun]) -> list[ChapterRun]:
    """The runs of ``finished`` (in the order they ended) that executed here, without numba's compiling.

    A run that compiled the kernels takes longer than the next ones, which load them: it is left
    out while any other executed run ended.
    """
    executed = [r for r in finished.values() if not r.cached and r.seconds > 0]
    warm = [r for r in executed if not r.compiled]
    return warm or executed


def pace(
    timed: Sequence[ChapterRun], bases: Mapping[str, tuple[float, str]], jobs: int
) -> tuple[float, int, dict[str, float]]:
    """How this run compares with what was measured of its runs before: now, and chapter by chapter.

    The pace after a run of ``timed`` (those with a base, :func:`base_seconds`, in ``bases`` by
    label) is the sum of the times of the last ``PACE_RUNS_PER_JOB * jobs`` of them over the sum
    of their bases: the load and the machine of this run, recent enough to follow a change of
    load. A chapter's factor is the mean of its runs' times over their base times that pace
    around them (the window reaching half of it past the run): how it fares here beside the
    others (1.0 for one not run yet).

    Returns the pace after the last run (1.0 before any), how many runs it counts, and each
    chapter's factor by name.
    """
    window = PACE_RUNS_PER_JOB * max(1, jobs)
    measured = [r for r in timed if r.label in bases and bases[r.label][0] > 0]

    def pace_until(end: int) -> float:
        """The pace of the ``window`` runs up to the ``end``-th."""
        last = measured[max(0, end + 1 - window) : end + 1]
        return sum(x.seconds for x in last) / sum(bases[x.label][0] for x in last)

    ratios: dict[str, list[float]] = {}
    for i, r in enumerate(measured):  # each run beside the runs around it: the same load
        around = pace_until(min(i + window // 2, len(measured) - 1))
        ratios.setdefault(r.notebook, []).append(r.seconds / (bases[r.label][0] * around))
    factors = {name: sum(values) / len(values) for name, values in ratios.items()}
    if not measured:
        return 1.0, 0, factors
    return pace_until(len(measured) - 1), min(window, len(measured)), factors


def time_left(
    runs: Sequence[PlannedRun],
    recorded: Mapping[str, float],
    profile: str,
    jobs: int,
    finished: Mapping[str, ChapterRun],
    running: Mapping[str, float],
    reference: Mapping[str, Mapping[str, float]] | None = None,
) -> TimeLeft:
    """The wall time left of a run of ``runs`` at ``profile``, ``jobs`` at once, and what it rests on.

    ``recorded``: each run's last time in its tree, by label (:func:`~._plan.recorded_seconds`);
    ``finished``: the results so far by label, in the order they ended; ``running``: the seconds
    each running run has run; ``reference``: the benchmark record's times by notebook and profile.
    A run expects its base (:func:`base_seconds`) times the :func:`pace` now (before any run
    ends, at least that of the slowest run under way) and its chapter's factor; a run without a
    base, the mean time of its chapter's runs ended in this run (:func:`_timed`). The work left
    (what the running ones still need, and the others) is shared among the jobs, and is never
    less than the longest run left. Unknown (None) when a run left has no time from anywhere.
    """
    reference = reference or {}
    bases = {r.label: b for r in runs if (b := base_seconds(r, recorded, profile, reference)) is not None}
    timed = _timed(finished)
    now, counted, factors = pace(timed, bases, jobs)
    under_way = [running[label] / bases[label][0] for label in running if bases.get(label, (0,))[0] > 0]
    if not counted and max(under_way, default=0.0) > 1.0:  # no run ended yet, and they take longer
        now = max(under_way)
    own: dict[str, list[float]] = {}
    for r in timed:
        own.setdefault(r.notebook, []).append(r.seconds)
    left, used = [], set()
    for run in runs:
        if run.label in finished:
            continue
        if run.label in bases:
            seconds, where = bases[run.label]
            expected = seconds * now * factors.get(run.notebook, 1.0)
        elif run.notebook in own:
            expected, where = sum(own[run.notebook]) / len(own[run.notebook]), THIS_RUN
        else:
            return TimeLeft(None)
        left.append(max(expected - running.get(run.label, 0.0), 0.0))
        used.add(where)
    if not left:
        return TimeLeft(0.0)
    seconds = max(sum(left) / min(max(1, jobs), len(left)), max(left))
    return TimeLeft(seconds, basis(used, now, counted, under_way=now > 1.0 and not counted))


def basis(used: set[str], factor: float, counted: int, under_way: bool = False) -> str:
    """What an estimate rests on: the sources of its times (``used``), and the pace that multiplied them.

    Examples
    --------
    >>> basis({THIS_MACHINE}, 1.0, 0)
    "this machine's last run"
    >>> basis({THIS_RUN, BENCHMARK}, 4.4, 4)
    "this run's own times; the benchmark record x4.4, at this run's pace over its last 4 runs"
    >>> basis({BENCHMARK}, 1.0, 0)
    'the benchmark record, on an idle core, until a run ends here'
    """
    parts = [THIS_RUN] if THIS_RUN in used else []
    measured = [_WORDS[where] for where in (THIS_MACHINE, BENCHMARK) if where in used]
    if measured and counted:
        scaled = " and ".join(measured)
        last = "its last run" if counted == 1 else f"its last {counted} runs"
        parts.append(f"{scaled} x{factor:.2g}, at this run's pace over {last}")
    elif measured and under_way:
        parts.append(f"{' and '.join(measured)} x{factor:.2g} at least, as no run has ended yet")
    elif measured:
        idle = ", on an idle core, until a run ends here" if BENCHMARK in used else ""
        parts.append(" and ".join(measured) + idle)
    return "; ".join(parts)
