"""Claim checks: compare a number with a paper, print one stable line, record it, fail at the end.

Each notebook makes a :class:`ClaimLog` and calls :meth:`ClaimLog.check` for every number it
compares with a paper. A check prints one line (rounded, so nbval can compare it) and is recorded
in ``outputs/claims/<notebook>.json`` (one :class:`ChapterRun`, with the run's platform). A
failed check does not stop the chapter: its last cell, :meth:`ClaimLog.conclude`, raises one
:class:`~ntpnb.errors.ClaimCheckError` listing every failed check. A statistical check (of a
:class:`~ntpnb.statistics.Sample`) is tested at the run's seed but decided pooled over
the sweep's seeds (:mod:`ntpnb.evidence._verdicts`), so one seed's failure does not fail the chapter.

The kinds of check (:data:`KINDS`): a ``"claim"`` is evidence (it would fail were the paper
wrong); a ``"finding"`` pins the measured shortfall of a claim that does *not* reproduce and
quotes the paper; a ``"sanity"`` check tests the code or setting (an invariant, a property of our
instance, a solver agreeing with a proof); a ``"measurement"`` is our own statement beyond the
paper (a drift, a fitted offset, a map), always statistical, decided pooled like a finding,
shown beside the claim, never evidence, never a qualification, never failing the run.
Non-evidence kinds print after the claim id. :meth:`ClaimLog.qualify` attaches a
qualification to a claim, its numbers kept apart from its words so that the verdicts quote them
as ranges over the seeds; each claim's verdict follows from the records (:mod:`ntpnb.evidence._verdicts`).

**Protocols.** Where the paper and the authors' code differ (a loss, a trial filter), the
registry declares the claim's protocols (:attr:`~ntpnb.evidence._registry.ClaimSpec.protocols`,
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

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from markupsafe import Markup

from .._markdown import math_html
from .._templates import render_inline
from ..errors import ClaimCheckError, InvalidDataError
from ..evidence._checks import RESULTS, Artifact, Check, Qualification, Statement, Target
from ..evidence._decide import decided_check
from ..evidence._registry import CLAIMS, MAP_KINDS, MAPS
from ..evidence._samples import Sample
from ..evidence._vocabulary import RESULT_WORDS
from ..records._files import atomic_write_text
from ..records._places import output_tree
from ..records._platform import platform_info
from ..records._run import ChapterRun
from ._prose import glue_text


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
        self.path = output_tree(output_dir).claims / f"{notebook}.json"
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
        glue: str = "",
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
            (:data:`~ntpnb.evidence._registry.MAPS`, ``"M1"``) with a sanity or measurement kind.
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
            (:attr:`~ntpnb.evidence._registry.ClaimSpec.protocols`); ``""``: it holds under every
            protocol.
        glue
            A name to glue what the check measured under (:func:`~ntpnb.chapter.glue_text`), so
            that the prose quotes the check's own number, rounded as its line prints it (a
            sample's estimate as a sentence quotes it); ``""``: nothing glued.

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
        if glue:
            glue_text(glue, check.quoted)
        return Outcome(check)

    def qualify(self, claim: str, text: str, limit: str = "", **values: float | Sample) -> None:
        """Attach a qualification (a stated limit of what its evidence shows) to ``claim``, print it.

        ``text`` holds a ``{name}`` field (with a format, ``{name:.3f}``) for each number of
        ``values``, which vary with the seed, and a ``{name}`` field for each sample, pooled over
        the seeds; its words must not vary (the verdicts match a qualification across the seeds by
        its words and quote each number's range). The claim's verdict becomes *reproduced with a
        qualification* (if its evidence passes).

        ``limit`` says what limits the evidence: ``"horizon"`` where the chapter measures that a
        limit the paper states is not reached at the paper's horizon, ``"size"`` where an
        asymptotic statement is checked at a finite size (each only for a claim whose registry
        entry states such a limit, :attr:`~ntpnb.evidence._registry.ClaimSpec.limit`), ``""`` for
        any other; it gives the verdict its kind.

        Raises
        ------
        InvalidDataError
            On an empty text, a number that is not finite, fields and values that differ, or a
            limit the claim's statement does not take.
        """
        stated = CLAIMS[claim].limit if claim in CLAIMS else ""
        if limit and limit != stated:
            raise InvalidDataError(
                f"claim {claim}: a qualification of limit {limit!r}, but its statement in "
                f"ntpnb/evidence/_registry.py takes {'no limit' if not stated else repr(stated)}"
            )
        qualification = Statement.of(claim, text, values, limit)
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

        ``claim`` may be a map's id (:data:`~ntpnb.evidence._registry.MAPS`, ``"M1"``): its
        headline is its line in the report's maps section, the measured values on either side of
        where the claims it leaves stop holding, against the paper's setting.

        Raises
        ------
        InvalidDataError
            On an id of neither a claim nor a map of the registry, a second headline for it, or a
            statement :class:`Statement` refuses.
        """
        if claim not in CLAIMS and claim not in MAPS:
            raise InvalidDataError(f"a headline is of a claim or a map of the registry, not {claim!r}")
        if any(h.claim == claim for h in self.headlines):
            raise InvalidDataError(f"claim {claim} already has a headline in {self.notebook}")
        self.headlines.append(Statement.of(claim, text, values))
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
        """Every check and qualification of this run, as one collapsed block (the chapter's end).

        Its title names the run's seed: across the seeds the report decides, and the chapter's
        page says that too, above.
        """
        at = f" at seed {self.seed}" if self.seed is not None else ""
        return ClaimTable(
            tuple(self.checks), tuple(self.qualifications), f"Every check of this chapter{at}", chapter=True
        )

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
    def record(self) -> ChapterRun:
        """What this run has recorded so far."""
        return ChapterRun(
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


def _typeset(text: str) -> str | Markup:
    """A check's words for its table's cell: their ``$...$`` as math (:func:`math_html`), if any.

    Words without math stay text, so that the template keeps each hyphenated word whole.
    """
    return math_html(text) if "$" in text else text


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
    #: Whether it is the chapter's block, which repeats its sections' checks (the printed book
    #: shows its summary line only: each section prints its own table).
    chapter: bool = False

    @property
    def headline(self) -> str:
        """``"Checks of this section: 5 passed, 1 found"`` (results in the order of :data:`RESULTS`)."""
        counts = Counter(c.result for c in self.checks)
        parts = [f"{counts[r]} {RESULT_WORDS[r]}" for r in RESULTS if counts[r]]
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
            {
                "result": c.result,
                "word": RESULT_WORDS[c.result],
                "cells": (c.label, _typeset(c.what), _typeset(c.paper), c.measured, c.required),
            }
            for c in self.checks
        ]
        return render_inline(
            "claim_table.html",
            headline=self.headline,
            columns=("claim", "what", "paper", "ours", "required", "result"),
            rows=rows,
            notes=[(q.claim, math_html(q.rendered)) for q in self.qualifications],
            failed=any(c.result == "FAIL" for c in self.checks),
            chapter=self.chapter,
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
