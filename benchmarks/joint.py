"""The joint problem of Paper A, App. C (chapter 5) on growing prefixes of the corpus.

Each prefix of ``n`` characters of the docstring corpus is read as chapter 5 reads it (a circle
of windows of length :data:`WINDOW`, every prefix of every window a context, fixed random
embeddings nested in ``d``) and its joint problem is solved as the chapter solves it:

1. the separability thresholds in ``d`` of each single-length slice and of the joint problem
   (:func:`ntpnb.joint_thresholds`, every decision by the certified LP, ``method="lp"``);
2. compatibility and ``W*`` at the joint threshold (:func:`ntpnb.finite_solution`, with ``dim F``);
3. ``W^mm`` at twice the threshold, the ``d`` of the chapter's gradient-descent run
   (:func:`ntpnb.solve_ntp_svm`, verified: constraints, KKT conditions, duality gap).

Each prefix runs in its own Python process, so that its CPU time (``time.process_time``, one
BLAS thread) and its peak resident memory (``ru_maxrss``, HiGHS's own memory included) are its
own. The prefixes grow until the next one is predicted (from the last, as
``t (m' / m) ** exponent``) or measured to exceed the budget; the table names the largest
prefix solved within it, and the share of each step shows what bounds the size.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass

#: The chapter's window length ``T`` and seed (``notebooks/05_autoregressive_text.md``).
WINDOW, SEED = 7, 0
#: The prefixes tried, in characters of the corpus (the chapter's paper profile uses 50).
DEFAULT_CHARS: tuple[int, ...] = (20, 35, 50, 70, 100, 140, 200, 280, 400, 560, 800, 1000, 2000, 5000)
#: Prefixes for W* alone (LSQR, no threshold sweep), at d = W_STAR_D_OVER_M m: the joint thresholds
#: measured on the prefixes the LPs reach are 0.19 m to 0.22 m.
W_STAR_CHARS: tuple[int, ...] = (1000, 2000, 5000, 10000, 20000, 40000)
W_STAR_D_OVER_M = 0.2
#: The skip rule's growth exponent of the time in ``m`` (the LP sweep's; measured about 2-3).
PREDICTION_EXPONENT = 2.5


@dataclass
class JointMeasurement:
    """The joint problem of one prefix: its size, its answers, each step's CPU time, its peak memory."""

    n_chars: int
    m: int = 0
    V: int = 0
    d_slices: int = 0
    d_joint: int = 0
    dim_f: int = 0
    compatible: bool = False
    lp_count: int = 0
    lp_seconds: float = 0.0
    w_star_seconds: float = 0.0
    w_mm_seconds: float = 0.0
    total_seconds: float = 0.0
    peak_mib: float = 0.0
    certificate: str = ""
    note: str = ""


def _joint_contexts(n_chars: int):
    """The prefix contexts of the first ``n_chars`` characters, read as chapter 5 reads the corpus."""
    import ntpnb as ntp
    from ntpnb.linear import corpus

    ids = ntp.encode_text(ntp.stdlib_corpus(n_chars))
    return ntp.prefix_contexts(ntp.sliding_windows(ids.tolist(), WINDOW), len(corpus.ALPHABET))


def _compatible_with_w_star(data) -> bool:
    """Whether ``data`` are compatible, computing ``W*`` when they are."""
    import ntpnb as ntp

    compatible = ntp.is_compatible(data)
    if compatible:
        ntp.finite_solution(data)
    return compatible


def measure_prefix(n_chars: int) -> JointMeasurement:
    """Solve the joint problem of the first ``n_chars`` characters in this process (see the module)."""
    import ntpnb as ntp
    from ntpnb.linear.subspace import f_decomposition

    start = time.process_time()
    joint = _joint_contexts(n_chars)
    decide = ntp.TimedSeparability()
    thresholds = ntp.joint_thresholds(joint, SEED, decide)
    lp_seconds = time.process_time() - start
    data = ntp.joint_ntp_data(joint, thresholds.joint, SEED)
    compatible = _compatible_with_w_star(data)
    dim_f = f_decomposition(data).dim
    w_star_end = time.process_time()
    sol = ntp.solve_ntp_svm(ntp.joint_ntp_data(joint, min(joint.m, 2 * thresholds.joint), SEED))
    end = time.process_time()
    return JointMeasurement(
        n_chars=n_chars,
        m=joint.m,
        V=joint.V,
        d_slices=thresholds.largest_slice,
        d_joint=thresholds.joint,
        dim_f=dim_f,
        compatible=compatible,
        lp_count=len(decide.log),
        lp_seconds=lp_seconds,
        w_star_seconds=w_star_end - start - lp_seconds,
        w_mm_seconds=end - w_star_end,
        total_seconds=end - start,
        peak_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        certificate=("passes: " if sol.passes() else "FAILS: ") + sol.summary(),
    )


def measure_w_star(n_chars: int) -> JointMeasurement:
    """Compatibility and ``W*`` alone on the first ``n_chars`` characters, at ``d = W_STAR_D_OVER_M m``.

    No separability decision: the rows show how far ``W*`` reaches (by LSQR above the dense
    limit, :func:`ntpnb.linear.subspace.uses_dense_f`) where the LPs do not.
    """
    import ntpnb as ntp
    from ntpnb.linear.constraints import NTPRows
    from ntpnb.linear.subspace import uses_dense_f

    start = time.process_time()
    joint = _joint_contexts(n_chars)
    data = ntp.joint_ntp_data(joint, max(1, round(W_STAR_D_OVER_M * joint.m)), SEED)
    compatible = _compatible_with_w_star(data)
    end = time.process_time()
    return JointMeasurement(
        n_chars=n_chars,
        m=joint.m,
        V=joint.V,
        d_joint=data.d,
        dim_f=NTPRows(data).n_eq,
        compatible=compatible,
        w_star_seconds=end - start,
        total_seconds=end - start,
        peak_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        note="dense SVD" if uses_dense_f(data) else "LSQR",
    )


def measure_in_subprocess(n_chars: int, timeout: float, what: str = "measure_prefix") -> JointMeasurement:
    """``what`` (:func:`measure_prefix` or :func:`measure_w_star`) in a fresh Python process."""
    cmd = [
        sys.executable,
        "-c",
        f"import benchmarks.joint as j; j.print_measurement({int(n_chars)}, {what!r})",
    ]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return JointMeasurement(n_chars, note=f"stopped after {timeout:.0f} s (wall)")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return JointMeasurement(n_chars, note=f"failed: {last}"[:160])
    return JointMeasurement(**json.loads(done.stdout.strip().splitlines()[-1]))


def print_measurement(n_chars: int, what: str = "measure_prefix") -> None:
    """Print ``what`` (a function of this module) of ``n_chars`` as one JSON line (the subprocess's)."""
    print(json.dumps(asdict(globals()[what](n_chars))))


def run_prefixes(chars: Sequence[int], budget: float, what: str = "measure_prefix") -> list[JointMeasurement]:
    """Measure growing prefixes until the next is predicted, or one is measured, to exceed ``budget``.

    The subprocess of a prefix is stopped at four times the budget (wall clock: the machine is
    shared), so a prefix far over budget ends the table without waiting for it.
    """
    rows: list[JointMeasurement] = []
    for n_chars in sorted(chars):
        if rows and rows[-1].m:
            last = rows[-1]
            predicted = last.total_seconds * (n_chars / last.n_chars) ** PREDICTION_EXPONENT
            if predicted > budget:
                rows.append(
                    JointMeasurement(n_chars, note=f"skipped: predicted {predicted:.0f} s > {budget:.0f} s")
                )
                print(f"  joint problem, {n_chars} characters: {rows[-1].note}", flush=True)
                break
        row = measure_in_subprocess(n_chars, timeout=4 * budget, what=what)
        rows.append(row)
        print(f"  joint problem, {n_chars} characters: {format_row(row)}", flush=True)
        if not row.m or row.total_seconds > budget:
            break
    return rows


def largest_within(rows: Sequence[JointMeasurement], budget: float) -> JointMeasurement | None:
    """The largest prefix whose joint problem was solved within ``budget`` CPU seconds."""
    ok = [r for r in rows if r.m and r.total_seconds <= budget]
    return max(ok, key=lambda r: r.n_chars) if ok else None


def format_row(row: JointMeasurement) -> str:
    """One prefix as a line of the printed progress."""
    if not row.m:
        return row.note
    if not row.lp_count:
        return (
            f"W* alone, m = {row.m}, d = {row.d_joint}, {row.dim_f} equations ({row.note}): "
            f"{row.total_seconds:.1f} s, {row.peak_mib:.0f} MiB"
        )
    return (
        f"m = {row.m}, d = {row.d_joint}, dim F = {row.dim_f}: {row.total_seconds:.1f} s "
        f"(LPs {row.lp_seconds:.1f} s), {row.peak_mib:.0f} MiB"
    )


def format_joint(rows: Sequence[JointMeasurement], budget: float) -> str:
    """The table of the benchmarks page, and the largest prefix solved within ``budget``."""
    head = (
        "| characters | m | V | d slices | d joint | V d | dim F | compatible | LPs | LP s | W* s "
        "| W^mm s | total CPU s | peak MiB |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    lines = []
    for r in rows:
        if not r.m:
            lines.append(f"| {r.n_chars} | {r.note} |" + " |" * 12)
            continue
        lines.append(
            f"| {r.n_chars} | {r.m} | {r.V} | {r.d_slices} | {r.d_joint} | {r.V * r.d_joint} | {r.dim_f} "
            f"| {r.compatible} | {r.lp_count} | {r.lp_seconds:.1f} | {r.w_star_seconds:.2f} "
            f"| {r.w_mm_seconds:.2f} | {r.total_seconds:.1f} | {r.peak_mib:.0f} |"
        )
    best = largest_within(rows, budget)
    tail = "\nNo prefix was solved within the budget.\n"
    if best is not None:
        share = best.lp_seconds / best.total_seconds if best.total_seconds else 0.0
        tail = (
            f"\nLargest prefix solved within {budget:.0f} s of CPU time: {best.n_chars} characters "
            f"(m = {best.m} contexts, V = {best.V}, joint threshold d = {best.d_joint}, dim F = "
            f"{best.dim_f}) in {best.total_seconds:.1f} s, {100 * share:.0f}% of it in the "
            f"{best.lp_count} separability LPs; peak memory {best.peak_mib:.0f} MiB.\n"
            f"W^mm certificate there: {best.certificate}.\n"
        )
    return head + "\n".join(lines) + "\n" + tail


def format_w_star(rows: Sequence[JointMeasurement], budget: float) -> str:
    """The table of ``W*`` alone on large prefixes (:func:`measure_w_star`)."""
    head = (
        "| characters | m | V | d | equations (4) | V d | compatible | solver | total CPU s | peak MiB |\n"
        "|---|---|---|---|---|---|---|---|---|---|\n"
    )
    lines = [
        f"| {r.n_chars} | {r.m} | {r.V} | {r.d_joint} | {r.dim_f} | {r.V * r.d_joint} | {r.compatible} "
        f"| {r.note} | {r.total_seconds:.1f} | {r.peak_mib:.0f} |"
        if r.m
        else f"| {r.n_chars} | {r.note} |" + " |" * 8
        for r in rows
    ]
    best = largest_within(rows, budget)
    tail = (
        f"\nLargest prefix whose W* was computed within {budget:.0f} s: {best.n_chars} characters "
        f"(m = {best.m}, d = {best.d_joint}) in {best.total_seconds:.1f} s, {best.peak_mib:.0f} MiB.\n"
        if best is not None
        else "\nNo prefix within the budget.\n"
    )
    return head + "\n".join(lines) + "\n" + tail
