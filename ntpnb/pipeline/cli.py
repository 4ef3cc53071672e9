"""The ``ntpnb`` command: execute the notebooks, build the book, list what there is.

Examples
--------
``ntpnb reproduce``                     every notebook at the paper's settings
``ntpnb reproduce 01 --profile quick``  one notebook, seconds-scale
``ntpnb reproduce 01 -p n_g=11``        one notebook with a parameter changed (outputs/runs/...)
``ntpnb reproduce --jobs 1``            one notebook at a time (default: one per core)
``ntpnb reproduce --force``             rerun every notebook, changed or not
``ntpnb reproduce --no-wait``           refuse, rather than wait, if another run uses the outputs
``ntpnb book``                          build the HTML book from the executed notebooks
``ntpnb book --run-missing quick``      first execute, at the quick profile, the notebooks not yet run
``ntpnb list``                          the notebooks and their parameters per profile
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from ..errors import NTPError, RunInterruptedError
from .benchmarks_page import write_benchmarks_page
from .lock import output_lock
from .paths import DEFAULT_OUTPUT_DIRNAME, OutputLayout, find_project_root, output_layout
from .profiles import PROFILE_NAMES, PROFILES, parse_overrides
from .report import verdict_summary, write_report
from .reproduce import notebook_sources, reproduce

__all__ = ["main", "build_book"]


def _root(arg: str | None) -> Path:
    return find_project_root(arg) if arg else find_project_root()


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


def build_book(root: Path, run_missing: str | None = None, wait: bool = True) -> int:
    """Write the generated pages, then build the HTML book at ``root``; return the exit code.

    The generated pages are the reproducibility report and the benchmarks page (from the last
    ``python -m benchmarks`` run, or a page that says none was run). The build holds the output
    lock (:mod:`ntpnb.pipeline.lock`), so it reads the outputs of finished runs only.

    Sphinx runs with ``-W -n --keep-going``: any warning fails the build.

    Parameters
    ----------
    root
        Project root.
    run_missing
        A profile: first execute, at that profile, the notebooks that have no executed copy.
    wait
        If a run is writing the outputs, wait for it (the default) or raise.

    Raises
    ------
    NTPError
        If a notebook has no executed copy (naming the command that makes it), or jupyter-book
        is not installed.
    """
    jb = Path(sys.executable).parent / "jupyter-book"
    if not jb.exists():
        raise NTPError(f"jupyter-book is not installed next to {sys.executable}; install ntpnb[book]")
    layout = output_layout(root / DEFAULT_OUTPUT_DIRNAME)
    missing = missing_notebooks(root, layout)
    if missing and run_missing:
        print(f"ntpnb: executing the notebooks not run yet ({', '.join(missing)}) at profile {run_missing}")
        reproduce(root, missing, run_missing, layout.root, wait=wait)
    with output_lock(layout.root, wait=wait):
        missing = missing_notebooks(root, layout)
        if missing:
            raise NTPError(_missing_message(root, layout, missing))
        print(f"ntpnb: wrote the reproducibility report {write_report(layout)}")
        print(f"ntpnb: verdicts of the last runs: {verdict_summary(layout)}")
        print(f"ntpnb: wrote the benchmarks page {write_benchmarks_page(layout)}")
        cmd = [str(jb), "build", str(root), "-W", "-n", "--keep-going"]
        return subprocess.call(cmd)


def _cmd_reproduce(args: argparse.Namespace) -> int:
    root = _root(args.root)
    overrides = parse_overrides(args.param)
    results = reproduce(
        root,
        args.names,
        args.profile,
        args.out,
        overrides=overrides,
        jobs=args.jobs,
        force=args.force,
        wait=not args.no_wait,
    )
    failed = [r for r in results if not r.ok]
    total = sum(r.seconds for r in results)
    if failed:
        print(f"{len(failed)} of {len(results)} notebooks failed ({total:.1f} s):", file=sys.stderr)
        for r in failed:
            print(f"  {r.name}: {r.error}\n    executed notebook kept at {r.executed}", file=sys.stderr)
        return 1
    out = results[0].executed.parent.parent
    cached = sum(r.cached for r in results)
    skipped = f", {cached} unchanged and not rerun" if cached else ""
    print(
        f"all {len(results)} notebooks ok ({total:.1f} s of notebook time{skipped}, "
        f"profile {args.profile}); outputs in {out}"
    )
    return 0


def _cmd_book(args: argparse.Namespace) -> int:
    return build_book(_root(args.root), run_missing=args.run_missing, wait=not args.no_wait)


def _cmd_list(args: argparse.Namespace) -> int:
    root = _root(args.root)
    for source in notebook_sources(root):
        print(source.stem)
        for profile in PROFILE_NAMES:
            values = PROFILES.get(source.stem, {}).get(profile, {})
            shown = ", ".join(f"{k}={v}" for k, v in values.items())
            print(f"  {profile:<6} {shown}")
    print("change one for a run: ntpnb reproduce NAME -p KEY=VALUE (outputs go to outputs/runs/)")
    return 0


_NO_WAIT = "if another ntpnb command is using the output folder, stop at once instead of waiting"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ntpnb", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    rep = sub.add_parser("reproduce", help="execute notebooks with papermill (all by default)")
    rep.add_argument("names", nargs="*", help="notebook names or unique prefixes (default: all)")
    rep.add_argument("--profile", choices=PROFILE_NAMES, default="paper", help="default: paper")
    rep.add_argument(
        "-p",
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one parameter of the profile (repeatable); outputs go to outputs/runs/...",
    )
    rep.add_argument(
        "--out", default=None, help="output folder (default: <root>/outputs, or outputs/runs/... with -p)"
    )
    rep.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=None,
        help="notebooks run in parallel, one kernel each (default: one per CPU core)",
    )
    rep.add_argument(
        "--force",
        action="store_true",
        help="execute even the notebooks unchanged (source, parameters, ntpnb) since their last success",
    )
    rep.add_argument("--no-wait", action="store_true", help=_NO_WAIT)
    rep.add_argument("--root", default=None, help="project root (default: found from here)")
    rep.set_defaults(func=_cmd_reproduce)

    book = sub.add_parser("book", help="build the HTML book into <root>/_build/html")
    book.add_argument(
        "--run-missing",
        choices=PROFILE_NAMES,
        default=None,
        metavar="PROFILE",
        help="first execute the notebooks not run yet, at PROFILE (quick or paper)",
    )
    book.add_argument("--no-wait", action="store_true", help=_NO_WAIT)
    book.add_argument("--root", default=None, help="project root (default: found from here)")
    book.set_defaults(func=_cmd_book)

    lst = sub.add_parser("list", help="list the notebooks and their profile parameters")
    lst.add_argument("--root", default=None, help="project root (default: found from here)")
    lst.set_defaults(func=_cmd_list)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ntpnb`` console script."""
    args = _parser().parse_args(argv)
    try:
        return int(args.func(args))
    except RunInterruptedError as exc:
        print(f"ntpnb: {exc}", file=sys.stderr)
        return INTERRUPTED
    except KeyboardInterrupt:
        print("ntpnb: interrupted; completed outputs kept; rerun to resume", file=sys.stderr)
        return INTERRUPTED
    except NTPError as exc:
        print(f"ntpnb: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file the pipeline could not read or write: one line, no traceback
        where = f": {exc.filename}" if exc.filename else ""
        print(f"ntpnb: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2


#: The exit status of an interrupted command (128 + SIGINT, as a shell reports it).
INTERRUPTED = 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
