"""The book's benchmarks page: made at build time from the last ``python -m benchmarks`` run.

``python -m benchmarks`` writes ``outputs/benchmarks/benchmarks.md`` (every table) and
``benchmarks.json`` (the measurements). ``ntpnb book`` runs ``python -m benchmarks.page TREE``
(:func:`main`) in the project before building, which copies that page to ``outputs/benchmarks.md``
(listed in ``_toc.yml``), or, when none was run into this tree, writes :func:`not_run_text`: the
book never shows a number no run produced, and nothing generated is committed. The notebooks'
reproduction times follow (:func:`render_timings_section`).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path

from ntpnb.chapter import (
    PROFILE_NAMES,
    OutputLayout,
    Timings,
    atomic_write_text,
    load_run_record,
    load_timings,
    markdown_table,
)

#: The command that measures the benchmarks (same as ``python -m benchmarks`` in the project root).
BENCHMARKS_COMMAND = "ntpnb benchmarks"


def not_run_text(layout: OutputLayout, own: bool = True) -> str:
    """The page's beginning when no benchmark has been run into ``layout``: what it would show, and how.

    ``own``: ``layout`` is the book's tree, where the commands need no folder.
    """
    out = "" if own else f" --out {layout.benchmarks}"
    book = "ntpnb book" if own else f"ntpnb book --run {layout.root}"
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

    def cell(rec: Mapping[str, object] | None) -> str:
        if rec is None:
            return "not run"
        return f"{float(rec['seconds']):.1f} s" + ("" if rec.get("ok") else " (FAILED)")

    names = sorted({name for p in profiles for name in timings[p]})
    rows = [[name, *(cell(timings[p].get(name)) for p in profiles)] for name in names]
    totals = [sum(float(r["seconds"]) for r in timings[p].values()) for p in profiles]
    rows.append(["sum of the notebooks", *(f"{t:.1f} s" for t in totals)])
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
        rec = per_seed.get(seed, {}).get(name)
        return None if rec is None else float(rec["seconds"])

    rows = []
    for name in names:
        times = [seconds(s, name) for s in seeds]
        cells = ["not run" if t is None else f"{t:.1f} s" for t in times]
        rows.append([name, *cells, f"{sum(t or 0.0 for t in times):.1f} s"])
    totals = [sum(seconds(s, n) or 0.0 for n in names) for s in seeds]
    rows.append(["sum of the notebooks", *(f"{t:.1f} s" for t in [*totals, sum(totals)])])
    return markdown_table(["notebook", *head, "all seeds"], rows)


def _sweep_section(layout: OutputLayout, profile: str) -> str:
    """The seed sweep's cost in the tree ``layout`` (empty when no sweep ran into it)."""
    trees = layout.seed_layouts()
    if not trees:
        return ""
    record = load_run_record(layout.root)
    book_seed = record.seeds[0] if record is not None and record.seeds else 0
    per_seed = {book_seed: load_timings(layout).get(profile, {})}
    per_seed.update({seed: load_timings(tree).get(profile, {}) for seed, tree in trees.items()})
    return (
        f"\n\n### The seed sweep (`{profile}`)\n\n"
        "Every chapter runs at the book's seed (its figures) and at further seeds, whose checks the "
        "verdicts count (in `seeds/`); what each run took, recorded as above, and the sweep's cost "
        f"in notebook time:\n\n{format_sweep_timings(per_seed, book_seed)}"
    )


def render_timings_section(layout: OutputLayout) -> str:
    """The section: each notebook's last reproduction time in ``layout``, per profile, and per seed."""
    timings = load_timings(layout)
    profiles = _profiles(timings)
    return (
        f"## {TIMINGS_TITLE}\n\n"
        f"The wall time of each notebook's last execution into this output tree (`{layout.root.name}/`), "
        "by profile, as `ntpnb reproduce` recorded it in `timings.json` (cached notebooks are not "
        "executed and keep their earlier time). With `--jobs N` the notebooks ran N at a time on a "
        "shared machine, so each took longer than alone.\n\n"
        f"{format_timings(timings)}{_sweep_section(layout, profiles[0]) if profiles else ''}\n"
    )


def render_benchmarks_page(layout: OutputLayout, own: bool = True) -> str:
    """The page: the last run's ``benchmarks/benchmarks.md`` (or :func:`not_run_text`), then the times."""
    results = layout.benchmarks / "benchmarks.md"
    page = results.read_text(encoding="utf-8") if results.is_file() else not_run_text(layout, own)
    return page.rstrip("\n") + "\n\n" + render_timings_section(layout)


def write_benchmarks_page(layout: OutputLayout, own: bool = True) -> Path:
    """Write the page to ``<layout.root>/benchmarks.md`` and return its path."""
    return atomic_write_text(layout.root / "benchmarks.md", render_benchmarks_page(layout, own))


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
    print(write_benchmarks_page(OutputLayout(args.tree.resolve()), own=args.own))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
