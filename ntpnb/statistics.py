"""Statistics of many random trials: intervals, threshold crossings, finite-size fits, tests.

The chapters call these to summarize their random sweeps (Wilson intervals, where a curve crosses
a level and with what error, the drift of a threshold with size, a goodness-of-fit test with a
simulated null, the exact test of a trend in rates and its power), and :func:`sample_of` to record a
statistical claim check as a :class:`Sample`, which the verdict tests pooled over the seeds. Each
test, its error rate and its pooling are described where they are defined (``ntpnb._statistics``,
and ``ntpnb.evidence._samples`` for the claim checks).
"""

from __future__ import annotations

from ._statistics import (
    FiniteSizeFit,
    binomial_deviance,
    bootstrap_means,
    crossing,
    crossing_interval,
    finite_size_fit,
    threshold_crossing_bootstrap,
    threshold_gof_pvalue,
    trend_power,
    trend_pvalue,
    wilson_interval,
)
from .evidence._samples import Sample, sample_of

#: What the chapters call, and the types they receive.
__all__ = [
    "wilson_interval",
    "crossing",
    "crossing_interval",
    "threshold_crossing_bootstrap",
    "FiniteSizeFit",
    "finite_size_fit",
    "binomial_deviance",
    "threshold_gof_pvalue",
    "bootstrap_means",
    "trend_pvalue",
    "trend_power",
    "Sample",
    "sample_of",
]
