"""A chapter's parameters: their values in every execution profile, each written once.

``paper`` reproduces the papers' settings (the notebook's ``parameters`` cell, so it runs
unchanged in Jupyter or Binder); ``quick`` is the test suite's smaller run. Here is only
what other profiles change (:data:`CHANGES`; a test refuses a change repeating the cell's value).
``ntpnb reproduce`` injects the profile's values (plus ``profile`` and ``output_dir``) after that
cell with papermill.

A profile-dependent tolerance is a parameter (its comment says what it bounds), never a
``profile == "paper"`` test in a notebook; a ``paper`` threshold that is a paper's number is the
registry's (:func:`~ntpnb.evidence._registry.paper_value`; a test checks it). A parameter's meaning
is the comment of its line in the cell (:func:`read_parameters_cell`; ``ntpnb list`` prints it);
prose shows the run's value glued (:func:`glue_parameters`, ``{glue:text}`par_NAME```), never typed.
"""

from __future__ import annotations

import ast
import functools
import io
import os
import re
import shlex
import tokenize
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._jupyter_imports import import_jsonschema_without_iri_grammar
from .._validation import is_real
from ..errors import InvalidDataError, NTPError
from ..records._places import (
    COPIES_DIRNAME,
    DEFAULT_OUTPUT_DIRNAME,
    exploratory_output_dir,
    find_project_root,
    output_tree,
)
from ..records._run import PROFILE_NAMES
from ..records._tree import TreeRecord, claim_tree, write_tree_record
from ._domains import ANY, Domain, closest, domain_of_value, split_declaration
from ._prose import glue_text

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
            "toy_max_gap_ratio": 0.05,
            "toy_max_corr_gap": 0.1,
            "toy_max_dist_ratio": 0.5,
            "toy_max_w15_gap": 0.2,
            "toy_max_row_dist": 5.0,
        },
    },
    "04_gd_synthetic_instance": {
        "quick": {
            "n_iter": 5_000,
            "long_iter": 50_000,
            "sgd_iter": 20_000,
            "spread_iter": 20_000,
            "growth_range": [0.5, 1.5],
            "check_long_rate": False,
        },
    },
    # n_jobs as at paper, one process: the sweep takes about what starting joblib's workers
    # costs, and chapters run side by side under ntpnb reproduce --jobs
    "05_overparameterization": {
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
    "06_autoregressive_text": {
        "quick": {
            "n_chars_stats": 20000,
            "n_chars_joint": 20,
            "n_chars_scale": 200,
            "gd_steps": 3000,
            "min_corr_joint": 0.8,
        },
    },
    "07_attention": {
        "quick": {
            "n_trials": 6,
            "n_iter": 800,
            "n_path": 8,
            "min_corr_acyclic": 0.85,
            # 800 steps end far below Fig. 4a's value: the quick run tests the code, not it
            "corr_general_slack": 0.08,
            "max_cyc_dist": 0.2,
            "n_iter_local": 400,
            "min_local_corr": 0.9,
            # Fig. 6b's values are means over 100 trials of 2000 steps: not at this scale
            "check_fig6_values": False,
        },
    },
    # a decade per step of the grid (still a decade on each side of 2/L), shorter runs, two
    # sizes, a smaller draw
    "08_beyond": {
        "quick": {
            "n_steps": 6,
            "step_iter": 2000,
            "dense_iter": 300,
            "horizon_m": [12, 25],
            "horizon_budgets": [500, 2000],
            "cond_m": 16,
            "cond_d_step": 4,
            "cond_gd_steps": 500,
            "b_map_seeds": 2,
            "b_map_trials": 4,
            "m4_lrs": [0.001, 0.01, 0.1, 1.0],
            "m4_iter": 800,
            "m5_ns": [4, 16],
            "m5_trials": 4,
            "m5_iter": 400,
            "m5_power_draws": 200,
        },
    },
}

#: ``BUDGETS[notebook]``: its parameters that are budgets, how many iterations an optimizer runs.
#: A point of an explore run below the paper's budget may fail a check because it stopped early
#: (:func:`budget_parameters`; the maps say so, :mod:`ntpnb.explore._words`).
BUDGETS: dict[str, tuple[str, ...]] = {
    "01_entropy_separability": ("search_iters",),
    "02_regularization_path": ("toy_gd_iters", "synth_gd_iters"),
    "03_gd_implicit_bias": ("toy_iters",),
    "04_gd_synthetic_instance": ("n_iter", "long_iter", "sgd_iter", "spread_iter"),
    "05_overparameterization": ("gd_steps",),
    "06_autoregressive_text": ("gd_steps",),
    "07_attention": ("n_iter", "n_iter_local"),
    "08_beyond": ("step_iter", "horizon_iter", "cond_gd_steps", "m4_iter", "m5_iter"),
}


def budget_parameters(source: Path) -> dict[str, int]:
    """The budgets (:data:`BUDGETS`) of the notebook ``source`` with their values in its cell, the paper's."""
    cell = read_parameters_cell(source)
    return {name: cell[name].value for name in BUDGETS.get(source.stem, ()) if name in cell}


def paper_setting(source: Path, names: Iterable[str]) -> dict[str, float]:
    """The paper's value of each of ``names`` that is a number in the notebook ``source``'s cell.

    The ``parameters`` cell holds the paper's values (a profile changes them); a parameter that is
    not a number there (a list, a text, a flag) has no one setting to mark on a map's axis.
    """
    cell = read_parameters_cell(source)
    return {name: cell[name].value for name in names if name in cell and is_real(cell[name].value)}


#: The parameters of a run, not of its chapter (never ``-p``; not among :func:`profile_parameters`),
#: each with the ``ntpnb reproduce`` option that sets it: the profile, the output tree, and the
#: values an interactive run keeps at any profile (:func:`_profile_values_taken`; no option: a run
#: of ``ntpnb reproduce`` runs each ``-p`` value as given).
RUN_PARAMETERS: dict[str, str] = {"profile": "--profile", "output_dir": "--out", "pinned": ""}

#: Set by ``ntpnb reproduce`` for a chapter's kernel: the project whose ``notebooks/`` holds its
#: source (elsewhere, the project at or above the working folder).
PROJECT_VAR = "NTPNB_PROJECT"


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
        raise NTPError(f"notebook {source.stem!r} has no profile in ntpnb/chapter/_parameters.py")
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


#: The brackets within which a comma belongs to a value of ``-p NAME=V1,V2`` (:func:`split_values`).
_OPENING, _CLOSING = "[({", "])}"


def split_values(text: str) -> list[str]:
    """``text`` split at its commas outside brackets and quotes, each part stripped."""
    parts, depth, quote, start = [], 0, "", 0
    for i, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in _OPENING:
            depth += 1
        elif char in _CLOSING:
            depth = max(depth - 1, 0)
        elif char == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    return [*parts, text[start:].strip()]


def is_range_text(text: str) -> bool:
    """Whether ``-p NAME=TEXT`` writes a range ``LO..HI:SCALE:N`` (``..``, not in brackets or quotes)."""
    return ".." in text and not text.lstrip().startswith(("[", "(", "'", '"'))


def several_values(text: str) -> bool:
    """Whether ``-p NAME=TEXT`` asks for several values (a list or a range): an axis of a grid."""
    return is_range_text(text) or len(split_values(text)) > 1


def apply_overrides(source: Path, profile: str, overrides: Mapping[str, str]) -> dict[str, Any]:
    """The parameters of the notebook ``source`` under ``profile`` with ``overrides`` (text) applied.

    Each value is read in the parameter's domain (:meth:`~ntpnb.chapter._domains.Domain.read`).

    Raises
    ------
    NTPError
        In one line, on a key that is an option of its own (:data:`RUN_PARAMETERS`: named), an
        unknown key (with the notebooks that have it, else the nearest name) or a value outside
        the domain (named in words).
    """
    notebook, parameters = source.stem, profile_parameters(source, profile)
    cell = read_parameters_cell(source)
    for key, text in overrides.items():
        if key in RUN_PARAMETERS:
            raise NTPError(run_parameter_error(key, text))
        if key not in parameters:
            elsewhere = ", ".join(parameter_owners(source.parent, key, besides=source))
            near = f" (it is a parameter of {elsewhere})" if elsewhere else closest(key, list(parameters))
            known = ", ".join(parameters)
            raise NTPError(f"{notebook} has no parameter {key!r}{near}; its parameters: {known}")
        try:
            parameters[key] = cell[key].domain.read(text)
        except ValueError as exc:
            meaning = f"{key}: {cell[key].meaning}; " if cell[key].meaning else ""
            raise NTPError(
                f"{notebook}: {key}={_shown(text)} is not {exc} "
                f"({meaning}the {profile} profile has {key}={parameters[key]!r})"
                + _axis_hint(notebook, profile, key, text)
            ) from None
    return parameters


def _axis_hint(notebook: str, profile: str, key: str, text: str) -> str:
    """``; several values are an axis ...``: what a refused ``-p KEY=TEXT`` of several values means."""
    if not several_values(text):
        return ""
    chosen = f" --profile {profile}" if profile != "paper" else ""
    command = f"ntpnb explore {notebook.split('_')[0]}{chosen} -p {shlex.quote(f'{key}={text}')}"
    return (
        f"; several values are an axis of a grid, not one setting: `{command}` runs the chapter at "
        "each of them (ntpnb reproduce runs one setting)"
    )


def run_parameter_error(key: str, text: str) -> str:
    """Why ``-p KEY=TEXT`` is refused for a parameter every run sets (:data:`RUN_PARAMETERS`): its option."""
    option, profiles = RUN_PARAMETERS[key], ", ".join(PROFILE_NAMES)
    if not option:
        what = (
            f"{key} keeps values of the cell at a profile in a run outside ntpnb reproduce (JupyterLab, "
            "papermill); ntpnb reproduce runs each -p value as given, at any profile"
        )
    elif key != "profile":
        what = f"the output folder is chosen with `{option} {shlex.quote(text)}`"
    elif text in PROFILE_NAMES:
        what = f"the profile is chosen with `{option} {text}` (the profiles: {profiles})"
    else:
        what = f"the profile is chosen with {option}, one of {profiles} ({text!r} is none of them)"
    return f"-p {key}={text} sets no parameter of a chapter: {what}"


def parameter_owners(folder: Path, key: str, besides: Path | None = None) -> list[str]:
    """The notebooks in ``folder`` (but ``besides``) whose ``parameters`` cell has ``key``, by name."""
    return [
        other.stem
        for other in sorted(folder.glob("[0-9]*.md"))
        if other != besides and key in read_parameters_cell(other) and key not in RUN_PARAMETERS
    ]


def missing_parameters(source: Path, keys: Iterable[str]) -> list[str]:
    """Those of ``keys`` that are not parameters of the notebook ``source`` (a run cannot pass them)."""
    cell = read_parameters_cell(source)
    return [key for key in keys if key not in cell or key in RUN_PARAMETERS]


def _shown(value: Any) -> str:
    """``repr(value)``, shortened in the middle when longer than 60 characters."""
    shown = repr(value)
    if len(shown) <= 60:
        return shown
    return f"{shown[:30]}...{shown[-30:]} ({len(shown)} characters)"


@dataclass(frozen=True)
class CellParameter:
    """One assignment of a notebook's ``parameters`` cell: its value, what it means, what it may be."""

    name: str
    value: Any
    meaning: str  # from the cell's comments (:func:`parse_parameters_cell`); "" if it has none
    #: The values it may take: declared in its comment, else the kind of its value.
    domain: Domain = ANY
    declared: bool = False  # whether its comment declares the domain
    group: str = ""  # the label of its group in the cell (:data:`GROUP_LABEL`); "" before any

    def check(self, value: Any, notebook: str) -> Any:
        """``value`` as the domain holds it; NTPError naming the parameter, the domain and the value."""
        try:
            return self.domain.check(value)
        except ValueError as exc:
            meaning = f" ({self.meaning})" if self.meaning else ""
            raise NTPError(f"{notebook}: {self.name} = {_shown(value)} is not {exc}{meaning}") from None


def read_parameters_cell(source: Path) -> dict[str, CellParameter]:
    """The :class:`CellParameter` of each assignment of the notebook ``source``'s ``parameters`` cell.

    The cell is the code cell tagged ``parameters`` (papermill's tag).

    Raises
    ------
    NTPError
        If the notebook has no such cell or several, or :func:`parse_parameters_cell` fails.
    """
    status = Path(source).stat()
    cell = _parameters_cell_source(Path(source).resolve(), status.st_mtime_ns, status.st_size)
    return parse_parameters_cell(cell, source.name)


@functools.lru_cache(maxsize=64)
def _parameters_cell_source(source: Path, mtime_ns: int, size: int) -> str:
    """The source of the ``parameters`` cell of the notebook ``source`` as it is at ``mtime_ns`` and ``size``.

    Read once per version of the file: a command checks every chapter's cell several times
    (each profile, each point of a grid). The cells are those jupytext reads
    (:func:`~ntpnb._myst_text.code_cells`); a text that reader cannot take is read by jupytext.

    Raises
    ------
    NTPError
        If the notebook has no such cell or several.
    """
    from .._myst_text import code_cells

    try:
        cells = code_cells(source.read_text(encoding="utf-8"))
        tagged = [code for options, code in cells if "parameters" in options.get("tags", [])]
    except Exception:  # a text the light reader cannot take: jupytext reads it, or says what is wrong
        import_jsonschema_without_iri_grammar()
        import jupytext  # the notebooks' format; loaded only by what reads them

        code = [c for c in jupytext.read(source).cells if c.cell_type == "code"]
        tagged = [c.source for c in code if "parameters" in c.metadata.get("tags", [])]
    if len(tagged) != 1:
        raise NTPError(f"{source.name}: needs one code cell tagged 'parameters', has {len(tagged)}")
    return tagged[0]


#: A group label of a parameters cell: a comment line ``# --- experiment settings ---``.
GROUP_LABEL = re.compile(r"^-{3}\s*(?P<label>.*?)\s*-{3}$")

#: The groups of a chapter's parameters cell, in order: what the experiment does, what its claim
#: checks require (a test keeps every notebook's parameters in them, besides :data:`RUN_PARAMETERS`).
GROUPS: tuple[str, ...] = ("experiment settings", "pass/fail thresholds")


def parse_parameters_cell(cell: str, notebook: str = "the notebook") -> dict[str, CellParameter]:
    """The assignments ``NAME = LITERAL`` of the source of a parameters cell, with their meanings.

    A meaning is the comment ending the line (``n = 5000  # samples``), after the heading of its
    group: consecutive comment lines on their own head the assignments right below them, up to
    the next blank or comment line (``# synthetic instance`` above it gives ``synthetic instance:
    samples``). A comment line followed by a blank line heads nothing. An assignment whose line
    has no meaning of its own takes the comment lines right above it as its meaning, and they
    head nothing else. The meaning may open with the parameter's domain in braces
    (``# {int >= 1} samples``, :mod:`ntpnb.chapter._domains`). A comment line ``# --- LABEL ---``
    starts the group ``LABEL`` (:data:`GROUPS`) and heads nothing.
    """
    trailing: dict[int, str] = {}  # the comments (without ``#``) ending a line, by line
    own_line: dict[int, str] = {}  # those alone on their line
    try:
        tree = ast.parse(cell)
        for token in tokenize.generate_tokens(io.StringIO(cell).readline):
            if token.type == tokenize.COMMENT:
                line, column = token.start
                alone = not token.line[:column].strip()
                (own_line if alone else trailing)[line] = token.string.lstrip("#").strip()
    except (SyntaxError, tokenize.TokenError) as exc:
        raise NTPError(f"{notebook}: its parameters cell is not Python ({exc})") from None
    labels = {line: m["label"] for line, text in own_line.items() if (m := GROUP_LABEL.match(text))}
    headings = {line: text for line, text in own_line.items() if line not in labels}
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
        above, first = heading, node.lineno  # the heading: the comment lines right above, if any
        while first - 1 > previous and first - 1 in headings:
            first -= 1
        if node.lineno != previous + 1:
            above = " ".join(headings[n] for n in range(first, node.lineno))
        own = " ".join(trailing[line] for line in range(node.lineno, end + 1) if line in trailing)
        try:
            declared, own = split_declaration(own)
            if not own and above and node.lineno != previous + 1:  # the lines above are its own
                declared_above, own = split_declaration(above)
                declared, heading = declared or declared_above, ""
            else:
                heading = above
        except NTPError as exc:
            raise NTPError(f"{notebook}: the parameter {name}: {exc}") from None
        meaning = f"{heading}: {own}" if heading and own else heading or own
        group = next((labels[line] for line in sorted(labels, reverse=True) if line < node.lineno), "")
        domain = declared or domain_of_value(value)
        parameter = CellParameter(name, value, meaning, domain, declared is not None, group)
        parameter.check(value, notebook)  # a cell's own value lies in its declared domain
        parameters[name] = parameter
        previous = end
    return parameters


#: The glue name of a parameter's value: ``{glue:text}`par_m``` in a chapter's prose.
GLUE_KEY = "par_{name}"


def format_parameter(value: Any) -> str:
    """A parameter's value as prose shows it: ``0.5``, ``1e-06``, ``5, 2``, ``(5, 2), (10, 3)``."""
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


def chapter_parameters(notebook: str, namespace: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters of this run of ``notebook``, from its ``parameters`` cell's ``namespace``, checked.

    The cell right after a chapter's ``parameters`` cell calls it:
    ``globals().update(chapter_parameters("01_entropy_separability", globals()))``.

    Run by ``ntpnb reproduce`` (``output_dir`` given), the values are the runner's, checked in
    their domains. Run any other way (JupyterLab, Binder, papermill without ``output_dir``), it is
    an *interactive run*: the profile's values (:data:`CHANGES`) replace those the cell leaves as
    saved in the chapter's source, but those named in its ``pinned`` (a value typed on purpose,
    even the paper's, runs as typed; so does a value set otherwise, as by papermill's ``-p``), and
    the outputs go to a tree of their own (:func:`~ntpnb.records._places.exploratory_output_dir`,
    labelled so in its ``run.json``), never the book's ``outputs/``. Its first output says so, and
    which values are in effect: each the profile replaced, with the cell's (:func:`_interactive_lines`).

    Returns
    -------
    dict
        Every parameter of the cell with its value, ``output_dir`` the tree to write.

    Raises
    ------
    NTPError
        On an unknown profile, a value outside its domain (named in words), a parameter missing
        from ``namespace``, a ``pinned`` name that is no parameter, or an ``output_dir`` that is
        the book's own tree.
    """
    source = notebook_source(notebook)
    cell = read_parameters_cell(source)
    missing = [name for name in cell if name not in namespace]
    if missing:
        raise NTPError(f"{notebook}: no value for {', '.join(missing)} (run the parameters cell first)")
    values = {name: namespace[name] for name in cell}
    profile, output_dir = values["profile"], values["output_dir"]
    if profile not in PROFILE_NAMES:
        raise NTPError(f"{notebook}: profile = {profile!r} is none of {', '.join(map(repr, PROFILE_NAMES))}")
    project = source.parent.parent
    taken = _profile_values_taken(notebook, values, cell) if output_dir is None else {}
    checked = {name: cell[name].check(value, notebook) for name, value in (values | taken).items()}
    if output_dir is None:
        checked["output_dir"] = str(_interactive_tree(notebook, project, checked, cell, taken))
    elif Path(output_dir).resolve() == (project / DEFAULT_OUTPUT_DIRNAME).resolve():
        raise NTPError(
            f"{notebook}: output_dir {output_dir} is the book's own tree, which only ntpnb reproduce "
            "writes; set output_dir = None (a tree of its own under outputs/runs/interactive/)"
        )
    return checked


#: The run parameter of a chapter's cell naming the values an interactive run keeps at any profile.
PINNED = "pinned"


def _profile_values_taken(
    notebook: str, values: Mapping[str, Any], cell: Mapping[str, CellParameter]
) -> dict[str, Any]:
    """The profile's values an interactive run of ``values`` takes: for those the cell leaves as saved.

    A value left as saved is the chapter source's own (``cell``), of the same type; one named in
    ``values[PINNED]`` is kept as the cell has it, at any profile.

    Raises
    ------
    NTPError
        If ``pinned`` names what is not a parameter of the cell (with the nearest name).
    """
    pinned = cell[PINNED].check(values[PINNED], notebook) if PINNED in cell else None
    known = [name for name in cell if name not in RUN_PARAMETERS]
    for name in pinned or ():
        if name not in known:
            raise NTPError(
                f"{notebook}: pinned names {name!r}, which is no parameter of the cell{closest(name, known)}"
            )
    changes = CHANGES.get(notebook, {}).get(values["profile"], {})
    return {
        name: value
        for name, value in changes.items()
        if name not in (pinned or ()) and _left_as_saved(values[name], cell[name].value)
    }


def _left_as_saved(value: Any, saved: Any) -> bool:
    """Whether a cell's ``value`` is the ``saved`` one of the chapter's source (equal, of the same type)."""
    return bool(value == saved) and type(value) is type(saved)


def _interactive_tree(
    notebook: str,
    project: Path,
    values: Mapping[str, Any],
    cell: Mapping[str, CellParameter],
    taken: Mapping[str, Any],
) -> Path:
    """Make the tree of an interactive run of ``values``, label it in its ``run.json``, and say so; its root.

    The tree is named by the values that differ from the profile's; ``taken``: the profile's values
    the run took for the cell's (:func:`_profile_values_taken`).
    """
    profile = values["profile"]
    by_profile = CHANGES.get(notebook, {}).get(profile, {})
    changed = {
        name: value
        for name, value in values.items()
        if name not in RUN_PARAMETERS and value != by_profile.get(name, cell[name].value)
    }
    shown = {name: format_parameter(value) for name, value in changed.items()}
    tree = output_tree(exploratory_output_dir(project, profile, shown, interactive=True)).root
    seed = values.get("seed")
    from .. import __version__

    seeds = (seed,) if type(seed) is int else ()
    record = TreeRecord(profile, shown, seeds, (notebook,), interactive=True, version=__version__)
    try:
        claim_tree(tree, record)
    except NTPError:  # a run of another setting, or a damaged record: this run's replaces it
        write_tree_record(tree, record)
    where = tree.relative_to(project.resolve()) if tree.is_relative_to(project.resolve()) else tree
    print("\n".join(_interactive_lines(notebook, values, cell, taken, str(where))))
    return tree


def _interactive_lines(
    notebook: str,
    values: Mapping[str, Any],
    cell: Mapping[str, CellParameter],
    taken: Mapping[str, Any],
    where: str,
) -> list[str]:
    """What an interactive run prints first: its tree, each value the profile set (with the cell's), the pins.

    ``values``: the run's; ``taken``: the profile's values it took (:func:`_profile_values_taken`);
    ``where``: its tree. A run of the chapter's own source (its folder is ``notebooks/``) is told
    where an edit is kept.
    """
    profile = values["profile"]
    lines = [
        f"Interactive run (not ntpnb reproduce) at profile {profile}: its outputs go to {where}, "
        "never to the book's outputs/."
    ]
    if taken:
        effect = ", ".join(
            f"{k}={format_parameter(v)} (the cell: {format_parameter(cell[k].value)})"
            for k, v in taken.items()
        )
        pin = f"{PINNED} = {[next(iter(taken))]!r}"
        lines.append(
            f"The {profile} profile's values (ntpnb/chapter/_parameters.py) in effect, for the cell's as "
            f"saved: {effect}. To run a value of the cell instead, pin it: {pin}."
        )
    by_profile = CHANGES.get(notebook, {}).get(profile, {})
    pinned = values.get(PINNED) or ()
    shown = [
        f"{k}={format_parameter(v)}" + (" (pinned)" if k in pinned and k in by_profile else "")
        for k, v in values.items()
        if k not in RUN_PARAMETERS and v != by_profile.get(k, cell[k].value)
    ]
    if shown:
        lines.append("Set here: " + ", ".join(shown) + ".")
    if Path.cwd().name == "notebooks" and (Path.cwd() / f"{notebook}.md").is_file():
        lines.append(
            f"This is the chapter's own source, read-only in JupyterLab: File > Save Notebook As… "
            f"{COPIES_DIRNAME}/{notebook}.md keeps your changes."
        )
    return lines
