"""Numbers in a chapter's prose come from its run: glue them, never type them.

A notebook rounds a number to its stable digits and *glues* the text under a name with
``myst_nb.glue``; the markdown shows it with ``{glue:text}`name```, taken by myst-nb from the executed
notebook. The rounding is done here, before gluing, not by a format in the markdown
(``{glue:text}`name:.3g```): the executed notebook then stores only the stable digits, which the
before/after and cross-CPU comparisons of its outputs read. Also the phrases a chapter writes
from its numbers (its tables: :func:`ntpnb._markdown.markdown_table`).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from .._jupyter_imports import import_jsonschema_without_iri_grammar
from .._validation import as_count, is_real
from ..errors import InvalidDataError

#: What this kernel glued, by name: JupyterLab's prose shows it (:func:`glued`).
_GLUED: dict[str, str] = {}


class GluedText(str):
    """A glued text, shown as itself (no quotes) where JupyterLab evaluates an inline expression."""

    def __repr__(self) -> str:
        return str(self)


def glued(name: str, markdown: bool | str = False) -> Any:
    """The text glued under ``name`` in this kernel: what ``{glue:text}`name``` shows in the book.

    JupyterLab opens a chapter with its glue roles as inline expressions ``{eval}`glued("name")```
    (``ntpnb.lab``), which jupyterlab-myst evaluates once the chapter has run. ``markdown``:
    the text as Markdown (``{glue:md}``; the name of its format for a ``{glue:md}`` block).

    Raises
    ------
    InvalidDataError
        If nothing was glued under ``name`` in this kernel yet.
    """
    if name not in _GLUED:
        raise InvalidDataError(f"nothing is glued under {name!r} yet: run the chapter's cells first")
    if markdown:
        from IPython.display import Markdown

        return Markdown(_GLUED[name])
    return GluedText(_GLUED[name])


def _offer_glued() -> None:
    """Make :func:`glued` a name of this IPython kernel's namespace (never replacing one of the user's)."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None:
        shell.user_ns.setdefault("glued", glued)


def glue_text(name: str, text: str) -> None:
    """Glue ``text`` under ``name`` with ``myst_nb.glue`` (a hidden output: the cell shows no stray value).

    The kernel also keeps it for :func:`glued`, which JupyterLab's prose calls.

    Raises
    ------
    InvalidDataError
        On an empty name or text.
    """
    if not (isinstance(name, str) and name.strip()):
        raise InvalidDataError(f"glue: the name must be a non-empty string, got {name!r}")
    if not (isinstance(text, str) and text.strip()):
        raise InvalidDataError(f"glue {name!r}: the text must be a non-empty string, got {text!r}")
    import_jsonschema_without_iri_grammar()  # myst_nb.glue loads nbformat, hence jsonschema
    from myst_nb import glue  # only inside a kernel

    glue(name, text, display=False)
    _GLUED[name] = text
    _offer_glued()


def glue_number(name: str, value: float, digits: int = 3) -> None:
    """Glue ``value`` to ``digits`` significant digits (``:.{digits}g``; an integer whole).

    Raises
    ------
    InvalidDataError
        If ``value`` is not a finite real number or ``digits`` is not a positive integer.
    """
    if not (is_real(value) and math.isfinite(value)):
        raise InvalidDataError(f"glue {name!r}: the value must be a finite number, got {value!r}")
    digits = as_count(digits, f"glue {name!r}: digits")
    glue_text(name, str(int(value)) if isinstance(value, numbers.Integral) else f"{float(value):.{digits}g}")


def sentences(items: list[str], empty: str) -> str:
    """``items`` joined as one Markdown sentence list (``"a; b."``), or ``empty`` if there are none."""
    return "; ".join(items) + "." if items else empty
