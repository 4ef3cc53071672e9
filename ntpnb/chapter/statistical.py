"""Statistical claim checks: a sample recorded at each seed, tested there, and pooled over the sweep.

A claim about an average over random trials would fail by chance under a fixed threshold on one
run's mean. Such a check records its :class:`Sample`, tested at the chapter's seed; the verdict
tests it pooled over the sweep's seeds, which decides the claim. Every test has an error rate, its
``level``. The tests (:data:`TESTS`):

``"mean"``
    The values are trials; the estimate is their mean, its standard error ``sd / sqrt(n)``
    (normal approximation). Pooled: all trials of all seeds.
``"estimate"``
    One estimate per seed with its standard error (e.g. a bootstrap error); pooled by inverse
    variance weights (a fixed-effect combination).
``"mean_quantile"``
    The values are trials, and the target is a mean a paper reports over ``trials`` trials; the
    statistic ``q`` is the mid-rank of the target among bootstrap means of ``trials`` of our
    trials (the fraction below it plus half the fraction equal to it), for heavy-tailed values
    whose standard error would mislead. Pooled: all trials.
``"rate"``
    The values are trials, each 1 when an event happened and 0 when not (a count check: "trials
    with a non-empty sub-dataset"); the estimate is the rate ``k / n`` with Wilson's interval at
    the level on each side. Pooled: all trials. ``==`` with target 0 asks that the event never
    happens (any occurrence is a counterexample).
``"pvalue"``
    One p-value per seed of a test that is run whole at each seed (a goodness-of-fit test of
    independent draws); pooled by Fisher's method, ``-2 sum log p`` against chi-squared with
    ``2k`` degrees of freedom. The statistic is the combined p-value and the target the test's
    significance: a claim ``> target`` fails when the combined p falls to the target or below,
    a finding ``< target`` holds when it does.

How a check decides, with ``z`` the standard normal quantile of ``1 - level``:

* a **claim** check (the relation is the paper's statement) fails only when the data contradict
  it at that level: ``>`` needs ``estimate + z se > target``, ``<`` needs
  ``estimate - z se < target``, ``~`` needs ``|estimate - target| <= tol + z se``; for
  ``"mean_quantile"``, ``~`` needs ``level/2 < q < 1 - level/2``; for ``"rate"``, ``<`` and
  ``<=`` need the interval's lower end at most the target. A true claim fails with probability
  at most ``level`` (``~``: at most ``2 level``, one tail each side);
* a claim check of a strict difference (the paper says two things differ, or one exceeds the
  other) is not evidence when merely not contradicted, since no difference is not contradicted
  either: such a sample is made with ``establish=True`` and decided as a finding is;
* a **finding** check (the relation is the shortfall), and a **measurement** (a statement of
  ours that qualifies a claim), hold only when the data establish them:
  ``>`` needs ``estimate - z se > target``, ``<`` needs ``estimate + z se < target`` (for
  ``"rate"``: the interval's lower end above, or its upper end below, the target); for
  ``"mean_quantile"``, ``>`` (our means exceed the paper's value) needs ``q < level`` and ``<``
  needs ``q > 1 - level``. A shortfall that is not there is recorded with probability at most
  ``level``.

A value the authors' own stored artifact shows (a figure's last point, a mean over ``trials``
of their trials) is compared with the pooled sample by :meth:`Artifact.consistent_with`: with a
mean over ``trials`` trials, ``|value - estimate| <= precision + z' sqrt(se^2 + s^2/trials)``
with ``z'`` at ``level/2`` on each side; for ``"mean_quantile"``, the value's mid-rank among
our means of ``trials`` trials lies in ``(level/2, 1 - level/2)``.

Only the standard library is imported here (the runner reads claim records without numpy).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from statistics import NormalDist
from typing import Any

from ..errors import InvalidDataError

#: The error rate of a statistical check (see the module docstring); rare by chance over a sweep.
DEFAULT_LEVEL = 0.01

#: The kinds of check that hold only when the data establish them (see the module docstring).
ESTABLISHED_KINDS: tuple[str, ...] = ("finding", "measurement")

#: The tests a :class:`Sample` can be checked with (see the module docstring).
TESTS: tuple[str, ...] = ("mean", "estimate", "mean_quantile", "rate", "pvalue")

#: Resamples of a ``"mean_quantile"`` test, and the seed of its generator (the same on every machine).
BOOTSTRAP_RESAMPLES = 20_000
BOOTSTRAP_SEED = 0


def _finite_tuple(values: Iterable[Any], name: str) -> tuple[float, ...]:
    try:
        out = tuple(float(v) for v in values)
    except (TypeError, ValueError) as exc:
        raise InvalidDataError(f"{name} must be numbers: {exc}") from None
    if not all(math.isfinite(v) for v in out):
        raise InvalidDataError(f"{name} must be finite numbers")
    return out


@dataclass(frozen=True)
class Sample:
    """What a statistical check records at one seed, enough to pool it with the others."""

    test: str  # one of TESTS
    #: The trials' values (``"mean"``, ``"mean_quantile"``), or the estimates (``"estimate"``).
    values: tuple[float, ...]
    #: The standard error of each estimate (``"estimate"`` only).
    errors: tuple[float, ...] = ()
    #: ``"mean_quantile"``: how many trials the target is a mean of.
    trials: int = 0
    level: float = DEFAULT_LEVEL  # the test's error rate
    #: A claim check of a strict difference: holds only when the data establish it.
    establish: bool = False

    def __post_init__(self) -> None:
        if self.test not in TESTS:
            raise InvalidDataError(f"unknown statistical test {self.test!r}; use one of {list(TESTS)}")
        object.__setattr__(self, "values", _finite_tuple(self.values, "the sample's values"))
        object.__setattr__(self, "errors", _finite_tuple(self.errors, "the standard errors"))
        if not 0.0 < float(self.level) < 0.5:
            raise InvalidDataError(f"a test's level must lie in (0, 0.5), got {self.level!r}")
        minimum = 1 if self.test in ("estimate", "pvalue") else 2
        if len(self.values) < minimum:
            raise InvalidDataError(
                f"a {self.test!r} test needs at least {minimum} values, got {len(self.values)}"
            )
        if self.test == "estimate":
            if len(self.errors) != len(self.values) or not all(e > 0 for e in self.errors):
                raise InvalidDataError("an 'estimate' test needs one positive standard error per estimate")
        elif self.errors:
            raise InvalidDataError(f"a {self.test!r} test takes no standard errors")
        if self.test == "mean_quantile":
            if isinstance(self.trials, bool) or not isinstance(self.trials, int) or self.trials < 1:
                raise InvalidDataError(f"a 'mean_quantile' test needs trials >= 1, got {self.trials!r}")
        if self.test == "rate" and not all(v in (0.0, 1.0) for v in self.values):
            raise InvalidDataError("a 'rate' test needs one 0 or 1 per trial (whether the event happened)")
        if self.test == "pvalue" and not all(0.0 < v <= 1.0 for v in self.values):
            raise InvalidDataError("a 'pvalue' test needs p-values in (0, 1]")
        if not isinstance(self.establish, bool):
            raise InvalidDataError(f"establish must be True or False, got {self.establish!r}")

    @classmethod
    def pooled(cls, samples: Sequence[Sample]) -> Sample:
        """One sample from the samples of every seed (the same test, level and trials)."""
        first = samples[0]
        for other in samples[1:]:
            if other.setting != first.setting:
                raise InvalidDataError(
                    f"cannot pool a {other.test!r} test (level {other.level}, trials {other.trials}, "
                    f"establish {other.establish}) with a {first.test!r} test (level {first.level}, "
                    f"trials {first.trials}, establish {first.establish})"
                )
        values = tuple(v for s in samples for v in s.values)
        errors = tuple(e for s in samples for e in s.errors)
        return cls(first.test, values, errors, first.trials, first.level, first.establish)

    @property
    def setting(self) -> tuple[str, int, float, bool]:
        """What must agree for two samples to pool: test, trials, level and establish."""
        return (self.test, self.trials, self.level, self.establish)

    @property
    def size(self) -> int:
        """How many trials (or, for ``"estimate"``, estimates) the sample holds."""
        return len(self.values)

    @property
    def count(self) -> str:
        """How many values and what they are: ``"500 trials"``, ``"1 estimate"``, ``"5 tests"``."""
        unit = {"estimate": "estimate", "pvalue": "test"}.get(self.test, "trial")
        return f"{self.size} {unit}{'s' * (self.size != 1)}"

    def estimate(self) -> tuple[float, float]:
        """The estimate and its standard error (the mean; ``"estimate"``: inverse-variance weighted)."""
        if self.test == "estimate":
            weights = [1.0 / e**2 for e in self.errors]
            total = math.fsum(weights)
            mean = math.fsum(w * v for w, v in zip(weights, self.values, strict=True)) / total
            return mean, math.sqrt(1.0 / total)
        n = len(self.values)
        mean = math.fsum(self.values) / n
        var = math.fsum((v - mean) ** 2 for v in self.values) / (n - 1)
        return mean, math.sqrt(var / n)

    def rate_interval(self) -> tuple[float, float]:
        """``"rate"``: Wilson's interval of the rate, at :attr:`level` on each side."""
        from ..statistics import wilson_interval

        return wilson_interval(round(math.fsum(self.values)), self.size, 1.0 - 2.0 * self.level)

    @cached_property
    def bootstrap_means(self) -> Any:
        """``"mean_quantile"``: the means of ``trials`` trials resampled from the values, drawn once."""
        from ..statistics import bootstrap_means

        return bootstrap_means(self.values, self.trials, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED)

    def quantile_of(self, target: float) -> float:
        """``"mean_quantile"``: the mid-rank of ``target`` among bootstrap means of ``trials`` trials.

        The fraction of means below it plus half the fraction equal to it, so that a target at
        an atom of the means (0 for distances that are often exactly 0) is not called extreme.
        """
        means = self.bootstrap_means
        return float((means < target).mean() + 0.5 * (means == target).mean())

    def statistic(self, target: float) -> tuple[float, float]:
        """What the check compares: ``(estimate, se)``.

        ``"mean_quantile"``: ``(q, NaN)``; ``"pvalue"``: Fisher's combination of the p-values (the
        chi-squared tail in closed form) and NaN.
        """
        if self.test == "mean_quantile":
            return self.quantile_of(target), float("nan")
        if self.test == "pvalue":
            half = -math.fsum(math.log(p) for p in self.values)  # half of -2 sum log p
            term, total = 1.0, 1.0
            for i in range(1, len(self.values)):  # P(chi2_2k > 2 half) = e^-half sum_{i<k} half^i / i!
                term *= half / i
                total += term
            return min(1.0, math.exp(-half) * total), float("nan")
        return self.estimate()

    def decide(self, relation: str, target: float, tol: float, kind: str) -> bool:
        """Whether the check holds (see the module docstring for the rule of each kind)."""
        value, se = self.statistic(target)
        established, level = kind in ESTABLISHED_KINDS or self.establish, self.level
        slack = NormalDist().inv_cdf(1.0 - level) * se  # z at the level, times the standard error
        if self.test == "mean_quantile":  # value is q
            rules = {">": value < level, "<": value > 1.0 - level}
            rules = rules if established else {"~": level / 2 < value < 1.0 - level / 2}
        elif self.test == "pvalue":  # value is the combined p; the target its significance
            rules = {"<": value < target} if established else {">": value > target}
        elif self.test == "rate":
            low, high = self.rate_interval()
            if established:
                rules = {">": low > target, "<": high < target}
            else:
                rules = {"<": low < target, "<=": low <= target, ">": high > target, "==": value == target}
        elif established:
            rules = {">": value - slack > target, "<": value + slack < target}
        else:
            rules = {
                ">": value + slack > target,
                ">=": value + slack >= target,
                "<": value - slack < target,
                "<=": value - slack <= target,
                "~": abs(value - target) <= tol + slack,
            }
        if relation not in rules:
            takes = f"takes a relation in {sorted(rules)}, not {relation!r}"
            raise InvalidDataError(f"a {kind} check with a {self.test!r} test {takes}")
        return bool(rules[relation])

    def describe(self, target: float, digits: int = 3) -> str:
        """The measurement as printed, e.g. ``"0.988 ± 0.002 (100 trials)"``.

        ``"mean_quantile"``: ``"q = 0.016 (100 trials)"``; ``"rate"``: ``"2 of 500 trials (0.4%;
        98% interval 0.089% to 1.8%)"``.
        """
        value, se = self.statistic(target)
        count = f"({self.count})"
        if self.test == "mean_quantile":
            return f"q = {value:.{digits}g} {count}"
        if self.test == "pvalue":
            how = "p" if self.size == 1 else "Fisher's combined p"
            return f"{how} = {value:.{digits}g} {count}"
        if self.test == "rate":
            low, high = self.rate_interval()
            share = f"{_percent(value)}; {1 - 2 * self.level:.0%} interval"
            bounds = f"{_percent(low)} to {_percent(high)}"
            return f"{round(math.fsum(self.values))} of {self.size} trials ({share} {bounds})"
        return f"{value:#.{digits}g} ± {se:.1g} {count}"

    def requirement(self, kind: str) -> str:
        """How the test decides, in words: ``"not contradicted at the 1% level"``."""
        if self.test == "pvalue":
            return "the seeds' p-values pooled by Fisher's method"
        what = "established" if kind in ESTABLISHED_KINDS or self.establish else "not contradicted"
        return f"{what} at the {self.level:.0%} level ({self.test} test)"


def _percent(x: float) -> str:
    """``0.004`` as ``"0.4%"``: two significant digits below 10%, whole percents above."""
    value = 100 * x
    if value == 0:
        return "0%"
    return f"{value:.0f}%" if value >= 10 else f"{value:.2g}%"


#: A :class:`Sample` from any iterable of numbers (numpy arrays included): ``trials``,
#: ``level`` and ``establish`` by keyword.
sample_of = Sample
