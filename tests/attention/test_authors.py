"""The setting of Paper B's experiments in the paper and in the authors' code (ntpnb.attention.authors)."""

from __future__ import annotations

import json
import re

import pytest

from ntpnb.attention.authors import AUTHORS_FILE, _checked, load_authors, settings_rows
from ntpnb.chapter import paper_value
from ntpnb.errors import InvalidDataError
from ntpnb.evidence._checks import Artifact

AUTHORS = load_authors()
SETTINGS = [s for _, settings in AUTHORS.sections for s in settings]
BOOK = {s.key: f"ours: {s.key}" for s in SETTINGS}


#: The files of the authors' repository the code column may cite.
AUTHORS_FILES = {
    "data_utils.py",
    "train_utils.py",
    "nxt_token_solver.py",
    "visualizer.py",
    "base_nonlinear.py",
    "utils.py",
    "mc_next_single_layer_global_converge.ipynb",
    "mc_next_single_layer_local_converge.ipynb",
}


def test_every_setting_has_one_key_and_names_the_files_it_cites():
    keys = [s.key for s in SETTINGS]
    assert len(keys) == len(set(keys))
    for s in SETTINGS:
        assert set(re.findall(r"\w+\.(?:py|ipynb)", s.code)) <= AUTHORS_FILES, s.key
    cited = {f for s in SETTINGS for f in re.findall(r"\w+\.(?:py|ipynb)", s.code)}
    assert cited == AUTHORS_FILES  # every one of them cited somewhere


def test_the_rows_are_sections_then_settings_with_the_books_column():
    rows = settings_rows(BOOK, paper_value)
    assert len(rows) == len(AUTHORS.sections) + len(SETTINGS)
    assert rows[0] == ("**Figs. 3-4 (B7-B9)**", "", "", "")
    by_name = {row[0]: row for row in rows}
    assert by_name["loss, head"][1:] == (
        "log-loss, $CE^T = I$",
        "`nll`, `cls_choice='iden'` (mc_next_single_layer_global_converge.ipynb)",
        "ours: global_loss",
    )


def test_the_papers_numbers_come_from_the_registry():
    rows = {row[0]: row[1] for row in settings_rows(BOOK, paper_value)}
    assert rows["Fig. 4(b) y-axis"].endswith(f"final < {paper_value('B9', 'distance'):g}")
    assert rows["Fig. 4(a) corr"] == f"≈ {paper_value('B9', 'corr'):g}"
    assert rows["Fig. 5a local corr"] == f"> {paper_value('B10', 'local_corr'):g}"
    glob, loc = paper_value("B11", "global_distance"), paper_value("B11", "local_distance")
    assert rows["Fig. 6b distance"] == f"{glob:g} global, {loc:g} local"
    # another registry gives other numbers: none is typed here
    other = {row[0]: row[1] for row in settings_rows(BOOK, lambda claim, key: 0.5)}
    assert other["Fig. 5a local corr"] == "> 0.5"
    assert other["selection threshold"] == "$s_{t_1} > 0$"  # text without a field stays


def test_the_global_filter_states_the_constant_it_names():
    row = next(s for s in SETTINGS if s.key == "global_trials")
    assert f"below {AUTHORS.global_drop_corr:g} aborts" in row.code
    assert f"({AUTHORS.global_notebook})" in row.code  # the file's own values fill its fields


def test_the_books_column_must_give_every_setting_once():
    with pytest.raises(InvalidDataError, match=r"missing.*global_loss"):
        settings_rows({k: v for k, v in BOOK.items() if k != "global_loss"}, paper_value)
    with pytest.raises(InvalidDataError, match=r"unknown.*'typo'"):
        settings_rows({**BOOK, "typo": "x"}, paper_value)


def test_the_stored_curves_name_their_file_and_commit():
    STORED_COMMIT, STORED_CURVES = AUTHORS.stored_commit, AUTHORS.stored_curves
    assert re.fullmatch(r"[0-9a-f]{40}", STORED_COMMIT)
    for curve in STORED_CURVES.values():
        assert curve.path.startswith("figures/Papers/") and curve.path.endswith(".pdf")
        assert curve.path in curve.source and STORED_COMMIT[:7] in curve.source
        assert 0 < curve.precision <= 0.011 * abs(curve.value)
    for fig in ("5", "6"):  # the local curves lie above (correlation) and below (distance) the global
        assert STORED_CURVES[f"fig{fig}a_local"].value > STORED_CURVES[f"fig{fig}a_global"].value
        assert STORED_CURVES[f"fig{fig}b_local"].value < STORED_CURVES[f"fig{fig}b_global"].value


def test_a_stored_curve_is_a_checks_artifact_a_mean_of_the_trials_given():
    curve = load_authors().stored_curves["fig3"]
    artifact = Artifact.of(curve, 100)
    assert (artifact.source, artifact.value) == (curve.source, curve.value)
    assert (artifact.precision, artifact.trials) == (curve.precision, 100)
    with pytest.raises(InvalidDataError, match="whole number"):
        Artifact.of(curve, -1)


def test_the_data_file_is_shipped_with_the_package():
    pyproject = (AUTHORS_FILE.parents[2] / "pyproject.toml").read_text()
    assert f'"ntpnb.attention" = ["{AUTHORS_FILE.name}"]' in pyproject  # package data


def write_changed(tmp_path, change):
    """A copy of the data file after ``change(data)``, under a name of its own (the loader caches by path)."""
    data = json.loads(AUTHORS_FILE.read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / f"authors_{len(list(tmp_path.iterdir()))}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_an_unchanged_copy_loads_the_same(tmp_path):
    assert load_authors(write_changed(tmp_path, lambda data: None)) == AUTHORS
    with pytest.raises(TypeError):  # the loaded record is shared: read-only
        AUTHORS.stored_curves["fig3"] = None


def first_setting(data):
    return data["sections"][0]["settings"][0]


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (lambda d: d.pop("stored_commit"), r"the file: missing \['stored_commit'\], unknown \[\]"),
        (lambda d: d.update(typo=1), r"the file: missing \[\], unknown \['typo'\]"),
        (lambda d: d.update(saved_trials=0), r"saved_trials must be a positive integer, got 0"),
        (lambda d: d.update(global_drop_corr="0.9"), r"global_drop_corr must be a positive finite number"),
        (
            lambda d: d["stored_curves"]["fig3"].update(value=None),
            r"stored_curves.fig3.value must be a finite",
        ),
        (lambda d: d["stored_curves"]["fig3"].update(precision=-1), r"fig3.precision must be a positive"),
        (lambda d: d["stored_curves"].update(fig3=[]), r"stored_curves.fig3 must be an object"),
        (lambda d: d.update(sections={}), r"sections must be a list"),
        (
            lambda d: first_setting(d).update(code=" "),
            r"sections\[0\].settings\[0\].code must be a non-empty",
        ),
        (lambda d: first_setting(d).pop("paper"), r"settings\[0\]: missing \['paper'\]"),
        (
            lambda d: d["sections"][1]["settings"].append(first_setting(d)),
            r"sections\[1\].settings\[\d+\]: the key 'global_data' is given twice",
        ),
        (
            lambda d: first_setting(d).update(code="in %(nobook)s"),
            r"%\(nobook\) is none of the file's values",
        ),
        (  # the message quotes the text as the file has it (before its own fields are filled)
            lambda d: first_setting(d).update(paper="%(stored_commit)s, 100% sure"),
            r"settings\[0\].paper: a '%' that is no .* field in '%\(stored_commit\)s, 100% sure'",
        ),
    ],
)
def test_a_malformed_data_file_is_refused_naming_the_file_and_the_entry(tmp_path, change, error):
    path = write_changed(tmp_path, change)
    with pytest.raises(InvalidDataError, match=error) as caught:
        load_authors(path)
    assert str(caught.value).startswith(f"{path}: ")


def test_a_file_that_is_not_json_is_refused(tmp_path):
    path = tmp_path / "authors.json"
    path.write_text('{"repository": ', encoding="utf-8")
    with pytest.raises(InvalidDataError, match=r"authors.json: not JSON: Expecting value"):
        load_authors(path)


def test_an_entry_is_checked_into_a_copy_and_an_unknown_kind_is_refused():
    entry = {"title": "Figs. 3-4"}
    checked = _checked(entry, {"title": "str"}, "sections[0]")
    assert checked == entry and checked is not entry  # the caller's dict is not the one it pops from
    with pytest.raises(InvalidDataError, match=r"sections\[0\].title must be of a kind the loader knows"):
        _checked(entry, {"title": "text"}, "sections[0]")
