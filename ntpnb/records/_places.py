"""Where things are: the project root, its notebooks and the layout of generated outputs.

A project's chapters are the Jupytext sources ``<root>/notebooks/*.md``
(:func:`notebook_sources`). Everything a run or the book build generates goes under one output
folder (default ``<root>/outputs``, git-ignored)::

    outputs/notebooks/<name>.ipynb   executed notebooks (the book renders these)
    outputs/figures/<name>.png|.pdf  every figure of the papers, regenerated
    outputs/claims/<name>.json       every claim check a notebook made: value, target, pass/fail
    outputs/failed/<name>.*          the last failed run of a notebook: executed copy, error record
    outputs/timings.json             wall time of every notebook ``ntpnb reproduce`` executed, per profile
    outputs/report.md                the reproducibility report (``ntpnb book`` writes it)
    outputs/claim_list.md            the claims page, from the registry and the records (the same)
    outputs/verdicts.md              the verdict counts the introduction includes (the same)
    outputs/benchmarks/              ``python -m benchmarks``: benchmarks.md (tables), benchmarks.json
    outputs/benchmarks.md            the book's benchmarks page (``ntpnb book`` writes it)
    outputs/runs/<overrides>/        a run with ``-p KEY=VALUE`` overrides: the same layout, apart
    outputs/runs/interactive/<what>/ a notebook run outside ``ntpnb reproduce`` (JupyterLab, Binder,
                                     papermill): the same layout, apart; never the book's tree
    outputs/seeds/seed=<s>/          a further seed of the seed sweep: the same layout, apart (the
                                     book's figures and pages come from the book's seed, its
                                     verdicts from every seed)
    outputs/explore/<chapter>/<what>/ a grid of settings (``ntpnb explore``): ``explore.json``
                                     (:data:`EXPLORE_RECORD`), then ``points/<point>/``, each
                                     point's tree at the chapter's seed (its further seeds in
                                     its ``seeds/seed=<s>/``), and ``maps/``
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import NTPError, PathError

#: The output folder of the book's run, under the project root.
DEFAULT_OUTPUT_DIRNAME = "outputs"
_SEED_TREE = re.compile(r"^seed=(-?\d+)$")
#: The longest folder name of such a run; a longer one keeps its start, then a hash of all of it.
MAX_RUN_DIRNAME = 120
_MARKERS = ("_toc.yml", "notebooks")


#: The environment variable that, set to ``off``, tells a chapter to write no figures
#: (``ntpnb reproduce`` sets it for a sweep's further seeds).
FIGURES_VAR = "NTPNB_FIGURES"


def figures_wanted() -> bool:
    """Whether this run writes its figures (not when :data:`FIGURES_VAR` is ``off``)."""
    return os.environ.get(FIGURES_VAR, "").lower() != "off"


def find_project_root(start: str | Path | None = None) -> Path:
    """The nearest folder at or above ``start`` (default: the working one) with ``_toc.yml``, ``notebooks``.

    Raises
    ------
    NTPError
        If there is none.
    """
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if all((folder / marker).exists() for marker in _MARKERS):
            return folder
    raise NTPError(
        f"no ntpnb project (a folder with {' and '.join(_MARKERS)}) at or above {here}; "
        "run the command inside the repository, or point at it with --root PATH (every ntpnb command "
        "that reads the project takes it)"
    )


def notebook_sources(root: Path) -> list[Path]:
    """The Jupytext sources ``<root>/notebooks/*.md``, sorted by name."""
    return sorted((root / "notebooks").glob("*.md"))


def subfolder(*parts: str, of: str = "root") -> property:
    """A read-only attribute: the path ``parts`` below the folder in the attribute ``of``."""
    return property(lambda self: Path(getattr(self, of), *parts))


@dataclass(frozen=True)
class OutputTree:
    """The folders of one output tree (see the module docstring)."""

    root: Path
    notebooks = subfolder("notebooks")
    figures = subfolder("figures")
    claims = subfolder("claims")
    timings = subfolder("timings.json")
    failed = subfolder("failed")
    benchmarks = subfolder("benchmarks")
    sweep = subfolder("seeds")

    def seed_root(self, seed: int) -> Path:
        """The root of the tree of the sweep's seed ``seed``."""
        return self.sweep / f"seed={int(seed)}"

    def seed_trees(self) -> dict[int, OutputTree]:
        """The trees of the sweep's further seeds that exist, by seed (none when no sweep ran)."""
        found = {}
        for folder in self.sweep.glob("seed=*"):
            match = _SEED_TREE.match(folder.name)
            if match and folder.is_dir():
                found[int(match.group(1))] = OutputTree(folder)
        return dict(sorted(found.items()))


def output_tree(output_dir: str | Path | None = None) -> OutputTree:
    """The output tree rooted at ``output_dir`` (None: ``<project root>/outputs``), its folders made."""
    root = Path(output_dir) if output_dir is not None else find_project_root() / DEFAULT_OUTPUT_DIRNAME
    if root.exists() and not root.is_dir():
        raise PathError(f"the output folder {root} exists and is not a folder; choose another --out")
    try:
        tree = OutputTree(root.resolve())
        for folder in (tree.notebooks, tree.figures, tree.claims):
            folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        where = exc.filename or root
        problem = f"cannot create the output folder {where}: {exc.strerror}"
        raise PathError(f"{problem}; choose another --out") from exc
    return tree


#: The profile of the book's own run (its figures and pages are the papers' settings).
BOOK_PROFILE = "paper"
#: How many seeds a run executes by default (one for a run with ``-p`` overrides): the book's seed
#: and four more, so every verdict is measured across seeds (a sweep's trees: ``outputs/seeds/``).
DEFAULT_SEEDS = 5
#: Seeds per point of an explore unless ``--seeds`` says otherwise: the chapter's and two more, so that a map
#: shows at each point the share of seeds at which a check passes.
EXPLORE_SEEDS = 3


#: The folder of a project, beside ``notebooks/``, where a reader's edited copies of chapters are
#: saved from JupyterLab (git ignores it; ``ntpnb.lab``).
COPIES_DIRNAME = "my-notebooks"

#: The folder of ``outputs/runs/`` that holds the trees of notebooks run outside ``ntpnb reproduce``.
INTERACTIVE_DIRNAME = "interactive"


def exploratory_output_dir(
    root: Path, profile: str, overrides: Mapping[str, object], interactive: bool = False
) -> Path:
    """``<root>/outputs/runs/<name>``: where a run other than the book's writes.

    The name says what differs from the book's run: ``profile=quick``, then the overrides
    ``k1=v1,k2=v2``, e.g. ``profile=quick``, ``n_g=121,seed=3`` or ``profile=quick,n_g=5``;
    ``profile=paper`` when nothing differs. ``interactive``: a notebook run outside ``ntpnb
    reproduce``, in ``outputs/runs/interactive/<name>`` (``overrides``: the values that differ
    from the profile's).
    """
    parts: dict[str, object] = {"profile": profile} if profile != "paper" or not overrides else {}
    parts.update(sorted(overrides.items()))
    runs = root / DEFAULT_OUTPUT_DIRNAME / "runs"
    return (runs / INTERACTIVE_DIRNAME if interactive else runs) / folder_name(parts)


def folder_name(parts: Mapping[str, object]) -> str:
    """``k1=v1,k2=v2``: a folder named by settings, in their order, safe on any file system.

    A character other than a letter, digit or ``.,=+-`` becomes ``_``; a name longer than
    :data:`MAX_RUN_DIRNAME` keeps its start, then a hash of all of it.
    """
    name = ",".join(f"{k}={v}" for k, v in parts.items())
    name = re.sub(r"[^\w.,=+-]", "_", name)
    if len(name) > MAX_RUN_DIRNAME:  # file names have at most 255 bytes: keep a readable start
        digest = hashlib.sha256(name.encode()).hexdigest()[:16]
        name = f"{name[: MAX_RUN_DIRNAME - 17]}-{digest}"
    return name


#: The record of an explore tree, at its root: the grid, its seeds and its points' folders.
EXPLORE_RECORD = "explore.json"
#: The folder of an explore tree that holds a tree per point of its grid.
POINTS_DIRNAME = "points"


#: The folders of a project holding its sources (or built book): no output tree goes there, nor
#: at or above the project's root (the tree's ``notebooks/`` would be the sources').
SOURCE_FOLDERS = ("notebooks", "ntpnb", "book", "tests", "benchmarks", ".git", "_build")


def tree_root(
    root: Path,
    profile: str,
    overrides: Mapping[str, object],
    output_dir: str | Path | None,
    default: Path | None = None,
) -> Path:
    """The root of the output tree a run writes: the book's (for the book's run), its own, or ``output_dir``.

    ``default``: the tree the command writes without ``--out``, which a refusal suggests (a run
    of ``reproduce``'s by default: the book's, or :func:`exploratory_output_dir`).

    Raises
    ------
    NTPError
        If ``output_dir`` is the book's tree and the run is not the book's, or lies at the
        project's root, above it, or inside its sources (:data:`SOURCE_FOLDERS`).
    """
    project, book_tree = root.resolve(), (root / DEFAULT_OUTPUT_DIRNAME).resolve()
    book_run = profile == BOOK_PROFILE and not overrides  # the book's own run, at any number of seeds
    if default is None:
        default = book_tree if book_run else exploratory_output_dir(project, profile, overrides)
    if output_dir is None:
        return default
    tree = Path(output_dir).expanduser().resolve()
    if tree == project or tree in project.parents:
        raise NTPError(
            f"--out {output_dir} is the project's folder or above it: the run would write its "
            f"notebooks/ over the sources in {project / 'notebooks'}; choose a folder of its own"
        )
    for folder in SOURCE_FOLDERS:
        if tree.is_relative_to(project / folder):
            raise NTPError(
                f"--out {output_dir} lies inside the project's {folder}/; choose a folder of its own "
                f"(by default this run goes to {default})"
            )
    if tree == book_tree and not book_run:
        raise NTPError(
            f"--out {output_dir} is the book's own tree, which only the book's run writes (profile "
            f"{BOOK_PROFILE}, no -p); leave out --out (this run then goes to "
            f"{default}) or choose another folder"
        )
    return tree
