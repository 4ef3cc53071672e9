"""One check at every seed of a sweep (:class:`Series`), and the statements a chapter made across them.

A chapter's :class:`Sweep` holds its record at every seed that counts (gathered by
:func:`ntpnb.records._sweep.load_sweeps`). The same check at every seed is a :class:`Series`,
decided as its :attr:`~ntpnb.evidence._checks.Check.basis` says: pooled over the seeds (a
statistical or count check), once (a seed-independent check), or at each seed. A qualification or
headline made at several seeds is quoted once (:func:`statement_across`).
"""

from __future__ import annotations

import string
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

from .._text import join_words, value_range
from ._checks import Check, Statement
from ._samples import BOUNDS, Sample
from ._vocabulary import (
    CONSISTENT,
    CONTRADICTED,
    ESTABLISHED,
    FAILS,
    HOLDS,
    MISSED,
    NOT_DECIDED,
    NOT_ESTABLISHED,
    certainty_words,
    count_words,
    describe_sample,
    quote_sample,
    seeds_count,
)


class ChapterRecord(Protocol):
    """What the evidence reads of a chapter's record at one seed (a ``ChapterRun`` of the records)."""

    notebook: str
    seed: int | None
    checks: tuple[Check, ...]
    qualifications: tuple[Statement, ...]
    headlines: tuple[Statement, ...]


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


# -- one check at every seed --------------------------------------------------------------------


@dataclass(frozen=True)
class Series:
    """One check of a chapter, made at every seed of its sweep."""

    #: Seed -> the check made there, in the sweep's order (the book's seed first).
    checks: Mapping[int, Check]
    #: The chapter (notebook) that made it ("" when not known).
    notebook: str = ""

    @property
    def first(self) -> Check:
        """The check at the book's seed (or at the first seed that made it)."""
        return next(iter(self.checks.values()))

    @property
    def protocol(self) -> str:
        """The protocol it was made under ("": every protocol)."""
        return self.first.protocol

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
    def decidable(self) -> bool:
        """Whether its seeds can decide it.

        Not one instance of an ``"instances"`` test alone, nor a claim's strict difference whose
        estimate lies on its side within the test's noise (more trials may establish it).
        """
        sample, c = self.pooled_sample, self.first
        if sample is None:
            return True
        if not sample.decidable:
            return False
        if sample.establish and c.kind == "claim" and c.relation in BOUNDS:
            return self.established or not sample.side(c.relation, self.target)
        return True

    @property
    def bound(self) -> bool:
        """A claim's bound (``>``, ``>=``, ``<``, ``<=``) decided on a sample's estimate."""
        c = self.first
        return c.kind == "claim" and self.pooled_sample is not None and c.relation in BOUNDS

    def certainty(self) -> str:
        """How sure a bound's decision is: ``"contradicted at the 1% level"`` ("" for another check)."""
        if not self.bound or self.pooled_sample.establish:  # type: ignore[union-attr]
            return ""  # a difference to establish: its outcome says how sure it is
        return certainty_words(self.pooled_sample, self.first.relation, self.target)  # type: ignore[arg-type]

    @property
    def settled(self) -> bool:
        """Whether its decision is one the test establishes: not a bound's estimate within its noise.

        A claim's bound decided on an estimate (:attr:`bound`) holds or is missed whatever the
        test says (the verdicts' rule); it is settled only where the test also shows that side
        (established where it holds, contradicted where it is missed). Any other check is settled
        where it can be decided.
        """
        if not self.decidable:
            return False
        if not self.bound:
            return True
        sure = self.pooled_sample.sureness(self.first.relation, self.target)  # type: ignore[union-attr]
        return sure == ("established" if self.established else "contradicted")

    def point_decision(self) -> bool | None:
        """Its decision at one point of a map: True (holds), False (fails), None (not settled).

        A map draws a change of decision only where both sides are settled (:attr:`settled`): a
        bound whose estimates straddle it within their noise is undecided there, not a boundary.
        """
        return self.established if self.settled else None

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
    def marginal_seeds(self) -> tuple[int, ...]:
        """A statistical check that holds pooled: the seeds whose own sample does not bear it out.

        A seed whose sample cannot decide alone (one instance) is not among them.
        """
        if not (self.statistical and self.established):
            return ()
        return tuple(s for s in self.failed_seeds if self.checks[s].sample.decidable)  # type: ignore[union-attr]

    @property
    def decided(self) -> str:
        """How it was decided, in plain words.

        ``"on 500 trials pooled over 5 seeds"``, ``"at all 5 seeds"``, ``"at 4 of 5 seeds (fails
        at 3)"``, ``"once, on 200 trials the same at every seed"``.
        """
        n = len(self.checks)
        sample = self.pooled_sample
        if self.statistical:
            return f"on {count_words(sample)} {self.how}"  # type: ignore[arg-type]
        if self.basis == "seed-independent":
            size = f"on {count_words(sample)} " if sample is not None else ""
            if self.differs:
                return f"once, {size}but it differs between the seeds"
            if n == 1:
                return f"once, {size}".rstrip(", ")
            return f"once, {size}the same at every seed"
        return self.how

    @property
    def how(self) -> str:
        """:attr:`decided` without the count of trials: ``"pooled over 5 seeds"``, ``"decided once"``."""
        n = len(self.checks)
        if self.statistical:
            return "at the one seed" if n == 1 else f"pooled over {seeds_count(n)}"
        if self.basis == "seed-independent":
            return "decided once"
        if n == 1:
            return "at the one seed"
        failed = self.failed_seeds
        if not failed:
            return f"at all {seeds_count(n)}"
        if len(failed) == n:
            return f"at none of the {seeds_count(n)}"
        return f"at {n - len(failed)} of {seeds_count(n)} (fails at {join_words(failed)})"

    @property
    def consistency(self) -> bool:
        """Whether it asks that a value the paper reports be consistent with ours.

        A test that may contradict it: ``~`` on a sample, or a ``"pvalue"`` claim that its test's
        null holds.
        """
        sample, c = self.pooled_sample, self.first
        return (
            sample is not None
            and not sample.establishes(c.kind)
            and (c.relation == "~" or sample.test == "pvalue")
        )

    @property
    def outcome(self) -> str:
        """What it came to, one of :data:`~._vocabulary.OUTCOMES` (see there for which word when).

        An exact check holds or fails; a claim's bound on an estimate (:attr:`bound`) holds or is
        missed; a consistency (:attr:`consistency`) is consistent or contradicted; a strict
        difference holds where established and is missed where not; a finding or a measurement
        is established or not; a check the seeds cannot decide is not decided.
        """
        if not self.decidable:
            return NOT_DECIDED
        c, sample = self.first, self.pooled_sample
        if c.kind in ("finding", "measurement"):
            return ESTABLISHED if self.established else NOT_ESTABLISHED
        if self.consistency:
            return CONSISTENT if self.established else CONTRADICTED
        if sample is not None and sample.establish:
            return ESTABLISHED if self.established else MISSED
        if self.established:
            return HOLDS
        return MISSED if self.bound else FAILS

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
        agreement = CONSISTENT if agrees else f"not {CONSISTENT}"
        return f"{a.source}: {a.shown}, {agreement} with ours"  # type: ignore[union-attr]

    def spread(self) -> tuple[str, str] | None:
        """The values as printed at the smallest and largest value over the seeds; None if alike."""
        checks = [c for c in self.checks.values() if isinstance(c.value, (int, float))]
        if len(checks) < 2:
            return None
        low = min(checks, key=lambda c: c.value)
        high = max(checks, key=lambda c: c.value)
        return None if low.measured == high.measured else (low.measured, high.measured)

    def seed_range(self) -> str:
        """Its value's range over the seeds, ``"[0.986, 0.990] at single seeds"`` ("" if alike or one seed).

        A statistical check's per-seed statistic (to 3 digits), else the values as printed.
        """
        if self.statistical:
            values = sorted({f"{c.value:.3g}" for c in self.checks.values()}, key=float)
            return f"{value_range(values[0], values[-1])} at single seeds" if len(values) > 1 else ""
        spread = self.spread()
        return f"{value_range(*spread)} over the {seeds_count(len(self.checks))}" if spread else ""

    def ours(self) -> str:
        """Our value as shown: pooled (to 3 digits) where a sample decides it, else the book seed's."""
        sample = self.pooled_sample
        return describe_sample(sample, self.target, 3) if sample is not None else self.first.measured

    @property
    def target(self) -> float:
        """The check's target as a number (a sample's check has one)."""
        return float(self.first.target)  # type: ignore[arg-type]

    def quote(self) -> str:
        """Our value with how it was decided, as a sentence quotes it.

        ``"0.988 ± 0.0006 on 500 trials pooled over 5 seeds"``, ``"[1.27e-06, 1.87e-06] at all 5
        seeds"``, ``"0.249, decided once"``.
        """
        sample = self.pooled_sample
        if sample is not None and sample.test == "rate":
            return f"{describe_sample(sample, self.target, 3)} {self.how}"
        if sample is not None:
            return f"{describe_sample(sample, self.target, 3, count=False)} {self.decided}"
        if self.basis == "seed-independent":
            return f"{self.first.measured}, {self.decided}"
        spread = self.spread()
        value = value_range(*spread) if spread else self.first.measured
        return f"{value} {self.how}"

    @property
    def name(self) -> str:
        """What it measured, with its protocol if any: ``"[paper's loss] mean corr"``."""
        c = self.first
        return f"[{c.protocol}] {c.what}" if c.protocol else c.what

    def sentence(self) -> str:
        """``"what: ours (how), against the paper's X"`` (``required Y`` where the paper says nothing).

        A bound adds how sure its side is: ``"(contradicted at the 1% level)"``.
        """
        c = self.first
        against = f"against the paper's {c.paper}" if c.paper else f"required {c.required}"
        sure = f" ({self.certainty()})" if self.certainty() else ""
        return f"{self.name}: {self.quote()}, {against}{sure}"


def series_of(sweep: Sweep) -> list[Series]:
    """The checks of ``sweep``'s chapter, each with its results at every seed (matched by :func:`keyed`)."""
    by_key: dict[tuple[str, str, str, str, int], dict[int, Check]] = {}
    for seed in sweep.seeds:
        for key, check in keyed(sweep.records[seed].checks).items():
            by_key.setdefault(key, {})[seed] = check
    return [Series(checks, sweep.book.notebook) for checks in by_key.values()]


def keyed(checks: Iterable[Check]) -> dict[tuple[str, str, str, str, int], Check]:
    """Checks by claim, kind, protocol, what they measure and occurrence (where a chapter makes one twice)."""
    out: dict[tuple[str, str, str, str, int], Check] = {}
    seen: Counter[tuple[str, str, str, str]] = Counter()
    for check in checks:
        key = (check.claim, check.kind, check.protocol, check.what)
        out[(*key, seen[key])] = check
        seen[key] += 1
    return out


# -- qualifications across the seeds ------------------------------------------------------------


def statement_across(
    made: Sequence[tuple[int, Statement]], seeds: Sequence[int], say_ranges: bool = True
) -> str:
    """One statement (a qualification, a headline) as made at several seeds.

    Each number is quoted as its range over them, each sample pooled over them. ``made`` holds
    the seeds where the chapter stated it (with the same words) and what it said there; ``seeds``
    are all the seeds of the sweep. ``say_ranges``: end with what a range means (a headline does
    not: the report says it once, above its summary).
    """
    first, fmt = made[0][1], string.Formatter()
    parts, varied = [], False
    for literal, name, spec, conversion in fmt.parse(first.text):
        parts.append(literal)
        if name is None:
            continue
        if name in first.samples:
            parts.append(quote_sample(Sample.pooled([q.samples[name] for _, q in made])))
            continue
        values = [q.numbers[name] for _, q in made]
        texts = [fmt.format_field(fmt.convert_field(v, conversion), spec or "") for v in values]
        if len(set(texts)) == 1:
            parts.append(texts[0])
        else:
            varied = True
            low, high = (texts[values.index(v)] for v in (min(values), max(values)))
            parts.append(value_range(low, high))
    text = "".join(parts)
    at = [seed for seed, _ in made]
    if len(at) < len(seeds):
        return f"{text} (at seed{'s' * (len(at) > 1)} {join_words(at)})"
    return f"{text} (lowest to highest over the {len(at)} seeds)" if varied and say_ranges else text


def statements_across(sweep: Sweep, kind: str) -> dict[str, list[tuple[str, str]]]:
    """Claim -> its statements of ``kind`` (``"qualifications"``, ``"headlines"``) across the seeds.

    Each as its words across the seeds and the limit it states (:attr:`Statement.limit`).
    """
    made: dict[tuple[str, str, str], list[tuple[int, Statement]]] = {}
    for seed in sweep.seeds:
        for q in getattr(sweep.records[seed], kind):
            made.setdefault((q.claim, q.text, q.limit), []).append((seed, q))
    out: dict[str, list[tuple[str, str]]] = {}
    for (claim, _, limit), at in made.items():
        out.setdefault(claim, []).append((statement_across(at, sweep.seeds, kind != "headlines"), limit))
    return out
