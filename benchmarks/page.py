"""The book's benchmarks page, written here and nowhere else: a run's measurements, then the notebooks' times.

The page has two parts, made at two times. ``python -m benchmarks`` measures and writes the first
with :func:`write_measured_page`: ``outputs/benchmarks/benchmarks.md`` (every table, from its
:class:`~benchmarks.record.Results`; its ``benchmarks.json`` holds the measurements). ``ntpnb
book`` runs ``python -m benchmarks.page TREE`` (:func:`main`) in the project before building, which
writes the book's page ``outputs/benchmarks.md`` (listed in ``_toc.yml``) with
:func:`write_benchmarks_page`: that run's part, or, when none was run into this tree,
:func:`not_run_text` (the book never shows a number no run produced, and nothing generated is
committed), then the notebooks' reproduction times of the tree (:func:`render_timings_section`).
Both parts are written by this module, and ``python -m benchmarks.page`` loads no solver: the
measurements reach it as the run's text.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from ntpnb.chapter import markdown_table
from ntpnb.records import (
    PROFILE_NAMES,
    OutputTree,
    Timings,
    atomic_write_text,
    format_platform,
    load_timings,
    load_tree_record,
)

from . import attention, joint, notebooks
from .machine import format_machine
from .prose import (
    ATTENTION_INTRO,
    ATTENTION_TITLE,
    EXPONENTS_INTRO,
    EXPONENTS_TITLE,
    JOINT_INTRO,
    JOINT_SCALE_INTRO,
    JOINT_TITLE,
    JOINT_W_STAR_INTRO,
    MEASURABLE,
    NOTEBOOKS_INTRO,
    NOTEBOOKS_TITLE,
    PAGE_HEAD,
    PLATFORM_INTRO,
    PLATFORM_TITLE,
    SOLVERS_INTRO,
)
from .record import Results
from .scaling import Table, format_exponent_summary
from .tables import format_table, format_training

#: The command that measures the benchmarks (same as ``python -m benchmarks`` in the project root).
BENCHMARKS_COMMAND = "ntpnb benchmarks"


def _page_head(res: Results, argv: Sequence[str] | None) -> list[str]:
    """The page's opening parts: machine, command, chapters' times, exponents and the solvers' note."""
    cmd = "python -m benchmarks " + " ".join(argv if argv is not None else sys.argv[1:])
    parts = [
        PAGE_HEAD,
        f"{format_machine(res.machine)}\n\nMeasured by `{cmd.strip()}`, in {res.total:.0f} s in all.\n",
    ]
    if res.nb_times:
        parts.append(
            f"## {NOTEBOOKS_TITLE}\n\n{NOTEBOOKS_INTRO}\n{notebooks.format_notebook_times(res.nb_times)}"
        )
    summary = format_exponent_summary(res.fitted_exponents())
    parts.append(f"## {EXPONENTS_TITLE}\n\n{EXPONENTS_INTRO}\n{summary}\n")
    parts.append(SOLVERS_INTRO)
    return parts


def _table_section(table: Table, body: str, intro: str, figures: Mapping[str, str] | None) -> str:
    """One table's section: its title, intro, formatted body and (when drawn) its figure."""
    link = (figures or {}).get(table.problem)
    alt = f"{table.problem}: seconds against {table.count_label}, log-log"
    image = f"\n![{alt}]({link})\n" if link else ""
    return f"## {table.problem}\n\n" + (f"{intro}\n" if intro else "") + f"{body}\n{image}"


def _joint_sections(res: Results, time_limit: float) -> list[str]:
    """The joint problem's sections: its table and exponents, the corpus scale and W*'s times."""
    parts = []
    if res.joint_rows:
        body = (
            joint.format_joint(res.joint_rows, time_limit)
            + "\n"
            + joint.format_joint_exponents(res.joint_rows)
        )
        parts.append(f"## {JOINT_TITLE}\n\n{JOINT_INTRO}\n{body}\n")
    if res.scale_rows:
        whole = joint.format_whole_corpus(res.scale_rows, res.joint_rows, joint.whole_corpus_m())
        parts.append(f"{JOINT_SCALE_INTRO}\n{joint.format_scale(res.scale_rows)}\n{whole}")
    if res.w_star_rows:
        parts.append(f"{JOINT_W_STAR_INTRO}\n{joint.format_w_star(res.w_star_rows, time_limit)}\n")
    return parts


def _measured_lines(measured: Sequence[str]) -> list[str]:
    """What this run measured and (by :data:`MEASURABLE`'s labels) what it did not."""
    missing = [label for name, label in MEASURABLE.items() if name not in measured]
    parts = [f"Measured in this run: {', '.join(measured)}.\n"]
    if missing:
        parts.append(f"Not measured in this run: {', '.join(missing)}.\n")
    return parts


def measured_page(
    res: Results,
    argv: Sequence[str] | None,
    figures: Mapping[str, str] | None = None,
    time_limit: float = 60.0,
) -> str:
    """The page's part from one run's measurements ``res`` (``benchmarks/benchmarks.md``).

    At the top the machine (:func:`~benchmarks.machine.format_machine`), the command (``argv``,
    default: this process's), the chapters' times (with ``--notebooks``) and the summary of fitted
    exponents; then every table, each timed one under its benchmark's intro. ``figures`` maps a
    table's problem to the link of its figure, relative to the book page (``outputs/benchmarks.md``,
    one folder above the benchmark's output folder); ``time_limit`` is the run's ``--time-limit``.
    The machine's full platform record (:func:`ntpnb.chapter.platform_info` of the run) ends it,
    as the section "Platform".
    """
    parts = _page_head(res, argv)
    for bench, table in res.runs:
        body = format_table(table, bench.naive, bench.fit_kind)
        parts.append(_table_section(table, body, bench.intro, figures))
    for bench, table in res.train_runs:
        body = format_training(table, bench.fit_kind)
        parts.append(_table_section(table, body, bench.intro, figures))
    if res.att_rows:
        parts.append(
            f"## {ATTENTION_TITLE}\n\n{ATTENTION_INTRO}\n{attention.format_attention(res.att_rows)}\n"
        )
    parts += _joint_sections(res, time_limit)
    parts += _measured_lines(res.measured())
    parts.append(f"## {PLATFORM_TITLE}\n\n{PLATFORM_INTRO}\n{format_platform(res.machine.platform)}")
    return "\n".join(parts)


def write_measured_page(
    res: Results,
    out: Path,
    argv: Sequence[str] | None,
    figures: Mapping[str, str] | None = None,
    time_limit: float = 60.0,
) -> Path:
    """Write :func:`measured_page` to ``<out>/benchmarks.md`` (the run's output folder); its path."""
    return atomic_write_text(out / "benchmarks.md", measured_page(res, argv, figures, time_limit))


def not_run_text(tree: OutputTree, own: bool = True) -> str:
    """The page's beginning when no benchmark has been run into ``tree``: what it would show, and how.

    ``own``: ``tree`` is the book's tree, where the commands need no folder.
    """
    out = "" if own else f" --out {tree.benchmarks}"
    book = "ntpnb book" if own else f"ntpnb book --run {tree.root}"
    return f"""\
# Benchmarks

No benchmark has been run into this output tree, so this page shows no solver timing: the
tables of each solver's time and memory against problem size (the NTP-SVM by its five methods,
the separability LP, the regularization path, the Graph-SVM and the cyclic correction, both
papers' training loops, and chapter 6's joint problem on growing prefixes of its text), with
the growth exponents fitted to them, drawn as plots. The book published online has them: the
workflow that builds it runs the benchmarks first. To make them here, run from the repository
root

```bash
{BENCHMARKS_COMMAND}{out}
{book}
```

The first command (the same as `python -m benchmarks`; `{BENCHMARKS_COMMAND} --help` lists its
options) takes about half an hour on 2 cores and writes `benchmarks/benchmarks.md` and
`benchmarks/benchmarks.json` in the output tree; the second rebuilds the book, with the measured
tables on this page. With `--notebooks` it also times each chapter alone on one core and the
paper run with two jobs. What this run of the notebooks measured is below.
"""


TIMINGS_TITLE = "Notebook reproduction times"
#: A command whose runs ``timings.json`` records (the quick profile's; ``ntpnb reproduce`` the paper's).
REPRODUCE_COMMAND = "ntpnb reproduce --profile quick"


def _profiles(timings: Mapping[str, object]) -> list[str]:
    """The profiles ``timings`` holds records of: the known ones in their order, then the others by name."""
    known = [p for p in PROFILE_NAMES if timings.get(p)]
    return known + sorted(p for p in timings if p not in PROFILE_NAMES and timings[p])


def format_timings(timings: Timings) -> str:
    """A Markdown table: one row per notebook, one column per profile, then totals and how run."""
    profiles = _profiles(timings)
    if not profiles:
        return (
            "No notebook reproduction has been timed in this output tree. Run, from the "
            f"repository root, `ntpnb reproduce` (the paper profile) or `{REPRODUCE_COMMAND}` (`--force` "
            "reruns notebooks that are cached), then `ntpnb book`."
        )

    names = sorted({name for p in profiles for name in timings[p]})
    rows = [[name, *(notebooks.format_run_seconds(timings[p].get(name)) for p in profiles)] for name in names]
    totals = [sum(float(r["seconds"]) for r in timings[p].values()) for p in profiles]
    rows.append(["sum of the notebooks", *(notebooks.format_seconds(t) for t in totals)])
    notes = []
    for p in profiles:
        jobs = sorted({int(r["jobs"]) for r in timings[p].values()})
        dates = sorted({str(r["date"]) for r in timings[p].values()})
        when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
        failed = [n for n, r in timings[p].items() if not r.get("ok")]
        note = f"- `{p}`: `ntpnb reproduce --profile {p} --jobs {'/'.join(map(str, jobs))}`, {when}"
        notes.append(note + (f"; failed: {', '.join(sorted(failed))}" if failed else ""))
    return markdown_table(["notebook", *profiles], rows) + "\n\n" + "\n".join(notes)


def format_sweep_timings(per_seed: Mapping[int, Mapping[str, Mapping[str, object]]], book_seed: int) -> str:
    """A Markdown table of a seed sweep: one row per notebook, one column per seed, then the total.

    ``per_seed`` maps each seed to its tree's records of one profile (notebook -> record);
    ``book_seed`` is the seed of the book's figures, whose column comes first.
    """
    seeds = [book_seed, *sorted(s for s in per_seed if s != book_seed)]
    names = sorted({name for records in per_seed.values() for name in records})
    head = [f"seed {s} (the book's)" if s == book_seed else f"seed {s}" for s in seeds]

    def seconds(seed: int, name: str) -> float | None:
        """The notebook's time at the seed (None: not run there)."""
        rec = per_seed.get(seed, {}).get(name)
        return None if rec is None else float(rec["seconds"])

    rows = []
    for name in names:
        times = [seconds(s, name) for s in seeds]
        cells = ["not run" if t is None else notebooks.format_seconds(t) for t in times]
        rows.append([name, *cells, notebooks.format_seconds(sum(t or 0.0 for t in times))])
    totals = [sum(seconds(s, n) or 0.0 for n in names) for s in seeds]
    rows.append(["sum of the notebooks", *(notebooks.format_seconds(t) for t in [*totals, sum(totals)])])
    return markdown_table(["notebook", *head, "all seeds"], rows)


def _sweep_section(tree: OutputTree, profile: str) -> str:
    """The seed sweep's cost in the tree ``tree`` (empty when no sweep ran into it)."""
    trees = tree.seed_trees()
    if not trees:
        return ""
    record = load_tree_record(tree.root)
    book_seed = record.seeds[0] if record is not None and record.seeds else 0
    per_seed = {book_seed: load_timings(tree).get(profile, {})}
    per_seed.update({seed: load_timings(seed_tree).get(profile, {}) for seed, seed_tree in trees.items()})
    return (
        f"\n\n### The seed sweep (`{profile}`)\n\n"
        "Every chapter runs at the book's seed (its figures) and at further seeds, whose checks the "
        "verdicts count (in `seeds/`); what each run took, recorded as above, and the sweep's cost "
        f"in notebook time:\n\n{format_sweep_timings(per_seed, book_seed)}"
    )


def render_timings_section(tree: OutputTree) -> str:
    """The section: each notebook's last reproduction time in ``tree``, per profile, and per seed."""
    timings = load_timings(tree)
    profiles = _profiles(timings)
    return (
        f"## {TIMINGS_TITLE}\n\n"
        f"The wall time of each notebook's last execution into this output tree (`{tree.root.name}/`), "
        "by profile, as `ntpnb reproduce` recorded it in `timings.json` (cached notebooks are not "
        "executed and keep their earlier time). With `--jobs N` the notebooks ran N at a time on a "
        "shared machine, so each took longer than alone.\n\n"
        f"{format_timings(timings)}{_sweep_section(tree, profiles[0]) if profiles else ''}\n"
    )


def render_benchmarks_page(tree: OutputTree, own: bool = True) -> str:
    """The page: the last run's ``benchmarks/benchmarks.md`` (or :func:`not_run_text`), then the times."""
    results = tree.benchmarks / "benchmarks.md"
    page = results.read_text(encoding="utf-8") if results.is_file() else not_run_text(tree, own)
    return page.rstrip("\n") + "\n\n" + render_timings_section(tree)


def write_benchmarks_page(tree: OutputTree, own: bool = True) -> Path:
    """Write the page to ``<tree.root>/benchmarks.md`` and return its path."""
    return atomic_write_text(tree.root / "benchmarks.md", render_benchmarks_page(tree, own))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.page TREE [--own]``: write the page of the output tree TREE, print its path."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.page", description=main.__doc__)
    parser.add_argument("tree", type=Path, help="the output tree (it must exist)")
    parser.add_argument(
        "--own", action="store_true", help="TREE is the book's own: its commands need no folder"
    )
    args = parser.parse_args(argv)
    if not args.tree.is_dir():
        parser.error(f"no output tree {args.tree}")
    print(write_benchmarks_page(OutputTree(args.tree.resolve()), own=args.own))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
