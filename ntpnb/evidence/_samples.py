"""Statistical claim checks: a sample recorded at each seed, tested there, pooled over the sweep.

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
    a finding ``< target`` holds when it does. Each p-value must be a valid p-value of its own
    test (uniform, or larger, when the test's null holds). A p-value capped at 1 by a
    correction (Bonferroni's ``min(1, k p)``) is valid but nearly powerless: a sample whose every
    p-value is 1 is *vacuous* (:attr:`Sample.vacuous`; Fisher's combination is then 1 and can
    reject nothing) and says so when printed. A Monte Carlo p-value ``(1 + k) / (n + 1)`` has a
    *floor*, ``1 / (n + 1)``, the smallest value it can take: a sample may carry each p-value's
    floor (``floors``). The Monte Carlo p-value is itself valid, so the test decides on it as
    it is; but Fisher's combination increases with each p, so where some p sits at its floor
    (the true p could be smaller) the combined p is an upper bound, printed ``"≤ 2.05e-15"``
    (rounded up), never as a point value.
``"trend"``
    The values are trials, each 1 when an event happened and 0 when not, and each trial has a
    covariate (``covariates``, e.g. ``log n`` of the size it ran at); the statistic is the
    one-sided p-value of the exact test of the event's rate rising with the covariate
    (:func:`~ntpnb._statistics.event_trend_pvalue`: the Cochran-Armitage statistic, its null
    distribution exact given the total of events). Pooled: all trials of all seeds, in one
    exact test (never a combination of the seeds' p-values: Fisher's method assumes continuous
    p-values, and a discrete test's p-values are larger than uniform, so their combination
    loses the power the pooled trials have). As for ``"pvalue"``, the target is the test's
    significance: a finding or measurement ``< target`` (the rate rises) holds when the p-value
    falls below it, with probability at most the target when the rate does not rise.
``"instances"``
    One value per random instance (per seed: a property of that seed's drawn instance, such
    as a ratio measured on it), to be decided with how the value varies *between* instances,
    not with the error within one. Pooled: the mean over the instances, with Student's t
    interval (``N - 1`` degrees of freedom, ``se = s / sqrt(N)``); printed with that interval
    at ``1 - 2 level``, the range of the instances' values and the interval in which a new
    instance's value falls with probability ``1 - 2 level`` (``mean +- t s sqrt(1 + 1/N)``),
    both exact when the instances' values are normal. One instance cannot be decided (its
    line prints ``OPEN`` and says so; :attr:`Sample.decidable` is false); two are the fewest
    that decide, with a wide interval (t with 1 degree of freedom).
``"median"``
    The values are trials of a heavy-tailed quantity, whose mean rests on a few trials and
    whose standard error would mislead: the estimate is their median, quoted with the
    quartiles, and a check is decided by the exact binomial test of a quantile
    (:func:`scipy.stats.quantile_test`, distribution-free). Pooled: all trials.

How a check decides, with ``z`` the standard normal quantile of ``1 - level``:

* a **claim** check of a bound (the paper says a value lies above or below a number: ``>``,
  ``>=``, ``<``, ``<=``) holds where the estimate lies on the bound's side, and is *missed*
  where it does not, whatever the test says: the test (``z`` as below) only says how sure the
  side is (:meth:`Sample.sureness`: established, contradicted, or within the test's noise), so
  a decision cannot flip because more seeds shrink the standard error. For ``"rate"`` the
  estimate is ``k / n``; for ``"instances"`` the mean over the instances. Where the true value
  lies on the bound's side, the estimate lies on the other with probability below one half,
  and far below once the value is a few standard errors from the bound; a card states which;
* a **claim** check of a consistency (``~``: the paper reports a value) fails only when the data
  contradict it at that level: ``|estimate - target| <= tol + z se``; for ``"mean_quantile"``,
  ``level/2 < q < 1 - level/2``; for ``"instances"``, ``z`` is Student's t quantile with
  ``N - 1`` degrees of freedom. A true claim fails with probability at most ``2 level``, one
  tail each side (``"instances"``: when the instances' values are normal); a ``"pvalue"``
  claim ``> target`` fails when the combined p falls to the target or below (probability at
  most the target when the claim is true);
* a claim check of a strict difference (the paper says two things differ, or one exceeds the
  other) is not evidence when merely not contradicted, since no difference is not contradicted
  either: such a sample is made with ``establish=True`` and holds where the data establish it,
  as a finding does; a verdict counts it *missed* where its estimate lies on the wrong side, and
  *not decided* where the estimate lies on its side within the test's noise (more trials may
  decide it: the card says so);
* a **finding** check (the relation is the shortfall), and a **measurement** (a statement of
  ours that qualifies a claim), hold only when the data establish them:
  ``>`` needs ``estimate - z se > target``, ``<`` needs ``estimate + z se < target`` (for
  ``"rate"``: the interval's lower end above, or its upper end below, the target); for
  ``"mean_quantile"``, ``>`` (our means exceed the paper's value) needs ``q < level`` and ``<``
  needs ``q > 1 - level``. A shortfall that is not there is recorded with probability at most
  ``level``.

A value the authors' own stored artifact shows (a figure's last point, a mean over ``trials``
of their trials) is compared with the pooled sample by
:meth:`Sample.consistent_with`: with a mean over ``trials`` trials,
``|value - estimate| <= precision + z' sqrt(se^2 + s^2/trials)`` with ``z'`` at ``level/2`` on
each side; for ``"mean_quantile"``, the value's mid-rank among our means of ``trials`` trials
lies in ``(level/2, 1 - level/2)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from statistics import NormalDist
from typing import Any

import numpy as np
import scipy

from .. import settings
from .._statistics import bootstrap_means, event_trend_pvalue, wilson_interval
from .._validation import as_count, as_flag
from ..errors import InvalidDataError

#: The error rate of a statistical check (see the module docstring); rare by chance over a sweep.
DEFAULT_LEVEL = 0.01

#: The kinds of check that hold only when the data establish them (see the module docstring).
ESTABLISHED_KINDS: tuple[str, ...] = ("finding", "measurement")

#: The relations of a bound: a claim that a value lies on one side of a number.
BOUNDS: tuple[str, ...] = (">", ">=", "<", "<=")

#: The tests a :class:`Sample` can be checked with (see the module docstring).
TESTS: tuple[str, ...] = (
    "mean",
    "estimate",
    "mean_quantile",
    "rate",
    "pvalue",
    "instances",
    "median",
    "trend",
)

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
    #: The trials' values (``"mean"``, ``"mean_quantile"``, ``"rate"``, ``"trend"``), the estimates
    #: (``"estimate"``), the p-values (``"pvalue"``) or one value per instance (``"instances"``).
    values: tuple[float, ...]
    #: The standard error of each estimate (``"estimate"`` only).
    errors: tuple[float, ...] = ()
    #: ``"mean_quantile"``: how many trials the target is a mean of.
    trials: int = 0
    level: float = DEFAULT_LEVEL  # the test's error rate
    #: A claim check of a strict difference: holds only when the data establish it.
    establish: bool = False
    #: ``"pvalue"`` only: the smallest value each p-value's test can output (a Monte Carlo
    #: test's ``1 / (n_sim + 1)``), one per p-value, or none (see the module docstring).
    floors: tuple[float, ...] = ()
    #: ``"trend"`` only: each trial's covariate, one per value (see the module docstring).
    covariates: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.test not in TESTS:
            raise InvalidDataError(f"unknown statistical test {self.test!r}; use one of {list(TESTS)}")
        object.__setattr__(self, "values", _finite_tuple(self.values, "the sample's values"))
        object.__setattr__(self, "errors", _finite_tuple(self.errors, "the standard errors"))
        object.__setattr__(self, "floors", _finite_tuple(self.floors, "the p-values' floors"))
        object.__setattr__(self, "covariates", _finite_tuple(self.covariates, "the trials' covariates"))
        if not 0.0 < float(self.level) < 0.5:
            raise InvalidDataError(f"a test's level must lie in (0, 0.5), got {self.level!r}")
        minimum = 1 if self.test in ("estimate", "pvalue", "instances") else 2
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
            object.__setattr__(self, "trials", as_count(self.trials, "a 'mean_quantile' test's trials"))
        elif self.trials != 0:
            raise InvalidDataError(
                f"a {self.test!r} test takes no trials (only 'mean_quantile'), got {self.trials!r}"
            )
        if self.test in ("rate", "trend") and not all(v in (0.0, 1.0) for v in self.values):
            raise InvalidDataError(
                f"a {self.test!r} test needs one 0 or 1 per trial (whether the event happened)"
            )
        if self.test == "pvalue" and not all(0.0 < v <= 1.0 for v in self.values):
            raise InvalidDataError("a 'pvalue' test needs p-values in (0, 1]")
        self._check_floors()
        self._check_covariates()
        object.__setattr__(self, "establish", as_flag(self.establish, "establish"))

    def _check_floors(self) -> None:
        if not self.floors:
            return
        if self.test != "pvalue":
            raise InvalidDataError(f"a {self.test!r} test takes no floors (only 'pvalue')")
        if len(self.floors) != len(self.values) or not all(0.0 < f <= 1.0 for f in self.floors):
            raise InvalidDataError("a 'pvalue' test's floors must be one number in (0, 1] per p-value")
        below = [
            (p, f)
            for p, f in zip(self.values, self.floors, strict=True)
            if p < f * (1 - settings.PVALUE_FLOOR_RTOL)
        ]
        if below:
            p, f = below[0]
            raise InvalidDataError(
                f"a p-value of {p:g} lies below its floor {f:g}: its test cannot output it"
            )

    def _check_covariates(self) -> None:
        if self.test != "trend":
            if self.covariates:
                raise InvalidDataError(f"a {self.test!r} test takes no covariates (only 'trend')")
            return
        if len(self.covariates) != len(self.values):
            raise InvalidDataError(
                f"a 'trend' test needs one covariate per trial, got {len(self.covariates)} for "
                f"{len(self.values)} trials"
            )
        if len(set(self.covariates)) < 2:
            raise InvalidDataError("a 'trend' test's covariates must take at least two values")

    @classmethod
    def pooled(cls, samples: Sequence[Sample]) -> Sample:
        """One sample from the samples of every seed (the same test, level, trials and floors or none)."""
        first = samples[0]
        for other in samples[1:]:
            if other.setting != first.setting:
                raise InvalidDataError(
                    f"cannot pool a {other.test!r} test (level {other.level}, trials {other.trials}, "
                    f"establish {other.establish}, floors {bool(other.floors)}) with a {first.test!r} "
                    f"test (level {first.level}, trials {first.trials}, establish {first.establish}, "
                    f"floors {bool(first.floors)})"
                )
        values = tuple(v for s in samples for v in s.values)
        errors = tuple(e for s in samples for e in s.errors)
        floors = tuple(f for s in samples for f in s.floors)
        covariates = tuple(x for s in samples for x in s.covariates)
        return cls(first.test, values, errors, first.trials, first.level, first.establish, floors, covariates)

    @property
    def setting(self) -> tuple[str, int, float, bool, bool]:
        """What must agree for two samples to pool: test, trials, level, establish, whether floors."""
        return (self.test, self.trials, self.level, self.establish, bool(self.floors))

    @property
    def size(self) -> int:
        """How many trials (estimates, tests, instances) the sample holds."""
        return len(self.values)

    @property
    def events(self) -> int:
        """``"rate"``: how many trials saw the event."""
        return round(math.fsum(self.values))

    @property
    def decidable(self) -> bool:
        """Whether the sample can decide its check: not one instance alone (see the module docstring)."""
        return not (self.test == "instances" and self.size < 2)

    @property
    def at_floor(self) -> int:
        """``"pvalue"``: how many p-values sit at their floor (0 without floors)."""
        if not self.floors:
            return 0
        return sum(
            p <= f * (1 + settings.PVALUE_FLOOR_RTOL) for p, f in zip(self.values, self.floors, strict=True)
        )

    @property
    def vacuous(self) -> bool:
        """``"pvalue"``: every p-value is 1 (capped corrections, say): Fisher's method can reject nothing."""
        return self.test == "pvalue" and all(p == 1.0 for p in self.values)

    def estimate(self) -> tuple[float, float]:
        """The estimate and its standard error (the mean; ``"estimate"``: inverse-variance weighted).

        One instance alone has no standard error (NaN).
        """
        if self.test == "estimate":
            weights = [1.0 / e**2 for e in self.errors]
            total = math.fsum(weights)
            mean = math.fsum(w * v for w, v in zip(weights, self.values, strict=True)) / total
            return mean, math.sqrt(1.0 / total)
        n = len(self.values)
        mean = math.fsum(self.values) / n
        if n < 2:
            return mean, float("nan")
        var = math.fsum((v - mean) ** 2 for v in self.values) / (n - 1)
        return mean, math.sqrt(var / n)

    def quantile(self) -> float:
        """The one-sided quantile the tests use at :attr:`level`: normal, or Student's t (``"instances"``)."""
        if self.test == "instances":
            return float(scipy.stats.t.ppf(1.0 - self.level, self.size - 1))
        return NormalDist().inv_cdf(1.0 - self.level)

    def instance_intervals(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """``"instances"``: the ``1 - 2 level`` intervals of the mean and of a new instance's value."""
        if self.test != "instances" or not self.decidable:
            raise InvalidDataError("only an 'instances' test of at least 2 instances has these intervals")
        mean, se = self.estimate()
        half, spread = self.quantile() * se, self.quantile() * se * math.sqrt(self.size + 1)
        return (mean - half, mean + half), (mean - spread, mean + spread)  # s sqrt(1 + 1/N) = se sqrt(N + 1)

    def rate_interval(self) -> tuple[float, float]:
        """``"rate"``: Wilson's interval of the rate, at :attr:`level` on each side."""
        return wilson_interval(round(math.fsum(self.values)), self.size, 1.0 - 2.0 * self.level)

    @cached_property
    def bootstrap_means(self) -> Any:
        """``"mean_quantile"``: the means of ``trials`` trials resampled from the values, drawn once."""
        if self.test != "mean_quantile":
            raise InvalidDataError(f"a {self.test!r} test has no bootstrap means (only 'mean_quantile')")
        return bootstrap_means(self.values, self.trials, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED)

    def quantile_of(self, target: float) -> float:
        """``"mean_quantile"``: the mid-rank of ``target`` among bootstrap means of ``trials`` trials.

        The fraction of means below it plus half the fraction equal to it, so that a target at
        an atom of the means (0 for distances that are often exactly 0) is not called extreme.
        """
        means = self.bootstrap_means
        return float((means < target).mean() + 0.5 * (means == target).mean())

    def median(self) -> float:
        """The values' median (``"median"``: the estimate)."""
        return float(np.median(self.values))

    def quartiles(self) -> tuple[float, float]:
        """The values' first and third quartiles (linear interpolation between order statistics)."""
        low, high = np.quantile(self.values, [0.25, 0.75])
        return float(low), float(high)

    def _median_pvalue(self, target: float, alternative: str) -> float:
        """``"median"``: the exact binomial test's p-value, the median ``alternative`` than ``target``."""
        return float(scipy.stats.quantile_test(self.values, q=target, p=0.5, alternative=alternative).pvalue)

    @cached_property
    def trend_pvalue(self) -> float:
        """``"trend"``: the exact trend test's one-sided p-value on every trial (computed once)."""
        if self.test != "trend":
            raise InvalidDataError(f"a {self.test!r} test has no trend p-value (only 'trend')")
        return event_trend_pvalue(self.values, self.covariates)

    def statistic(self, target: float) -> tuple[float, float]:
        """What the check compares: ``(estimate, se)``.

        ``"mean_quantile"``: ``(q, NaN)``; ``"median"``: ``(median, NaN)``; ``"pvalue"``: Fisher's
        combination of the p-values (the chi-squared tail in closed form) and NaN; ``"trend"``: the
        exact trend test's p-value and NaN.
        """
        if self.test == "trend":
            return self.trend_pvalue, float("nan")
        if self.test == "mean_quantile":
            return self.quantile_of(target), float("nan")
        if self.test == "median":
            return self.median(), float("nan")
        if self.test == "pvalue":  # Fisher's method: -2 sum log p against chi-squared with 2k dof
            combined = scipy.stats.combine_pvalues(self.values, method="fisher").pvalue
            return min(1.0, float(combined)), float("nan")
        return self.estimate()

    def decide(self, relation: str, target: float, tol: float, kind: str) -> bool:
        """Whether the check holds (see the module docstring for the rule of each kind).

        A sample that is not :attr:`decidable` (one instance) holds nothing: its check is open.
        """
        value, se = self.statistic(target)
        if self.establishes(kind):
            rules = self._established_rules(value, se, target)
        else:
            rules = self._claim_rules(value, se, target, tol)
        if relation not in rules:
            takes = f"takes a relation in {sorted(rules)}, not {relation!r}"
            raise InvalidDataError(f"a {kind} check with a {self.test!r} test {takes}")
        return bool(rules[relation])

    def establishes(self, kind: str) -> bool:
        """Whether a check of ``kind`` on this sample holds only when the data establish it."""
        return kind in ESTABLISHED_KINDS or self.establish

    def _slack(self, se: float) -> float:
        """The test's one-sided margin ``z se`` (NaN for a sample that cannot decide: every rule is false)."""
        return self.quantile() * se if self.decidable else math.nan

    def _established_rules(self, value: float, se: float, target: float) -> dict[str, bool]:
        """Relation -> whether the data establish it at :attr:`level` (findings, measurements)."""
        if self.test == "mean_quantile":  # value is q
            return {">": value < self.level, "<": value > 1.0 - self.level}
        if self.test == "median":
            return {
                ">": self._median_pvalue(target, "greater") < self.level,
                "<": self._median_pvalue(target, "less") < self.level,
            }
        if self.test in ("pvalue", "trend"):  # value is a p-value; the target its significance
            return {"<": value < target}
        if self.test == "rate":
            low, high = self.rate_interval()
            return {">": low > target, "<": high < target}
        slack = self._slack(se)
        return {">": value - slack > target, "<": value + slack < target}

    def _claim_rules(self, value: float, se: float, target: float, tol: float) -> dict[str, bool]:
        """Relation -> whether a paper's claim holds on this sample.

        A bound (``>``, ``>=``, ``<``, ``<=``) holds where the estimate lies on its side: the test
        only says how sure that is (:meth:`certainty`), so more trials cannot turn an estimate on
        the wrong side into a bound that holds. ``~`` is a consistency: not contradicted by the
        test. A ``"pvalue"`` claim holds where the combined p is above its significance.
        """
        if self.test == "mean_quantile":  # value is q
            return {"~": self.level / 2 < value < 1.0 - self.level / 2}
        if self.test in ("pvalue", "trend"):
            return {">": value > target}
        if self.test == "median":
            within = abs(value - target) <= tol or self._median_pvalue(target, "two-sided") > self.level
            return {
                ">": value > target,
                ">=": value >= target,
                "<": value < target,
                "<=": value <= target,
                "~": within,
            }
        if not self.decidable:
            return dict.fromkeys((*BOUNDS, "~", "=="), False)
        rules = {
            ">": value > target,
            ">=": value >= target,
            "<": value < target,
            "<=": value <= target,
        }
        if self.test == "rate":
            return {**rules, "==": value == target}
        return {**rules, "~": abs(value - target) <= tol + self._slack(se)}

    def side(self, relation: str, target: float) -> bool:
        """Whether the estimate lies on the side of ``target`` that the bound ``relation`` names."""
        value = self.statistic(target)[0]
        return bool(
            {">": value > target, ">=": value >= target, "<": value < target, "<=": value <= target}[relation]
        )

    def sureness(self, relation: str, target: float) -> str:
        """How sure a claim's bound decided on the estimate is, as a test at :attr:`level` says.

        ``"established"`` (the test shows the estimate's side), ``"contradicted"`` (it shows the
        other side), ``"noise"`` (neither: more trials may move the estimate), or ``""`` for a
        relation that is no bound or a test that decides no side (``"mean_quantile"``,
        ``"pvalue"``, one instance).
        """
        if relation not in BOUNDS or self.test in ("mean_quantile", "pvalue", "trend") or not self.decidable:
            return ""
        strict = relation.rstrip("=")
        other = "<" if strict == ">" else ">"
        value, se = self.statistic(target)
        rules = self._established_rules(value, se, target)
        return "established" if rules[strict] else "contradicted" if rules[other] else "noise"

    def quotable(self) -> None:
        """Refuse a sample with no estimate to quote in a sentence (a quantile's or a p-value's test).

        Raises
        ------
        InvalidDataError
            For a ``"mean_quantile"``, ``"pvalue"`` or ``"trend"`` sample.
        """
        if self.test in ("mean_quantile", "pvalue", "trend"):
            raise InvalidDataError(f"a {self.test!r} sample has no estimate to quote")

    def consistent_with(self, value: float, trials: int = 0, precision: float = 0.0) -> bool:
        """Whether ``value``, read to within ``precision``, is consistent with this sample.

        ``value`` is a mean over ``trials`` trials of the same experiment (0: an exact value); the
        rule is the module docstring's (a ``"mean"``, ``"estimate"``, ``"instances"`` or
        ``"mean_quantile"`` test).
        """
        if self.test == "trend":
            raise InvalidDataError("a stored value is compared with a mean, not with a 'trend' test")
        if self.test == "mean_quantile":
            low, high = self.quantile_of(value - precision), self.quantile_of(value + precision)
            return high > self.level / 2 and low < 1.0 - self.level / 2
        if not self.decidable:
            return False
        estimate, se = self.estimate()
        spread = 0.0
        if trials and self.test == "mean":
            spread = se * se * self.size / trials  # their mean's variance, s^2 / trials
        z = NormalDist().inv_cdf(1.0 - self.level / 2)
        if self.test == "instances":
            z = float(scipy.stats.t.ppf(1.0 - self.level / 2, self.size - 1))
        return abs(value - estimate) <= precision + z * math.sqrt(se * se + spread)


#: A :class:`Sample` from any iterable of numbers (numpy arrays included): ``trials``,
#: ``level``, ``establish``, ``floors`` and ``covariates`` by keyword.
sample_of = Sample
