"""How the package prints a measured number: rounded to the digits that are stable.

One place for the rounding the chapters, the claim checks, the maps and Paper B's trained runs
share: :func:`format_number` (significant digits, zeros kept, ``"< floor"`` for rounding noise),
:func:`stable_digits` (how many digits survive a relative spread), :func:`format_stable` (a
number to those digits; :func:`format_stable_summary`, several named ones) and
:func:`format_decade` (the decade of a solver's rounding, a power of ten written as
:func:`format_power` writes it) and :func:`format_bound` (a threshold as given, at most 4 digits).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from .errors import InvalidDataError

#: The most significant digits a number shown to a reader has (a bound, a stored value, a page's).
SHOWN_DIGITS = 4


def format_power(exponent: int) -> str:
    """``10**exponent`` as a reader reads it: ``"0.01"``, ``"1"``, ``"100"`` (1e-3 to 1e3), or ``"1e-04"``."""
    if -3 <= exponent <= 3:
        return f"{10.0**exponent:.{max(-exponent, 0)}f}"
    return f"1e{exponent:+03d}"


def format_bound(bound: float) -> str:
    """A bound or a threshold as given (``1e-06``, ``0.05``, ``1``), to at most 4 significant digits."""
    exponent = math.log10(abs(bound)) if bound != 0 and math.isfinite(bound) else 0.5
    if exponent != round(exponent):  # not a power of ten (nor 0, nor an infinity)
        return f"{bound:.{SHOWN_DIGITS}g}"
    sign = "-" if bound < 0 else ""
    return sign + format_power(round(exponent))


def format_number(x: float, digits: int, floor: float | None = None) -> str:
    """``x`` with ``digits`` significant digits (zeros kept); ``"< floor"`` (rounding noise) below floor."""
    if isinstance(x, (bool, int)):
        return str(x)
    if floor is not None and abs(x) < floor:
        return f"< {format_bound(floor)}"
    return f"{x:#.{digits}g}".rstrip(".")


def format_relation(x: float, digits: int, floor: float | None = None) -> str:
    """``x`` as the right side of a relation: ``"= 0.6536"``, or ``"< 1e-12"`` below ``floor``.

    As :func:`format_number`, so that a sentence never reads ``"= < 1e-12"``.
    """
    shown = format_number(x, digits, floor)
    return shown if shown.startswith("<") else f"= {shown}"


def stable_digits(spread: float) -> int:
    """How many significant digits of a number survive a relative perturbation ``spread``.

    One digit fewer than ``spread`` leaves unchanged (a guard digit: a measured spread is one
    instance of the perturbation, not its largest), between 1 and 4.
    """
    if not spread > 0:
        return 4
    return int(min(4, max(1, math.floor(-math.log10(spread)) - 1)))


def format_stable(x: float, spread: float) -> str:
    """``x`` to the :func:`stable_digits` of its relative ``spread``; no exponent between 1e-3 and 1e6.

    ``239.98`` with a spread of 4e-4 prints as ``240``, ``2.342e-07`` with a spread of 0.7 as ``2e-07``.
    """
    digits = stable_digits(spread)
    if x == 0:
        return "0"
    if not math.isfinite(x) or not 1e-3 <= abs(x) < 1e6:
        return f"{x:.{digits - 1}e}"
    decimals = digits - 1 - math.floor(math.log10(abs(x)))
    rounded = round(x, decimals)
    if abs(rounded) >= 10 ** (digits - decimals):  # rounded up into the next decade
        decimals -= 1
        rounded = round(x, decimals)
    return f"{rounded:.{max(decimals, 0)}f}"


def format_stable_summary(values: Mapping[str, float], spreads: Mapping[str, float]) -> str:
    """``"kl 0.0123, norm 45.6"``: each named value :func:`format_stable` to its own spread.

    Raises
    ------
    InvalidDataError
        If a value has no spread.
    """
    missing = [name for name in values if name not in spreads]
    if missing:
        raise InvalidDataError(f"no spread for {', '.join(missing)}")
    return ", ".join(f"{name} {format_stable(v, spreads[name])}" for name, v in values.items())


def format_decade(x: float, floor: float | None = None) -> str:
    """``"< 1e-04"``, ``"< 0.1"``: the least power of ten above ``|x|`` (``"0"``; ``"< floor"`` below floor).

    For numbers whose digits are a solver's rounding (they differ between BLAS kernels).
    """
    x = abs(float(x))
    if not math.isfinite(x):
        raise InvalidDataError(f"format_decade needs a finite number, got {x}")
    if floor is not None:
        exponent = math.log10(floor) if floor > 0 else math.nan
        if not exponent == round(exponent):
            raise InvalidDataError(f"format_decade's floor must be a power of ten, got {floor!r}")
        if x < floor:
            return f"< {format_power(round(exponent))}"
    if x == 0.0:
        return "0"
    return f"< {format_power(math.floor(math.log10(x)) + 1)}"


def _leading_digit(x: float) -> int:
    return int(f"{abs(x):e}"[0])


def format_estimate(value: float, se: float) -> str:
    """``value ± se``, the estimate's digits set by its standard error.

    The error to one significant digit (two where it starts with a 1, whose rounding would lose
    a third of it), the value to the same decimal place: ``0.9880 ± 0.0006``, ``12.7 ± 0.7``,
    ``1230 ± 40``, ``2.59e-05 ± 4e-07`` (an exponent for a value of a million or more, or below
    1e-3 with an error whose last digit is below 1e-4). An error that is zero or not a number leaves the value
    at 3 significant digits.
    """
    if not (math.isfinite(se) and se > 0):
        return f"{value:#.3g}".rstrip(".")
    error_digits = 2 if _leading_digit(se) == 1 else 1
    place = math.floor(math.log10(se)) - (error_digits - 1)  # the error's last digit: 10**place
    if round(se, -place) >= 10.0 ** (place + error_digits):  # 0.096 rounds to 0.10: one place up
        place += 1
    if abs(value) < 1e6 and (abs(value) >= 1e-3 or place >= -4):
        decimals = max(-place, 0)
        return f"{round(value, -place) + 0.0:.{decimals}f} ± {round(se, -place):.{decimals}f}"
    significant = max(1, math.floor(math.log10(abs(value))) - place + 1) if value else 1
    return f"{value:.{significant - 1}e} ± {se:.{error_digits}g}"
