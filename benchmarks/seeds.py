"""Every chapter at seeds no one has tuned on: how many complete, and why the others stop.

``python -m benchmarks.seeds`` runs every chapter at the paper profile at :data:`SEED_COUNT` seeds
from :data:`FIRST_SEED` (100-119: seeds the chapters were never developed or checked at), the way
``ntpnb reproduce -p seed=100 --seeds 20`` does, into a temporary output tree (every notebook
executed), and prints, per chapter, how many runs completed (ran to their end), how many of those
passed every check, and each failure's one-line reason. ``--tree DIR`` summarizes an earlier run's
output tree instead, without executing anything (e.g. a run of another commit, for a before/after).
``python -m benchmarks --any-seed`` adds the same table to the benchmarks page.

A benchmark, not a test: it takes 20-40 minutes on two shared cores, and a chapter that stops at
a seed is a finding to fix, not a flaky test. The table is written to ``--out``
(``outputs/benchmarks/any_seed.md`` and ``any_seed.json``).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from ntpnb.chapter import markdown_table

#: The first seed of the run: far from the seeds 0-4 the book and its checks were developed at.
FIRST_SEED = 100
#: How many seeds each chapter runs at.
SEED_COUNT = 20
#: The profile: the papers' settings, where the chapters' instances are largest.
PROFILE = "paper"

ROOT = Path(__file__).resolve().parent.parent
#: The heading of the table (here and on the benchmarks page).
TITLE = "Every chapter at seeds no one tuned on"


@dataclass(frozen=True)
class SeedOutcome:
    """One chapter at one seed: completed (ran to its end), every check passed, why it stopped."""

    chapter: str
    seed: int
    completed: bool
    ok: bool
    reason: str = ""  # the error of a run that stopped, or the checks that failed (one line)


def _one_line(text: str, most: int = 240) -> str:
    """``text`` on one line, its whitespace collapsed, cut to ``most`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= most else line[: most - 3] + "..."


def outcomes_of_tree(tree: Path) -> list[SeedOutcome]:
    """The outcome of every chapter at every seed of an output tree of ``ntpnb reproduce``.

    A chapter completed at a seed when the tree of that seed holds its claims record, and stopped
    when it holds its failure record (``failed/<chapter>.json``, whose ``error`` is the reason).
    """
    from ntpnb.chapter import output_tree
    from ntpnb.records import load_chapter_run

    outputs = output_tree(tree)
    run = json.loads((outputs.root / "run.json").read_text(encoding="utf-8"))
    seeds = [int(s) for s in run.get("seeds", [])] or [int(run.get("overrides", {}).get("seed", 0))]
    trees = {seeds[0]: outputs, **outputs.seed_trees()}
    found = []
    for seed in seeds:
        where = trees.get(seed)
        for chapter in run["notebooks"]:
            claims = None if where is None else where.claims / f"{chapter}.json"
            failed = None if where is None else where.failed / f"{chapter}.json"
            if failed is not None and failed.is_file():
                error = json.loads(failed.read_text(encoding="utf-8")).get("error", "no error recorded")
                found.append(SeedOutcome(chapter, seed, False, False, _one_line(error)))
            elif claims is not None and claims.is_file():
                # the checks that fail the run (FAIL), not those one seed cannot decide alone
                failing = [c.what for c in load_chapter_run(claims).failed]
                reason = f"checks failed: {'; '.join(failing)}" if failing else ""
                found.append(SeedOutcome(chapter, seed, True, not failing, _one_line(reason)))
            else:
                found.append(SeedOutcome(chapter, seed, False, False, "not run (no record in the tree)"))
    return found


def verdicts_of_tree(tree: Path) -> dict[str, tuple[str, str]]:
    """Each claim's verdict with its kind over the seeds of an output tree, as its report decides it.

    ``(verdict (kind), why)``: the verdict as :attr:`~ntpnb.evidence._verdicts.Verdict.named` says it.

    The seeds are pooled as the book pools its own (:func:`~ntpnb.evidence._verdicts.sweep_verdicts`),
    so a verdict here is the one the report would give had the book run at these seeds.
    """
    from ntpnb.book import read_tree
    from ntpnb.chapter import output_tree

    return {cid: (v.named, v.why) for cid, v in read_tree(output_tree(tree)).results.items()}


def book_verdicts(path: Path) -> dict[str, str]:
    """The verdicts with their kinds of the book's run (its ``verdicts.json``), or none where it has not run.

    A file that is not a list of claims with an id and a verdict is named, not trusted; a claim
    without a kind (a book of an earlier version) is its verdict alone.
    """
    from ntpnb.evidence._vocabulary import verdict_words

    if not path.is_file():
        return {}
    try:
        claims = json.loads(path.read_text(encoding="utf-8"))["claims"]
        return {str(c["id"]): verdict_words(str(c["verdict"]), str(c.get("kind", ""))) for c in claims}
    except (ValueError, KeyError, TypeError) as exc:
        what = "the book's verdicts (a list of claims with id and verdict)"
        raise SystemExit(f"{path} is not {what}: {exc}") from None


def run_seeds(
    first: int, count: int, jobs: int, names: Sequence[str] = ()
) -> tuple[list[SeedOutcome], float, dict[str, tuple[str, str]]]:
    """Every chapter (or ``names``) at the paper profile at ``count`` seeds from ``first``.

    Into a temporary output tree, every notebook executed (``force``), removed afterwards. Returns
    the outcomes, the wall time and each claim's verdict pooled over the seeds
    (:func:`verdicts_of_tree`).
    """
    from ntpnb.runner import reproduce

    with tempfile.TemporaryDirectory(prefix="ntpnb-seeds-") as tmp:
        start = time.perf_counter()
        reproduce(
            ROOT,
            names,
            profile=PROFILE,
            output_dir=Path(tmp),
            overrides={"seed": str(first)},
            jobs=jobs,
            force=True,
            seeds=count,
            log=print,
        )
        wall = time.perf_counter() - start
        return outcomes_of_tree(Path(tmp)), wall, verdicts_of_tree(Path(tmp))


def seed_span(outcomes: Sequence[SeedOutcome]) -> str:
    """The seeds of ``outcomes`` as ``"100-119"`` (first to last), or ``"none"``."""
    seeds = sorted({o.seed for o in outcomes})
    return f"{seeds[0]}-{seeds[-1]}" if seeds else "none"


def _outcome_row(chapter: str, mine: Sequence[SeedOutcome]) -> list[str]:
    """One chapter's row of :func:`format_outcomes`: its runs, how many completed and passed, its stops."""
    stopped = ", ".join(str(o.seed) for o in mine if not o.completed) or "none"
    done, ok = sum(o.completed for o in mine), sum(o.ok for o in mine)
    return [chapter, str(len(mine)), f"{done} of {len(mine)}", f"{ok} of {len(mine)}", stopped]


def format_outcomes(outcomes: Sequence[SeedOutcome], title: str = "") -> str:
    """The table: chapter | seeds | completed | every check passed | stopped at; then each reason."""
    head = ["chapter", f"seeds {seed_span(outcomes)}", "completed", "every check passed", "stopped at"]
    chapters = list(dict.fromkeys(o.chapter for o in outcomes))
    rows = [_outcome_row(chapter, [o for o in outcomes if o.chapter == chapter]) for chapter in chapters]
    total = len(outcomes)
    done, ok = sum(o.completed for o in outcomes), sum(o.ok for o in outcomes)
    rows.append(["all", str(total), f"{done} of {total}", f"{ok} of {total}", ""])
    lines = [*([title] if title else []), markdown_table(head, rows)]
    stops = [f"- {o.chapter} at seed {o.seed}: {o.reason}" for o in outcomes if not o.completed]
    lines += ["", "Why each run stopped:", "", *(stops or ["- none stopped"])]
    failed = [f"- {o.chapter} at seed {o.seed}: {o.reason}" for o in outcomes if o.completed and not o.ok]
    if failed:
        head = "Checks that failed at one seed alone (the verdicts pool the seeds; the run completed):"
        lines += ["", head, "", *failed]
    return "\n".join(lines) + "\n"


def format_verdicts(verdicts: Mapping[str, tuple[str, str]], book: Mapping[str, str], span: str) -> str:
    """Each claim's verdict pooled over the seeds ``span``, beside the book's (where it has run)."""
    head = ["claim", f"seeds {span}", *(["the book's run"] if book else []), "why"]
    rows = [
        [cid, verdict, *([book.get(cid, "not run")] if book else []), why]
        for cid, (verdict, why) in verdicts.items()
    ]
    lines = [
        f"Verdicts pooled over seeds {span}, as the report decides them"
        + (", beside the book's run (outputs/verdicts.json):" if book else ":"),
        "",
        markdown_table(head, rows),
    ]
    if book:
        same = sum(book.get(cid) == verdict for cid, (verdict, _) in verdicts.items())
        lines += ["", f"The same verdict and kind for {same} of {len(verdicts)} claims."]
    return "\n".join(lines) + "\n"


def write_outcomes(
    outcomes: Sequence[SeedOutcome], out: Path, extra: dict | None = None, verdicts: str = ""
) -> Path:
    """Write the table (``any_seed.md``, then ``verdicts``) and the outcomes (``any_seed.json``)."""
    from ntpnb.records import atomic_write_text

    out.mkdir(parents=True, exist_ok=True)
    page = out / "any_seed.md"
    atomic_write_text(
        page, f"# {TITLE}\n\n" + format_outcomes(outcomes) + (f"\n{verdicts}" if verdicts else "")
    )
    payload = {**(extra or {}), "outcomes": [asdict(o) for o in outcomes]}
    atomic_write_text(out / "any_seed.json", json.dumps(payload, indent=1) + "\n")
    return page


def _parser() -> argparse.ArgumentParser:
    """The command line of ``python -m benchmarks.seeds``."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.seeds", description=__doc__)
    parser.add_argument("names", nargs="*", help="chapters to run (default: all)")
    parser.add_argument("--first", type=int, default=FIRST_SEED, help="first seed (default: %(default)s)")
    parser.add_argument(
        "--count", type=int, default=SEED_COUNT, help="seeds per chapter (default: %(default)s)"
    )
    parser.add_argument("--jobs", type=int, default=1, help="notebooks run at once (default: %(default)s)")
    parser.add_argument("--tree", type=Path, help="summarize this output tree of an earlier run instead")
    parser.add_argument(
        "--out", type=Path, default=ROOT / "outputs" / "benchmarks", help="folder for any_seed.md and .json"
    )
    parser.add_argument(
        "--book",
        type=Path,
        default=ROOT / "outputs",
        help="the book's output tree, whose verdicts are shown beside (default: %(default)s)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run (or, with ``--tree``, read) the seeds, print the table, write it under ``--out``."""
    args = _parser().parse_args(argv)
    if args.tree is not None:
        outcomes, extra = outcomes_of_tree(args.tree), {"tree": str(args.tree)}
        verdicts = verdicts_of_tree(args.tree)
    else:
        from ntpnb.errors import RunInterruptedError

        try:
            outcomes, wall, verdicts = run_seeds(args.first, args.count, args.jobs, args.names)
        except RunInterruptedError as exc:  # Ctrl-C: the runner stopped its kernels
            print(f"stopped: {exc}")
            return 130
        extra = {"first": args.first, "count": args.count, "jobs": args.jobs, "wall_seconds": wall}
    span = seed_span(outcomes)
    book = book_verdicts(args.book / "verdicts.json")
    pooled = format_verdicts(verdicts, book, span)
    extra |= {"verdicts": {cid: {"verdict": v, "why": why} for cid, (v, why) in verdicts.items()}}
    print(format_outcomes(outcomes))
    print(pooled)
    print(f"Wrote {write_outcomes(outcomes, args.out, extra, pooled)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
