"""The HTML book, built atomically: in a fresh staging folder, swapped in only when complete.

A book goes to a *site* folder (``<root>/_build``, or ``DIR/_book`` for ``ntpnb book --run DIR``)
as ``<site>/html``. A build removes stopped builds' staging folders (:func:`clear_stale`), copies
the book's sources and the output tree into a fresh one (:func:`staging`, :func:`stage_sources`;
an unrun chapter gets a page saying so), runs jupyter-book there in a session of its own
(:func:`run_owned`) and, only when it exits 0, swaps the new ``html`` in (:func:`swap_in`). Nothing
of an earlier build can leak into a later one, and the last complete book stays until a new one is
complete. An unwritable or full folder is refused in one line (:func:`site_error`).
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from ..chapter.layout import OutputLayout, notebook_sources, subfolder
from ..errors import NTPError
from .trees import shown

__all__ = [
    "HTML_DIRNAME",
    "Staging",
    "site_error",
    "clear_stale",
    "staging",
    "stage_sources",
    "run_owned",
    "build_messages",
    "disk_errno",
    "swap_in",
]

#: The book's folder inside its site.
HTML_DIRNAME = "html"
#: The name of a staging folder starts so (then the builder's process id and a random part).
STAGING_PREFIX = ".staging-"
#: The pages ``ntpnb book`` generates into the output tree, which the book shows.
GENERATED_PAGES = ("report.md", "claim_list.md", "verdicts.md", "benchmarks.md")
#: Errors of a folder that cannot take the book: full, or not writable.
FULL = (errno.ENOSPC, errno.EDQUOT)
NOT_WRITABLE = (errno.EROFS, errno.EACCES, errno.EPERM)


@dataclass(frozen=True)
class Staging:
    """One staging folder of a build and its parts."""

    path: Path

    #: The book's sources, as jupyter-book reads them.
    source = subfolder("source", of="path")
    #: Where jupyter-book writes the book (``--path-output`` is the staging folder).
    html = subfolder("_build", HTML_DIRNAME, of="path")
    #: A marker: jupyter-book exited 0, the book in :attr:`html` is complete.
    complete = subfolder("complete", of="path")
    #: Where the previous book goes while the new one takes its place.
    previous = subfolder("previous", of="path")


def site_error(site: Path, exc: OSError, command: str) -> NTPError:
    """One line for a site folder that cannot take the book: which, why, and what to do."""
    reason = exc.strerror or str(exc)
    if exc.errno in FULL:
        remedy = "free space on its file system"
    elif exc.errno in NOT_WRITABLE:
        remedy = "make it writable (or remove it, if it is yours)"
    else:
        remedy = "fix that folder"
    html = site / HTML_DIRNAME
    kept = f"the last complete book in {shown(html)} is kept" if html.is_dir() else "no book was built there"
    return NTPError(
        f"cannot write the book into {shown(site)}: {reason}; {remedy} and run `{command}` again ({kept})"
    )


def clear_stale(site: Path) -> list[Path]:
    """Remove the staging folders of stopped builds in ``site``; return them.

    Call it under the output lock. If a build was killed mid-swap, the complete book in its
    staging folder (the new one, else the previous) is put back first.
    """
    target = site / HTML_DIRNAME
    stale = sorted(p for p in site.glob(f"{STAGING_PREFIX}*") if p.is_dir())
    for folder in stale:
        stage = Staging(folder)
        if not target.exists():
            if stage.complete.exists() and stage.html.is_dir():
                os.rename(stage.html, target)
            elif stage.previous.is_dir():
                os.rename(stage.previous, target)
        shutil.rmtree(folder)
    return stale


@contextmanager
def staging(site: Path) -> Iterator[Staging]:
    """Within: a fresh staging folder in ``site`` (stale ones removed first); removed on leaving.

    Raises
    ------
    OSError
        If ``site`` cannot be created or written.
    """
    site.mkdir(parents=True, exist_ok=True)
    clear_stale(site)
    prefix = f"{STAGING_PREFIX}{os.getpid()}-"
    with tempfile.TemporaryDirectory(prefix=prefix, dir=site, ignore_cleanup_errors=True) as path:
        yield Staging(Path(path))


def _retitled(config: str, title: str) -> str:
    """``_config.yml``'s text with its ``title:`` line replaced (comments kept)."""
    line = f"title: {json.dumps(title, ensure_ascii=False)}"
    return re.sub(r"^title:.*$", lambda _: line, config, count=1, flags=re.MULTILINE)


def stage_sources(
    root: Path,
    layout: OutputLayout,
    source: Path,
    placeholders: dict[str, str],
    title: str | None,
) -> None:
    """Copy into ``source`` the book of the project at ``root`` around the output tree ``layout``.

    ``placeholders`` maps a chapter the tree has not run to its page;
    ``title``, if any, replaces the book's title (for a tree that is not the book's own).
    """
    ignore = shutil.ignore_patterns(".*", "__pycache__")
    source.mkdir()
    config = (root / "_config.yml").read_text(encoding="utf-8")
    (source / "_config.yml").write_text(_retitled(config, title) if title else config, encoding="utf-8")
    shutil.copy2(root / "_toc.yml", source / "_toc.yml")
    shutil.copytree(root / "book", source / "book", ignore=ignore)
    outputs = source / "outputs"
    (source / "notebooks").mkdir()
    (outputs / "notebooks").mkdir(parents=True)
    for chapter in notebook_sources(root):
        shutil.copy2(chapter, source / "notebooks" / chapter.name)
        executed = layout.notebooks / f"{chapter.stem}.ipynb"
        if executed.is_file():
            shutil.copy2(executed, outputs / "notebooks" / executed.name)
    for page in GENERATED_PAGES:
        shutil.copy2(layout.root / page, outputs / page)
    if layout.benchmarks.is_dir():  # the benchmarks page shows its plots from there
        shutil.copytree(layout.benchmarks, outputs / layout.benchmarks.name, ignore=ignore)
    for name, page in placeholders.items():
        (outputs / "notebooks" / f"{name}.md").write_text(page, encoding="utf-8")


def _end_group(proc: subprocess.Popen, grace: float = 3.0) -> None:
    """End the process group of ``proc`` (its session): SIGTERM, then SIGKILL after ``grace`` seconds."""
    for signum in (signal.SIGTERM, signal.SIGKILL):
        with suppress(ProcessLookupError, PermissionError):  # the group is gone
            if hasattr(os, "killpg"):
                os.killpg(proc.pid, signum)
            else:  # pragma: no cover - not POSIX
                proc.kill()
        with suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace)
    proc.wait()


def run_owned(command: Sequence[str], cwd: Path) -> tuple[int, str]:
    """Run ``command`` in a session of its own; its exit code and output (stdout and stderr).

    If anything raises meanwhile (Ctrl-C, SIGTERM as turned into KeyboardInterrupt by ``ntpnb``),
    the child's process group is ended before the exception goes on.
    """
    proc = subprocess.Popen(
        list(command),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    try:
        output, _ = proc.communicate()
    except BaseException:
        _end_group(proc)
        raise
    return proc.returncode, output


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_ERRNO = re.compile(r"\[Errno (\d+)\]|OSError\((\d+),")
_RAISED = re.compile(r"^[\w.]*(Error|Exception): ")
#: jupyter-book's own lines, which name the staging folder: not shown.
_BANNER = ("Running Jupyter-Book", "Source Folder:", "Config Path:", "Output Path:")
#: The lines of Sphinx's output that say what went wrong; else the last _TAIL lines are shown.
_FLAGGED = re.compile(r"WARNING|ERROR|Error|Exception|failed")
_TAIL = 20
_SPHINX_PLEA = ("Please also report this", "A bug report can be filed")


def build_messages(output: str) -> list[str]:
    """The lines of a failed jupyter-book run worth showing: the warnings, and Sphinx's error.

    Without colours, jupyter-book's banner or its traceback (which only says to look above).
    """
    lines = []
    for line in _ANSI.sub("", output).splitlines():
        if line.startswith("Traceback (most recent call last)"):
            break
        if line.strip() and not line.startswith(_BANNER + _SPHINX_PLEA) and set(line.strip()) != {"="}:
            lines.append(line)
    flagged = [line for line in lines if _FLAGGED.search(line)]
    return flagged or lines[-_TAIL:]


def disk_errno(output: str, where: Path) -> int | None:
    """The error number of a full or unwritable folder that stopped the build, if any.

    Only an error Sphinx raised (``OSError: [Errno 28] ...``) or one on a line naming ``where``
    (the staging folder) counts, not a notebook output a warning quotes.
    """
    for line in _ANSI.sub("", output).splitlines():
        if str(where) not in line and not _RAISED.match(line):
            continue
        for match in _ERRNO.finditer(line):
            number = int(match.group(1) or match.group(2))
            if number in FULL + NOT_WRITABLE:
                return number
    return None


@contextmanager
def _signals_held() -> Iterator[None]:
    """Within: SIGINT and SIGTERM wait (delivered on leaving), so a swap is never cut in two."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def swap_in(stage: Staging, target: Path) -> None:
    """Put the complete book of ``stage`` at ``target``; the previous one goes into ``stage``.

    Raises
    ------
    OSError
        If a rename fails (the previous book is then put back).
    """
    stage.complete.touch()
    with _signals_held():
        had = target.exists()
        if had:
            os.rename(target, stage.previous)
        try:
            os.rename(stage.html, target)
        except OSError:
            if had:
                os.rename(stage.previous, target)
            raise
