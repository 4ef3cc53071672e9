"""``python -m benchmarks``: measure what the options ask for, print the tables, write the page and record.

:func:`main` parses the options (:mod:`benchmarks.options`), measures in this process
(:func:`measure`: the solver tables of :mod:`benchmarks.solvers`, the attention training, the
joint problem, the training loops of :mod:`benchmarks.training`, and with ``--notebooks`` and
``--any-seed`` the chapters), prints every table (:func:`print_results`) and writes under
``--out`` the page's part of this run, its figures and ``benchmarks.json``
(:func:`write_results`).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from datetime import datetime, timezone

from ntpnb.records import atomic_write_text, platform_info

from . import attention, joint, notebooks, plots, seeds, training
from .machine import Machine, format_machine, load_average
from .options import ROOT, build_parser, parse_attention_sizes, parse_sizes
from .page import write_measured_page
from .prose import ANY_SEED_TITLE, ATTENTION_TITLE, EXPONENTS_TITLE, JOINT_TITLE, NOTEBOOKS_TITLE
from .record import Results, json_record
from .scaling import Table, format_exponent_summary, power_law_fit
from .solvers import (
    CYCLIC,
    GRAPH_SVM,
    LP_SIZES,
    PATH,
    PATH_SIZES,
    SEPARABILITY,
    SVM,
    SVM_SIZES,
)
from .tables import format_table, format_training
from .timing import Benchmark, run_table


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


def _attention_rows(args: argparse.Namespace) -> list[attention.AttentionMeasurement]:
    """The attention training, batched against the naive loop, unless skipped."""
    rows = []
    if not args.skip_attention:
        for kind in attention.SIZES:
            row = attention.measure(kind, args.attention_trials, args.attention_iters)
            print(f"  attention {kind}: naive {row.naive_seconds:.2f} s, batched {row.batched_seconds:.3f} s")
            rows.append(row)
    return rows


def _joint_rows(args: argparse.Namespace) -> tuple[list, list, list]:
    """The joint problem's sweeps (both deciders), W*'s prefixes and the scale step by step, if asked."""
    if args.skip_joint:
        return [], [], []
    joint_rows = joint.run_prefixes(args.joint_chars, args.time_limit)
    joint_rows += joint.run_prefixes(args.joint_lp_chars, args.time_limit, method="lp")
    w_star_rows = joint.run_prefixes(args.joint_w_star_chars, args.time_limit, "measure_w_star")
    return joint_rows, w_star_rows, joint.run_scale(args.joint_scale_chars, args.time_limit)


def _training_runs(args: argparse.Namespace) -> list[tuple[Benchmark, Table]]:
    """Both papers' training loops against iterations and size, unless skipped."""
    if args.skip_training:
        return []
    training.compile_kernels()
    sweeps = training.training_sizes(args.training_iterations, args.training_m, args.training_n)
    return [(bench, run_table(bench, sizes, args.time_limit)) for bench, sizes in sweeps]


def measure(args: argparse.Namespace) -> Results:
    """Every benchmark the arguments ask for, measured in this process."""
    started = time.perf_counter()
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load_start = load_average()
    runs = _solver_runs(args)
    att_rows = _attention_rows(args)
    joint_rows, w_star_rows, scale_rows = _joint_rows(args)
    train_runs = _training_runs(args)
    nb_times = notebooks.time_notebooks(ROOT, args.jobs) if args.notebooks else None
    any_seed = seeds.run_seeds(seeds.FIRST_SEED, seeds.SEED_COUNT, args.jobs) if args.any_seed else None
    if nb_times:
        notebooks.refresh_chapter_times(ROOT, nb_times.one_core, nb_times.loads)
    total = time.perf_counter() - started
    # the platform is recorded by this run, in the process that measured
    machine = Machine(platform_info(), date, load_start, load_average())
    rows = (att_rows, joint_rows, w_star_rows, scale_rows)
    return Results(runs, *rows, train_runs, nb_times, any_seed, total, machine)


def _print_joint(res: Results, time_limit: float) -> None:
    """The joint problem's tables on the terminal."""
    print(f"\n## {JOINT_TITLE}\n")
    print(joint.format_joint(res.joint_rows, time_limit))
    print(joint.format_scale(res.scale_rows))
    print(joint.format_w_star(res.w_star_rows, time_limit))


def _print_any_seed(res: Results, args: argparse.Namespace) -> None:
    """The any-seed outcomes on the terminal, and written under ``--out``."""
    print(f"\n## {ANY_SEED_TITLE}\n")
    print(seeds.format_outcomes(res.any_seed[0]))
    outcomes, wall = res.any_seed[:2]
    print(f"Wrote {seeds.write_outcomes(outcomes, args.out, {'wall_seconds': wall})}")


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
        _print_joint(res, args.time_limit)
    for bench, table in res.train_runs:
        print(f"\n## {bench.problem}\n")
        print(format_training(table, bench.fit_kind))
    if res.nb_times:
        print(f"\n## {NOTEBOOKS_TITLE}\n")
        print(notebooks.format_notebook_times(res.nb_times))
    if res.any_seed:
        _print_any_seed(res, args)
    print(f"\n## {EXPONENTS_TITLE}\n")
    print(format_exponent_summary(res.fitted_exponents()))
    print(f"\nTotal benchmark time: {res.total:.0f} s")


def write_results(res: Results, args: argparse.Namespace, argv: Sequence[str] | None) -> None:
    """The page's part of this run, its figures and the JSON record of ``res`` under ``--out``."""
    args.out.mkdir(parents=True, exist_ok=True)
    figures = {}
    for bench, table in [*res.runs, *res.train_runs]:
        png = plots.write_scaling_figure(table, bench.fit_kind, power_law_fit, args.out)
        figures[table.problem] = f"{args.out.name}/{png.name}"  # relative to the book page, one folder up
    page = write_measured_page(res, args.out, argv, figures, args.time_limit)
    print(f"Wrote {page} (the book's benchmarks page: `ntpnb book` picks it up)")
    path = args.out / "benchmarks.json"
    atomic_write_text(path, json.dumps(json_record(res), indent=1))
    print(f"Wrote {path}")
