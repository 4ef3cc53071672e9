"""What reproduced: one verdict per claim, its kind and its reasons, measured across the seeds of a sweep.

A chapter runs at the book's seed and, in a sweep, at further seeds, each into its own tree
(:mod:`ntpnb.runner._run`); :func:`~ntpnb.records._sweep.load_sweeps` gathers each chapter's
records that may be pooled with the book's. The same check at every seed is a
:class:`~ntpnb.evidence._series.Series`, decided as its
:attr:`~ntpnb.evidence._checks.Check.basis` says. :func:`claim_verdict` applies the one rule,
:data:`~._vocabulary.VERDICT_RULE`, which the report states; the kind of a verdict other than a
plain *reproduced* is decided by :data:`~._vocabulary.KIND_RULE` (:func:`_qualified_kind`,
:func:`_negative_kind`), never typed per claim.

What a :class:`Verdict` carries, for a page to render (data, not one long string):

* ``verdict`` (one of :data:`~._vocabulary.VERDICTS`) and ``kind`` (one of its
  :data:`~._vocabulary.KINDS`), ``basis`` (how it was decided, in plain words: "holds at all 5
  seeds", "holds on 500 trials pooled over 5 seeds");
* ``why``: one sentence with the decisive number against the paper's, chosen by a stated rule
  (:func:`claim_verdict`), and ``deciding``: the sentences that decide a verdict other than a
  plain *reproduced* (the established findings, the missed bounds, the failures, the
  qualification that gives its kind);
* ``checks``: each check of the claim as a :class:`CheckSummary` (what, ours, its range over
  the seeds, required, the paper's, how decided, the outcome, the protocol, the chapter);
* ``failures`` and ``findings`` (what decided a negative verdict), ``qualifications``,
  ``beyond`` (our measurements beyond the paper, shown beside the claim), ``marginal``
  (statistical checks that hold pooled but that some seed's own sample does not bear out,
  with those seeds) and ``notes``: each a tuple of sentences; :attr:`Verdict.reasons` joins them
  in that order;
* ``protocols``: where the registry declares protocols for the claim and its checks use them,
  the verdict under each (:class:`ProtocolVerdict`), the first deciding the claim's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .._text import join_words
from ._checks import KINDS
from ._registry import authors_protocol, declared_protocols
from ._series import Series, Sweep, series_of, statements_across
from ._vocabulary import (
    BY_CONSTRUCTION,
    CHECK_FAILED,
    COUNTEREXAMPLE,
    EVIDENCE_NOWHERE,
    FAILS_AS_STATED,
    FINDING_OPEN,
    LIMITS,
    NEGATIVE,
    NO_EVIDENCE,
    NOT_CHECKED,
    NOT_ESTABLISHED,
    NOT_REPRODUCED,
    NOT_TESTED,
    OVERSTATED,
    PARTIAL,
    POSITIVE,
    PROTOCOL_DIFFERS,
    QUALIFIED,
    REPRODUCED,
    SANITY_FAILS,
    SANITY_ONLY,
    SOME_SEEDS,
    UNDECIDED_EVIDENCE,
    VALUE_MISSED,
    VERDICTS,
    at_seeds,
    counted_verdict,
    describe_sample,
    listed,
    seeds_count,
    verdict_words,
)

#: The names other modules read from here (the words live in :mod:`._vocabulary`).
__all__ = [
    "BY_CONSTRUCTION",
    "CHECK_FAILED",
    "NEGATIVE",
    "NOT_ESTABLISHED",
    "NOT_REPRODUCED",
    "NOT_TESTED",
    "PARTIAL",
    "POSITIVE",
    "QUALIFIED",
    "REPRODUCED",
    "VERDICTS",
    "CheckSummary",
    "ProtocolVerdict",
    "Verdict",
    "claim_verdict",
    "counted_verdict",
    "format_counts",
    "headlines_across",
    "sweep_verdicts",
]


# -- the verdict of a claim ---------------------------------------------------------------------

#: A qualification as the verdict reads it: its words across the seeds, and what it says limits
#: the evidence (a key of :data:`~._vocabulary.LIMITS`: ``"horizon"``, ``"size"`` or ``""``).
Qualification = tuple[str, str]


@dataclass(frozen=True)
class CheckSummary:
    """One check across the seeds, as a claim's card lists it (every field plain text)."""

    claim: str
    #: One of :data:`~ntpnb.evidence._checks.KINDS`.
    kind: str
    what: str
    #: The protocol it was made under ("": every protocol).
    protocol: str
    #: The chapter that made it (its notebook's name; "" when not known).
    notebook: str
    #: Ours: the pooled estimate with its count (a statistical check), else the book seed's value.
    ours: str
    #: Its range over the seeds ("" when alike or at one seed).
    spread: str
    required: str
    #: What the paper reports ("" when it states no number).
    paper: str
    #: How it was decided: ``"at all 5 seeds"``, ``"on 500 trials pooled over 5 seeds"``.
    decided: str
    #: One of :data:`~._vocabulary.OUTCOMES`.
    outcome: str
    #: The authors' stored artifact's value and whether it is consistent with ours ("": none).
    artifact: str = ""
    #: How sure a bound's side is (``"contradicted at the 1% level"``; "" for another check).
    certainty: str = ""

    @classmethod
    def of(cls, series: Series) -> CheckSummary:
        """The summary of ``series``."""
        c = series.first
        return cls(
            c.claim,
            c.kind,
            c.what,
            c.protocol,
            series.notebook,
            series.ours(),
            series.seed_range(),
            c.required,
            c.paper,
            series.decided,
            series.outcome,
            series.artifact_note(),
            series.certainty(),
        )


@dataclass(frozen=True)
class ProtocolVerdict:
    """A claim's verdict under one of its protocols (:attr:`Verdict.protocols`)."""

    #: The protocol's key, as the registry declares it and the check lines print it.
    key: str
    #: The protocol in words (MyST markdown, from the registry).
    words: str
    #: One of :data:`~._vocabulary.VERDICTS`, its kind, how it was decided, and one sentence why.
    verdict: str
    basis: str
    why: str
    kind: str = ""

    @property
    def phrase(self) -> str:
        """``"does not reproduce (short of the paper's value): missed on 500 trials ..."``."""
        named = verdict_words(self.verdict, self.kind)
        return f"{named}: {self.basis}" if self.basis else named


@dataclass(frozen=True)
class Verdict:
    """The verdict of one claim and what it rests on (see the module docstring)."""

    #: The claim id.
    claim: str
    #: One of :data:`~._vocabulary.VERDICTS`.
    verdict: str
    #: How the verdict was decided, in plain words; empty for *not tested*.
    basis: str = ""
    #: How many checks of each kind the claim has (at one seed): ``evidence``, ``findings``,
    #: ``sanity`` and ``measurements``; and ``failed``, how many did not hold where they count (per
    #: seed: each seed; pooled: once).
    counts: Mapping[str, int] = field(default_factory=dict)
    #: One sentence: why, with the decisive number against the paper's (:func:`claim_verdict`).
    why: str = ""
    #: Each check of the claim, of every kind, in the records' order.
    checks: tuple[CheckSummary, ...] = ()
    #: The checks that failed and decided a *check failed* or *holds at some seeds*.
    failures: tuple[str, ...] = ()
    #: The established shortfalls that decided a *does not reproduce*.
    findings: tuple[str, ...] = ()
    #: The stated limits of a positive verdict (or, beside a negative one, of the evidence).
    qualifications: tuple[str, ...] = ()
    #: Our established measurements beyond the paper, shown beside the claim (never a qualification).
    beyond: tuple[str, ...] = ()
    #: Statistical checks that hold pooled but that some seeds' own samples do not bear out.
    marginal: tuple[str, ...] = ()
    #: Measurements and findings not established, the authors' artifacts, checks that test nothing.
    notes: tuple[str, ...] = ()
    #: The verdict under each protocol, the first deciding this one (empty: one protocol).
    protocols: tuple[ProtocolVerdict, ...] = ()
    #: What explains a claim that does not hold as the paper states it: a protocol of the
    #: authors' code under which it holds, their stored artifact that shows our value. Never
    #: a change of the verdict.
    explanations: tuple[str, ...] = ()
    #: The chapter's headline of the claim across the seeds (MyST; "" where no chapter states one):
    #: the one sentence the report's summary shows (:meth:`~ntpnb.chapter.ClaimLog.headline`).
    headline: str = ""
    #: The verdict's kind (one of :data:`~._vocabulary.KINDS` of its verdict; "" for *reproduced*).
    kind: str = ""
    #: The sentences that decide a verdict other than a plain *reproduced*, its kind's first.
    deciding: tuple[str, ...] = ()

    @property
    def evidence(self) -> tuple[CheckSummary, ...]:
        """Its evidence checks (of kind ``"claim"``)."""
        return tuple(c for c in self.checks if c.kind == "claim")

    @property
    def named(self) -> str:
        """The verdict with its kind: ``"does not reproduce (a counterexample)"``."""
        return verdict_words(self.verdict, self.kind)

    @property
    def summary(self) -> str:
        """What the report's summary shows: the chapter's headline, else :attr:`why` (plain text)."""
        return self.headline or self.why

    @property
    def phrase(self) -> str:
        """The verdict as every page writes it: ``"reproduced: holds at all 5 seeds"``."""
        return f"{self.named}: {self.basis}" if self.basis else self.named

    @property
    def negative(self) -> bool:
        """Whether the verdict says the claim does not (or not always) hold (:data:`NEGATIVE`)."""
        return self.verdict in NEGATIVE

    @property
    def reasons(self) -> tuple[str, ...]:
        """Every sentence: failures, findings, explanations, qualifications, beyond, marginal, notes."""
        return (
            self.failures
            + self.findings
            + self.explanations
            + self.qualifications
            + self.beyond
            + self.marginal
            + self.notes
        )


@dataclass(frozen=True)
class _Decision:
    """What :func:`_decide` gives: the parts of a verdict that a protocol's checks decide."""

    verdict: str
    basis: str
    why: str
    failures: tuple[str, ...] = ()
    findings: tuple[str, ...] = ()
    qualifications: tuple[str, ...] = ()
    explanations: tuple[str, ...] = ()
    #: The kind this protocol's checks give the verdict (:data:`~._vocabulary.KINDS`).
    kind: str = ""
    #: The sentences that decide it (its kind's first).
    deciding: tuple[str, ...] = ()


def _failure(series: Series) -> str:
    """A failed check in a sentence: ``"x: fails at seeds 1 and 3 (measured 1 and 1, required > 0)"``."""
    c = series.first
    kind = "" if c.kind == "claim" else f"{c.kind} check "
    if series.statistical or (series.basis == "seed-independent" and series.pooled_sample is not None):
        return f"{kind}{series.name}: {series.outcome}, {series.quote()}, required {c.required}"
    if series.differs:
        values = listed(ch.measured for ch in series.checks.values())
        return f"{kind}{series.name}: declared the same at every seed, but measured {values}"
    failed = series.failed_seeds
    measured = join_words(series.checks[seed].measured for seed in failed)
    return f"{kind}{series.name}: fails at {at_seeds(failed)} (measured {measured}, required {c.required})"


def _note(series: Series) -> str:
    """A measurement's or a finding's line, with what it tests.

    ``"measurement not established: what > 0 (to be established ...); ours -0.0023 ..."``: ours after
    a semicolon, since its quote and the requirement each carry an aside in brackets.
    """
    c = series.first
    return f"{c.kind} {series.outcome}: {series.name} {c.required}; ours {series.quote()}"


def _marginal(series: Series) -> str:
    """``"what: holds pooled (q = 0.020); alone, seeds 2 and 3 do not bear it out (q = 0.002, ...)"``."""
    seeds = series.marginal_seeds
    pooled = describe_sample(series.pooled_sample, series.target, 3, count=False)  # type: ignore[arg-type]
    alone = ", ".join(
        describe_sample(series.checks[s].sample, series.target, 3, count=False)  # type: ignore[arg-type]
        for s in seeds
    )
    verb = "does" if len(seeds) == 1 else "do"
    return (
        f"{series.name}: {series.outcome} pooled ({pooled}); alone, {at_seeds(seeds)} {verb} not "
        f"bear it out ({alone})"
    )


def _shortfall_basis(shortfalls: Sequence[Series]) -> str:
    """How shortfalls decided *does not reproduce*, those decided alike said once.

    ``"missed (contradicted at the 1% level) and contradicted on 500 trials pooled over 5 seeds"``,
    ``"a finding established once, the same at every seed"``.
    """
    by_how: dict[str, list[str]] = {}
    for s in shortfalls:
        if s.first.kind == "finding":
            word = "a finding established"
        else:
            word = f"{s.outcome} ({s.certainty()})" if s.certainty() else s.outcome
        by_how.setdefault(s.decided, []).append(word)
    return ", and ".join(f"{listed(words)} {how}" for how, words in by_how.items())


def _on_side(value: float, relation: str, target: float) -> bool:
    """Whether ``value`` lies on the side of ``target`` that the bound ``relation`` names."""
    return {">": value > target, ">=": value >= target, "<": value < target, "<=": value <= target}[relation]


def _why_by_construction(sanity: Sequence[Series]) -> str:
    first = sanity[0]
    more = f", and {len(sanity) - 1} more" if len(sanity) > 1 else ""
    return (
        "only checks of the code and setting, which a false claim would pass too: "
        f"{first.name}: {first.quote()}{more}"
    )


def _evidence_basis(evidence: Sequence[Series], seeds: Sequence[int], holding: Sequence[int]) -> str:
    """How the evidence was decided: ``"holds at all 5 seeds and on 5 tests pooled over 5 seeds"``."""
    per_seed = [s for s in evidence if s.basis == "per seed"]
    pooled = [s for s in evidence if s.statistical]
    once = [s for s in evidence if s.basis == "seed-independent"]
    n = len(seeds)
    parts = []
    if per_seed:
        missed = [seed for seed in seeds if seed not in holding]
        if n == 1:
            parts.append("at the one seed")
        elif not missed:
            parts.append(f"at all {seeds_count(n)}")
        else:
            parts.append(f"at {len(holding)} of {seeds_count(n)} (fails at {join_words(missed)})")
    if pooled:
        from ._vocabulary import count_words

        sizes = listed(count_words(s.pooled_sample) for s in pooled)  # type: ignore[arg-type]
        parts.append(f"on {sizes} {pooled[0].how}")
    if once:
        parts.append("once, on data the same at every seed" if n > 1 else "once")
    return "holds " + join_words(parts)


def _twin(series: Series, every: Sequence[Series], authors: str) -> Series | None:
    """The check that carries the authors' stored value for ``series``: itself, or its twin under ``authors``.

    The twin measures the same (kind and what) under the protocol of the authors' code, which
    made their figure.
    """
    if series.first.artifact is not None:
        return series
    key = (series.first.kind, series.first.what)
    return next(
        (
            o
            for o in every
            if o.first.artifact is not None and o.protocol == authors and (o.first.kind, o.first.what) == key
        ),
        None,
    )


def _overstated(shortfalls: Sequence[Series], every: Sequence[Series], authors: str) -> tuple[str, ...]:
    """Where the text overstates the paper's own figure: a sentence per shortfall, else ().

    Every shortfall must be a claim's bound on an estimate whose twin (:func:`_twin`) carries the
    authors' stored value, which misses the same bound, and with which our value under that
    protocol agrees within noise (:meth:`~ntpnb.evidence._checks.Artifact.consistent_with`).
    """
    sentences = []
    for s in shortfalls:
        twin = _twin(s, every, authors) if s.bound else None
        if twin is None or not twin.artifact_agrees():
            return ()
        artifact = twin.first.artifact
        if _on_side(artifact.value, s.first.relation, s.target):  # type: ignore[union-attr]
            return ()
        theirs = "" if twin is s else f" under [{twin.protocol}], as their code runs it ({twin.quote()})"
        figure = f"{artifact.source}: {artifact.shown}"  # type: ignore[union-attr]
        sentences.append(f"{s.sentence()}: {MISSED_BY_FIGURE} ({figure}), and ours agrees with it{theirs}")
    return tuple(sentences)


#: The words that say a bound the paper's text states is missed by its own figure too.
MISSED_BY_FIGURE = "the paper's own figure misses it too"


def _qualified_kind(overstated: bool, undecided: bool, quals: Sequence[Qualification]) -> str:
    """The kind of a positive verdict from what qualifies it (:data:`~._vocabulary.KIND_RULE`)."""
    if overstated:
        return OVERSTATED
    if undecided:
        return UNDECIDED_EVIDENCE
    limits = [limit for _, limit in quals]
    for limit in ("horizon", "size"):
        if limit in limits:
            return LIMITS[limit]
    return LIMITS[""] if quals else ""


def _qualifying(kind: str, quals: Sequence[Qualification], undecided: Sequence[str]) -> tuple[str, ...]:
    """The sentences that give a qualified verdict its ``kind``."""
    if kind == UNDECIDED_EVIDENCE:
        return tuple(undecided)
    limit = next((key for key, words in LIMITS.items() if words == kind), None)
    return tuple(text for text, lim in quals if lim == limit)


def _decide(
    series: Sequence[Series], qualifications: Sequence[Qualification], authors: str, every: Sequence[Series]
) -> _Decision:
    """The verdict that ``series`` (of one claim, under one protocol) and the qualifications give.

    A missed number never holds. Where every shortfall is a bound the authors' own stored figure
    misses too, and ours agrees with it, the text overstates that figure (:func:`_overstated`):
    the verdict is qualified, the bound still missed. Else the authors' stored artifact that
    shows our value explains a miss (an explanation, beside a negative verdict) only where the
    check follows the authors' protocol: made under ``authors`` or under every one. ``every``
    holds all the claim's checks, under every protocol (where a twin is looked for).
    """
    # one list per kind of the registry (a kind added there fails this unpacking, not silently)
    evidence, sanity, findings, _ = ([s for s in series if s.first.kind == k] for k in KINDS)
    undecided = [s for s in evidence if not s.decidable]
    evidence = [s for s in evidence if s.decidable]
    seeds = tuple(dict.fromkeys(seed for s in series for seed in s.checks))
    per_seed = [s for s in evidence if s.basis == "per seed"]
    holding = tuple(
        seed for seed in seeds if all(s.checks[seed].passed for s in per_seed if seed in s.checks)
    )
    quals: tuple[Qualification, ...] = tuple(dict.fromkeys(qualifications))
    open_ = tuple(f"not decided by this run: {_note(s).split(': ', 1)[1]}" for s in undecided)
    texts = tuple(text for text, _ in quals) + open_

    broken = [s for s in sanity if not s.established]
    broken += [
        s for s in evidence if s.basis == "seed-independent" and s.pooled_sample is None and not s.established
    ]
    broken += [s for s in series if s.first.kind in ("finding", "measurement") and s.differs]
    if broken or (per_seed and not holding):
        return _check_failed(broken, per_seed, len(seeds), bool(holding), texts)
    contradicted = [s for s in evidence if s.pooled_sample is not None and not s.established]
    shortfalls = [s for s in findings if s.established] + contradicted
    overstated = _overstated(shortfalls, every, authors) if shortfalls else ()
    if shortfalls and not overstated:
        return _not_reproduced(shortfalls, texts, authors)
    if not evidence:
        return _without_evidence(findings, undecided, sanity, texts)
    basis = (
        _evidence_basis([s for s in evidence if s not in shortfalls], seeds, holding)
        if len(evidence) > len(shortfalls)
        else ""
    )
    if overstated:
        missed = f"the text's bound is {_shortfall_basis(shortfalls)}, as by the paper's own figure"
        basis = f"{missed}; the other evidence {basis}" if basis else missed
    if len(holding) < len(seeds) and per_seed:
        failures = tuple(_failure(s) for s in per_seed if s.failed_seeds)
        return _Decision(PARTIAL, basis, failures[0], failures, (), texts, kind=SOME_SEEDS, deciding=failures)
    kind = _qualified_kind(bool(overstated), bool(undecided), quals)
    deciding = overstated or _qualifying(kind, quals, open_)
    quoted = shortfalls[0] if overstated else next((s for s in evidence if s.first.paper), evidence[0])
    verdict = QUALIFIED if kind else REPRODUCED
    why = quoted.sentence()
    return _Decision(verdict, basis, why, (), (), overstated + texts, kind=kind, deciding=deciding)


def _artifact_explains(series: Series) -> str:
    """A missed number that the authors' stored artifact shows too, in a sentence.

    ``"[authors' filter] mean corr: the authors' stored Fig. 6a ...: 0.98864, consistent with
    ours"``.
    """
    return f"{series.name}: {series.artifact_note()}"


def _not_reproduced(shortfalls: Sequence[Series], quals: tuple[str, ...], authors: str) -> _Decision:
    """*does not reproduce*: established findings and missed or contradicted evidence.

    Each is quoted with the authors' artifact where one exists; an artifact that shows our value,
    compared under the authors' protocol (``authors``, or every protocol), explains the miss. A
    finding established exactly on one instance (no sample) is a counterexample.
    """
    found = tuple(s.sentence() + (f" ({s.artifact_note()})" if s.artifact_note() else "") for s in shortfalls)
    basis = _shortfall_basis(shortfalls)
    explained = tuple(
        _artifact_explains(s) for s in shortfalls if s.protocol in ("", authors) and s.artifact_agrees()
    )
    exact = any(s.first.kind == "finding" and s.pooled_sample is None for s in shortfalls)
    kind = COUNTEREXAMPLE if exact else VALUE_MISSED
    why = shortfalls[0].sentence()
    return _Decision(NOT_REPRODUCED, basis, why, (), found, quals, explained, kind=kind, deciding=found)


def _check_failed(
    broken: Sequence[Series], per_seed: Sequence[Series], seeds: int, holding: bool, quals: tuple[str, ...]
) -> _Decision:
    """The decision of a claim whose checks failed: ``broken`` series, or per-seed evidence held nowhere.

    Parameters
    ----------
    broken
        The series that failed outright (a sanity check, seed-independent evidence) or whose
        finding or measurement differs between seeds.
    per_seed
        The evidence decided per seed.
    seeds
        How many seeds the checks ran at.
    holding
        Whether the per-seed evidence held together at some seed.
    quals
        The claim's qualifications.
    """
    failing = broken or [s for s in per_seed if s.failed_seeds]
    what = [f"{s.first.label} {'differs between seeds' if s.differs else s.outcome}" for s in broken]
    if per_seed and not holding:
        what.append(
            "the evidence fails at the one seed"
            if seeds == 1
            else f"the evidence holds at none of the {seeds_count(seeds)}"
        )
    failures = tuple(_failure(s) for s in failing)
    kind = SANITY_FAILS if broken else EVIDENCE_NOWHERE
    basis = ", and ".join(dict.fromkeys(what))
    return _Decision(CHECK_FAILED, basis, failures[0], failures, (), quals, kind=kind, deciding=failures)


def _without_evidence(
    findings: Sequence[Series],
    undecided: Sequence[Series],
    sanity: Sequence[Series],
    quals: tuple[str, ...],
) -> _Decision:
    """The decision of a claim with no decidable evidence check, from what it has instead.

    In order: findings not established, evidence undecided at the run's seeds, sanity checks
    only, nothing.
    """
    if findings:
        basis = listed(f"a finding not established {s.decided}" for s in findings)
        lines = tuple(_note(s) for s in findings)
        why = findings[0].sentence()
        return _Decision(NOT_ESTABLISHED, basis, why, (), (), quals, kind=FINDING_OPEN, deciding=lines)
    if undecided:
        basis = "its evidence cannot be decided at this run's seeds"
        kind = UNDECIDED_EVIDENCE
        return _Decision(NOT_ESTABLISHED, basis, quals[-1], (), (), quals, kind=kind, deciding=quals)
    if sanity:
        why = _why_by_construction(sanity)
        return _Decision(BY_CONSTRUCTION, "", why, (), (), quals, kind=SANITY_ONLY, deciding=(why,))
    return _Decision(BY_CONSTRUCTION, "", "", (), (), quals, kind=NO_EVIDENCE)


def _counts(series: Sequence[Series]) -> dict[str, int]:
    evidence, sanity, findings, measurements = ([s for s in series if s.first.kind == k] for k in KINDS)
    failed = sum(
        (not s.established) if s.basis != "per seed" else len(s.failed_seeds) for s in (*evidence, *sanity)
    )
    return {
        "evidence": len(evidence),
        "findings": len(findings),
        "sanity": len(sanity),
        "measurements": len(measurements),
        "failed": failed,
    }


def _notes(series: Sequence[Series], deciding: str, authors: str) -> tuple[str, ...]:
    """Measurements and findings not established, vacuous tests, and the authors' artifacts.

    An artifact is noted beside evidence that holds, or beside a check under a protocol other
    than ``deciding`` (whose findings only that protocol's verdict quotes), unless it explains a
    missed number (:func:`_explains`: it is an explanation then).
    """
    notes = tuple(_note(s) for s in series if s.first.kind == "measurement" and not s.established)
    notes += tuple(_note(s) for s in series if s.first.kind == "finding" and not s.established)
    notes += tuple(
        f"{s.name}: {s.artifact_note()}"
        for s in series
        if s.artifact_note()
        and not _explains(s, authors)
        and ((s.first.kind == "claim" and s.established) or s.protocol not in ("", deciding))
    )
    notes += tuple(
        f"{s.first.label} {s.first.what}: every p-value is 1, so Fisher's method can reject nothing "
        "and the check tests nothing (a p-value capped by a correction, min(1, k p), is no input for it)"
        for s in series
        if s.pooled_sample is not None and s.pooled_sample.vacuous
    )
    return notes


def _shortfall(series: Series) -> bool:
    """Whether ``series`` tells that the paper's number is missed.

    An established finding, or evidence decided on a sample that does not hold.
    """
    if series.first.kind == "finding":
        return series.established
    return (
        series.first.kind == "claim"
        and series.decidable
        and series.pooled_sample is not None
        and not series.established
    )


def _explains(series: Series, authors: str) -> bool:
    """Whether the authors' stored artifact explains ``series``'s missed number.

    It does where it shows our value, compared under the authors' protocol (``authors``) or
    under every one.
    """
    return _shortfall(series) and series.protocol in ("", authors) and bool(series.artifact_agrees())


def _protocol_qualification(primary: tuple[str, _Decision], other: tuple[str, _Decision]) -> str:
    """``"decided under [paper's loss] (reproduced); under [authors' loss]: does not reproduce ..."``."""
    (key, decision), (other_key, theirs) = primary, other
    named = verdict_words(theirs.verdict, theirs.kind)
    return f"decided under [{key}] ({decision.verdict}); under [{other_key}]: {named}, {theirs.why}"


def _claim_kind(
    primary: _Decision, others: Sequence[tuple[str, _Decision]], authors: str, verdict: str
) -> str:
    """The claim's kind, from its first protocol's decision and the others' (:data:`~._vocabulary.KIND_RULE`).

    A negative first decision that the authors' protocol turns positive *fails as stated, holds
    under the authors' code*; a positive one that another protocol turns negative (and that the
    text does not overstate) *holds as stated, not under another protocol*.
    """
    theirs = dict(others).get(authors)
    if primary.verdict == NOT_REPRODUCED and theirs is not None and theirs.verdict in POSITIVE:
        return FAILS_AS_STATED
    differs = any(d.verdict != primary.verdict for _, d in others)
    if verdict == QUALIFIED and primary.kind != OVERSTATED and differs:
        return PROTOCOL_DIFFERS
    return primary.kind


def claim_verdict(
    claim: str,
    series: Sequence[Series],
    qualifications: Sequence[Qualification] = (),
    protocols: Mapping[str, str] | None = None,
    authors: str | None = None,
) -> Verdict:
    """The verdict of ``claim`` from its checks at every seed and its qualifications (the rule).

    ``protocols`` (key -> words; default: the registry's for ``claim``) are the claim's
    protocols, the first (the claim as the paper states it) deciding; ``authors`` (default: the
    registry's) is the key of the one the authors' code runs. Under each protocol some check
    names, the verdict is decided on the checks without a protocol and that protocol's own
    (:class:`ProtocolVerdict`). Where the claim does not hold as stated but holds under another
    protocol, or an artifact compared under the authors' protocol shows our missed value, that
    explains the verdict (:attr:`Verdict.explanations`) and names its kind: it never changes it.
    ``qualifications``: each a text and its limit (:data:`Qualification`); a plain text is one
    with no stated limit.

    :attr:`Verdict.why` is chosen by this rule: for a negative verdict, the check that decided it
    (the first failure or established shortfall); for a bound the text overstates, that bound;
    else the first evidence check that quotes the paper, else the first evidence check; for a
    claim with sanity checks only, what they check.
    """
    counts = _counts(series)
    if not series:
        return Verdict(claim, NOT_TESTED, counts=counts, kind=NOT_CHECKED)
    quals = tuple((q, "") if isinstance(q, str) else tuple(q) for q in qualifications)
    if protocols is None:
        protocols = declared_protocols(claim)
    if authors is None:
        authors = authors_protocol(claim)
    used = [p for p in dict.fromkeys(s.protocol for s in series) if p]
    extras = _verdict_extras(series, next(iter(protocols), "") if used else "", authors)
    if not used:
        d = _decide(series, quals, authors="", every=series)
        return _as_verdict(claim, d, counts, extras, d.verdict, d.qualifications, kind=d.kind)
    keys = [*protocols, *(k for k in used if k not in protocols)]
    decided = _protocol_decisions(series, quals, keys, used, authors)
    (first, primary), *others = decided.items()
    words = {k: protocols.get(k, "(not declared in the registry)") for k in keys}
    subs = tuple(ProtocolVerdict(k, words[k], d.verdict, d.basis, d.why, d.kind) for k, d in decided.items())
    verdict, quals_text = primary.verdict, primary.qualifications
    differ = [(k, d) for k, d in others if d.verdict != primary.verdict]
    if differ and verdict in POSITIVE:
        verdict = QUALIFIED
        quals_text += tuple(_protocol_qualification((first, primary), other) for other in differ)
    kind = _claim_kind(primary, others, authors, verdict)
    explained = _protocol_explanations(primary, others, words)
    deciding = primary.deciding
    if kind == PROTOCOL_DIFFERS:
        deciding = tuple(_protocol_qualification((first, primary), other) for other in differ)
    elif kind == FAILS_AS_STATED:
        deciding = primary.deciding + tuple(e for e in explained if e.startswith(f"under [{authors}]"))
    return _as_verdict(
        claim, primary, counts, extras, verdict, quals_text, subs, explained, kind=kind, deciding=deciding
    )


def _protocol_explanations(
    primary: _Decision, others: Sequence[tuple[str, _Decision]], words: Mapping[str, str]
) -> tuple[str, ...]:
    """What explains a claim that does not hold as the paper states it, from its other protocols.

    Where it does not hold as stated: each other protocol under which it holds (``"under
    [authors' loss] (the loss ...): reproduced, ..."``). Always: every protocol's artifact that
    shows our missed value.
    """
    holds = tuple(
        f"under [{key}] ({words[key]}): {verdict_words(d.verdict, d.kind)}, {d.why}"
        for key, d in others
        if d.verdict in POSITIVE and primary.verdict not in POSITIVE
    )
    artifacts = tuple(f"under [{key}]: {e}" for key, d in others for e in d.explanations)
    return tuple(dict.fromkeys(primary.explanations + holds + artifacts))


def _as_verdict(
    claim: str,
    decision: _Decision,
    counts: dict[str, int],
    extras: Mapping[str, tuple[Any, ...]],
    verdict: str,
    qualifications: tuple[str, ...],
    protocols: tuple[ProtocolVerdict, ...] = (),
    explanations: tuple[str, ...] | None = None,
    kind: str = "",
    deciding: tuple[str, ...] | None = None,
) -> Verdict:
    """The :class:`Verdict` of ``claim``: ``verdict`` on the basis of ``decision``, with ``extras``."""
    return Verdict(
        claim,
        verdict,
        decision.basis,
        counts,
        decision.why,
        failures=decision.failures,
        findings=decision.findings,
        qualifications=qualifications,
        protocols=protocols,
        explanations=decision.explanations if explanations is None else explanations,
        kind=kind,
        deciding=decision.deciding if deciding is None else deciding,
        **extras,
    )


def _verdict_extras(series: Sequence[Series], deciding: str, authors: str) -> dict[str, tuple[Any, ...]]:
    """What a claim's verdict shows beside its decision: checks, measurements beyond, marginal seeds, notes.

    ``deciding`` is the claim's first protocol where its checks name protocols, else ""; ``authors``
    the key of the protocol the authors' code runs ("": one protocol).
    """
    return {
        "checks": tuple(CheckSummary.of(s) for s in series),
        "beyond": tuple(
            f"{s.name}: {s.quote()}" for s in series if s.first.kind == "measurement" and s.established
        ),
        "marginal": tuple(_marginal(s) for s in series if s.first.kind != "measurement" and s.marginal_seeds),
        "notes": _notes(series, deciding, authors),
    }


def _protocol_decisions(
    series: Sequence[Series],
    qualifications: Sequence[Qualification],
    keys: Sequence[str],
    used: Sequence[str],
    authors: str,
) -> dict[str, _Decision]:
    """The decision under each protocol of ``keys`` that a check names (and the first, always).

    Each is decided on the checks without a protocol and the protocol's own; ``authors`` is the
    key of the protocol the authors' code runs (its artifacts explain a missed number, and its
    twins carry the stored values a bound the text overstates is compared with).
    """
    return {
        key: _decide([s for s in series if s.protocol in ("", key)], qualifications, authors, series)
        for i, key in enumerate(keys)
        if i == 0 or key in used
    }


def headlines_across(sweeps: Sequence[Sweep]) -> dict[str, str]:
    """Each claim's or map's headline over every chapter's sweep, quoted across the seeds that state it.

    Each number as its range and each sample pooled (:func:`statement_across`); a headline whose
    words differ between seeds is quoted once for each wording, at its seeds.
    """
    heads: dict[str, list[str]] = {}
    for sweep in sweeps:
        for claim, texts in statements_across(sweep, "headlines").items():
            heads.setdefault(claim, []).extend(text for text, _ in texts)
    return {claim: " ".join(texts) for claim, texts in heads.items()}


def sweep_verdicts(claim_ids: Iterable[str], sweeps: Sequence[Sweep]) -> dict[str, Verdict]:
    """The verdict of every id in ``claim_ids`` (in that order) over every chapter's sweep.

    Qualifications and headlines are quoted across the seeds that state them, each number as its
    range and each sample pooled (:func:`statement_across`). Ids without checks are *not tested*.
    """
    by_claim: dict[str, list[Series]] = {}
    quals: dict[str, list[Qualification]] = {}
    for sweep in sweeps:
        for s in series_of(sweep):
            by_claim.setdefault(s.first.claim, []).append(s)
        for claim, texts in statements_across(sweep, "qualifications").items():
            quals.setdefault(claim, []).extend(texts)
    heads = headlines_across(sweeps)
    verdicts = {cid: claim_verdict(cid, by_claim.get(cid, []), quals.get(cid, [])) for cid in claim_ids}
    return {cid: replace(v, headline=heads[cid]) if cid in heads else v for cid, v in verdicts.items()}


def format_counts(results: Mapping[str, Verdict]) -> str:
    """How many claims of ``results`` have each verdict: ``"20 of 26 claims reproduced, 3 reproduced ..."``.

    Verdicts with no claim are left out, except the first.
    """
    counts = Counter(v.verdict for v in results.values())
    parts = [f"{counts[VERDICTS[0]]} of {len(results)} claims {VERDICTS[0]}"]
    parts += [counted_verdict(counts[name], name) for name in VERDICTS[1:] if counts[name]]
    return ", ".join(parts)
