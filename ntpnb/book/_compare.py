"""Compare two runs, to see whether another machine printed the same numbers and decided the same.

``ntpnb compare RUN_A RUN_B`` first says how the two runs' settings differ (profile, ``-p``
overrides, seeds, ntpnb version: :func:`setting_differences`), then shows the platforms they
recorded (:mod:`ntpnb.records._platform`). It compares their claim records check by check
(:func:`compare_claims`: the decision, and the measured value to the check's own printed
precision), then the text outputs (printed lines and ``text/plain`` results) of their executed
notebooks line by line, in print order whatever the cells, after masking what legitimately
changes with nbval's rules (:data:`SANITIZE_CONFIG`: timings, memory addresses,
figure reprs). A changed decision or printed line exits 1. A chapter counts as run by its
executed notebook or its claim record: an interactive run (JupyterLab, papermill) keeps only the
record, so it compares by its claim checks (:func:`run_chapters`). Two explore trees (``ntpnb
explore``: an ``explore.json`` at their roots) compare point by point, each point at each seed as
two runs (:func:`compare_explores`).
"""

from __future__ import annotations

import configparser
import difflib
import re
import sys
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import PathError
from ..evidence._checks import Check
from ..evidence._series import keyed
from ..records._files import read_record
from ..records._manifest import Manifest, load_manifest
from ..records._ownership import is_explore_tree
from ..records._places import EXPLORE_RECORD, OutputTree
from ..records._run import load_chapter_run
from ..records._tree import TreeRecord, load_tree_record
from ._executed import is_text, read_notebook
from ._trees import rerun_advice, run_folder, visible

#: The masking rules of nbval (``--nbval-sanitize-with``) and of :func:`compare_runs`: one file.
SANITIZE_CONFIG = Path(__file__).parent / "static" / "nbval_sanitize.cfg"


@dataclass(frozen=True)
class OutputDifference:
    """Printed lines ``a``, ``b`` that differ from cell ``cell`` on (-1: a notebook one run lacks)."""

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


class Comparison(NamedTuple):
    """What :func:`compare_runs` found: the chapters both runs ran, and how their printed lines differ."""

    #: The chapters both runs ran (an executed notebook or a claim record in each), by name.
    both: list[str]
    #: Every run of printed lines that differs (cell -1: a chapter one run lacks).
    diffs: list[OutputDifference]
    #: The chapters of ``both`` whose printed lines were not compared, and which run kept no
    #: executed notebook of it (an interactive run keeps its claim records, not its notebook).
    unprinted: dict[str, Path]


def run_chapters(run: Path) -> dict[str, Path | None]:
    """The chapters the output tree ``run`` ran, by name: its notebook, or None (a claim record only)."""
    notebooks = visible(sorted((run / "notebooks").glob("*.ipynb")))
    executed: dict[str, Path | None] = {p.stem: p for p in notebooks if not p.stem.endswith(".failed")}
    claimed = {p.stem: None for p in visible(sorted((run / "claims").glob("*.json")))}
    return dict(sorted({**claimed, **executed}.items()))


def compare_runs(run_a: Path, run_b: Path) -> Comparison:
    """The chapters both runs ran, every run of printed lines that differs, the chapters not compared so.

    A chapter counts as run by its executed notebook or its claim record (:func:`run_chapters`);
    its printed lines compare where both runs kept its executed notebook.

    Raises
    ------
    PathError
        If a run is not an output tree (:func:`~._trees.run_folder`), or an executed notebook
        does not read (with the command that runs it again).
    """
    rules = sanitizers()
    a, b = (run_chapters(run_folder(run)) for run in (run_a, run_b))
    diffs = [
        OutputDifference(
            name, -1, "executed" if name in a else "missing", "executed" if name in b else "missing"
        )
        for name in sorted(set(a) ^ set(b))
    ]
    both = sorted(set(a) & set(b))
    unprinted = {name: run for name in both for run, found in ((run_a, a), (run_b, b)) if found[name] is None}
    for name in (n for n in both if n not in unprinted):
        la, lb = (
            _printed_lines(Path(run), notebooks[name], name, rules)
            for run, notebooks in ((run_a, a), (run_b, b))
        )
        diffs += _line_differences(name, la, lb)
    return Comparison(both, diffs, unprinted)


def _printed_lines(
    run: Path, executed: Path, name: str, rules: list[tuple[re.Pattern[str], str]]
) -> list[tuple[int, str]]:
    """Every printed line of the executed notebook ``executed`` of chapter ``name`` in ``run``, with its cell.

    Lines are sanitized by ``rules`` (:func:`sanitizers`) as :func:`_cell_text` does.

    Raises
    ------
    PathError
        If the notebook does not read, with the command that runs it again in its setting.
    """
    try:
        cells = read_notebook(executed)["cells"]
    except PathError as exc:
        raise PathError(f"{exc}; {rerun_advice([name], _run_record(run), run)}") from None
    texts = [_cell_text(cell, rules) for cell in cells]
    return [(cell, line) for cell, text in enumerate(texts) for line in text.splitlines()]


def _line_differences(
    name: str, la: Sequence[tuple[int, str]], lb: Sequence[tuple[int, str]]
) -> list[OutputDifference]:
    """The runs of differing printed lines of chapter ``name`` between two runs, each at its first cell."""
    diffs = []
    matcher = difflib.SequenceMatcher(None, [x for _, x in la], [x for _, x in lb], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            cell = la[i1][0] if i1 < i2 else (lb[j1][0] if j1 < j2 else -1)
            x = "\n".join(x for _, x in la[i1:i2]) or "<no line>"
            y = "\n".join(y for _, y in lb[j1:j2]) or "<no line>"
            diffs.append(OutputDifference(name, cell, x, y))
    return diffs


def _run_record(run: Path) -> TreeRecord | None:
    """The run record of ``run`` (None when it has none or it does not read)."""
    try:
        return load_tree_record(Path(run))
    except PathError:
        return None


def setting_differences(run_a: Path, run_b: Path) -> list[str]:
    """How the settings in two runs' records and manifests differ: ``profile: paper | quick``, a line each."""
    a, b = _run_record(run_a), _run_record(run_b)
    if a is None or b is None:
        return []
    sources, chapters = [], []
    for run in (run_a, run_b):  # the ntpnb sources its chapters ran with, and their own sources
        manifests = _manifests(Path(run))
        found = {manifest.package for manifest in manifests.values()}
        sources.append(", ".join(sorted(f[:12] for f in found if f)) or "unknown")
        edited = [f"{name} {m.commit.changes}" for name, m in manifests.items() if m.commit.changes]
        chapters.append("; ".join(edited) or "as committed")
    shown = {
        "profile": (a.profile, b.profile),
        "overrides": tuple(r.overrides_text or "none" for r in (a, b)),
        "seeds": tuple(", ".join(map(str, r.seeds)) or "none" for r in (a, b)),
        "run": tuple("interactive" if r.interactive else "ntpnb reproduce" for r in (a, b)),
        "ntpnb version": (a.version or "unknown", b.version or "unknown"),
        "ntpnb sources": tuple(sources),
        "chapter sources": tuple(chapters),
    }
    return [f"{what}: {x} | {y}" for what, (x, y) in shown.items() if x != y]


def _manifests(run: Path) -> dict[str, Manifest]:
    """The manifest of each chapter the run ``run`` completed, by name (one that does not read left out)."""
    found = {}
    for path in sorted((run / "notebooks").glob("*.key.json")):
        name = path.name.removesuffix(".key.json")
        with suppress(PathError):
            found[name] = load_manifest(path.with_name(f"{name}.ipynb"))
    return found


@dataclass(frozen=True)
class CheckDifference:
    """A claim check whose decision or printed value differs between two runs (None: missing in one)."""

    notebook: str
    label: str  # the claim id with its kind, and what it checks
    a: Check | None
    b: Check | None
    #: Whether the check passed in one run and not in the other (or ran in one only).
    decision_changed: bool


def compare_claims(run_a: Path, run_b: Path, notebooks: Sequence[str]) -> list[CheckDifference]:
    """The checks of ``notebooks`` that differ between the claim records of the two runs, in run A's order.

    A check differs by its decision or by its measured value as printed (to its own precision).
    """
    diffs = []
    for name in notebooks:
        try:  # the checks of each run's record, matched as :func:`~ntpnb.evidence._series.keyed` says
            a, b = (
                keyed(load_chapter_run(Path(run) / "claims" / f"{name}.json").checks)
                for run in (run_a, run_b)
            )
        except PathError:  # a run that keeps no record of it: its printed lines compare
            continue
        for key in [*a, *(k for k in b if k not in a)]:
            x, y = a.get(key), b.get(key)
            changed = x is None or y is None or x.passed != y.passed
            if changed or x.measured != y.measured:  # type: ignore[union-attr]
                c = x or y
                diffs.append(CheckDifference(name, f"{c.label} {c.what}", x, y, changed))  # type: ignore[union-attr]
    return diffs


def platform_line(run: Path) -> str:
    """The CPU and BLAS kernels the chapters of ``run`` recorded, distinct ones, as one line."""
    seen: list[str] = []
    for path in sorted((run / "claims").glob("*.json")):
        try:
            info = load_chapter_run(path).platform
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
        if (line := f"{info.get('cpu')}; {kernels}") not in seen:
            seen.append(line)
    return f"{run}: " + (" | ".join(seen) if seen else "no platform recorded")


def check_difference_lines(checks: Sequence[CheckDifference]) -> list[str]:
    """The claim checks decided otherwise, then those measured otherwise, each group under its count."""
    lines = []
    for changed in (True, False):  # "  01_x A1 what: PASS measured 1.000 | FAIL measured 0.5000"
        if group := [d for d in checks if d.decision_changed == changed]:
            how = "decided" if changed else "measured otherwise, to the printed precision (decided the same)"
            lines.append(f"{len(group)} claim check{'s' * (len(group) != 1)} {how}{' otherwise' * changed}:")
            for d in group:
                x, y = (f"{c.result} measured {c.measured}" if c else "not checked" for c in (d.a, d.b))
                lines.append(f"  {d.notebook} {d.label}: {x} | {y}")
    return lines


def sameness_line(both: Sequence[str], unprinted: Mapping[str, Path]) -> str:
    """What two runs that differ in nothing share: every notebook's output, or (interactive) the checks."""
    if not unprinted:
        count = "the 1 notebook" if len(both) == 1 else f"all {len(both)} notebooks"
        return f"the same printed outputs and claim checks in {count} both runs executed"
    count = "the 1 chapter" if len(both) == 1 else f"all {len(both)} chapters"
    printed = len(both) - len(unprinted)
    lines = f"the same printed outputs in {printed} of them" if printed else "printed lines compared in none"
    return f"the same claim checks in {count} both runs ran ({lines})"


def output_difference_lines(diffs: Sequence[OutputDifference]) -> list[str]:
    """Each differing run of printed lines, by its first line that differs (else the last of each)."""
    lines = [f"{len(diffs)} run{'s' * (len(diffs) != 1)} of printed lines differ:"] if diffs else []
    for d in diffs:
        where = "notebook" if d.cell < 0 else f"cell {d.cell}"
        pairs = zip(d.a.splitlines(), d.b.splitlines(), strict=False)
        x, y = next(
            ((x, y) for x, y in pairs if x != y), (d.a.splitlines()[-1:] or "", d.b.splitlines()[-1:] or "")
        )
        lines.append(f"  {d.notebook} {where}:\n    - {x}\n    + {y}")
    return lines


def print_comparison(run_a: Path, run_b: Path) -> int:
    """Print how two runs' settings differ, their platforms, the claim checks and printed lines that differ.

    Two explore trees compare point by point (:func:`compare_explores`).

    Returns the exit code: 0 if every decision and printed output is the same, 1 if some differ,
    2 if a run cannot be read.
    """
    explores = [is_explore_tree(Path(run)) for run in (run_a, run_b)]
    if any(explores):
        return compare_explores(Path(run_a), Path(run_b))
    try:
        both, diffs, unprinted = compare_runs(run_a, run_b)
    except PathError as exc:
        print(f"ntpnb: error: {exc}", file=sys.stderr)
        return 2
    _print_settings(run_a, run_b)
    for run in (run_a, run_b):
        print(platform_line(run))
    for line in _unprinted_lines(unprinted):
        print(line)
    checks = compare_claims(run_a, run_b, both)
    lines = check_difference_lines(checks)
    if not diffs and not checks:
        print(sameness_line(both, unprinted))
        return 0
    print("\n".join(lines + output_difference_lines(diffs)))
    return 1


def _print_settings(run_a: Path, run_b: Path) -> None:
    """Print how the two runs' settings differ, and which run has no run record to compare."""
    settings = setting_differences(run_a, run_b)
    unknown = [str(run) for run in (run_a, run_b) if _run_record(run) is None]
    if unknown:
        print(f"settings not compared: no run record (run.json) in {' and '.join(unknown)}")
    if settings:
        print(f"the two runs' settings differ ({run_a} | {run_b}):")
        print("".join(f"  {line}\n" for line in settings), end="")


def _unprinted_lines(unprinted: Mapping[str, Path]) -> list[str]:
    """A line per run that kept no executed notebook of the chapters ``unprinted`` (name -> that run).

    An interactive run keeps only its claim records: its chapters are compared by them.
    """
    lines = []
    for run in dict.fromkeys(unprinted.values()):
        names = ", ".join(name for name, where in unprinted.items() if where == run)
        lines.append(
            f"printed lines not compared for {names}: {run} kept no executed notebook of "
            f"{'it' if ',' not in names else 'them'} (an interactive run keeps only its claim records); "
            "the claim checks are compared"
        )
    return lines


def explore_runs(tree: Path) -> dict[str, Path]:
    """The runs of the explore tree ``tree``, by ``<point> seed S``: each point at each seed it ran.

    The points are those its ``explore.json`` names, each at its first seed in the point's tree
    and at its further seeds on disk; a run is named by the seed it ran at, so two trees that
    ran at other seeds share no run.

    Raises
    ------
    PathError
        If ``tree`` has no readable ``explore.json`` naming its points and seeds.
    """
    setting = explore_setting(tree)
    runs = {}
    for folder in setting["points"]:
        point = OutputTree(tree / folder)
        runs[f"{Path(folder).name} seed {setting['seeds'][0]}"] = point.root
        runs |= {f"{Path(folder).name} seed {seed}": seeds.root for seed, seeds in point.seed_trees().items()}
    return runs


def explore_setting(tree: Path) -> dict[str, Any]:
    """What ``explore.json`` of ``tree`` says defines it: chapter, profile, axes, fixed, seeds, points.

    Raises
    ------
    PathError
        If it does not read, or lacks one of them.
    """

    def setting(data: Any) -> dict[str, Any]:
        dirs = [point["dir"] for point in data["points"]]
        seeds = data["seeds"]
        if not all(isinstance(d, str) for d in dirs):
            raise ValueError("a point's 'dir' is not a text")
        if not isinstance(seeds, list) or not seeds or not all(type(s) is int for s in seeds):
            raise ValueError("'seeds' is not a list of integers")
        axes = [f"{a['name']}={a.get('spec') or ','.join(map(str, a['values']))}" for a in data["axes"]]
        fixed = data.get("fixed", {})
        return {
            "chapter": str(data["chapter"]),
            "profile": str(data["profile"]),
            "axes": axes,
            "fixed": {str(k): v if isinstance(v, str) else repr(v) for k, v in fixed.items()},
            "seeds": seeds,
            "version": str(data.get("version", "")),
            "points": dirs,
        }

    return read_record(tree / EXPLORE_RECORD, "explore record", setting)


def explore_setting_differences(tree_a: Path, tree_b: Path) -> list[str]:
    """How the settings of two explore trees differ: ``seeds: 0, 1 | 0``, a line each (none if equal).

    Raises
    ------
    PathError
        If a tree's ``explore.json`` does not read (:func:`explore_setting`).
    """
    a, b = explore_setting(tree_a), explore_setting(tree_b)

    def shown(setting: Mapping[str, Any]) -> dict[str, str]:
        fixed = ", ".join(f"{k}={v}" for k, v in sorted(setting["fixed"].items()))
        return {
            "chapter": setting["chapter"],
            "profile": setting["profile"],
            "axes": "; ".join(setting["axes"]),
            "fixed": fixed or "none",
            "seeds": ", ".join(map(str, setting["seeds"])),
            "ntpnb version": setting["version"] or "unknown",
        }

    x, y = shown(a), shown(b)
    return [f"{what}: {x[what]} | {y[what]}" for what in x if x[what] != y[what]]


def compare_explores(tree_a: Path, tree_b: Path) -> int:
    """Print how two explore trees differ: first their settings, then run by run (each point at each seed).

    Settings that differ come first (:func:`explore_setting_differences`), as for two runs. Each
    run both trees hold (the same point at the same seed) compares as :func:`compare_runs` and
    :func:`compare_claims` compare two runs; a run one tree lacks is named. The platform shown is
    each tree's first run's. Returns the exit code of :func:`print_comparison`.
    """
    try:
        if not all(is_explore_tree(tree) for tree in (tree_a, tree_b)):
            raise PathError(
                f"one of {tree_a} and {tree_b} is an explore tree, the other not: compare two of them"
            )
        settings = explore_setting_differences(tree_a, tree_b)
        a, b = explore_runs(tree_a), explore_runs(tree_b)
        lines = [f"{label}: only in {tree_a if label in a else tree_b}" for label in sorted(set(a) ^ set(b))]
        shared = [label for label in a if label in b]
        for label in shared:
            both, diffs, _ = compare_runs(a[label], b[label])
            found = check_difference_lines(compare_claims(a[label], b[label], both))
            found += output_difference_lines(diffs)
            lines += [f"{label}:", *(f"  {line}" for line in found)] if found else []
    except PathError as exc:
        print(f"ntpnb: error: {exc}", file=sys.stderr)
        return 2
    if settings:  # first, as for two runs: the runs of such trees are not the same runs
        print(f"the two explore trees' settings differ ({tree_a} | {tree_b}):")
        print("".join(f"  {line}\n" for line in settings), end="")
    for tree, runs in ((tree_a, a), (tree_b, b)):
        print(platform_line(next(iter(runs.values()))) if runs else f"{tree}: no runs")
    if not lines:
        print(f"the same printed outputs and claim checks in all {len(shared)} runs of the two explore trees")
        return 0
    print(f"the two explore trees differ ({len(shared)} runs in both):")
    print("\n".join(f"  {line}" for line in lines))
    return 1
