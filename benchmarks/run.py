"""Time each method at each size, in one run, and print the tables (``python -m benchmarks``)."""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ntpnb.errors import NTPError

from . import attention
from .instances import fresh_copy, gaussian_instance
from .methods import SEPARABILITY_METHODS, SVM_METHODS

Size = tuple[int, int, int, int]  # (m, V, d, S)

#: The default sizes: the paper's (Figs. 3-5 of Paper A) up to the goal of issue 9.
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

#: A method is skipped at a size when its time at the previous size of the same kind (d > m, or
#: d <= m), scaled by (constraints ratio) ** PREDICTION_EXPONENT, exceeds the budget.
PREDICTION_EXPONENT = 2.5

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Measurement:
    """One method at one size: its time, or why it has none, and its answer's distance to fast."""

    method: str
    size: Size
    n_constraints: int
    seconds: float | None = None
    note: str = ""
    rel_diff: float | None = None  # SVM: ||W - W_fast|| / ||W_fast||; separability: 0 if same answer
    peak_mib: float | None = None


@dataclass
class Table:
    """The measurements of one problem (the NTP-SVM, or separability)."""

    problem: str
    methods: list[str]
    measurements: list[Measurement] = field(default_factory=list)


def n_constraints(size: Size) -> int:
    """Inequalities (6b) in anchor form: ``m (V - S)``."""
    m, V, _, S = size
    return m * (V - S)


def time_call(func: Callable, data, repeat_below: float = 1.0, repeats: int = 3):
    """Wall-clock seconds of ``func(fresh data)``: the best of ``repeats`` if the first is fast."""
    best, value = np.inf, None
    for k in range(repeats):
        copy = fresh_copy(data)
        start = time.perf_counter()
        value = func(copy)
        best = min(best, time.perf_counter() - start)
        if k == 0 and best >= repeat_below:
            break
    return best, value


def peak_memory_mib(func: Callable, data) -> float:
    """Peak memory allocated (numpy arrays included) during ``func(data)``, in MiB."""
    tracemalloc.start()
    try:
        func(fresh_copy(data))
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def run_table(problem: str, methods: dict[str, Callable], sizes: Sequence[Size], budget: float) -> Table:
    """Time every method at every size (skipping predicted overruns) and compare the answers."""
    table = Table(problem, list(methods))
    last: dict[tuple[str, bool], tuple[int, float]] = {}
    for size in sizes:
        data = gaussian_instance(*size)
        n = n_constraints(size)
        answers = {}
        for name, func in methods.items():
            meas = Measurement(name, size, n)
            table.measurements.append(meas)
            key = (name, size[2] > size[0])
            if key in last:
                n_prev, t_prev = last[key]
                predicted = t_prev * (n / n_prev) ** PREDICTION_EXPONENT
                if predicted > budget:
                    meas.note = f"skipped: predicted {predicted:.0f} s > budget {budget:.0f} s"
                    print(f"  {problem} {size} {name}: {meas.note}", flush=True)
                    continue
            try:
                meas.seconds, answers[name] = time_call(func, data)
            except NTPError as exc:
                meas.note = f"failed: {exc}"[:120]
                print(f"  {problem} {size} {name}: {meas.note}", flush=True)
                continue
            last[key] = (n, meas.seconds)
            if name == "fast":
                meas.peak_mib = peak_memory_mib(func, data)
            print(f"  {problem} {size} {name}: {meas.seconds:.3f} s", flush=True)
        ref = answers.get("fast")
        for meas in table.measurements[-len(methods) :]:
            if meas.method in answers and ref is not None:
                a = answers[meas.method]
                if isinstance(a, np.ndarray):
                    meas.rel_diff = float(np.linalg.norm(a - ref) / max(np.linalg.norm(ref), 1e-300))
                else:
                    meas.rel_diff = 0.0 if bool(a) == bool(ref) else 1.0
    return table


#: Times below this are mostly fixed overhead (imports, problem set-up) and left out of the fit.
FIT_MIN_SECONDS = 0.1


def scaling_exponent(table: Table, method: str) -> float | None:
    """Least-squares slope of log(seconds) against log(constraints).

    Over the sizes with ``d > m`` where the method took at least :data:`FIT_MIN_SECONDS`.
    """
    pts = [
        (np.log(m.n_constraints), np.log(m.seconds))
        for m in table.measurements
        if m.method == method
        and m.seconds is not None
        and m.seconds >= FIT_MIN_SECONDS
        and m.size[2] > m.size[0]
    ]
    if len(pts) < 2 or len({p[0] for p in pts}) < 2:
        return None
    x, y = np.array(pts).T
    return float(np.polyfit(x, y, 1)[0])


def _fmt_time(meas: Measurement) -> str:
    if meas.seconds is None:
        return "skipped" if meas.note.startswith("skipped") else "failed"
    return f"{meas.seconds:.3g} s"


def format_table(table: Table, naive: str) -> str:
    """A Markdown table: one row per size, a column per method, speed-ups against ``naive``."""
    methods = table.methods
    head = ["(m, V, d, S)", "constraints (6b)", *methods, "speed-up of fast over", "max diff to fast"]
    head.append("fast peak MiB")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    sizes = list(dict.fromkeys(m.size for m in table.measurements))
    for size in sizes:
        row = {m.method: m for m in table.measurements if m.size == size}
        fast = row.get("fast")
        ratios = [
            f"{name}: {row[name].seconds / fast.seconds:.3g}x"
            for name in methods
            if name != "fast" and fast and fast.seconds and row[name].seconds
        ]
        ratio = ", ".join(ratios) if ratios else f"n/a ({naive} {_fmt_time(row[naive])})"
        diffs = [m.rel_diff for m in row.values() if m.rel_diff is not None and m.method != "fast"]
        cells = [
            str(size),
            str(row[methods[0]].n_constraints),
            *(_fmt_time(row[name]) for name in methods),
            ratio,
            f"{max(diffs):.1e}" if diffs else "n/a",
            f"{fast.peak_mib:.1f}" if fast and fast.peak_mib is not None else "n/a",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    exps = []
    for name in methods:
        e = scaling_exponent(table, name)
        exps.append(f"{e:.2f}" if e is not None else "n/a")
    label = f"fitted exponent a (time ~ constraints^a; d > m, times >= {FIT_MIN_SECONDS:g} s)"
    lines.append(f"| {label} | | " + " | ".join(exps) + " | | | |")
    notes = sorted({f"{m.method} at {m.size}: {m.note}" for m in table.measurements if m.note})
    return "\n".join(lines + ([""] + [f"- {n}" for n in notes] if notes else []))


def parse_sizes(values: Sequence[str] | None, default: tuple[Size, ...]) -> list[Size]:
    """Sizes given as ``m,V,d,S`` strings, or the default."""
    if not values:
        return list(default)
    sizes = []
    for v in values:
        parts = tuple(int(x) for x in v.split(","))
        if len(parts) != 4:
            raise SystemExit(f"a size is m,V,d,S (four integers), got {v!r}")
        sizes.append(parts)
    return sizes


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmarks, print the tables, write the book page and the JSON under ``--out``."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--sizes", nargs="*", help="NTP-SVM sizes as m,V,d,S (default: %(default)s)")
    parser.add_argument("--lp-sizes", nargs="*", help="separability sizes as m,V,d,S")
    parser.add_argument("--budget", type=float, default=60.0, help="seconds a method may take (predicted)")
    parser.add_argument("--skip-lp", action="store_true", help="no separability table")
    parser.add_argument("--skip-attention", action="store_true", help="no attention-training table")
    parser.add_argument(
        "--attention-trials", type=int, default=attention.N_TRIALS, help="trials (default: %(default)s)"
    )
    parser.add_argument(
        "--attention-iters", type=int, default=attention.N_ITER, help="NGD steps (default: %(default)s)"
    )
    out = ROOT / "outputs" / "benchmarks"
    parser.add_argument(
        "--out", type=Path, default=out, help="folder for benchmarks.md (the book page) and benchmarks.json"
    )
    args = parser.parse_args(argv)

    started = time.perf_counter()
    tables = [run_table("NTP-SVM", SVM_METHODS, parse_sizes(args.sizes, SVM_SIZES), args.budget)]
    if not args.skip_lp:
        lp_sizes = parse_sizes(args.lp_sizes, LP_SIZES)
        tables.append(run_table("separability", SEPARABILITY_METHODS, lp_sizes, args.budget))
    att_rows = []
    if not args.skip_attention:
        for kind in attention.SIZES:
            row = attention.measure(kind, args.attention_trials, args.attention_iters)
            print(f"  attention {kind}: naive {row.naive_seconds:.2f} s, batched {row.batched_seconds:.3f} s")
            att_rows.append(row)
    total = time.perf_counter() - started

    print()
    machine = f"{platform.machine()}, {os.cpu_count()} cores, one BLAS thread"
    print(f"Machine: {machine}.")
    print("Times are wall-clock seconds measured in this run (best of 3 below 1 s); on a shared")
    print("machine they are noisy, so compare the ratios, which were measured side by side.")
    for table, naive in zip(tables, ("naive cvxpy", "full LP"), strict=False):
        print(f"\n## {table.problem}\n")
        print(format_table(table, naive))
    if att_rows:
        print(f"\n## {ATTENTION_TITLE}\n")
        print(attention.format_attention(att_rows))
    print(f"\nTotal benchmark time: {total:.0f} s")
    args.out.mkdir(parents=True, exist_ok=True)
    page = args.out / "benchmarks.md"
    page.write_text(book_page(tables, att_rows, machine, total, argv))
    print(f"Wrote {page} (the book's benchmarks page: `ntpnb book` picks it up)")
    path = args.out / "benchmarks.json"
    payload = {
        "cores": os.cpu_count(),
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
        "total_seconds": total,
        "tables": [
            {"problem": t.problem, "methods": t.methods, "measurements": [asdict(m) for m in t.measurements]}
            for t in tables
        ],
        "attention": [{**asdict(r), "speedup": r.speedup} for r in att_rows],
    }
    path.write_text(json.dumps(payload, indent=1))
    print(f"Wrote {path}")
    return 0


BOOK_INTRO = """\
# Benchmarks

<!-- Generated by `python -m benchmarks` into outputs/benchmarks/; `ntpnb book` shows it. -->

How the solvers of `ntpnb` scale (issue 9). Each row is one random instance of size
`(m, V, d, S)`: Gaussian embeddings `h_j ~ N(0, I_d / d)`, supports of size `S` drawn uniformly,
`p_j` Dirichlet(1) on its support. All methods ran in the same process, one after another, at
each size, with one BLAS thread: the machine is shared, so absolute times are noisy; the ratios,
measured side by side, are the result. A method is skipped at a size when its time at the previous
size of the same kind (`d > m` or not), scaled by (constraints ratio)^{exponent}, exceeds the
budget. The exponent is the least-squares slope of log(time) against log(number of inequality
constraints (6b), `m (V - S)`) over the sizes with `d > m` where the method took at least 0.1 s
(shorter times are mostly fixed overhead).

The NTP-SVM methods:

- **naive cvxpy**: the problem as the paper states it, one cvxpy constraint per (context,
  in-support token, out-of-support token) triple and per in-support pair, solved by CLARABEL.
- **sparse cvxpy**: the same problem in anchor form as two sparse constraint matrices on
  `vec(W)`, solved by CLARABEL (the solve only).
- **ntpnb reference**: the sparse cvxpy solve with polishing on the active set and the full
  certificate (which needs an orthonormal basis of F): `ntpnb.linear.svm.solve_ntp_svm_reference`.
- **fast**: `ntpnb.linear.svm_fast.solve_ntp_svm_fast`, a primal-dual active-set method on the
  dual in the Gram matrix `H H^T` (one variable per (context, token) pair; no basis of F),
  verified by constraints, KKT conditions with explicit multipliers and the duality gap.

"max diff to fast" is the largest `||W - W_fast|| / ||W_fast||` over the other methods that ran;
"fast peak MiB" the peak memory the fast solver allocated (numpy arrays included).

The separability methods: **full LP**, the certified max-margin LP on `vec(W)` with HiGHS
(`ntpnb.linear.svm.is_separable_lp`); **ntpnb is_separable**, the package's test: when
`rank H = m` the logits can take any value, so the data are separable (a witness computed from
`H` alone is checked), otherwise the certified LP; and **fast**,
`ntpnb.linear.svm_fast.separability_fast`: the same witness, otherwise a feasibility LP in the row
space of `H` with the common in-support logits as variables (its "not separable" rests on the HiGHS
status, without the certificate of the full LP). For separability "max diff to fast" is 0 when all
methods gave the same answer.
"""


ATTENTION_TITLE = "Attention training: all trials at once"

ATTENTION_INTRO = """\
The experiments of Paper B's Figs. 3-4 (chapter 06) train one attention matrix per trial by
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


def book_page(
    tables: Sequence[Table],
    att_rows: Sequence[attention.AttentionMeasurement],
    machine: str,
    total: float,
    argv: Sequence[str] | None,
) -> str:
    """The benchmarks page of the book, from this run's measurements."""
    parts = [BOOK_INTRO.replace("{exponent}", f"{PREDICTION_EXPONENT:g}")]
    for table, naive in zip(tables, ("naive cvxpy", "full LP"), strict=False):
        parts.append(f"## {table.problem}\n\n{format_table(table, naive)}\n")
    if att_rows:
        parts.append(f"## {ATTENTION_TITLE}\n\n{ATTENTION_INTRO}\n{attention.format_attention(att_rows)}\n")
    cmd = "python -m benchmarks " + " ".join(argv if argv is not None else sys.argv[1:])
    parts.append(
        f"Measured on {machine}, by `{cmd.strip()}`, in {total:.0f} s in all.\n\n"
        "Not measured here yet: the reproduction time of every notebook at each profile, the "
        "regularization path and the attention SVMs (issue 9).\n"
    )
    return "\n".join(parts)
