"""One way for notebooks to check a paper's claim: compare, print, record, and fail loudly.

Each notebook makes a :class:`ClaimLog` and calls :meth:`ClaimLog.check` for every number it
compares with a paper. A check prints one stable line (rounded to the stated digits, so nbval
can compare it), appends a record to ``outputs/claims/<notebook>.json`` (the reproducibility
report is built from these records, with the platform of the run, see
:mod:`~ntpnb.pipeline.platform`), and raises :class:`~ntpnb.errors.ClaimCheckError` if the
claim does not hold, so a broken claim fails the run.

A check is one of three kinds (:data:`KINDS`). A ``"claim"`` check is evidence for the paper:
it would fail if the paper's claim were false. A ``"finding"`` check records that a claim does
*not* reproduce: it pins the measured shortfall (so a regression or a fix is seen) and quotes the
paper's value. A ``"sanity"`` check tests the code or the setting (an invariant that holds by
construction, a property of our instance, agreement of a solver with a proved result). Every
kind fails the run when it does not hold; findings and sanity checks print their kind after the
claim id and are recorded with it, so that the report keeps them apart from the evidence.
:meth:`ClaimLog.qualify` attaches a stated qualification to a claim. The verdict of each claim
(reproduced, with a qualification, does not reproduce, not tested) follows from these records
(:mod:`ntpnb.pipeline.verdicts`).
"""

from __future__ import annotations

import html
import json
import math
import operator
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import ClaimCheckError, InvalidDataError
from .atomic import atomic_write_text
from .paths import output_layout
from .platform import platform_info

__all__ = [
    "Check",
    "ClaimLog",
    "ClaimTable",
    "KINDS",
    "RELATIONS",
    "format_number",
    "format_decade",
    "format_requirement",
]

Target = float | tuple[float, float]

#: The relations a check can assert between the measured value and its target.
RELATIONS: dict[str, Callable[[float, Target, float], bool]] = {
    "<": lambda v, t, tol: operator.lt(v, t),
    "<=": lambda v, t, tol: operator.le(v, t),
    ">": lambda v, t, tol: operator.gt(v, t),
    ">=": lambda v, t, tol: operator.ge(v, t),
    "~": lambda v, t, tol: abs(v - t) <= tol,
    "in": lambda v, t, tol: t[0] <= v <= t[1],
    "==": lambda v, t, tol: v == t,
}


#: The kinds of check: evidence for a paper's claim, a finding (the claim measured not to hold),
#: or a sanity check of the code or setting.
KINDS: tuple[str, ...] = ("claim", "sanity", "finding")


def format_number(x: float, digits: int, floor: float | None = None) -> str:
    """``x`` with ``digits`` significant digits (zeros kept); ``"< floor"`` where ``|x| < floor``.

    The floor hides digits that are rounding noise (e.g. an inner product of order 1e-16),
    which may differ between machines, from printed output: its sign too, which rounding
    decides as often as not for a true value of 0.
    """
    if isinstance(x, bool) or isinstance(x, int):
        return str(x)
    if floor is not None and abs(x) < floor:
        return f"< {floor:.0e}"
    return f"{x:#.{digits}g}".rstrip(".")


def format_decade(x: float) -> str:
    """``"< 1e-04"``: the smallest power of ten above ``|x|`` (``"0"`` for zero).

    For numbers whose digits are a third-party solver's rounding (they differ between BLAS
    kernels), where only the order of magnitude is a result.
    """
    x = abs(float(x))
    if x == 0.0:
        return "0"
    if not math.isfinite(x):
        raise InvalidDataError(f"format_decade needs a finite number, got {x}")
    return f"< 1e{math.floor(math.log10(x)) + 1:+03d}"


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
    measured: str = ""  # the value as printed (rounded); the chapter's claim table shows it

    def line(self, digits: int, floor: float | None = None) -> str:
        """The rounded, human-readable form printed by :meth:`ClaimLog.check` (two lines)."""
        value = format_number(self.value, digits, floor)
        verdict = "PASS" if self.passed else "FAIL"
        paper = f"; paper: {self.paper}" if self.paper else ""
        required = format_requirement(self.relation, self.target, self.tol)
        label = self.claim if self.kind == "claim" else f"{self.claim} ({self.kind})"
        return f"[{verdict}] {label} {self.what}\n       measured {value}; required {required}{paper}"


def format_requirement(relation: str, target: Target, tol: float) -> str:
    """What a check requires of the measured value, e.g. ``"= -1 ± 0.02"`` or ``"< 1e-12"``."""
    if relation == "in":
        lo, hi = target  # type: ignore[misc]
        return f"in [{lo:g}, {hi:g}]"
    if relation == "~":
        return f"= {target:g} ± {tol:g}"
    return f"{relation} {target:g}"


class ClaimLog:
    """The claim checks of one notebook run, written to ``<output>/claims/<notebook>.json``.

    Parameters
    ----------
    notebook
        Name of the notebook (file stem).
    profile
        Execution profile (``"paper"`` or ``"quick"``), recorded with each check.
    output_dir
        Root of the output tree; None means ``<project root>/outputs``.
    """

    def __init__(self, notebook: str, profile: str, output_dir: str | Path | None = None) -> None:
        self.notebook = notebook
        self.profile = profile
        self.path = output_layout(output_dir).claims / f"{notebook}.json"
        self.checks: list[Check] = []
        self.qualifications: list[tuple[str, str]] = []
        self.platform = platform_info()  # the machine of this run (the notebook's kernel)
        self._write()

    def check(
        self,
        claim: str,
        what: str,
        value: float,
        relation: str,
        target: Target,
        *,
        tol: float = 0.0,
        paper: str = "",
        digits: int = 4,
        floor: float | None = None,
        kind: str = "claim",
    ) -> None:
        """Assert ``value <relation> target``, print the outcome, record it; fail if it is false.

        The printed line rounds the value to ``digits`` significant digits; targets and
        tolerances are constants of the notebook and print as given. The record (in
        :attr:`checks` and the JSON file) keeps the full value.

        Parameters
        ----------
        claim
            Claim id, as listed on the book's Claims page (e.g. ``"A2"``).
        what
            What was measured, in words.
        value
            The measured number.
        relation
            One of :data:`RELATIONS`: ``<, <=, >, >=, ==``; ``~`` (``|value - target| <= tol``);
            ``in`` (``target`` is an interval ``(lo, hi)``).
        target
            The number (or interval) the value is compared with.
        tol
            Tolerance of ``~``.
        paper
            What the paper reports, quoted for the reader.
        digits
            Significant digits printed.
        floor
            Print ``< floor`` instead of digits below this magnitude (rounding noise).
        kind
            ``"claim"`` (evidence for the paper; the default), ``"finding"`` (the claim does not
            reproduce: ``value`` is our measured shortfall, pinned by the relation, and
            ``paper`` the paper's value) or ``"sanity"`` (a check of the code or the setting,
            not evidence); see :data:`KINDS`.

        Raises
        ------
        ClaimCheckError
            If the relation does not hold (the record is written first).
        InvalidDataError
            On an unknown relation or kind, or a non-finite value.
        """
        if kind not in KINDS:
            raise InvalidDataError(f"unknown kind {kind!r}; use one of {list(KINDS)}")
        if relation not in RELATIONS:
            raise InvalidDataError(f"unknown relation {relation!r}; use one of {sorted(RELATIONS)}")
        value = value if isinstance(value, (bool, int)) else float(value)
        if isinstance(value, float) and not math.isfinite(value):
            raise InvalidDataError(f"claim {claim}: the measured value of {what!r} is {value}")
        passed = bool(RELATIONS[relation](value, target, tol))
        measured = format_number(value, digits, floor)
        check = Check(claim, what, value, relation, target, tol, paper, passed, self.profile, kind, measured)
        self.checks.append(check)
        self._write()
        line = check.line(digits, floor)
        print(line)
        if not passed:
            raise ClaimCheckError(f"{self.notebook}: {line}")

    def qualify(self, claim: str, text: str) -> None:
        """Attach a qualification to ``claim``: a stated limit of what its evidence shows.

        The claim's verdict becomes *reproduced with a qualification* (if its checks are
        evidence and pass); the text is printed and shown in the report.
        """
        if not (isinstance(text, str) and text.strip()):
            raise InvalidDataError(f"claim {claim}: a qualification needs a non-empty text")
        self.qualifications.append((claim, text.strip()))
        self._write()
        print(f"[NOTE] {claim} qualification: {text.strip()}")

    def summary(self) -> ClaimTable:
        """The compact table of this run's checks, to show at the end of the chapter.

        End each chapter with a cell (tagged ``hide-input``) whose last line is
        ``claims.summary()``: Jupyter and the book show it as an HTML table (claim, what,
        paper, ours, required, result), nbval compares its plain-text form.
        """
        return ClaimTable(tuple(self.checks))

    def _write(self) -> None:
        record = {
            "notebook": self.notebook,
            "profile": self.profile,
            "checks": [asdict(c) for c in self.checks],
            "qualifications": [{"claim": c, "text": t} for c, t in self.qualifications],
            "platform": self.platform,
        }
        atomic_write_text(self.path, json.dumps(record, indent=1) + "\n")


_TABLE_COLUMNS = ("claim", "what", "paper", "ours", "required", "result")


@dataclass(frozen=True)
class ClaimTable:
    """A compact table of claim checks; displays as HTML in Jupyter and the book."""

    checks: tuple[Check, ...]

    def rows(self) -> list[tuple[str, ...]]:
        """One row of strings per check, in the order of :data:`_TABLE_COLUMNS`."""
        return [
            (
                c.claim if c.kind == "claim" else f"{c.claim} ({c.kind})",
                c.what,
                c.paper,
                c.measured or format_number(c.value, 4),
                format_requirement(c.relation, c.target, c.tol),
                "PASS" if c.passed else "FAIL",
            )
            for c in self.checks
        ]

    def __repr__(self) -> str:
        rows = self.rows()
        passed = sum(c.passed for c in self.checks)
        lines = [f"{passed} of {len(rows)} claim checks pass"]
        lines += [f"{r[5]} {r[0]:<4} {r[1]}: {r[3]} (required {r[4]})" for r in rows]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{name}</th>" for name in _TABLE_COLUMNS)
        body = []
        for row in self.rows():
            verdict = row[-1].lower()
            cells = "".join(f"<td>{html.escape(value)}</td>" for value in row[:-1])
            body.append(f'<tr class="ntpnb-{verdict}">{cells}<td>{row[-1]}</td></tr>')
        return (
            '<table class="ntpnb-claim-table">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        )
