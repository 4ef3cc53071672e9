"""What reproduced: one verdict per claim, measured across the seeds of a sweep.

A chapter runs at the book's seed and, in a sweep, at further seeds, each into its own tree
(:mod:`ntpnb.runner.run`). :func:`load_sweeps` gathers each chapter's records that may be pooled
with the book's (complete; same notebook, profile, parameters and ``ntpnb`` sources but the
seed; others are set aside with the reason). The same check at every seed is a :class:`Series`,
decided as its :attr:`~ntpnb.chapter.claims.Check.basis` says: pooled over the seeds (a
statistical or count check), once (a seed-independent check), or at each seed.
:func:`claim_verdict` applies the one rule, :data:`VERDICT_RULE`, which the report states and
every page quotes through :attr:`Verdict.phrase`.
"""

from __future__ import annotations

import json
import string
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from ..chapter.claims import KINDS, ChapterRecord, Check, Qualification, load_chapter_record
from ..chapter.layout import OutputLayout
from ..chapter.outputs import load_manifest
from ..errors import PathError
from ..statistics import Sample

REPRODUCED = "reproduced"
QUALIFIED = "reproduced with a qualification"
PARTIAL = "holds at some seeds"
NOT_REPRODUCED = "does not reproduce"
NOT_ESTABLISHED = "not established"
BY_CONSTRUCTION = "by construction"
NOT_TESTED = "not tested"
CHECK_FAILED = "check failed"
#: Every verdict, in the order a summary lists them.
VERDICTS: tuple[str, ...] = (
    REPRODUCED,
    QUALIFIED,
    PARTIAL,
    NOT_REPRODUCED,
    NOT_ESTABLISHED,
    BY_CONSTRUCTION,
    NOT_TESTED,
    CHECK_FAILED,
)
#: Verdicts that say the claim does not (or not always) hold, or that something is wrong.
NEGATIVE: frozenset[str] = frozenset({PARTIAL, NOT_REPRODUCED, NOT_ESTABLISHED, CHECK_FAILED})

#: The verdict rule, as the report states it (one paragraph per line).
VERDICT_RULE: tuple[str, ...] = (
    "**How a check is decided.** A check of one instance (an exact property, a tolerance on one "
    "run) is decided at each seed, and shows *at k of N seeds*, the seeds that failed and the "
    "spread of its value. A statistical check (a mean over random trials) and a count check (how "
    "often an event happens over trials, a rate with its interval) are decided on their trials "
    "pooled over the seeds, and show *pooled over N seeds (T trials)*, never *k of N*; each states "
    "its test and the error rate at which it fails when the claim is true. A check whose data do "
    "not depend on the seed (a fixed corpus) is decided once and shows *seed-independent*.",
    "**Kinds of check.** *Evidence* would fail were the paper's claim false; a *sanity* check "
    "tests the code or the setting (an identity, a property of our instance, a solver against a "
    "proved result); a *finding* states that a paper's number is missed, and holds only when the "
    "data establish it; a *measurement* is a statement of ours beyond the paper, decided pooled.",
    "**The verdict of a claim.** *reproduced*: every evidence check holds. *reproduced with a "
    "qualification*: it holds, and a stated limit applies (a qualification of the chapter, with its "
    "numbers as ranges over the seeds; an established measurement; or a finding that the paper's "
    "text is missed where the authors' own stored artifact shows our value, with the three numbers "
    "quoted). *holds at some seeds*: an evidence check decided at each seed fails at some seeds "
    "(named). *does not reproduce*: a finding is established (pooled, at each seed, or once), or a "
    "statistical evidence check is contradicted pooled, and the authors' artifact, where one "
    "exists, does not show our value; our number, the paper's and the artifact's are quoted. *not "
    "established*: the claim's only checks are findings the data do not establish. *by "
    "construction*: the claim has sanity checks only. *check failed*: a sanity check failed at some "
    "seed, or the evidence holds at none. *not tested*: no chapter of this run checks it.",
    "**What a chapter prints.** A check decided at each seed prints `[PASS]` or `[FAIL]`, and a "
    "`[FAIL]` at the book's seed fails the run (at the other seeds it is counted here). A statistical "
    "check prints `[PASS]`, or `[OPEN]` where one seed's trials do not bear it out; it never fails "
    "the run. A finding or measurement prints `[FOUND]` where it holds and `[OPEN]` where it does "
    "not, never `[FAIL]`.",
)

#: Parameters that differ between the seeds of one sweep (everything else must be equal).
SWEPT_PARAMETERS: frozenset[str] = frozenset({"seed", "output_dir"})


# -- the records of a sweep ---------------------------------------------------------------------


@dataclass(frozen=True)
class Sweep:
    """The records of one chapter at every seed that counts, the book's first."""

    #: The record at the book's seed.
    book: ChapterRecord
    #: Seed -> record, the book's included (a record without a seed is under seed 0).
    records: Mapping[int, ChapterRecord]
    #: Seed -> why that seed's record is not counted.
    excluded: Mapping[int, str] = field(default_factory=dict)

    @property
    def seeds(self) -> tuple[int, ...]:
        """Every seed that counts, the book's first (0 for a record that does not say)."""
        book = self.book.seed if self.book.seed is not None else 0
        return (book, *sorted(s for s in self.records if s != book))


def _seed_record(
    layout: OutputLayout, seed: int, tree: OutputLayout, book: ChapterRecord
) -> ChapterRecord | str | None:
    """The record of ``book``'s chapter in the seed tree ``tree``, or why it is not counted (None: none)."""
    failure = tree.failed / f"{book.notebook}.json"
    if failure.exists():  # its last run stopped before its end (a record in place is older)
        try:  # the one-line error of the failure record the runner kept (:mod:`ntpnb.chapter.outputs`)
            error = json.loads(failure.read_text(encoding="utf-8")).get("error")
        except (OSError, ValueError, AttributeError):
            return "its last run failed (its failure record does not read)"
        return f"its last run failed ({str(error).splitlines()[0] if error else 'no error recorded'})"
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
    try:  # the ntpnb sources both ran with, by their manifests
        ours = load_manifest(layout.notebooks / f"{book.notebook}.ipynb").package
        theirs = load_manifest(tree.notebooks / f"{book.notebook}.ipynb").package
    except PathError:
        return record  # no manifests to compare (a hand-made tree): the checks above decide
    if ours and theirs and ours != theirs:
        return "it ran with other ntpnb sources than the book's seed (rerun it: ntpnb reproduce --seeds N)"
    return record


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
    def failed_seeds(self) -> tuple[int, ...]:
        """The seeds where it did not hold."""
        return tuple(s for s, c in self.checks.items() if not c.passed)

    @property
    def basis(self) -> str:
        """How it is decided: ``"pooled"``, ``"seed-independent"`` or ``"per seed"``."""
        return self.first.basis

    @property
    def statistical(self) -> bool:
        """Whether it is a statistical or count check (decided pooled)."""
        return self.basis == "pooled"

    @cached_property
    def pooled_sample(self) -> Sample | None:
        """Every seed's samples pooled (a seed-independent check's own, once); None if it has none."""
        samples = [c.sample for c in self.checks.values() if c.sample is not None]
        if not samples:
            return None
        return samples[0] if self.basis == "seed-independent" else Sample.pooled(samples)

    @property
    def differs(self) -> bool:
        """A seed-independent check that measured different values at different seeds (a bug)."""
        return self.basis == "seed-independent" and len({c.measured for c in self.checks.values()}) > 1

    @property
    def established(self) -> bool:
        """Whether it holds: pooled, once (seed-independent) or at every seed, as its basis says."""
        if self.differs:
            return False
        sample, c = self.pooled_sample, self.first
        if sample is None:
            return not self.failed_seeds
        return sample.decide(c.relation, float(c.target), c.tol, c.kind)  # type: ignore[arg-type]

    @property
    def decided(self) -> str:
        """How it was decided, in words.

        ``"pooled over 5 seeds (500 trials)"``, ``"at 4 of 5 seeds (failed at 3)"`` or
        ``"seed-independent (the same at 5 seeds)"``.
        """
        n = len(self.checks)
        if self.statistical:
            sample = self.pooled_sample
            return f"pooled over {_seeds(n)} ({sample.count})"  # type: ignore[union-attr]
        if self.basis == "seed-independent":
            sample = self.pooled_sample
            size = f"{sample.count}, " if sample is not None else ""
            same = f"the same at {_seeds(n)}" if n > 1 and not self.differs else ""
            inner = f"{size}{same}".rstrip(", ")
            return "seed-independent" + (f" ({inner})" if inner else "")
        text = f"at {n - len(self.failed_seeds)} of {_seeds(n)}"
        return text + (f" (failed at {format_seeds(self.failed_seeds)})" if self.failed_seeds else "")

    @property
    def how(self) -> str:
        """:attr:`decided` without the count of trials: for a line that quotes the measurement next."""
        if self.statistical:
            return f"pooled over {_seeds(len(self.checks))}"
        return "seed-independent" if self.basis == "seed-independent" else self.decided

    @property
    def outcome(self) -> str:
        """The decision in words: ``"holds"`` or ``"fails"`` (a finding, a measurement: ``"established"``)."""
        if self.first.kind in ("finding", "measurement"):
            return "established" if self.established else "not established"
        return "holds" if self.established else "fails"

    def artifact_agrees(self) -> bool | None:
        """Whether the authors' stored artifact shows our pooled value (None: no artifact)."""
        artifact, sample = self.first.artifact, self.pooled_sample
        if artifact is None or sample is None:
            return None
        return artifact.consistent_with(sample)

    def artifact_note(self) -> str:
        """``"the authors' stored ...: 0.9886, consistent with ours"`` (empty without an artifact)."""
        agrees = self.artifact_agrees()
        if agrees is None:
            return ""
        a = self.first.artifact
        return f"{a.source}: {a.value:g}, {'consistent' if agrees else 'not consistent'} with ours"  # type: ignore[union-attr]

    def spread(self) -> tuple[str, str] | None:
        """The values as printed at the smallest and largest value over the seeds; None if alike."""
        checks = [c for c in self.checks.values() if isinstance(c.value, (int, float))]
        if len(checks) < 2:
            return None
        low = min(checks, key=lambda c: c.value)
        high = max(checks, key=lambda c: c.value)
        return None if low.measured == high.measured else (low.measured, high.measured)

    def ours(self) -> str:
        """Our value as shown: pooled (to 3 digits) where a sample decides it, else the book seed's."""
        sample = self.pooled_sample
        return sample.describe(float(self.first.target), 3) if sample is not None else self.first.measured  # type: ignore[arg-type]


def _seeds(n: int) -> str:
    return f"{n} seed{'s' * (n != 1)}"


def series_of(sweep: Sweep) -> list[Series]:
    """The checks of ``sweep``'s chapter, each with its results at every seed (matched by :func:`keyed`)."""
    by_key: dict[tuple[str, str, str, int], dict[int, Check]] = {}
    for seed in sweep.seeds:
        for key, check in keyed(sweep.records[seed].checks).items():
            by_key.setdefault(key, {})[seed] = check
    return [Series(checks) for checks in by_key.values()]


def keyed(checks: Iterable[Check]) -> dict[tuple[str, str, str, int], Check]:
    """Checks by claim, kind, what they measure and occurrence (where a chapter makes one check twice)."""
    out: dict[tuple[str, str, str, int], Check] = {}
    seen: Counter[tuple[str, str, str]] = Counter()
    for check in checks:
        key = (check.claim, check.kind, check.what)
        out[(*key, seen[key])] = check
        seen[key] += 1
    return out


# -- qualifications across the seeds ------------------------------------------------------------


def qualification_across(made: Sequence[tuple[int, Qualification]], seeds: Sequence[int]) -> str:
    """One qualification as made at several seeds: each number as its range over them.

    ``made`` holds the seeds where the chapter stated it (with the same words) and what it said
    there; ``seeds`` are all the seeds of the sweep.
    """
    first, fmt = made[0][1], string.Formatter()
    parts, varied = [], False
    for literal, name, spec, conversion in fmt.parse(first.text):
        parts.append(literal)
        if name is None:
            continue
        values = [q.numbers[name] for _, q in made]
        texts = [fmt.format_field(fmt.convert_field(v, conversion), spec or "") for v in values]
        if len(set(texts)) == 1:
            parts.append(texts[0])
        else:
            varied = True
            low, high = (texts[values.index(v)] for v in (min(values), max(values)))
            parts.append(f"{low} to {high}")
    text = "".join(parts)
    at = [seed for seed, _ in made]
    if len(at) < len(seeds):
        return f"{text} (at seed{'s' * (len(at) > 1)} {format_seeds(at)})"
    return f"{text} (lowest to highest over the {len(at)} seeds)" if varied else text


# -- the verdict of a claim ---------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """The verdict of one claim and what it rests on."""

    #: The claim id.
    claim: str
    #: One of :data:`VERDICTS`.
    verdict: str
    #: How the verdict was decided, in words; empty for *not tested*.
    basis: str = ""
    #: How many checks of each kind the claim has (at one seed): ``evidence``, ``findings``,
    #: ``sanity`` and ``measurements``; and ``failed``, how many did not hold where they count (per
    #: seed: each seed; pooled: once).
    counts: Mapping[str, int] = field(default_factory=dict)
    #: The findings or failures that decided the verdict, then the qualifications, then notes
    #: (measurements and findings not established, the authors' artifacts).
    reasons: tuple[str, ...] = ()

    @property
    def phrase(self) -> str:
        """The verdict as every page writes it: ``"reproduced: holds at 5 of 5 seeds"``."""
        return f"{self.verdict}: {self.basis}" if self.basis else self.verdict

    @property
    def negative(self) -> bool:
        """Whether the verdict says the claim does not (or not always) hold (:data:`NEGATIVE`)."""
        return self.verdict in NEGATIVE


def format_seeds(seeds: Iterable[object]) -> str:
    """``"1, 3 and 4"``: seeds, or any items, in words."""
    names = [str(s) for s in seeds]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _finding_basis(series: Series) -> str:
    """How a finding was decided, without "k of N": ``"finding at each of the 5 seeds"``."""
    if series.statistical:
        return f"finding {series.decided}"
    if series.basis == "seed-independent":
        return "seed-independent finding"
    n = len(series.checks)
    return "finding at the one seed" if n == 1 else f"finding at each of the {n} seeds"


def _finding_reason(series: Series) -> str:
    """``"what: ours X (pooled over 5 seeds (500 trials)); the paper: Y; <artifact>"``."""
    c = series.first
    ours = series.ours()
    spread = series.spread() if not series.statistical else None
    if spread:
        ours = f"{spread[0]} to {spread[1]} over the seeds"
    paper = f"; the paper: {c.paper}" if c.paper else ""
    note = series.artifact_note()
    how = series.how if series.statistical else _finding_basis(series).removeprefix("finding ")
    return f"{c.what}: ours {ours} ({how.removesuffix(' finding')}){paper}" + (f"; {note}" if note else "")


def _failure_reason(series: Series) -> str:
    c = series.first
    if series.statistical:
        return f"{c.label} {c.what}: {series.outcome} {series.how} ({series.ours()})"
    if series.differs:
        values = format_seeds(dict.fromkeys(ch.measured for ch in series.checks.values()))
        return f"{c.label} {c.what}: declared seed-independent, but measured {values} at different seeds"
    failed = series.failed_seeds
    measured = format_seeds(series.checks[seed].measured for seed in failed)
    where = f"failed at seed {format_seeds(failed)}"
    return f"{c.label} {c.what}: {where} (measured {measured}; required {c.required})"


def _note(series: Series) -> str:
    """A measurement's or an unestablished finding's line: ``"what: established pooled over ..."``."""
    c = series.first
    return f"{c.kind} {series.outcome}: {c.what} ({series.how}: {series.ours()})"


def claim_verdict(claim: str, series: Sequence[Series], qualifications: Sequence[str] = ()) -> Verdict:
    """The verdict of ``claim`` from its checks at every seed and its qualifications (the rule)."""
    # one list per kind of the registry (a kind added there fails this unpacking, not silently)
    evidence, sanity, findings, measurements = ([s for s in series if s.first.kind == k] for k in KINDS)
    seeds = tuple(dict.fromkeys(seed for s in series for seed in s.checks))
    per_seed = [s for s in evidence if s.basis == "per seed"]
    holding = tuple(
        seed for seed in seeds if all(s.checks[seed].passed for s in per_seed if seed in s.checks)
    )
    failed = sum(
        (not s.established) if s.basis != "per seed" else len(s.failed_seeds) for s in (*evidence, *sanity)
    )
    counts = {
        "evidence": len(evidence),
        "findings": len(findings),
        "sanity": len(sanity),
        "measurements": len(measurements),
        "failed": failed,
    }
    if not series:
        return Verdict(claim, NOT_TESTED, counts=counts)
    notes = tuple(_note(s) for s in measurements if not s.established)
    notes += tuple(_note(s) for s in findings if not s.established)
    notes += tuple(
        f"{s.first.what}: {s.artifact_note()}" for s in evidence if s.established and s.artifact_note()
    )
    quals = tuple(dict.fromkeys(qualifications)) + tuple(_note(s) for s in measurements if s.established)

    broken = [s for s in sanity if not s.established]
    broken += [
        s for s in evidence if s.basis == "seed-independent" and s.pooled_sample is None and not s.established
    ]
    broken += [s for s in (*findings, *measurements) if s.differs]
    if broken or (per_seed and not holding):
        reasons = tuple(_failure_reason(s) for s in broken)
        what = [f"{s.first.label} {'differs between seeds' if s.differs else s.outcome}" for s in broken]
        if per_seed and not holding:
            what.append(f"the evidence holds at none of the {_seeds(len(seeds))}")
        return Verdict(claim, CHECK_FAILED, "; ".join(dict.fromkeys(what)), reasons=reasons, counts=counts)

    contradicted = [s for s in evidence if s.pooled_sample is not None and not s.established]
    shortfalls = [s for s in findings if s.established] + contradicted
    excused = [s for s in shortfalls if s.artifact_agrees()]
    standing = [s for s in shortfalls if not s.artifact_agrees()]
    if standing:
        reasons = tuple(_finding_reason(s) for s in standing)
        basis = "; ".join(
            dict.fromkeys(
                _finding_basis(s) if s.first.kind == "finding" else f"contradicted {s.decided}"
                for s in standing
            )
        )
        return Verdict(claim, NOT_REPRODUCED, basis, reasons=reasons + quals + notes, counts=counts)
    # a finding (or contradicted evidence) that the authors' artifact shows: a qualification of the text
    quals += tuple(
        f"the paper's number is not the authors' own result: {s.first.what}: the paper "
        f"{s.first.paper or s.first.required}; ours {s.ours()} ({s.how}); {s.artifact_note()}"
        for s in excused
    )
    if not evidence and excused:  # our value is the authors' own: that is the evidence
        basis = "; ".join(dict.fromkeys(s.decided for s in excused))
        return Verdict(claim, QUALIFIED, basis, reasons=quals + notes, counts=counts)
    if not evidence:
        if findings:
            basis = "; ".join(dict.fromkeys(f"{_finding_basis(s)} not established" for s in findings))
            return Verdict(claim, NOT_ESTABLISHED, basis, reasons=quals + notes, counts=counts)
        return Verdict(claim, BY_CONSTRUCTION, "sanity checks only", reasons=quals + notes, counts=counts)
    parts = []  # how the evidence was decided: "holds at 5 of 5 seeds; pooled over 5 seeds (500 trials)"
    if per_seed:
        missed = [seed for seed in seeds if seed not in holding]
        text = f"holds at {len(holding)} of {_seeds(len(seeds))}"
        parts.append(text + (f" (failed at {format_seeds(missed)})" if missed else ""))
    if pooled := [s for s in evidence if s.statistical]:
        sizes = ", ".join(dict.fromkeys(s.pooled_sample.count for s in pooled))  # type: ignore[union-attr]
        parts.append(f"pooled over {_seeds(len(pooled[0].checks))} ({sizes})")
    if any(s.basis == "seed-independent" for s in evidence):
        parts.append("seed-independent")
    basis = "; ".join(parts)
    if len(holding) < len(seeds) and per_seed:
        reasons = tuple(_failure_reason(s) for s in per_seed if s.failed_seeds)
        return Verdict(claim, PARTIAL, basis, reasons=reasons + quals + notes, counts=counts)
    if quals:
        return Verdict(claim, QUALIFIED, basis, reasons=quals + notes, counts=counts)
    return Verdict(claim, REPRODUCED, basis, reasons=notes, counts=counts)


def sweep_verdicts(claim_ids: Iterable[str], sweeps: Sequence[Sweep]) -> dict[str, Verdict]:
    """The verdict of every id in ``claim_ids`` (in that order) over every chapter's sweep.

    Qualifications are quoted across the seeds that state them, each number as its range
    (:func:`qualification_across`). Ids without checks are *not tested*.
    """
    by_claim: dict[str, list[Series]] = {}
    quals: dict[str, list[str]] = {}
    for sweep in sweeps:
        for s in series_of(sweep):
            by_claim.setdefault(s.first.claim, []).append(s)
        made: dict[tuple[str, str], list[tuple[int, Qualification]]] = {}
        for seed in sweep.seeds:
            for q in sweep.records[seed].qualifications:
                made.setdefault((q.claim, q.text), []).append((seed, q))
        for (claim, _), at in made.items():
            quals.setdefault(claim, []).append(qualification_across(at, sweep.seeds))
    return {cid: claim_verdict(cid, by_claim.get(cid, []), quals.get(cid, [])) for cid in claim_ids}


def format_counts(results: Mapping[str, Verdict]) -> str:
    """How many claims of ``results`` have each verdict: ``"20 of 26 claims reproduced, 3 reproduced ..."``.

    Verdicts with no claim are left out, except the first.
    """
    counts = Counter(v.verdict for v in results.values())
    parts = [f"{counts[VERDICTS[0]]} of {len(results)} claims {VERDICTS[0]}"]
    for name in VERDICTS[1:]:
        if counts[name]:  # the verdict as a predicate: "2 do not reproduce", "1 holds at some seeds"
            plural = name.replace("does not", "do not").replace("holds at", "hold at")
            parts.append(f"{counts[name]} {name if counts[name] == 1 else plural}")
    return ", ".join(parts)
