"""How one check is decided at one seed: its arguments refused or accepted, its value tested.

:func:`decided_check` makes the :class:`~ntpnb.evidence._checks.Check` of ``value <relation>
target`` as a chapter's :meth:`~ntpnb.chapter.ClaimLog.check` records it (and as an explore's
point re-decides it): a :class:`~ntpnb.evidence._samples.Sample` is tested at this seed
(:func:`decide_sample`; the sweep decides it pooled), a number as one number
(:func:`decide_number`; a failed one printed with the digits that show the failure).
"""

from __future__ import annotations

import math

from .._digits import format_number
from ..errors import InvalidDataError
from ._checks import KINDS, RELATIONS, Artifact, Check, Target, failing_number
from ._registry import declared_protocols
from ._samples import Sample
from ._vocabulary import describe_sample


def check_arguments(claim: str, kind: str, relation: str, protocol: str) -> None:
    """Refuse a check's unknown kind or relation, or a protocol the registry does not declare."""
    if kind not in KINDS:
        raise InvalidDataError(f"unknown kind {kind!r}; use one of {list(KINDS)}")
    declared = declared_protocols(claim)
    if protocol and protocol not in declared:
        known = ", ".join(f"[{k}]" for k in declared) or "none"
        raise InvalidDataError(
            f"claim {claim}: protocol [{protocol}] is not declared for it in "
            f"ntpnb/evidence/_registry.py (its protocols: {known})"
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
    return passed, value, describe_sample(sample, point, 3 if digits is None else digits)


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
