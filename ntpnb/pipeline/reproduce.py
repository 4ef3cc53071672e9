"""Execute the notebooks: Jupytext source -> papermill (with a profile) -> executed ``.ipynb``.

One failed notebook does not stop the others: each result is reported, and the executed
notebook is kept even when it failed (papermill writes the error into it), for debugging.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import default

from ..errors import NTPError
from .paths import DEFAULT_OUTPUT_DIRNAME, OutputLayout, output_layout, override_output_dir
from .profiles import PROFILE_NAMES, apply_overrides

__all__ = ["RunResult", "notebook_sources", "select_notebooks", "execute_notebook", "reproduce"]

KERNEL_NAME = "python3"


class IPCKernelManager(AsyncKernelManager):
    """A kernel manager that talks to its kernel over Unix-domain sockets instead of TCP.

    The kernel then needs no network interface at all (not even loopback), and ipykernel
    does not warn about unencrypted TCP on every start.
    """

    @default("transport")
    def _default_transport(self) -> str:
        return "ipc"


@dataclass(frozen=True)
class RunResult:
    """Outcome of executing one notebook."""

    name: str
    ok: bool
    seconds: float
    executed: Path
    error: str | None = None


def notebook_sources(root: Path) -> list[Path]:
    """The Jupytext sources ``<root>/notebooks/*.md``, sorted by name."""
    return sorted((root / "notebooks").glob("*.md"))


def select_notebooks(sources: Sequence[Path], names: Sequence[str]) -> list[Path]:
    """The sources named in ``names`` (file stems, or unique prefixes); all if ``names`` is empty.

    Raises
    ------
    NTPError
        If a name matches no notebook or more than one.
    """
    if not names:
        return list(sources)
    chosen = []
    for name in names:
        stem = Path(name).stem
        matches = [s for s in sources if s.stem == stem] or [s for s in sources if s.stem.startswith(stem)]
        if len(matches) != 1:
            known = ", ".join(s.stem for s in sources)
            what = "no notebook" if not matches else "several notebooks"
            raise NTPError(f"{what} named {name!r}; the notebooks are: {known}")
        chosen.append(matches[0])
    return chosen


def _warm_matplotlib() -> None:
    """Build matplotlib's font cache now, so its one-time notice never lands in a notebook."""
    import matplotlib.font_manager  # noqa: F401


def execute_notebook(
    source: Path, profile: str, layout: OutputLayout, overrides: Mapping[str, str] | None = None
) -> RunResult:
    """Execute one Jupytext notebook with papermill under ``profile`` into ``layout``.

    ``overrides`` maps parameter names to text values (see
    :func:`~ntpnb.pipeline.profiles.apply_overrides`).
    """
    import jupytext
    import papermill

    name = source.stem
    executed = layout.notebooks / f"{name}.ipynb"
    start = time.perf_counter()
    try:
        parameters = apply_overrides(name, profile, overrides or {})
        # relative to the executed notebook's folder, where papermill, nbval and Jupyter run it
        parameters.update(profile=profile, output_dir=os.path.relpath(layout.root, layout.notebooks))
        papermill.execute_notebook(
            jupytext.read(source),
            str(executed),
            parameters=parameters,
            cwd=str(layout.notebooks),
            kernel_name=KERNEL_NAME,
            kernel_manager_class=IPCKernelManager,
            progress_bar=False,
            log_output=False,
        )
    except Exception as exc:  # report any failure, go on with the others
        summary = _summarize(exc)
        return RunResult(name, False, time.perf_counter() - start, executed, summary)
    return RunResult(name, True, time.perf_counter() - start, executed)


def _summarize(exc: Exception) -> str:
    ename = getattr(exc, "ename", type(exc).__name__)
    evalue = getattr(exc, "evalue", str(exc))
    first = str(evalue).strip().splitlines()[0] if str(evalue).strip() else ""
    return f"{ename}: {first}"


def reproduce(
    root: Path,
    names: Sequence[str] = (),
    profile: str = "paper",
    output_dir: str | Path | None = None,
    log: Callable[[str], None] = print,
    overrides: Mapping[str, str] | None = None,
) -> list[RunResult]:
    """Execute the selected notebooks of the project at ``root``; one progress line each.

    Parameters
    ----------
    root
        Project root (holds ``notebooks/``).
    names
        Notebook names to run (all if empty).
    profile
        ``"paper"`` or ``"quick"``.
    output_dir
        Root of the output tree (default ``<root>/outputs``, or
        ``<root>/outputs/runs/<overrides>`` when there are overrides, so that such a run never
        replaces the canonical outputs the book and its report are built from).
    log
        Where progress lines go.
    overrides
        Parameter values (text, ``{"seed": "3"}``) that replace the profile's; checked against
        every selected notebook before anything runs.

    Raises
    ------
    NTPError
        On an unknown notebook, profile or parameter, or a value of the wrong type.
    """
    sources = select_notebooks(notebook_sources(root), names)
    if not sources:
        raise NTPError(f"no notebooks found in {root / 'notebooks'}")
    if profile not in PROFILE_NAMES:
        raise NTPError(f"unknown profile {profile!r}; use one of {', '.join(PROFILE_NAMES)}")
    overrides = dict(overrides or {})
    for source in sources:  # fail on a bad override before running anything
        apply_overrides(source.stem, profile, overrides)
    if output_dir is None:
        output_dir = override_output_dir(root, overrides) if overrides else root / DEFAULT_OUTPUT_DIRNAME
    layout = output_layout(output_dir)
    if overrides:
        run = {"profile": profile, "overrides": overrides, "notebooks": [s.stem for s in sources]}
        (layout.root / "run.json").write_text(json.dumps(run, indent=1) + "\n")
    _warm_matplotlib()
    results = []
    width = max(len(s.stem) for s in sources)
    for i, source in enumerate(sources, 1):
        result = execute_notebook(source, profile, layout, overrides)
        status = "ok" if result.ok else "FAILED"
        line = f"[{i}/{len(sources)}] {source.stem:<{width}}  {status:<6} {result.seconds:7.1f} s"
        if result.error:
            line += f"  {result.error}"
        log(line)
        results.append(result)
    return results
