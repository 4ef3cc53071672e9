"""What one run of ``python -m benchmarks`` measured: :class:`Results`, and its JSON record.

The page (:mod:`benchmarks.page`), the terminal (:mod:`benchmarks.run`) and ``benchmarks.json``
(:func:`json_record`) all read one :class:`Results`.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass

from .attention import AttentionMeasurement
from .joint import JointMeasurement, ScaleMeasurement, joint_table
from .machine import Machine
from .notebooks import NotebookTimes
from .scaling import ExponentRow, Table, all_sizes, exponent_rows, scaling_exponent
from .timing import Benchmark


@dataclass(frozen=True)
class Results:
    """What one run of the benchmarks measured, and where and when."""

    runs: list[tuple[Benchmark, Table]]
    att_rows: list[AttentionMeasurement]
    joint_rows: list[JointMeasurement]
    w_star_rows: list[JointMeasurement]
    scale_rows: list[ScaleMeasurement]
    train_runs: list[tuple[Benchmark, Table]]
    nb_times: NotebookTimes | None
    any_seed: tuple | None
    total: float
    machine: Machine

    def fitted_exponents(self) -> list[ExponentRow]:
        """Every fitted exponent of the run, in the order of the page's tables."""
        timed = [*self.runs, *self.train_runs]
        rows = [r for bench, table in timed for r in exponent_rows(table, bench.fit_kind)]
        if self.joint_rows:
            rows += exponent_rows(joint_table(self.joint_rows), all_sizes)
        return rows

    def measured(self) -> list[str]:
        """The names of what this run measured, as :data:`benchmarks.prose.MEASURABLE` names them."""
        names = [t.problem for _, t in self.runs] + (["attention training"] if self.att_rows else [])
        names += ["training loops"] if self.train_runs else []
        names += ["joint problem"] if self.joint_rows else []
        return names + (["chapter times"] if self.nb_times else [])


def json_record(res: Results) -> dict:
    """The JSON record of ``res`` (``benchmarks.json``)."""
    machine = res.machine
    return {
        "cores": os.cpu_count(),
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
        "platform": machine.platform,
        "date": machine.date,
        "load_average": {"start": machine.load_start, "end": machine.load_end},
        "total_seconds": res.total,
        "exponents": [asdict(r) for r in res.fitted_exponents()],
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
