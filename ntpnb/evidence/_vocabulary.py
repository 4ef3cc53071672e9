"""The one vocabulary in which the evidence is said: samples, checks, outcomes, verdicts and their kinds.

Every word a page, a chapter's printout or a map writes about a decision is made here, from the
decisions the other modules of :mod:`ntpnb.evidence` compute, so that one decision is said one way
wherever it appears. The rules that keep it one:

* a requirement says what is asked and how it is tested, never whether it holds (no "not
  contradicted" beside a "fails": :func:`requirement_words`);
* an outcome is one word of :data:`OUTCOMES`, chosen by what was tested (a bound holds or is
  missed, a consistency is consistent or contradicted, a difference or a finding is established
  or not), and a bound's certainty only ever agrees with it (:func:`outcome_words`);
* a measurement's words come from its number (:func:`signed_words`), never from a direction
  written beforehand;
* a verdict is one of :data:`VERDICTS`, and every verdict but a plain *reproduced* carries its
  kind, one of :data:`KINDS`, in a few words (:data:`KIND_WORDS`).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType

from .. import settings
from .._digits import format_bound, format_estimate
from .._text import join_words
from ._samples import BOUNDS, Sample

# -- counts and seeds ------------------------------------------------------------------------------


def plural(n: int, noun: str) -> str:
    """``"1 seed"``, ``"5 seeds"``, ``"1 worker"``."""
    return f"{n} {noun}{'s' * (n != 1)}"


def seeds_count(n: int) -> str:
    """``"1 seed"``, ``"5 seeds"``."""
    return plural(n, "seed")


def at_seeds(seeds: Sequence[int]) -> str:
    """``"seed 3"``, ``"seeds 2 and 3"``."""
    return f"seed{'s' * (len(seeds) != 1)} {join_words(seeds)}"


def span(numbers: Iterable[int]) -> str:
    """``"0-4"``, ``"1-3 and 5"`` or ``"0, 2 and 5"``: numbers, three or more consecutive as a range."""
    runs: list[list[int]] = []
    for n in sorted(set(numbers)):
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    parts = [[f"{r[0]}-{r[-1]}"] if len(r) > 2 else [str(n) for n in r] for r in runs]
    return join_words(itertools.chain.from_iterable(parts))


def seeds_span(seeds: Sequence[int]) -> str:
    """``"seeds 0-4"`` or ``"seed 3"``."""
    return f"seed{'s' * (len(seeds) != 1)} {span(seeds)}"


# -- a sample in words -----------------------------------------------------------------------------

#: What one value of each test is.
_UNITS = {"estimate": "estimate", "pvalue": "test", "instances": "instance"}


def count_words(sample: Sample) -> str:
    """How many values and what they are: ``"500 trials"``, ``"1 estimate"``, ``"5 tests"``."""
    return plural(sample.size, _UNITS.get(sample.test, "trial"))


def percent(x: float) -> str:
    """``0.004`` as ``"0.4%"``: two significant digits below 10%, whole percents above."""
    value = 100 * x
    if value == 0:
        return "0%"
    return f"{value:.0f}%" if value >= 10 else f"{value:.2g}%"


def _round_up(x: float, digits: int) -> str:
    """``x > 0`` rounded up to ``digits`` significant digits, as ``"2.05e-15"``: a bound stays a bound."""
    if x < settings.PVALUE_PRINT_MIN:  # Fisher's combination underflowed (it is far below this)
        return f"{settings.PVALUE_PRINT_MIN:g}"
    step = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    up = math.ceil(x / step * (1 - 1e-12)) * step  # (1 - 1e-12): x already on the grid stays
    return f"{up:.{digits}g}"


def pvalue_words(sample: Sample, digits: int = 3) -> str:
    """A p-value sample's pooled p: ``"p = 0.763"``, ``"Fisher's combined p ≤ 2.05e-15"``.

    A p-value at its Monte Carlo floor is always written as a bound (``≤``), rounded up, never as
    a point value (the true p may be smaller).
    """
    value = sample.statistic(0.0)[0]
    how = "p" if sample.size == 1 else "Fisher's combined p"
    if sample.at_floor:
        return f"{how} ≤ {_round_up(value, digits)}"
    return f"{how} = {value:.{digits}g}"


def describe_sample(sample: Sample, target: float, digits: int = 3, count: bool = True) -> str:
    """The measurement as printed, e.g. ``"0.9880 ± 0.0006 (100 trials)"`` (``count``: with the count).

    ``"mean"``, ``"estimate"``: the estimate with its standard error, digits set by the error;
    ``"mean_quantile"``: ``"q = 0.016 (100 trials)"``; ``"rate"``: ``"2 of 500 trials (0.4%; 98%
    interval 0.089% to 1.8%)"``; ``"pvalue"``: :func:`pvalue_words` and how many sit at their
    floor; ``"instances"``: ``"0.874 (98% interval 0.80 to 0.95; 5 instances from 0.78 to 0.96; a
    new instance 0.66 to 1.09)"``; ``"median"``: ``"median 8.1 (quartiles 0.62 to 14; 500
    trials)"``; ``"trend"``: ``"exact trend test's one-sided p = 0.00011 (450 trials)"``.
    """
    counted = f" ({count_words(sample)})" if count else ""
    if sample.test == "mean_quantile":
        return f"q = {sample.quantile_of(target):.{digits}g}{counted}"
    if sample.test == "trend":
        return f"exact trend test's one-sided p = {sample.trend_pvalue:.{digits}g}{counted}"
    if sample.test == "pvalue":
        notes = [count_words(sample)] if count else []
        if sample.at_floor:
            at = "at its" if sample.size == 1 else f"{sample.at_floor} at their"
            notes.append(f"{at} Monte Carlo floor")
        if sample.vacuous:
            notes.append("every p is 1: it can reject nothing")
        return pvalue_words(sample, digits) + (f" ({', '.join(notes)})" if notes else "")
    if sample.test == "rate":
        low, high = sample.rate_interval()
        share = f"{percent(sample.estimate()[0])}; {1 - 2 * sample.level:.0%} interval"
        return (
            f"{sample.events} of {plural(sample.size, 'trial')} ({share} {percent(low)} to {percent(high)})"
        )
    if sample.test == "instances":
        return _describe_instances(sample, digits, count)
    if sample.test == "median":
        low, high = sample.quartiles()
        size = f"; {count_words(sample)}" if count else ""
        return f"median {sample.median():.{digits}g} (quartiles {low:.{digits}g} to {high:.{digits}g}{size})"
    return format_estimate(*sample.estimate()) + counted


def _describe_instances(sample: Sample, digits: int, count: bool) -> str:
    mean = sample.estimate()[0]
    if not sample.decidable:
        return f"{mean:#.{digits}g} (1 instance: not decided alone, only over the seeds' instances)"
    (low, high), (new_low, new_high) = sample.instance_intervals()
    g = lambda x: f"{x:.{digits}g}"
    share = f"{1 - 2 * sample.level:.0%}"
    values = f"{count_words(sample)} from " if count else "instances "
    return (
        f"{mean:#.{digits}g} ({share} interval {g(low)} to {g(high)}; {values}"
        f"{g(min(sample.values))} to {g(max(sample.values))}; a new instance {g(new_low)} to {g(new_high)})"
    )


def quote_sample(sample: Sample, digits: int = 3) -> str:
    """The estimate as a sentence quotes it: ``"0.9880 ± 0.0006"``, ``"2 of 500 (0.4%)"``.

    ``"instances"``: the mean and the instances' range, ``"0.874 (instances 0.78 to 0.96)"`` (one
    instance: its value); ``"median"``: ``"median 8.1 (quartiles 0.62 to 14)"``, for heavy-tailed
    values whose mean and standard error would mislead. A ``"mean_quantile"`` or ``"pvalue"``
    sample has no estimate to quote (InvalidDataError, from :meth:`Sample.quotable`).
    """
    sample.quotable()
    if sample.test == "rate":
        return f"{sample.events} of {sample.size} ({percent(sample.estimate()[0])})"
    if sample.test == "median":
        return describe_sample(sample, 0.0, digits, count=False)
    value, se = sample.estimate()
    if sample.test == "instances":
        if sample.size == 1:
            return f"{value:#.{digits}g}"
        low, high = min(sample.values), max(sample.values)
        return f"{value:#.{digits}g} (instances {low:.{digits}g} to {high:.{digits}g})"
    return format_estimate(value, se)


# -- a requirement and an outcome --------------------------------------------------------------------

#: What a check came to across the seeds (:attr:`~ntpnb.evidence._series.Series.outcome`): an
#: exact check *holds* or *fails*; a paper's bound decided on an estimate *holds* or is *missed*;
#: a value the paper reports is *consistent* with ours or *contradicted*; a strict difference,
#: a finding or a measurement is *established* or *not established* (a difference on the wrong
#: side is *missed*); a check the run's seeds cannot decide is *not decided*.
HOLDS = "holds"
FAILS = "fails"
MISSED = "missed"
CONSISTENT = "consistent"
CONTRADICTED = "contradicted"
ESTABLISHED = "established"
NOT_ESTABLISHED = "not established"
NOT_DECIDED = "not decided"
OUTCOMES: tuple[str, ...] = (
    HOLDS,
    FAILS,
    MISSED,
    CONSISTENT,
    CONTRADICTED,
    ESTABLISHED,
    NOT_ESTABLISHED,
    NOT_DECIDED,
)
#: The outcomes that say a check came out as it asks.
POSITIVE_OUTCOMES: frozenset[str] = frozenset({HOLDS, CONSISTENT, ESTABLISHED})

#: A map's decision at a point (:mod:`ntpnb.explore`): a check holds there, fails, or is undecided.
UNDECIDED = "undecided"
#: A map's decision at a point (True, False, None: undecided) in words, as its legends and tables say it.
DECISION_WORDS: Mapping[bool | None, str] = MappingProxyType({True: HOLDS, False: FAILS, None: UNDECIDED})


#: How a requirement writes a relation typed in ASCII: as a reader reads it, never ``<=`` or ``==``.
RELATION_SIGNS = {"<=": "≤", ">=": "≥", "==": "="}


def required_bound(relation: str, target: object, tol: float) -> str:
    """What a check requires of its number: ``"= -1 ± 0.02"``, ``"< 1e-12"``, ``"in [0.8, 1.2]"``."""
    if relation == "in":
        low, high = target  # type: ignore[misc]
        return f"in [{format_bound(low)}, {format_bound(high)}]"
    if relation == "~" and tol > 0:
        return f"= {format_bound(target)} ± {format_bound(tol)}"  # type: ignore[arg-type]
    shown = "=" if relation == "~" else RELATION_SIGNS.get(relation, relation)  # a tolerance of 0: exactly
    return f"{shown} {format_bound(target)}"  # type: ignore[arg-type]


def how_tested(sample: Sample, kind: str, relation: str) -> str:
    """How a sample's check is tested, never whether it passed: ``"on the estimate; a 1% mean test"``.

    A claim's bound is decided on the estimate (its test says only how sure); a consistency by a
    two-sided test; a difference, a finding or a measurement by a one-sided test that must
    establish it; p-values pooled by Fisher's method; 0/1 trials pooled in one exact trend test;
    a ``"mean_quantile"`` value against the central range of our means of as many trials.
    """
    level = f"{sample.level:.0%}"
    if sample.test == "pvalue":
        return "the seeds' p-values pooled by Fisher's method"
    if sample.test == "trend":
        return "the seeds' trials pooled in one exact trend test"
    if sample.test == "mean_quantile":
        central = f"{1 - sample.level:.0%}"
        return f"inside the central {central} of our means of {sample.trials} trials"
    if sample.test == "rate" and relation == "==" and not sample.establishes(kind):
        return "on the count of trials: any one is a counterexample"
    if sample.establishes(kind) or relation not in (*BOUNDS, "~"):
        return f"to be established by a one-sided {level} {sample.test} test"
    if relation in BOUNDS:
        return f"on the estimate; a {level} {sample.test} test says how sure"
    return f"a two-sided {level} {sample.test} test"


def requirement_words(relation: str, target: object, tol: float, sample: Sample | None, kind: str) -> str:
    """What a check requires, as its line prints it.

    ``"> 0.99 (on the estimate; a 1% mean test says how sure)"``; a number's check: its bound alone.
    """
    bound = required_bound(relation, target, tol)
    return bound if sample is None else f"{bound} ({how_tested(sample, kind, relation)})"


#: How sure the side of a bound is, by :meth:`Sample.sureness`'s word.
_SURENESS = {
    "established": "established at the {level} level",
    "contradicted": "contradicted at the {level} level",
    "noise": "within the test's noise at the {level} level",
}


def certainty_words(sample: Sample, relation: str, target: float) -> str:
    """How sure a bound's side is: ``"contradicted at the 1% level"`` ("": no bound on an estimate)."""
    word = sample.sureness(relation, target)
    return _SURENESS[word].format(level=f"{sample.level:.0%}") if word else ""


# -- a check at one seed ---------------------------------------------------------------------------

#: What a block of checks says of each printed result: an open check (a statistical one this
#: seed's trials do not bear out, a measurement that does not hold here) is decided by the
#: report, over every seed's trials.
RESULT_WORDS = {"PASS": "passed", "FAIL": "failed", "FOUND": "found", "OPEN": "decided across the seeds"}


def check_label(claim: str, kind: str, protocol: str) -> str:
    """A check's claim id, its kind unless evidence, its protocol if any: ``"B11 (finding) [all]"``."""
    label = claim if kind == "claim" else f"{claim} ({kind})"
    return f"{label} [{protocol}]" if protocol else label


# -- a change, signed ---------------------------------------------------------------------------------


def signed_words(value: float, below: str, above: str, zero: str = "equals") -> str:
    """The word a number's sign gives: ``below`` for a negative, ``above`` for a positive one.

    A measurement's words are chosen this way from its number (``signed_words(lag, "lags",
    "leads")``), so that they always agree with its sign.
    """
    return below if value < 0 else above if value > 0 else zero


def describe_change(change: float, se: float) -> str:
    """How a measured quantity moved, with its standard error, in words.

    ``"changes by +0.010 ± 0.020 (within 2 standard errors)"`` or ``"falls by 0.080 ± 0.020 (4.0
    standard errors)"`` (or ``"rises"``).

    Raises
    ------
    InvalidDataError
        If ``se`` is not a positive finite number or ``change`` is not finite.
    """
    from ..errors import InvalidDataError

    change, se = float(change), float(se)
    if not (math.isfinite(change) and math.isfinite(se) and se > 0):
        raise InvalidDataError(f"describe_change needs a finite change and se > 0, got {change}, {se}")
    z = change / se
    if abs(z) < 2:
        return f"changes by {change:+.3f} ± {se:.3f} (within 2 standard errors)"
    return (
        f"{signed_words(z, 'falls', 'rises')} by {abs(change):.3f} ± {se:.3f} ({abs(z):.1f} standard errors)"
    )


def listed(items: Iterable[str]) -> str:
    """Distinct phrases joined in a sentence, each once: ``"a, b and c"``."""
    return join_words(dict.fromkeys(items))


# -- verdicts and their kinds ----------------------------------------------------------------------

REPRODUCED = "reproduced"
QUALIFIED = "reproduced with a qualification"
PARTIAL = "holds at some seeds"
NOT_REPRODUCED = "does not reproduce"
# NOT_ESTABLISHED, the outcome above, is also the verdict of a claim whose evidence is not established
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

#: The kinds of a verdict other than a plain *reproduced*, by the verdict they go with, each in a
#: few words (the badge's second line) and decided by the rule :data:`KIND_RULE` states.
COUNTEREXAMPLE = "a counterexample"
FAILS_AS_STATED = "fails as stated, holds under the authors' code"
VALUE_MISSED = "short of the paper's value"
OVERSTATED = "the text overstates the paper's own figure"
PROTOCOL_DIFFERS = "holds as stated, not under another protocol"
UNDECIDED_EVIDENCE = "some evidence undecided at these seeds"
HORIZON = "not yet at its limit at the paper's horizon"
FINITE_SIZE = "an asymptotic statement checked at a finite size"
STATED_LIMIT = "a stated limit of the evidence"
SOME_SEEDS = "fails at some seeds"
FINDING_OPEN = "a finding not established"
SANITY_ONLY = "only sanity checks"
NO_EVIDENCE = "no evidence checks"
SANITY_FAILS = "a sanity check fails"
EVIDENCE_NOWHERE = "the evidence holds at no seed"
NOT_CHECKED = "no chapter of this run checks it"
KINDS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        REPRODUCED: ("",),
        QUALIFIED: (OVERSTATED, PROTOCOL_DIFFERS, UNDECIDED_EVIDENCE, HORIZON, FINITE_SIZE, STATED_LIMIT),
        PARTIAL: (SOME_SEEDS,),
        NOT_REPRODUCED: (FAILS_AS_STATED, COUNTEREXAMPLE, VALUE_MISSED),
        NOT_ESTABLISHED: (FINDING_OPEN, UNDECIDED_EVIDENCE),
        BY_CONSTRUCTION: (SANITY_ONLY, NO_EVIDENCE),
        NOT_TESTED: (NOT_CHECKED,),
        CHECK_FAILED: (SANITY_FAILS, EVIDENCE_NOWHERE),
    }
)

#: What a chapter's qualification says limits its evidence (:meth:`~ntpnb.chapter.ClaimLog.qualify`'s
#: ``limit``), and the kind it gives a qualified verdict: the paper's horizon, a finite size, or
#: any other stated limit.
LIMITS: Mapping[str, str] = MappingProxyType({"horizon": HORIZON, "size": FINITE_SIZE, "": STATED_LIMIT})


def verdict_words(verdict: str, kind: str) -> str:
    """The verdict with its kind, as every page names it: ``"does not reproduce (a counterexample)"``."""
    return f"{verdict} ({kind})" if kind else verdict


def counted_verdict(count: int, verdict: str) -> str:
    """How many claims have ``verdict``, the verdict as their predicate: ``"2 do not reproduce"``."""
    plural_form = verdict.replace("does not", "do not").replace("holds at", "hold at")
    return f"{count} {verdict if count == 1 else plural_form}"


#: How a verdict's kind is decided, as the report states it.
KIND_RULE = (
    "**The kind of a verdict.** Every verdict but a plain *reproduced* names its kind, decided by "
    "rule from the checks. A claim that *does not reproduce* *fails as stated, holds under the "
    "authors' code* where its verdict under the protocol of the authors' code is positive; else it "
    "meets *a counterexample* where a finding is established exactly on one instance (no sampling "
    "noise: a count, a fixed corpus); else it falls *short of the paper's value* (a statistical shortfall). "
    "A claim *reproduced with a qualification* has, first that applies: *the text overstates the "
    "paper's own figure* where every shortfall is a bound that the authors' own stored figure misses "
    "too, and our value agrees with that figure within noise (the bound still reads *missed*); "
    "*holds as stated, not under another protocol*; *some evidence undecided at these seeds*; *not "
    "yet at its limit at the paper's horizon* where the chapter measures that a limit the paper "
    "states (k → ∞) is not reached at the paper's horizon; *an asymptotic statement checked at a "
    "finite size* where the paper's statement holds as a size grows; else *a stated limit of the "
    "evidence*."
)

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
    "**A requirement and an outcome.** A check says what it requires and how it is tested, and then "
    "one outcome: an exact check *holds* or *fails*; a value the paper reports (*≈ 0.987*) is "
    "*consistent* with ours or *contradicted* by a test at a stated error rate; a strict difference, "
    "a finding or a measurement is *established* or *not established*. Where the paper says a value "
    "lies above or below a number (*> 0.99*), the claim *holds* where our estimate lies on that side "
    "and is *missed* where it does not, whatever a test says: a test only says how sure the side is "
    "(*established*, *contradicted*, or *within the test's noise* at its level), so running more "
    "seeds can make a decision surer but cannot turn a missed bound into one that holds. A true "
    "value a few standard errors from the bound is missed with a small stated chance (three "
    "standard errors: 0.13%); one within the noise is a coin, and the card says so. A difference "
    "whose estimate lies on its side within the noise is *not decided*.",
    "**Kinds of check.** *Evidence* would fail were the paper's claim false; a *sanity* check "
    "tests the code or the setting (an identity, a property of our instance, a solver against a "
    "proved result, a quantity that holds by the construction of our code): it is never evidence; "
    "a *finding* states that a paper's number is missed, and holds only when the data establish "
    "it; a *measurement* is a statement of ours beyond the paper (a drift, a fitted offset, a map), "
    "decided pooled and shown beside the claim: it never qualifies the claim.",
    "**Protocols.** Where the paper and the authors' code differ (a loss, a trial filter), the "
    "claim names its protocols, and a check made under one of them says which; a check that names "
    "none holds under every protocol. The verdict is decided under each protocol from the checks "
    "common to all and that protocol's own; the claim's verdict is the one under its first "
    "protocol, the claim as the paper states it, and the others are shown beside it in words. Where "
    "another protocol's verdict is negative, a positive verdict becomes *reproduced with a "
    "qualification*; where the claim does not hold as stated but holds under the authors' code, "
    "that is its kind: the verdict stays the stated claim's.",
    "**The verdict of a claim.** *reproduced*: every evidence check holds. *reproduced with a "
    "qualification*: it holds, and a stated limit applies: a qualification of the chapter (its "
    "numbers as ranges over the seeds), a protocol under which the verdict differs, an evidence "
    "check that this run's seeds cannot decide, or a bound the paper's own figure misses as ours "
    "does. *holds at some seeds*: an evidence check decided at each seed fails at some seeds "
    "(named). *does not reproduce*: a finding is established (pooled, at each seed, or once), or a "
    "statistical evidence check is missed or contradicted pooled; our number and the paper's are "
    "quoted, and the authors' stored artifact's where one exists. *not established*: the claim's "
    "only checks are findings the data do not establish, or evidence this run cannot decide. *by "
    "construction*: the claim has sanity checks only. *check failed*: a sanity check failed at "
    "some seed, or the evidence holds at none. *not tested*: no chapter of this run checks it. A "
    "statistical check that holds pooled but that some seed's own trials do not bear out is "
    "*marginal*: those seeds and their numbers are named beside the verdict.",
    KIND_RULE,
    "**What a chapter prints.** A check decided at each seed prints `[PASS]` or `[FAIL]`, and a "
    "`[FAIL]` at the book's seed fails the run (at the other seeds it is counted here); a failed "
    "line prints as many digits as it takes to see the failure. A statistical check prints "
    "`[PASS]`, or `[OPEN]` where one seed's trials do not bear it out; it never fails the run. A "
    "finding or measurement prints `[FOUND]` where it holds and `[OPEN]` where it does not, never "
    "`[FAIL]`. A check made under one protocol names it in brackets after the claim id: "
    "`[PASS] B10 [paper's loss] ...`.",
)


# -- a claim's checks in a card ----------------------------------------------------------------------

#: How a card counts a claim's checks of each kind: the noun, and what a check of that kind is for.
_KIND_NOUNS = {
    "claim": ("evidence check", ""),
    "finding": ("finding", ""),
    "sanity": ("sanity check", " (they test the code or the setting, never the claim)"),
    "measurement": ("measurement", " (ours, beyond the paper)"),
}


def checks_count(kind: str, outcomes: Sequence[str]) -> str:
    """How many checks of ``kind`` and how they came out, in the outcomes' own words.

    ``"3 evidence checks: 3 hold"``, ``"2 findings: 2 established"``, ``"1 sanity check: holds
    (they test ...)"``, ``"4 evidence checks: 3 hold, 1 missed"``.
    """
    noun, aside = _KIND_NOUNS[kind]
    if len(outcomes) == 1:
        return f"1 {noun}: {outcomes[0]}{aside}"
    return f"{plural(len(outcomes), noun)}: {tally(outcomes)}{aside}"


def _plural_verb(outcome: str) -> str:
    """``"holds"`` -> ``"hold"``, ``"fails"`` -> ``"fail"`` (the other outcomes read the same)."""
    return {HOLDS: "hold", FAILS: "fail"}.get(outcome, outcome)


def tally(outcomes: Sequence[str]) -> str:
    """How a set of checks came out, each outcome counted in its own word: ``"44 hold, 1 missed"``."""
    counts = Counter(outcomes)
    return ", ".join(f"{n} {_plural_verb(word) if n > 1 else word}" for word, n in counts.items())


def chapter_tally(outcomes: Sequence[str], seeds: Sequence[int]) -> str:
    """A chapter's checks across the seeds, as its page and the report both say it.

    ``"45 checks across seeds 0-4: 44 hold, 1 missed"``.
    """
    return f"{plural(len(outcomes), 'check')} across {seeds_span(seeds)}: {tally(outcomes)}"
