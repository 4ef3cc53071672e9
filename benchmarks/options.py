"""The command line of ``python -m benchmarks``: its options, and the sizes they are given in.

``ntpnb benchmarks`` passes its arguments on to it; :mod:`benchmarks.run` does what they ask.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from . import attention, joint, notebooks, seeds
from .scaling import Size
from .solvers import ATTENTION_SVM_SIZES, LP_SIZES, PATH_SIZES, SVM_SIZES

#: The project's root: the benchmarks run its notebooks and write under its ``outputs/``.
ROOT = Path(__file__).resolve().parents[1]
#: What ``--help`` says the command does.
DESCRIPTION = "Time each method at each size, in one run, and print the tables (``python -m benchmarks``)."


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


def parse_attention_sizes(values: Sequence[str] | None) -> list[Size]:
    """Attention sizes given as ``K,d,n,T`` strings, or the default."""
    return parse_sizes(values, ATTENTION_SVM_SIZES, "K,d,n,T")


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m benchmarks`` (what ``ntpnb benchmarks`` passes on)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=DESCRIPTION)
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
