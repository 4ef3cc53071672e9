"""The measures of chapter 8's maps: what :func:`~ntpnb.explore._results.run_grid` runs at each point.

Each map's measure is a callable ``measure(point, seed)`` that runs the point's experiment and
returns the map's checks there (:func:`~ntpnb.explore._results.point_check`), keeping each run for
the chapter's tables and figures (``runs``):

- :class:`StepSizeMeasure` (M1): GD at one step size on Paper A's synthetic instance
  (:func:`~ntpnb.linear.experiments._beyond.step_run`);
- :class:`HorizonMeasure` (M2): the steps GD needs to reach a correlation with ``W^mm``, on an
  instance of the paper's recipe with ``m`` contexts
  (:func:`~ntpnb.linear.experiments._beyond.horizons_by_budget`);
- :class:`ConditionsMeasure` (M3): a nested random draw at one ``d``
  (:func:`~ntpnb.linear.experiments._beyond.condition_point`);
- :class:`AttentionStepMeasure` (M4): Paper B's Fig. 3 trials at one normalized GD step
  (:func:`~ntpnb.attention._paper_experiments.acyclic_end`);
- :class:`AttentionSamplesMeasure` (M5): Paper B's Fig. 5 trials with ``n`` samples, under each
  loss (:func:`~ntpnb.attention._paper_experiments.local_end`).

A measure's ``runs`` holds each point's run once, in the order the grid ran them: M4's and M5's
trials are run for every seed at once and read at each seed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from .._optim import Trace
from ..attention._paper_experiments import acyclic_end, local_end
from ..evidence._checks import Check
from ..evidence._samples import Sample
from ..linear._condition_thresholds import NestedInstance
from ..linear._decoder_training import Limits, limits
from ..linear._ntp_data import NTPData
from ..linear._recipes import synthetic_instance
from ..linear.experiments._beyond import (
    ConditionPoint,
    StepsToCorr,
    condition_point,
    horizons_by_budget,
    smoothness,
    step_run,
)
from ..linear.experiments._curves import lecun_decoder, own_stream
from ._results import point_check

__all__ = [
    "StepSizeMeasure",
    "HorizonMeasure",
    "ConditionsMeasure",
    "AttentionStepMeasure",
    "AttentionSamplesMeasure",
]


@dataclass(frozen=True, eq=False)
class StepSizeMeasure:
    """Map M1: GD at the point's step ``gd_lr`` from ``W0`` for ``n_iter`` steps, and its two checks.

    The checks: ``corr(W_K, W^mm)`` above ``corr_level``, and the finite part's distance to
    ``W*`` at the budget relative to its start, ``||P_F(W_K) - W*|| / ||P_F(W_0) - W*||``, below
    ``dist_ratio_max``. The instance does not depend on the seed.
    """

    data: NTPData
    lim: Limits
    W0: np.ndarray
    #: The budget, and the records (:func:`~ntpnb.linear.experiments._beyond.step_run`).
    n_iter: int
    dense_iter: int
    n_records: int
    corr_level: float
    dist_ratio_max: float
    #: Every run, by step.
    runs: dict[float, Trace] = field(default_factory=dict, repr=False)

    def __call__(self, point: Mapping[str, Any], seed: int) -> list[Check]:
        """The run at ``point["gd_lr"]`` (kept in :attr:`runs`) and its checks; ``seed`` is not read."""
        run = step_run(
            self.data, self.lim, self.W0, point["gd_lr"], self.n_iter, self.dense_iter, self.n_records
        )
        self.runs[run.lr] = run
        return [
            point_check("M1", "corr(W_K, W^mm) at the budget", run.corr, ">", self.corr_level),
            point_check(
                "M1",
                "||P_F(W_K) - W*|| / ||P_F(W_0) - W*|| at the budget",
                run.dist_F / run.dist_F0,
                "<",
                self.dist_ratio_max,
            ),
        ]


@dataclass(frozen=True, eq=False)
class HorizonMeasure:
    """Map M2: GD at ``1/(2L)`` on an instance of Paper A's recipe with the point's ``m`` contexts.

    The instance at seed ``s``: ``synthetic_instance(n = samples_per_context m, m, d = round(d_per_m
    m), V, S, seed=s)``, GD from its LeCun start (``own_stream(s, 1)``) with the largest step Lemma 2
    covers, read at each of ``budgets``
    (:func:`~ntpnb.linear.experiments._beyond.horizons_by_budget`). The check: ``log10`` of the
    steps to ``corr(W_k, W^mm) >= level`` from the largest budget, above the budget's ``log10``.
    """

    d_per_m: float
    V: int
    S: int
    budgets: Sequence[int]
    level: float
    n_records: int
    samples_per_context: int = 100
    #: Every size's extrapolations, one per budget, by ``m``.
    runs: dict[int, tuple[StepsToCorr, ...]] = field(default_factory=dict, repr=False)

    def __call__(self, point: Mapping[str, Any], seed: int) -> list[Check]:
        """The extrapolations at ``point["m"]`` and ``seed`` (kept in :attr:`runs`) and the check."""
        size = point["m"]
        n, d = self.samples_per_context * size, round(self.d_per_m * size)
        data = synthetic_instance(n=n, m=size, d=d, V=self.V, S=self.S, seed=seed)
        bound = smoothness(data, np.zeros((data.V, data.d))).bound
        start = lecun_decoder(data, own_stream(seed, 1))
        self.runs[size] = horizons_by_budget(
            data, limits(data), start, 1 / (2 * bound), self.budgets, self.level, self.n_records
        )
        last = self.runs[size][-1]
        what = f"log10 of the steps to corr {self.level:g}"
        return [point_check("M2", what, last.log10_k, ">", np.log10(self.budgets[-1]))]


#: Map M3's check of the gap, by whether both conditions hold at the point: what Proposition 1
#: predicts there (a gap where a condition fails, none where both hold).
GAP_CHECKS: Mapping[bool, str] = MappingProxyType(
    {False: "inf CE - H where a condition fails", True: "inf CE - H where both conditions hold"}
)


@dataclass(frozen=True, eq=False)
class ConditionsMeasure:
    """Map M3: one nested random draw at the point's ``d``: the gap ``inf CE - H`` and GD's approach.

    The checks, where neither condition's decision was numerically ambiguous (none there): the gap
    as Proposition 1 predicts it, above ``gap_floor`` where a condition fails (``inf CE > H``)
    and at most ``gap_floor`` where both hold (:data:`GAP_CHECKS`: a map of each, so that a
    point fails only where the proposition does), and GD's ``CE - inf CE`` after ``gd_steps``
    relative to step 1 below ``gd_fast_ratio``.
    """

    draw: NestedInstance
    gd_steps: int
    gd_fast_ratio: float
    #: The gap counted as positive: above the certificates' rounding.
    gap_floor: float = 1e-9
    #: Every point, by ``d``.
    runs: dict[int, ConditionPoint] = field(default_factory=dict, repr=False)

    def __call__(self, point: Mapping[str, Any], seed: int) -> list[Check]:
        """The draw at ``point["d"]`` (kept in :attr:`runs`) and its checks; ``seed`` is not read."""
        p = condition_point(self.draw, point["d"], self.gd_steps)
        self.runs[p.d] = p
        if p.ambiguous:
            return []
        both = p.compatible and p.separable
        return [
            point_check("M3", GAP_CHECKS[both], p.gap, "<=" if both else ">", self.gap_floor),
            point_check(
                "M3", "GD: CE - inf CE, at the budget / at step 1", p.gd_ratio, "<", self.gd_fast_ratio
            ),
        ]


@dataclass(frozen=True, eq=False)
class AttentionStepMeasure:
    """Map M4: Paper B's Fig. 3 trials after ``n_iter`` normalized GD steps of the point's ``lr``.

    The trials of every seed of ``seeds`` run at once at each step
    (:func:`~ntpnb.attention._paper_experiments.acyclic_end` with ``sizes``); a point's checks at
    a seed read that seed's: the trials' mean ``corr(W, W^mm)`` above ``required`` (B8's), and
    the rate of trials whose gradient underflowed to 0, zero.
    """

    sizes: Mapping[str, int]
    n_trials: int
    n_iter: int
    seeds: Sequence[int]
    required: float
    #: Every step's trials, by step.
    runs: dict[float, Trace] = field(default_factory=dict, repr=False)

    def trials(self, lr: float) -> Trace:
        """The trials of every seed at step ``lr``: one batched training, run once."""
        if lr not in self.runs:
            self.runs[lr] = acyclic_end(
                lr=lr, **self.sizes, n_trials=self.n_trials, n_iter=self.n_iter, seeds=self.seeds
            )
        return self.runs[lr]

    def __call__(self, point: Mapping[str, Any], seed: int) -> list[Check]:
        """M4's checks at step ``point["lr"]`` on the trials of ``seed``."""
        trials = self.trials(point["lr"]).at(seed)
        return [
            point_check(
                "M4", "mean corr(W, W^mm) at the end", Sample("mean", trials.corr), ">", self.required
            ),
            point_check(
                "M4",
                "rate of trials whose gradient underflowed to 0",
                Sample("rate", trials.stalled),
                "==",
                0.0,
            ),
        ]


@dataclass(frozen=True, eq=False)
class AttentionSamplesMeasure:
    """Map M5: Paper B's Fig. 5 trials with the point's ``n`` samples, under each loss of ``losses``.

    ``losses``: protocol key -> loss (``"authors' loss"``: ``"squared_softmax"``, ...). The trials
    of every seed run at once for each ``n`` and loss
    (:func:`~ntpnb.attention._paper_experiments.local_end` with ``sizes``, ``lr``, ``n_iter`` and
    the keywords of ``protocol``). A point's checks at a seed, under each loss, read that seed's:
    the mean ``corr(W, W~mm)`` above ``required`` (B10's), the rate of trials with a non-empty
    pseudo cyclic sub-dataset at most ``empty_rate``, and the mean pseudo cyclic distance below
    the step ``lr``.
    """

    losses: Mapping[str, str]
    sizes: Mapping[str, int]
    n_trials: int
    lr: float
    n_iter: int
    seeds: Sequence[int]
    protocol: Mapping[str, Any]
    required: float
    empty_rate: float
    #: Every size's trials under each loss, by ``(n, loss)``.
    runs: dict[tuple[int, str], Trace] = field(default_factory=dict, repr=False)

    def trials(self, n: int, loss: str) -> Trace:
        """The trials of every seed with ``n`` samples under ``loss``: one batched training, run once."""
        if (n, loss) not in self.runs:
            self.runs[n, loss] = local_end(
                loss,
                **{**self.sizes, "n": n},
                n_trials=self.n_trials,
                lr=self.lr,
                n_iter=self.n_iter,
                seeds=self.seeds,
                **self.protocol,
            )
        return self.runs[n, loss]

    def rise(self, sizes: Sequence[int], loss: str, seeds: Sequence[int]) -> Sample:
        """Whether each trial's pseudo cyclic sub-dataset is non-empty, against ``log n``: a trend sample.

        The trials of ``seeds`` at each of ``sizes`` under ``loss``, pooled (the samples of the
        seeds one by one pool to the same trials): the exact test of the non-empty rate rising
        with ``log n``.
        """
        ends = [(n, self.trials(n, loss).at(seed).nonempty) for seed in seeds for n in sizes]
        covariates = np.concatenate([np.full(nonempty.size, np.log(n)) for n, nonempty in ends])
        return Sample("trend", np.concatenate([nonempty for _, nonempty in ends]), covariates=covariates)

    def __call__(self, point: Mapping[str, Any], seed: int) -> list[Check]:
        """M5's checks with ``point["n"]`` samples on the trials of ``seed``, under each loss."""
        checks = []
        for protocol, loss in self.losses.items():
            trials = self.trials(point["n"], loss).at(seed)
            checks += [
                point_check(
                    "M5", "mean corr(W, W~mm) at the end", Sample("mean", trials.corr_local), ">",
                    self.required, protocol=protocol,
                ),
                point_check(
                    "M5", "rate of trials with a non-empty pseudo cyclic sub-dataset",
                    Sample("rate", trials.nonempty), "<=", self.empty_rate, protocol=protocol,
                ),
                point_check(
                    "M5", "mean pseudo cyclic distance at the end", Sample("mean", trials.dist_local), "<",
                    self.lr, protocol=protocol,
                ),
            ]  # fmt: skip
        return checks
