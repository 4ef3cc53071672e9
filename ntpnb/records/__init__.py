"""The records layer: output trees, the records of runs, and how they are written and trusted.

Below the runner, the book and the explorer (and the chapter helpers, which write records), above
the core: nothing here imports :mod:`ntpnb.chapter`, :mod:`ntpnb.runner`, :mod:`ntpnb.book`,
:mod:`ntpnb.explore` or the command line. Each module's docstring says what it holds.
"""
