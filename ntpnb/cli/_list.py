"""``ntpnb list``: each notebook's expected time and its parameters, formatted for a terminal."""

from __future__ import annotations

import argparse
import os
import shutil
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import PathError
from ..records._run import PROFILE_NAMES

if TYPE_CHECKING:  # the command's own modules load when it runs: `ntpnb --help` loads none of them
    from ..records import OutputTree
    from ..runner import ChapterTimes, Expected


def cmd_list(args: argparse.Namespace) -> int:
    """Print the parameters of the notebooks ``args.names`` chooses, as ``reproduce`` chooses them.

    Each notebook's expected time at each profile comes from this machine's last run into the
    profile's own tree, else the project's benchmark record, the current sources' first
    (:func:`~ntpnb.records._timings.expected_time`); the end says what the record measured, on what
    machine, and which times are stale.
    """
    from ..runner import (
        format_expected,
        load_chapter_times,
        package_fingerprint,
        run_sources,
        select_notebooks,
    )

    root = args.root
    width = min(shutil.get_terminal_size((LIST_WIDTH, 24)).columns, LIST_WIDTH)
    wrap = textwrap.TextWrapper(width - 1, subsequent_indent="   ", break_on_hyphens=False)
    try:
        record, unread = load_chapter_times(root), ""
    except PathError as exc:  # said at the end; this machine's own times still show
        record, unread = None, str(exc)
    fingerprint, shown = package_fingerprint(), []
    chosen = select_notebooks(root, args.names)
    for source in chosen:
        print(source.stem)
        times = _expected_times(root, source, run_sources(source, fingerprint), record)
        shown += [expected for _, expected in times]
        if times:
            print(
                "\n".join(
                    f" {line}" for line in wrap.wrap(f"expected time at one seed: {format_expected(times)}")
                )
            )
        for line in _parameter_lines(source, width):
            print(line)
    for note in _list_notes(record, unread, shown):
        print("\n".join(wrap.wrap(note)))
    print(_change_example(root, chosen))
    return 0


def _expected_times(
    root: Path, source: Path, current: Mapping[str, str], record: ChapterTimes | None
) -> list[tuple[str, Expected]]:
    """The expected time of the notebook ``source`` at each profile that has one, as ``(profile, time)``.

    ``current`` says its sources now (:func:`~ntpnb.records._timings.run_sources`); ``record`` is the
    project's benchmark record, if read.
    """
    from ..runner import expected_time

    times = []
    for profile in PROFILE_NAMES:
        expected = expected_time(source.stem, profile, current, _profile_tree(root, profile), record)
        if expected:
            times.append((profile, expected))
    return times


def _parameter_lines(source: Path, width: int) -> list[str]:
    """The lines of ``ntpnb list`` giving the parameters of the notebook ``source``, group by group.

    Parameters
    ----------
    source
        The notebook's Jupytext source.
    width
        The width the lines wrap to.

    Returns
    -------
    list of str
        Each group's heading (if it has a name) and its parameters with their meaning, domain and
        value at each profile (a notebook without profiles shows no values); run parameters are
        left out.
    """
    from ..chapter._parameters import CHANGES, RUN_PARAMETERS, profile_parameters, read_parameters_cell

    cell = read_parameters_cell(source)
    meanings = {name: f"{p.meaning} ({p.domain.describe()})".lstrip() for name, p in cell.items()}
    known = source.stem in CHANGES  # a notebook without profiles shows no values
    per_profile = {p: profile_parameters(source, p) for p in PROFILE_NAMES} if known else {}
    lines = []
    for group in dict.fromkeys(p.group for name, p in cell.items() if name not in RUN_PARAMETERS):
        if group:
            lines.append(f" {group}:")
        in_group = {
            profile: {k: v for k, v in values.items() if cell[k].group == group}
            for profile, values in per_profile.items()
        }
        lines += _format_parameters(in_group, meanings, width)
    return lines


def _list_notes(record: ChapterTimes | None, unread: str, shown: Sequence[Expected]) -> list[str]:
    """The notes ending ``ntpnb list``: what the benchmark record measured, stale times, an unread record.

    Parameters
    ----------
    record
        The project's benchmark record of chapter times, or ``None`` if it could not be read.
    unread
        Why the record could not be read ("" if it was).
    shown
        The expected times the listing showed.

    Returns
    -------
    list of str
        The notes, each one paragraph.
    """
    from ..runner import BENCHMARK, REFRESH_COMMAND, describe_record, refresh_minutes

    notes = []
    if record is not None and any(e.where == BENCHMARK for e in shown):
        notes.append(f"the {BENCHMARK}: {describe_record(record)}")
    if any(e.stale for e in shown):
        notes.append("a stale time was measured with other sources than these, and may not hold for them")
        if record is not None:
            notes[-1] += (
                f"; `{REFRESH_COMMAND}` measures the record again (about {refresh_minutes(record)} min)"
            )
    if unread:
        notes.append(f"no {BENCHMARK} times: {unread}")
    busy = _busy_note()
    return notes + ([busy] if busy and shown else [])


def _busy_note() -> str:
    """A note that this machine is busy now (its load above its cores), so a run takes longer; "" if not."""
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except OSError:  # no load average on this system
        return ""
    if load <= cores:
        return ""
    return (
        f"this machine is busy now (load average {load:.3g} on {cores} cores): a run takes longer than "
        "these times while it is (ntpnb reproduce corrects its time left by the runs it finishes)"
    )


def _profile_tree(root: Path, profile: str) -> OutputTree:
    """The tree a run of ``profile`` without ``-p`` writes (its ``timings.json``: this machine's times)."""
    from ..records import OutputTree, tree_root

    return OutputTree(tree_root(root, profile, {}, None))


def _change_example(root: Path, chosen: Sequence[Path]) -> str:
    """The line ending ``ntpnb list``: how to change a parameter for a run, with a command that runs.

    The example changes the ``seed`` of the first chosen notebook that has one (to the next
    seed); without any, it says how in words.
    """
    from ..book import chapter_number, root_option
    from ..chapter._parameters import read_parameters_cell
    from ..records import exploratory_output_dir
    from ..runner import int_seed

    for source in chosen:
        seed = int_seed({k: p.value for k, p in read_parameters_cell(source).items()})
        if seed is not None:
            change = {"seed": str(seed + 1)}
            tree = exploratory_output_dir(root, "paper", change).relative_to(root)
            command = f"ntpnb reproduce {chapter_number(source.stem)} -p seed={seed + 1}{root_option(root)}"
            return f"change one for a run, e.g. `{command}` (outputs go to {tree})"
    return "change one for a run with ntpnb reproduce and -p KEY=VALUE (outputs go to outputs/runs/)"


#: The widest ``ntpnb list`` writes its lines (narrower on a narrower terminal).
LIST_WIDTH = 100


def _format_parameters(
    per_profile: Mapping[str, Mapping[str, Any]], meanings: Mapping[str, str], width: int = LIST_WIDTH
) -> list[str]:
    """The lines of ``ntpnb list`` for one notebook: each parameter, its meaning, its values.

    ``per_profile`` holds values by profile, then name. Each parameter gets its name and meaning,
    wrapped at ``width`` and aligned after the names, then its values on the next line (one line
    per profile when they do not fit; a value is never split).

    Examples
    --------
    >>> for line in _format_parameters({"paper": {"n": 9}, "quick": {"n": 3}}, {"n": "samples"}):
    ...     print(line)
      n  samples
         paper 9 | quick 3
    """
    names = list(dict.fromkeys(name for values in per_profile.values() for name in values))
    indent = " " * (2 + max((len(name) for name in names), default=0) + 2)
    wrap = textwrap.TextWrapper(width=max(width, len(indent) + 20), subsequent_indent=indent)
    wrap.break_long_words = wrap.break_on_hyphens = False
    lines = []
    for name in names:
        meaning = meanings.get(name) or "(no comment in the notebook's parameters cell)"
        lines += wrap.wrap(f"  {name:<{len(indent) - 4}}  {meaning}")
        shown = [f"{indent}{p} {values[name]!r}" for p, values in per_profile.items() if name in values]
        one_line = indent + " | ".join(line.lstrip() for line in shown)
        lines += [one_line] if len(one_line) <= width else shown
    return lines
