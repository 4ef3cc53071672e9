"""Execute one notebook: Jupytext source -> papermill (with its parameters) -> executed ``.ipynb``.

The notebook runs in its staging tree and its outputs are moved into place only when it
succeeded (:mod:`.staging`); its cache key is stored then, and removed when it fails
(:mod:`.choice`). A failure is described in one line (:mod:`.diagnosis`) and never raised: the
run goes on with the other notebooks.
"""

from __future__ import annotations

import functools
import shutil
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..chapter.paths import OutputLayout
from .choice import NotebookRun, cache_key, forget_key, is_cached, notebook_parameters, store_key
from .diagnosis import describe_failure, describe_write_failure
from .kernels import KERNEL_NAME, IPCKernelManager, kernel_environment
from .staging import clear_failure, hide_injected_parameters, keep_failure, promote, staging_layout

__all__ = ["RunResult", "CellStarted", "cached_result", "run_notebook", "execute_notebook"]


@dataclass(frozen=True)
class RunResult:
    """Outcome of executing one notebook."""

    name: str
    ok: bool
    seconds: float
    executed: Path | None  # for a failure, the kept executed copy (None when none could be kept)
    error: str | None = None
    cached: bool = False  # not executed: unchanged since its last successful run


def cached_result(run: NotebookRun, force: bool = False) -> RunResult | None:
    """The result of ``run`` without executing it, if its outputs are current (and not ``force``)."""
    if force or not is_cached(run.executed, run.key):
        return None
    return RunResult(run.name, True, 0.0, run.executed, cached=True)


#: A function told each code cell as it starts: its number (from 1) and how many there are.
CellStarted = Callable[[int, int], None]
#: The name of papermill's engine that reports the cells (:func:`_reporting_engine`).
REPORTING_ENGINE = "ntpnb-reporting"


@functools.cache
def _reporting_engine() -> str:
    """Register (once per process) and name papermill's nbclient engine that also reports cells.

    It is papermill's own engine, with ``cell_started`` (a :data:`CellStarted`) told the number
    of each code cell as papermill starts it, and one write of the executed notebook instead of
    one at every cell's start and end (:func:`_written_once`).
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
            with _written_once(nb_man):
                return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)

    papermill_engines.register(REPORTING_ENGINE, ReportingEngine)
    return REPORTING_ENGINE


@contextmanager
def _written_once(nb_man: Any) -> Iterator[None]:
    """Within: papermill's execution manager ``nb_man`` does not write the notebook.

    Papermill writes the whole executed notebook, figures included, at the start and the end of
    every cell (and every 30 s within a long one): megabytes a hundred times per chapter, most of
    its time outside the cells. The notebook is still written whole where it counts: by
    papermill when the cells have run (with its error cell on top when one failed), and, when
    the execution itself fails (the kernel died), by papermill's closing step, which this then
    lets write what ran, for the failure's kept copy (:mod:`.staging`). Nothing reads the
    notebook in between: the progress display hears of each cell from the worker.
    """
    save = nb_man.save
    nb_man.save = lambda **kwargs: None
    try:
        yield
    except BaseException:
        nb_man.save = save
        raise


def run_notebook(run: NotebookRun, cell_started: CellStarted | None = None) -> RunResult:
    """Execute ``run`` with papermill; on success move its outputs into place.

    ``cell_started`` is told each code cell as it starts. A failure keeps the previous outputs
    and puts the failed copy and a record in ``run.layout.failed``
    (:func:`~ntpnb.runner.staging.keep_failure`).
    """
    import jupytext
    import papermill

    layout, executed = run.layout, run.executed
    stage = staging_layout(layout, run.name)
    staged = stage.notebooks / executed.name
    start = time.perf_counter()
    try:
        with kernel_environment():
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
                # the cells have run and their outputs are in: the kernel has nothing left to
                # do but tear down its interpreter (a second, more with many modules loaded),
                # so it is killed with its process group instead of asked to exit
                shutdown_kernel="immediate",
            )
        seconds = time.perf_counter() - start
        hide_injected_parameters(staged)
        promote(stage, layout, executed)
    except Exception as exc:  # report any failure, go on with the others
        seconds = time.perf_counter() - start
        return _failed(run, stage, seconds, describe_failure(exc, staged, layout.root))
    try:
        store_key(run, seconds)
        clear_failure(layout, run.name)
    except OSError as exc:  # the outputs are in place, but the next run cannot know it
        return _failed(run, stage, seconds, describe_write_failure(exc, layout.root))
    shutil.rmtree(stage.root, ignore_errors=True)
    return RunResult(run.name, True, seconds, executed)


def _failed(run: NotebookRun, stage: OutputLayout, seconds: float, error: str) -> RunResult:
    """The result of a failed run: its cache key forgotten, its executed copy and record kept."""
    forget_key(run.executed)
    kept = keep_failure(run.layout, stage, run.name, error, run.parameters)
    shutil.rmtree(stage.root, ignore_errors=True)
    return RunResult(run.name, False, seconds, kept, error)


def execute_notebook(
    source: Path,
    profile: str,
    layout: OutputLayout,
    overrides: Mapping[str, str] | None = None,
    force: bool = False,
) -> RunResult:
    """Execute one Jupytext notebook with papermill under ``profile`` into ``layout``, in this process.

    Unless ``force``, a notebook whose :func:`~ntpnb.runner.choice.cache_key` equals the one
    stored by its last successful run into ``layout`` is not executed (the result says ``cached``).
    """
    parameters = notebook_parameters(source, profile, layout, overrides)
    run = NotebookRun(source, parameters, layout, cache_key(source, parameters))
    return cached_result(run, force) or run_notebook(run)
