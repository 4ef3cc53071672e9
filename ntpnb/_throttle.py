"""The one throttle of progress reports: something happens at most once every so many seconds.

Kept by a training loop's reports (:class:`ntpnb._optim.Recorder`), a chapter's progress line
(:mod:`ntpnb.chapter._progress`) and the runner's status block (:mod:`ntpnb.runner._display`).
"""

from __future__ import annotations

import math
import time


class Throttle:
    """Whether ``seconds`` passed since something last happened (by :func:`time.monotonic`).

    Parameters
    ----------
    seconds
        The shortest time between two occurrences.
    at_once
        Whether it is :meth:`due` at once (else ``seconds`` after the throttle's creation).
    """

    def __init__(self, seconds: float, at_once: bool = True) -> None:
        self.seconds = seconds
        self._last = -math.inf if at_once else time.monotonic()

    def due(self) -> bool:
        """Whether ``seconds`` passed since the last :meth:`mark` (or since the start)."""
        return time.monotonic() - self._last >= self.seconds

    def mark(self) -> None:
        """It happens now."""
        self._last = time.monotonic()
