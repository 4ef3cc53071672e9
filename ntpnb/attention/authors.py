"""The setting of Paper B's experiments as the paper states it and as the authors' code runs it.

Paper B (Secs. 5-6, Appendix D) leaves much unstated (head, initialization, iterations of Figs. 5-6,
the pseudo graphs' threshold, how a distance is taken); the authors' code states it. What it says is
data, in ``authors.json`` beside this module, read and checked by :func:`load_authors`: the code's
repository and the facts chapter 7 cites (:class:`AuthorsCode`), the last points of the authors'
stored figures (:class:`StoredCurve`) and one row per setting (:class:`AuthorsSetting`): what the
paper says, what the code does (naming the files that say it). A chapter adds what it ran and renders
the table (:func:`settings_rows`). In a row's text, ``%(name)s`` or ``%(name)g`` is the file's own
value ``name`` (filled on loading) and ``%(claim.key)g`` the registry's ``paper_value(claim, key)``.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType

from ..errors import InvalidDataError

#: The data file: the authors' code and stored figures, and the settings' rows.
AUTHORS_FILE = Path(__file__).with_name("authors.json")


#: What a value of each kind must be (a field's kind: its ``kind`` metadata, else its type).
_KINDS: dict[str, tuple[str, Callable[[object], bool]]] = {
    "str": ("a non-empty string", lambda v: isinstance(v, str) and bool(v.strip())),
    "int": ("a positive integer", lambda v: type(v) is int and v > 0),
    "float": ("a finite number", lambda v: type(v) in (int, float) and math.isfinite(v)),
    "positive": ("a positive finite number", lambda v: type(v) in (int, float) and 0 < v < math.inf),
    "object": ("an object", lambda v: isinstance(v, dict)),
    "list": ("a list", lambda v: isinstance(v, list)),
}
_OWN_FIELD = re.compile(r"%\((\w+)\)([sg])")
_PAPER_FIELD = re.compile(r"%\((\w+)\.(\w+)\)g")


@dataclass(frozen=True)
class StoredCurve:
    """The last point of one curve of a figure stored in the authors' repository (at one commit).

    Read with PyMuPDF off the PDF's vector paths: the curve's point of largest abscissa, mapped to
    data coordinates through the grid lines at the tick labels (the grid lines fit the tick
    values to 1e-6 of the axis range). The PDFs keep coordinates to a thousandth of a point, so
    :attr:`precision` bounds the reading far below the trials' noise. What the authors' own last
    run gave, beside the paper's text and our runs.
    """

    #: The paper's figure (and panel) it draws.
    figure: str
    #: The PDF's path in the authors' repository.
    path: str
    #: Which curve: ``"mean correlation"``, ``"local correlation"``, ``"global distance"`` ...
    curve: str
    #: Its last point.
    value: float
    #: How far the reading may be from the plotted value.
    precision: float = field(metadata={"kind": "positive"})
    #: The commit of the repository that stores the figure (the file's ``stored_commit``).
    commit: str = field(metadata={"kind": None})

    @property
    def source(self) -> str:
        """What it is and where: ``"the authors' stored Fig. 6a, local correlation, in <path> at 0d105ef"``.

        In no brackets of its own: a sentence quotes it in its own aside.
        """
        return f"the authors' stored {self.figure}, {self.curve}, in {self.path} at {self.commit[:7]}"


@dataclass(frozen=True)
class AuthorsSetting:
    """One setting of Paper B's experiments, in the paper and in the authors' code."""

    #: The name a chapter gives its own value of the setting under.
    key: str
    #: The row's name in the table.
    setting: str
    #: What Paper B states (``%(claim.key)g`` fields are the registry's paper values).
    paper: str
    #: What the authors' code does, naming the files (``*.py``, ``*.ipynb``) that say it.
    code: str


@dataclass(frozen=True)
class AuthorsCode:
    """The authors' public code of Paper B, as ``authors.json`` records it."""

    #: The repository.
    repository: str
    #: Their notebook of Figs. 3-4 (global convergence).
    global_notebook: str
    #: Their notebook of Figs. 5-6 (local convergence).
    local_notebook: str
    #: Their Figs. 3-4 notebook raises when a trial's best final correlation (with ``W^mm``, or with
    #: ``W^cyc + R W^mm`` at the least-squares ``R``) is below this and ``W^mm != 0``.
    global_drop_corr: float = field(metadata={"kind": "positive"})
    #: The commit that stores the figures of Figs. 3-6 (``figures/`` was deleted by later commits).
    stored_commit: str
    #: The Figs. 5-6 notebook at :attr:`stored_commit`: its saved output runs this many trials with
    #: this ``epochs`` (of another size than Fig. 6's); the stored figures state neither.
    saved_trials: int
    saved_epochs: int
    #: The last points of the curves of the stored figures of Figs. 3-6, by name (read-only: the
    #: loaded record is shared). Fig. 4b has two candidates (``fig4b_1`` and ``fig4b_2``, both
    #: labelled as squared): nothing at that commit says which one the paper shows.
    stored_curves: Mapping[str, StoredCurve] = field(metadata={"kind": "object"})
    #: The sections of the comparison, each a title and its settings (Figs. 3-4, then Figs. 5-6).
    sections: tuple[tuple[str, tuple[AuthorsSetting, ...]], ...] = field(metadata={"kind": "list"})


def _checked(entry: object, kinds: type | Mapping[str, str], where: str) -> dict:
    """A copy of ``entry``, an object with exactly the keys of ``kinds`` (or a dataclass), of its kind."""
    if not isinstance(kinds, Mapping):  # a dataclass: its fields' kinds (None: not in the file)
        kinds = {f.name: f.metadata.get("kind", f.type) for f in fields(kinds)}
        kinds = {name: kind for name, kind in kinds.items() if kind}
    if not isinstance(entry, dict):
        raise InvalidDataError(f"{where or 'the file'} must be an object, got {entry!r}")
    missing, unknown = kinds.keys() - entry.keys(), entry.keys() - kinds.keys()
    if missing or unknown:
        raise InvalidDataError(f"{where or 'the file'}: missing {sorted(missing)}, unknown {sorted(unknown)}")
    for key, kind in kinds.items():
        what, valid = _KINDS.get(kind) or (f"of a kind the loader knows (not {kind!r})", lambda v: False)
        if not valid(entry[key]):
            raise InvalidDataError(f"{where}.{key}".lstrip(".") + f" must be {what}, got {entry[key]!r}")
    return dict(entry)


def _section(
    section: object, at: str, own: Mapping[str, object], keys: set[str]
) -> tuple[str, tuple[AuthorsSetting, ...]]:
    """One checked section ``(title, settings)``; ``keys`` (the keys seen so far) is updated in place.

    Raises
    ------
    InvalidDataError
        As :func:`load_authors`, naming the entry ``at``.
    """
    section = _checked(section, {"title": "str", "settings": "list"}, at)
    settings = []
    for j, entry in enumerate(section["settings"]):
        where = f"{at}.settings[{j}]"
        entry = _checked(entry, AuthorsSetting, where)
        if entry["key"] in keys:
            raise InvalidDataError(f"{where}: the key {entry['key']!r} is given twice")
        keys.add(entry["key"])
        for k in ("paper", "code"):
            entry[k] = _filled(entry[k], f"{where}.{k}", own)
        settings.append(AuthorsSetting(**entry))
    return section["title"], tuple(settings)


def _filled(text: str, at: str, own: Mapping[str, object]) -> str:
    """``text`` with its ``%(name)s`` fields filled from the file's values ``own`` (paper fields left).

    Raises
    ------
    InvalidDataError
        If a field names none of ``own``, or a ``%`` is no field at all.
    """
    unknown = [name for name, _ in _OWN_FIELD.findall(text) if name not in own]
    if unknown:
        raise InvalidDataError(f"{at}: %({unknown[0]}) is none of the file's values {sorted(own)}")
    filled = _OWN_FIELD.sub(lambda m: format(own[m[1]], m[2]), text)
    if "%" in _PAPER_FIELD.sub("", filled):
        raise InvalidDataError(f"{at}: a '%' that is no %(name)s or %(claim.key)g field in {text!r}")
    return filled


@functools.lru_cache
def load_authors(path: Path = AUTHORS_FILE) -> AuthorsCode:
    """The :class:`AuthorsCode` of the data file ``path`` (``authors.json``), checked.

    A setting's text has its ``%(name)s`` fields filled from the file's own values on loading; its
    ``%(claim.key)g`` fields are left for :func:`settings_rows`.

    Raises
    ------
    InvalidDataError
        If the file is not JSON, or an entry is missing, unknown, of the wrong kind or empty, a
        setting's key repeats, or a text has a ``%`` field that names none of the file's values
        (the error names the file and the entry).
    """
    try:
        own = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InvalidDataError(f"{path}: not JSON: {exc}") from None
    try:
        own = _checked(own, AuthorsCode, "")
        curves, sections = own.pop("stored_curves"), own.pop("sections")
        for name, entry in curves.items():
            curve = _checked(entry, StoredCurve, f"stored_curves.{name}")
            curves[name] = StoredCurve(**curve, commit=own["stored_commit"])
        keys: set[str] = set()
        sections = [_section(section, f"sections[{i}]", own, keys) for i, section in enumerate(sections)]
    except InvalidDataError as exc:
        raise InvalidDataError(f"{path}: {exc}") from None
    return AuthorsCode(**own, stored_curves=MappingProxyType(curves), sections=tuple(sections))


def settings_rows(
    book: Mapping[str, str], paper_value: Callable[[str, str], float]
) -> list[tuple[str, str, str, str]]:
    """The rows (setting, paper, official code, this book) of the comparison, section by section.

    Parameters
    ----------
    book
        What the chapter ran, by :attr:`AuthorsSetting.key`: one entry for every setting.
    paper_value
        The registry's ``paper_value(claim, key)``, for the paper's numbers.

    Raises
    ------
    InvalidDataError
        If ``book`` misses a setting or names one the table does not have.
    """
    sections = load_authors().sections
    keys = [s.key for _, settings in sections for s in settings]
    missing, unknown = set(keys) - set(book), set(book) - set(keys)
    if missing or unknown:
        raise InvalidDataError(
            f"the book's column must give every setting once: missing {sorted(missing)}, "
            f"unknown {sorted(unknown)}"
        )
    rows = []
    for title, settings in sections:
        rows.append((title, "", "", ""))
        for s in settings:
            values = {f"{c}.{k}": paper_value(c, k) for c, k in _PAPER_FIELD.findall(s.paper)}
            rows.append((s.setting, s.paper % values if values else s.paper, s.code, book[s.key]))
    return rows
