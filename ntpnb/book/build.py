"""``ntpnb book``: write the generated pages, then build the HTML book from the executed notebooks.

The generated pages are the reproducibility report, the claims page and the introduction's
verdicts (:mod:`.report`), and the benchmarks page (:mod:`.benchmarks_page`, from the last
``python -m benchmarks`` run, or a page that says none was run). Sphinx runs with
``-W -n --keep-going``: any warning fails the build (the book's extension, :mod:`.sphinx_ext`,
warns about every broken notebook).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ..chapter.paths import OutputLayout, notebook_sources
from ..errors import NTPError
from .benchmarks_page import write_benchmarks_page
from .report import verdict_summary, write_report

__all__ = ["jupyter_book", "missing_notebooks", "build_book"]


def jupyter_book() -> Path:
    """The ``jupyter-book`` command installed beside this Python.

    Raises
    ------
    NTPError
        If it is not installed.
    """
    jb = Path(sys.executable).parent / "jupyter-book"
    if not jb.exists():
        raise NTPError(f"jupyter-book is not installed next to {sys.executable}; install ntpnb[book]")
    return jb


def missing_notebooks(root: Path, layout: OutputLayout) -> list[str]:
    """The notebooks of the project at ``root`` that have no executed copy in ``layout``."""
    return [s.stem for s in notebook_sources(root) if not (layout.notebooks / f"{s.stem}.ipynb").is_file()]


def _missing_message(root: Path, layout: OutputLayout, missing: list[str]) -> str:
    everything = len(missing) == len(notebook_sources(root))
    names = "" if everything else " " + " ".join(name.split("_")[0] for name in missing)
    what = "no executed notebooks" if everything else "no executed notebook for " + ", ".join(missing)
    lines = [
        f"{what} in {layout.notebooks}; run `ntpnb reproduce{names} --profile quick` (minutes) or "
        f"`ntpnb reproduce{names}` (the papers' settings) first, or `ntpnb book --run-missing quick`"
    ]
    for name in missing:
        record = layout.failed / f"{name}.json"
        if record.is_file():
            lines.append(f"  the last run of {name} failed; see {record} and {record.with_suffix('.ipynb')}")
    return "\n".join(lines)


def build_book(root: Path, layout: OutputLayout) -> int:
    """Write the generated pages from ``layout``, then build the HTML book at ``root``; the exit code.

    Call it holding the output lock of ``layout`` (``ntpnb book`` does), so that it reads the
    outputs of finished runs only.

    Raises
    ------
    NTPError
        If a notebook has no executed copy (naming the command that makes it), or jupyter-book
        is not installed.
    """
    jb = jupyter_book()
    missing = missing_notebooks(root, layout)
    if missing:
        raise NTPError(_missing_message(root, layout, missing))
    print(f"ntpnb: wrote the reproducibility report {write_report(layout)}")
    print(f"ntpnb: verdicts of the last runs: {verdict_summary(layout)}")
    print(f"ntpnb: wrote the benchmarks page {write_benchmarks_page(layout)}")
    return subprocess.call([str(jb), "build", str(root), "-W", "-n", "--keep-going"])
