"""First-order methods shared by both papers' models: GD, normalized GD, Adam (and SGD).

A method is an :class:`Optimizer` made by :func:`gd`, :func:`sgd`, :func:`normalized_gd` or
:func:`adam`; the chapters record its quantities on a log-spaced grid of iterations
(:func:`log_grid`) and start from :func:`lecun_init`. A run of either paper is recorded as a
:class:`Trace`, read by attribute. The update rules, their checks and the loop
that applies them are described where they are defined (``ntpnb._optim``).
"""

from __future__ import annotations

from ._optim import (
    AUTHORS_NGD_EPS,
    Optimizer,
    Trace,
    adam,
    gd,
    lecun_init,
    log_grid,
    normalized_gd,
    sgd,
)

#: The methods, what they return, and the settings of Paper B's code.
__all__ = [
    "Optimizer",
    "Trace",
    "gd",
    "sgd",
    "normalized_gd",
    "adam",
    "log_grid",
    "lecun_init",
    "AUTHORS_NGD_EPS",
]
