"""A notebook's parameters: the parameters cell, what each means, and their values in the prose."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import jupytext
import pytest

from ntpnb.chapter import _parameters as parameters
from ntpnb.chapter._parameters import (
    GLUE_KEY,
    PROJECT_VAR,
    format_parameter,
    glue_parameters,
    notebook_source,
    parse_parameters_cell,
    profile_parameters,
    read_parameters_cell,
)
from ntpnb.errors import InvalidDataError, NTPError
from ntpnb.evidence._registry import paper_value
from ntpnb.records._places import notebook_sources

from conftest import ROOT
from fake_notebooks import fake_notebook

SOURCES = notebook_sources(ROOT)


def meanings(cell: str) -> dict[str, str]:
    return {name: p.meaning for name, p in parse_parameters_cell(textwrap.dedent(cell)).items()}


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_every_parameter_of_every_notebook_says_what_it_means(path):
    missing = [name for name, p in read_parameters_cell(path).items() if not p.meaning.strip()]
    assert not missing, f"{path.name}: give these a comment in the parameters cell: {', '.join(missing)}"


def test_the_meaning_is_the_comment_ending_the_line():
    cell = """
        n = 5000  # samples
        sizes = [
            1,
            2,
        ]  # sizes swept
        plain = 3
    """
    assert meanings(cell) == {"n": "samples", "sizes": "sizes swept", "plain": ""}


def test_a_comment_line_heads_the_assignments_below_it_up_to_a_blank_line():
    cell = """
        seed = 0  # seed
        # synthetic instance
        # (Figs. 3-5)
        n = 5000  # samples
        m = 50

        lr = 0.5  # step size
        # another group
        k = 3  # steps
        # a note on nothing below

        last = 1  # alone
    """
    assert meanings(cell) == {
        "seed": "seed",
        "n": "synthetic instance (Figs. 3-5): samples",
        "m": "synthetic instance (Figs. 3-5)",
        "lr": "step size",
        "k": "another group: steps",
        "last": "alone",
    }


def test_the_values_are_the_literals_of_the_cell():
    cell = 'a = 1_000  # x\nb = [[2, 1], [5, 2]]  # y\nc = "uniform"  # z\nd = None  # w\n'
    assert {k: p.value for k, p in parse_parameters_cell(cell).items()} == {
        "a": 1000,
        "b": [[2, 1], [5, 2]],
        "c": "uniform",
        "d": None,
    }


@pytest.mark.parametrize(
    ("cell", "says"),
    [
        ("import os\n", "line 1 of its parameters cell is not NAME = VALUE"),
        ("a = b = 1\n", "line 1 of its parameters cell is not NAME = VALUE"),
        ("a = 1\nx.y = 2\n", "line 2 of its parameters cell is not NAME = VALUE"),
        ("a = f(1)  # computed\n", "the parameter a is not a Python literal"),
        ("a = (1\n", "its parameters cell is not Python"),
    ],
)
def test_a_cell_that_is_not_assignments_of_literals_is_refused_in_one_line(cell, says):
    with pytest.raises(NTPError) as error:
        parse_parameters_cell(cell, "x.md")
    message = str(error.value)
    assert message.startswith("x.md: ") and says in message and "\n" not in message


def test_a_notebook_without_a_parameters_cell_is_refused(tmp_path):
    path = tmp_path / "01_x.md"
    path.write_text(fake_notebook("print(1)").replace(":tags: [parameters]", ""))
    with pytest.raises(NTPError) as error:
        read_parameters_cell(path)
    assert str(error.value) == "01_x.md: needs one code cell tagged 'parameters', has 0"


#: Code cells written each way MyST allows, and one nested in a list (markdown's, not a cell).
VARIANT_CELLS = """\
---
jupytext:
  text_representation:
    format_name: myst
---

```{code-cell} ipython3
---
tags: [parameters]
mystnb:
  code_prompt_show: "Show"
---
n = 5
```

- a list item

  ```{code-cell} ipython3
  nested = True
  ```

````{code-cell} ipython3
:tags: [hide-input]
:other: 1
x = "```"

y = 2
````

```{code-cell}

z = 3

```
"""


@pytest.mark.parametrize("name", [*(path.stem for path in SOURCES), "variants"])
def test_the_light_reader_reads_the_code_cells_jupytext_reads(name):
    """A chapter's parameters are read without loading jupytext: the same cells, options and sources."""
    from ntpnb._myst_text import code_cells

    path = ROOT / "notebooks" / f"{name}.md"
    text = VARIANT_CELLS if name == "variants" else path.read_text(encoding="utf-8")
    cells = [c for c in jupytext.reads(text, fmt="md:myst").cells if c.cell_type == "code"]
    expected = [(dict(c.metadata), c.source) for c in cells]
    assert code_cells(text) == expected
    assert len(expected) >= (3 if name == "variants" else 5)  # the list's fence is not a cell


def test_a_parameters_cell_the_light_reader_cannot_read_is_refused_in_jupytexts_words(tmp_path):
    path = tmp_path / "01_x.md"
    path.write_text(fake_notebook("n = 1").replace(":tags: [parameters]", ":tags: [parameters\n:a: {"))
    with pytest.raises(Exception, match="could not be read"):
        read_parameters_cell(path)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (0.5, "0.5"),
        (1e-6, "1e-06"),
        (20000, "20000"),
        (True, "True"),
        (None, "None"),
        ("paper", "paper"),
        ([15, 30, 60], "15, 30, 60"),
        ([[5, 2], [10, 3]], "(5, 2), (10, 3)"),
        ([0.8, 1.2], "0.8, 1.2"),
    ],
)
def test_a_parameter_is_shown_as_python_prints_it(value, shown):
    assert format_parameter(value) == shown


def test_a_value_no_parameters_cell_holds_is_refused():
    with pytest.raises(InvalidDataError, match="literal"):
        format_parameter({"a": 1})


def test_every_parameter_is_glued_with_the_value_of_the_run(monkeypatch):
    glued = {}
    monkeypatch.setattr(parameters, "glue_text", lambda name, text: glued.__setitem__(name, text))
    name, quick = SOURCES[0].stem, profile_parameters(SOURCES[0], "quick")
    values = {**quick, "stray": 1}  # a run at the quick profile
    glue_parameters(name, values)
    assert glued == {GLUE_KEY.format(name=k): format_parameter(v) for k, v in quick.items()}
    del values["seed"]
    with pytest.raises(NTPError, match="no value for seed"):
        glue_parameters(name, values)


#: A parameter named in backticks in a chapter's prose, or in a figure's caption.
_NAMED = re.compile(r"(?<![\w{])`([a-z_][a-z0-9_]*)`")


def _paragraphs(source: Path) -> list[str]:
    """The prose paragraphs and figure captions of a Jupytext notebook (code cells' code left out)."""
    paragraphs = []
    for cell in jupytext.read(source).cells:
        if cell.cell_type == "markdown":
            paragraphs += cell.source.split("\n\n")
        else:
            figure = cell.metadata.get("mystnb", {}).get("figure", {})
            paragraphs += [figure["caption"]] if "caption" in figure else []
    return paragraphs


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_a_parameter_the_prose_names_is_shown_with_the_value_of_the_run(path):
    """ "5 of `n_trials`" reads as a name left unfilled: the paragraph also shows the run's value."""
    names = set(profile_parameters(path, "paper"))
    unfilled = []
    for paragraph in _paragraphs(path):
        for name in set(_NAMED.findall(paragraph)) & names:
            if not re.search(rf"\{{glue:text\}}`(\w+_)?{name}`", paragraph):
                unfilled.append(f"`{name}` in: {paragraph[:80]!r}")
    assert not unfilled, "show the value with {glue:text}`par_NAME`:\n" + "\n".join(unfilled)


#: The ``paper`` values of ``parameters`` cells that are a paper's numbers: ``(claim, name)`` in
#: the registry.
PAPER_NUMBERS: dict[str, dict[str, tuple[str, str]]] = {
    "07_attention": {
        "n_trials": ("B11", "trials"),  # App. D: the trials of each mean
        "min_corr_acyclic": ("B8", "corr"),
        "max_cyc_dist": ("B9", "distance"),
        "min_local_corr": ("B10", "local_corr"),
    },
}


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_a_paper_value_that_is_a_papers_number_is_the_registrys(path):
    assert set(PAPER_NUMBERS) <= {p.stem for p in SOURCES}
    paper = {name: p.value for name, p in read_parameters_cell(path).items()}
    for name, (claim, key) in PAPER_NUMBERS.get(path.stem, {}).items():
        assert paper[name] == paper_value(claim, key), f"{path.stem}: {name} is {claim}'s {key}"


def test_a_kernel_finds_its_source_in_the_project_the_runner_names_or_at_its_working_folder(
    tmp_path, monkeypatch
):
    monkeypatch.delenv(PROJECT_VAR, raising=False)
    monkeypatch.chdir(ROOT / "notebooks")  # Jupyter runs a notebook in its folder
    assert notebook_source("01_x") == ROOT / "notebooks" / "01_x.md"
    monkeypatch.setenv(PROJECT_VAR, str(tmp_path))  # ntpnb reproduce runs it in a staging folder
    assert notebook_source("01_x") == tmp_path / "notebooks" / "01_x.md"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_every_parameter_declares_its_domain_and_every_profile_value_lies_in_it(path):
    cell = read_parameters_cell(path)
    undeclared = [name for name, p in cell.items() if not p.declared]
    assert not undeclared, f"{path.name}: declare the domain of {', '.join(undeclared)} ({{int ≥ 1}} ...)"
    for profile in parameters.PROFILE_NAMES:
        for name, value in profile_parameters(path, profile).items():
            cell[name].check(value, path.stem)  # raises NTPError naming it


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_settings_and_thresholds_are_two_labelled_groups_of_the_cell(path):
    cell = read_parameters_cell(path)
    run = [name for name, p in cell.items() if not p.group]
    assert run == list(parameters.RUN_PARAMETERS), f"{path.name}: only {run} may precede the groups"
    groups = list(dict.fromkeys(p.group for p in cell.values() if p.group))
    assert groups[0] == parameters.GROUPS[0] and set(groups) <= set(parameters.GROUPS)
    assert parameters.GROUPS[1] in cell_source(path), f"{path.name}: label its (maybe empty) thresholds group"
    for name, p in cell.items():
        checks = bool(re.match(r"[AB]\d+(-[AB]\d+)?: ", p.meaning))  # what a claim check requires
        assert checks == (p.group == parameters.GROUPS[1]), f"{path.name}: {name} is in the wrong group"


def cell_source(path: Path) -> str:
    (cell,) = [c for c in jupytext.read(path).cells if "parameters" in c.metadata.get("tags", [])]
    return cell.source


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_the_cell_after_the_parameters_checks_them_and_chooses_the_tree(path):
    """The second code cell: chapter_parameters, so that a run in JupyterLab is checked and kept apart."""
    code = [c for c in jupytext.read(path).cells if c.cell_type == "code"]
    assert code[1].source == (
        "from ntpnb.chapter import chapter_parameters\n\n"
        f'globals().update(chapter_parameters("{path.stem}", globals()))'
    )
    assert "remove-cell" in code[1].metadata.get("tags", [])  # the book shows no trace of it


def test_a_meaning_line_above_an_assignment_is_its_own_and_heads_nothing():
    cell = """\
    # --- experiment settings ---
    # (V, S) pairs swept
    configs = [[2, 1]]  # {list of pair of int ≥ 1}
    m = 3  # {int ≥ 2} contexts
    # {int ≥ 1} draws
    n = 4
    """
    parsed = parse_parameters_cell(textwrap.dedent(cell))
    assert {name: p.meaning for name, p in parsed.items()} == {
        "configs": "(V, S) pairs swept",
        "m": "contexts",
        "n": "draws",
    }
    assert parsed["n"].domain.describe() == "a whole number >= 1"
    assert {p.group for p in parsed.values()} == {"experiment settings"}


def test_a_cell_value_outside_its_declared_domain_is_refused():
    with pytest.raises(NTPError, match=r"n = 0 is not a whole number >= 1 \(draws\)"):
        parse_parameters_cell("n = 0  # {int ≥ 1} draws\n", "07_x")
    with pytest.raises(NTPError, match=re.escape("the parameter n: the domain {int ≥≥ 1} is not in")):
        parse_parameters_cell("n = 1  # {int ≥≥ 1} draws\n", "07_x")


FAKE_CELL = """\
profile = "paper"  # {"paper" | "quick"} the profile
output_dir = None  # {text or None} the tree
pinned = None  # {list of text or None} kept at any profile

# --- experiment settings ---
seed = 0  # {int ≥ 0} the seed
n = 50  # {int ≥ 1} samples
lr = 0.5  # {float > 0} step
"""


@pytest.fixture
def fake_project(tmp_path, monkeypatch):
    """A project with one chapter, ``07_fake``, whose quick profile changes ``n``; its kernel's view."""
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: x\n")
    source = fake_notebook("print(n)", FAKE_CELL.split("\n", 2)[2])
    (tmp_path / "notebooks" / "07_fake.md").write_text(
        source.replace('profile = "paper"\noutput_dir = None\n', FAKE_CELL.split("\n\n")[0] + "\n")
    )
    monkeypatch.setattr(parameters, "CHANGES", {"07_fake": {"quick": {"n": 5}}})
    monkeypatch.delenv(PROJECT_VAR, raising=False)
    monkeypatch.chdir(tmp_path / "notebooks")  # where Jupyter runs a notebook
    return tmp_path


def namespace_of(root: Path, **changed) -> dict:
    values = {name: p.value for name, p in read_parameters_cell(root / "notebooks" / "07_fake.md").items()}
    return values | changed


def test_a_run_outside_the_runner_writes_a_labelled_tree_of_its_own_and_says_so(fake_project, capsys):
    from ntpnb.records._tree import load_tree_record

    values = parameters.chapter_parameters("07_fake", namespace_of(fake_project))
    tree = fake_project / "outputs" / "runs" / "interactive" / "profile=paper"
    assert values["output_dir"] == str(tree.resolve()) and values["n"] == 50
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("Interactive run (not ntpnb reproduce) at profile paper: its outputs go to ")
    assert "outputs/runs/interactive/profile=paper, never to the book's outputs/" in first
    record = load_tree_record(tree)
    assert record.interactive and record.notebooks == ("07_fake",) and record.seeds == (0,)
    assert record.describe().startswith("interactive run (not ntpnb reproduce), profile paper")


def test_the_quick_profile_in_the_cell_gives_the_quick_values_and_says_which_with_the_cells(
    fake_project, capsys
):
    values = parameters.chapter_parameters("07_fake", namespace_of(fake_project, profile="quick"))
    assert values["n"] == 5 and values["lr"] == 0.5
    assert values["output_dir"].endswith("interactive/profile=quick")
    out = capsys.readouterr().out
    assert (
        "The quick profile's values (ntpnb/chapter/_parameters.py) in effect, for the cell's as saved: "
        "n=5 (the cell: 50). To run a value of the cell instead, pin it: pinned = ['n']."
    ) in out
    # a value set otherwise (papermill -p, a cell not saved yet) is kept, and names the tree
    values = parameters.chapter_parameters("07_fake", namespace_of(fake_project, profile="quick", n=7))
    assert values["n"] == 7 and values["output_dir"].endswith("interactive/profile=quick,n=7")
    out = capsys.readouterr().out
    assert "Set here: n=7." in out and "in effect" not in out


def test_a_value_typed_on_purpose_runs_at_any_profile_once_pinned(fake_project, capsys):
    """The paper's value at the quick profile: left as saved it is the quick one, pinned it is the cell's."""
    values = parameters.chapter_parameters(
        "07_fake", namespace_of(fake_project, profile="quick", pinned=["n"])
    )
    assert values["n"] == 50 and values["output_dir"].endswith("interactive/profile=quick,n=50")
    out = capsys.readouterr().out
    assert "Set here: n=50 (pinned)." in out and "in effect" not in out
    with pytest.raises(
        NTPError, match=r"pinned names 'nn', which is no parameter of the cell \(did you mean 'n'\?\)"
    ):
        parameters.chapter_parameters("07_fake", namespace_of(fake_project, profile="quick", pinned=["nn"]))
    with pytest.raises(NTPError, match="pinned = 'n' is not a non-empty list, each item a text, or None"):
        parameters.chapter_parameters("07_fake", namespace_of(fake_project, profile="quick", pinned="n"))


def test_a_run_of_the_chapters_own_source_is_told_where_an_edit_is_kept(fake_project, capsys):
    parameters.chapter_parameters("07_fake", namespace_of(fake_project))  # run in notebooks/, as Jupyter does
    assert "File > Save Notebook As… my-notebooks/07_fake.md keeps your changes." in capsys.readouterr().out


def test_pinned_is_no_parameter_of_a_run_of_ntpnb_reproduce():
    said = parameters.run_parameter_error("pinned", "['toy_iters']")
    assert said.startswith("-p pinned=['toy_iters'] sets no parameter of a chapter: pinned keeps values")


def test_the_runners_values_are_checked_and_kept(fake_project, capsys):
    staged = fake_project / "outputs" / ".staging" / "07_fake"
    given = namespace_of(fake_project, profile="quick", n=50, output_dir=str(staged))
    assert parameters.chapter_parameters("07_fake", given) == given  # -p n=50 at quick stays 50
    assert capsys.readouterr().out == ""  # no output in the book's run
    assert not (fake_project / "outputs" / "runs").exists()


@pytest.mark.parametrize(
    ("changed", "says"),
    [
        ({"n": 0}, r"07_fake: n = 0 is not a whole number >= 1 \(samples\)"),
        ({"seed": -3}, r"07_fake: seed = -3 is not a whole number >= 0 \(the seed\)"),
        ({"lr": "fast"}, r"07_fake: lr = 'fast' is not a number > 0"),
        ({"profile": "fast"}, r"07_fake: profile = 'fast' is none of 'paper', 'quick'"),
        ({"output_dir": "../outputs"}, r"output_dir \.\./outputs is the book's own tree"),
    ],
)
def test_a_bad_value_set_in_the_cell_is_refused_before_the_chapter_runs(fake_project, changed, says):
    with pytest.raises(NTPError, match=says):
        parameters.chapter_parameters("07_fake", namespace_of(fake_project, **changed))
    assert not (fake_project / "outputs" / "claims").exists()


def test_a_parameter_not_run_yet_is_named(fake_project):
    namespace = namespace_of(fake_project)
    del namespace["lr"]
    with pytest.raises(NTPError, match=r"no value for lr \(run the parameters cell first\)"):
        parameters.chapter_parameters("07_fake", namespace)
