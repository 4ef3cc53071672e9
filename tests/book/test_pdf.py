"""The whole book's PDF: who can print it, and the single page it is printed from."""

from __future__ import annotations

import pytest

from ntpnb.book.pdf import CHROMIUM_ENV, chromium, missing_printer, single_page

from conftest import ROOT


def test_without_chromium_the_book_says_why_it_has_no_pdf(tmp_path, monkeypatch):
    monkeypatch.setenv(CHROMIUM_ENV, str(tmp_path / "no-chromium"))
    assert chromium() == tmp_path / "no-chromium"
    remedy = f"(apt-get install chromium, or set {CHROMIUM_ENV})"
    assert missing_printer() == f"no Chromium at {tmp_path / 'no-chromium'} {remedy}"


def test_the_single_page_is_printed_from_the_folders_root_where_its_links_resolve(tmp_path):
    site = tmp_path / "singlehtml"
    (site / "book").mkdir(parents=True)
    (site / "book" / "intro.html").write_text('<img src="_images/a.png">')  # the book's root: book/intro
    page = single_page(site, ROOT)
    assert page.parent == site and page.read_text() == '<img src="_images/a.png">'


@pytest.mark.parametrize("value", ["", None])
def test_chromium_defaults_to_debians(monkeypatch, value):
    if value is None:
        monkeypatch.delenv(CHROMIUM_ENV, raising=False)
    else:
        monkeypatch.setenv(CHROMIUM_ENV, value)
    assert str(chromium()) == "/usr/bin/chromium"
