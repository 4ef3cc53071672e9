"""The book's benchmarks page: made at build time from the last ``python -m benchmarks`` run.

``python -m benchmarks`` writes its results under the output tree (``outputs/benchmarks/``:
``benchmarks.md``, the page with every table, and ``benchmarks.json``, the measurements).
``ntpnb book`` calls :func:`write_benchmarks_page` before building, which copies that page to
``outputs/benchmarks.md`` (the document ``_toc.yml`` lists), or, when no benchmark has been run
into this output tree, writes a page that says so and names the command. The book therefore never
shows a number that no run produced, and nothing generated is committed.
"""

from __future__ import annotations

from pathlib import Path

from .paths import OutputLayout

__all__ = ["BENCHMARKS_DOCNAME", "BENCHMARKS_COMMAND", "render_benchmarks_page", "write_benchmarks_page"]

#: The page's place in the book, relative to the project root (``_toc.yml`` lists it).
BENCHMARKS_DOCNAME = "outputs/benchmarks"
#: The command that measures the benchmarks (run from the project root).
BENCHMARKS_COMMAND = "python -m benchmarks"

NOT_RUN = f"""\
# Benchmarks

No benchmark has been run for this build of the book, so this page shows no measurement.
Run, from the repository root,

```bash
{BENCHMARKS_COMMAND}
ntpnb book
```

The first command times every solver against problem size (a few minutes on 2 cores) and writes
`outputs/benchmarks/benchmarks.md` and `outputs/benchmarks/benchmarks.json`; the second rebuilds
the book, with the measured tables on this page.
"""


def render_benchmarks_page(layout: OutputLayout) -> str:
    """The page: the last run's ``benchmarks/benchmarks.md`` under ``layout``, or the not-run page."""
    results = layout.benchmarks / "benchmarks.md"
    if results.is_file():
        return results.read_text(encoding="utf-8")
    return NOT_RUN


def write_benchmarks_page(layout: OutputLayout) -> Path:
    """Write the page to ``<layout.root>/benchmarks.md`` and return its path."""
    path = layout.root / "benchmarks.md"
    path.write_text(render_benchmarks_page(layout), encoding="utf-8")
    return path
