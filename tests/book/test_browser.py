"""Every page of the built book, opened in headless Chromium as a reader with no network would.

Uses the book the suite already built (``built_book``), opened from ``file://`` URLs. Needs
Debian's ``chromium`` (``.ci/run`` installs it) and the ``playwright`` package; where either
is missing the test is skipped and says why (``NTPNB_REQUIRE_BROWSER=1``, set by ``.ci/run``,
turns that skip into a failure). With ``NTPNB_SCREENSHOTS=DIR`` set, a full-page screenshot of
every page is saved in ``DIR`` for a person to look at (GitHub Actions keeps them as an artifact);
without it none is taken, since they are not checked and take most of the test's time.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from ntpnb.chapter.registry import CLAIMS

from conftest import ROOT
from helpers import config_binder_url

pytestmark = pytest.mark.slow

CHROMIUM = Path(os.environ.get("NTPNB_CHROMIUM", "/usr/bin/chromium"))
# the machine (and a reader's) may have no network: nothing may try to reach it
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: Where the full-page screenshots go (relative to the project), or None: not taken.
SCREENSHOTS = ROOT / os.environ["NTPNB_SCREENSHOTS"] if os.environ.get("NTPNB_SCREENSHOTS") else None
SKIPPED_PAGES = {"index.html"}  # a redirect to book/intro.html (tested on its own)
# what a {prf:ref} to a directive with `:nonumber:` shows when it is given no explicit text
EMPTY_REFERENCES = {"", "Assumption", "Definition", "Lemma", "Theorem", "Proposition", "Corollary"}
RAW_MARKUP = re.compile(r"\{(cite|prf:\w+|doc|ref|numref|eq|glue:?\w*)\}`|^```|^:::|^\{[a-z-]+\}", re.M)


def _missing_browser() -> str | None:
    if not CHROMIUM.exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium, or set NTPNB_CHROMIUM)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[test]')"
    return None


@pytest.fixture(scope="module")
def browser():
    reason = _missing_browser()
    if reason:
        if os.environ.get("NTPNB_REQUIRE_BROWSER"):
            pytest.fail(f"NTPNB_REQUIRE_BROWSER is set but {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def book_pages(html: Path) -> list[Path]:
    """Every HTML page of the book (not the theme's assets or the sources)."""
    pages = []
    for path in sorted(html.rglob("*.html")):
        rel = path.relative_to(html)
        if rel.parts[0] in {"_static", "_sources", "_images", "reports"} or str(rel) in SKIPPED_PAGES:
            continue
        pages.append(path)
    return pages


def save_screenshot(page, name: str, full_page: bool = False) -> None:
    """Save a screenshot of ``page`` as ``name.png`` in :data:`SCREENSHOTS`, if that is set."""
    if SCREENSHOTS is not None:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=full_page)


def visit(browser, path: Path, name: str) -> dict:
    """Open ``path``, wait for MathJax, and collect what the checks need."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url} ({r.failure})"))
    page.goto(path.as_uri(), wait_until="load")
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:  # MathJax (if the page loads it) must start and finish typesetting
        page.wait_for_function(
            "() => !window.MathJax || (MathJax.startup && MathJax.startup.promise)", timeout=15_000
        )
        page.evaluate("() => window.MathJax ? MathJax.startup.promise : null")
    except PlaywrightTimeout:
        errors.append("MathJax did not start (its script is missing or could not be loaded)")
    try:  # images still decoding are not failures yet
        page.wait_for_function("() => [...document.images].every(i => i.complete)", timeout=15_000)
    except PlaywrightTimeout:
        pass  # the image check below names the ones that did not load
    found = page.evaluate(
        """() => ({
            text: (() => {  // the prose: code blocks may show markup on purpose
                const main = (document.querySelector('main') || document.body).cloneNode(true);
                main.querySelectorAll('pre, code, .highlight').forEach(e => e.remove());
                document.body.appendChild(main);  // innerText needs a rendered node
                const text = main.innerText;
                main.remove();
                return text;
            })(),
            mathSource: document.querySelectorAll('.math, span.math, div.math').length,
            typeset: document.querySelectorAll('mjx-container').length,
            mathErrors: [...document.querySelectorAll('mjx-merror')].map(e => e.textContent),
            images: [...document.images].map(i => ({src: i.src, ok: i.complete && i.naturalWidth > 0})),
            errorOutputs: document.querySelectorAll(
                '.output.error, .output.traceback, .cell_output .traceback').length,
            links: [...document.querySelectorAll('a[href]')].map(a => ({
                href: a.href, label: a.className + ' ' + a.textContent.trim(),
                text: a.textContent.trim(),
                internal: a.classList.contains('internal') && !a.querySelector('img, svg'),
            })),
        })"""
    )
    save_screenshot(page, name.removesuffix(".html").replace("/", "__"), full_page=True)
    page.close()
    found["errors"] = errors
    return found


def _local_file(url: str) -> Path | None:
    parts = urlsplit(url)
    return Path(unquote(parts.path)) if parts.scheme == "file" else None


def test_every_page_reads_correctly_in_a_browser(browser, built_book):
    html = built_book / "_build" / "html"
    pages = book_pages(html)
    assert len(pages) >= 6, [p.name for p in pages]
    problems: dict[str, list[str]] = {}
    seen: dict[str, dict] = {}
    for path in pages:
        name = str(path.relative_to(html))
        found = seen[name] = visit(browser, path, name)
        issues = list(found["errors"])
        if found["mathSource"] and not found["typeset"]:
            issues.append(f"{found['mathSource']} math elements but none typeset by MathJax")
        for marker in ("\\(", "\\[", "$$"):
            if marker in found["text"]:
                issues.append(f"raw TeX left in the page text: {marker!r}")
        issues += [f"TeX error: {e}" for e in found["mathErrors"]]
        issues += [f"image not loaded: {i['src']}" for i in found["images"] if not i["ok"]]
        if found["errorOutputs"] or "Traceback (most recent call last)" in found["text"]:
            issues.append("a cell shows an error or a traceback")
        issues += [f"unrendered markup: {m.group(0)!r}" for m in RAW_MARKUP.finditer(found["text"])]
        for link in found["links"]:
            if link["internal"] and link["text"] in EMPTY_REFERENCES:
                issues.append(f"cross-reference without its text: {link['text']!r} -> {link['href']}")
            target = _local_file(link["href"])
            if target is not None and not target.exists():
                issues.append(f"broken link to {target.relative_to(html)} ({link['label'][:40]})")
        if issues:
            problems[name] = issues
    assert not problems, "\n".join(f"{page}: {issue}" for page, found in problems.items() for issue in found)

    # the book's front door (index.html) leads to the introduction, offline too
    page = browser.new_page()
    page.goto((html / "index.html").as_uri())
    page.wait_for_url("**/book/intro.html")
    page.close()

    # chapter pages: a Binder button on the chapter's Jupytext source; both downloads
    chapters = [n for n in seen if n.startswith("outputs/notebooks/")]
    assert chapters
    for name in chapters:
        stem = Path(name).stem
        hrefs = {link["href"] for link in seen[name]["links"]}
        assert config_binder_url(ROOT, f"notebooks/{stem}.md") in hrefs, name
        downloads = {Path(unquote(urlsplit(h).path)).name for h in hrefs if "/_sources/" in h}
        assert {f"{stem}.ipynb", f"{stem}.md"} <= downloads, (name, downloads)

    # the report lists every claim id of both papers
    report = seen["outputs/report.html"]["text"]
    missing = [cid for cid in CLAIMS if not re.search(rf"\b{cid}\b", report)]
    assert not missing, f"the report drops claims {missing}"
    if SCREENSHOTS is not None:
        assert len(list(SCREENSHOTS.glob("*.png"))) >= len(pages)
