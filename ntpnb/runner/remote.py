"""``python -m ntpnb.runner.remote RESULT``: run one notebook, its run read from standard input.

The process a Dask task starts (:func:`~ntpnb.runner.cluster.run_task`): a pickled
:class:`~ntpnb.runner.choice.NotebookRun` in, the pickled result into the file ``RESULT``. In a
session of its own, so that ending its group ends its kernel too.
"""

from __future__ import annotations

import os
import pickle
import sys
from pathlib import Path

from ..chapter.atomic import atomic_path
from .execute import run_or_fail


def main(argv: list[str]) -> int:
    """Run the notebook read from standard input; write its result to ``argv[0]``."""
    if hasattr(os, "setsid"):
        os.setsid()
    result = run_or_fail(pickle.loads(sys.stdin.buffer.read()))
    with atomic_path(Path(argv[0])) as tmp:
        tmp.write_bytes(pickle.dumps(result))
    return 0


if __name__ == "__main__":  # pragma: no cover - a process of its own
    sys.exit(main(sys.argv[1:]))
