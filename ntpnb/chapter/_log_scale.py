"""The book's logarithmic axis: no minor ticks over many decades, and decades in plain text.

:func:`ntpnb.chapter._plotting.use_style` registers :class:`LogScale` as matplotlib's ``"log"``
scale; the module loads matplotlib, and is imported only then.
"""

from __future__ import annotations

import math

import matplotlib as mpl
from matplotlib import scale as mscale
from matplotlib import ticker
from matplotlib.ticker import LogLocator

#: A logarithmic axis that spans more decades than this has no minor ticks: they are a dense comb
#: that says nothing the labelled decades do not, and most of the time a figure takes to write.
MINOR_TICKS_MAX_DECADES: float = 3.0

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _power_of_ten(x: float, _pos: int | None = None) -> str:
    """``"10"`` with the exponent in superscript digits for a power of ten, else no label."""
    if not x > 0:
        return ""
    exponent = round(math.log10(x))
    return f"10{str(exponent).translate(_SUPERSCRIPT)}" if abs(x / 10.0**exponent - 1) < 1e-9 else ""


class _MinorLogLocator(LogLocator):
    """Matplotlib's minor ticks of a log axis, or none beyond :data:`MINOR_TICKS_MAX_DECADES`."""

    def __call__(self):  # type: ignore[no-untyped-def]
        low, high = self.axis.get_view_interval()
        if low > 0 and high / low > 10**MINOR_TICKS_MAX_DECADES:
            return []
        return super().__call__()


class LogScale(mscale.LogScale):
    """Matplotlib's ``"log"`` scale: fewer minor ticks, and decades labelled in plain text (``10⁻⁵⁰``).

    Matplotlib's default labels (``$10^{-50}$``) go through its TeX parser at every draw: on axes
    that span hundreds of decades that was most of a figure's time.
    """

    if mpl.__version_info__ >= (3, 11):  # scales are made without their axis from 3.11 on

        def __init__(self, *, base: float = 10, subs: object = None, nonpositive: str = "clip") -> None:
            super().__init__(base=base, subs=subs, nonpositive=nonpositive)

    def set_default_locators_and_formatters(self, axis):  # type: ignore[no-untyped-def]
        """Matplotlib's log locators and formatters, with the minor ticks and labels above."""
        super().set_default_locators_and_formatters(axis)
        axis.set_minor_locator(_MinorLogLocator(self.base, self.subs))
        if self.base == 10:
            axis.set_major_formatter(ticker.FuncFormatter(_power_of_ten))
