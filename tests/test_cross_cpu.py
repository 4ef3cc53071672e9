"""The key results do not depend on the CPU's BLAS kernel or on the number of BLAS threads.

OpenBLAS picks its kernels by the CPU it runs on, and ``OPENBLAS_CORETYPE`` forces another
one: Haswell, Zen, SandyBridge and Prescott all run on any x86-64 CPU with AVX2. The worker
``tests/cross_cpu_worker.py`` computes the results a reader checks against the papers on a
fixed family of instances (see its docstring) in subprocesses, one per (kernel, threads), two
at a time, after two warm-ups have compiled numba's kernels once (the runs load them from
numba's on-disk cache). Here every run must succeed, report the kernel and thread count it was
asked for (threadpoolctl's ``architecture`` and ``num_threads``, so a kernel is never compared with
itself by accident), and agree with the run on the machine's own kernel with one thread:
discrete results (decisions, dimensions, support vectors, errors raised) exactly, numbers to
:data:`RTOL` relative (a path's arrays per radius, each radius having its own scale), and the
iterates of attention and linear training and the chapters' generated instances (``exact_``
keys) bit for bit: training amplifies rounding, so it multiplies without BLAS
(:mod:`ntpnb._reproducible_products`) and must not depend on the kernel at all, and neither may the data.

A kernel the CPU cannot run is skipped, with the missing instruction-set flags as the reason.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cross_cpu_worker import INSTANCE_NAMES, WARM_UPS
from threadpoolctl import threadpool_info

import ntpnb

from conftest import made_once

ROOT = Path(__file__).resolve().parents[1]
WORKER = Path(__file__).with_name("cross_cpu_worker.py")

#: Largest relative difference allowed between two runs.
RTOL = 1e-8

#: ``OPENBLAS_CORETYPE`` -> (the /proc/cpuinfo flags it needs, the names threadpoolctl may report
#: for it). Builds of OpenBLAS without a separate Zen kernel run (and report) Haswell's for Zen;
#: dynamic builds report the Prescott kernel as "Katmai". "pni" is the kernel's name for SSE3.
KERNELS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "Haswell": (frozenset({"avx2", "fma"}), frozenset({"haswell"})),
    "Zen": (frozenset({"avx2"}), frozenset({"zen", "haswell"})),
    "SandyBridge": (frozenset({"avx"}), frozenset({"sandybridge"})),
    "Prescott": (frozenset({"pni"}), frozenset({"prescott", "katmai"})),
}
DEFAULT = "default"  # no OPENBLAS_CORETYPE: the kernel OpenBLAS picks for this CPU

#: The runs: (kernel, BLAS threads). The first is the reference the others are compared with.
RUNS: list[tuple[str, int]] = [
    (DEFAULT, 1),
    (DEFAULT, 2),
    ("Haswell", 1),
    ("Haswell", 2),
    ("Zen", 1),
    ("SandyBridge", 1),
    ("Prescott", 1),
]


def run_id(run: tuple[str, int]) -> str:
    """``"Haswell-2t"``."""
    return f"{run[0]}-{run[1]}t"


def cpu_flags() -> frozenset[str] | None:
    """The instruction-set flags of the first CPU in /proc/cpuinfo (None where there is none)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("flags"):
            return frozenset(line.split(":", 1)[1].split())
    return None


def skip_reason(kernel: str) -> str | None:
    """Why ``kernel`` cannot run here, or None when it can."""
    if not any(lib.get("internal_api") == "openblas" for lib in threadpool_info()):
        return "numpy's BLAS is not OpenBLAS: OPENBLAS_CORETYPE has no effect"
    if kernel == DEFAULT:
        return None
    flags = cpu_flags()
    if flags is None:
        return f"{kernel}: no /proc/cpuinfo flags to tell whether this CPU can run it"
    missing = KERNELS[kernel][0] - flags
    if missing:
        return f"{kernel}: this CPU lacks {', '.join(sorted(missing))}"
    return None


def _environment() -> dict[str, str]:
    """This process's environment, with the package the tests import first on the worker's path.

    ``python tests/cross_cpu_worker.py`` does not have the working directory on its path, so
    without this it could import another copy of ntpnb (an editable install elsewhere) than
    the one under test, and load or write that copy's compiled kernels.
    """
    env = dict(os.environ)
    package_root = str(Path(ntpnb.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    return env


def _warm_up(paper: str) -> str | None:
    """Compile the kernels of ``paper`` once (or load them from numba's cache); an error's output."""
    cmd = [sys.executable, str(WORKER), "--warm-up", paper]
    proc = subprocess.run(cmd, cwd=ROOT, env=_environment(), capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return f"the {paper} warm-up: exit status {proc.returncode}\n{proc.stderr[-3000:]}"
    return None


def _run(run: tuple[str, int], out_dir: Path) -> dict[str, Any]:
    kernel, threads = run
    env = _environment()
    env.pop("OPENBLAS_CORETYPE", None)
    if kernel != DEFAULT:
        env["OPENBLAS_CORETYPE"] = kernel
    env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = str(threads)
    # Idle OpenBLAS threads sleep after 2^4 cycles instead of spinning for 2^28: on a loaded
    # machine the spinning made the 2-thread runs 5-10 times slower (numerics unchanged).
    env["OPENBLAS_THREAD_TIMEOUT"] = "4"
    out = out_dir / f"{run_id(run)}.json"
    cmd = [sys.executable, str(WORKER), str(out), "--threads", str(threads)]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return {"crashed": f"exit status {proc.returncode}\n{proc.stderr[-3000:]}"}
    return json.loads(out.read_text())


@pytest.fixture(scope="session")
def runs(tmp_path_factory) -> dict[tuple[str, int], dict[str, Any]]:
    """Every run this CPU can do, two subprocesses at a time (the results of the JSON files).

    First the two warm-ups, side by side, compile numba's kernels (the linear paper's, the
    attention paper's) into its on-disk cache, or find them there: the runs then load them. When
    the cache was cold, each of the first two runs compiled every kernel itself (about 20 s of
    CPU each). A warm-up that fails fails every run with its output: the runs would compile.
    The runs are made once per test session, even when several pytest-xdist workers ask.
    """
    todo = [run for run in RUNS if skip_reason(run[0]) is None]

    def make(out_dir: Path) -> None:
        with ThreadPoolExecutor(max_workers=2) as pool:
            errors = [e for e in pool.map(_warm_up, WARM_UPS) if e is not None]
            if errors:
                results = [{"crashed": "\n".join(errors)} for _ in todo]
            else:
                results = list(pool.map(lambda run: _run(run, out_dir), todo))
        for run, result in zip(todo, results, strict=True):
            if "crashed" in result:  # the worker wrote no result (or a partial one)
                (out_dir / f"{run_id(run)}.json").write_text(json.dumps(result))

    out_dir = made_once(tmp_path_factory, "cross_cpu", make)
    return {run: json.loads((out_dir / f"{run_id(run)}.json").read_text()) for run in todo}


def _require(runs: dict, run: tuple[str, int]) -> dict[str, Any]:
    reason = skip_reason(run[0])
    if reason is not None:
        pytest.skip(reason)
    result = runs[run]
    assert "crashed" not in result, f"the worker under {run_id(run)} crashed: {result.get('crashed')}"
    return result


@pytest.mark.parametrize("run", RUNS, ids=run_id)
def test_run_used_the_requested_kernel_and_threads(runs, run):
    """Each run reports (threadpoolctl) the kernel and the thread count it was asked for."""
    result = _require(runs, run)
    kernel, threads = run
    assert result["blas"], "threadpoolctl saw no BLAS library in the worker"
    assert any(lib["numpy"] for lib in result["blas"]), result["blas"]
    for lib in result["blas"]:
        # numpy's BLAS runs with the threads asked for; a library built with a lower cap (SCS's
        # bundled OpenBLAS 0.3.15 is single-threaded) reports its cap.
        if lib["numpy"]:
            assert lib["num_threads"] == threads, lib
        else:
            assert 1 <= lib["num_threads"] <= threads, lib
        if kernel != DEFAULT:
            assert lib["architecture"].lower() in KERNELS[kernel][1], (
                f"OPENBLAS_CORETYPE={kernel} ran the kernel {lib['architecture']!r} ({lib})"
            )


def _failures(result: dict[str, Any], instance: str) -> list[str]:
    return [
        f"{quantity}: {entry['error']}"
        for quantity, entry in result["results"][instance].items()
        if not entry["ok"]
    ]


@pytest.mark.parametrize("instance", INSTANCE_NAMES)
def test_every_run_computes_every_result(runs, instance):
    """No result fails (e.g. a path that cannot be certified) under any kernel or thread count."""
    problems = []
    for run in RUNS:
        if skip_reason(run[0]) is not None or "crashed" in runs[run]:
            continue  # reported by test_run_used_the_requested_kernel_and_threads
        problems += [f"{run_id(run)}: {msg}" for msg in _failures(runs[run], instance)]
    assert not problems, "\n".join(problems)


def _as_array(value: dict[str, Any]) -> np.ndarray:
    return np.array(value["data"], dtype=float).reshape(value["shape"])


def relative_difference(a: np.ndarray, b: np.ndarray, per_row: bool) -> float:
    """``max |a - b| / max |a|`` over the whole array, or per leading index (then the largest)."""
    if a.ndim == 0 or not per_row:
        a, b = a.reshape(1, -1), b.reshape(1, -1)
    else:
        a, b = a.reshape(a.shape[0], -1), b.reshape(b.shape[0], -1)
    diff = np.abs(a - b).max(axis=1)
    scale = np.maximum(np.abs(a).max(axis=1), np.abs(b).max(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.where(diff == 0, 0.0, diff / scale)
    return float(rel.max())


def differences(ref: dict[str, Any], other: dict[str, Any]) -> list[str]:
    """What differs between the values of one quantity in two runs (empty when they agree)."""
    out = []
    for key, a in ref.items():
        b = other.get(key)
        if isinstance(a, dict):  # an array
            if not isinstance(b, dict) or a["shape"] != b["shape"]:
                out.append(f"{key}: shape {a['shape']} against {None if b is None else b.get('shape')}")
                continue
            rel = relative_difference(_as_array(a), _as_array(b), per_row=key.startswith("path_"))
            if not rel <= (0.0 if key.startswith("exact_") else RTOL):
                out.append(f"{key}: relative difference {rel:.2e}")
        elif isinstance(a, float) and isinstance(b, float):
            rel = relative_difference(np.array(a), np.array(b), per_row=False)
            if not rel <= RTOL:
                out.append(f"{key}: {a!r} against {b!r} (relative difference {rel:.2e})")
        elif a != b:  # decisions, dimensions, support vectors, errors raised: exactly equal
            out.append(f"{key}: {a!r} against {b!r}")
    return out


@pytest.mark.parametrize("instance", INSTANCE_NAMES)
def test_results_agree_across_kernels_and_threads(runs, instance):
    """Every run agrees with the reference run: discrete results exactly, numbers to RTOL."""
    reference = RUNS[0]
    ref = _require(runs, reference)["results"][instance]
    problems = []
    for run in RUNS[1:]:
        if skip_reason(run[0]) is not None or "crashed" in runs[run]:
            continue
        other = runs[run]["results"][instance]
        for quantity, entry in ref.items():
            mine = other.get(quantity, {"ok": False, "error": "missing"})
            if entry["ok"] != mine["ok"]:
                state = lambda e: "succeeded" if e["ok"] else f"failed ({e['error'][:120]})"
                problems.append(
                    f"{run_id(run)} {quantity}: {state(mine)}; under {run_id(reference)} {state(entry)}"
                )
            elif entry["ok"]:
                problems += [
                    f"{run_id(run)} {quantity} {d}" for d in differences(entry["values"], mine["values"])
                ]
    assert not problems, "\n".join(problems)


def test_the_comparison_sees_a_difference_beyond_rtol_and_any_discrete_change():
    """The comparison itself: 1e-9 relative passes, 1e-7 does not; decisions must match exactly."""
    W = np.arange(1.0, 7.0).reshape(2, 3)
    as_value = lambda a: {"shape": list(a.shape), "data": a.ravel().tolist()}
    ref = {"W_mm": as_value(W), "separable": True, "support_vectors": [0, 2], "loss": 0.5}
    assert differences(ref, dict(ref, W_mm=as_value(W * (1 + 1e-9)))) == []
    assert differences(ref, dict(ref, W_mm=as_value(W * (1 + 1e-7))))[0].startswith("W_mm: relative")
    assert differences(ref, dict(ref, separable=False)) == ["separable: True against False"]
    assert differences(ref, dict(ref, support_vectors=[0, 1, 2]))
    assert differences(ref, dict(ref, loss=0.5 * (1 + 1e-7)))
    assert differences(ref, dict(ref, W_mm=as_value(W[:1])))  # another shape
    exact = {"exact_W": as_value(W)}
    assert differences(exact, {"exact_W": as_value(W)}) == []
    assert differences(exact, {"exact_W": as_value(np.nextafter(W, 10.0))})  # one ulp


def test_a_path_is_compared_radius_by_radius():
    """A small radius' answer may not hide behind the scale of a large one."""
    path = np.array([[1e-3, 2e-3], [1e3, 2e3]])
    shifted = path.copy()
    shifted[0, 0] *= 1 + 1e-6  # far below 1e-8 of the largest entry, far above at its own radius
    assert relative_difference(path, shifted, per_row=False) <= RTOL
    assert relative_difference(path, shifted, per_row=True) == pytest.approx(1e-6 / 2, rel=1e-6)
