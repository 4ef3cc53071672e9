"""A real English text that needs no download: the docstrings of the Python standard library.

The text is read at run time from the running interpreter, so it depends on the Python version
(:func:`corpus_python_version`). For each module of :data:`STDLIB_MODULES`: its docstring, then
those of its own public functions and classes by name; normalized to :data:`ALPHABET` (words
and word boundaries kept; digits, punctuation and layout lost).
"""

from __future__ import annotations

import importlib
import inspect
import platform
import re
import unicodedata
from collections.abc import Sequence

import numpy as np

from .._validation import as_count, as_ordered, is_integer
from ..errors import InvalidDataError

#: The 27 characters of the normalized text: space, then ``a``-``z``; token id = index.
ALPHABET: str = " abcdefghijklmnopqrstuvwxyz"

#: Pure-Python standard-library modules whose docstrings make the corpus (in this order).
STDLIB_MODULES: tuple[str, ...] = tuple(
    "re statistics json argparse csv timeit copy heapq itertools random difflib collections fractions "
    "textwrap string".split()
)


def corpus_python_version() -> str:
    """The implementation and version of the running Python (the corpus depends on it)."""
    return f"{platform.python_implementation()} {platform.python_version()}"


def stdlib_docstring_list(modules: Sequence[str] = STDLIB_MODULES) -> list[str]:
    """The raw docstrings of ``modules`` (``inspect.getdoc``), one string per docstring.

    Raises
    ------
    InvalidDataError
        If ``modules`` is empty or a module cannot be imported.
    """
    names = as_ordered(modules, "modules")
    if not names or not all(isinstance(name, str) for name in names):
        raise InvalidDataError(f"modules must be a non-empty sequence of module names, got {modules!r}")
    docs = []
    for name in names:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            raise InvalidDataError(f"cannot import the standard-library module {name!r}: {exc}") from exc
        members = [
            member
            for member_name, member in sorted(vars(module).items())
            if not member_name.startswith("_")
            and (inspect.isfunction(member) or inspect.isclass(member))
            and getattr(member, "__module__", None) == module.__name__
        ]
        docs += [doc for doc in map(inspect.getdoc, [module, *members]) if doc]
    return docs


def normalize_text(text: str) -> str:
    """``text`` in :data:`ALPHABET`: NFKD, non-ASCII dropped, lower case, other than a-z to single spaces."""
    if not isinstance(text, str):
        raise InvalidDataError(f"text must be a str, got {type(text).__name__}")
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    letters = re.sub(r"[^a-z]+", " ", ascii_text.lower())
    return letters.strip()


def encode_text(text: str) -> np.ndarray:
    """Token ids (indices into :data:`ALPHABET`) of a normalized text.

    Raises
    ------
    InvalidDataError
        If ``text`` is not a str, or a character is not in :data:`ALPHABET` (normalize the
        text first).
    """
    if not isinstance(text, str):
        raise InvalidDataError(f"text must be a str, got {type(text).__name__}")
    lookup = {c: i for i, c in enumerate(ALPHABET)}
    try:
        return np.array([lookup[c] for c in text], dtype=np.int64)
    except KeyError as exc:
        raise InvalidDataError(f"character {exc.args[0]!r} is not in the alphabet; normalize first") from exc


def decode_ids(ids: Sequence[int]) -> str:
    """The text of a sequence of token ids (inverse of :func:`encode_text`).

    Raises
    ------
    InvalidDataError
        If ``ids`` is not an ordered sequence (a set, a string, a number), an id is not an
        integer, or an id lies outside ``[0, len(ALPHABET))`` (Python's negative indexing would
        silently read ``-1`` as ``"z"``).
    """
    items = as_ordered(ids.tolist() if isinstance(ids, np.ndarray) else ids, "ids")
    for position, i in enumerate(items):
        if not is_integer(i):
            raise InvalidDataError(f"ids[{position}] = {i!r} is not an integer token id")
        if not 0 <= i < len(ALPHABET):
            raise InvalidDataError(
                f"ids[{position}] = {i} is outside the alphabet's ids [0, {len(ALPHABET)})"
            )
    return "".join(ALPHABET[i] for i in items)


def stdlib_corpus(n_chars: int | None = None, modules: Sequence[str] = STDLIB_MODULES) -> str:
    """The normalized docstrings joined by blank lines, truncated to their first ``n_chars`` characters.

    Raises
    ------
    InvalidDataError
        If ``n_chars`` is not a positive integer or exceeds the length of the text.
    """
    text = normalize_text("\n\n".join(stdlib_docstring_list(modules)))
    if n_chars is None:
        return text
    n_chars = as_count(n_chars, "n_chars")
    if n_chars > len(text):
        raise InvalidDataError(f"the corpus has {len(text)} characters, fewer than n_chars = {n_chars}")
    return text[:n_chars]
