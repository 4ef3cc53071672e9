"""A chapter's parameters: their values in every execution profile, each written once.

``paper`` reproduces the papers' settings (the notebook's ``parameters`` cell, so it runs
unchanged in Jupyter or Binder); ``quick`` is the test suite's seconds-scale run. Here is only
what other profiles change (:data:`CHANGES`; a test refuses a change repeating the cell's value).
``ntpnb reproduce`` injects the profile's values (plus ``profile`` and ``output_dir``) after that
cell with papermill.

A profile-dependent tolerance is a parameter (its comment says what it bounds), never a
``profile == "paper"`` test in a notebook; a ``paper`` threshold that is a paper's number is the
registry's (:func:`~ntpnb.chapter.registry.paper_value`; a test checks it). A parameter's meaning
is the comment of its line in the cell (:func:`read_parameters_cell`; ``ntpnb list`` prints it);
prose shows the run's value glued (:func:`glue_parameters`, ``{glue:text}`par_NAME```), never typed.
"""

from __future__ import annotations

import ast
import io
import math
import os
import tokenize
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InvalidDataError, NTPError
from ..jupyter_imports import import_jsonschema_without_iri_grammar
from .claims import PROFILE_NAMES
from .layout import find_project_root
from .prose import glue_text

#: ``CHANGES[notebook][profile]``: what a profile other than ``paper`` changes of the notebook's
#: ``parameters`` cell. A notebook not named here has no profiles.
CHANGES: dict[str, dict[str, dict[str, Any]]] = {
    "01_entropy_separability": {
        "quick": {
            # search_iters as at paper: the synthetic search reaches ~1e-14 (600: ~1e-11)
            "n_starts": 1,
            "n_random_W": 200,
            "n_recipe_seeds": 100,
            "n_triples": 200,
            "n_g": 31,
        },
    },
    "02_regularization_path": {
        "quick": {
            "toy_radii": 20,
            "synth_radii": 12,
            "cvxpy_radii": [4.0, 64.0],
            "toy_gd_iters": 20_000,
            "synth_gd_iters": 2_000,
            "gd_records": 20,
            "limit_instances": ["2D"],
        },
    },
    # fewer iterations and frames, the same instances and settings
    "03_gd_implicit_bias": {
        "quick": {
            "toy_iters": 20_000,
            "n_frames": 10,
            "n_geometry_draws": 40,
            "n_iter": 5_000,
            "long_iter": 50_000,
            "sgd_iter": 20_000,
            "spread_iter": 20_000,
            "toy_max_gap_ratio": 0.05,
            "toy_min_corr": 0.9,
            "toy_max_dist_ratio": 0.5,
            "toy_max_w15_gap": 0.2,
            "toy_max_row_dist": 5.0,
            "growth_range": [0.5, 1.5],
            "check_long_rate": False,
        },
    },
    # n_jobs as at paper, one process: the sweep takes about what starting joblib's workers
    # costs, and chapters run side by side under ntpnb reproduce --jobs
    "04_overparameterization": {
        "quick": {
            "m": 16,
            "configs": [[2, 1], [10, 1], [5, 2], [10, 6]],
            "d_step": 2,
            "n_trials": 10,
            # nested draws: the G-test rejects the count with a bias, one dimension away, at p < 1e-3
            # in 99.9% of simulated runs with the paper's 300 draws (86% with 150); at m = 16, 150
            # reject it in 99.7% of runs
            "n_trials_cover": 150,
            "gd_steps": 2000,
            "m_scaling": [8, 16, 32],
            "scaling_configs": [[5, 2]],
            "n_trials_scaling": 8,
            "gd_max_gap_ratio": 0.3,
        },
    },
    "05_autoregressive_text": {
        "quick": {
            "n_chars_stats": 20000,
            "n_chars_joint": 20,
            "n_chars_scale": 200,
            "gd_steps": 3000,
            "min_corr_joint": 0.8,
        },
    },
    "06_attention": {
        "quick": {
            "n_trials": 6,
            "n_iter": 800,
            "n_path": 8,
            "min_corr_acyclic": 0.85,
            "min_corr_general": 0.9,
            "max_cyc_dist": 0.2,
            "n_iter_local": 400,
            "min_local_corr": 0.9,
            # Fig. 6b's values are means over 100 trials of 2000 steps: not at this scale
            "check_fig6_values": False,
        },
    },
}

#: The parameters a run gives every notebook besides its profile's values (:func:`profile_parameters`).
RUN_PARAMETERS: tuple[str, ...] = ("profile", "output_dir")

#: Set by ``ntpnb reproduce`` for a chapter's kernel: the project whose ``notebooks/`` holds its
#: source (elsewhere, the project at or above the working folder).
PROJECT_VAR = "NTPNB_PROJECT"

#: The start order of notebooks with no recorded time in the output tree: slowest first, as
#: ``python -m benchmarks --notebooks`` measures them (starting chapter 3 last leaves a core idle).
#: Recorded times decide once there are any (:func:`ntpnb.runner.choice.longest_first`).
SLOWEST_FIRST: tuple[str, ...] = (
    "03_gd_implicit_bias",
    "05_autoregressive_text",
    "06_attention",
    "04_overparameterization",
    "01_entropy_separability",
    "02_regularization_path",
)


def profile_parameters(source: Path, profile: str) -> dict[str, Any]:
    """The parameters of the notebook ``source`` under ``profile``, as a new dict.

    The ``parameters`` cell's values (but :data:`RUN_PARAMETERS`) with the profile's :data:`CHANGES`.

    Raises
    ------
    NTPError
        If the profile or the notebook is unknown, or its ``parameters`` cell unreadable.
    """
    if profile not in PROFILE_NAMES:
        raise NTPError(f"unknown profile {profile!r}; use one of {', '.join(PROFILE_NAMES)}")
    if source.stem not in CHANGES:
        raise NTPError(f"notebook {source.stem!r} has no profile in ntpnb/chapter/parameters.py")
    cell = read_parameters_cell(source)
    values = {name: p.value for name, p in cell.items() if name not in RUN_PARAMETERS}
    return {**values, **CHANGES[source.stem].get(profile, {})}


def notebook_source(notebook: str) -> Path:
    """The Jupytext source of the chapter ``notebook``, as its kernel finds it (:data:`PROJECT_VAR`)."""
    return Path(os.environ.get(PROJECT_VAR) or find_project_root()) / "notebooks" / f"{notebook}.md"


def parse_overrides(pairs: Sequence[str]) -> dict[str, str]:
    """``["n_g=11", "seed=3"]`` as ``{"n_g": "11", "seed": "3"}``; NTPError on a bad or repeated item."""
    parsed: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise NTPError(f"bad parameter override {_shown(pair)}: write KEY=VALUE, e.g. -p seed=3")
        if key in parsed:
            raise NTPError(f"parameter {key!r} is overridden twice")
        parsed[key] = value.strip()
    return parsed


_BAD = object()  # marks a value that does not fit the parameter's type

#: The integers a parameter may hold: numpy's int64 (2**64 as a seed would fail inside a chapter).
INT_RANGE = (-(2**63), 2**63 - 1)


def _fits(value: Any, like: Any) -> Any:
    """``value`` (a Python literal) as the kind of the profile's value ``like`` (None: any), or _BAD."""
    if like is None:
        return value
    if isinstance(value, bool) != isinstance(like, bool):  # True is not the number 1, nor a text
        return _BAD
    if isinstance(like, float):
        return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else _BAD
    if isinstance(like, list):
        if not isinstance(value, list):
            return _BAD
        if len({type(item) for item in like}) != 1:  # an empty or mixed list in the profile: any items
            return value
        items = [_fits(item, like[0]) for item in value]
        return _BAD if any(item is _BAD for item in items) else items
    if type(like) is int:
        return value if isinstance(value, int) and INT_RANGE[0] <= value <= INT_RANGE[1] else _BAD
    return value if isinstance(value, type(like)) else _BAD


def _typed(text: str, like: Any) -> Any:
    """``text`` read as the kind of ``like`` (a bare word is a string); :data:`_BAD` if it does not fit."""
    if isinstance(like, bool):
        return {"true": True, "false": False}.get(text.lower(), _BAD)
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text if isinstance(like, str) else _BAD
    if isinstance(like, str):
        return value if isinstance(value, str) else text
    return _fits(value, like)


def _requirement(like: Any) -> str:
    """What a value for a parameter like ``like`` must be, for an error message."""
    if isinstance(like, bool):
        return "true or false"
    if isinstance(like, int):
        return f"a whole number from {INT_RANGE[0]} to {INT_RANGE[1]}"
    if isinstance(like, float):
        return "a finite number"
    if isinstance(like, list) and len({type(item) for item in like}) == 1:
        items = {bool: "true/false values", int: "whole numbers", float: "numbers", str: "texts"}
        return f"a list of {items.get(type(like[0]), type(like[0]).__name__ + ' values')}"
    return f"a {type(like).__name__}"


def apply_overrides(source: Path, profile: str, overrides: Mapping[str, str]) -> dict[str, Any]:
    """The parameters of the notebook ``source`` under ``profile`` with ``overrides`` (text) applied.

    Each value is read as the type of the profile's value (``bool`` as ``true``/``false``).

    Raises
    ------
    NTPError
        On an unknown key or a value that does not fit; the message lists the notebook's
        parameters with their current values.
    """
    notebook, parameters = source.stem, profile_parameters(source, profile)
    known = ", ".join(f"{k}={v!r}" for k, v in parameters.items())
    for key, text in overrides.items():
        if key not in parameters:
            raise NTPError(f"{notebook} has no parameter {key!r}; its parameters ({profile}): {known}")
        like = parameters[key]
        value = _typed(text, like)
        if value is _BAD:
            raise NTPError(
                f"{notebook}: {key}={_shown(text)} is not {_requirement(like)} "
                f"(the {profile} profile has {key}={like!r}); its parameters: {known}"
            )
        parameters[key] = value
    return parameters


def _shown(text: str, limit: int = 60) -> str:
    """``repr(text)``, shortened in the middle when longer than ``limit``."""
    shown = repr(text)
    if len(shown) <= limit:
        return shown
    return f"{shown[: limit // 2]}...{shown[-limit // 2 :]} ({len(text)} characters)"


@dataclass(frozen=True)
class CellParameter:
    """One assignment of a notebook's ``parameters`` cell: its value and what it means."""

    name: str
    value: Any
    meaning: str  # from the cell's comments (:func:`parse_parameters_cell`); "" if it has none


def read_parameters_cell(source: Path) -> dict[str, CellParameter]:
    """The :class:`CellParameter` of each assignment of the notebook ``source``'s ``parameters`` cell.

    The cell is the code cell tagged ``parameters`` (papermill's tag).

    Raises
    ------
    NTPError
        If the notebook has no such cell or several, or :func:`parse_parameters_cell` fails.
    """
    import_jsonschema_without_iri_grammar()
    import jupytext  # the notebooks' format; loaded only by what reads them

    cells = jupytext.read(source).cells
    tagged = [c for c in cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])]
    if len(tagged) != 1:
        raise NTPError(f"{source.name}: needs one code cell tagged 'parameters', has {len(tagged)}")
    return parse_parameters_cell(tagged[0].source, source.name)


def parse_parameters_cell(cell: str, notebook: str = "the notebook") -> dict[str, CellParameter]:
    """The assignments ``NAME = LITERAL`` of the source of a parameters cell, with their meanings.

    A meaning is the comment ending the line (``n = 5000  # samples``), after the heading of its
    group: consecutive comment lines on their own head the assignments right below them, up to
    the next blank or comment line (``# synthetic instance`` above it gives ``synthetic instance:
    samples``). A comment line followed by a blank line heads nothing.

    Raises
    ------
    NTPError
        If the cell is not Python, or holds anything but assignments of literals to names.
    """
    try:
        tree = ast.parse(cell)
        trailing, own_line = _comments(cell)
    except (SyntaxError, tokenize.TokenError) as exc:
        raise NTPError(f"{notebook}: its parameters cell is not Python ({exc})") from None
    parameters: dict[str, CellParameter] = {}
    heading, previous = "", 0
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if not isinstance(target, ast.Name):
            raise NTPError(f"{notebook}: line {node.lineno} of its parameters cell is not NAME = VALUE")
        name = target.id
        try:
            value = ast.literal_eval(node.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            raise NTPError(f"{notebook}: the parameter {name} is not a Python literal") from None
        end = node.end_lineno or node.lineno
        heading = _heading(own_line, previous, node.lineno, heading)
        own = " ".join(trailing[line] for line in range(node.lineno, end + 1) if line in trailing)
        meaning = f"{heading}: {own}" if heading and own else heading or own
        parameters[name] = CellParameter(name, value, meaning)
        previous = end
    return parameters


def _comments(cell: str) -> tuple[dict[int, str], dict[int, str]]:
    """The comments of ``cell`` by line, without ``#``: those ending a line, those alone on one."""
    trailing: dict[int, str] = {}
    own_line: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(cell).readline):
        if token.type == tokenize.COMMENT:
            line, column = token.start
            alone = not token.line[:column].strip()
            (own_line if alone else trailing)[line] = token.string.lstrip("#").strip()
    return trailing, own_line


def _heading(own_line: Mapping[int, str], previous: int, line: int, heading: str) -> str:
    """The group heading of an assignment at ``line``, the last ending at ``previous`` (see above)."""
    if line == previous + 1:
        return heading
    first = line
    while first - 1 > previous and first - 1 in own_line:
        first -= 1
    return " ".join(own_line[n] for n in range(first, line))


#: The glue name of a parameter's value: ``{glue:text}`par_m``` in a chapter's prose.
GLUE_KEY = "par_{name}"


def format_parameter(value: Any) -> str:
    """A parameter's value as a chapter's prose shows it: ``0.5``, ``1e-06``, ``5, 2``, ``(5, 2), (10, 3)``.

    Raises
    ------
    InvalidDataError
        If ``value`` is none of the literals a parameters cell holds.
    """
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, (bool, int)):
        return repr(value)
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        items = [format_parameter(item) for item in value]
        if value and all(isinstance(item, (list, tuple)) for item in value):
            return ", ".join(f"({item})" for item in items)
        return ", ".join(items)
    raise InvalidDataError(
        f"a parameter's value is a literal of a parameters cell, not {type(value).__name__}"
    )


def glue_parameters(notebook: str, namespace: Mapping[str, Any]) -> None:
    """Glue every parameter of ``notebook`` as :data:`GLUE_KEY` with its value in ``namespace`` (the run's).

    Raises
    ------
    NTPError
        If ``notebook`` has no profile, or ``namespace`` lacks one of its parameters.
    """
    names = profile_parameters(notebook_source(notebook), "paper")
    missing = [name for name in names if name not in namespace]
    if missing:
        raise NTPError(f"{notebook}: glue_parameters finds no value for {', '.join(missing)}")
    for name in names:
        glue_text(GLUE_KEY.format(name=name), format_parameter(namespace[name]))
