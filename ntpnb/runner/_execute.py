"""Execute one notebook: Jupytext source -> papermill (with its parameters) -> executed ``.ipynb``.

Its outputs are moved into place when it ran to its end (:func:`~ntpnb.records._staging.promote`),
even if claim checks failed. A failure is described in one line
(:func:`~ntpnb.records._staging.describe_failure`), never raised.
"""

from __future__ import annotations

import dataclasses
import functools
import shutil
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

from .._compiled import cache_state
from .._jupyter_imports import import_jsonschema_without_iri_grammar
from ..chapter._sources import source_changes
from ..errors import PathError
from ..records._cache import output_digests
from ..records._commit import source_commit
from ..records._files import atomic_write_text
from ..records._manifest import Manifest, manifest_path, write_manifest, written_figures
from ..records._places import OutputTree
from ..records._run import ChapterRun, PlannedRun, complete_run, completed_run, failed_run, load_chapter_run
from ..records._staging import describe_failure, keep_failure, promote, staging_tree
from ._jupyter_kernel import KERNEL_NAME, IPCKernelManager

#: A function told each code cell as it starts: its number (from 1) and how many there are.
CellStarted = Callable[[int, int], None]
#: The name of papermill's engine that reports the cells (:func:`_reporting_engine`).
REPORTING_ENGINE = "ntpnb-reporting"


@functools.cache
def _reporting_engine() -> str:
    """Register (once per process) and name papermill's engine that tells ``cell_started`` each code cell.

    It also spares papermill writing the notebook at every cell's start and end: it is written when
    the cells have run and, when the execution fails, by papermill's closing step (the kept copy).
    """
    from papermill.engines import NBClientEngine, papermill_engines

    class ReportingEngine(NBClientEngine):
        @classmethod
        def execute_managed_notebook(
            cls, nb_man: Any, kernel_name: str, cell_started: CellStarted | None = None, **kwargs: Any
        ) -> Any:
            if cell_started is not None:
                code = [i for i, cell in enumerate(nb_man.nb.cells) if cell.cell_type == "code"]
                number = {index: n for n, index in enumerate(code, start=1)}
                start = nb_man.cell_start

                def cell_start(cell: Any, cell_index: int | None = None, **kw: Any) -> None:
                    start(cell, cell_index, **kw)
                    if cell_index in number:
                        cell_started(number[cell_index], len(code))

                nb_man.cell_start = cell_start
            save = nb_man.save
            nb_man.save = lambda **kwargs: None
            try:
                return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)
            except BaseException:
                nb_man.save = save
                raise

    papermill_engines.register(REPORTING_ENGINE, ReportingEngine)
    return REPORTING_ENGINE


def run_notebook(run: PlannedRun, cell_started: CellStarted | None = None) -> ChapterRun:
    """Execute ``run`` with papermill; on success move its outputs into place.

    A failure keeps the previous outputs and puts the failed copy and a record in ``run.tree.failed``;
    any failure is a failed result, never raised.
    """
    try:
        import_jsonschema_without_iri_grammar()  # first: every notebook library of this run loads after it
        import jupytext  # noqa: F401  (loaded before anything is staged; _execute uses them)
        import papermill  # noqa: F401

        executed = run.executed
        stage = staging_tree(run.tree, run.notebook)
        staged = stage.notebooks / executed.name
        start, kernels = time.perf_counter(), cache_state()
        failure = _execute(run, stage, staged, cell_started)
        seconds, compiled = time.perf_counter() - start, cache_state() != kernels
        record = complete_run(run, stage.claims)
        if failure is not None and (record is None or getattr(failure, "ename", None) != "ClaimCheckError"):
            return _failed(run, stage, seconds, describe_failure(failure, staged, run.tree.root))
        if record is None:  # every cell ran, yet the record is not complete
            error = "IncompleteRecord: the chapter ended without ClaimLog.conclude() in its last cell"
            return _failed(run, stage, seconds, error)
        try:
            figures = _put_in_place(run, stage, record, seconds)
        except Exception as exc:  # the outputs are not in place, or the next run cannot know they are
            return _failed(run, stage, seconds, describe_failure(exc, staged, run.tree.root))
        shutil.rmtree(stage.root, ignore_errors=True)
        return completed_run(run, record, seconds, compiled=compiled, figures=figures)
    except Exception as exc:  # a failure it did not report (a bug): a failed result too
        return failed_run(run, describe_failure(exc, outputs=run.tree.root))


def _execute(
    run: PlannedRun, stage: OutputTree, staged: Path, cell_started: CellStarted | None
) -> Exception | None:
    """Execute ``run``'s source with papermill into ``staged`` (in the staging tree ``stage``).

    Returns
    -------
    Exception or None
        What the execution raised (any failure is reported, the others go on), or None.
    """
    import jupytext
    import papermill

    try:
        papermill.execute_notebook(
            jupytext.read(run.source),
            str(staged),
            parameters=dict(run.parameters),
            cwd=str(stage.notebooks),  # output_dir ".." is the staging root
            kernel_name=KERNEL_NAME,
            kernel_manager_class=IPCKernelManager,
            progress_bar=False,
            log_output=False,
            engine_name=_reporting_engine(),
            cell_started=cell_started,
            # the cells have run: the kernel is killed with its process group rather than
            # asked to exit (tearing down its interpreter takes a second or more)
            shutdown_kernel="immediate",
        )
    except Exception as exc:  # report any failure, go on with the others
        return exc
    return None


def _put_in_place(run: PlannedRun, stage: OutputTree, record: ChapterRun, seconds: float) -> tuple[str, ...]:
    """Move a completed run's staged outputs into its tree, then write its manifest; the figures it wrote.

    The record is rewritten with every parameter the run was given; the manifest says the run's
    cache key, parameters, time, the outputs' digests and the commit of its sources (with what its
    chapter's source changed, if it was not as committed).
    """
    claims = stage.claims / f"{run.notebook}.json"
    if claims.exists():  # the record says every parameter the run was given
        record = dataclasses.replace(record, parameters=dict(run.parameters))
        atomic_write_text(claims, record.dump())
    digests = output_digests(run.tree.root, promote(stage, run.tree, run.executed))
    project = run.source.parents[1]  # the project of notebooks/<name>.md
    commit = dataclasses.replace(source_commit(project), changes=source_changes(run.source))
    write_manifest(
        run.executed, Manifest(run.key, dict(run.parameters), seconds, digests, run.package, commit)
    )
    return written_figures(digests)


def _failed(run: PlannedRun, stage: OutputTree, seconds: float, error: str) -> ChapterRun:
    """The result of a failed run: its cache key forgotten, its executed copy and record kept."""
    with suppress(OSError):  # a failed run is never cached (unless the folder is read-only)
        manifest_path(run.executed).unlink(missing_ok=True)
    try:
        record = load_chapter_run(stage.claims / f"{run.notebook}.json")
        checks = [dataclasses.asdict(c) for c in record.checks]
    except PathError:  # no record (or half of one) yet
        checks = []
    kept = keep_failure(run.tree, stage, run.notebook, error, run.parameters, checks)
    shutil.rmtree(stage.root, ignore_errors=True)
    return failed_run(run, error, seconds, kept)
