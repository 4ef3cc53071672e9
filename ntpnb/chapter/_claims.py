"""Claim checks: compare a number with a paper, print one stable line, record it, fail at the end.

Each notebook makes a :class:`ClaimLog` and calls :meth:`ClaimLog.check` for every number it
compares with a paper. A check prints one line (rounded, so nbval can compare it) and is recorded
in ``outputs/claims/<notebook>.json`` (one :class:`ChapterRecord`, with the run's platform). A
failed check does not stop the chapter: its last cell, :meth:`ClaimLog.conclude`, raises one
:class:`~ntpnb.errors.ClaimCheckError` listing every failed check. A statistical check (of a
:class:`~ntpnb.statistics.Sample`) is tested at the run's seed but decided pooled over
the sweep's seeds (:mod:`ntpnb.book._verdicts`), so one seed's failure does not fail the chapter.

The kinds of check (:data:`KINDS`): a ``"claim"`` is evidence (it would fail were the paper
wrong); a ``"finding"`` pins the measured shortfall of a claim that does *not* reproduce and
quotes the paper; a ``"sanity"`` check tests the code or setting (an invariant, a property of our
instance, a solver agreeing with a proof); a ``"measurement"`` is our own statement beyond the
paper (a drift, a fitted offset, a map), always statistical, decided pooled like a finding,
shown beside the claim, never evidence, never a qualification, never failing the run.
Non-evidence kinds print after the claim id. :meth:`ClaimLog.qualify` attaches a
qualification to a claim, its numbers kept apart from its words so that the verdicts quote them
as ranges over the seeds; each claim's verdict follows from the records (:mod:`ntpnb.book._verdicts`).

**Protocols.** Where the paper and the authors' code differ (a loss, a trial filter), the
registry declares the claim's protocols (:attr:`~ntpnb.chapter._registry.ClaimSpec.protocols`,
the first the one the claim's verdict is decided under) and a check made under one of them
passes ``protocol=<key>``: its line prints the key in square brackets after the label,
``[PASS] B10 [paper's loss] mean corr ...`` (:data:`CHECK_LINE` parses it). A check without a
protocol holds under every protocol. :meth:`ClaimLog.check` refuses a key the registry does not
declare for the claim.

How a check is decided (:attr:`Check.basis`): a statistical or count check (with a sample) pooled
over the sweep's seeds; a check the chapter declares ``seed_independent`` (its data do not depend
on the seed) once; any other check at each seed. What a line prints (:attr:`Check.result`):
``PASS`` or ``FAIL`` for a check decided at each seed (a ``FAIL`` at the book's seed fails the
run); a statistical check prints ``PASS``, or ``OPEN`` when this seed's sample alone does not
bear it out (the sweep decides it pooled, and it never fails the run); a finding or measurement
prints ``FOUND`` where it holds and ``OPEN`` where it does not, never ``FAIL``.

A check may name the value the authors' own stored artifact shows (:class:`Artifact`): the
verdicts compare it with the pooled sample, and a finding that the paper's text is missed, where
the authors' artifact shows our value and the check follows the authors' protocol, is a
qualification of the text, not a failure.

A failed line prints its measured value with as many significant digits (up to 17) as it takes
for the printed number itself to violate the requirement (:func:`failing_number`); a line that
holds prints the rounded value.
"""

from __future__ import annotations

import json
import math
import re
import string
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields
from numbers import Integral, Real
from pathlib import Path
from typing import Any

from .._digits import format_number
from .._samples import Sample
from .._templates import render_inline
from ..errors import ClaimCheckError, InvalidDataError
from ._layout import output_layout
from ._outputs import atomic_write_text, read_record
from ._platform import platform_info
from ._registry import CLAIMS, MAP_KINDS, MAPS, PROTOCOL_KEY, declared_protocols

Target = float | tuple[float, float]

#: What a line prints before the claim id (see the module docstring), and the results that are
#: not failures of the run.
RESULTS: tuple[str, ...] = ("PASS", "FAIL", "FOUND", "OPEN")

#: The first line a check prints (:attr:`Check.line`), parsed: its result, claim id, kind (none
#: for evidence), protocol (none for a check under every protocol) and what it measured.
CHECK_LINE = re.compile(
    r"^\[(?P<result>PASS|FAIL|FOUND|OPEN)\] (?P<claim>\S+) (?:\((?P<kind>\w+)\) )?"
    r"(?:\[(?P<protocol>[^\]]+)\] )?(?P<what>.*)$"
)

#: The relations a check can assert between the measured value and its target.
RELATIONS: dict[str, Callable[[float, Target, float], bool]] = {
    "<": lambda v, t, tol: v < t,
    "<=": lambda v, t, tol: v <= t,
    ">": lambda v, t, tol: v > t,
    ">=": lambda v, t, tol: v >= t,
    "~": lambda v, t, tol: abs(v - t) <= tol,
    "in": lambda v, t, tol: t[0] <= v <= t[1],
    "==": lambda v, t, tol: v == t,
}


#: The kinds of check (see the module docstring).
KINDS: tuple[str, ...] = ("claim", "sanity", "finding", "measurement")

#: The profiles a chapter runs at, which its record names: ``paper`` (the papers' settings) and
#: ``quick`` (the seconds-scale run of the test suite). Their parameter values are the runner's.
PROFILE_NAMES: tuple[str, ...] = ("paper", "quick")


def failing_number(value: float, relation: str, target: Target, tol: float, digits: int) -> str:
    """``value`` as a failed check prints it: enough significant digits to violate the requirement.

    From ``digits`` up to 17 (which give back the float itself), the first rounding whose printed
    number fails ``value <relation> target`` too: ``1.0000665`` against ``= 1 ± 1e-06`` prints
    ``1.00007``, not ``1.000``.
    """
    if isinstance(value, (bool, int)):
        return str(value)
    for d in range(digits, 18):
        text = format_number(value, d)
        if not RELATIONS[relation](float(text), target, tol):
            return text
    return repr(float(value))


@dataclass(frozen=True)
class Artifact:
    """A value the authors' own stored artifact shows, to compare with ours (see the module docstring)."""

    #: What it is and where it is stored (a figure's path and the commit).
    source: str
    #: The value it shows (a curve's last point, read off the figure).
    value: float
    #: How many trials it is a mean of (0: an exact value, no sampling noise).
    trials: int = 0
    #: How far the reading may be from what the authors computed.
    precision: float = 0.0

    def __post_init__(self) -> None:
        if not (isinstance(self.source, str) and self.source.strip()):
            raise InvalidDataError("an artifact needs a source (what it is and where it is stored)")
        value, precision = float(self.value), float(self.precision)
        if not (math.isfinite(value) and math.isfinite(precision) and precision >= 0):
            raise InvalidDataError(
                f"an artifact needs a finite value and precision >= 0, got {self.value!r}, {self.precision!r}"
            )
        if isinstance(self.trials, bool) or not isinstance(self.trials, int) or self.trials < 0:
            raise InvalidDataError(f"an artifact's trials must be a whole number >= 0, got {self.trials!r}")
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "precision", precision)

    def consistent_with(self, sample: Sample) -> bool:
        """Whether ``sample`` (pooled) agrees with this value (:meth:`Sample.consistent_with`'s rule)."""
        return sample.consistent_with(self.value, self.trials, self.precision)


def check_label(claim: str, kind: str, protocol: str) -> str:
    """A check's claim id, its kind unless evidence, its protocol if any: ``"B11 (finding) [all]"``."""
    label = claim if kind == "claim" else f"{claim} ({kind})"
    return f"{label} [{protocol}]" if protocol else label


@dataclass(frozen=True)
class Check:
    """One claim check: the measured value, the relation asserted, and the outcome."""

    claim: str
    what: str
    value: float
    relation: str
    target: Target
    tol: float
    paper: str
    passed: bool
    profile: str
    kind: str = "claim"
    measured: str = ""  # the value as printed (rounded)
    sample: Sample | None = None  # a statistical check's sample, pooled over the seeds
    #: Declared by the chapter: the check's data do not depend on the seed (decided once).
    seed_independent: bool = False
    #: The value the authors' own stored artifact shows, if any.
    artifact: Artifact | None = None
    #: The protocol it was made under (a key of the claim's registry entry); "": every protocol.
    protocol: str = ""

    def __post_init__(self) -> None:
        # both doors pass here: ClaimLog.check and a record read back from disk
        test = self.sample.test if self.sample is not None else None
        if self.artifact is not None and test in ("rate", "pvalue"):
            raise InvalidDataError(
                f"claim {self.claim}: a stored value is compared with a mean, not with a {test} test"
            )
        if self.protocol != "" and not (isinstance(self.protocol, str) and PROTOCOL_KEY.match(self.protocol)):
            raise InvalidDataError(f"claim {self.claim}: {self.protocol!r} is not a protocol's key")

    @property
    def basis(self) -> str:
        """How the check is decided: ``"seed-independent"``, ``"pooled"`` or ``"per seed"``.

        A seed-independent check is decided once, on its sample if it has one (the same trials
        at every seed: pooling them would count each trial once per seed).
        """
        if self.seed_independent:
            return "seed-independent"
        return "pooled" if self.sample is not None else "per seed"

    @property
    def line(self) -> str:
        """The rounded, human-readable form printed by :meth:`ClaimLog.check` (two lines)."""
        paper = f"; paper: {self.paper}" if self.paper else ""
        stored = f"; authors' stored: {self.artifact.value:g}" if self.artifact else ""
        measured = f"measured {self.measured}; required {self.required}{paper}{stored}"
        return f"[{self.result}] {self.label} {self.what}\n       {measured}"

    @property
    def result(self) -> str:
        """What the line prints (one of :data:`RESULTS`; see the module docstring)."""
        if self.kind in ("finding", "measurement"):
            return "FOUND" if self.passed else "OPEN"
        if self.passed:
            return "PASS"
        return "OPEN" if self.sample is not None else "FAIL"  # a statistical check is decided pooled

    @property
    def label(self) -> str:
        """The claim id, its kind unless evidence, its protocol if any: ``"B11 (finding) [every trial]"``."""
        return check_label(self.claim, self.kind, self.protocol)

    @property
    def required(self) -> str:
        """What the check requires of the value, as printed: ``"= -1 ± 0.02"``, ``"< 1e-12"``."""
        if self.relation == "in":
            required = f"in [{self.target[0]:g}, {self.target[1]:g}]"  # type: ignore[index]
        elif self.relation == "~":
            required = f"= {self.target:g} ± {self.tol:g}"
        else:
            required = f"{self.relation} {self.target:g}"
        return required + (
            f", {self.sample.requirement(self.kind, self.relation)}" if self.sample is not None else ""
        )

    @property
    def failure(self) -> str:
        """One line for a failed check: id, what, measured, relation, required value, tolerance."""
        target = list(self.target) if isinstance(self.target, tuple) else self.target
        return (
            f"{self.label} {self.what}: measured {self.measured}; required {self.required} "
            f"(relation {self.relation}, value {target}, tolerance {self.tol:g})"
        )

    @classmethod
    def from_json(cls, data: Mapping[str, Any], profile: str = "") -> Check:
        """The check a record holds; ``profile``, ``""`` and the value to 4 digits fill in old ones."""
        known = {f.name for f in fields(cls)}
        values = {"paper": "", "profile": profile} | {k: v for k, v in data.items() if k in known}
        if isinstance(values["target"], list):
            values["target"] = tuple(values["target"])
        values["measured"] = values.get("measured") or format_number(values["value"], 4)
        if values.get("sample") is not None:
            values["sample"] = Sample(**values["sample"])  # validated as any sample is
        if values.get("artifact") is not None:
            values["artifact"] = Artifact(**values["artifact"])
        return cls(**values)


#: The tests whose pooled estimate a statement can quote (a quantile or a p-value is no number to quote).
STATEMENT_TESTS: tuple[str, ...] = ("mean", "estimate", "rate", "instances")


@dataclass(frozen=True)
class Statement:
    """A sentence about a claim: words with ``{name}`` fields, its numbers and samples kept apart.

    A *qualification* (a stated limit of the claim's evidence, :meth:`ClaimLog.qualify`) and a
    *headline* (the sentence the report's summary shows for the claim, :meth:`ClaimLog.headline`)
    are statements. Each number varies with the seed and is quoted as its range over the seeds;
    each sample (a :class:`~ntpnb.statistics.Sample` of a test of :data:`STATEMENT_TESTS`) is
    pooled over the seeds and quoted as its estimate (:meth:`Sample.quote`).
    """

    claim: str
    #: The words, with a ``{name}`` or ``{name:.3f}`` field for each number and a ``{name}`` field
    #: (no format) for each sample.
    text: str
    numbers: Mapping[str, float] = field(default_factory=dict)
    samples: Mapping[str, Sample] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not (isinstance(self.text, str) and self.text.strip()):
            raise InvalidDataError(f"claim {self.claim}: a statement needs a non-empty text")
        object.__setattr__(self, "text", self.text.strip())
        object.__setattr__(self, "numbers", self._checked_numbers())
        object.__setattr__(self, "samples", self._checked_samples())
        fields_used = {name for _, name, _, _ in string.Formatter().parse(self.text) if name}
        given = set(self.numbers) | set(self.samples)
        if fields_used != given or set(self.numbers) & set(self.samples):
            raise InvalidDataError(
                f"claim {self.claim}: the statement's fields {sorted(fields_used)} and its numbers "
                f"and samples {sorted(self.numbers)} {sorted(self.samples)} differ"
            )
        self.rendered  # noqa: B018 (a field's format must suit its number)

    def _checked_numbers(self) -> dict[str, float]:
        numbers = {}
        for name, value in dict(self.numbers).items():
            if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
                raise InvalidDataError(
                    f"claim {self.claim}: statement number {name} = {value!r} is not finite"
                )
            numbers[name] = int(value) if isinstance(value, Integral) else float(value)  # numpy's as Python's
        return numbers

    def _checked_samples(self) -> dict[str, Sample]:
        samples = {}
        for name, sample in dict(self.samples).items():
            if isinstance(sample, Mapping):
                sample = Sample(**sample)  # as a record holds it, validated as any sample is
            if not isinstance(sample, Sample) or sample.test not in STATEMENT_TESTS:
                raise InvalidDataError(
                    f"claim {self.claim}: statement sample {name} must be a Sample of a test in "
                    f"{list(STATEMENT_TESTS)}, got {sample!r}"
                )
            samples[name] = sample
        return samples

    def render(self, numbers: Mapping[str, Any], samples: Mapping[str, Sample]) -> str:
        """The text with ``numbers`` and the samples' quotes (InvalidDataError if a format misfits)."""
        try:
            return self.text.format(**numbers, **{k: s.quote() for k, s in samples.items()})
        except (ValueError, TypeError, IndexError) as exc:
            raise InvalidDataError(f"claim {self.claim}: statement {self.text!r}: {exc}") from None

    @property
    def rendered(self) -> str:
        """The text at this seed: its numbers, and its samples' estimates at this seed."""
        return self.render(self.numbers, self.samples)


#: A qualification of a claim is a :class:`Statement` (:meth:`ClaimLog.qualify`).
Qualification = Statement


@dataclass(frozen=True)
class ChapterRecord:
    """What one run of a chapter recorded: its checks, its qualifications and its platform."""

    #: The notebook's name (file stem), the profile it ran at, every check in the order made.
    notebook: str
    profile: str
    checks: tuple[Check, ...] = ()
    #: Every qualification (:meth:`ClaimLog.qualify`).
    qualifications: tuple[Statement, ...] = ()
    #: :func:`~ntpnb.chapter._platform.platform_info` of the kernel that ran it (None in older records).
    platform: Mapping[str, Any] | None = None
    #: The seed the chapter ran at (None when it did not say).
    seed: int | None = None
    #: Whether the chapter ran to its end (:meth:`ClaimLog.conclude`), so every check is recorded.
    complete: bool = False
    #: Every parameter of the run, recorded by ``ntpnb reproduce`` (None outside the runner): the
    #: verdicts pool only seeds of runs that differ in nothing else.
    parameters: Mapping[str, Any] | None = None
    #: The headline of each claim this chapter leads (:meth:`ClaimLog.headline`).
    headlines: tuple[Statement, ...] = ()

    @property
    def failed(self) -> tuple[Check, ...]:
        """The checks that failed and fail the chapter (those that print ``FAIL``)."""
        return tuple(c for c in self.checks if c.result == "FAIL")

    def dump(self) -> str:
        """The record as JSON text, as ``<output>/claims/<notebook>.json`` holds it."""
        return json.dumps(asdict(self), indent=1) + "\n"

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ChapterRecord:
        """The record :meth:`dump` wrote, parsed (see :meth:`Check.from_json` for older ones)."""
        profile = data.get("profile", "")
        return cls(
            notebook=data["notebook"],
            profile=profile,
            checks=tuple(Check.from_json(c, profile) for c in data.get("checks", [])),
            qualifications=_statements(data.get("qualifications", [])),
            platform=data.get("platform"),
            seed=data.get("seed"),
            complete=bool(data.get("complete", False)),
            parameters=data.get("parameters"),
            headlines=_statements(data.get("headlines", [])),
        )


def _statement(claim: str, text: str, values: Mapping[str, float | Sample]) -> Statement:
    """A statement of ``claim`` whose ``values`` are numbers and samples, sorted by kind."""
    samples = {k: v for k, v in values.items() if isinstance(v, Sample)}
    return Statement(claim, text, {k: v for k, v in values.items() if k not in samples}, samples)  # type: ignore[misc]


def _statements(items: Any) -> tuple[Statement, ...]:
    """The statements a record holds (each validated as any statement is)."""
    return tuple(Statement(q["claim"], q["text"], q.get("numbers", {}), q.get("samples", {})) for q in items)


def load_chapter_record(path: Path) -> ChapterRecord:
    """The chapter record in the JSON file ``path``; PathError naming it if it does not hold one."""
    return read_record(path, "claim record", ChapterRecord.from_json)


def load_chapter_records(folder: Path) -> list[ChapterRecord]:
    """Every chapter record in ``folder`` (``*.json``, by file name; none if it does not exist)."""
    return [load_chapter_record(path) for path in sorted(Path(folder).glob("*.json"))]


class ClaimLog:
    """The claim checks of a run of ``notebook`` (file stem), written to ``<output>/claims/<notebook>.json``.

    ``profile`` (one of :data:`PROFILE_NAMES`) and ``seed`` are recorded; ``output_dir`` is the
    output tree's root (None: ``<project root>/outputs``).
    """

    def __init__(
        self, notebook: str, profile: str, output_dir: str | Path | None = None, seed: int | None = None
    ) -> None:
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise InvalidDataError(f"the seed must be an integer, got {seed!r}")
        self.notebook = notebook
        self.profile = profile
        self.seed = seed
        self.path = output_layout(output_dir).claims / f"{notebook}.json"
        self.checks: list[Check] = []
        self.qualifications: list[Statement] = []
        self.headlines: list[Statement] = []
        self.platform = platform_info()
        self.complete = False
        self._shown = (0, 0)  # checks and qualifications shown by section() so far
        self._write()

    def check(
        self,
        claim: str,
        what: str,
        value: float | Sample,
        relation: str,
        target: Target,
        *,
        tol: float = 0.0,
        paper: str = "",
        digits: int | None = None,
        floor: float | None = None,
        kind: str = "claim",
        seed_independent: bool = False,
        artifact: Artifact | None = None,
        protocol: str = "",
    ) -> Outcome:
        """Test ``value <relation> target``, print the outcome, record it; return whether it holds.

        A failed check does not stop the chapter (:meth:`conclude` raises). The printed value is
        rounded to ``digits`` (default 4); targets and tolerances print as given; the record keeps
        the full value.

        A :class:`~ntpnb.statistics.Sample` as ``value`` is a statistical check: tested at
        this seed, recorded whole, and decided pooled over the sweep (its outcome here never fails
        the chapter); it prints its estimate to ``digits`` (default 3), with no ``floor``.

        Parameters
        ----------
        claim
            Claim id, as listed on the book's Claims page (e.g. ``"A2"``), or a map's id
            (:data:`~ntpnb.chapter._registry.MAPS`, ``"M1"``) with a sanity or measurement kind.
        what
            What was measured, in words, the same at every seed (no measured number), so that a
            sweep's checks can be matched.
        relation
            One of :data:`RELATIONS`: ``<, <=, >, >=, ==``; ``~`` (``|value - target| <= tol``);
            ``in`` (``target`` is an interval ``(lo, hi)``).
        paper
            What the paper reports, quoted for the reader.
        floor
            Print ``< floor`` below this magnitude (rounding noise).
        kind
            ``"claim"``, ``"finding"`` or ``"sanity"`` (see the module docstring); a
            ``"measurement"`` is statistical.
        seed_independent
            The measured data do not depend on the seed (a fixed corpus, a fixed instance): the
            check is decided once, and the verdicts verify that every seed measured the same.
        artifact
            The value the authors' own stored artifact shows (statistical checks only).
        protocol
            The protocol the check is made under, a key the registry declares for ``claim``
            (:attr:`~ntpnb.chapter._registry.ClaimSpec.protocols`); ``""``: it holds under every
            protocol.

        Raises
        ------
        InvalidDataError
            On an unknown relation or kind, a protocol the registry does not declare for the
            claim, a measurement of a number, a sample with a ``floor``, an artifact beside a
            number or a rate or p-value sample, a relation the sample's test does not take, or
            a non-finite value.
        """
        if claim in MAPS and kind not in MAP_KINDS:  # a map's point, unrecorded, may require as a claim
            raise InvalidDataError(
                f"map {claim}: a map's numbers are ours, never a paper's claim: kind {kind!r} is not one "
                f"of {list(MAP_KINDS)}"
            )
        if self.complete:
            raise InvalidDataError(f"claim {claim}: {what!r} checked after the chapter concluded")
        check = decided_check(
            claim,
            what,
            value,
            relation,
            target,
            tol=tol,
            paper=paper,
            digits=digits,
            floor=floor,
            kind=kind,
            seed_independent=seed_independent,
            artifact=artifact,
            protocol=protocol,
            profile=self.profile,
        )
        self.checks.append(check)
        self._write()
        print(check.line)
        return Outcome(check)

    def qualify(self, claim: str, text: str, **values: float | Sample) -> None:
        """Attach a qualification (a stated limit of what its evidence shows) to ``claim``, print it.

        ``text`` holds a ``{name}`` field (with a format, ``{name:.3f}``) for each number of
        ``values``, which vary with the seed, and a ``{name}`` field for each sample, pooled over
        the seeds; its words must not vary (the verdicts match a qualification across the seeds by
        its words and quote each number's range). The claim's verdict becomes *reproduced with a
        qualification* (if its evidence passes).

        Raises
        ------
        InvalidDataError
            On an empty text, a number that is not finite, or fields and values that differ.
        """
        qualification = _statement(claim, text, values)
        self.qualifications.append(qualification)
        self._write()
        print(f"[NOTE] {claim} qualification: {qualification.rendered}")

    def headline(self, claim: str, text: str, **values: float | Sample) -> None:
        """State the sentence the report's summary shows for ``claim``: what was measured, against the paper.

        One sentence a referee would write, in MyST (math as ``$...$``): the decisive measured
        value against the paper's and, where the claim is qualified or missed, the reason. Its
        fields are filled as :meth:`qualify`'s (numbers as ranges over the seeds, samples pooled);
        its words must not depend on the outcome (the verdict, beside it, says that). One
        headline per claim, made by the chapter that leads it; recorded, not printed.

        Raises
        ------
        InvalidDataError
            On a claim the registry does not hold, a second headline for it, or a statement
            :class:`Statement` refuses.
        """
        if claim not in CLAIMS:
            raise InvalidDataError(f"a headline is of a claim of the registry, not {claim!r}")
        if any(h.claim == claim for h in self.headlines):
            raise InvalidDataError(f"claim {claim} already has a headline in {self.notebook}")
        self.headlines.append(_statement(claim, text, values))
        self._write()

    def section(self) -> ClaimTable | None:
        """The checks and qualifications made since the last call, as one collapsed block.

        A section's last cell shows it; None (nothing shown) when the section made none.
        """
        checks = tuple(self.checks[self._shown[0] :])
        qualifications = tuple(self.qualifications[self._shown[1] :])
        self._shown = (len(self.checks), len(self.qualifications))
        return ClaimTable(checks, qualifications) if checks or qualifications else None

    def summary(self) -> ClaimTable:
        """Every check and qualification of this run, as one collapsed block (the chapter's end)."""
        return ClaimTable(tuple(self.checks), tuple(self.qualifications), "Every check of this chapter")

    def conclude(self) -> None:
        """End the chapter: mark the record complete.

        Raises
        ------
        ClaimCheckError
            Listing every failed check (:attr:`Check.failure`), after the record is written.
        """
        self.complete = True
        self._write()
        failed = self.record.failed
        if failed:
            lines = "\n".join(f"  {c.failure}" for c in failed)
            raise ClaimCheckError(
                f"{self.notebook}: {len(failed)} of {len(self.checks)} checks failed:\n{lines}"
            )

    @property
    def record(self) -> ChapterRecord:
        """What this run has recorded so far."""
        return ChapterRecord(
            self.notebook,
            self.profile,
            tuple(self.checks),
            tuple(self.qualifications),
            self.platform,
            self.seed,
            self.complete,
            headlines=tuple(self.headlines),
        )

    def _write(self) -> None:
        atomic_write_text(self.path, self.record.dump())


#: What a block of checks says of each result, in its summary line.
_RESULT_WORDS = {"PASS": "passed", "FAIL": "failed", "FOUND": "found", "OPEN": "open"}


@dataclass(frozen=True)
class ClaimTable:
    """A block of claim checks (and qualifications): one summary line that opens to their table.

    In Jupyter and the book it is a collapsed ``<details>`` block, "Checks of this section:
    6 passed"; its text form (what nbval compares) is the summary line and a line per check.
    """

    checks: tuple[Check, ...]
    qualifications: tuple[Qualification, ...] = ()
    #: The words before the counts: ``"Checks of this section"``.
    title: str = "Checks of this section"

    @property
    def headline(self) -> str:
        """``"Checks of this section: 5 passed, 1 found"`` (results in the order of :data:`RESULTS`)."""
        counts = Counter(c.result for c in self.checks)
        parts = [f"{counts[r]} {_RESULT_WORDS[r]}" for r in RESULTS if counts[r]]
        notes = len(self.qualifications)
        parts += [f"{notes} qualification{'s' * (notes != 1)}"] if notes else []
        return f"{self.title}: {', '.join(parts) or 'none'}"

    def __repr__(self) -> str:
        lines = [self.headline]
        for c in self.checks:
            lines.append(f"{c.result} {c.label:<4} {c.what}: {c.measured} (required {c.required})")
        lines += [f"NOTE {q.claim} {q.rendered}" for q in self.qualifications]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = [
            {"result": c.result, "cells": (c.label, c.what, c.paper, c.measured, c.required)}
            for c in self.checks
        ]
        return render_inline(
            "claim_table.html",
            headline=self.headline,
            columns=("claim", "what", "paper", "ours", "required", "result"),
            rows=rows,
            notes=[(q.claim, q.rendered) for q in self.qualifications],
            failed=any(c.result == "FAIL" for c in self.checks),
        )


@dataclass(frozen=True)
class Outcome:
    """Whether a check held, as :meth:`ClaimLog.check` returns it (true or false).

    Shown as nothing when it ends a notebook cell: the check has printed its line.
    """

    check: Check

    def __bool__(self) -> bool:
        return self.check.passed

    def _ipython_display_(self) -> None:
        """Nothing: a cell that ends in a check shows its printed line, not a stray value."""


def check_arguments(claim: str, kind: str, relation: str, protocol: str) -> None:
    """Refuse a check's unknown kind or relation, or a protocol the registry does not declare."""
    if kind not in KINDS:
        raise InvalidDataError(f"unknown kind {kind!r}; use one of {list(KINDS)}")
    declared = declared_protocols(claim)
    if protocol and protocol not in declared:
        known = ", ".join(f"[{k}]" for k in declared) or "none"
        raise InvalidDataError(
            f"claim {claim}: protocol [{protocol}] is not declared for it in "
            f"ntpnb/chapter/_registry.py (its protocols: {known})"
        )
    if relation not in RELATIONS:
        raise InvalidDataError(f"unknown relation {relation!r}; use one of {sorted(RELATIONS)}")


def decided_check(
    claim: str,
    what: str,
    value: float | Sample,
    relation: str,
    target: Target,
    *,
    kind: str = "claim",
    tol: float = 0.0,
    protocol: str = "",
    profile: str = "",
    digits: int | None = None,
    floor: float | None = None,
    artifact: Artifact | None = None,
    paper: str = "",
    seed_independent: bool = False,
) -> Check:
    """The check of ``value <relation> target``, decided as :meth:`ClaimLog.check` decides it.

    Not printed, not recorded; the arguments are :meth:`ClaimLog.check`'s, refused as it refuses
    them (:func:`check_arguments`). A :class:`~ntpnb.statistics.Sample` is decided at this seed
    (:func:`decide_sample`), a number as one number (:func:`decide_number`).
    """
    check_arguments(claim, kind, relation, protocol)
    sample = value if isinstance(value, Sample) else None
    if sample is not None:
        passed, number, measured = decide_sample(
            claim, sample, relation, target, tol, kind, digits, floor, artifact
        )
        target = float(target)  # type: ignore[arg-type]  # recorded as decided
    else:
        passed, number, measured = decide_number(
            claim, what, value, relation, target, tol, kind, digits, floor, artifact
        )
    return Check(
        claim,
        what,
        number,
        relation,
        target,
        tol,
        paper,
        passed,
        profile,
        kind,
        measured,
        sample,
        bool(seed_independent),
        artifact,
        protocol,
    )


def decide_sample(
    claim: str,
    sample: Sample,
    relation: str,
    target: Target,
    tol: float,
    kind: str,
    digits: int | None,
    floor: float | None,
    artifact: Artifact | None,
) -> tuple[bool, float, str]:
    """A statistical check at this seed: whether it holds, its estimate, and that as printed."""
    if floor is not None:
        raise InvalidDataError(f"claim {claim}: a statistical check prints its estimate, no floor")
    if artifact is not None and not isinstance(artifact, Artifact):
        raise InvalidDataError(f"claim {claim}: artifact must be an Artifact, got {type(artifact).__name__}")
    point = float(target)  # type: ignore[arg-type]
    passed = sample.decide(relation, point, tol, kind)
    value = sample.statistic(point)[0]
    return passed, value, sample.describe(point, 3 if digits is None else digits)


def decide_number(
    claim: str,
    what: str,
    value: object,
    relation: str,
    target: Target,
    tol: float,
    kind: str,
    digits: int | None,
    floor: float | None,
    artifact: Artifact | None,
) -> tuple[bool, float, str]:
    """A check of one number: whether it holds, the number, and the number as printed.

    A failed check prints as many digits as it takes to see the failure.
    """
    if kind == "measurement":
        raise InvalidDataError(
            f"claim {claim}: a measurement is decided pooled over the sweep: check a Sample"
        )
    if artifact is not None:
        raise InvalidDataError(f"claim {claim}: an artifact is compared with a sample: check a Sample")
    try:
        number = value if isinstance(value, (bool, int)) else float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        problem = f"{what!r} needs a number or a Sample, got {value!r}"
        raise InvalidDataError(f"claim {claim}: {problem}") from None
    if isinstance(number, float) and not math.isfinite(number):
        raise InvalidDataError(f"claim {claim}: the measured value of {what!r} is {number}")
    passed = bool(RELATIONS[relation](number, target, tol))
    digits = 4 if digits is None else digits
    measured = format_number(number, digits, floor)
    if not passed:  # the printed number itself shows the failure
        measured = failing_number(number, relation, target, tol, digits)
    return passed, number, measured
