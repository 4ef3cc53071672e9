"""The tables of timed methods as Markdown: a solver's (a row per size), a training loop's (per optimizer).

Each is one :class:`~benchmarks.scaling.Table` of one :class:`~benchmarks.timing.Benchmark` run
(:func:`benchmarks.timing.run_table`), with its fitted exponents and, under it, the notes: each
method's largest size within the budget, then the skips and failures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ntpnb.chapter import markdown_table

from .scaling import (
    FIT_MIN_POINTS,
    FIT_MIN_SECONDS,
    Measurement,
    Size,
    Table,
    d_over_m,
    format_exponent,
    format_fitted_sizes,
    scaling_exponent,
)
from .timing import FAST


def largest_within(table: Table, method: str) -> Measurement | None:
    """The method's measurement at the largest count that ran within the table's budget."""
    done = [
        m
        for m in table.measurements
        if m.method == method
        and m.seconds is not None
        and (table.budget is None or m.seconds <= table.budget)
    ]
    return max(done, key=lambda m: m.count, default=None)


def format_time(meas: Measurement) -> str:
    """A measurement's time, or why it has none (skipped or failed)."""
    if meas.seconds is None:
        return "skipped" if meas.note.startswith("skipped") else "failed"
    return f"{meas.seconds:.3g} s"


def _fmt_diff(meas: Measurement) -> str:
    """``method: distance`` (matrices: and the relative excess of the squared norm); answers: same or not."""
    if meas.excess is None:
        return f"{meas.method}: {'same' if meas.rel_diff == 0 else 'DIFFERENT'}"
    return f"{meas.method}: {meas.rel_diff:.1e} (norm^2 {meas.excess:+.0e})"


def _comparison_cells(row: Mapping[str, Measurement], methods: Sequence[str], naive: str | None) -> list[str]:
    """A row's speed-ups of ``fast``, the distances of the other answers to its own, its peak memory."""
    fast = row[FAST]
    ratios = [
        f"{name}: {row[name].seconds / fast.seconds:.3g}x"
        for name in methods
        if name != FAST and fast.seconds and row[name].seconds
    ]
    ratio = ", ".join(ratios) if ratios else f"n/a ({naive} {format_time(row[naive])})" if naive else "n/a"
    others = [m for m in row.values() if m.rel_diff is not None and m.method != FAST]
    return [
        ratio,
        ", ".join(_fmt_diff(m) for m in others) if others else "n/a",
        f"{fast.peak_mib:.1f}" if fast.peak_mib is not None else "n/a",
    ]


def _size_row(table: Table, size: Size, naive: str | None, compare: bool, certified: bool) -> list[str]:
    """One size's row of :func:`format_table`: its times, comparison cells and certificates."""
    methods = table.methods
    row = {m.method: m for m in table.measurements if m.size == size}
    cells = [str(size), str(row[methods[0]].count), *(format_time(row[name]) for name in methods)]
    if compare:
        cells += _comparison_cells(row, methods, naive)
    if certified:
        certs = [f"{m.method}: {m.certificate}" if len(methods) > 1 else m.certificate for m in row.values()]
        cells.append("; ".join(c for c, m in zip(certs, row.values(), strict=True) if m.certificate))
    return cells


def _exponent_row(table: Table, fit_kind: Callable[[Size], bool], columns: int) -> list[str]:
    """The last row of :func:`format_table`: each method's fitted exponent under its column."""
    label = (
        f"fitted exponent a (time ~ ({table.count_label})^a; {table.fit_label}, "
        f"at least {FIT_MIN_POINTS} sizes with times >= {FIT_MIN_SECONDS:g} s)"
    )
    exps = [format_exponent(scaling_exponent(table, name, fit_kind)) for name in table.methods]
    return [label, "", *exps, *[""] * (columns - len(exps) - 2)]


def _table_notes(table: Table) -> list[str]:
    """The notes under a table: each method's largest size within the budget, then the skips and failures."""
    notes = sorted({f"{m.method} at {m.size}: {m.note}" for m in table.measurements if m.note})
    if table.budget is not None:
        within = []
        for name in table.methods:
            best = largest_within(table, name)
            where = f"{best.size} in {best.seconds:.3g} s" if best else "none"
            within.append(f"largest size {name} solved within {table.budget:g} s: {where}")
        notes = within + notes
    return notes


def format_table(table: Table, naive: str | None = None, fit_kind: Callable[[Size], bool] = d_over_m) -> str:
    """A Markdown table: one row per size, a column per method.

    With a ``fast`` method among others, speed-ups of ``fast``, the distance of each other
    answer to its answer (and, for matrices, how much larger each one's squared norm is) and its
    peak memory; with certificates, a column of them.
    """
    methods = table.methods
    compare = FAST in methods and len(methods) > 1
    certified = any(m.certificate for m in table.measurements)
    head = [table.size_label, table.count_label, *methods]
    if compare:
        head += ["speed-up of fast over", "diff to fast", "fast peak MiB"]
    if certified:
        head.append("certificate" if len(methods) == 1 else "certificates")
    sizes = list(dict.fromkeys(m.size for m in table.measurements))
    rows = [_size_row(table, size, naive, compare, certified) for size in sizes]
    rows.append(_exponent_row(table, fit_kind, len(head)))
    notes = _table_notes(table)
    return "\n".join([markdown_table(head, rows), *([""] + [f"- {n}" for n in notes] if notes else [])])


def _optimizer_row(
    table: Table, name: str, counts: Sequence[int], fit_kind: Callable[[Size], bool]
) -> list[str]:
    """One optimizer's row of :func:`format_training`: its time at each count, its exponent, its sizes."""
    by_count = {m.count: m for m in table.measurements if m.method == name}
    times = [format_time(by_count[c]) if c in by_count else "" for c in counts]
    fitted = [
        format_exponent(scaling_exponent(table, name, fit_kind)),
        format_fitted_sizes(table, name, fit_kind),
    ]
    return [name, *times, *fitted]


def format_training(table: Table, fit_kind: Callable[[Size], bool]) -> str:
    """A Markdown table: one row per optimizer, a column per count, then the fitted exponent."""
    counts = list(dict.fromkeys(m.count for m in table.measurements))
    head = [f"optimizer \\ {table.count_label}", *(f"{c:,}" for c in counts)]
    head += [f"exponent a (time ~ {table.count_label}^a)", "sizes fitted"]
    rows = [_optimizer_row(table, name, counts, fit_kind) for name in table.methods]
    sizes = list(dict.fromkeys(m.size for m in table.measurements))
    notes = [f"sizes {table.size_label}: " + ", ".join(str(s) for s in sizes)]
    notes += sorted({f"{m.method} at {m.size}: {m.note}" for m in table.measurements if m.note})
    notes.append(
        f"the exponent is fitted over the sizes where the optimizer took at least the timing floor "
        f"(at least {FIT_MIN_POINTS} of them)"
    )
    return "\n".join([markdown_table(head, rows), "", *(f"- {n}" for n in notes)])
