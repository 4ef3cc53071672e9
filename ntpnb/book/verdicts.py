"""What reproduced: one verdict per claim, measured across the seeds of a sweep.

A chapter runs at the book's seed and, in a sweep, at further seeds, each into its own tree
(:mod:`ntpnb.runner.run`). :func:`load_sweeps` gathers each chapter's records that may be pooled
with the book's (complete; same notebook, profile, parameters and ``ntpnb`` sources but the
seed; others are set aside with the reason). The same check at every seed is a :class:`Series`;
a statistical check (with a sample) is decided on its samples pooled over the seeds. The kinds
of check and the qualifications are those of :mod:`ntpnb.chapter.claims`. :func:`claim_verdict`
applies the rule the report states, :data:`VERDICT_RULE`, tried in this order: check failed, does
not reproduce, inconclusive, not tested, holds at some seeds, reproduced with a qualification,
reproduced. A claim *holds at a seed* when every evidence check decided seed by seed passes there.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ..chapter.claims import KINDS, ChapterRecord, Check, load_chapter_record
from ..chapter.layout import OutputLayout
from ..chapter.provenance import load_manifest
from ..chapter.statistical import Sample
from ..errors import PathError

REPRODUCED = "reproduced"
QUALIFIED = "reproduced with a qualification"
PARTIAL = "holds at some seeds"
NOT_REPRODUCED = "does not reproduce"
INCONCLUSIVE = "inconclusive"
NOT_TESTED = "not tested"
CHECK_FAILED = "check failed"
#: Every verdict, in the order a summary lists them.
VERDICTS: tuple[str, ...] = (
    REPRODUCED,
    QUALIFIED,
    PARTIAL,
    NOT_REPRODUCED,
    INCONCLUSIVE,
    NOT_TESTED,
    CHECK_FAILED,
)
#: The verdict rule, as the report states it.
VERDICT_RULE = (
    "A claim's verdict follows from its checks at every seed of the sweep: *reproduced* when every",
    "check that a false claim would fail passes at every seed (a statistical check also on its",
    "samples pooled over the seeds); *reproduced with a qualification* when the chapter states a",
    "limit of that evidence (the qualification is quoted); *holds at some seeds* when the evidence",
    "holds at some seeds only (the seeds that failed are named); *does not reproduce* when a check",
    "records a finding, the claim measured not to hold, and the finding holds at every seed or",
    "pooled over them (our number and the paper's are quoted; the check pins our number, so a",
    "change is seen); *inconclusive* when a finding holds at some seeds only; *not tested* when a",
    "claim has only sanity checks of the code, or none; *check failed* when a sanity check failed",
    "at some seed, the evidence holds at no seed, or a statistical check fails pooled. A",
    "*measurement* (a statement of ours beyond the paper, such as how a threshold the paper leaves",
    "open moves with the size) is decided on its samples pooled over the seeds; when established it",
    "qualifies the claim, and otherwise it is listed as not established.",
)

#: Parameters that differ between the seeds of one sweep (everything else must be equal).
SWEPT_PARAMETERS: frozenset[str] = frozenset({"seed", "output_dir"})


# -- the records of a sweep ---------------------------------------------------------------------


@dataclass(frozen=True)
class Sweep:
    """The records of one chapter at every seed that counts, the book's first."""

    #: The record at the book's seed.
    book: ChapterRecord
    #: Seed -> record, the book's included (a record without a seed is under :attr:`book_seed`).
    records: Mapping[int, ChapterRecord]
    #: Seed -> why that seed's record is not counted.
    excluded: Mapping[int, str] = field(default_factory=dict)

    @property
    def book_seed(self) -> int:
        """The book's seed (0 for a record that does not say)."""
        return self.book.seed if self.book.seed is not None else 0

    @property
    def seeds(self) -> tuple[int, ...]:
        """Every seed that counts, the book's first."""
        return (self.book_seed, *sorted(s for s in self.records if s != self.book_seed))


def _seed_record(
    layout: OutputLayout, seed: int, tree: OutputLayout, book: ChapterRecord
) -> ChapterRecord | str | None:
    """The record of ``book``'s chapter in the seed tree ``tree``, or why it is not counted (None: none)."""
    failure = tree.failed / f"{book.notebook}.json"
    if failure.exists():  # its last run stopped before its end (a record in place is older)
        return f"its last run failed ({_failure_error(failure)})"
    path = tree.claims / f"{book.notebook}.json"
    if not path.exists():
        return None
    try:
        record = load_chapter_record(path)
    except PathError as exc:
        return str(exc)
    if record.notebook != book.notebook:
        return f"the record is of {record.notebook}"
    if not record.complete:
        return "the run did not reach its end"
    if record.seed != seed:
        return f"the record says seed {record.seed}"
    if seed == book.seed:
        return "it repeats the book's seed"
    if record.profile != book.profile:
        return f"it ran at the {record.profile} profile, the book's seed at {book.profile}"
    ours, theirs = book.parameters, record.parameters
    if ours is None or theirs is None:
        return "a record does not say which parameters it ran with"
    changed = sorted(
        k for k in (ours.keys() | theirs.keys()) - SWEPT_PARAMETERS if ours.get(k) != theirs.get(k)
    )
    if changed:
        return f"it ran with other parameters ({', '.join(changed)})"
    return _other_package(layout, tree, book.notebook) or record


def load_sweeps(layout: OutputLayout, book_records: Sequence[ChapterRecord]) -> list[Sweep]:
    """Every chapter of ``book_records`` with the records of the sweep's seeds under ``layout``."""
    trees = layout.seed_layouts()
    sweeps = []
    for book in book_records:
        found = {seed: _seed_record(layout, seed, tree, book) for seed, tree in trees.items()}
        records = {seed: r for seed, r in found.items() if isinstance(r, ChapterRecord)}
        excluded = {seed: r for seed, r in found.items() if isinstance(r, str)}
        sweeps.append(Sweep(book, {book.seed if book.seed is not None else 0: book, **records}, excluded))
    return sweeps


def _other_package(book: OutputLayout, tree: OutputLayout, notebook: str) -> str | None:
    """Why a seed's run of ``notebook`` used other ``ntpnb`` sources than the book's (by the manifests)."""
    try:
        ours = load_manifest(book.notebooks / f"{notebook}.ipynb").package
        theirs = load_manifest(tree.notebooks / f"{notebook}.ipynb").package
    except PathError:
        return None  # no manifests to compare (a hand-made tree): the checks above decide
    if ours and theirs and ours != theirs:
        return "it ran with other ntpnb sources than the book's seed (rerun it: ntpnb reproduce --seeds N)"
    return None


def _failure_error(path: Path) -> str:
    """The one-line error of a failure record the runner kept (see :mod:`ntpnb.runner.staging`)."""
    try:
        error = json.loads(path.read_text(encoding="utf-8")).get("error")
    except (OSError, ValueError, AttributeError):
        return "its failure record does not read"
    return str(error).splitlines()[0] if error else "no error recorded"


# -- one check at every seed --------------------------------------------------------------------


@dataclass(frozen=True)
class Series:
    """One check of a chapter, made at every seed of its sweep."""

    #: Seed -> the check made there, in the sweep's order (the book's seed first).
    checks: Mapping[int, Check]

    @property
    def first(self) -> Check:
        """The check at the book's seed (or at the first seed that made it)."""
        return next(iter(self.checks.values()))

    @property
    def seeds(self) -> tuple[int, ...]:
        """The seeds that made it."""
        return tuple(self.checks)

    @property
    def failed_seeds(self) -> tuple[int, ...]:
        """The seeds where it failed."""
        return tuple(s for s, c in self.checks.items() if not c.passed)

    @property
    def statistical(self) -> bool:
        """Whether it is a statistical check (decided pooled)."""
        return self.first.pooled

    @cached_property
    def pooled_sample(self) -> Sample | None:
        """The samples of every seed, pooled once (None for a check that is not statistical)."""
        samples = [c.sample for c in self.checks.values() if c.sample is not None]
        return Sample.pooled(samples) if samples else None

    def pooled_passed(self) -> bool | None:
        """Whether it holds on the pooled samples (None for a check that is not statistical)."""
        sample, c = self.pooled_sample, self.first
        if sample is None:
            return None
        return sample.decide(c.relation, float(c.target), c.tol, c.kind)  # type: ignore[arg-type]

    def pooled_measured(self) -> str:
        """The pooled measurement, as printed, to 3 digits (empty for a check that is not statistical)."""
        sample = self.pooled_sample
        return sample.describe(float(self.first.target), 3) if sample is not None else ""  # type: ignore[arg-type]

    @property
    def established(self) -> bool:
        """Whether it holds: pooled for a statistical check, else at every seed."""
        pooled = self.pooled_passed()
        return pooled if pooled is not None else not self.failed_seeds

    def spread(self) -> tuple[str, str] | None:
        """The values as printed at the smallest and largest value over the seeds; None if alike."""
        checks = [c for c in self.checks.values() if isinstance(c.value, (int, float))]
        if len(checks) < 2:
            return None
        low = min(checks, key=lambda c: c.value)
        high = max(checks, key=lambda c: c.value)
        return None if low.measured == high.measured else (low.measured, high.measured)


def series_of(sweep: Sweep) -> list[Series]:
    """The checks of ``sweep``'s chapter, each with its results at every seed, in the chapter's order.

    Checks are matched by claim, kind and what they measure (and their order, where a chapter
    makes one check twice).
    """
    by_key: dict[tuple[str, str, str, int], dict[int, Check]] = {}
    for seed in sweep.seeds:
        seen: Counter[tuple[str, str, str]] = Counter()
        for check in sweep.records[seed].checks:
            key = (check.claim, check.kind, check.what)
            by_key.setdefault((*key, seen[key]), {})[seed] = check
            seen[key] += 1
    return [Series(checks) for checks in by_key.values()]


# -- the verdict of a claim ---------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """The verdict of one claim and what it rests on."""

    #: The claim id.
    claim: str
    #: One of :data:`VERDICTS`.
    verdict: str
    #: How many checks of each kind the claim has (at one seed): evidence (``claim``), findings,
    #: sanity checks and measurements.
    evidence: int = 0
    findings: int = 0
    sanity: int = 0
    measurements: int = 0
    #: How many checks failed, over every seed (statistical ones: pooled).
    failed: int = 0
    #: The qualifications, the findings (``"what: measured X; paper: Y"``, then any
    #: qualifications), or what failed and where, as the verdict calls for.
    reasons: tuple[str, ...] = ()
    #: The seeds its evidence was checked at (without evidence: those it was checked at at all).
    seeds: tuple[int, ...] = ()
    #: The seeds where every evidence check of the claim passed.
    holding: tuple[int, ...] = ()

    @property
    def across_seeds(self) -> str:
        """``"holds at 4 of 5 seeds (failed at 3)"``; empty when the claim has no evidence."""
        if not self.evidence or not self.seeds:
            return ""
        text = f"holds at {len(self.holding)} of {len(self.seeds)} seed{'s' * (len(self.seeds) != 1)}"
        failed = [s for s in self.seeds if s not in self.holding]
        return text + (f" (failed at {format_seeds(failed)})" if failed else "")


def format_seeds(seeds: Iterable[object]) -> str:
    """``"1, 3 and 4"``: seeds, or any items, in words."""
    names = [str(s) for s in seeds]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _finding_reason(series: Series) -> str:
    c = series.first
    measured = series.pooled_measured() or c.measured
    pooled = f" pooled over {len(series.seeds)} seeds" if series.statistical else ""
    text = f"{c.what}: measured {measured}{pooled}" + (f"; paper: {c.paper}" if c.paper else "")
    if not series.statistical and len(series.seeds) > 1:
        text += f" (at {len(series.seeds)} seeds)"
    return text


def _failure_reason(series: Series) -> str:
    c = series.first
    if series.statistical and series.pooled_passed() is False:
        return f"{c.label} {c.what}: fails pooled over {len(series.seeds)} seeds ({series.pooled_measured()})"
    failed = series.failed_seeds
    measured = format_seeds(series.checks[seed].measured for seed in failed)
    return (
        f"{c.label} {c.what}: failed at seed {format_seeds(failed)} "
        f"(measured {measured}; required {c.required})"
    )


def _measurement_reason(series: Series) -> str:
    c = series.first
    outcome = "established" if series.established else "not established"
    return f"{c.what}: {outcome} pooled over {len(series.seeds)} seeds ({series.pooled_measured()})"


def claim_verdict(claim: str, series: Sequence[Series], qualifications: Sequence[str] = ()) -> Verdict:
    """The verdict of ``claim`` from its checks at every seed and its qualifications (the module's rule)."""
    # one list per kind of the registry (a kind added there fails this unpacking, not silently)
    evidence, sanity, findings, measurements = ([s for s in series if s.first.kind == k] for k in KINDS)
    checks = [s for s in series if s.first.kind != "measurement"]
    seeds = tuple(dict.fromkeys(seed for s in (evidence or checks or series) for seed in s.seeds))
    per_seed = [s for s in evidence if not s.statistical]  # statistical ones are decided pooled
    holding = tuple(
        seed for seed in seeds if all(s.checks[seed].passed for s in per_seed if seed in s.checks)
    )
    failed = sum((s.pooled_passed() is False) if s.statistical else len(s.failed_seeds) for s in checks)
    counts = {
        "evidence": len(evidence),
        "findings": len(findings),
        "sanity": len(sanity),
        "measurements": len(measurements),
        "failed": failed,
        "seeds": seeds,
        "holding": holding if evidence else (),
    }
    established = tuple(_measurement_reason(s) for s in measurements if s.established)
    unestablished = tuple(_measurement_reason(s) for s in measurements if not s.established)
    quals = tuple(dict.fromkeys(qualifications)) + established
    broken = [s for s in sanity if s.failed_seeds]
    broken += [s for s in evidence if s.statistical and s.pooled_passed() is False]
    if broken or (evidence and not holding):
        reasons = tuple(_failure_reason(s) for s in broken)
        if evidence and not holding:
            reasons += (f"the evidence holds at none of the {len(seeds)} seeds",)
        return Verdict(claim, CHECK_FAILED, reasons=reasons, **counts)
    if findings:
        reasons = tuple(_finding_reason(s) for s in findings if s.established)
        unsettled = [s for s in findings if not s.established]
        if unsettled:
            reasons = tuple(
                f"{s.first.what}: holds at {len(s.seeds) - len(s.failed_seeds)} of {len(s.seeds)} seeds"
                + (f", not pooled ({s.pooled_measured()})" if s.statistical else "")
                for s in unsettled
            )
            return Verdict(claim, INCONCLUSIVE, reasons=reasons + quals + unestablished, **counts)
        if evidence and len(holding) < len(seeds):
            reasons += (f"its evidence holds at {len(holding)} of {len(seeds)} seeds",)
        return Verdict(claim, NOT_REPRODUCED, reasons=reasons + quals + unestablished, **counts)
    if not evidence:
        return Verdict(claim, NOT_TESTED, reasons=established + unestablished, **counts)
    if len(holding) < len(seeds):
        reasons = tuple(_failure_reason(s) for s in evidence if s.failed_seeds)
        return Verdict(claim, PARTIAL, reasons=reasons + quals + unestablished, **counts)
    if quals:
        return Verdict(claim, QUALIFIED, reasons=quals + unestablished, **counts)
    return Verdict(claim, REPRODUCED, reasons=unestablished, **counts)


def sweep_verdicts(claim_ids: Iterable[str], sweeps: Sequence[Sweep]) -> dict[str, Verdict]:
    """The verdict of every id in ``claim_ids`` (in that order) over every chapter's sweep.

    Qualifications are those stated at the book's seed, and those stated only at other seeds
    (with the seeds). Ids without checks are ``not tested``.
    """
    by_claim: dict[str, list[Series]] = {}
    quals: dict[str, list[str]] = {}
    for sweep in sweeps:
        for s in series_of(sweep):
            by_claim.setdefault(s.first.claim, []).append(s)
        for c, t in sweep.book.qualifications:
            quals.setdefault(c, []).append(t)
        at_book = {c for c, _ in sweep.book.qualifications}
        others: dict[tuple[str, str], list[int]] = {}
        for seed in sweep.seeds[1:]:
            for c, t in sweep.records[seed].qualifications:
                if c not in at_book:
                    others.setdefault((c, t), []).append(seed)
        for (c, t), seeds in others.items():
            quals.setdefault(c, []).append(f"{t} (at seed {format_seeds(seeds)})")
    return {cid: claim_verdict(cid, by_claim.get(cid, []), quals.get(cid, [])) for cid in claim_ids}


def verdict_counts(results: Mapping[str, Verdict]) -> dict[str, int]:
    """How many claims have each verdict (every verdict listed, zeros included)."""
    counts = Counter(v.verdict for v in results.values())
    return {name: counts.get(name, 0) for name in VERDICTS}


def format_counts(counts: Mapping[str, int], total: int | None = None) -> str:
    """``"20 of 26 claims reproduced, 3 reproduced with a qualification, ..."``.

    Verdicts with no claim are left out, except the first.
    """
    total = sum(counts.values()) if total is None else total
    parts = [f"{counts.get(VERDICTS[0], 0)} of {total} claims {VERDICTS[0]}"]
    parts += [f"{counts[name]} {_agreeing(name, counts[name])}" for name in VERDICTS[1:] if counts.get(name)]
    return ", ".join(parts)


def _agreeing(verdict: str, count: int) -> str:
    """The verdict as a predicate of ``count`` claims: "2 do not reproduce", "1 holds at some seeds"."""
    if count == 1:
        return verdict
    return verdict.replace("does not", "do not").replace("holds at", "hold at")
