"""Timing methods side by side: a :class:`Benchmark`, its skip rule, and the table one run of it measures.

:func:`run_table` times every method of a :class:`Benchmark` at every size, one instance per size
and every method on the same instance, each after one untimed run (:func:`warm_up`). A method is
skipped at a size when its time at the previous size of the same kind, scaled by (count ratio) **
exponent, exceeds the budget (:func:`predicted_seconds`); every other answer is compared with the
answer of :data:`FAST`, whose peak memory is measured too.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ntpnb.errors import NTPError

from .instances import fresh_copy
from .scaling import Measurement, Size, Table, d_over_m, power_law_fit

#: The method every other answer is compared with, and whose peak memory is measured.
FAST = "fast"

#: A method is skipped at a size when its time at the previous size of the same kind (d > m, or
#: d <= m), scaled by (constraints ratio) ** PREDICTION_EXPONENT, exceeds the budget (or by the
#: exponent fitted over the sizes measured so far, for a Benchmark whose exponent is None).
PREDICTION_EXPONENT = 2.5


@dataclass(frozen=True)
class Benchmark:
    """A problem to time: its methods, how an instance of a size is made, what the size counts.

    ``fit_kind(size)`` splits the sizes into two kinds (for Paper A: ``d > m`` or not): a method's
    time is predicted from the previous size of the same kind, and the exponent is fitted over
    the sizes where it is True. ``certify`` turns a method's answer into a line saying what was
    verified. ``naive`` names the method the table's ratios are read against. ``exponent`` is
    the skip rule's (:func:`predicted_seconds`); None: the exponent fitted over the sizes
    measured so far (:func:`power_law_fit`), for a method whose growth the default misjudges.
    ``intro`` is what the table measures, under its heading on the benchmarks page.
    """

    problem: str
    methods: Mapping[str, Callable]
    make: Callable[..., object]
    count: Callable[[Size, object], int]
    count_label: str
    naive: str | None = None
    size_label: str = "(m, V, d, S)"
    copy: Callable[[object], object] = fresh_copy
    certify: Callable[[object], str] | None = None
    fit_kind: Callable[[Size], bool] = d_over_m
    fit_label: str = "d > m"
    exponent: float | None = PREDICTION_EXPONENT
    intro: str = ""


def time_call(
    func: Callable, data: object, repeat_below: float = 1.0, repeats: int = 3, copy: Callable = fresh_copy
) -> tuple[float, object]:
    """Wall-clock seconds and value of ``func(copy(data))``: the best of ``repeats`` if the first is fast."""
    best, value = np.inf, None
    for k in range(repeats):
        fresh = copy(data)
        start = time.perf_counter()
        value = func(fresh)
        best = min(best, time.perf_counter() - start)
        if k == 0 and best >= repeat_below:
            break
    return best, value


def peak_memory_mib(func: Callable, data: object, copy: Callable = fresh_copy) -> float:
    """Peak memory allocated (numpy arrays included) during ``func(copy(data))``, in MiB."""
    tracemalloc.start()
    try:
        func(copy(data))
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def predicted_seconds(t_prev: float, n_prev: int, n: int, exponent: float = PREDICTION_EXPONENT) -> float:
    """The skip rule's prediction: ``t_prev (n / n_prev) ** exponent``."""
    return t_prev * (n / n_prev) ** exponent


def warm_up(bench: Benchmark, data: object) -> None:
    """Run every method of ``bench`` once on ``data``, untimed (a method that fails is left to the timing)."""
    for func in bench.methods.values():
        try:
            func(bench.copy(data))
        except NTPError:
            pass


def run_table(bench: Benchmark, sizes: Sequence[Size], budget: float) -> Table:
    """Time every method at every size (skipping predicted overruns) and compare the answers.

    Each method runs once untimed on the first instance (:func:`warm_up`), so that no time includes
    what happens once per process (imports, loading compiled kernels): otherwise the first size's
    time, from which the skip rule predicts the next, can be several times its real cost.
    """
    table = Table(bench.problem, list(bench.methods), budget=budget, size_label=bench.size_label)
    table.count_label, table.fit_label = bench.count_label, bench.fit_label
    last: dict[tuple[str, bool], tuple[int, float]] = {}
    warm = False
    for size in sizes:
        try:
            data = bench.make(*size)
        except NTPError as exc:
            print(f"  {bench.problem} {size}: no instance: {exc}", flush=True)
            continue
        if not warm:
            warm_up(bench, data)
            warm = True
        _run_size(bench, table, size, data, last, budget)
    return table


def _time_method(bench: Benchmark, meas: Measurement, func: Callable, data: object, answers: dict) -> bool:
    """Time one method on one instance into ``meas`` (its answer into ``answers``), and print the row.

    With the fast method also its peak memory, with a certifier its certificate. False (the
    failure noted in ``meas`` and printed) when the method raised an :class:`NTPError`.
    """
    name = meas.method
    try:
        meas.seconds, answers[name] = time_call(func, data, copy=bench.copy)
    except NTPError as exc:
        meas.note = f"failed: {exc}"[:120]
        print(f"  {bench.problem} {meas.size} {name}: {meas.note}", flush=True)
        return False
    if name == FAST:
        meas.peak_mib = peak_memory_mib(func, data, copy=bench.copy)
    if bench.certify is not None:
        meas.certificate = bench.certify(answers[name])
    print(f"  {bench.problem} {meas.size} {name}: {meas.seconds:.3f} s {meas.certificate}", flush=True)
    return True


def _run_size(
    bench: Benchmark,
    table: Table,
    size: Size,
    data: object,
    last: dict[tuple[str, bool], tuple[int, float]],
    budget: float,
) -> None:
    """Time every method on one instance, appending its measurements to ``table``, and compare answers.

    ``last`` holds each method's last timed (count, seconds) by fit kind, from which
    :func:`_skip_note` predicts an overrun; it is updated in place.
    """
    methods = bench.methods
    n = bench.count(size, data)
    answers = {}
    for name, func in methods.items():
        meas = Measurement(name, size, n)
        table.measurements.append(meas)
        key = (name, bench.fit_kind(size))
        skip = _skip_note(bench, table, name, n, last.get(key), budget)
        if skip:
            meas.note = skip
            print(f"  {bench.problem} {size} {name}: {meas.note}", flush=True)
            continue
        if _time_method(bench, meas, func, data, answers):
            last[key] = (n, meas.seconds)
    _compare_answers(table.measurements[-len(methods) :], answers)


def _skip_note(
    bench: Benchmark,
    table: Table,
    name: str,
    n: int,
    last: tuple[int, float] | None,
    budget: float,
) -> str | None:
    """Why ``name`` is skipped at count ``n`` (its time predicted from ``last`` over budget), or None."""
    if last is None:
        return None
    exponent = bench.exponent
    if exponent is None:
        fit = power_law_fit(table, name, bench.fit_kind, min_points=2)
        exponent = PREDICTION_EXPONENT if fit is None else fit[0]
    predicted = predicted_seconds(last[1], last[0], n, exponent)
    if predicted > budget:
        return f"skipped: predicted {predicted:.0f} s > budget {budget:.0f} s"
    return None


def _compare_answers(measurements: Sequence[Measurement], answers: Mapping[str, object]) -> None:
    """Each measurement's distance to the ``fast`` method's answer at the same size (in place)."""
    ref = answers.get(FAST)
    for meas in measurements:
        if meas.method in answers and ref is not None:
            a = answers[meas.method]
            if isinstance(a, np.ndarray):
                ref_sq = max(float(np.sum(ref**2)), 1e-300)
                meas.rel_diff = float(np.linalg.norm(a - ref)) / np.sqrt(ref_sq)
                meas.excess = float(np.sum(a**2)) / ref_sq - 1.0
            else:
                meas.rel_diff = 0.0 if bool(a) == bool(ref) else 1.0
