"""The progress of a chapter's long loops (trials, iterations), shown where the reader looks.

A loop that takes more than a moment reports ``(done, total)`` to a :class:`Progress` (the
package's long computations take such a callable as their ``progress`` argument)::

    with progress("long runs") as tick:
        runs = ntp.train(..., progress=tick)

In Jupyter it shows one line under the cell, updated in place; under ``ntpnb reproduce``
(:data:`PROGRESS_FILE_VAR` set) the state goes to that file, shown by the runner's display
(:func:`read_progress`); elsewhere (or with :data:`QUIET_VAR` ``off``) nothing. Nothing shown
depends on the loop's results, so the executed notebooks do not change.
"""

from __future__ import annotations

import json
import os
import time
from contextlib import AbstractContextManager, suppress
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .. import settings
from .._throttle import Throttle
from ..records._files import atomic_write_text

#: The file ``ntpnb reproduce`` asks a notebook's kernel to write its progress to.
PROGRESS_FILE_VAR = "NTPNB_PROGRESS_FILE"
#: ``off`` in this variable shows nothing (set by the test suite for its notebook kernels).
QUIET_VAR = "NTPNB_PROGRESS"


@dataclass(frozen=True)
class ProgressState:
    """What a loop reported last: its label, how far it is, and for how long it has run."""

    label: str
    done: int
    total: int
    seconds: float

    @property
    def _percent(self) -> str:
        return f"{100 * min(self.done, self.total) // self.total}%"

    def describe(self) -> str:
        """``long runs 41%``: the short form the runner's status line shows."""
        return f"{self.label} {self._percent if self.total > 0 else f'{self.done:,}'}"

    def line(self) -> str:
        """``long runs: 41% (410,000 of 1,000,000), 9 s``: the form shown in Jupyter."""
        done = f"{self._percent} ({self.done:,} of {self.total:,})" if self.total > 0 else f"{self.done:,}"
        return f"{self.label}: {done}, {self.seconds:.0f} s"


def read_progress(path: str | os.PathLike[str]) -> ProgressState | None:
    """The state a kernel last wrote to ``path``; None if there is none (or it is unreadable)."""
    try:
        return ProgressState(**json.loads(Path(path).read_text()))
    except (OSError, ValueError, TypeError):
        return None


def _in_jupyter_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and hasattr(shell, "kernel")


class Progress(AbstractContextManager):
    """A ``(done, total)`` hook that shows the progress of a loop labelled ``label`` (see the module)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.total = 0
        self.done = 0
        self._start = time.monotonic()
        self._throttle = Throttle(settings.SHOW_SECONDS)
        self._file = os.environ.get(PROGRESS_FILE_VAR) or None
        quiet = os.environ.get(QUIET_VAR, "").lower() == "off"
        self._handle: Any = None
        self._jupyter = self._file is None and not quiet and _in_jupyter_kernel()

    def __call__(self, done: int, total: int | None = None) -> None:
        """Report that ``done`` of ``total`` steps are done (shown at most every half second)."""
        self.done = int(done)
        if total is not None:
            self.total = int(total)
        if self._throttle.due():
            self._show()

    def _show(self) -> None:
        self._throttle.mark()
        state = ProgressState(self.label, self.done, self.total, time.monotonic() - self._start)
        if self._file is not None:
            with suppress(OSError):  # progress is a courtesy: a full disk must not stop the chapter
                atomic_write_text(self._file, json.dumps(asdict(state)))
        elif self._jupyter:
            from IPython.display import display

            text = {"text/plain": state.line()}
            if self._handle is None:
                self._handle = display(text, raw=True, display_id=True)
            else:
                self._handle.update(text, raw=True)

    def __exit__(self, *exc: object) -> None:
        """The loop is over: show its last state (in Jupyter) or clear it (for the runner)."""
        if self._file is not None:
            with suppress(OSError):
                os.unlink(self._file)
        elif self._jupyter:
            self._show()


#: A :class:`Progress` for a loop labelled ``label`` (use it in a ``with`` statement).
progress = Progress
