"""Compare the printed outputs of two runs, to see whether another machine printed the same numbers.

``ntpnb compare RUN_A RUN_B`` (or ``python -m ntpnb.book.compare RUN_A RUN_B``) compares the text
outputs (printed lines and ``text/plain`` results) of two output folders' executed notebooks (say
two machines, or two BLAS kernels) line by line, in print order whatever the cells, after masking
what legitimately changes with nbval's rules (:data:`SANITIZE_CONFIG`: timings, memory addresses,
figure reprs); the platforms the runs recorded (:mod:`ntpnb.chapter.platform`) are shown first.
"""

from __future__ import annotations

import argparse
import configparser
import difflib
import re
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..chapter.claims import load_chapter_record
from ..chapter.provenance import load_run_record
from ..errors import PathError
from .executed import is_text, read_notebook
from .trees import chapter_number, setting_options, visible

#: The masking rules of nbval (``--nbval-sanitize-with``) and of :func:`compare_runs`: one file.
SANITIZE_CONFIG = Path(__file__).parent / "static" / "nbval_sanitize.cfg"


@dataclass(frozen=True)
class OutputDifference:
    """Printed lines that differ between two runs (or a notebook missing in one).

    ``cell`` is the cell of the first differing line (in run A, else B); ``-1`` for a notebook
    only one run executed. ``a`` and ``b`` are the differing lines of each run.
    """

    notebook: str
    cell: int
    a: str
    b: str


def sanitizers() -> list[tuple[re.Pattern[str], str]]:
    """The ``(regex, replacement)`` pairs of the nbval sanitize file :data:`SANITIZE_CONFIG`, in order."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(SANITIZE_CONFIG, encoding="utf-8")
    return [(re.compile(parser[s]["regex"]), parser[s]["replace"]) for s in parser.sections()]


def _cell_text(cell: dict, rules: list[tuple[re.Pattern[str], str]]) -> str:
    """The printed text of a cell; a displayed result (``text/plain``) stands on lines of its own."""
    text = ""
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            text += "".join(out.get("text", ""))
        elif is_text(plain := out.get("data", {}).get("text/plain")):
            shown = "".join(plain)
            text += ("\n" if text and not text.endswith("\n") else "") + shown.rstrip("\n") + "\n"
    for regex, replace in rules:
        text = regex.sub(replace, text)
    return text


def _text_outputs(run: Path, executed: Path, rules: list[tuple[re.Pattern[str], str]]) -> list[str]:
    """The sanitized text output of every cell of ``executed`` (``""`` for none); PathError naming it."""
    try:
        nb = read_notebook(executed)
    except PathError as exc:
        raise PathError(f"{exc}; {_rerun(run, executed.stem)}") from None
    return [_cell_text(cell, rules) for cell in nb.get("cells", [])]


def _line_differences(name: str, ta: list[str], tb: list[str]) -> list[OutputDifference]:
    """The runs of differing printed lines of one notebook (``difflib``'s non-equal blocks)."""
    la, lb = ([(cell, line) for cell, text in enumerate(t) for line in text.splitlines()] for t in (ta, tb))
    matcher = difflib.SequenceMatcher(None, [x for _, x in la], [x for _, x in lb], autojunk=False)
    diffs = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        cell = la[i1][0] if i1 < i2 else (lb[j1][0] if j1 < j2 else -1)
        a = "\n".join(x for _, x in la[i1:i2]) or "<no line>"
        b = "\n".join(x for _, x in lb[j1:j2]) or "<no line>"
        diffs.append(OutputDifference(name, cell, a, b))
    return diffs


def _notebooks(run: Path) -> dict[str, Path]:
    folder = run / "notebooks"
    if not folder.is_dir():
        what = "it is not a folder" if run.exists() and not run.is_dir() else f"{folder} is missing"
        raise PathError(
            f"{run} holds no executed notebooks ({what}); give the --out folder of a `ntpnb reproduce` "
            f"run, or make one with `ntpnb reproduce --out {run}`"
        )
    return {p.stem: p for p in visible(sorted(folder.glob("*.ipynb"))) if not p.stem.endswith(".failed")}


def _rerun(run: Path, name: str) -> str:
    """How to run chapter ``name`` again into ``run``: with the setting of its ``run.json``, if it reads."""
    try:
        record = load_run_record(run)
    except PathError:
        record = None
    words = ["ntpnb", "reproduce", chapter_number(name), *setting_options(record), "--out", str(run)]
    command = " ".join(shlex.quote(w) for w in words)
    if record is None:
        return f"run `{command}` with the --profile and -p it ran with to run it again"
    return f"run `{command}` to run it again"


def compare_runs(run_a: Path, run_b: Path) -> tuple[list[str], list[OutputDifference]]:
    """The notebooks both runs executed, and every run of printed lines that differs (cell -1: a notebook)."""
    rules = sanitizers()
    a, b = _notebooks(Path(run_a)), _notebooks(Path(run_b))
    diffs = [
        OutputDifference(
            name, -1, "executed" if name in a else "missing", "executed" if name in b else "missing"
        )
        for name in sorted(set(a) ^ set(b))
    ]
    both = sorted(set(a) & set(b))
    for name in both:
        texts = _text_outputs(Path(run_a), a[name], rules), _text_outputs(Path(run_b), b[name], rules)
        diffs += _line_differences(name, *texts)
    return both, diffs


def _platform_line(run: Path) -> str:
    """The CPU and BLAS kernels each run of ``run`` recorded (distinct ones, one line)."""
    seen = []
    for path in sorted((run / "claims").glob("*.json")):
        try:
            info = load_chapter_record(path).platform
        except PathError:  # unreadable: not a record of the run
            continue
        if not isinstance(info, dict):  # none recorded, or not of a platform's shape
            continue
        pools = info.get("threadpools")
        kernels = ", ".join(
            " ".join(str(lib.get(k)) for k in ("internal_api", "version", "architecture"))
            + f" x{lib.get('num_threads')}"
            for lib in (pools if isinstance(pools, list) else [])
            if isinstance(lib, dict)
        )
        line = f"{info.get('cpu')}; {kernels}"
        if line not in seen:
            seen.append(line)
    return f"{run}: " + (" | ".join(seen) if seen else "no platform recorded")


def _first_difference(x: str, y: str) -> str:
    for lx, ly in zip(x.splitlines(), y.splitlines(), strict=False):
        if lx != ly:
            return f"    - {lx}\n    + {ly}"
    return f"    - {x.splitlines()[-1:] or ''}\n    + {y.splitlines()[-1:] or ''}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The two arguments of a comparison: the output folders of two runs."""
    parser.add_argument("run_a", type=Path, help="an output folder of ntpnb reproduce")
    parser.add_argument("run_b", type=Path, help="another one")


def print_comparison(run_a: Path, run_b: Path) -> int:
    """Print the platforms of two runs and every cell whose printed output differs; the exit code.

    0 if every printed output is the same, 1 if some differ, 2 if a run cannot be read.
    """
    try:
        both, diffs = compare_runs(run_a, run_b)
    except PathError as exc:
        print(f"ntpnb: error: {exc}", file=sys.stderr)
        return 2
    for run in (run_a, run_b):
        print(_platform_line(run))
    if not diffs:
        print(f"the same printed outputs in all {len(both)} notebooks both runs executed")
        return 0
    print(f"{len(diffs)} runs of printed lines differ:")
    for d in diffs:
        where = "notebook" if d.cell < 0 else f"cell {d.cell}"
        print(f"  {d.notebook} {where}:\n{_first_difference(d.a, d.b)}")
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m ntpnb.book.compare RUN_A RUN_B``."""
    parser = argparse.ArgumentParser(prog="python -m ntpnb.book.compare", description=__doc__.split("\n")[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    return print_comparison(args.run_a, args.run_b)


if __name__ == "__main__":
    sys.exit(main())
