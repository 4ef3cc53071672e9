"""The joint problem of Paper A, App. C (chapter 6) on growing prefixes of the corpus.

Each prefix of ``n`` characters of the docstring corpus is read as chapter 6 reads it (a circle
of windows of length :data:`WINDOW`, every prefix of every window a context, fixed random
embeddings nested in ``d``) and its joint problem is solved as the chapter solves it:

1. the separability thresholds in ``d`` of each single-length slice and of the joint problem
   (:func:`ntpnb.joint_thresholds`), every decision certified, by the Newton continuation
   (``method="newton"`` of :func:`ntpnb.decide_separability`, the chapter's decider) or by the
   certified LP (the one it replaced), :class:`ntpnb.TimedSeparability`;
2. compatibility and ``W*`` at the joint threshold (:func:`ntpnb.finite_solution`, with ``dim F``);
3. ``W^mm`` at twice the threshold, the ``d`` of the chapter's gradient-descent run
   (:func:`ntpnb.solve_ntp_svm`, verified: constraints, KKT conditions, duality gap).

Each prefix runs in its own Python process, so that its CPU time (``time.process_time``, one
BLAS thread) and its peak resident memory (``VmHWM``, HiGHS's own memory included) are its
own. The prefixes grow until the next one is predicted (from the last, as
``t (n' / n) ** exponent``) or measured to exceed the budget; the table names the largest
prefix solved within it, and the share of each step shows what bounds the size.

Beyond that prefix, :func:`measure_scale_step` times the joint problem's questions one at a
time on larger prefixes (:data:`SCALE_CHARS`): compatibility and ``W*``, a certified decision
far below the threshold (on the contexts of the two longest lengths, :func:`ntpnb.certify_on_contexts`),
one above it (a verified separating direction), and ``W^mm`` there.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from ntpnb.chapter import markdown_table

from .scaling import Measurement, Table, all_sizes, exponent_rows, format_exponent

if TYPE_CHECKING:
    from ntpnb.linear import NTPData, PrefixContexts

#: The chapter's window length ``T`` and seed (``notebooks/06_autoregressive_text.md``).
WINDOW, SEED = 7, 0
#: The prefixes tried, in characters of the corpus (the chapter's paper profile uses 50).
DEFAULT_CHARS: tuple[int, ...] = (20, 35, 50, 70, 100, 140, 200, 280, 400, 560, 800, 1000, 2000, 5000)
#: The same for the LP, the decider the chapter used before (its sweep of 50 characters took 38 s).
LP_CHARS: tuple[int, ...] = (20, 35, 50, 70, 100, 140)
#: Prefixes for W* alone (LSQR, no threshold sweep), at d = W_STAR_D_OVER_M m: the joint thresholds
#: measured on the prefixes the sweeps reach are 0.19 m to 0.26 m.
W_STAR_CHARS: tuple[int, ...] = (1000, 2000, 5000, 10000, 20000, 40000)
W_STAR_D_OVER_M = 0.2
#: Prefixes of the step-by-step table, and the d of its decisions as fractions of m: far below the
#: thresholds (certified on the two longest lengths) and about twice them.
SCALE_CHARS: tuple[int, ...] = (1000, 2000, 5000)
SCALE_STEPS: tuple[str, ...] = ("W*", "not separable", "separable", "W^mm")
SCALE_LOW_D_OVER_M = 0.05
SCALE_HIGH_D_OVER_M = 0.44
#: The skip rules' growth exponents of the time in the prefix length (about m): the LP sweep's was
#: measured between 2 and 3; the Newton method's steps are m x m factorizations.
PREDICTION_EXPONENT = {"lp": 2.5, "newton": 3.0, "measure_w_star": 2.5}


@dataclass
class JointMeasurement:
    """The joint problem of one prefix: its size, its answers, each step's CPU time, its peak memory."""

    n_chars: int
    method: str = "newton"
    m: int = 0
    V: int = 0
    d_slices: int = 0
    d_joint: int = 0
    dim_f: int = 0
    compatible: bool = False
    decisions: int = 0
    decide_seconds: float = 0.0
    most_steps: int = 0
    w_star_seconds: float = 0.0
    w_mm_seconds: float = 0.0
    total_seconds: float = 0.0
    peak_mib: float = 0.0
    certificate: str = ""
    note: str = ""


@dataclass
class ScaleMeasurement:
    """One question of the joint problem on one large prefix (:func:`measure_scale_step`)."""

    n_chars: int
    step: str
    m: int = 0
    d: int = 0
    answer: str = ""
    seconds: float = 0.0
    peak_mib: float = 0.0
    note: str = ""


def _joint_contexts(n_chars: int) -> PrefixContexts:
    """The prefix contexts of the first ``n_chars`` characters, read as chapter 6 reads the corpus."""
    import ntpnb as ntp

    ids = ntp.encode_text(ntp.stdlib_corpus(n_chars))
    return ntp.prefix_contexts(ntp.sliding_windows(ids.tolist(), WINDOW), len(ntp.ALPHABET))


def _compatible_with_w_star(data: NTPData) -> bool:
    """Whether ``data`` are compatible, computing ``W*`` when they are."""
    import ntpnb as ntp

    compatible = ntp.is_compatible(data)
    if compatible:
        ntp.finite_solution(data)
    return compatible


def _peak_mib() -> float:
    """The peak resident memory of this process in MiB: ``VmHWM``, its own high-water mark.

    Not ``ru_maxrss``: Linux carries that across ``fork`` and ``exec``, so in a process started
    by a large parent it reports the parent's size (every prefix showed the benchmark's own
    2.3 GiB). Where ``/proc`` is missing, ``ru_maxrss`` it is.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _w_star_facts(joint: PrefixContexts, d: int) -> tuple[bool, int]:
    """Whether the joint data at threshold ``d`` are compatible (W* exists) and the dimension of F."""
    import ntpnb as ntp
    from ntpnb.linear import NTPRows

    data = ntp.joint_ntp_data(joint, d, SEED)
    return _compatible_with_w_star(data), NTPRows(data).n_eq


def measure_prefix(n_chars: int, method: str = "newton") -> JointMeasurement:
    """Solve the joint problem of the first ``n_chars`` characters in this process (see the module)."""
    import ntpnb as ntp

    start = time.process_time()
    joint = _joint_contexts(n_chars)
    decide = ntp.TimedSeparability(method)
    thresholds = ntp.joint_thresholds(joint, SEED, decide)
    decide_end = time.process_time()
    compatible, dim_f = _w_star_facts(joint, thresholds.joint)
    w_star_end = time.process_time()
    sol = ntp.solve_ntp_svm(ntp.joint_ntp_data(joint, min(joint.m, 2 * thresholds.joint), SEED))
    end = time.process_time()
    return JointMeasurement(
        n_chars=n_chars,
        method=method,
        m=joint.m,
        V=joint.V,
        d_slices=thresholds.largest_slice,
        d_joint=thresholds.joint,
        dim_f=dim_f,
        compatible=compatible,
        decisions=len(decide.log),
        decide_seconds=decide_end - start,
        most_steps=max(x.iterations for x in decide.log),
        w_star_seconds=w_star_end - decide_end,
        w_mm_seconds=end - w_star_end,
        total_seconds=end - start,
        peak_mib=_peak_mib(),
        certificate=("passes: " if sol.passes() else "FAILS: ") + sol.summary(),
    )


def measure_w_star(n_chars: int) -> JointMeasurement:
    """Compatibility and ``W*`` alone on the first ``n_chars`` characters, at ``d = W_STAR_D_OVER_M m``.

    No separability decision: the rows show how far ``W*`` reaches (by LSQR above the dense
    limit, :func:`ntpnb.linear._subspace.uses_dense_f`) where the sweeps do not.
    """
    import ntpnb as ntp
    from ntpnb.linear import NTPRows, uses_dense_f

    start = time.process_time()
    joint = _joint_contexts(n_chars)
    data = ntp.joint_ntp_data(joint, max(1, round(W_STAR_D_OVER_M * joint.m)), SEED)
    compatible = _compatible_with_w_star(data)
    end = time.process_time()
    return JointMeasurement(
        n_chars=n_chars,
        method="measure_w_star",
        m=joint.m,
        V=joint.V,
        d_joint=data.d,
        dim_f=NTPRows(data).n_eq,
        compatible=compatible,
        w_star_seconds=end - start,
        total_seconds=end - start,
        peak_mib=_peak_mib(),
        note="dense SVD" if uses_dense_f(data) else "LSQR",
    )


def measure_scale_step(n_chars: int, step: str) -> ScaleMeasurement:
    """One of :data:`SCALE_STEPS` on the first ``n_chars`` characters, timed alone (not the counting).

    ``"W*"``: compatibility and ``W*`` at ``d = W_STAR_D_OVER_M m``; ``"not separable"``: a Farkas
    certificate at ``d = SCALE_LOW_D_OVER_M m`` found on the contexts of the two longest lengths
    and checked on all (:func:`ntpnb.certify_on_contexts`); ``"separable"``: a verified separating
    direction at ``d = SCALE_HIGH_D_OVER_M m`` (:func:`ntpnb.linear._separability.decide_by_newton`);
    ``"W^mm"``: the certified NTP-SVM there (:func:`ntpnb.solve_ntp_svm`).
    """
    import numpy as np

    import ntpnb as ntp
    from ntpnb.linear import decide_by_newton

    joint = _joint_contexts(n_chars)
    fraction = {"W*": W_STAR_D_OVER_M, "not separable": SCALE_LOW_D_OVER_M}.get(step, SCALE_HIGH_D_OVER_M)
    d = max(1, round(fraction * joint.m))
    start = time.process_time()
    data = ntp.joint_ntp_data(joint, d, SEED)
    if step == "W*":
        answer = f"compatible: {_compatible_with_w_star(data)}"
    elif step == "not separable":
        longest = np.flatnonzero(joint.lengths >= joint.max_length - 1)
        cert = ntp.certify_on_contexts(data, longest)
        answer = "no certificate" if cert is None else f"certified on {longest.size} contexts"
    elif step == "separable":
        newton = decide_by_newton(data)
        kind = "separable" if newton.decision.separable else "not separable"
        answer = f"{kind} ({newton.iterations} Newton steps)"
    elif step == "W^mm":
        sol = ntp.solve_ntp_svm(data)
        answer = f"{'passes' if sol.passes() else 'FAILS'}, {sol.n_active} active ({sol.solver})"
    else:
        raise ValueError(f"step must be one of {SCALE_STEPS}, got {step!r}")
    seconds = time.process_time() - start
    return ScaleMeasurement(n_chars, step, joint.m, d, answer, seconds, _peak_mib())


def measure_in_subprocess(what: str, timeout: float, *args: object) -> JointMeasurement | ScaleMeasurement:
    """``what`` (a ``measure_*`` function of this module) on ``args`` in a fresh Python process."""
    cmd = [sys.executable, "-c", f"import benchmarks.joint as j; j.print_measurement({what!r}, *{args!r})"]
    kind = ScaleMeasurement if what == "measure_scale_step" else JointMeasurement
    head = args if what != "measure_w_star" else (*args, "measure_w_star")
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return kind(*head, note=f"stopped after {timeout:.0f} s (wall)")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return kind(*head, note=f"failed: {last}"[:160])
    return kind(**json.loads(done.stdout.strip().splitlines()[-1]))


def print_measurement(what: str, *args: object) -> None:
    """Print ``what`` (a function of this module) of ``args`` as one JSON line (the subprocess's)."""
    print(json.dumps(asdict(globals()[what](*args))))


def run_prefixes(
    chars: Sequence[int], budget: float, what: str = "measure_prefix", method: str = "newton"
) -> list[JointMeasurement]:
    """Measure growing prefixes until the next is predicted, or one is measured, to exceed ``budget``.

    The subprocess of a prefix is stopped at four times the budget (wall clock: the machine is
    shared), so a prefix far over budget ends the table without waiting for it.
    """
    rows: list[JointMeasurement] = []
    exponent = PREDICTION_EXPONENT[method if what == "measure_prefix" else what]
    args = (method,) if what == "measure_prefix" else ()
    for n_chars in sorted(chars):
        if rows and rows[-1].m:
            last = rows[-1]
            predicted = last.total_seconds * (n_chars / last.n_chars) ** exponent
            if predicted > budget:
                skipped = f"skipped: predicted {predicted:.0f} s > {budget:.0f} s"
                rows.append(JointMeasurement(n_chars, method=last.method, note=skipped))
                print(f"  joint problem ({rows[-1].method}), {n_chars} characters: {skipped}", flush=True)
                break
        row = measure_in_subprocess(what, 4 * budget, n_chars, *args)
        rows.append(row)
        print(f"  joint problem ({row.method}), {n_chars} characters: {format_row(row)}", flush=True)
        if not row.m or row.total_seconds > budget:
            break
    return rows


def run_scale(chars: Sequence[int], budget: float) -> list[ScaleMeasurement]:
    """Every step of :data:`SCALE_STEPS` on every prefix of ``chars``, each in its own process.

    A step is skipped on a prefix when its time on the previous one, scaled like ``m^3``, exceeds
    four times the budget (the wall-clock limit of a subprocess), or when it already stopped there.
    """
    rows: list[ScaleMeasurement] = []
    last: dict[str, ScaleMeasurement] = {}
    for n_chars in sorted(chars):
        m = None
        for step in SCALE_STEPS:
            prev = last.get(step)
            if prev is not None and not prev.m:
                rows.append(ScaleMeasurement(n_chars, step, note="skipped: stopped on a shorter prefix"))
                continue
            if prev is not None and m is not None:
                predicted = prev.seconds * (m / prev.m) ** 3
                if predicted > 4 * budget:
                    note = f"skipped: predicted {predicted:.0f} s"
                    rows.append(ScaleMeasurement(n_chars, step, m=m, note=note))
                    continue
            row = measure_in_subprocess("measure_scale_step", 4 * budget, n_chars, step)
            m = row.m or m
            rows.append(row)
            last[step] = row
            print(
                f"  joint problem at scale, {n_chars} characters, {step}: {format_scale_row(row)}", flush=True
            )
    return rows


def largest_within(rows: Sequence[JointMeasurement], budget: float) -> JointMeasurement | None:
    """The largest prefix whose joint problem was solved within ``budget`` CPU seconds."""
    ok = [r for r in rows if r.m and r.total_seconds <= budget]
    return max(ok, key=lambda r: r.n_chars) if ok else None


def format_row(row: JointMeasurement) -> str:
    """One prefix as a line of the printed progress."""
    if not row.m:
        return row.note
    if not row.decisions:
        return (
            f"W* alone, m = {row.m}, d = {row.d_joint}, {row.dim_f} equations ({row.note}): "
            f"{row.total_seconds:.1f} s, {row.peak_mib:.0f} MiB"
        )
    return (
        f"m = {row.m}, d = {row.d_joint}, dim F = {row.dim_f}: {row.total_seconds:.1f} s "
        f"(decisions {row.decide_seconds:.1f} s), {row.peak_mib:.0f} MiB"
    )


def format_scale_row(row: ScaleMeasurement) -> str:
    """One step of one large prefix as a line of the printed progress."""
    if not row.answer:
        return row.note
    return f"m = {row.m}, d = {row.d}: {row.answer}, {row.seconds:.1f} s, {row.peak_mib:.0f} MiB"


#: The columns of :func:`format_joint`.
JOINT_HEAD = (
    "characters",
    "decider",
    "m",
    "V",
    "d slices",
    "d joint",
    "V d",
    "dim F",
    "compatible",
    "decisions",
    "most Newton steps",
    "decisions s",
    "W* s",
    "W^mm s",
    "total CPU s",
    "peak MiB",
)


def _joint_row(r: JointMeasurement) -> list[str]:
    """One prefix's row of :func:`format_joint` (its note alone when it was not solved)."""
    if not r.m:
        return [str(r.n_chars), r.method, r.note, *[""] * (len(JOINT_HEAD) - 3)]
    sizes = [r.m, r.V, r.d_slices, r.d_joint, r.V * r.d_joint, r.dim_f, r.compatible, r.decisions]
    return [
        str(r.n_chars),
        r.method,
        *map(str, sizes),
        str(r.most_steps or ""),
        f"{r.decide_seconds:.1f}",
        f"{r.w_star_seconds:.2f}",
        f"{r.w_mm_seconds:.2f}",
        f"{r.total_seconds:.1f}",
        f"{r.peak_mib:.0f}",
    ]


def _largest_note(rows: Sequence[JointMeasurement], method: str, budget: float) -> str:
    """The sentence on the largest prefix one decider solved within ``budget`` (or that none was)."""
    best = largest_within([r for r in rows if r.method == method], budget)
    if best is None:
        return f"\nNo prefix was solved within the budget by the {method} decider.\n"
    share = best.decide_seconds / best.total_seconds if best.total_seconds else 0.0
    return (
        f"\nLargest prefix solved within {budget:.0f} s of CPU time with the {method} decider: "
        f"{best.n_chars} characters (m = {best.m} contexts, V = {best.V}, joint threshold d = "
        f"{best.d_joint}, dim F = {best.dim_f}) in {best.total_seconds:.1f} s, {100 * share:.0f}% of "
        f"it in the {best.decisions} separability decisions; peak memory {best.peak_mib:.0f} MiB.\n"
        f"W^mm certificate there: {best.certificate}.\n"
    )


def format_joint(rows: Sequence[JointMeasurement], budget: float) -> str:
    """The table of the benchmarks page, and the largest prefix solved within ``budget``."""
    tails = [_largest_note(rows, method, budget) for method in dict.fromkeys(r.method for r in rows)]
    return markdown_table(JOINT_HEAD, [_joint_row(r) for r in rows]) + "\n" + "".join(tails)


def format_scale(rows: Sequence[ScaleMeasurement]) -> str:
    """The step-by-step table of the large prefixes (:func:`run_scale`)."""
    head = ["characters", "m", "step", "d", "answer", "CPU s", "peak MiB"]
    return markdown_table(head, [_scale_row(r) for r in rows]) + "\n"


def _scale_row(r: ScaleMeasurement) -> list[str]:
    """One step of one prefix as a row of :func:`format_scale` (its note when it has no answer)."""
    timed = [f"{r.seconds:.1f}", f"{r.peak_mib:.0f}"] if r.answer else ["", ""]
    return [str(r.n_chars), str(r.m or ""), r.step, str(r.d or ""), r.answer or r.note, *timed]


def whole_corpus_m() -> int:
    """The number of distinct contexts of the whole corpus, read as chapter 6 reads it."""
    import ntpnb as ntp

    ids = ntp.encode_text(ntp.stdlib_corpus(None))
    return ntp.prefix_contexts(ntp.sliding_windows(ids.tolist(), WINDOW), len(ntp.ALPHABET)).m


def format_whole_corpus(
    rows: Sequence[ScaleMeasurement], joint_rows: Sequence[JointMeasurement], m_full: int
) -> str:
    """Why the whole corpus's joint problem is out of scope, from the costs measured above.

    Each question's largest measured prefix is scaled to the whole corpus's ``m`` like ``m^3``
    (each Newton step of a certified decision factorizes an ``m x m`` matrix); a certified
    threshold takes as many decisions as the sweeps above needed on their largest prefix.
    """
    measured = [r for r in rows if r.answer and r.m]
    if not measured:
        return ""
    lines = []
    for step in dict.fromkeys(r.step for r in measured):
        top = max((r for r in measured if r.step == step), key=lambda r: r.m)
        scaled = top.seconds * (m_full / top.m) ** 3
        lines.append(f"{step}: {top.seconds:.1f} s at m = {top.m}, about {scaled:.0e} s at m = {m_full}")
    solved = [r for r in joint_rows if r.m and r.decisions]
    decisions = max((r.decisions for r in solved), default=0)
    return (
        f"The whole corpus has m = {m_full} distinct contexts. Its joint problem is out of scope here: "
        "scaled like m^3 from the largest prefix each question was measured on, "
        + "; ".join(lines)
        + (
            f"; and a certified threshold takes one such decision per probe of d ({decisions} "
            "on the largest prefix the sweeps above solved), each of hundreds of Newton steps. "
            if decisions
            else ". "
        )
        + "Chapter 6 therefore solves the joint problem on a short prefix and checks Appendix C's "
        "identity, which needs no solve, on the whole corpus.\n"
    )


def format_w_star(rows: Sequence[JointMeasurement], budget: float) -> str:
    """The table of ``W*`` alone on large prefixes (:func:`measure_w_star`)."""
    head = [
        "characters",
        "m",
        "V",
        "d",
        "equations (4)",
        "V d",
        "compatible",
        "solver",
        "total CPU s",
        "peak MiB",
    ]
    best = largest_within(rows, budget)
    tail = (
        f"\nLargest prefix whose W* was computed within {budget:.0f} s: {best.n_chars} characters "
        f"(m = {best.m}, d = {best.d_joint}) in {best.total_seconds:.1f} s, {best.peak_mib:.0f} MiB.\n"
        if best is not None
        else "\nNo prefix within the budget.\n"
    )
    return markdown_table(head, [_w_star_row(r, len(head)) for r in rows]) + "\n" + tail


def _w_star_row(r: JointMeasurement, columns: int) -> list[str]:
    """One prefix as a row of :func:`format_w_star` (its note alone when it has no answer)."""
    if not r.m:
        return [str(r.n_chars), r.note, *[""] * (columns - 2)]
    sizes = [r.n_chars, r.m, r.V, r.d_joint, r.dim_f, r.V * r.d_joint, r.compatible]
    return [*map(str, sizes), r.note, f"{r.total_seconds:.1f}", f"{r.peak_mib:.0f}"]


#: The joint problem's name in the page's summary of fitted exponents.
JOINT_FIT = "Joint problem (App. C)"


def joint_table(rows: Sequence[JointMeasurement]) -> Table:
    """The threshold sweeps of the joint problem as a :class:`Table`: CPU time against ``m``, per decider."""
    deciders = list(dict.fromkeys(r.method for r in rows))
    table = Table(JOINT_FIT, deciders, size_label="(characters,)", count_label="contexts m")
    table.fit_label = "all sizes"
    for r in rows:
        if r.m:
            table.measurements.append(Measurement(r.method, (r.n_chars,), r.m, seconds=r.total_seconds))
    return table


def format_joint_exponents(rows: Sequence[JointMeasurement]) -> str:
    """The fitted exponent of the joint problem's CPU time in ``m``, per decider, as one line."""
    table = joint_table(rows)
    parts = [
        f"{r.method}: {format_exponent(r.exponent)} (sizes fitted: {r.sizes})"
        for r in exponent_rows(table, all_sizes)
    ]
    return f"Fitted exponent a (total CPU time ~ m^a, contexts m): {'; '.join(parts)}."
