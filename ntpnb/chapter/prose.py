"""Numbers in a chapter's prose come from its run: glue them, never type them.

A notebook computes a number, rounds it to the digits that are stable between machines and
*glues* it under a name; the chapter's markdown shows it with ``{glue:text}`name```. The
book (myst-nb) takes the value from the executed notebook, so the sentence cannot drift from
the output of another machine or a later run. The glue record is the one myst-nb's
``myst_nb.glue`` writes (a hidden display output with the ``scrapbook`` metadata); it is
written here with IPython alone, so running a chapter does not need the book's dependencies.
"""

from __future__ import annotations

import math
import numbers

from ..errors import InvalidDataError
from .claims import format_number

__all__ = ["GLUE_PREFIX", "glue_number", "glue_text"]

#: The MIME prefix of a hidden glue output (myst-nb's ``GLUE_PREFIX``).
GLUE_PREFIX = "application/papermill.record/"


def glue_text(name: str, text: str) -> None:
    """Glue ``text`` under ``name`` (hidden output), for ``{glue:text}`name``` in the prose.

    Returns nothing, so that a cell ending in a glue shows no stray value. Raises
    :class:`~ntpnb.errors.InvalidDataError` on an empty name or text.
    """
    if not (isinstance(name, str) and name.strip()):
        raise InvalidDataError(f"glue: the name must be a non-empty string, got {name!r}")
    if not (isinstance(text, str) and text.strip()):
        raise InvalidDataError(f"glue {name!r}: the text must be a non-empty string, got {text!r}")
    from IPython.display import display  # only inside a kernel

    display(
        {GLUE_PREFIX + "text/plain": repr(text)},
        raw=True,
        metadata={"scrapbook": {"name": name, "mime_prefix": GLUE_PREFIX}},
    )


def glue_number(name: str, value: float, digits: int = 3, floor: float | None = None) -> None:
    """Glue ``value`` rounded to ``digits`` significant digits (``format(value, ".{digits}g")``).

    A value below ``floor`` in magnitude glues as ``"< floor"`` (as the claim checks print it);
    integers glue as they are.

    Raises
    ------
    InvalidDataError
        If ``value`` is not a finite real number or ``digits`` is not a positive integer.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise InvalidDataError(f"glue {name!r}: the value must be a finite number, got {value!r}")
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 1:
        raise InvalidDataError(f"glue {name!r}: digits must be a positive integer, got {digits!r}")
    if isinstance(value, numbers.Integral):
        text = str(int(value))
    elif floor is not None and abs(value) < floor:
        text = format_number(float(value), digits, floor)
    else:
        text = f"{float(value):.{digits}g}"
    glue_text(name, text)
