"""Worker of ``tests/test_cross_cpu.py``: the key results of both papers on a fixed family of instances.

Run as ``python tests/cross_cpu_worker.py OUT.json --threads N`` in a process whose environment
chooses the BLAS kernel (``OPENBLAS_CORETYPE``). It computes, for every instance of
:func:`instances`, the results a reader checks against the papers (separability and
compatibility decisions, ``dim F``, ``W*``, ``W^mm`` with its support vectors, the
regularization path, the Graph-SVM, ``W^cyc``, attention training, chapter 8's orbits near
``2/L_inf`` and its trend test, the max-norm NTP-SVM) and writes them with the BLAS
libraries that threadpoolctl saw (kernel and threads) to ``OUT.json``. Every quantity is computed on its own:
an error (say, a path that fails to certify) is recorded as ``"Type: message"`` and the other
quantities are still computed. The test compares the files of several kernels and thread counts.

Floats are written with ``repr`` precision (JSON round-trips doubles exactly).

``python tests/cross_cpu_worker.py --warm-up linear`` (or ``attention``) only compiles the
compiled kernels one paper's quantities run, or loads them from numba's on-disk cache, and
computes nothing: the test runs both once before the runs, so that no run compiles.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

#: The BLAS libraries numpy loads itself, before scipy and cvxpy's solvers bring their own.
NUMPY_BLAS = frozenset(lib["filepath"] for lib in threadpool_info() if lib.get("user_api") == "blas")

import ntpnb as ntp  # noqa: E402  (after NUMPY_BLAS)
from ntpnb import attention as att  # noqa: E402
from ntpnb import settings  # noqa: E402
from ntpnb._qp import active_mask  # noqa: E402
from ntpnb.errors import NotSeparableError  # noqa: E402
from ntpnb.linear._descent import SAMPLING_KINDS, run_decoder  # noqa: E402
from ntpnb.linear._recipes import TOY2D_SUPPORTS, dirichlet_on_supports  # noqa: E402
from ntpnb.statistics import trend_pvalue  # noqa: E402

from helpers import gradient_fn  # noqa: E402  (tests/ is this script's folder)

#: Perturbed copies of the triangle instance of chapter 2 (Paper A's Fig. 1).
N_TRIANGLES = 40
#: Radii of the path on the perturbed triangles (from B = 0.5, where a rank cut-off at machine epsilon
#: failed to certify them on some kernels).
TRIANGLE_RADII = (0.5, 2.0, 8.0, 32.0, 128.0)
#: The chapter's grid on its 2D instance (the quick profile: 20 radii in [0.1, 2350]).
CHAPTER_RADII = tuple(np.geomspace(0.1, 2350.0, 20))
#: Radii on the larger random instances.
RANDOM_RADII = (0.1, 1.0, 10.0, 100.0)
#: Larger random instances ``(m, d, V, S, seed)`` of :func:`ntpnb.random_instance`: three separable
#: (``d > m``), two not (where the decision itself and the errors are compared).
RANDOM_SIZES = (
    (20, 30, 8, 3, 1),
    (12, 40, 15, 4, 3),
    (40, 60, 10, 3, 5),
    (30, 12, 10, 2, 2),
    (60, 20, 6, 1, 4),
)
#: Attention instances: (kind, seed); sizes as in chapter 7 (acyclic: K = d = 8, n = 4, T = 6;
#: general: K = 6, d = 8, n = 6, T = 4).
ATTENTION = tuple(("acyclic", s) for s in range(3)) + tuple(("general", s) for s in range(5))

#: Normalized-GD steps of the attention trainings (chapter 7's local runs take thousands; a
#: difference in the last bit shows in the iterates within a few hundred).
TRAINING_STEPS = 300


#: The normalized step's offsets of the attention trainings (key: suffix of the result's name):
#: exact normalization and the authors' ``g / (||g|| + eps)``.
STEP_RULES: dict[str, float] = {"": 0.0, "_authors_eps": ntp.optim.AUTHORS_NGD_EPS}


def training_heads(E: np.ndarray) -> list[tuple[str, np.ndarray, str]]:
    """(loss, head C, head assumption) of the trainings: the log-loss with ``C E^T = I``, the
    authors' squared loss, the text's squared loss and the cross-entropy with ``C = E``."""
    return [
        ("log", att.identity_head(E), "identity"),
        ("squared_softmax", att.tied_head(E), "argmax"),
        ("squared", att.tied_head(E), "argmax"),
        ("ce", att.tied_head(E), "argmax"),
    ]


Quantity = Callable[[], dict[str, Any]]


def perturbed_triangle(seed: int) -> ntp.NTPData:
    """A copy of chapter 2's triangle with perturbed embeddings and probabilities.

    The supports of Paper A's Fig. 1; ``h_A, h_B, h_C`` at the angles 90, 210, 330 degrees
    ± 20 (uniform) with norms uniform in [0.5, 2]; each ``p_j`` uniform on its support's simplex.
    """
    rng = np.random.default_rng(1000 + seed)
    mask = np.zeros((3, 5), dtype=bool)
    for j, support in enumerate(TOY2D_SUPPORTS):
        mask[j, [z - 1 for z in support]] = True
    angles = np.deg2rad(np.array([90.0, 210.0, 330.0]) + rng.uniform(-20.0, 20.0, size=3))
    norms = rng.uniform(0.5, 2.0, size=3)
    H = norms[:, None] * np.column_stack([np.cos(angles), np.sin(angles)])
    return ntp.NTPData(H=H, pi=np.full(3, 1 / 3), P=dirichlet_on_supports(mask, rng))


def _raises(error: type[Exception], func: Callable[..., Any], *args: Any) -> dict[str, Any]:
    """``{"raises": name}`` when ``func(*args)`` raises ``error`` (as it must); else AssertionError."""
    try:
        func(*args)
    except error:
        return {"raises": error.__name__}
    raise AssertionError(
        f"{func.__name__} did not raise {error.__name__} on data it decided were not separable"
    )


def linear_quantities(data: ntp.NTPData, radii: tuple[float, ...]) -> dict[str, Quantity]:
    """Paper A's decisions and solutions on ``data``, each a thunk returning named results."""

    def decisions() -> dict[str, Any]:
        return {
            "compatible": bool(ntp.is_compatible(data)),
            "separable": bool(ntp.is_separable(data)),
            "dim_F": int(ntp.f_basis(data).shape[0]),
        }

    def w_star() -> dict[str, Any]:
        return {"W_star": ntp.finite_solution(data)}

    def w_mm() -> dict[str, Any]:
        if not ntp.is_separable(data):
            return _raises(NotSeparableError, ntp.solve_ntp_svm, data)
        sol = ntp.solve_ntp_svm(data)
        return {"W_mm": sol.W, "support_vectors": np.flatnonzero(active_mask(sol.duals)).tolist()}

    def path() -> dict[str, Any]:
        if not ntp.is_separable(data):
            return _raises(NotSeparableError, ntp.regularization_path, data, radii)
        p = ntp.regularization_path(data, radii)
        return {"path_W": p.W, "path_lam": p.lam, "path_kl": p.kl, "path_f_distance": p.f_distance}

    return {"decisions": decisions, "W_star": w_star, "W_mm": w_mm, "path": path}


def attention_quantities(kind: str, seed: int) -> dict[str, Quantity]:
    """Paper B's Graph-SVM (and ``W^cyc`` on general data) on a seeded instance of chapter 7's sizes."""
    rng = np.random.default_rng(2000 + seed)
    if kind == "acyclic":
        E = att.random_embeddings(8, 8, rng)
        X, y, _ = att.acyclic_dataset(8, 4, 6, rng)
        data = att.as_token_data(X, y, 8)
    else:
        E = att.random_embeddings(6, 8, rng)
        data = att.as_token_data(*att.general_dataset(6, 6, 4, rng), 6)
    graphs = att.token_priority_graphs(data)

    def graph_svm() -> dict[str, Any]:
        sol = att.solve_graph_svm(E, graphs)
        return {"W_mm": sol.W, "support_vectors": np.flatnonzero(active_mask(sol.duals)).tolist()}

    def w_cyc() -> dict[str, Any]:
        cyc = att.solve_cyclic_correction(E, data, graphs)
        return {"W_cyc": cyc.W, "dim_S_cyc": cyc.dim, "cyclic_loss": cyc.loss}

    def training() -> dict[str, Any]:
        # normalized GD from W(0) ~ U(+-1/sqrt d), as the chapter's local runs: it amplifies
        # rounding, so the iterates must be the same floats under every kernel ("exact_"); it
        # runs on the compiled step (ntpnb.attention._engine), with exact normalization and with
        # the authors' step rule
        W0 = np.random.default_rng([seed, 1]).uniform(-0.35, 0.35, (1, 8, 8))
        out = {}
        for loss, C, head in training_heads(E):
            prob = att.make_problem(E, C, data, loss, head)
            for rule, eps in STEP_RULES.items():
                trace = att.train(prob, ntp._optim.normalized_gd(0.1, eps), TRAINING_STEPS, W0=W0)
                out[f"exact_W_{loss}{rule}"] = trace.W
        return out

    out: dict[str, Quantity] = {"graph_svm": graph_svm, "training": training}
    if kind == "general":
        out["W_cyc"] = w_cyc
    return out


def linear_training() -> dict[str, Quantity]:
    """GD, normalized GD, Adam and SGD on random instances: iterates bit for bit.

    The compiled loops of ``ntp.train`` in both forms: the logit form (GD and normalized GD with
    ``m <= d``), the weight form (Adam, ``m > d``, stochastic gradients over sequences and over
    contexts); and the plain numpy loop (``optim.run`` with ``gradient_fn``) that other code
    still calls.
    """
    data = ntp.random_instance(20, 30, 8, 3, np.random.default_rng(11))  # m <= d: separable
    wide = ntp.random_instance(30, 12, 10, 2, np.random.default_rng(12))  # m > d: weight form
    W0 = np.random.default_rng([11, 1]).standard_normal((data.V, data.d)) / np.sqrt(data.d)
    W0_wide = np.random.default_rng([12, 1]).standard_normal((2, wide.V, wide.d)) / np.sqrt(wide.d)
    methods = {
        "gd": ntp._optim.gd(0.5),
        "ngd": ntp._optim.normalized_gd(0.1),
        "adam": ntp._optim.adam(0.01, (0.9, 0.999)),
    }

    def run() -> dict[str, Any]:
        lim = ntp.limits(data)  # W*, W^mm, F and H, which every run on the data records against
        out = {
            f"exact_W_{name}": ntp.train(data, opt, TRAINING_STEPS, lim=lim, W0=W0, n_records=2).W
            for name, opt in methods.items()
        }
        for name, opt in methods.items():
            out[f"exact_W_{name}_weight_form"] = run_decoder(wide, opt, TRAINING_STEPS, W0_wide).W
        for sampling in SAMPLING_KINDS:
            trace = ntp.train(
                data,
                ntp._optim.sgd(0.5),
                TRAINING_STEPS,
                lim=lim,
                W0=W0,
                seed=3,
                batch_size=4,
                sampling=sampling,
            )
            out[f"exact_W_sgd_{sampling}"] = trace.W
        grad = gradient_fn(data)
        out["exact_W_ngd_numpy"] = ntp._optim.run(grad, W0, methods["ngd"], TRAINING_STEPS).W
        return out

    return {"training": run}


def chapter_instances() -> dict[str, Quantity]:
    """The chapters' generated instances, bit for bit: the probabilities come from a root
    finding on the entropy that stops at a ``beta`` set by the entropy's last bit (with a BLAS
    dot there, the 2D instance's P differed by 1e-15 between kernels, and cvxpy's answer on it by
    a factor 1.6 in chapter 2's printed distance)."""

    def data() -> dict[str, Any]:
        toy, synth = ntp.toy2d_instance(0), ntp.synthetic_instance(seed=0)
        return {
            "exact_toy_P": toy.P,
            "exact_toy_H": toy.H,
            "exact_synth_P": synth.P,
            "exact_synth_H": synth.H,
        }

    return {"data": data}


def beyond_quantities() -> dict[str, Quantity]:
    """Chapter 8's orbit decisions near ``2/L_inf`` and chapter 4's max-norm NTP-SVM, on a small
    synthetic instance, and chapter 8's trend test. An amplitude is compared only on an orbit: a
    converging run's is the curvature of its drift, near 1e-11 of ``||W*||``, where the rounding
    of the projection onto F is already a part in 1e5."""
    data = ntp.synthetic_instance(n=400, m=6, d=8, V=4, S=2, seed=3)
    lim, W0 = ntp.limits(data), ntp.lecun_decoder(data, ntp.own_stream(3, 1))

    def orbits() -> dict[str, Any]:
        critical = 2 / ntp.smoothness(data, W0).limit
        runs = [ntp.step_orbit(data, lim, W0, f * critical, 300, 20) for f in (0.9, 1.05, 1.5, 3.0)]
        return {
            "orbit_periods": [o.period for o in runs],
            "orbit_amplitudes": np.array([o.amplitude for o in runs if o.period > 1]),  # to RTOL
        }

    def max_norm() -> dict[str, Any]:
        sol = ntp.max_norm_svm(data)
        return {"max_norm_value": sol.value, "W_inf": sol.W}

    def trend() -> dict[str, Any]:
        return {"trend_pvalue": trend_pvalue([1, 3, 5], [50, 50, 50], np.log([4, 16, 32]))}

    return {"orbits": orbits, "max_norm": max_norm, "trend": trend}


def instances() -> Iterator[tuple[str, Callable[[], dict[str, Quantity]]]]:
    """``(name, make)`` for every instance; ``make()`` builds the instance and its quantities."""
    yield "triangle-ch2", lambda: linear_quantities(ntp.toy2d_instance(0), CHAPTER_RADII)
    for i in range(N_TRIANGLES):
        yield (
            f"perturbed-triangle-{i:02d}",
            lambda i=i: linear_quantities(perturbed_triangle(i), TRIANGLE_RADII),
        )
    for m, d, V, S, seed in RANDOM_SIZES:
        make = lambda m=m, d=d, V=V, S=S, seed=seed: linear_quantities(
            ntp.random_instance(m, d, V, S, np.random.default_rng(seed)), RANDOM_RADII
        )
        yield f"random-m{m}-d{d}-V{V}-S{S}", make
    yield "linear-training", linear_training
    yield "chapter-instances", chapter_instances
    yield "beyond", beyond_quantities
    for kind, seed in ATTENTION:
        yield f"attention-{kind}-{seed}", lambda kind=kind, seed=seed: attention_quantities(kind, seed)


INSTANCE_NAMES: tuple[str, ...] = tuple(name for name, _ in instances())


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return {"shape": list(value.shape), "data": value.ravel().tolist()}
    if isinstance(value, np.generic):
        return value.item()
    return value


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def run_all() -> dict[str, dict[str, Any]]:
    """Every quantity of every instance: ``{instance: {quantity: {"ok", "values" | "error"}}}``."""
    results: dict[str, dict[str, Any]] = {}
    for name, make in instances():
        try:
            quantities = make()
        except Exception as exc:  # the instance itself could not be built
            results[name] = {"instance": {"ok": False, "error": _error(exc)}}
            continue
        results[name] = {}
        for qname, compute in quantities.items():
            try:
                values = {k: _jsonable(v) for k, v in compute().items()}
                results[name][qname] = {"ok": True, "values": values}
            except Exception as exc:
                results[name][qname] = {
                    "ok": False,
                    "error": _error(exc),
                    "trace": traceback.format_exc(limit=3),
                }
    return results


#: What ``--warm-up`` compiles: each paper's kernels, which numba then keeps on disk.
WARM_UPS = ("linear", "attention")


def warm_up(paper: str) -> None:
    """Compile (or load from numba's cache) every compiled kernel the quantities of ``paper`` run.

    Linear: the training loops (:func:`ntpnb.linear._descent.compile_kernels`) and the Gram
    blocks of the regularization path, which a path in the Gram form (``H`` of full row rank,
    here the first random instance) factorizes with. Attention: the compiled step of every loss
    (:func:`ntpnb.attention._batched_training.compile_kernels`).
    """
    if paper == "linear":
        from ntpnb.linear._descent import compile_kernels

        compile_kernels()
        m, d, V, S, seed = RANDOM_SIZES[0]
        ntp.regularization_path(
            ntp.random_instance(m, d, V, S, np.random.default_rng(seed)), RANDOM_RADII[:1]
        )
    else:
        from ntpnb.attention._batched_training import compile_kernels

        compile_kernels()


def main(argv: list[str] | None = None) -> int:
    """Compute everything with ``--threads`` BLAS threads and write the JSON file (or ``--warm-up``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, nargs="?")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--warm-up", choices=WARM_UPS)
    args = parser.parse_args(argv)
    if args.warm_up:
        warm_up(args.warm_up)
        return 0
    if args.out is None:
        parser.error("the output file is required (unless --warm-up)")
    # ntpnb limits its own BLAS calls to settings.BLAS_THREADS; the run asks for the same count
    # everywhere, so that "2 threads" really runs every BLAS call of the package with two.
    settings.BLAS_THREADS = args.threads
    with threadpool_limits(limits=args.threads, user_api="blas"):
        blas = [
            {
                **{k: lib.get(k) for k in ("internal_api", "version", "architecture", "num_threads")},
                "file": Path(lib["filepath"]).name,
                "numpy": lib["filepath"] in NUMPY_BLAS,
            }
            for lib in threadpool_info()
            if lib.get("user_api") == "blas"
        ]
        results = run_all()
    payload = {
        "coretype": os.environ.get("OPENBLAS_CORETYPE"),
        "threads": args.threads,
        "blas": blas,
        "results": results,
    }
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload))
    os.replace(tmp, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
