"""The output tree a book is built from: which one, what ran into it, whether it can be trusted.

``ntpnb book`` builds ``<root>/outputs`` into ``<root>/_build/html``; ``ntpnb book --run DIR``
builds any other tree into ``DIR/_book/html``. Either way the tree is a :class:`BookTree`: its
output tree and run record (:mod:`ntpnb.records._staging`), the label its pages show
(:func:`describe_run`), and the command that reruns a chapter of it
(:meth:`BookTree.reproduce_command`). Every command a hint gives runs as printed: a chapter that
cannot run into the tree (an interactive run's, or one whose setting changes a parameter the
chapter does not have: :meth:`BookTree.split_missing`) is given the command that runs it into a
tree of its own, and why; :func:`run_folder` names a folder that is not a run's, and the nearest
existing one to a misspelt path.

Before a book is built, :func:`verify_tree` checks every chapter of the tree and of every seed
tree of its sweep (whose claim records the verdicts read): its outputs have the SHA-256 digests
its run recorded in its manifest ``notebooks/<name>.key.json``, its executed notebook reads
(:func:`~ntpnb.book._executed.read_notebook`) and its claim record too, so no claim is ever
reported *not tested* because its record is gone. A chapter without a manifest is trusted only
where its last run failed (the runner keeps the outputs of the last run that succeeded); a seed
whose last run failed is not counted by the verdicts, and not checked. Anything else refuses the
build with one line naming the first damaged file and the command that runs those chapters again.
"""

from __future__ import annotations

import difflib
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..chapter._parameters import missing_parameters, parameter_owners
from ..errors import NTPError, PathError
from ..records._manifest import chapter_damage, manifest_path
from ..records._places import (
    BOOK_PROFILE,
    DEFAULT_OUTPUT_DIRNAME,
    OutputTree,
    notebook_sources,
    output_tree,
)
from ..records._run import load_chapter_run
from ..records._tree import RUN_RECORD_NAME, TreeRecord, chapter_seeds, load_tree_record, seeds_text
from ._executed import read_notebook

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


def describe_run(
    record: TreeRecord | None, profiles: Sequence[str] = (), seeds: Mapping[str, Sequence[int]] | None = None
) -> str:
    """What ran into a tree, as its pages say it: its run record's, else the ``profiles`` its checks name.

    ``seeds``: the seeds each chapter ran at (:func:`~ntpnb.records._tree.chapter_seeds`), said
    per chapter where they differ (``profile quick; seeds 0-4 for chapter 3, seed 0 for chapters
    1, 2, 4-8``); the record's own, every seed any chapter ran at, without them.
    """
    if record is not None and seeds:
        return f"{record.setting()}; {seeds_by_chapter(seeds)}"
    if record is not None:
        return record.describe()
    if profiles:
        return (
            f"profile {', '.join(profiles)}, as its claim records say (it has no {RUN_RECORD_NAME}, the "
            "record of what ran, so any -p overrides are unknown)"
        )
    return f"nothing yet (no {RUN_RECORD_NAME} and no claim record)"


def seeds_by_chapter(seeds: Mapping[str, Sequence[int]]) -> str:
    """``seeds 0-4`` when every chapter ran at those, else each group's: ``seeds 0-4 for chapter 3 and ...``.

    The groups with the most seeds come first: ``seeds 0-4 for chapter 3 and seed 0 for chapters 1, 2``.
    """
    groups: dict[tuple[int, ...], list[str]] = {}
    for name, ran in seeds.items():
        groups.setdefault(tuple(sorted(ran)), []).append(name)
    if len(groups) == 1:
        return seeds_text(next(iter(groups)))
    return " and ".join(
        f"{seeds_text(ran)} for chapter{'s' * (len(names) != 1)} {', '.join(map(chapter_label, names))}"
        for ran, names in sorted(groups.items(), key=lambda group: -len(group[0]))
    )


def setting_options(record: TreeRecord | None) -> list[str]:
    """The ``ntpnb reproduce`` options (profile, ``-p``, seeds) of ``record``'s setting; none without one."""
    if record is None:
        return []
    words = [] if record.profile == BOOK_PROFILE else ["--profile", record.profile]
    for key, value in sorted(record.overrides.items()):
        words += ["-p", f"{key}={value}"]
    if record.seeds:
        words += ["--seeds", str(len(record.seeds))]
    return words


def root_option(root: Path) -> str:
    """`` --root ROOT`` when the working directory is not inside the project (commands run from there)."""
    try:
        Path.cwd().resolve().relative_to(root)
    except (ValueError, OSError):
        return f" --root {shlex.quote(str(root))}"
    return ""


def reproduce_words(chapters: Sequence[str], record: TreeRecord | None, out: Path | None = None) -> list[str]:
    """``ntpnb reproduce`` with ``chapters`` (by number) in ``record``'s setting, into ``out`` if given."""
    words = ["ntpnb", "reproduce", *(chapter_number(name) for name in chapters), *setting_options(record)]
    return [*words, "--out", shown(out)] if out is not None else words


#: Why no chapter runs into an interactive run's tree with ``ntpnb reproduce``.
INTERACTIVE_TREE = (
    "the tree of an interactive run (JupyterLab, Binder or papermill), which `ntpnb reproduce` never "
    "writes into"
)


@dataclass(frozen=True)
class BookTree:
    """An output tree and what ran into it, as a book build sees it."""

    #: The project (resolved): its ``_config.yml``, ``_toc.yml``, ``book/`` and ``notebooks/``.
    root: Path
    #: The tree.
    tree: OutputTree
    #: Its run record (None for a tree that has none: an older run).
    record: TreeRecord | None

    @property
    def own(self) -> bool:
        """Whether this is the book's own tree, ``<root>/outputs``."""
        return self.tree.root == (self.root / DEFAULT_OUTPUT_DIRNAME).resolve()

    def chapters(self) -> list[str]:
        """The project's chapters, in order."""
        return [s.stem for s in notebook_sources(self.root)]

    def label(self) -> str:
        """What ran into the tree, each chapter's seeds where they differ (:func:`describe_run`)."""
        return describe_run(self.record, seeds=chapter_seeds(self.tree.root, self.record))

    def book_command(self) -> str:
        """The command that builds this tree's book."""
        run = "" if self.own else f" --run {shlex.quote(shown(self.tree.root))}"
        return f"ntpnb book{run}{root_option(self.root)}"

    def _named(self, names: Sequence[str]) -> list[str]:
        """``names`` as a command names them: none when they are every chapter."""
        return [] if set(names) >= set(self.chapters()) else list(names)

    def reproduce_command(self, names: Sequence[str]) -> str:
        """The ``ntpnb reproduce`` command that runs the chapters ``names`` again into this tree.

        The book's tree reruns the book's run; another tree its run record's setting, with
        ``--out`` naming it. Only for chapters that can run into it (:meth:`split_missing`).
        """
        chosen = self._named(names)
        if self.own:
            words = reproduce_words(chosen, None)
        else:
            words = reproduce_words(chosen, self.record, self.tree.root)
        return shlex.join(words) + root_option(self.root)

    def lacks(self, name: str) -> list[str]:
        """The overrides of the tree's setting that are no parameter of chapter ``name``."""
        if self.record is None or not self.record.overrides:
            return []
        return missing_parameters(self.root / "notebooks" / f"{name}.md", self.record.overrides)

    def split_missing(self, names: Sequence[str]) -> tuple[list[str], dict[str, str]]:
        """Of the chapters ``names``, those that can run into this tree, and why each other cannot.

        A chapter cannot when the tree is an interactive run's (:data:`INTERACTIVE_TREE`), or when
        the tree's setting changes a parameter it does not have.
        """
        runnable, why = [], {}
        for name in names:
            lacks = self.lacks(name)
            if self.record is not None and self.record.interactive:
                why[name] = INTERACTIVE_TREE
            elif lacks:
                owners = sorted({o for key in lacks for o in parameter_owners(self.root / "notebooks", key)})
                of = f" (a parameter of {', '.join(owners)} only)" if owners else ""
                which = "which is not its parameter" if len(lacks) == 1 else "which are not its parameters"
                why[name] = f"the setting changes {', '.join(lacks)}, {which}{of}"
            else:
                runnable.append(name)
        return runnable, why

    def own_setting_command(self, names: Sequence[str]) -> str:
        """The command that runs the chapters ``names`` in the tree's setting into a tree of its own.

        The setting's overrides of parameters they do not have are left out (the same for each:
        :meth:`own_setting_commands`); for chapters that cannot run into this tree
        (:meth:`split_missing`).
        """
        record = self.record
        if record is not None:
            lacks = {key for name in names for key in self.lacks(name)}
            kept = {k: v for k, v in record.overrides.items() if k not in lacks}
            record = TreeRecord(record.profile, kept, record.seeds)
        return shlex.join(reproduce_words(self._named(names), record)) + root_option(self.root)

    def own_setting_commands(self, names: Sequence[str]) -> list[str]:
        """:meth:`own_setting_command` of ``names``, one for each set of overrides they lack."""
        groups: dict[tuple[str, ...], list[str]] = {}
        for name in names:
            groups.setdefault(tuple(self.lacks(name)), []).append(name)
        return [self.own_setting_command(group) for group in groups.values()]

    def missing_advice(self, name: str) -> str:
        """What a page of the missing chapter ``name`` says about running it: a command that runs."""
        runnable, why = self.split_missing([name])
        if runnable:
            return f"Run it with `{self.reproduce_command([name])}`, then build the book again."
        lacks = self.lacks(name)
        how = f"without the change of {', '.join(lacks)}" if lacks else "in this setting"
        return (
            f"It cannot run into this tree: {why[name]}. `{self.own_setting_command([name])}` runs it {how}, "
            "into a tree of its own."
        )

    def rerun_advice(self, names: Sequence[str]) -> str:
        """``run `COMMAND` to run that chapter again`` for chapters of this tree whose outputs are damaged."""
        chosen = self._named(names)
        record, out = (None, None) if self.own else (self.record, self.tree.root)
        return rerun_advice(chosen, record, out, root_option(self.root), len(names))

    def rerun_setting(self, names: Sequence[str] = ()) -> tuple[str, dict[str, str], int | None]:
        """The profile, overrides and seeds (None: the default) that run its missing notebooks ``names``.

        Raises
        ------
        NTPError
            If the tree is not the book's and has no run record (its setting is unknown), or is
            an interactive run's.
        """
        if self.own:
            return BOOK_PROFILE, {}, None
        if self.record is None:
            command = shlex.join(reproduce_words(self._named(names), None, self.tree.root))
            command += root_option(self.root)
            raise NTPError(
                f"{shown(self.tree.root)} has no {RUN_RECORD_NAME}, so what it ran (profile, -p) is "
                f"unknown; run its missing notebooks with `{command}` and the --profile and -p it ran with"
            )
        if self.record.interactive:
            commands = " and ".join(f"`{command}`" for command in self.own_setting_commands(names))
            raise NTPError(
                f"{shown(self.tree.root)} cannot run its missing notebooks, as {INTERACTIVE_TREE}; run "
                f"them as its chapters ran ({self.label()}), or into a tree of their own with {commands}"
            )
        return self.record.profile, dict(self.record.overrides), len(self.record.seeds) or None


def rerun_advice(
    names: Sequence[str], record: TreeRecord | None, out: Path | None, suffix: str = "", count: int = 0
) -> str:
    """``run `COMMAND` to run that chapter again``: the chapters ``names`` (all when empty) of a tree.

    The tree is ``out`` (None: the book's), of ``record``'s setting; one without a record needs
    the --profile and -p it ran with, an interactive run's is run again as it ran.
    ``suffix``: what ends the command (``--root``); ``count``: how many chapters (default: ``names``).
    """
    what = "that chapter" if (count or len(names)) == 1 else "those chapters"
    if record is not None and record.interactive:
        return (
            f"run {what} again as it ran, in JupyterLab, Binder or papermill ({record.describe()}): "
            "`ntpnb reproduce` never writes into an interactive run's tree"
        )
    advice = f"run `{shlex.join(reproduce_words(names, record, out))}{suffix}` to run {what} again"
    if out is not None and record is None:
        advice += f", with the --profile and -p it ran with (it has no {RUN_RECORD_NAME} to say)"
    return advice


def describe_unrunnable(why: Mapping[str, str]) -> str:
    """``01_a, 02_b cannot run into this tree: the setting changes x, ...``: the chapters of each reason."""
    by_reason: dict[str, list[str]] = {}
    for name, reason in why.items():
        by_reason.setdefault(reason, []).append(name)
    return "; ".join(
        f"{', '.join(names)} cannot run into this tree: {reason}" for reason, names in by_reason.items()
    )


def nearest_folder(path: str | Path) -> Path | None:
    """The existing folder a misspelt ``path`` likely meant: each missing part the nearest name beside it.

    None when ``path`` is a folder, or a part has no near name (:func:`difflib.get_close_matches`).
    """
    path = Path(path)
    current = Path(path.anchor)
    changed = False
    for part in path.parts[1 if path.anchor else 0 :]:
        candidate = current / part
        if not candidate.is_dir():
            try:
                names = sorted(p.name for p in current.iterdir() if p.is_dir() and not p.name.startswith("."))
            except OSError:
                return None
            near = difflib.get_close_matches(part, names, n=1, cutoff=0.6)
            if not near:
                return None
            candidate, changed = current / near[0], True
        current = candidate
    return current if changed else None


#: The example a message gives of an output folder.
_EXAMPLE_TREE = "e.g. outputs or outputs/runs/profile=quick"


def run_folder(run: str | Path, named: str = "") -> Path:
    """``run`` (expanded), if it is the output folder of a run: a folder with ``notebooks/`` or ``claims/``.

    ``named``: how the command names it (default: the path).

    Raises
    ------
    PathError
        If it does not exist (naming the nearest existing folder: :func:`nearest_folder`), is
        not a folder, or is not an output tree (for an empty folder, with the command that makes one).
    """
    path, what = Path(run).expanduser(), named or str(run)
    if not path.exists():
        near = nearest_folder(path)
        meant = f" (did you mean {near}?)" if near is not None else ""
        raise PathError(f"{what} does not exist{meant}; give the output folder of a run ({_EXAMPLE_TREE})")
    if not path.is_dir():
        raise PathError(f"{what} is not a folder; give the output folder of a run ({_EXAMPLE_TREE})")
    if not any((path / part).is_dir() for part in ("notebooks", "claims")):
        make = (
            f", or run `ntpnb reproduce --out {shlex.quote(str(run))}` first"
            if not any(path.iterdir())
            else ""
        )
        raise PathError(
            f"{what} is not the output folder of a run (it has no notebooks/ or claims/ folder); give "
            f"the folder a `ntpnb reproduce` run wrote ({_EXAMPLE_TREE}){make}"
        )
    return path


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
        tree = run_folder(run, f"--run {run}").resolve()
    try:
        record = load_tree_record(tree)
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
    return BookTree(root, output_tree(own) if tree == own else OutputTree(tree), record)


def visible(paths: Iterable[Path]) -> list[Path]:
    """``paths`` without hidden files (the temporaries of :mod:`ntpnb.records._staging` are hidden)."""
    return [p for p in paths if not p.name.startswith(".")]


def chapter_problem(tree: OutputTree, name: str) -> str | None:
    """Why chapter ``name`` in ``tree`` cannot be built from, naming the file (None if it can)."""
    executed = tree.notebooks / f"{name}.ipynb"
    record = tree.claims / f"{name}.json"
    manifest = manifest_path(executed)
    if manifest.exists():
        if problem := chapter_damage(tree.root, executed, where=f"{shown(tree.root)}/"):
            return problem
    elif not (tree.failed / f"{name}.json").exists():
        return (
            f"{shown(manifest)} is missing, so nothing says what the run of {name} wrote (a run "
            "made before outputs were recorded, or the file was deleted)"
        )
    for path, read, missing in (
        (executed, read_notebook, f"is missing (its claim record {shown(record)} is there)"),
        (record, load_chapter_run, f"is missing: {name} has an executed notebook but no claim record"),
    ):
        if not path.exists():
            return f"{shown(path)} {missing}"
        try:
            read(path)
        except PathError as exc:
            return str(exc)
    return None


def verify_tree(book: BookTree) -> None:
    """Refuse a tree whose records cannot be trusted (see the module docstring)."""
    trees = [book.tree, *book.tree.seed_trees().values()]
    # the chapters with an executed notebook or a claim record in each tree
    present = [
        {p.stem for p in visible([*t.notebooks.glob("*.ipynb"), *t.claims.glob("*.json")])} for t in trees
    ]
    problems: dict[str, str] = {}  # chapter -> its first problem in the tree, then in its seed trees
    for seed_tree, here in zip(trees, present, strict=True):
        for name in sorted(present[0] & here):
            if name in problems:
                continue
            if seed_tree is not book.tree and (seed_tree.failed / f"{name}.json").exists():
                continue  # a seed whose last run failed is not counted
            if problem := chapter_problem(seed_tree, name):
                problems[name] = problem
    if not problems:
        return
    first, *others = names = sorted(problems)
    more = f" (and in {len(others)} more chapter{'s' * (len(others) > 1)}: {', '.join(others)})"
    raise NTPError(f"{problems[first]}{more if others else ''}; {book.rerun_advice(names)}")
