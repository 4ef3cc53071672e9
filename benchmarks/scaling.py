"""Measurements of time against a count, their tables, and the fitted power law ``time ~ count^a``.

Every table of the benchmarks page is a :class:`Table` of :class:`Measurement` s: one method at one
size, with the count the growth is read in (constraints, unknowns, ``m``, iterations). The exponent
``a`` is the least-squares slope of ``log(seconds)`` against ``log(count)`` over the sizes where the
method took at least :data:`FIT_MIN_SECONDS` (below, fixed overhead dominates); a fit shown on the
page needs :data:`FIT_MIN_POINTS` such sizes, and says so when it has fewer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ntpnb.chapter import markdown_table

Size = tuple[int, ...]  # (m, V, d, S) for Paper A's solvers, (K, d, n, T) for Paper B's, ...

#: Times below this are mostly fixed overhead (imports, problem set-up) and left out of the fit.
FIT_MIN_SECONDS = 0.1
#: Sizes above :data:`FIT_MIN_SECONDS` an exponent shown on the page is fitted over, at least.
FIT_MIN_POINTS = 3


@dataclass
class Measurement:
    """One method at one size: its time, or why it has none, and its answer's distance to fast."""

    method: str
    size: Size
    count: int  # the problem-size measure the exponent is fitted against (Benchmark.count_label)
    seconds: float | None = None
    note: str = ""
    rel_diff: float | None = None  # SVM: ||W - W_fast|| / ||W_fast||; separability: 0 if same answer
    excess: float | None = None  # SVM: ||W||^2 / ||W_fast||^2 - 1 (>= 0 if W_fast is the minimum)
    peak_mib: float | None = None
    certificate: str = ""  # what the solver verified about this answer (Benchmark.certify)


@dataclass
class Table:
    """The measurements of one problem (the NTP-SVM, separability, the path, ...)."""

    problem: str
    methods: list[str]
    measurements: list[Measurement] = field(default_factory=list)
    budget: float | None = None
    size_label: str = "(m, V, d, S)"
    count_label: str = "constraints (6b)"
    fit_label: str = "d > m"


def d_over_m(size: Size) -> bool:
    """Paper A's sizes ``(m, V, d, S)`` with ``d > m``: the kind its exponents are fitted over."""
    return size[2] > size[0]


def all_sizes(_size: Size) -> bool:
    """Every size is of the fitted kind."""
    return True


def fit_points(table: Table, method: str, fit_kind: Callable[[Size], bool] = d_over_m) -> list[Measurement]:
    """The method's measurements a fit uses: of the fitted kind, timed at least :data:`FIT_MIN_SECONDS`."""
    return [
        m
        for m in table.measurements
        if m.method == method and m.seconds is not None and m.seconds >= FIT_MIN_SECONDS and fit_kind(m.size)
    ]


def power_law_fit(
    table: Table,
    method: str,
    fit_kind: Callable[[Size], bool] = d_over_m,
    min_points: int = FIT_MIN_POINTS,
) -> tuple[float, float] | None:
    """``(a, log c)`` of the least-squares fit ``log(seconds) = a log(count) + log c``.

    Over :func:`fit_points` (the sizes of the fitted kind, Paper A: ``d > m``, where the method
    took at least :data:`FIT_MIN_SECONDS`); None with fewer than ``min_points`` distinct counts.
    """
    pts = [(np.log(m.count), np.log(m.seconds)) for m in fit_points(table, method, fit_kind)]
    if len({p[0] for p in pts}) < max(2, min_points):
        return None
    x, y = np.array(pts).T
    slope, intercept = np.polyfit(x, y, 1)
    return float(slope), float(intercept)


def scaling_exponent(
    table: Table, method: str, fit_kind: Callable[[Size], bool] = d_over_m, min_points: int = FIT_MIN_POINTS
) -> float | None:
    """The exponent ``a`` of :func:`power_law_fit` (time ~ count^a), or None."""
    fit = power_law_fit(table, method, fit_kind, min_points)
    return None if fit is None else fit[0]


def format_exponent(exponent: float | None) -> str:
    """The exponent to two decimals, or why there is none."""
    return f"{exponent:.2f}" if exponent is not None else f"n/a (fewer than {FIT_MIN_POINTS} sizes)"


def format_fitted_sizes(table: Table, method: str, fit_kind: Callable[[Size], bool] = d_over_m) -> str:
    """How many distinct counts the fit used and their range, e.g. ``4 (100 to 800)``."""
    counts = sorted({m.count for m in fit_points(table, method, fit_kind)})
    if not counts:
        return "0"
    return f"{len(counts)} ({counts[0]:,} to {counts[-1]:,})" if len(counts) > 1 else f"1 ({counts[0]:,})"


@dataclass(frozen=True)
class ExponentRow:
    """One line of the page's summary of fitted exponents."""

    problem: str
    method: str
    count_label: str
    fit_label: str
    exponent: float | None
    sizes: str


def exponent_rows(table: Table, fit_kind: Callable[[Size], bool] = d_over_m) -> list[ExponentRow]:
    """Every method of ``table`` as a summary line (:func:`format_exponent_summary`)."""
    return [
        ExponentRow(
            table.problem,
            name,
            table.count_label,
            table.fit_label,
            scaling_exponent(table, name, fit_kind),
            format_fitted_sizes(table, name, fit_kind),
        )
        for name in table.methods
    ]


def format_exponent_summary(rows: list[ExponentRow]) -> str:
    """A Markdown table: problem and method, the count fitted in, the exponent, the sizes fitted."""
    head = ["problem: method", "count the time is fitted in", "exponent a (time ~ count^a)", "sizes fitted"]
    cells = []
    for r in rows:
        where = r.count_label + (f" ({r.fit_label})" if r.fit_label != "all sizes" else "")
        cells.append([f"{r.problem}: {r.method}", where, format_exponent(r.exponent), r.sizes])
    return markdown_table(head, cells)
