"""``python -m benchmarks``: see the package docstring (benchmarks/__init__.py)."""

from __future__ import annotations

import os

# One BLAS thread for every method, set before numpy loads: the machines this runs on are shared,
# and a multi-threaded BLAS on busy cores slows every method down by large, erratic factors.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from .run import main  # noqa: E402

raise SystemExit(main())
