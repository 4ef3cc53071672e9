"""What ``ntpnb reproduce`` shows while it runs: which notebooks run, for how long, at which cell.

On a terminal, a status block at the bottom, redrawn about twice a second; finished notebooks'
lines above it. Without one (a file, a pipe): a line when a notebook starts, one when it ends,
and, when no line came for :data:`~ntpnb.settings.QUIET_SECONDS`, one of what runs and the time
left, so that a log is never silent for long.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .. import settings
from .._throttle import Throttle
from ..chapter._progress import read_progress

#: ANSI: the cursor to the start of the line ``n`` lines up, then clear to the end of the screen.
_UP_AND_CLEAR = "\x1b[{n}F\x1b[J"


@dataclass
class Running:
    """A running notebook: its name, when it started (``time.monotonic``), its code cell."""

    name: str
    started: float
    cell: int = 0  # the code cell executing, counted from 1; 0 before the first
    cells: int = 0  # code cells in the notebook; 0 while unknown
    progress_file: Path | None = None  # where the kernel writes a long loop's progress
    loop: str = ""  # that loop's progress, e.g. "long runs 41%"; "" when none runs


class Display:
    """The progress of one run, on a terminal (standard output, where ``log`` prints) or as lines for a log.

    ``log`` takes the lines that stay (finished notebooks, and without a terminal the start lines),
    ``width`` is the width of the notebook names, ``footer`` gives the block's last line (the run's
    time left; ``""`` for none).
    """

    def __init__(self, log: Callable[[str], None], width: int, footer: Callable[[], str]) -> None:
        self._print = log
        self.footer = footer
        self.width = width
        self.stream = sys.stdout
        self.live = self.stream.isatty()
        self.running: dict[str, Running] = {}
        self._shown = 0  # lines of the status block on the screen
        self.throttle = Throttle(settings.SHOW_SECONDS)  # between two redraws of the block
        self.quiet = Throttle(settings.QUIET_SECONDS, at_once=False)  # since the last line, in a log

    def log(self, line: str) -> None:
        """Print ``line``, which stays (above the block, on a terminal)."""
        self._print(line)
        self.quiet.mark()

    def started(self, name: str, progress_file: Path | None = None) -> None:
        """``name`` started; its kernel reports its long loops' progress to ``progress_file``."""
        self.running[name] = Running(name, time.monotonic(), progress_file=progress_file)
        if self.live:
            self._redraw()
        else:
            self.log(f"  {name:<{self.width}}  started")

    def cell(self, name: str, cell: int, cells: int) -> None:
        """``name`` started its code cell ``cell`` of ``cells``."""
        if name in self.running:
            self.running[name].cell, self.running[name].cells = cell, cells
            self.tick()

    def finished(self, name: str, line: str) -> None:
        """``name`` ended (or was found cached); ``line`` says how."""
        self.running.pop(name, None)
        self.close()
        self.log(line)
        if self.live:
            self._redraw()

    def tick(self) -> None:
        """Redraw the block if it is older than :data:`ntpnb.settings.SHOW_SECONDS` (on a terminal).

        Without a terminal, a line of what runs and the time left once the log has been quiet for
        :data:`ntpnb.settings.QUIET_SECONDS`.
        """
        if self.live and self.throttle.due():
            self._read_loops()
            self._redraw()
        elif not self.live and self.running and self.quiet.due():
            self._read_loops()
            self.log(self._quiet_line())

    def _read_loops(self) -> None:
        """Read each running notebook's long loop's progress, from the file its kernel writes."""
        for r in self.running.values():
            state = read_progress(r.progress_file) if r.progress_file is not None else None
            r.loop = state.describe() if state is not None else ""

    def _quiet_line(self) -> str:
        """``  running: 03_gd cell 12/31 45 s (long runs 41%), 04_gd starting 3 s; about 4 min left``."""
        now = time.monotonic()
        shown = []
        for r in self.running.values():
            where = f"cell {r.cell}/{r.cells}" if r.cells else "starting"
            loop = f" ({r.loop})" if r.loop else ""
            shown.append(f"{r.name} {where} {now - r.started:.0f} s{loop}")
        footer = self.footer()
        return f"  running: {', '.join(shown)}" + (f"; {footer}" if footer else "")

    def close(self) -> None:
        """Remove the block (to redraw it, or the run is over)."""
        if self._shown:
            self.stream.write(_UP_AND_CLEAR.format(n=self._shown))
            self.stream.flush()
            self._shown = 0

    def _redraw(self) -> None:
        """Draw a line per running notebook (``  03_gd  cell 12/31   45 s  long runs 41%``), the footer."""
        self.close()
        now, lines = time.monotonic(), []
        for r in self.running.values():
            where = f"cell {r.cell}/{r.cells}" if r.cells else "starting"
            line = f"  {r.name:<{self.width}}  {where:<11} {now - r.started:5.0f} s"
            lines.append(f"{line}  {r.loop}" if r.loop else line)
        footer = self.footer() if lines else ""
        lines += [f"  {footer}"] if footer else []
        if lines:
            self.stream.write("".join(line + "\n" for line in lines))
            self.stream.flush()
        self._shown = len(lines)
        self.throttle.mark()
