"""The setting of Paper B's experiments in the paper and in the authors' code (ntpnb.attention.authors)."""

from __future__ import annotations

import re

import pytest

from ntpnb.attention.authors import AUTHORS_SETTINGS, settings_rows
from ntpnb.chapter import paper_value
from ntpnb.errors import InvalidDataError

SETTINGS = [s for _, settings in AUTHORS_SETTINGS for s in settings]
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
    assert len(rows) == len(AUTHORS_SETTINGS) + len(SETTINGS)
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
    from ntpnb.attention.authors import AUTHORS_GLOBAL_DROP_CORR

    row = next(s for s in SETTINGS if s.key == "global_trials")
    assert f"below {AUTHORS_GLOBAL_DROP_CORR:g} aborts" in row.code


def test_the_books_column_must_give_every_setting_once():
    with pytest.raises(InvalidDataError, match=r"missing.*global_loss"):
        settings_rows({k: v for k, v in BOOK.items() if k != "global_loss"}, paper_value)
    with pytest.raises(InvalidDataError, match=r"unknown.*'typo'"):
        settings_rows({**BOOK, "typo": "x"}, paper_value)


def test_the_stored_curves_name_their_file_and_commit():
    from ntpnb.attention.authors import STORED_COMMIT, STORED_CURVES

    assert re.fullmatch(r"[0-9a-f]{40}", STORED_COMMIT)
    for curve in STORED_CURVES.values():
        assert curve.path.startswith("figures/Papers/") and curve.path.endswith(".pdf")
        assert curve.path in curve.source and STORED_COMMIT[:7] in curve.source
        assert 0 < curve.precision <= 0.011 * abs(curve.value)
    for fig in ("5", "6"):  # the local curves lie above (correlation) and below (distance) the global
        assert STORED_CURVES[f"fig{fig}a_local"].value > STORED_CURVES[f"fig{fig}a_global"].value
        assert STORED_CURVES[f"fig{fig}b_local"].value < STORED_CURVES[f"fig{fig}b_global"].value
