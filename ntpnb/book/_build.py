"""``ntpnb book``: check the tree, write the generated pages, build the HTML book atomically.

A book is built from one output tree (:mod:`._trees`; an unrun chapter gets a page saying so).
First every record the book reads is checked (:func:`._trees.verify_tree`: a damaged one is
refused in one line naming it and the command that remakes it); then the generated pages are
written into the tree (:mod:`._report`, the project's ``benchmarks.page``); a broken executed
notebook (an error, stderr output: :func:`broken_notebooks`) then fails the build at once; else
jupyter-book builds the book with ``-W -n --keep-going``, so any warning fails the build
(:mod:`.sphinx_ext` warns about a broken notebook too, for a build that does not start here).
Where Chromium is installed, the whole book is then printed to one PDF inside the HTML book
(:func:`make_pdf`, :mod:`._pdf`).

The build is atomic. A book goes to a *site* folder (``<root>/_build``, or ``DIR/_book`` for
``ntpnb book --run DIR``) as ``<site>/html``. A build removes stopped builds' staging folders
(:func:`clear_stale`), copies the book's sources and the output tree into a fresh one
(:func:`stage_sources`), runs jupyter-book there in a session of its own
(:func:`run_owned`, so Ctrl-C leaves no builder process) and, only when it exits 0, swaps the new
``html`` in (:func:`swap_in`). Nothing of an earlier build can leak into a later one, and the last
complete book stays until a new one is complete. An unwritable or full folder is refused in one
line (:func:`site_error`).
"""

from __future__ import annotations

import errno
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from .._extras import missing_extra
from ..errors import NTPError
from ..records._manifest import manifest_path
from ..records._places import notebook_sources, subfolder
from ..records._tree import RUN_RECORD_NAME, chapter_seeds
from ..settings import STOP_CHECK_SECONDS
from ._executed import notebook_problems
from ._footers import stage_seeds
from ._glossary import write_glossary_page
from ._pdf import PDF_ENV, PDF_NAME, SCREENSHOT_CHAPTER, SCREENSHOT_NAME, missing_printer, single_page
from ._progress import StepProgress, printer_phase, sphinx_phase
from ._report import read_tree, verdict_summary, write_report
from ._trees import BOOK_SITE_DIRNAME, RUN_SITE_DIRNAME, BookTree, describe_unrunnable, shown, verify_tree

#: The book's folder inside its site.
HTML_DIRNAME = "html"
#: The name of a staging folder starts so (then the builder's process id and a random part).
STAGING_PREFIX = ".staging-"
#: The pages ``ntpnb book`` generates into the output tree, which the book shows.
GENERATED_PAGES = ("report.md", "claim_list.md", "verdicts.md", "verdicts.json", "benchmarks.md")
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
    #: Where it writes the single-page edition that is printed to the PDF.
    single = subfolder("_build", "singlehtml", of="path")
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


def book_config(root: Path, title: str | None = None) -> str:
    """The project's ``_config.yml``, its ``title:`` line replaced by ``title`` if given (comments kept)."""
    config = (root / "_config.yml").read_text(encoding="utf-8")
    if title is None:
        return config
    line = f"title: {json.dumps(title, ensure_ascii=False)}"
    return re.sub(r"^title:.*$", lambda _: line, config, count=1, flags=re.MULTILINE)


def stage_sources(book: BookTree, source: Path, missing: Sequence[str]) -> None:
    """Copy into ``source`` the book of ``book``'s project around its tree; a page per ``missing`` chapter.

    A tree that is not the book's own retitles the book after what ran into it.
    """
    root, tree = book.root, book.tree
    ignore = shutil.ignore_patterns(".*", "__pycache__")
    source.mkdir()
    title = None if book.own else f"ntpnb, a run of {book.label()}"
    (source / "_config.yml").write_text(book_config(root, title), encoding="utf-8")
    shutil.copy2(root / "_toc.yml", source / "_toc.yml")
    shutil.copytree(root / "book", source / "book", ignore=ignore)
    outputs = source / "outputs"
    (source / "notebooks").mkdir()
    (outputs / "notebooks").mkdir(parents=True)
    for chapter in notebook_sources(root):
        shutil.copy2(chapter, source / "notebooks" / chapter.name)
        executed = tree.notebooks / f"{chapter.stem}.ipynb"
        # the executed notebook, and its manifest and the run record, which its footer quotes
        for path in (executed, manifest_path(executed)):
            if path.is_file():
                shutil.copy2(path, outputs / "notebooks" / path.name)
    if (tree.root / RUN_RECORD_NAME).is_file():
        shutil.copy2(tree.root / RUN_RECORD_NAME, outputs / RUN_RECORD_NAME)
    stage_seeds(outputs, chapter_seeds(tree.root, book.record))  # the staged copy has no seed trees
    for page in GENERATED_PAGES:
        shutil.copy2(tree.root / page, outputs / page)
    write_glossary_page(outputs)  # the same for every tree: made with the book, not kept in it
    if tree.benchmarks.is_dir():  # the benchmarks page shows its plots from there
        shutil.copytree(tree.benchmarks, outputs / tree.benchmarks.name, ignore=ignore)
    for name in missing:
        (outputs / "notebooks" / f"{name}.md").write_text(_missing_page(book, name), encoding="utf-8")


def _missing_page(book: BookTree, name: str) -> str:
    """The page of a chapter that has not run into ``book``: its source's title, and how to run it."""
    try:
        lines = (book.root / "notebooks" / f"{name}.md").read_text(encoding="utf-8").splitlines()
    except OSError:
        lines = []
    title = next((line[2:].strip() for line in lines if line.startswith("# ")), name)
    return (
        f"# {title}\n\n```{{note}}\nThis chapter has not run into the tree this book shows "
        f"(`{shown(book.tree.root)}`: {book.label()}). {book.missing_advice(name)}\n```\n"
    )


def run_owned(
    command: Sequence[str],
    cwd: Path,
    env: Mapping[str, str] | None = None,
    progress: StepProgress | None = None,
) -> tuple[int, str]:
    """Run ``command`` in a session of its own (in ``env``, else ours); its exit code and stdout + stderr.

    Its output is read line by line as it comes, each line given to ``progress`` (which says the
    step's phase, and never stays silent: :class:`~._progress.StepProgress`). If anything raises
    meanwhile (Ctrl-C, SIGTERM as turned into KeyboardInterrupt by ``ntpnb``), the child's process
    group is ended before the exception goes on. The wait wakes every
    :data:`~ntpnb.settings.STOP_CHECK_SECONDS`, so such a signal is acted on even when it landed on
    another thread (a blocking read of the child's output would hold it until the build ended).
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
        env=None if env is None else dict(env),
    )
    lines: queue.Queue[str | None] = queue.Queue()
    reader = threading.Thread(target=_read_lines, args=(proc, lines), daemon=True)
    reader.start()
    output: list[str] = []
    try:
        while (line := _next_line(lines, progress)) is not None:
            output.append(line)
        proc.wait()
    except BaseException:  # end the child's process group: SIGTERM, then SIGKILL 3 s later
        for signum in (signal.SIGTERM, signal.SIGKILL):
            with suppress(ProcessLookupError, PermissionError):  # the group is gone
                if hasattr(os, "killpg"):
                    os.killpg(proc.pid, signum)
                else:  # pragma: no cover - not POSIX
                    proc.kill()
            with suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=3.0)
        proc.wait()
        raise
    return proc.returncode, "".join(output)


def _read_lines(proc: subprocess.Popen, lines: queue.Queue[str | None]) -> None:
    """Put each line of ``proc``'s output into ``lines`` as it comes, then None (a thread of its own)."""
    assert proc.stdout is not None
    with proc.stdout:
        for line in proc.stdout:
            lines.put(line)
    lines.put(None)


def _next_line(lines: queue.Queue[str | None], progress: StepProgress | None) -> str | None:
    """The next line of the output in ``lines`` (None at its end), given to ``progress`` as it comes.

    While none comes, ``progress`` is told every :data:`~ntpnb.settings.STOP_CHECK_SECONDS`.
    """
    while True:
        try:
            line = lines.get(timeout=STOP_CHECK_SECONDS)
        except queue.Empty:
            if progress is not None:
                progress.tick()
            continue
        if line is not None and progress is not None:
            progress.line(line)
        return line


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
    """The lines of a failed jupyter-book run worth showing: its warnings and Sphinx's error, uncoloured."""
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


def swap_in(stage: Staging, target: Path) -> None:
    """Put the complete book of ``stage`` at ``target``; the previous one goes into ``stage``.

    If a rename fails, the previous book is put back and the OSError raised. SIGINT and SIGTERM
    wait meanwhile (delivered on leaving), so a swap is never cut in two.
    """
    stage.complete.touch()
    main = hasattr(signal, "pthread_sigmask") and threading.current_thread() is threading.main_thread()
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM}) if main else None
    try:
        had = target.exists()
        if had:
            os.rename(target, stage.previous)
        try:
            os.rename(stage.html, target)
        except OSError:
            if had:
                os.rename(stage.previous, target)
            raise
    finally:
        if held is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)


def jupyter_book() -> Path:
    """The ``jupyter-book`` command installed beside this Python.

    Raises
    ------
    NTPError
        If it is not installed.
    """
    jb = Path(sys.executable).parent / "jupyter-book"
    if not jb.exists():
        raise NTPError(missing_extra("a book", "jupyter-book", "book"))
    return jb


def missing_notebooks(book: BookTree) -> list[str]:
    """The chapters of the project that have no executed copy in ``book``."""
    return [name for name in book.chapters() if not (book.tree.notebooks / f"{name}.ipynb").is_file()]


def make_pdf(build: Sequence[str], stage: Staging, env: Mapping[str, str]) -> tuple[int, str]:
    """Print the book staged in ``stage`` into its HTML book; the exit code and output of the last step run.

    ``build`` (the HTML build's command) makes the single-page edition from the same doctrees,
    then Chromium prints it (:mod:`._pdf`) and takes the README's screenshot of a chapter.
    """
    single = StepProgress("the single page to print", sphinx_phase)
    code, output = run_owned([*build, "--keep-going", "--builder", "singlehtml"], stage.path, env, single)
    if code != 0:
        return code, output
    page = single_page(stage.single, stage.source)
    printer = [sys.executable, "-m", "ntpnb.book._pdf", str(page), str(stage.html / PDF_NAME)]
    chapter = stage.html / "outputs" / "notebooks" / f"{SCREENSHOT_CHAPTER}.html"
    if chapter.is_file():  # the README's screenshot, published with the book
        printer += [str(chapter), str(stage.html / SCREENSHOT_NAME)]
    return run_owned(printer, stage.path, progress=StepProgress("the PDF", printer_phase))


def write_benchmarks_page(book: BookTree) -> Path:
    """Write ``book``'s benchmarks page with the project's ``python -m benchmarks.page``; the page's path."""
    # run in the project, where the benchmarks live (they are not installed)
    command = [
        sys.executable,
        "-m",
        "benchmarks.page",
        str(book.tree.root),
        *(["--own"] if book.own else []),
    ]
    code, output = run_owned(
        command, book.root, progress=StepProgress("the benchmarks page", lambda line: None)
    )
    last = (output.strip().splitlines() or [f"exit status {code}"])[-1]
    if code != 0:
        raise NTPError(f"python {' '.join(command[1:])} failed in {book.root}: {last}")
    return Path(last)


#: What a command that runs chapters of a tree without a run record needs besides.
UNKNOWN_SETTING = f"with the --profile and -p it ran with (it has no {RUN_RECORD_NAME} to say)"


def unrun_refusal(book: BookTree, missing: Sequence[str]) -> str | None:
    """Why no book of ``book`` is built with the chapters ``missing`` unrun, and what runs them (None: it is).

    The book's own tree needs every chapter; another tree at least one.
    """
    everything = len(missing) == len(book.chapters())
    if not missing or not (book.own or everything):
        return None
    runnable, unrunnable = book.split_missing(missing)
    what = "no executed notebooks" if everything else "no executed notebook for " + ", ".join(missing)
    lines = [f"{what} in {shown(book.tree.notebooks)} ({book.label()})"]
    if runnable:
        lines[0] += f"; run `{book.reproduce_command(runnable)}` first"
        known = book.own or book.record is not None  # else --run-missing could not know it either
        lines[0] += f", or `{book.book_command()} --run-missing`" if known else f", {UNKNOWN_SETTING}"
    if unrunnable:
        lines[0] += f"; {describe_unrunnable(unrunnable)}"
    for name in missing:
        record = book.tree.failed / f"{name}.json"
        if record.is_file():
            lines.append(f"  the last run of {name} failed; see {record} and {record.with_suffix('.ipynb')}")
    return "\n".join(lines)


def unrun_note(book: BookTree, missing: Sequence[str]) -> str:
    """What a build of ``book`` says of its ``missing`` chapters: their pages say so, and what runs them."""
    runnable, unrunnable = book.split_missing(missing)
    them = ", ".join(runnable) if unrunnable else "them"
    if runnable and (book.own or book.record is not None):
        how = [f"`{book.book_command()} --run-missing` runs {them} in its setting"]
    elif runnable:
        how = [f"`{book.reproduce_command(runnable)}` runs {them}, {UNKNOWN_SETTING}"]
    else:
        how = []
    how += [describe_unrunnable(unrunnable)] if unrunnable else []
    return f"{shown(book.tree.root)} has not run {', '.join(missing)}: their pages say so ({'; '.join(how)})"


def build_book(book: BookTree, pdf: bool = True) -> int:
    """Check ``book``, write its generated pages, build its book and, if ``pdf``, its PDF; the exit code.

    The PDF is printed where Chromium is installed (:func:`~._pdf.missing_printer`); where it is not,
    the book says it has none.

    Call it holding ``book``'s output lock (``ntpnb book`` does), so it reads finished runs only.

    Raises
    ------
    NTPError
        If a chapter has no executed copy (naming the command that makes it), a record is
        damaged (naming it and the command that remakes it), the site folder cannot be written,
        or jupyter-book is not installed.
    """
    jupyter_book()  # installed, before anything is written
    missing = missing_notebooks(book)
    refusal = unrun_refusal(book, missing)
    if refusal:
        raise NTPError(refusal)
    verify_tree(book)
    print(f"ntpnb: the book of {shown(book.tree.root)}: {book.label()}")
    if missing:
        print(f"ntpnb: {unrun_note(book, missing)}")
    pages = read_tree(book.tree, missing)
    print(f"ntpnb: wrote the reproducibility report {shown(write_report(pages))}")
    print(f"ntpnb: verdicts of the last runs: {verdict_summary(pages.results)}")
    print(f"ntpnb: wrote the benchmarks page {shown(write_benchmarks_page(book))}")
    site = book.root / BOOK_SITE_DIRNAME if book.own else book.tree.root / RUN_SITE_DIRNAME
    broken = broken_notebooks(book)
    if broken:  # the build would fail on them: say so before Sphinx reads a page
        _print_failed_build(broken, site / HTML_DIRNAME)
        return 1
    return build_site(site, lambda source: stage_sources(book, source, missing), book.book_command(), pdf)


def broken_notebooks(book: BookTree) -> list[str]:
    """What keeps ``book``'s executed chapters out of the book, one line each (none: it can be built).

    The same problems (:func:`~._executed.notebook_problems`) that the Sphinx extension warns of,
    which ``-W`` makes fatal, found before the build starts.
    """
    executed = (book.tree.notebooks / f"{name}.ipynb" for name in book.chapters())
    return [
        f"executed notebook {path.name}: {problem}"
        for path in executed
        if path.is_file()
        for problem in notebook_problems(path)
    ]


def build_site(site: Path, sources: Callable[[Path], None], command: str, pdf: bool = True) -> int:
    """Build a book into ``<site>/html`` atomically from what ``sources(folder)`` copies; the exit code.

    The book's PDF too where ``pdf`` and Chromium is installed. ``command`` is the command that
    builds it again, which a message about the site folder names.

    Raises
    ------
    NTPError
        If the site folder cannot be written.
    """
    no_pdf = missing_printer() if pdf else "not asked for (--no-pdf)"
    if no_pdf:
        print(f"ntpnb: the book will have no PDF: {no_pdf}")
    env = {k: v for k, v in os.environ.items() if k != PDF_ENV} | ({} if no_pdf else {PDF_ENV: PDF_NAME})
    target = site / HTML_DIRNAME
    try:
        site.mkdir(parents=True, exist_ok=True)
        clear_stale(site)
        prefix = f"{STAGING_PREFIX}{os.getpid()}-"  # a fresh staging folder, removed on leaving
        with tempfile.TemporaryDirectory(prefix=prefix, dir=site, ignore_cleanup_errors=True) as path:
            stage = Staging(Path(path))
            sources(stage.source)
            build = [str(jupyter_book()), "build", str(stage.source), "--path-output", str(stage.path)]
            build += ["-W", "-n"]
            html = StepProgress("the HTML book", sphinx_phase)
            code, output = run_owned([*build, "--keep-going"], stage.path, env, html)
            if code == 0 and not no_pdf:
                code, output = make_pdf(build, stage, env)
            if code != 0:
                errno_ = disk_errno(output, stage.path)
                if errno_ is not None:
                    raise site_error(site, OSError(errno_, os.strerror(errno_)), command)
                _print_failed_build(build_messages(output), target)
                return code
            swap_in(stage, target)
    except OSError as exc:
        raise site_error(site, exc, command) from None
    print(f"ntpnb: the book is at {shown(target / 'index.html')}")
    if not no_pdf:
        print(f"ntpnb: the whole book as one PDF is at {shown(target / PDF_NAME)}")
    return 0


def _print_failed_build(messages: Sequence[str], target: Path) -> None:
    """Say (to standard error) why a build failed, one message a line, and whether a book is kept."""
    print("\n".join(messages), file=sys.stderr)
    kept = f"the last complete book in {shown(target)} is kept" if target.is_dir() else "no book"
    print(f"ntpnb: the book build failed ({kept}); its messages are above", file=sys.stderr)
