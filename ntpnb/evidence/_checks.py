"""Claim checks and statements as a chapter's record holds them (:class:`Check`, :class:`Statement`).

A check is made and decided at one seed by :func:`~ntpnb.evidence._decide.decided_check` (a
chapter calls it through :meth:`ntpnb.chapter.ClaimLog.check`); its words come from
:mod:`._vocabulary`.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from numbers import Integral, Real
from typing import Any, Protocol

from .._digits import SHOWN_DIGITS, format_number
from ..errors import InvalidDataError
from ._samples import Sample
from ._vocabulary import LIMITS, check_label, quote_sample, requirement_words

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


class Reading(Protocol):
    """A value read off a stored artifact: what it is, the value, the reading's precision."""

    source: str
    value: float
    precision: float


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

    @classmethod
    def of(cls, reading: Reading, trials: int = 0) -> Artifact:
        """The artifact of a value read off the authors' stored figure, a mean of ``trials`` trials.

        ``reading`` says what it is (``source``), the value read (``value``) and how far the reading
        may be from it (``precision``): a :class:`~ntpnb.attention.authors.StoredCurve`, say.

        Raises
        ------
        InvalidDataError
            As the constructor does (``trials`` not a whole number >= 0, say).
        """
        return cls(reading.source, reading.value, trials=trials, precision=reading.precision)

    @property
    def shown(self) -> str:
        """Its value as a page shows it (4 significant digits: a reading off a figure has no more)."""
        return f"{self.value:.{SHOWN_DIGITS}g}"

    def consistent_with(self, sample: Sample) -> bool:
        """Whether ``sample`` (pooled) agrees with this value (:meth:`Sample.consistent_with`'s rule)."""
        return sample.consistent_with(self.value, self.trials, self.precision)


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
        if self.artifact is not None and test in ("rate", "pvalue", "median"):
            raise InvalidDataError(
                f"claim {self.claim}: a stored value is compared with a mean, not with a {test} test"
            )
        if self.protocol != "" and not (isinstance(self.protocol, str) and PROTOCOL_KEY.match(self.protocol)):
            raise InvalidDataError(f"claim {self.claim}: {self.protocol!r} is not a protocol's key")
        for name, words in (("what", self.what), ("paper", self.paper)):
            pieces = str(words).split("$")
            if len(pieces) % 2 == 0 or any("|" in math for math in pieces[1::2]):
                raise InvalidDataError(
                    f"claim {self.claim}: its {name} {words!r} must close each $...$ of its math, and "
                    "write a norm or an absolute value with \\lVert or \\lvert (a bar ends a table's cell)"
                )

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
        stored = f"; authors' stored: {self.artifact.shown}" if self.artifact else ""
        measured = f"measured {self.measured}; required {self.required}{paper}{stored}"
        return f"[{self.result}] {self.label} {self.what}\n       {measured}"

    @property
    def quoted(self) -> str:
        """What it measured as a sentence quotes it: its printed number, or its sample's estimate."""
        return (
            quote_sample(self.sample)
            if self.sample is not None and self.sample.test in STATEMENT_TESTS
            else self.measured
        )

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
        """What the check requires and how it is tested, as printed (its requirement's words)."""
        return requirement_words(self.relation, self.target, self.tol, self.sample, self.kind)

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
STATEMENT_TESTS: tuple[str, ...] = ("mean", "estimate", "rate", "instances", "median")


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
    #: A qualification's limit of the evidence, a key of :data:`~._vocabulary.LIMITS`:
    #: ``"horizon"`` (a limit the paper states is not reached at its horizon), ``"size"`` (an
    #: asymptotic statement at a finite size) or ``""`` (another stated limit).
    limit: str = ""

    @classmethod
    def of(cls, claim: str, text: str, values: Mapping[str, float | Sample], limit: str = "") -> Statement:
        """The statement of ``claim`` whose ``values`` are numbers and samples, sorted by kind."""
        samples = {k: v for k, v in values.items() if isinstance(v, Sample)}
        numbers = {k: v for k, v in values.items() if k not in samples}
        return cls(claim, text, numbers, samples, limit)  # type: ignore[arg-type]

    def __post_init__(self) -> None:
        if not (isinstance(self.text, str) and self.text.strip()):
            raise InvalidDataError(f"claim {self.claim}: a statement needs a non-empty text")
        if self.limit not in LIMITS:
            known = ", ".join(repr(k) for k in LIMITS)
            raise InvalidDataError(
                f"claim {self.claim}: a statement's limit is one of {known}, not {self.limit!r}"
            )
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
            # numpy's as Python's; a negative zero (np.maximum(0.0, -0.0)) is a zero, never "-0"
            numbers[name] = int(value) if isinstance(value, Integral) else float(value) + 0.0
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
            return self.text.format(**numbers, **{k: quote_sample(s) for k, s in samples.items()})
        except (ValueError, TypeError, IndexError) as exc:
            raise InvalidDataError(f"claim {self.claim}: statement {self.text!r}: {exc}") from None

    @property
    def rendered(self) -> str:
        """The text at this seed: its numbers, and its samples' estimates at this seed."""
        return self.render(self.numbers, self.samples)


#: A qualification of a claim is a :class:`Statement` (:meth:`ClaimLog.qualify`).
Qualification = Statement


#: A protocol's key: words a check line prints in square brackets (no brackets, bars or parentheses).
PROTOCOL_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9' .-]*$")
