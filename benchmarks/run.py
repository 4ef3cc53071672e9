"""Time each method at each size, in one run, and print the tables (``python -m benchmarks``)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import tracemalloc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from ntpnb.chapter import atomic_write_text, format_platform, platform_info
from ntpnb.errors import NTPError
from ntpnb.linear import NTPData

from . import attention, joint, methods, notebooks, plots, seeds, training
from .instances import (
    PATH_B_MIN,
    PATH_B_TOP_OVER_MM,
    PATH_N_RADII,
    AttentionInstance,
    attention_instance,
    fresh_copy,
    fresh_path_copy,
    gaussian_instance,
    path_instance,
)
from .methods import FAST, SEPARABILITY_METHODS, SVM_METHODS, SVM_NAIVE
from .scaling import (
    FIT_MIN_POINTS,
    FIT_MIN_SECONDS,
    ExponentRow,
    Measurement,
    Size,
    Table,
    all_sizes,
    d_over_m,
    exponent_rows,
    format_exponent,
    format_exponent_summary,
    power_law_fit,
    scaling_exponent,
)

#: The default sizes: the paper's (Figs. 3-5 of Paper A) up to (m, V, d, S) = (500, 100, 600, 10), ten
#: times the paper's m and V.
SVM_SIZES: tuple[Size, ...] = (
    (20, 5, 25, 3),
    (50, 10, 60, 6),
    (100, 20, 120, 8),
    (200, 50, 250, 10),
    (300, 60, 360, 10),
    (500, 100, 600, 10),
)
#: Separability: the same, and sizes with m > d where the LP has to decide.
LP_SIZES: tuple[Size, ...] = (
    *SVM_SIZES,
    (50, 10, 40, 6),
    (70, 14, 55, 7),
    (100, 20, 90, 8),
    (100, 20, 60, 8),
)

#: The regularization path: the same kind of instances, up to the largest of the NTP-SVM.
PATH_SIZES: tuple[Size, ...] = (
    (20, 5, 25, 3),
    (50, 10, 60, 6),
    (70, 14, 85, 7),
    (100, 20, 120, 8),
    (150, 30, 180, 9),
    (200, 50, 250, 10),
    (300, 60, 360, 10),
    (500, 100, 600, 10),
)
#: Graph-SVM and W^cyc: Paper B's general data (K, d, n, T), from the paper's size (Fig. 4) up;
#: K <= d so that a head with C E^T = I exists (Assumption 4, needed by W^cyc).
ATTENTION_SVM_SIZES: tuple[Size, ...] = (
    (6, 8, 6, 4),
    (8, 12, 12, 5),
    (12, 16, 24, 6),
    (16, 24, 48, 8),
    (24, 32, 96, 10),
    (28, 36, 128, 11),
    (32, 40, 160, 12),
    (40, 48, 240, 14),
    (48, 64, 384, 16),
    (56, 72, 512, 18),
    (64, 80, 640, 20),
    (72, 88, 768, 22),
    (80, 96, 896, 24),
)

#: A method is skipped at a size when its time at the previous size of the same kind (d > m, or
#: d <= m), scaled by (constraints ratio) ** PREDICTION_EXPONENT, exceeds the budget (or by the
#: exponent fitted over the sizes measured so far, for a Benchmark whose exponent is None).
PREDICTION_EXPONENT = 2.5

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Benchmark:
    """A problem to time: its methods, how an instance of a size is made, what the size counts.

    ``fit_kind(size)`` splits the sizes into two kinds (for Paper A: ``d > m`` or not): a method's
    time is predicted from the previous size of the same kind, and the exponent is fitted over
    the sizes where it is True. ``certify`` turns a method's answer into a line saying what was
    verified. ``naive`` names the method the table's ratios are read against. ``exponent`` is
    the skip rule's (:func:`predicted_seconds`); None: the exponent fitted over the sizes
    measured so far (:func:`power_law_fit`), for a method whose growth the default misjudges.
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


def n_constraints(size: Size, _data: object = None) -> int:
    """Inequalities (6b) in anchor form: ``m (V - S)``."""
    m, V, _, S = size
    return m * (V - S)


def time_call(func: Callable, data, repeat_below: float = 1.0, repeats: int = 3, copy: Callable = fresh_copy):
    """Wall-clock seconds of ``func(copy(data))``: the best of ``repeats`` if the first is fast."""
    best, value = np.inf, None
    for k in range(repeats):
        fresh = copy(data)
        start = time.perf_counter()
        value = func(fresh)
        best = min(best, time.perf_counter() - start)
        if k == 0 and best >= repeat_below:
            break
    return best, value


def peak_memory_mib(func: Callable, data, copy: Callable = fresh_copy) -> float:
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


def _fmt_time(meas: Measurement) -> str:
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
    ratio = ", ".join(ratios) if ratios else f"n/a ({naive} {_fmt_time(row[naive])})" if naive else "n/a"
    others = [m for m in row.values() if m.rel_diff is not None and m.method != FAST]
    return [
        ratio,
        ", ".join(_fmt_diff(m) for m in others) if others else "n/a",
        f"{fast.peak_mib:.1f}" if fast.peak_mib is not None else "n/a",
    ]


def _size_row(table: Table, size: Size, naive: str | None, compare: bool, certified: bool) -> str:
    """One size's row of :func:`format_table`: its times, comparison cells and certificates."""
    methods = table.methods
    row = {m.method: m for m in table.measurements if m.size == size}
    cells = [str(size), str(row[methods[0]].count), *(_fmt_time(row[name]) for name in methods)]
    if compare:
        cells += _comparison_cells(row, methods, naive)
    if certified:
        certs = [f"{m.method}: {m.certificate}" if len(methods) > 1 else m.certificate for m in row.values()]
        cells.append("; ".join(c for c, m in zip(certs, row.values(), strict=True) if m.certificate))
    return "| " + " | ".join(cells) + " |"


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
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    sizes = list(dict.fromkeys(m.size for m in table.measurements))
    lines += [_size_row(table, size, naive, compare, certified) for size in sizes]
    exps = [format_exponent(scaling_exponent(table, name, fit_kind)) for name in methods]
    label = (
        f"fitted exponent a (time ~ ({table.count_label})^a; {table.fit_label}, "
        f"at least {FIT_MIN_POINTS} sizes with times >= {FIT_MIN_SECONDS:g} s)"
    )
    pad = len(head) - len(methods) - 2
    lines.append(f"| {label} | | " + " | ".join(exps) + " |" + " |" * pad)
    notes = _table_notes(table)
    return "\n".join(lines + ([""] + [f"- {n}" for n in notes] if notes else []))


def parse_sizes(values: Sequence[str] | None, default: tuple[Size, ...], what: str = "m,V,d,S") -> list[Size]:
    """Sizes given as ``m,V,d,S`` (or ``what``) strings, or the default."""
    if not values:
        return list(default)
    sizes = []
    for v in values:
        parts = tuple(int(x) for x in v.split(","))
        if len(parts) != 4:
            raise SystemExit(f"a size is {what} (four integers), got {v!r}")
        sizes.append(parts)
    return sizes


def format_sizes(sizes: Sequence[Size]) -> str:
    """``sizes`` as they are written on the command line: ``20,5,25,3 50,10,60,6``."""
    return " ".join(",".join(map(str, size)) for size in sizes)


def path_unknowns(size: Size, instance: tuple[NTPData, np.ndarray]) -> int:
    """Unknowns of the path's Newton system: ``(V - 1) rank H`` (the subspace R of _regpath.py)."""
    return (size[1] - 1) * int(np.linalg.matrix_rank(instance[0].H))


def graph_svm_constraints(_size: Size, instance: AttentionInstance) -> int:
    """Constraints of (Graph-SVM): strict relations plus equivalences over all graphs."""
    return len(instance.graphs.strict) + len(instance.graphs.equivalent)


def _same(instance: object) -> object:
    return instance  # the attention instances are read-only and nothing caches on them


SVM = Benchmark("NTP-SVM", SVM_METHODS, gaussian_instance, n_constraints, "constraints (6b)", naive=SVM_NAIVE)
SEPARABILITY = Benchmark(
    "separability",
    SEPARABILITY_METHODS,
    gaussian_instance,
    n_constraints,
    "constraints (6b)",
    naive="full LP",
)
PATH = Benchmark(
    "Regularization path",
    {"regularization_path": methods.path},
    path_instance,
    path_unknowns,
    "unknowns (V-1) rank H",
    copy=fresh_path_copy,
    certify=methods.path_certificate,
    exponent=None,  # the Gram form grows like count^1.1-1.4 over these sizes, not ^2.5
)
_ATTENTION = dict(size_label="(K, d, n, T)", copy=_same, fit_kind=all_sizes, fit_label="all sizes")
GRAPH_SVM = Benchmark(
    "Graph-SVM",
    {"solve_graph_svm": methods.graph_svm},
    attention_instance,
    graph_svm_constraints,
    "constraints",
    certify=methods.graph_svm_certificate,
    **_ATTENTION,
)
CYCLIC = Benchmark(
    "Cyclic correction W^cyc",
    {"solve_cyclic_correction": methods.cyclic_correction},
    attention_instance,
    lambda size, instance: size[1] ** 2,
    "unknowns d^2",
    certify=methods.cyclic_certificate,
    **_ATTENTION,
)


def parse_attention_sizes(values: Sequence[str] | None) -> list[Size]:
    """Attention sizes given as ``K,d,n,T`` strings, or the default."""
    return parse_sizes(values, ATTENTION_SVM_SIZES, "K,d,n,T")


def _first(size: Size, _instance: object = None) -> int:
    return size[0]


_TRAINING = dict(fit_kind=all_sizes, fit_label="all sizes", exponent=None)
_DECODER = dict(size_label="(iterations, m, V, d, S)", copy=training.fresh_decoder, **_TRAINING)
_ATTENTION_TRAINING = dict(size_label="(iterations, trials, K, d, n, T)", copy=_same, **_TRAINING)
TRAINING_A_ITERATIONS = Benchmark(
    "Training, Paper A: iterations",
    training.DECODER_METHODS,
    training.decoder_instance,
    _first,
    "iterations",
    **_DECODER,
)
TRAINING_A_M = Benchmark(
    "Training, Paper A: m",
    training.DECODER_METHODS,
    training.decoder_instance,
    lambda size, instance: size[1],
    "m",
    **_DECODER,
)
TRAINING_B_ITERATIONS = Benchmark(
    "Training, Paper B: iterations",
    training.ATTENTION_METHODS,
    training.attention_instance,
    _first,
    "iterations",
    **_ATTENTION_TRAINING,
)
TRAINING_B_N = Benchmark(
    "Training, Paper B: samples n",
    training.ATTENTION_METHODS,
    training.attention_instance,
    lambda size, instance: size[4],
    "samples n",
    **_ATTENTION_TRAINING,
)


def training_sizes(
    iterations: Sequence[int] | None = None,
    m: Sequence[int] | None = None,
    n: Sequence[int] | None = None,
) -> list[tuple[Benchmark, list[Size]]]:
    """The four training sweeps and their sizes (the defaults of :mod:`benchmarks.training`)."""
    a_iters = iterations or training.DECODER_ITERATIONS
    b_iters = iterations or training.ATTENTION_ITERATIONS
    chapter_m = training.DECODER_SHAPE[0]
    return [
        (TRAINING_A_ITERATIONS, [training.decoder_size(k, chapter_m) for k in a_iters]),
        (
            TRAINING_A_M,
            [training.decoder_size(training.DECODER_M_ITERATIONS, x) for x in m or training.DECODER_M],
        ),
        (TRAINING_B_ITERATIONS, [training.attention_iteration_size(k) for k in b_iters]),
        (TRAINING_B_N, [training.attention_n_size(x) for x in n or training.ATTENTION_N]),
    ]


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m benchmarks`` (what ``ntpnb benchmarks`` passes on)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    _add_solver_arguments(parser)
    _add_joint_arguments(parser)
    _add_training_arguments(parser)
    _add_run_arguments(parser)
    return parser


def _add_solver_arguments(parser: argparse.ArgumentParser) -> None:
    """The solver tables' sizes, budgets and skips."""
    for flag, default, what in (
        ("--sizes", SVM_SIZES, "NTP-SVM sizes as m,V,d,S"),
        ("--lp-sizes", LP_SIZES, "separability sizes as m,V,d,S"),
        ("--path-sizes", PATH_SIZES, "regularization-path sizes as m,V,d,S"),
        ("--attention-svm-sizes", ATTENTION_SVM_SIZES, "Graph-SVM and W^cyc sizes as K,d,n,T"),
    ):
        parser.add_argument(flag, nargs="*", help=f"{what} (default: {format_sizes(default)})")
    parser.add_argument(
        "--budget", type=float, default=60.0, help="seconds an SVM/LP method may take (predicted)"
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        default=60.0,
        help="seconds for the path and attention SVMs: stop before a size predicted to exceed it",
    )
    parser.add_argument("--skip-lp", action="store_true", help="no separability table")
    parser.add_argument("--skip-regpath", action="store_true", help="no regularization-path table")
    parser.add_argument("--skip-attention-svm", action="store_true", help="no Graph-SVM and W^cyc tables")
    parser.add_argument("--skip-attention", action="store_true", help="no attention-training table")
    parser.add_argument("--skip-joint", action="store_true", help="no table of chapter 6's joint problem")


def _add_joint_arguments(parser: argparse.ArgumentParser) -> None:
    """The corpus prefixes of chapter 6's joint problem."""
    for flag, default, what in (
        ("--joint-chars", joint.DEFAULT_CHARS, "the joint problem's threshold sweeps by Newton's method"),
        ("--joint-lp-chars", joint.LP_CHARS, "the same sweeps by the LP"),
        ("--joint-w-star-chars", joint.W_STAR_CHARS, "W* alone"),
        ("--joint-scale-chars", joint.SCALE_CHARS, "the joint problem's questions one at a time"),
    ):
        parser.add_argument(
            flag,
            nargs="*",
            type=int,
            default=list(default),
            help=f"prefixes of the corpus, in characters, for {what} (default: %(default)s)",
        )


def _add_training_arguments(parser: argparse.ArgumentParser) -> None:
    """The attention-training and training-loop tables."""
    parser.add_argument(
        "--attention-trials", type=int, default=attention.N_TRIALS, help="trials (default: %(default)s)"
    )
    parser.add_argument(
        "--attention-iters", type=int, default=attention.N_ITER, help="NGD steps (default: %(default)s)"
    )
    parser.add_argument("--skip-training", action="store_true", help="no table of the training loops")
    parser.add_argument(
        "--training-iterations", nargs="*", type=int, help="iteration counts of both papers' training sweeps"
    )
    parser.add_argument("--training-m", nargs="*", type=int, help="m of Paper A's training sweep in m")
    parser.add_argument(
        "--training-n", nargs="*", type=int, help="samples n of Paper B's training sweep in n"
    )


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The chapters' timings, the any-seed run and the output folder."""
    parser.add_argument(
        "--notebooks",
        action="store_true",
        help="also time every chapter on one core at every profile, and the paper run with --jobs (minutes)",
    )
    parser.add_argument(
        "--chapter-times",
        action="store_true",
        help="only time every chapter alone on one core at every profile and write "
        "benchmarks/chapter_times.json, the times ntpnb list shows (minutes; no solver benchmark)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=notebooks.RUN_JOBS,
        help="--jobs of the whole paper run of --notebooks and of --any-seed (default: %(default)s)",
    )
    parser.add_argument(
        "--any-seed",
        action="store_true",
        help=(
            f"also run every chapter at the paper profile at seeds {seeds.FIRST_SEED}-"
            f"{seeds.FIRST_SEED + seeds.SEED_COUNT - 1} and count the runs that complete (20-40 minutes; "
            "python -m benchmarks.seeds runs only that)"
        ),
    )
    out = ROOT / "outputs" / "benchmarks"
    parser.add_argument(
        "--out", type=Path, default=out, help="folder for benchmarks.md (the book page) and benchmarks.json"
    )


@dataclass(frozen=True)
class Results:
    """What one run of the benchmarks measured, and where and when."""

    runs: list[tuple[Benchmark, Table]]
    att_rows: list[attention.AttentionMeasurement]
    joint_rows: list[joint.JointMeasurement]
    w_star_rows: list[joint.JointMeasurement]
    scale_rows: list[joint.ScaleMeasurement]
    train_runs: list[tuple[Benchmark, Table]]
    nb_times: notebooks.NotebookTimes | None
    any_seed: tuple | None
    total: float
    machine: Machine


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmarks, print the tables, write the book page and the JSON under ``--out``."""
    args = build_parser().parse_args(argv)
    if args.chapter_times:
        one, _, _, loads = notebooks.time_chapters(ROOT)
        notebooks.refresh_chapter_times(ROOT, one, loads)
        return 0
    res = measure(args)
    print_results(res, args)
    write_results(res, args, argv)
    return 0


def _solver_runs(args: argparse.Namespace) -> list[tuple[Benchmark, Table]]:
    """The solver tables the arguments ask for, measured."""
    runs = [(SVM, run_table(SVM, parse_sizes(args.sizes, SVM_SIZES), args.budget))]
    if not args.skip_lp:
        runs.append(
            (SEPARABILITY, run_table(SEPARABILITY, parse_sizes(args.lp_sizes, LP_SIZES), args.budget))
        )
    if not args.skip_regpath:
        runs.append((PATH, run_table(PATH, parse_sizes(args.path_sizes, PATH_SIZES), args.time_limit)))
    if not args.skip_attention_svm:
        att_sizes = parse_attention_sizes(args.attention_svm_sizes)
        for bench in (GRAPH_SVM, CYCLIC):
            runs.append((bench, run_table(bench, att_sizes, args.time_limit)))
    return runs


def measure(args: argparse.Namespace) -> Results:
    """Every benchmark the arguments ask for, measured in this process."""
    started = time.perf_counter()
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load_start = _load_average()
    runs = _solver_runs(args)
    att_rows = []
    if not args.skip_attention:
        for kind in attention.SIZES:
            row = attention.measure(kind, args.attention_trials, args.attention_iters)
            print(f"  attention {kind}: naive {row.naive_seconds:.2f} s, batched {row.batched_seconds:.3f} s")
            att_rows.append(row)
    joint_rows, w_star_rows, scale_rows = [], [], []
    if not args.skip_joint:
        joint_rows = joint.run_prefixes(args.joint_chars, args.time_limit)
        joint_rows += joint.run_prefixes(args.joint_lp_chars, args.time_limit, method="lp")
        w_star_rows = joint.run_prefixes(args.joint_w_star_chars, args.time_limit, "measure_w_star")
        scale_rows = joint.run_scale(args.joint_scale_chars, args.time_limit)
    train_runs = []
    if not args.skip_training:
        training.compile_kernels()
        for bench, sizes in training_sizes(args.training_iterations, args.training_m, args.training_n):
            train_runs.append((bench, run_table(bench, sizes, args.time_limit)))
    nb_times = notebooks.time_notebooks(ROOT, args.jobs) if args.notebooks else None
    any_seed = seeds.run_seeds(seeds.FIRST_SEED, seeds.SEED_COUNT, args.jobs) if args.any_seed else None
    if nb_times:
        notebooks.refresh_chapter_times(ROOT, nb_times.one_core, nb_times.loads)
    total = time.perf_counter() - started
    # the platform is recorded by this run, in the process that measured
    machine = Machine(platform_info(), date, load_start, _load_average())
    rows = (att_rows, joint_rows, w_star_rows, scale_rows)
    return Results(runs, *rows, train_runs, nb_times, any_seed, total, machine)


def print_results(res: Results, args: argparse.Namespace) -> None:
    """The tables of ``res`` on the terminal (the any-seed outcomes also written under ``--out``)."""
    print()
    print(format_machine(res.machine))
    print("Times are wall-clock seconds measured in this run (best of 3 below 1 s); on a shared")
    print("machine they are noisy, so compare the ratios, which were measured side by side.")
    for bench, table in res.runs:
        print(f"\n## {bench.problem}\n")
        print(format_table(table, bench.naive, bench.fit_kind))
    if res.att_rows:
        print(f"\n## {ATTENTION_TITLE}\n")
        print(attention.format_attention(res.att_rows))
    if res.joint_rows:
        print(f"\n## {JOINT_TITLE}\n")
        print(joint.format_joint(res.joint_rows, args.time_limit))
        print(joint.format_scale(res.scale_rows))
        print(joint.format_w_star(res.w_star_rows, args.time_limit))
    for bench, table in res.train_runs:
        print(f"\n## {bench.problem}\n")
        print(training.format_training(table, bench.fit_kind))
    if res.nb_times:
        print(f"\n## {NOTEBOOKS_TITLE}\n")
        print(notebooks.format_notebook_times(res.nb_times))
    if res.any_seed:
        print(f"\n## {ANY_SEED_TITLE}\n")
        print(seeds.format_outcomes(res.any_seed[0]))
        outcomes, wall = res.any_seed[:2]
        print(f"Wrote {seeds.write_outcomes(outcomes, args.out, {'wall_seconds': wall})}")
    print(f"\n## {EXPONENTS_TITLE}\n")
    print(format_exponent_summary(summary_rows(res.runs, res.train_runs, res.joint_rows)))
    print(f"\nTotal benchmark time: {res.total:.0f} s")


def write_results(res: Results, args: argparse.Namespace, argv: Sequence[str] | None) -> None:
    """The book page, its figures and the JSON record of ``res`` under ``--out``."""
    args.out.mkdir(parents=True, exist_ok=True)
    figures = {}
    for bench, table in [*res.runs, *res.train_runs]:
        png = plots.write_scaling_figure(table, bench.fit_kind, power_law_fit, args.out)
        figures[table.problem] = f"{args.out.name}/{png.name}"  # relative to the book page, one folder up
    page = args.out / "benchmarks.md"
    atomic_write_text(
        page,
        book_page(
            res.runs,
            res.att_rows,
            res.nb_times,
            res.machine,
            res.total,
            argv,
            figures,
            res.joint_rows,
            args.time_limit,
            res.w_star_rows,
            res.scale_rows,
            res.train_runs,
        ),
    )
    print(f"Wrote {page} (the book's benchmarks page: `ntpnb book` picks it up)")
    path = args.out / "benchmarks.json"
    atomic_write_text(path, json.dumps(_record(res), indent=1))
    print(f"Wrote {path}")


def _record(res: Results) -> dict:
    """The JSON record of ``res``."""
    machine = res.machine
    return {
        "cores": os.cpu_count(),
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
        "platform": machine.platform,
        "date": machine.date,
        "load_average": {"start": machine.load_start, "end": machine.load_end},
        "total_seconds": res.total,
        "exponents": [asdict(r) for r in summary_rows(res.runs, res.train_runs, res.joint_rows)],
        "tables": [
            {
                "problem": t.problem,
                "methods": t.methods,
                "budget": t.budget,
                "size": t.size_label,
                "count": t.count_label,
                "exponents": {name: scaling_exponent(t, name, b.fit_kind) for name in t.methods},
                "measurements": [asdict(m) for m in t.measurements],
            }
            for b, t in [*res.runs, *res.train_runs]
        ],
        "attention": [{**asdict(r), "speedup": r.speedup} for r in res.att_rows],
        "joint": [asdict(r) for r in res.joint_rows],
        "joint_w_star": [asdict(r) for r in res.w_star_rows],
        "joint_scale": [asdict(r) for r in res.scale_rows],
        "notebooks": asdict(res.nb_times) if res.nb_times else None,
        "any_seed": [asdict(o) for o in res.any_seed[0]] if res.any_seed else None,
    }


PAGE_HEAD = """\
# Benchmarks

<!-- Generated by `python -m benchmarks` into outputs/benchmarks/; `ntpnb book` shows it. -->

How long the chapters take, and how the solvers and training loops of `ntpnb` scale, all measured
in one run of `python -m benchmarks` on the machine below (the full record of its platform ends
the page).
"""

SOLVERS_INTRO = """\
## How the solvers were timed

For Paper A each row is one random instance of size
`(m, V, d, S)`: Gaussian embeddings `h_j ~ N(0, I_d / d)`, supports of size `S` drawn uniformly,
`p_j` Dirichlet(1) on its support. All methods ran in the same process, one after another, at
each size, with one BLAS thread: the machine is shared, so absolute times are noisy; the ratios,
measured side by side, are the result. A method is skipped at a size when its time at the previous
size of the same kind (`d > m` or not), scaled by (count ratio)^{exponent}, exceeds the budget (or
the time limit); "largest size ... solved within" names the largest size that ran within it. The
fitted exponent is the least-squares slope of log(time) against log(the table's count column: for
the NTP-SVM and separability the number of inequality constraints (6b), `m (V - S)`) over the
sizes with `d > m` (Paper A) where the method took at least {fit_seconds} s (shorter times are mostly fixed
overhead), when there are at least {fit_points} of them ("n/a" otherwise). Under each table a
figure plots the same times against the count on log-log axes: filled markers for the sizes of the
fitted kind, open ones for the others, the fitted power law dashed, the budget dotted.

The NTP-SVM methods, in the order of the table:

- **reference (before)**: `ntpnb.solve_ntp_svm(data, method="cvxpy")`, what `ntpnb.solve_ntp_svm`
  was before the active-set method: the sparse cvxpy solve below, then polishing on the active set
  and the full certificate (before, with an orthonormal basis of F). Its polishing now corrects
  the active set the solver's multipliers name, in rounds (`ntpnb._qp.polish`; before, one wrong
  row among thousands left the unpolished answer, 1e-7 to 3e-6 from `W^mm` at the larger sizes).
- **naive cvxpy (triples)**: the problem as the paper states it, one cvxpy constraint per
  (context, in-support token, out-of-support token) triple and per in-support pair, solved by
  CLARABEL.
- **sparse cvxpy**: the same problem in anchor form as two sparse constraint matrices on
  `vec(W)`, solved by CLARABEL (the solve only).
- **cvxpy aux/context**: one auxiliary variable `c_j` per context (the common in-support logit),
  `(W h_j)_z = c_j` on `S_j` and `(W h_j)_v <= c_j - 1` off it, as two sparse constraint matrices,
  solved by CLARABEL (the solve only).
- **fast**: `ntpnb.linear._active_set.solve_active_set`, what `ntpnb.solve_ntp_svm` uses now: a
  primal-dual active-set method on the dual in the Gram matrix `H H^T` (one variable per (context,
  token) pair; no basis of F), verified by constraints, KKT conditions with explicit multipliers
  and the duality gap.

"diff to fast" gives, for each other method that ran, `||W - W_fast|| / ||W_fast||` and, in
parentheses, `||W||^2 / ||W_fast||^2 - 1`. Every answer is feasible (to the solver's tolerance),
so if `W_fast` is the minimum-norm point, that excess is non-negative (negative only at the
level of the other solver's constraint violation) and bounds the distance:
`||W - W_fast||^2 <= ||W||^2 - ||W_fast||^2` (first-order optimality of `W_fast` over the
convex feasible set). The raw cvxpy answers differ from `W_fast` by their interior-point
accuracy; the reference, polished on its active set (`ntpnb._qp.polish`), by
rounding. "fast peak MiB" is the peak memory the fast solver allocated (numpy arrays included).

The separability methods: **full LP**, the certified max-margin LP on `vec(W)` with HiGHS
(`ntpnb.is_separable(data, method="lp")`); and **fast**, the package's test `ntpnb.is_separable(data)`:
when `rank H = m` the logits can take any value, so the data are separable (a witness computed from
`H` alone is checked); otherwise, while its (6b) rows are small
(`ntpnb.settings.LEAST_DISTANCE_MAX_ENTRIES`), least-distance programming (one NNLS, certified
either way as the LP is); otherwise, when the LP is large
(`ntpnb.settings.SVM_WITNESS_MIN_VARIABLES`), `W^mm` from the fast NTP-SVM solver as a candidate,
verified like any direction; otherwise (or if that fails) the certified LP, by the dual simplex
when it is small (`ntpnb.settings.LP_SMALL_MAX_VARIABLES`), else the interior point. For
separability "diff to fast" says whether the LP gave the same answer.
"""

#: What each table of one solver measures, under its heading on the page.
SECTION_INTROS = {
    "Regularization path": f"""\
`ntpnb.linear._regpath.regularization_path(data, radii)` (Paper A, Sec. 5; chapter 02) on the same
kind of Gaussian instances, at {PATH_N_RADII} radii log-spaced from {PATH_B_MIN:g} to
{PATH_B_TOP_OVER_MM:g} `||W^mm||` (the out-of-support mass at the top is about
`exp(-{PATH_B_TOP_OVER_MM:g})`; `W^mm` by the fast SVM solver, not timed). The time is the whole
path (its separability test included). Its Newton system lives in the subspace R of matrices with
zero column sums and rows in the span of the `h_j`, of dimension `(V - 1) rank H`, the count the
exponent is fitted against. These instances have `d > m`, so the path is solved in the Gram form
(`ntpnb.linear._regpath_gram`): each Newton system through `V` blocks of size `m` and one of size
`m`, its factors reused while refining on them is cheaper; a size is skipped when the exponent
fitted over the smaller sizes predicts it beyond the time limit. "certificate": the worst values
over the radii of what the solver verified before returning (it raises otherwise): relative KKT
residuals in total, on F and on F-perp, `| ||W_B|| - B | / B`, and the smallest multiplier lambda
(> 0).
""",
    "Graph-SVM": """\
`ntpnb.attention._graph_svm_qp.solve_graph_svm` (Paper B, Sec. 3.2; chapter 07) on Paper B's general
(cyclic) data of size `(K, d, n, T)`: unit-sphere embeddings, `T` distinct tokens per sample, a
label drawn among them, redrawn until some token-priority graph has a cycle and a strict relation
(`ntpnb.attention._paper_experiments.trial_data`, as chapter 07 draws its trials; the first row is the
size of its Fig. 4). The count is the number of constraints (strict relations plus equivalences
over all graphs; each a dense row in `d^2` unknowns). "certificate": the solver's verification
(`passes()`: feasibility, stationarity, complementarity, sign of the multipliers, relative duality
gap), the support vectors and whether the answer was polished on its active set.
""",
    "Cyclic correction W^cyc": """\
`ntpnb.attention._convex.solve_cyclic_correction` (Paper B, Definition 3; chapter 07) on the same
instances as the Graph-SVM: Newton's method on the log-loss of the cyclic sub-dataset in an
orthonormal basis of `S_cyc`, then verified on the full `d x d` gradient (it raises otherwise).
The count is the `d^2` unknowns of that check. "certificate": the norm of the full gradient, the
smallest curvature of the restricted Hessian (> 0: the minimizer is unique, Lemma 3), `dim S_cyc`.
""",
}


ATTENTION_TITLE = "Attention training: all trials at once"

ATTENTION_INTRO = """\
The experiments of Paper B's Figs. 3-4 (chapter 07) train one attention matrix per trial by
normalized GD (step 0.01 from `W = 0`, log-loss, head `C E^T = I`) on the chapter's own random
trials. **batched** is `ntpnb.attention.train`, every trial in one vectorized computation;
**naive loop** (`benchmarks/attention.py`) is the same computation as a Python loop over trials,
iterations and samples. Both ran on the same trials in this run; "max rel. diff" is the largest
per-trial `max |W_naive - W_batched| / max |W_batched|` of the final iterates. "rounding floor"
is the same distance between the batched run and a batched run started 1e-15 away from zero:
normalized GD with a fixed step amplifies rounding on the general (cyclic) data, so after 4000
steps two runs agree only to this floor. The run fails if the naive loop is further than
max(1e-9, 10 x floor) (docstring of `benchmarks/attention.py`).
"""


JOINT_TITLE = "The joint problem of App. C on real text (chapter 6)"

JOINT_INTRO = """\
The joint problem of Paper A, App. C (all prefixes of a text as one NTP problem; chapter 6, claim
A14) on the first `n` characters of the docstring corpus, read as the chapter reads it (windows
of length 7 on a circle, fixed random embeddings nested in `d`), solved as the chapter solves
it: the separability thresholds in `d` of every single-length slice and of the joint problem
(`ntpnb.joint_thresholds`, every decision certified either way: a verified separating direction
or a Farkas certificate, with the LP's tolerance), `W*` and compatibility at the joint
threshold, and `W^mm` at twice the threshold (the `d` of the chapter's gradient-descent run,
`ntpnb.solve_ntp_svm`, verified). The decider "newton" is the chapter's
(`ntpnb.linear._hinge_newton`: Newton's method on the squared-hinge problem, one `m x m` system per
step); "lp" is the certified max-margin LP it replaced, whose interior-point method factorizes a
dense `(V d) x (V d)` matrix at every iteration. Both find the same thresholds where both
finish. Each prefix runs in its own process: "total CPU s" is its CPU time (one BLAS thread),
"peak MiB" its peak resident memory (HiGHS's included); "decisions s", "W* s" and "W^mm s" split
the time; "most Newton steps" is the largest number of steps of one decision (the two that
certify a threshold take the most). The prefixes grow until the next one is predicted (the time
scaled by the ratio of characters to the power `benchmarks.joint.PREDICTION_EXPONENT`) or
measured to exceed the time limit. What bounds the size with the Newton decider is the number of
its steps near the threshold, each an `m x m` factorization plus one per token of the size of
its contexts with a margin below 1.
"""


JOINT_SCALE_INTRO = """\
Beyond the sweeps, each question of the joint problem alone on larger prefixes, each in its own
process (`benchmarks.joint.measure_scale_step`; the context counting excluded from the time):
compatibility and `W*` at `d = 0.2 m`; a certificate of non-separability at `d = 0.05 m`, found on
the contexts of the two longest lengths and checked on all (`ntpnb.certify_on_contexts`); a
verified separating direction at `d = 0.44 m` (about twice the thresholds above), and `W^mm`
there (`ntpnb.solve_ntp_svm`, certified). A step is skipped when its time on the previous prefix,
scaled like `m^3`, exceeds four times the time limit.
"""


JOINT_W_STAR_INTRO = """\
Without the threshold sweep, compatibility and `W*` alone reach much larger prefixes: at
`d = 0.2 m`, by the dense SVD of the equality constraints (4) while that `(rows) x (V d)` matrix is
small (`ntpnb.settings.F_DENSE_MAX_ENTRIES`), above by LSQR on the map `W -> in-support logit
differences` (`ntpnb.linear._subspace.equality_operator`), which forms no basis of F and no
`(dim F) x (V d)` matrix. "equations (4)" is their number, an upper bound on `dim F`.
"""


NOTEBOOKS_TITLE = "Chapter times: one core, and the one command's paper run with its seed sweep"
ANY_SEED_TITLE = seeds.TITLE

NOTEBOOKS_INTRO = f"""\
Measured by this benchmark (`--notebooks`), each run into its own temporary output tree with
`--force` (every notebook executed, none cached). First each chapter alone, one run each (`ntpnb
reproduce 01 --jobs 1 --seeds 1 --force`, ...), at the paper profile and then at the quick profile
(`--profile quick`), with its CPU time (what `ntpnb list` expects: the chapter's time on an idle
core) and the benchmark process pinned to ONE CPU by `os.sched_setaffinity`: every process the run
starts (the runner's workers, the Jupyter kernels, and their numba and BLAS threads) inherits that
one CPU, so a second core cannot help a chapter, as in a one-core Binder. Then what `./run.sh
reproduce` runs: the whole paper run with its seed sweep ({notebooks.RUN_SEEDS} seeds of every
chapter: the book's, with its figures, and the further seeds, which repeat the checks without
figures) and `--jobs N` on the CPUs the benchmark may use. A chapter's time is what `ntpnb
reproduce` records (`timings.json`): the wall time from its worker's start to its answer, kernel
start, imports and figures included. The targets are the issues'
({notebooks.CHAPTER_TARGET_SECONDS:g} s per chapter at the paper profile on one core,
{notebooks.RUN_TARGET_SECONDS:g} s for the paper run with its sweep and two jobs); "met" compares
this run's numbers with them. The machine is shared, so wall times carry the load shown.
"""

EXPONENTS_TITLE = "Fitted cost growth"

EXPONENTS_INTRO = f"""\
The exponent `a` of `time ~ count^a` of every solver and training loop on this page, fitted by
least squares of log(time) against log(count) over the sizes of the fitted kind (Paper A's solvers:
`d > m`) where the method took at least {FIT_MIN_SECONDS:g} s (below, fixed overhead dominates), when
there are at least {FIT_MIN_POINTS} such sizes. "sizes fitted": how many, and their range of the
count. The tables below give each time; the training loops are timed against the number of
iterations at a fixed size, and against the size at a fixed number of iterations.
"""

TRAINING_INTRO = f"""\
The compiled training loops (`benchmarks/training.py`), one row per optimizer, each time the best
of 3 below 1 s, with the kernels compiled (or loaded from numba's cache) before any timing.
Paper A (chapter 4): `ntpnb.linear._descent.run_decoder`, the loop of `ntpnb.train`, with chapter 4's
optimizers at its paper profile's steps (GD {training.CHAPTER_4["gd_lr"]:g}, normalized GD
{training.CHAPTER_4["ngd_lr"]:g}, Adam {training.CHAPTER_4["adam_lr"]:g}, SGD
{training.CHAPTER_4["gd_lr"]:g} with {training.CHAPTER_4["sgd_batch"]} samples a step) from a LeCun
start, recording the last iterate only (the tracked quantities and the limits of `ntpnb.train`
are not timed), on a Gaussian instance of chapter 4's size `(m, V, d, S)` =
{training.DECODER_SHAPE}, and for the growth in `m` at {training.DECODER_M_ITERATIONS:,} iterations
the same `V` and `S` with `d = {training.D_OVER_M:g} m`. Full-batch GD and NGD run in the logit
form there (`m <= d`: `V m^2` multiply-adds a step), Adam in the weight form (`2 V m d`), SGD on
its batch (`B V d`). Paper B (chapter 7): `ntpnb.attention.train`, normalized GD (step
{attention.LR:g}) from `W = 0` in the compiled loop of `ntpnb.attention._engine`, on chapter 7's
{attention.N_TRIALS} trials of Fig. 4 (general data) for the growth in iterations, and on
{training.ATTENTION_N_TRIALS} trials of general data with `(K, d, T)` =
({training.ATTENTION_N_SHAPE["K"]}, {training.ATTENTION_N_SHAPE["d"]}, {training.ATTENTION_N_SHAPE["T"]})
for the growth in the number of samples `n` at {training.ATTENTION_N_ITERATIONS:,} iterations.
"""


@dataclass(frozen=True)
class Machine:
    """Where and when this run measured: its platform record, its date, the load before and after."""

    platform: dict
    date: str
    load_start: list[float]
    load_end: list[float]


def _load_average() -> list[float]:
    """The 1, 5 and 15 minute load averages (empty where the platform has none)."""
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else []


def _blas(info: Mapping) -> str:
    libs = [lib for lib in info.get("threadpools") or [] if lib.get("user_api") == "blas"]
    if not libs:
        return "none reported by threadpoolctl"
    return "; ".join(
        f"{lib.get('internal_api')} {lib.get('version')}, kernel {lib.get('architecture')}, "
        f"{lib.get('num_threads')} thread(s)"
        for lib in libs
    )


def _loads(values: Sequence[float]) -> str:
    return ", ".join(f"{v:g}" for v in values) if values else "n/a"


def format_machine(machine: Machine) -> str:
    """The machine of the run, as a short Markdown table (the full record: section Platform)."""
    info = machine.platform
    packages = info.get("packages") or {}
    rows = [
        ("date (start of the run)", machine.date),
        ("CPU", info.get("cpu")),
        ("cores", info.get("cores")),
        ("BLAS", _blas(info)),
        ("Python", info.get("python")),
        ("numpy, numba", f"{packages.get('numpy')}, {packages.get('numba')}"),
        (
            "load average (1, 5, 15 min) at start, at end",
            f"{_loads(machine.load_start)}; {_loads(machine.load_end)}",
        ),
    ]
    return "| machine of this run | |\n|---|---|\n" + "\n".join(f"| {k} | {v} |" for k, v in rows)


JOINT_FIT = "Joint problem (App. C)"


def joint_table(rows: Sequence[joint.JointMeasurement]) -> Table:
    """The threshold sweeps of the joint problem as a :class:`Table`: CPU time against ``m``, per decider."""
    deciders = list(dict.fromkeys(r.method for r in rows))
    table = Table(JOINT_FIT, deciders, size_label="(characters,)", count_label="contexts m")
    table.fit_label = "all sizes"
    for r in rows:
        if r.m:
            table.measurements.append(Measurement(r.method, (r.n_chars,), r.m, seconds=r.total_seconds))
    return table


def format_joint_exponents(rows: Sequence[joint.JointMeasurement]) -> str:
    """The fitted exponent of the joint problem's CPU time in ``m``, per decider, as one line."""
    table = joint_table(rows)
    parts = [
        f"{r.method}: {format_exponent(r.exponent)} (sizes fitted: {r.sizes})"
        for r in exponent_rows(table, all_sizes)
    ]
    return f"Fitted exponent a (total CPU time ~ m^a, contexts m): {'; '.join(parts)}."


def summary_rows(
    runs: Sequence[tuple[Benchmark, Table]],
    train_runs: Sequence[tuple[Benchmark, Table]],
    joint_rows: Sequence[joint.JointMeasurement],
) -> list[ExponentRow]:
    """Every fitted exponent of the run, in the order of the page's tables."""
    rows = [r for bench, table in [*runs, *train_runs] for r in exponent_rows(table, bench.fit_kind)]
    if joint_rows:
        rows += exponent_rows(joint_table(joint_rows), all_sizes)
    return rows


def _page_head(
    machine: Machine,
    total: float,
    argv: Sequence[str] | None,
    nb_times: notebooks.NotebookTimes | None,
    summary: str,
) -> list[str]:
    """The page's opening parts: machine, command, chapters' times, exponents and the solvers' note."""
    cmd = "python -m benchmarks " + " ".join(argv if argv is not None else sys.argv[1:])
    parts = [
        PAGE_HEAD,
        f"{format_machine(machine)}\n\nMeasured by `{cmd.strip()}`, in {total:.0f} s in all.\n",
    ]
    if nb_times:
        parts.append(
            f"## {NOTEBOOKS_TITLE}\n\n{NOTEBOOKS_INTRO}\n{notebooks.format_notebook_times(nb_times)}"
        )
    parts.append(f"## {EXPONENTS_TITLE}\n\n{EXPONENTS_INTRO}\n{summary}\n")
    solvers = SOLVERS_INTRO.replace("{exponent}", f"{PREDICTION_EXPONENT:g}")
    solvers = solvers.replace("{fit_seconds}", f"{FIT_MIN_SECONDS:g}")
    solvers = solvers.replace("{fit_points}", str(FIT_MIN_POINTS))
    parts.append(solvers)
    return parts


def _table_section(table: Table, body: str, intro: str, figures: Mapping[str, str] | None) -> str:
    """One table's section: its title, intro, formatted body and (when drawn) its figure."""
    link = (figures or {}).get(table.problem)
    alt = f"{table.problem}: seconds against {table.count_label}, log-log"
    image = f"\n![{alt}]({link})\n" if link else ""
    return f"## {table.problem}\n\n" + (f"{intro}\n" if intro else "") + f"{body}\n{image}"


def _joint_sections(
    joint_rows: Sequence[joint.JointMeasurement],
    scale_rows: Sequence[joint.ScaleMeasurement],
    w_star_rows: Sequence[joint.JointMeasurement],
    time_limit: float,
) -> list[str]:
    """The joint problem's sections: its table and exponents, the corpus scale and W*'s times."""
    parts = []
    if joint_rows:
        body = joint.format_joint(joint_rows, time_limit) + "\n" + format_joint_exponents(joint_rows)
        parts.append(f"## {JOINT_TITLE}\n\n{JOINT_INTRO}\n{body}\n")
    if scale_rows:
        whole = joint.format_whole_corpus(scale_rows, joint_rows, joint.whole_corpus_m())
        parts.append(f"{JOINT_SCALE_INTRO}\n{joint.format_scale(scale_rows)}\n{whole}")
    if w_star_rows:
        parts.append(f"{JOINT_W_STAR_INTRO}\n{joint.format_w_star(w_star_rows, time_limit)}\n")
    return parts


def _measured_lines(measured: Sequence[str]) -> list[str]:
    """What this run measured and (by :data:`MEASURABLE`'s labels) what it did not."""
    missing = [label for name, label in MEASURABLE.items() if name not in measured]
    parts = [f"Measured in this run: {', '.join(measured)}.\n"]
    if missing:
        parts.append(f"Not measured in this run: {', '.join(missing)}.\n")
    return parts


def book_page(
    runs: Sequence[tuple[Benchmark, Table]],
    att_rows: Sequence[attention.AttentionMeasurement],
    nb_times: notebooks.NotebookTimes | None,
    machine: Machine,
    total: float,
    argv: Sequence[str] | None,
    figures: Mapping[str, str] | None = None,
    joint_rows: Sequence[joint.JointMeasurement] = (),
    time_limit: float = 60.0,
    w_star_rows: Sequence[joint.JointMeasurement] = (),
    scale_rows: Sequence[joint.ScaleMeasurement] = (),
    train_runs: Sequence[tuple[Benchmark, Table]] = (),
) -> str:
    """The benchmarks page of the book, from this run's measurements.

    At the top the machine (:func:`format_machine`), the chapters' times (with ``--notebooks``)
    and the summary of fitted exponents; then every table. ``figures`` maps a table's problem to
    the link of its figure, relative to the book page (``outputs/benchmarks.md``, one folder above
    the benchmark's output folder). The machine's full platform record
    (:func:`ntpnb.chapter._platform.platform_info` of the run) ends the page, as the section "Platform".
    """
    summary = format_exponent_summary(summary_rows(runs, train_runs, joint_rows))
    parts = _page_head(machine, total, argv, nb_times, summary)
    for bench, table in runs:
        body = format_table(table, bench.naive, bench.fit_kind)
        parts.append(_table_section(table, body, SECTION_INTROS.get(bench.problem, ""), figures))
    for k, (bench, table) in enumerate(train_runs):
        body = training.format_training(table, bench.fit_kind)
        parts.append(_table_section(table, body, TRAINING_INTRO if k == 0 else "", figures))
    if att_rows:
        parts.append(f"## {ATTENTION_TITLE}\n\n{ATTENTION_INTRO}\n{attention.format_attention(att_rows)}\n")
    parts += _joint_sections(joint_rows, scale_rows, w_star_rows, time_limit)
    measured = [t.problem for _, t in runs] + (["attention training"] if att_rows else [])
    measured += ["training loops"] if train_runs else []
    measured += ["joint problem"] if joint_rows else []
    measured += ["chapter times"] if nb_times else []
    parts += _measured_lines(measured)
    parts.append(f"## {PLATFORM_TITLE}\n\n{PLATFORM_INTRO}\n{format_platform(machine.platform)}")
    return "\n".join(parts)


PLATFORM_TITLE = "Platform"
PLATFORM_INTRO = """\
The machine of this run, as the benchmark process recorded it (`benchmarks.json`, key
`platform`): CPU, library versions, and each BLAS library with the kernel and thread count that
threadpoolctl reports. Times from another CPU, BLAS kernel or thread count are not comparable
row by row.
"""


#: Everything ``python -m benchmarks`` can measure, by table name (what the last line names as missing).
MEASURABLE = {
    "NTP-SVM": "the NTP-SVM",
    "separability": "separability (`--skip-lp`)",
    "Regularization path": "the regularization path (`--skip-regpath`)",
    "Graph-SVM": "the Graph-SVM (`--skip-attention-svm`)",
    "Cyclic correction W^cyc": "the cyclic correction W^cyc (`--skip-attention-svm`)",
    "attention training": "the batched attention training (`--skip-attention`)",
    "joint problem": "chapter 6's joint problem on prefixes of the corpus (`--skip-joint`)",
    "training loops": "the training loops of both papers (`--skip-training`)",
    "chapter times": "each chapter's time on one core and the paper run with two jobs (`--notebooks`; "
    "the section below shows what `ntpnb reproduce` recorded for this output tree)",
}
