"""Why a notebook failed, in one line: the error and the cell it failed in.

The line is what ``ntpnb reproduce`` prints for a failed notebook and what its failure record
(:func:`~ntpnb.runner.staging.keep_failure`) and the book's report keep.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["failed_cell", "describe_failure", "describe_write_failure"]


def failed_cell(staged: Path) -> tuple[int, str] | None:
    """Index and first source line of the cell a run failed in, if the executed copy shows it.

    That is the cell papermill marked failed, or else the cell the kernel started and never
    answered (no ``shell.execute_reply`` time: the kernel died in it), or else the last code
    cell papermill started: a kernel that dies before it acknowledges the cell leaves no
    execution metadata, and papermill then marks every started cell completed.
    """
    import nbformat

    try:
        nb = nbformat.read(staged, as_version=4)
    except (OSError, ValueError):
        return None

    def meta(cell: dict, key: str) -> dict:
        return cell.get("metadata", {}).get(key, {})

    cells = list(enumerate(nb.cells))
    tests = (
        (lambda cell: meta(cell, "papermill").get("status") == "failed", cells),
        (lambda cell: (times := meta(cell, "execution")) and "shell.execute_reply" not in times, cells),
        (lambda cell: meta(cell, "papermill").get("start_time") is not None, cells[::-1]),
    )
    for test, order in tests:
        for index, cell in order:
            if cell.cell_type == "code" and test(cell):
                lines = cell.source.strip().splitlines()
                return index, lines[0] if lines else ""
    return None


def describe_failure(exc: BaseException, staged: Path | None = None, outputs: Path | None = None) -> str:
    """One line: the error of a failed notebook and, when known, the cell it failed in.

    A kernel that died (crashed, killed, out of memory) is named as such, with its cell; an
    operating-system error of the run itself (not raised in the notebook) is a failure to write
    the outputs (:func:`describe_write_failure`).
    """
    from nbclient.exceptions import DeadKernelError

    if isinstance(exc, OSError) and not hasattr(exc, "ename"):
        return describe_write_failure(exc, outputs)
    ename = getattr(exc, "ename", type(exc).__name__)
    evalue = str(getattr(exc, "evalue", exc)).strip()
    first = evalue.splitlines()[0] if evalue else ""
    cell = failed_cell(staged) if staged is not None else None
    where = f" in cell {cell[0]} ({cell[1][:60]!r})" if cell else ""
    if isinstance(exc, DeadKernelError):
        return f"KernelDied: the kernel died{where}"
    return f"{ename}: {first}" + (where if ename != "ClaimCheckError" else "")


def describe_write_failure(exc: OSError, outputs: Path | None = None) -> str:
    """One line for an output that could not be written: the cause, its errno, and where.

    Where is the file the error names, else the output folder ``outputs`` (a write into an open
    file, e.g. papermill's, names no file).
    """
    cause = exc.strerror or str(exc) or type(exc).__name__
    code = f" (errno {exc.errno})" if exc.errno else ""
    where = exc.filename if exc.filename else outputs
    return f"could not write the outputs: {cause}{code}" + (f": {where}" if where else "")
