"""The names the package defines, which no reader's page may show (:mod:`ntpnb.book._code_names`)."""

from __future__ import annotations

from ntpnb.book._code_names import (
    chapter_parameter_names,
    defined_names,
    found_names,
    is_code_name,
    markup_names,
    module_names,
)

from conftest import ROOT


def test_a_code_name_is_snake_case_camel_case_or_a_markup_id_and_never_a_word():
    for name in ("corr_corrected", "MAX_DENSE_BYTES", "dist_F", "ClaimLog", "NTPData", "ntpnb-active-set"):
        assert is_code_name(name), name
    for name in ("band", "corr", "KKT", "LP", "W_k", "x_t", "MathJax", "Adam", "GD", "L-BFGS"):
        assert not is_code_name(name), name


SOURCE = """
LIMIT = 3
SOLVER_NAME = "ntpnb-hinge-newton"

class Point:
    x_value: float
    shown_as = "a point"

    def moved(self, by_step, *, scale_factor=1.0):
        self.last_step = by_step
        return {"corr_corrected": 1, "not a key": 2}

def run(grid_size):
    local_only = 1
    return draw(fill_style="dots", label="mean_quantile")
"""


def test_a_modules_names_are_its_definitions_parameters_fields_keys_and_one_word_strings():
    found = module_names(SOURCE)
    assert {
        "LIMIT",
        "SOLVER_NAME",
        "Point",
        "x_value",
        "shown_as",
        "moved",
        "by_step",
        "scale_factor",
    } <= found
    assert {"last_step", "run", "grid_size", "fill_style", "corr_corrected", "mean_quantile"} <= found
    assert "ntpnb-hinge-newton" in found
    assert "local_only" not in found and "not a key" not in found  # a local name; a string of words
    assert markup_names(".ntpnb-card dl > dt, #ntpnb-print-page") == {"ntpnb-card", "ntpnb-print-page"}


def test_the_package_defines_the_names_the_issue_found_on_its_pages():
    names = defined_names() | chapter_parameter_names(ROOT / "notebooks")
    assert {"corr_corrected", "ntpnb-active-set", "mean_quantile", "squared_softmax", "n_iter"} <= names
    assert {"band", "corr", "seed", "Clarabel"}.isdisjoint(names)


def test_a_name_is_found_as_a_whole_word_only():
    names = {"corr_corrected", "n_iter", "ntpnb-active-set"}
    text = "corr_corrected 0.97, lr * n_iter, (ntpnb-active-set), n_iters, my_corr_corrected"
    assert [word for _, _, word in found_names(text, names)] == [
        "corr_corrected",
        "n_iter",
        "ntpnb-active-set",
    ]
