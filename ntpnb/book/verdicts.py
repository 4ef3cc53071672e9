"""What reproduced: one verdict per claim, computed from the checks a run recorded.

The checks of a claim (:class:`ntpnb.chapter.claims.Check`, as a chapter record holds them) come
in three kinds:

* ``claim``: evidence, a check that a false claim would fail;
* ``finding``: a shortfall, the paper's statement measured *not* to hold. The check pins the
  measured value (so that a regression, or a fix, changes the run's output and is seen) and
  quotes the paper's value; it passes when the shortfall is as recorded;
* ``sanity``: a check of the code or the setting (an invariant that holds by construction),
  never evidence.

A chapter may also attach a *qualification* to a claim (:meth:`ClaimLog.qualify`): a stated
limit of what the evidence shows (a smaller setting than the paper's, a weaker rate).

The verdict of a claim (:func:`claim_verdict`) is, in this order:

1. ``check failed`` if any of its checks failed: the run is broken, not the paper;
2. ``does not reproduce`` if it has a finding;
3. ``not tested`` if it has no evidence (no check at all, or sanity checks only);
4. ``reproduced with a qualification`` if a qualification is attached;
5. ``reproduced`` otherwise.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..chapter.claims import Check, Qualification

__all__ = [
    "VERDICTS",
    "REPRODUCED",
    "QUALIFIED",
    "NOT_REPRODUCED",
    "NOT_TESTED",
    "CHECK_FAILED",
    "Verdict",
    "claim_verdict",
    "verdicts",
    "verdict_counts",
    "format_counts",
]

REPRODUCED = "reproduced"
QUALIFIED = "reproduced with a qualification"
NOT_REPRODUCED = "does not reproduce"
NOT_TESTED = "not tested"
CHECK_FAILED = "check failed"
#: Every verdict, in the order a summary lists them.
VERDICTS: tuple[str, ...] = (REPRODUCED, QUALIFIED, NOT_REPRODUCED, NOT_TESTED, CHECK_FAILED)


@dataclass(frozen=True)
class Verdict:
    """The verdict of one claim and what it rests on.

    Attributes
    ----------
    claim
        The claim id.
    verdict
        One of :data:`VERDICTS`.
    evidence, findings, sanity
        How many checks of each kind the claim has.
    failed
        How many of its checks failed.
    reasons
        The qualifications (for ``reproduced with a qualification``), or the findings, as
        ``"what: measured X; paper: Y"``, followed by any qualifications (for ``does not
        reproduce``).
    """

    claim: str
    verdict: str
    evidence: int = 0
    findings: int = 0
    sanity: int = 0
    failed: int = 0
    reasons: tuple[str, ...] = ()


def claim_verdict(claim: str, checks: Sequence[Check], qualifications: Sequence[str] = ()) -> Verdict:
    """The verdict of ``claim`` from its checks and the texts of its qualifications.

    See the module docstring for the rule.
    """
    kinds = Counter(c.kind for c in checks)
    failed = sum(not c.passed for c in checks)
    findings = [c for c in checks if c.kind == "finding"]
    counts = {
        "evidence": kinds.get("claim", 0),
        "findings": kinds.get("finding", 0),
        "sanity": kinds.get("sanity", 0),
        "failed": failed,
    }
    if failed:
        return Verdict(claim, CHECK_FAILED, **counts)
    if findings:
        reasons = tuple(
            f"{c.what}: measured {c.measured}" + (f"; paper: {c.paper}" if c.paper else "") for c in findings
        )
        # the limits the chapter states still apply: they follow the findings
        reasons += tuple(dict.fromkeys(qualifications))
        return Verdict(claim, NOT_REPRODUCED, reasons=reasons, **counts)
    if not counts["evidence"]:
        return Verdict(claim, NOT_TESTED, **counts)
    if qualifications:
        return Verdict(claim, QUALIFIED, reasons=tuple(dict.fromkeys(qualifications)), **counts)
    return Verdict(claim, REPRODUCED, **counts)


def verdicts(
    claim_ids: Iterable[str],
    checks: Iterable[Check],
    qualifications: Iterable[Qualification] = (),
) -> dict[str, Verdict]:
    """The verdict of every id in ``claim_ids`` (in that order) from all recorded checks.

    ``qualifications`` are ``(claim, text)`` pairs. Ids without checks are ``not tested``.
    """
    by_claim: dict[str, list[Check]] = {}
    for c in checks:
        by_claim.setdefault(c.claim, []).append(c)
    quals: dict[str, list[str]] = {}
    for claim, text in qualifications:
        quals.setdefault(claim, []).append(text)
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
    """The verdict as a predicate of ``count`` claims: "2 do not reproduce", "1 does not"."""
    return verdict.replace("does not", "do not") if count != 1 else verdict
