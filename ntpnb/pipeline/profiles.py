"""Execution profiles: the parameter values of every notebook, in one place.

``paper`` reproduces the papers' settings; ``quick`` is a seconds-scale run used by the test
suite. ``ntpnb reproduce`` injects the chosen profile's values (plus ``profile`` and
``output_dir``) into the notebook's ``parameters`` cell with papermill. The ``parameters``
cell of each notebook repeats the ``paper`` values so that the notebook runs unchanged in
Jupyter or Binder; a test keeps the two identical.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from ..errors import NTPError

__all__ = ["PROFILE_NAMES", "PROFILES", "profile_parameters"]

PROFILE_NAMES: tuple[str, ...] = ("paper", "quick")

_RAW: dict[str, dict[str, dict[str, Any]]] = {
    "01_entropy_separability": {
        "paper": {
            "seed": 0,
            "n_random_W": 2000,
            "n_recipe_seeds": 1000,
            "n_triples": 2000,
            "g_max": 30.0,
            "n_g": 61,
        },
        "quick": {
            "seed": 0,
            "n_random_W": 200,
            "n_recipe_seeds": 100,
            "n_triples": 200,
            "g_max": 30.0,
            "n_g": 31,
        },
    },
    "04_overparameterization": {
        "paper": {
            "seed": 0,
            "m": 30,
            "configs": [[2, 1], [5, 1], [10, 1], [5, 2], [10, 3], [10, 6]],
            "d_step": 1,
            "n_trials": 30,
            "n_trials_cover": 150,
            "n_jobs": 2,
            "gd_steps": 20000,
        },
        "quick": {
            "seed": 0,
            "m": 16,
            "configs": [[2, 1], [10, 1], [5, 2], [10, 6]],
            "d_step": 2,
            "n_trials": 10,
            "n_trials_cover": 60,
            "n_jobs": 1,
            "gd_steps": 2000,
        },
    },
    "05_autoregressive_text": {
        "paper": {
            "seed": 0,
            "window": 7,
            "n_chars_stats": 0,
            "n_chars_fit": 150,
            "d_fractions": [0.25, 0.5, 0.75],
            "gd_length": 2,
            "gd_steps": 20000,
            "gd_lr": 2.0,
        },
        "quick": {
            "seed": 0,
            "window": 7,
            "n_chars_stats": 20000,
            "n_chars_fit": 80,
            "d_fractions": [0.25, 0.5, 0.75],
            "gd_length": 2,
            "gd_steps": 3000,
            "gd_lr": 2.0,
        },
    },
}

#: ``PROFILES[notebook][profile]`` is the read-only mapping of that run's parameter values.
PROFILES = MappingProxyType(
    {
        name: MappingProxyType({p: MappingProxyType(values) for p, values in per.items()})
        for name, per in _RAW.items()
    }
)


def profile_parameters(notebook: str, profile: str) -> dict[str, Any]:
    """The parameter values of ``notebook`` under ``profile``, as a new dict.

    Raises
    ------
    NTPError
        If the profile or the notebook is unknown.
    """
    if profile not in PROFILE_NAMES:
        raise NTPError(f"unknown profile {profile!r}; use one of {', '.join(PROFILE_NAMES)}")
    if notebook not in PROFILES:
        raise NTPError(f"notebook {notebook!r} has no profile in ntpnb/pipeline/profiles.py")
    return dict(PROFILES[notebook][profile])
