"""What reproduced: one verdict per claim, measured across the seeds of a sweep.

A chapter runs at the book's seed and, in a sweep, at further seeds, each into its own tree
(:mod:`ntpnb.runner._run`); :func:`~ntpnb.records._sweep.load_sweeps` gathers each chapter's
records that may be pooled with the book's. The same check at every seed is a
:class:`~ntpnb.evidence._series.Series`, decided as its
:attr:`~ntpnb.evidence._checks.Check.basis` says.
:func:`claim_verdict` applies the one rule, :data:`VERDICT_RULE`, which the report states and
every page quotes through :attr:`Verdict.phrase`.

What a :class:`Verdict` carries, for a page to render (data, not one long string):

* ``verdict`` (one of :data:`VERDICTS`), ``basis`` (how it was decided, in plain words: "holds
  at all 5 seeds", "holds on 500 trials pooled over 5 seeds") and :attr:`Verdict.phrase`, the
  two together;
* ``why``: one sentence with the decisive number against the paper's, chosen by a stated rule
  (:func:`claim_verdict`);
* ``evidence``: each evidence check as a :class:`CheckSummary` (what, ours, its range over the
  seeds, required, the paper's, how decided, the outcome, the protocol, the chapter);
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
from ._vocabulary import at_seeds, seeds_count

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
#: Verdicts that say the claim holds.
POSITIVE: frozenset[str] = frozenset({REPRODUCED, QUALIFIED})

#: The verdict rule, as the report states it (one paragraph per line; the last is what a
#: chapter prints, which the claims page quotes).
VERDICT_RULE: tuple[str, ...] = (
    "**How a check is decided.** A check of one instance (an exact property, a tolerance on one "
    "run) is decided at each seed, and shows *at all N seeds* or *at k of N seeds* with the seeds "
    "that failed and the spread of its value. A statistical check (a mean over random trials) and "
    "a count check (how often an event happens over trials, a rate with its interval) are decided "
    "on their trials pooled over the seeds, and show *on T trials pooled over N seeds*, never *k of "
    "N*. A value that varies between random instances (one per seed) is decided on the instances' "
    "mean with Student's t interval, and shows the instances' range; one instance alone is not "
    "decided. p-values of tests run whole at each seed are pooled by Fisher's method; where a "
    "Monte Carlo p-value sits at the smallest value its test can give, the pooled p is a bound "
    "(*≤*). A check whose data do not depend on the seed (a fixed corpus) is decided once.",
    "**A bound is decided on the estimate.** Where the paper says a value lies above or below a "
    "number (*> 0.99*), the claim holds where our estimate lies on that side and is *missed* where "
    "it does not, whatever a test says: a test only says how sure the side is (*established*, "
    "*contradicted*, or *within the test's noise* at its level), so running more seeds can make a "
    "decision surer but cannot turn a missed bound into one that holds. A true value a few standard "
    "errors from the bound is missed with a small stated chance (three standard errors: 0.13%); "
    "one within the noise is a coin, and the card says so. A value the paper reports (*≈ 0.987*) "
    "is a consistency: it fails only where a test at a stated error rate contradicts it. A strict "
    "difference (*local above global*) holds where the data establish it, is missed where the "
    "estimate lies on the wrong side, and is *not decided* in between.",
    "**Kinds of check.** *Evidence* would fail were the paper's claim false; a *sanity* check "
    "tests the code or the setting (an identity, a property of our instance, a solver against a "
    "proved result); a *finding* states that a paper's number is missed, and holds only when the "
    "data establish it; a *measurement* is a statement of ours beyond the paper (a drift, a fitted "
    "offset, a map), decided pooled and shown beside the claim: it never qualifies the claim.",
    "**Protocols.** Where the paper and the authors' code differ (a loss, a trial filter), the "
    "claim names its protocols, and a check made under one of them says which; a check that names "
    "none holds under every protocol. The verdict is decided under each protocol from the checks "
    "common to all and that protocol's own; the claim's verdict is the one under its first "
    "protocol, the claim as the paper states it, and the others are shown beside it. Where another "
    "protocol's verdict is negative, a positive verdict becomes *reproduced with a qualification* "
    "that names it; where the claim does not hold as stated but holds under the authors' code, "
    "that is its *explanation*: the verdict stays the stated claim's.",
    "**The verdict of a claim.** *reproduced*: every evidence check holds. *reproduced with a "
    "qualification*: it holds, and a stated limit applies: a qualification of the chapter (its "
    "numbers as ranges over the seeds), a protocol under which the verdict differs, or an evidence "
    "check that this run's seeds cannot decide. *holds at some seeds*: an evidence check decided "
    "at each seed fails at some seeds (named). *does not reproduce*: a finding is established "
    "(pooled, at each seed, or once), or a statistical evidence check is missed or contradicted "
    "pooled; our number and the paper's are quoted, and the authors' stored artifact's where one "
    "exists. An artifact that shows our value, compared under the authors' own protocol, "
    "*explains* the miss (the paper's text rounds its own figure, say): it never turns it into a "
    "qualification. *not established*: the claim's only checks are findings the data do not "
    "establish, or evidence this run cannot decide. *by construction*: the claim has sanity checks "
    "only. *check failed*: a sanity check failed at some seed, or the evidence holds at none. *not "
    "tested*: no chapter of this run checks it. A statistical check that holds pooled but that "
    "some seed's own trials do not bear out is *marginal*: those seeds and their numbers are named "
    "beside the verdict.",
    "**What a chapter prints.** A check decided at each seed prints `[PASS]` or `[FAIL]`, and a "
    "`[FAIL]` at the book's seed fails the run (at the other seeds it is counted here); a failed "
    "line prints as many digits as it takes to see the failure. A statistical check prints "
    "`[PASS]`, or `[OPEN]` where one seed's trials do not bear it out; it never fails the run. A "
    "finding or measurement prints `[FOUND]` where it holds and `[OPEN]` where it does not, never "
    "`[FAIL]`. A check made under one protocol names it in brackets after the claim id: "
    "`[PASS] B10 [paper's loss] ...`.",
)


# -- the verdict of a claim ---------------------------------------------------------------------


@dataclass(frozen=True)
class CheckSummary:
    """One check across the seeds, as a claim's card lists it (every field plain text)."""

    claim: str
    #: One of :data:`~ntpnb.chapter._claims.KINDS`.
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
    #: ``"holds"``, ``"fails"``, ``"established"``, ``"not established"`` or ``"not decided"``.
    outcome: str
    #: The authors' stored artifact's value and whether it is consistent with ours ("": none).
    artifact: str = ""

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
        )


@dataclass(frozen=True)
class ProtocolVerdict:
    """A claim's verdict under one of its protocols (:attr:`Verdict.protocols`)."""

    #: The protocol's key, as the registry declares it and the check lines print it.
    key: str
    #: The protocol in words (MyST markdown, from the registry).
    words: str
    #: One of :data:`VERDICTS`, how it was decided, and one sentence why.
    verdict: str
    basis: str
    why: str

    @property
    def phrase(self) -> str:
        """``"does not reproduce: contradicted on 500 trials pooled over 5 seeds"``."""
        return f"{self.verdict}: {self.basis}" if self.basis else self.verdict


@dataclass(frozen=True)
class Verdict:
    """The verdict of one claim and what it rests on (see the module docstring)."""

    #: The claim id.
    claim: str
    #: One of :data:`VERDICTS`.
    verdict: str
    #: How the verdict was decided, in plain words; empty for *not tested*.
    basis: str = ""
    #: How many checks of each kind the claim has (at one seed): ``evidence``, ``findings``,
    #: ``sanity`` and ``measurements``; and ``failed``, how many did not hold where they count (per
    #: seed: each seed; pooled: once).
    counts: Mapping[str, int] = field(default_factory=dict)
    #: One sentence: why, with the decisive number against the paper's (:func:`claim_verdict`).
    why: str = ""
    #: Each evidence check, in the records' order.
    evidence: tuple[CheckSummary, ...] = ()
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

    @property
    def explained(self) -> str:
        """In a few plain words, what explains a claim that does not hold as stated ("" if nothing).

        ``"reproduces under the authors' loss"`` where another protocol's verdict is positive, else
        ``"the authors' stored figure shows our value"`` where an artifact explains the miss.
        """
        if self.verdict in POSITIVE:
            return ""
        holding = [p.key for p in self.protocols[1:] if p.verdict in POSITIVE]
        if holding:
            return f"reproduces under the {join_words(holding)}"
        return "the authors' stored figure shows our value" if self.explanations else ""

    @property
    def summary(self) -> str:
        """What the report's summary shows: the chapter's headline, else :attr:`why` (plain text)."""
        return self.headline or self.why

    @property
    def phrase(self) -> str:
        """The verdict as every page writes it: ``"reproduced: holds at all 5 seeds"``."""
        return f"{self.verdict}: {self.basis}" if self.basis else self.verdict

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


def _failure(series: Series) -> str:
    """A failed check in a sentence: ``"x: fails at seeds 1 and 3 (measured 1 and 1, required > 0)"``."""
    c = series.first
    kind = "" if c.kind == "claim" else f"{c.kind} check "
    if series.statistical or (series.basis == "seed-independent" and series.pooled_sample is not None):
        return f"{kind}{series.name}: {series.outcome}, {series.quote()}, required {c.required}"
    if series.differs:
        values = join_words(dict.fromkeys(ch.measured for ch in series.checks.values()))
        return f"{kind}{series.name}: declared the same at every seed, but measured {values}"
    failed = series.failed_seeds
    measured = join_words(series.checks[seed].measured for seed in failed)
    return f"{kind}{series.name}: fails at {at_seeds(failed)} (measured {measured}, required {c.required})"


def _note(series: Series) -> str:
    """A measurement's or a finding's line: ``"measurement not established: what (ours how)"``."""
    return f"{series.first.kind} {series.outcome}: {series.name} ({series.quote()})"


def _marginal(series: Series) -> str:
    """``"what: holds pooled (q = 0.020); alone, seeds 2 and 3 do not bear it out (q = 0.002, ...)"``."""
    c, seeds = series.first, series.marginal_seeds
    pooled = series.pooled_sample.describe(series.target, 3, count=False)  # type: ignore[union-attr]
    alone = ", ".join(
        series.checks[s].sample.describe(series.target, 3, count=False)  # type: ignore[union-attr]
        for s in seeds
    )
    held = "established" if c.kind in ("finding", "measurement") else "holds"
    verb = "does" if len(seeds) == 1 else "do"
    return (
        f"{series.name}: {held} pooled ({pooled}); alone, {at_seeds(seeds)} {verb} not bear it out ({alone})"
    )


def _shortfall_basis(series: Series) -> str:
    """How an established shortfall decided *does not reproduce*, in plain words."""
    if series.first.kind == "finding":
        return f"a finding established {series.decided}"
    if series.bound:
        return f"the paper's bound is missed {series.decided} ({series.certainty()})"
    return f"contradicted {series.decided}"


def _artifact_explains(series: Series) -> str:
    """A missed number that the authors' stored artifact shows too, in a sentence.

    ``"[authors' filter] mean corr: the authors' stored Fig. 6a ...: 0.98864, consistent with
    ours, so their own figure misses the paper's > 0.99 too"``.
    """
    c, artifact = series.first, series.first.artifact
    misses = series.bound and not _on_side(artifact.value, c.relation, series.target)  # type: ignore[union-attr]
    tail = f", so their own figure misses the paper's {c.paper or c.required} too" if misses else ""
    return f"{series.name}: {series.artifact_note()}{tail}"


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
        sizes = join_words(dict.fromkeys(s.pooled_sample.count for s in pooled))  # type: ignore[union-attr]
        parts.append(f"on {sizes} {pooled[0].how}")
    if once:
        parts.append("once, on data the same at every seed" if n > 1 else "once")
    return "holds " + join_words(parts)


def _decide(series: Sequence[Series], qualifications: Sequence[str], authors: str) -> _Decision:
    """The verdict that ``series`` (of one claim, under one protocol) and the qualifications give.

    A missed number never holds. The authors' stored artifact that shows our value explains it
    (an explanation, beside a negative verdict) only where the check follows the authors'
    protocol: made under ``authors`` (the protocol of the authors' code) or under every one.
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
    quals = tuple(dict.fromkeys(qualifications))
    quals += tuple(f"not decided by this run: {_note(s).split(': ', 1)[1]}" for s in undecided)

    broken = [s for s in sanity if not s.established]
    broken += [
        s for s in evidence if s.basis == "seed-independent" and s.pooled_sample is None and not s.established
    ]
    broken += [s for s in series if s.first.kind in ("finding", "measurement") and s.differs]
    if broken or (per_seed and not holding):
        return _check_failed(broken, per_seed, len(seeds), bool(holding), quals)
    contradicted = [s for s in evidence if s.pooled_sample is not None and not s.established]
    shortfalls = [s for s in findings if s.established] + contradicted
    if shortfalls:
        return _not_reproduced(shortfalls, quals, authors)
    if not evidence:
        return _without_evidence(findings, undecided, sanity, quals)
    basis = _evidence_basis(evidence, seeds, holding)
    if len(holding) < len(seeds) and per_seed:
        failures = tuple(_failure(s) for s in per_seed if s.failed_seeds)
        return _Decision(PARTIAL, basis, failures[0], failures, (), quals)
    quoted = next((s for s in evidence if s.first.paper), evidence[0])
    return _Decision(QUALIFIED if quals else REPRODUCED, basis, quoted.sentence(), (), (), quals)


def _not_reproduced(shortfalls: Sequence[Series], quals: tuple[str, ...], authors: str) -> _Decision:
    """*does not reproduce*: established findings and missed or contradicted evidence.

    Each is quoted with the authors' artifact where one exists; an artifact that shows our value,
    compared under the authors' protocol (``authors``, or every protocol), explains the miss.
    """
    found = tuple(s.sentence() + (f" ({s.artifact_note()})" if s.artifact_note() else "") for s in shortfalls)
    basis = ", and ".join(dict.fromkeys(_shortfall_basis(s) for s in shortfalls))
    explained = tuple(
        _artifact_explains(s) for s in shortfalls if s.protocol in ("", authors) and s.artifact_agrees()
    )
    return _Decision(NOT_REPRODUCED, basis, shortfalls[0].sentence(), (), found, quals, explained)


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
    return _Decision(CHECK_FAILED, ", and ".join(dict.fromkeys(what)), failures[0], failures, (), quals)


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
        basis = join_words(dict.fromkeys(f"a finding not established {s.decided}" for s in findings))
        return _Decision(NOT_ESTABLISHED, basis, findings[0].sentence(), (), (), quals)
    if undecided:
        basis = "its evidence cannot be decided at this run's seeds"
        return _Decision(NOT_ESTABLISHED, basis, quals[-1], (), (), quals)
    if sanity:
        return _Decision(BY_CONSTRUCTION, "sanity checks only", _why_by_construction(sanity), (), (), quals)
    return _Decision(BY_CONSTRUCTION, "no evidence checks", "", (), (), quals)


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
    """``"decided under [authors' loss] (reproduced); under [paper's loss]: does not reproduce, ..."``."""
    (key, decision), (other_key, theirs) = primary, other
    return f"decided under [{key}] ({decision.verdict}); under [{other_key}]: {theirs.verdict}, {theirs.why}"


def claim_verdict(
    claim: str,
    series: Sequence[Series],
    qualifications: Sequence[str] = (),
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
    explains the verdict (:attr:`Verdict.explanations`): it never changes it.

    :attr:`Verdict.why` is chosen by this rule: for a negative verdict, the check that decided it
    (the first failure or established shortfall); else the first evidence check that quotes the
    paper, else the first evidence check; for a claim with sanity checks only, what they check.
    """
    counts = _counts(series)
    if not series:
        return Verdict(claim, NOT_TESTED, counts=counts)
    if protocols is None:
        protocols = declared_protocols(claim)
    if authors is None:
        authors = authors_protocol(claim)
    used = [p for p in dict.fromkeys(s.protocol for s in series) if p]
    extras = _verdict_extras(series, next(iter(protocols), "") if used else "", authors)
    if not used:
        d = _decide(series, qualifications, authors="")
        return _as_verdict(claim, d, counts, extras, d.verdict, d.qualifications)
    keys = [*protocols, *(k for k in used if k not in protocols)]
    decided = _protocol_decisions(series, qualifications, keys, used, authors)
    (first, primary), *others = decided.items()
    words = {k: protocols.get(k, "(not declared in the registry)") for k in keys}
    subs = tuple(ProtocolVerdict(k, words[k], d.verdict, d.basis, d.why) for k, d in decided.items())
    verdict, quals = primary.verdict, primary.qualifications
    differ = [(k, d) for k, d in others if d.verdict != primary.verdict]
    if differ and verdict in POSITIVE:
        verdict = QUALIFIED
        quals += tuple(_protocol_qualification((first, primary), other) for other in differ)
    explained = _protocol_explanations(primary, others, words)
    return _as_verdict(claim, primary, counts, extras, verdict, quals, subs, explained)


def _protocol_explanations(
    primary: _Decision, others: Sequence[tuple[str, _Decision]], words: Mapping[str, str]
) -> tuple[str, ...]:
    """What explains a claim that does not hold as the paper states it, from its other protocols.

    Where it does not hold as stated: each other protocol under which it holds (``"under
    [authors' loss] (the loss ...): reproduced, ..."``). Always: every protocol's artifact that
    shows our missed value.
    """
    holds = tuple(
        f"under [{key}] ({words[key]}): {d.verdict}, {d.why}"
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
        **extras,
    )


def _verdict_extras(series: Sequence[Series], deciding: str, authors: str) -> dict[str, tuple[Any, ...]]:
    """What a claim's verdict shows beside its decision: evidence, measurements beyond, marginal seeds, notes.

    ``deciding`` is the claim's first protocol where its checks name protocols, else ""; ``authors``
    the key of the protocol the authors' code runs ("": one protocol).
    """
    return {
        "evidence": tuple(CheckSummary.of(s) for s in series if s.first.kind == "claim"),
        "beyond": tuple(
            f"{s.name}: {s.quote()}" for s in series if s.first.kind == "measurement" and s.established
        ),
        "marginal": tuple(_marginal(s) for s in series if s.first.kind != "measurement" and s.marginal_seeds),
        "notes": _notes(series, deciding, authors),
    }


def _protocol_decisions(
    series: Sequence[Series],
    qualifications: Sequence[str],
    keys: Sequence[str],
    used: Sequence[str],
    authors: str,
) -> dict[str, _Decision]:
    """The decision under each protocol of ``keys`` that a check names (and the first, always).

    Each is decided on the checks without a protocol and the protocol's own; ``authors`` is the
    key of the protocol the authors' code runs (its artifacts explain a missed number).
    """
    return {
        key: _decide([s for s in series if s.protocol in ("", key)], qualifications, authors=authors)
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
            heads.setdefault(claim, []).extend(texts)
    return {claim: " ".join(texts) for claim, texts in heads.items()}


def sweep_verdicts(claim_ids: Iterable[str], sweeps: Sequence[Sweep]) -> dict[str, Verdict]:
    """The verdict of every id in ``claim_ids`` (in that order) over every chapter's sweep.

    Qualifications and headlines are quoted across the seeds that state them, each number as its
    range and each sample pooled (:func:`statement_across`). Ids without checks are *not tested*.
    """
    by_claim: dict[str, list[Series]] = {}
    quals: dict[str, list[str]] = {}
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


def counted_verdict(count: int, verdict: str) -> str:
    """How many claims have ``verdict``, the verdict as their predicate: ``"2 do not reproduce"``."""
    plural = verdict.replace("does not", "do not").replace("holds at", "hold at")
    return f"{count} {verdict if count == 1 else plural}"
