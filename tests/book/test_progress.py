"""What ``ntpnb book`` shows while a step runs in a process of its own (:mod:`ntpnb.book._progress`)."""

from __future__ import annotations

import sys

from ntpnb.book._build import run_owned
from ntpnb.book._progress import PHASE_SECONDS, PRINTER_PREFIX, StepProgress, printer_phase, sphinx_phase
from ntpnb.settings import QUIET_SECONDS


def test_a_step_says_its_new_phases_and_is_never_quiet_for_long(monkeypatch):
    clock, said = [0.0], []
    monkeypatch.setattr("time.monotonic", lambda: clock[0])
    step = StepProgress("the HTML book", sphinx_phase, said.append)
    assert said == ["ntpnb: the HTML book: starting (0 s)"]  # at once: the step before ends its silence
    for line in ("making output directory... done", "reading sources... [  3%] intro", "WARNING: x"):
        step.line(line)  # phases that follow the start at once wait for the next line's time
    assert said == ["ntpnb: the HTML book: starting (0 s)"]
    clock[0] = PHASE_SECONDS
    step.line("reading sources... [ 40%] outputs/notebooks/03_gd_implicit_bias")
    assert said[1:] == ["ntpnb: the HTML book: reading sources 40% (2 s)"]
    clock[0] = PHASE_SECONDS + QUIET_SECONDS - 1
    step.tick()  # the same phase, and a line came not long ago
    assert len(said) == 2
    clock[0] = PHASE_SECONDS + QUIET_SECONDS
    step.tick()  # Sphinx is quiet (a long page): the phase reached is said again
    assert said[2:] == [f"ntpnb: the HTML book: reading sources 40% ({PHASE_SECONDS + QUIET_SECONDS:.0f} s)"]


def test_the_phases_of_sphinx_and_of_the_printer_are_read_from_their_lines():
    assert sphinx_phase("\x1b[01mwriting output... \x1b[39;49;00m[ 80%] book/claims") == (
        "writing output",
        "80%",
    )
    assert sphinx_phase("build succeeded.") is None
    assert printer_phase(f"{PRINTER_PREFIX}print 2 of at most 3") == ("print 2 of at most 3", "")
    assert printer_phase("a line of Chromium's") is None


def test_the_output_of_a_step_reaches_its_progress_as_it_comes(tmp_path):
    seen = []

    class Spy(StepProgress):
        def line(self, text: str) -> None:
            seen.append(text)

    child = [
        sys.executable,
        "-c",
        "import time\nfor i in range(3): print(f'reading sources... [{i}%]', flush=True)",
    ]
    code, output = run_owned(child, tmp_path, progress=Spy("x", sphinx_phase, print))
    assert (
        code == 0 and seen == [f"reading sources... [{i}%]\n" for i in range(3)] and output == "".join(seen)
    )
