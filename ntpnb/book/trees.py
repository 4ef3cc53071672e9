"""The output tree a book is built from: which one, what ran into it, whether it can be trusted.

``ntpnb book`` builds ``<root>/outputs`` into ``<root>/_build/html``; ``ntpnb book --run DIR``
builds any other tree into ``DIR/_book/html``. Either way the tree is a :class:`BookTree`: its
layout and run record (:mod:`ntpnb.chapter.outputs`), the label its pages show
(:func:`describe_run`), and the command that reruns a chapter of it
(:meth:`BookTree.reproduce_command`).

Before a book is built, :func:`verify_tree` checks every chapter of the tree and of every seed
tree of its sweep (whose claim records the verdicts read): its outputs have the SHA-256 digests
its run recorded in its manifest ``notebooks/<name>.key.json``, its executed notebook reads
(:func:`~ntpnb.book.executed.read_notebook`) and its claim record too, so no claim is ever
reported *not tested* because its record is gone. A chapter without a manifest is trusted only
where its last run failed (the runner keeps the outputs of the last run that succeeded); a seed
whose last run failed is not counted by the verdicts, and not checked. Anything else refuses the
build with one line naming the first damaged file and the command that runs those chapters again.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..chapter.claims import load_chapter_record
from ..chapter.layout import (
    BOOK_PROFILE,
    DEFAULT_OUTPUT_DIRNAME,
    OutputLayout,
    notebook_sources,
    output_layout,
)
from ..chapter.outputs import (
    RUN_RECORD_NAME,
    RunRecord,
    chapter_damage,
    load_run_record,
    manifest_path,
)
from ..errors import NTPError, PathError
from .executed import read_notebook

#: The folder of the book of the book's own tree, at the project root (``_build/html``).
BOOK_SITE_DIRNAME = "_build"
#: The folder of the book of any other tree, inside that tree (``DIR/_book/html``).
RUN_SITE_DIRNAME = "_book"


def shown(path: Path) -> str:
    """``path`` as a message shows it: relative to the working directory when it lies below it."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def chapter_number(name: str) -> str:
    """The unique prefix ``ntpnb reproduce`` accepts for a chapter: ``01`` for ``01_entropy_...``."""
    return name.split("_", 1)[0]


def chapter_label(name: str) -> str:
    """The chapter's number as the book's sidebar shows it: ``5`` for ``05_overparameterization``."""
    prefix = chapter_number(name)
    return str(int(prefix)) if prefix.isdigit() else prefix


def describe_run(record: RunRecord | None, profiles: Sequence[str] = ()) -> str:
    """What ran into a tree, as its pages say it: its run record's, else the ``profiles`` its checks name."""
    if record is not None:
        return record.describe()
    if profiles:
        return (
            f"profile {', '.join(profiles)}, as its claim records say (it has no {RUN_RECORD_NAME}, the "
            "record of what ran, so any -p overrides are unknown)"
        )
    return f"nothing yet (no {RUN_RECORD_NAME} and no claim record)"


def setting_options(record: RunRecord | None) -> list[str]:
    """The ``ntpnb reproduce`` options (profile, ``-p``, seeds) of ``record``'s setting; none without one."""
    if record is None:
        return []
    words = [] if record.profile == BOOK_PROFILE else ["--profile", record.profile]
    for key, value in sorted(record.overrides.items()):
        words += ["-p", f"{key}={value}"]
    if record.seeds:
        words += ["--seeds", str(len(record.seeds))]
    return words


def _root_option(root: Path) -> str:
    """`` --root ROOT`` when the working directory is not inside the project (commands run from there)."""
    try:
        Path.cwd().resolve().relative_to(root)
    except (ValueError, OSError):
        return f" --root {shlex.quote(str(root))}"
    return ""


@dataclass(frozen=True)
class BookTree:
    """An output tree and what ran into it, as a book build sees it."""

    #: The project (resolved): its ``_config.yml``, ``_toc.yml``, ``book/`` and ``notebooks/``.
    root: Path
    #: The tree.
    layout: OutputLayout
    #: Its run record (None for a tree that has none: an older run).
    record: RunRecord | None

    @property
    def own(self) -> bool:
        """Whether this is the book's own tree, ``<root>/outputs``."""
        return self.layout.root == (self.root / DEFAULT_OUTPUT_DIRNAME).resolve()

    def chapters(self) -> list[str]:
        """The project's chapters, in order."""
        return [s.stem for s in notebook_sources(self.root)]

    def label(self) -> str:
        """What ran into the tree (:func:`describe_run`)."""
        return describe_run(self.record)

    def book_command(self) -> str:
        """The command that builds this tree's book."""
        run = "" if self.own else f" --run {shlex.quote(shown(self.layout.root))}"
        return f"ntpnb book{run}{_root_option(self.root)}"

    def reproduce_command(self, names: Sequence[str]) -> str:
        """The ``ntpnb reproduce`` command that runs the chapters ``names`` again into this tree.

        The book's tree reruns the book's run; another tree its run record's setting, with
        ``--out`` naming it.
        """
        chosen = [] if set(names) >= set(self.chapters()) else [chapter_number(n) for n in names]
        words = ["ntpnb", "reproduce", *chosen]
        if not self.own:
            words += [*setting_options(self.record), "--out", shown(self.layout.root)]
        return " ".join(shlex.quote(w) for w in words) + _root_option(self.root)

    def rerun_setting(self) -> tuple[str, dict[str, str], int | None]:
        """The profile, overrides and number of seeds (None: the default) that run its missing notebooks.

        Raises
        ------
        NTPError
            If the tree is not the book's and has no run record (its setting is unknown).
        """
        if self.own:
            return BOOK_PROFILE, {}, None
        if self.record is None:
            raise NTPError(
                f"{shown(self.layout.root)} has no {RUN_RECORD_NAME}, so what it ran (profile, -p) is "
                f"unknown; run its missing notebooks with `ntpnb reproduce NAME... --out "
                f"{shown(self.layout.root)}` and the --profile and -p it ran with"
            )
        return self.record.profile, dict(self.record.overrides), len(self.record.seeds) or None


def book_tree(root: Path, run: str | Path | None = None) -> BookTree:
    """The tree a book of the project at ``root`` is built from: ``run``, or the book's own.

    Raises
    ------
    NTPError
        If ``run`` is not an output tree, or the tree's ``run.json`` is damaged (naming it, and
        the command that writes it again).
    """
    root = Path(root).resolve()
    own = (root / DEFAULT_OUTPUT_DIRNAME).resolve()
    tree = own
    if run is not None:
        tree, example = Path(run).expanduser(), "e.g. outputs/runs/profile=quick"
        if not tree.exists():
            raise NTPError(f"--run {run}: no such folder; give the output folder of a run ({example})")
        if not tree.is_dir():
            raise NTPError(f"--run {run} is not a folder; give the output folder of a run ({example})")
        if not (tree / "notebooks").is_dir():
            raise NTPError(
                f"--run {run} is not the output folder of a run (it has no notebooks/ folder); give "
                f"the folder a `ntpnb reproduce` run wrote ({example}), or run `ntpnb reproduce --out "
                f"{run}` first"
            )
        tree = tree.resolve()
    try:
        record = load_run_record(tree)
    except PathError as exc:
        again = (
            "`ntpnb reproduce`"
            if tree == own
            else f"the `ntpnb reproduce` command that made it, with `--out {shown(tree)}`"
        )
        raise NTPError(
            f"{exc}; delete it and run {again}, which writes it again "
            "(notebooks whose outputs check out are not run again)"
        ) from None
    return BookTree(root, output_layout(own) if tree == own else OutputLayout(tree), record)


def visible(paths: Iterable[Path]) -> list[Path]:
    """``paths`` without hidden files (the temporaries of :mod:`ntpnb.chapter.outputs` are hidden)."""
    return [p for p in paths if not p.name.startswith(".")]


def _chapter_problem(layout: OutputLayout, name: str) -> str | None:
    """Why chapter ``name`` in ``layout`` cannot be built from, naming the file (None if it can)."""
    executed = layout.notebooks / f"{name}.ipynb"
    record = layout.claims / f"{name}.json"
    manifest = manifest_path(executed)
    if manifest.exists():
        if problem := chapter_damage(layout.root, executed, where=f"{shown(layout.root)}/"):
            return problem
    elif not (layout.failed / f"{name}.json").exists():
        return (
            f"{shown(manifest)} is missing, so nothing says what the run of {name} wrote (a run "
            "made before outputs were recorded, or the file was deleted)"
        )
    for path, read, missing in (
        (executed, read_notebook, f"is missing (its claim record {shown(record)} is there)"),
        (record, load_chapter_record, f"is missing: {name} has an executed notebook but no claim record"),
    ):
        if not path.exists():
            return f"{shown(path)} {missing}"
        try:
            read(path)
        except PathError as exc:
            return str(exc)
    return None


def verify_tree(tree: BookTree) -> None:
    """Refuse a tree whose records cannot be trusted (see the module docstring)."""
    layout = tree.layout
    trees = [layout, *layout.seed_layouts().values()]
    # the chapters with an executed notebook or a claim record in each tree
    present = [
        {p.stem for p in visible([*t.notebooks.glob("*.ipynb"), *t.claims.glob("*.json")])} for t in trees
    ]
    problems: dict[str, str] = {}  # chapter -> its first problem in the tree, then in its seed trees
    for seed_tree, here in zip(trees, present, strict=True):
        for name in sorted(present[0] & here):
            if name in problems:
                continue
            if seed_tree is not layout and (seed_tree.failed / f"{name}.json").exists():
                continue  # a seed whose last run failed is not counted
            if problem := _chapter_problem(seed_tree, name):
                problems[name] = problem
    if not problems:
        return
    first, *others = names = sorted(problems)
    more = f" (and in {len(others)} more chapter{'s' * (len(others) > 1)}: {', '.join(others)})"
    what = "that chapter" if len(names) == 1 else "those chapters"
    advice = f"run `{tree.reproduce_command(names)}` to run {what} again"
    if not tree.own and tree.record is None:
        advice += f", with the --profile and -p it ran with (it has no {RUN_RECORD_NAME} to say)"
    raise NTPError(f"{problems[first]}{more if others else ''}; {advice}")
