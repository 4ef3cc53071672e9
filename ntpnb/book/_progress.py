"""What ``ntpnb book`` shows while a step runs in a process of its own: its phase, never silence.

A book is built by processes of their own (Sphinx, through jupyter-book; Chromium, through the
printer :mod:`._pdf`), which ``ntpnb book`` reads line by line (:func:`~._build.run_owned`). Their
own progress messages say where they are: Sphinx's status lines (``reading sources... [ 40%]
outputs/notebooks/03_gd_implicit_bias``, ``writing output... [ 80%] ...``), the printer's lines
(``the PDF: print 1 of at most 3``). :class:`StepProgress` prints a line when its step starts,
when the phase changes
(at most one every :data:`PHASE_SECONDS`), and, while none changes, the phase reached at least
every :data:`~ntpnb.settings.QUIET_SECONDS`;
a step of this process tells it where it is itself (the maps of an explore, drawn one by one:
:meth:`StepProgress.at`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from .._throttle import Throttle
from ..settings import QUIET_SECONDS

#: A status line of Sphinx: its phase, then ``...``, then (while it goes through the pages) the
#: share done, ``[ 40%]``; colours (ANSI codes) removed first.
_SPHINX_STATUS = re.compile(r"^(?P<phase>[a-z][a-z ,()-]*?)\.\.\.\s*(?:\[\s*(?P<share>\d+)%\])?")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: The shortest time (s) between two lines of a step: phases that follow each other faster (Sphinx
#: copies its assets in a blink) show as the one reached when the time is up.
PHASE_SECONDS = 2.0
#: The prefix of a line of the printer (:mod:`._pdf`) that says where it is.
PRINTER_PREFIX = "ntpnb-pdf: "


def sphinx_phase(line: str) -> tuple[str, str] | None:
    """Sphinx's phase in its status ``line``, and how far it is (``"40%"``, ``""``); None for another line.

    Examples
    --------
    >>> sphinx_phase("reading sources... [ 40%] outputs/notebooks/03_gd_implicit_bias")
    ('reading sources', '40%')
    >>> sphinx_phase("pickling environment... done")
    ('pickling environment', '')
    >>> sphinx_phase("WARNING: a problem") is None
    True
    """
    match = _SPHINX_STATUS.match(_ANSI.sub("", line).strip())
    if match is None:
        return None
    return match["phase"], f"{match['share']}%" if match["share"] else ""


def printer_phase(line: str) -> tuple[str, str] | None:
    """The printer's phase in its ``line`` (``ntpnb-pdf: print 1 of at most 3``); None for another line."""
    if not line.startswith(PRINTER_PREFIX):
        return None
    return line[len(PRINTER_PREFIX) :].strip(), ""


class StepProgress:
    """The lines ``ntpnb book`` prints while one step (``what``) runs: its phases, and never silence.

    ``phase_of`` reads the step's phase in one of its output lines (:func:`sphinx_phase`,
    :func:`printer_phase`); ``log`` prints a line.
    """

    def __init__(
        self,
        what: str,
        phase_of: Callable[[str], tuple[str, str] | None],
        log: Callable[[str], None] = print,
    ) -> None:
        self.what, self.phase_of, self.log = what, phase_of, log
        self.phase, self.share = "starting", ""
        self.started = time.monotonic()
        self.quiet = Throttle(QUIET_SECONDS, at_once=False)
        self.recent = Throttle(PHASE_SECONDS)  # since the last line
        self.unsaid = False  # a phase came since the last line
        self._say()  # the step says it started: the silence since the step before ends here

    def line(self, text: str) -> None:
        """One line of the step's output: a new phase is said at once, a share when the log was quiet."""
        found = self.phase_of(text)
        if found is None:
            self.tick()
        else:
            self.at(*found)

    def at(self, phase: str, share: str = "") -> None:
        """The step is at ``phase``, ``share`` of it done (``"3 of 12"``); a new phase is said at once."""
        self.unsaid = self.unsaid or phase != self.phase
        self.phase, self.share = phase, share
        self.tick()

    def tick(self) -> None:
        """Say where the step is: a new phase after :data:`PHASE_SECONDS`, any after ``QUIET_SECONDS``."""
        if (self.unsaid and self.recent.due()) or self.quiet.due():
            self._say()

    def _say(self) -> None:
        """``ntpnb: the HTML book: reading sources 40% (12 s)``."""
        share = f" {self.share}" if self.share else ""
        self.log(f"ntpnb: {self.what}: {self.phase}{share} ({time.monotonic() - self.started:.0f} s)")
        self.quiet.mark()
        self.recent.mark()
        self.unsaid = False
