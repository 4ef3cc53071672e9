"""Sphinx extension of the book: broken notebooks fail the build; offline math; chapter buttons.

* Every executed notebook with a problem (:func:`~._executed.notebook_problems`) is a warning,
  which ``-W`` makes fatal: the book renders executed notebooks without executing them
  (``ntpnb book`` refuses such a tree before Sphinx starts; this check serves any other build).
* Math without network: with a relative ``mathjax_path`` (``_config.yml``), MathJax is served from
  the package ``sphinx-mathjax-offline``.
* Each chapter page gets a Binder button and a download button for its Jupytext source
  ``notebooks/<name>.md``.
* The API reference (``book/api/``, one page per module; :mod:`._api_reference`).
* Every page is footed with when, from which commit and in which run it was executed
  (:mod:`._footers`, read from the output tree ``outputs/`` once per build).
* The whole book's PDF (:mod:`._pdf`), where ``ntpnb book`` prints one (``ntpnb_book_pdf``): the
  ``{book-pdf}`` directive links it (:func:`_link_pdf`), and the pages' ``.pdf`` button downloads
  it instead of printing the page.
* The book's stylesheet; fixes for theme bugs (a script declared twice, an empty colour mode);
  notebook outputs' CDN stylesheet links are dropped (:func:`_drop_cdn_links`).
"""

from __future__ import annotations

import os
import re
import shutil
from importlib import metadata
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.environment import BuildEnvironment
from sphinx.errors import ExtensionError
from sphinx.util import logging
from sphinx.util.osutil import relative_uri

from ..errors import PathError
from ..records._places import DEFAULT_OUTPUT_DIRNAME, OutputTree
from . import _api_reference as api_reference
from . import _bibliography as bibliography
from . import _pictures as pictures
from . import _scoreboard as scoreboard
from . import _term_links as term_links
from . import _words as words
from ._binder import DEFAULT_BINDERHUB, binder_url, source_of_chapter
from ._executed import notebook_problems
from ._footers import Footers, read_footers
from ._pdf import PDF_ENV

MATHJAX_DISTRIBUTION = "sphinx-mathjax-offline"
_STATIC = Path(__file__).parent / "static"
_TEMPLATES = Path(__file__).parent / "templates"
#: The template of the execution footer (in :data:`_TEMPLATES`), added to the theme's footer items.
FOOTER_TEMPLATE = "ntpnb-provenance.html"
#: The theme's footer items when ``_config.yml`` names none (sphinx-book-theme's without the empty ones).
DEFAULT_FOOTER_ITEMS = ("author.html", "copyright.html")

logger = logging.getLogger(__name__)


def _check(_app: Sphinx, env: BuildEnvironment) -> None:
    # every document, every build: an unchanged notebook that Sphinx does not re-read is
    # checked again, so a second build cannot pass where the first one failed
    for docname in sorted(env.found_docs):
        path = Path(env.doc2path(docname))
        if path.suffix != ".ipynb":
            continue
        for problem in notebook_problems(path):
            logger.warning(f"executed notebook {path.name}: {problem}", location=docname)


def _add_static_and_read_footers(app: Sphinx) -> None:
    """The book's static files (MathJax from ``sphinx-mathjax-offline`` where ``mathjax_path`` is relative).

    And the output tree's run record and executed chapters, read once for every page's footer.
    """
    app.config.html_static_path.append(str(_STATIC))
    app.add_css_file("ntpnb.css")
    if not str(app.config.mathjax_path).startswith(("http://", "https://", "/")):
        try:
            dist = metadata.distribution(MATHJAX_DISTRIBUTION)
        except metadata.PackageNotFoundError:
            raise ExtensionError(
                f"the book serves its own MathJax from the package {MATHJAX_DISTRIBUTION}, which is "
                "not installed: pip install -c constraints.txt -e '.[book]'"
            ) from None
        folder = Path(str(dist.locate_file("sphinx-mathjax-offline/static")))
        if not (folder / "mathjax" / "tex-chtml.js").is_file():
            raise ExtensionError(f"{MATHJAX_DISTRIBUTION} has no mathjax/tex-chtml.js under {folder}")
        app.config.html_static_path.append(str(folder))
    # the theme shows the logo alone unless told a text: the book's title goes beside it (a
    # run's book is titled after its run)
    options = app.config.html_theme_options
    options["logo"] = {"text": app.config.html_title, **options.get("logo", {})}
    tree = OutputTree(Path(app.srcdir) / DEFAULT_OUTPUT_DIRNAME)
    try:
        app.ntpnb_footers = read_footers(tree, options.get("repository_url", ""))  # type: ignore[attr-defined]
    except PathError as exc:
        raise ExtensionError(f"the pages' execution footers: {exc}") from None


def _add_footer_template(_app: Sphinx, config: Config) -> None:
    """Make the execution footer one of the theme's footer items (before the templates load)."""
    config.templates_path.append(str(_TEMPLATES))
    options = config.html_theme_options
    items = list(options.get("footer_content_items") or DEFAULT_FOOTER_ITEMS)
    options["footer_content_items"] = [*items, FOOTER_TEMPLATE] if FOOTER_TEMPLATE not in items else items


def _link_pdf(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Write the ``{book-pdf}`` line: on HTML pages only (the PDF does not link itself)."""
    pdf = app.config.ntpnb_book_pdf
    for node in scoreboard.placeholders(doctree, "book-pdf"):
        node["classes"] = []  # the line's own class only
        if app.builder.name != "html":
            node.parent.remove(node)
        elif pdf:
            uri = relative_uri(app.builder.get_target_uri(docname), pdf)
            text = nodes.strong(text="Download the whole book as one PDF")
            about = " (every chapter, the report and the reference, as this build shows them)."
            link = nodes.reference("", "", text, refuri=uri)
            node.replace_self(nodes.paragraph("", "", link, nodes.Text(about), classes=["ntpnb-book-pdf"]))
        else:
            text = "This build of the book has no PDF (ntpnb book prints one where Chromium is installed)."
            node.replace_self(nodes.paragraph("", text, classes=["ntpnb-book-pdf"]))


def _page_context(
    app: Sphinx, pagename: str, _templatename: str, context: dict[str, Any], _doctree: Any
) -> None:
    """Fix the theme's scripts; foot the page; link the book's PDF; Binder and source buttons on a chapter."""
    _drop_repeated_scripts(context)
    footers: Footers = app.ntpnb_footers  # type: ignore[attr-defined]
    chapter = source_of_chapter(pagename)  # the execution footer: its chapter's, or the run's
    context["ntpnb_provenance"] = footers.chapter(Path(pagename).name) if chapter else footers.book()
    _link_book_pdf(context, app.config.ntpnb_book_pdf)
    if "body" in context:
        context["body"] = _drop_cdn_links(context["body"])
    # with no colour mode, the theme's script logs "invalid theme mode" on every page
    if not context.get("default_mode"):
        context["default_mode"] = "auto"
    source = _present_source(app, pagename)
    buttons = context.get("header_buttons")
    if source is None or buttons is None:
        return
    for group in buttons:
        if group.get("label") == "download-buttons":
            group["buttons"].insert(1, _jupytext_button(context, source))
    options = app.config.html_theme_options
    repository = options.get("repository_url", "")
    if repository:
        branch = options.get("repository_branch", "main")
        url = binder_url(repository, branch, source, app.config.ntpnb_binderhub_url)
        buttons.insert(0, _binder_group(url))


def _drop_repeated_scripts(context: dict[str, Any]) -> None:
    """Drop repeated script tags (same file, same inline body) of a page's ``context``: each once."""
    scripts = context.get("script_files") or []
    kept: dict[tuple[str, str | None], Any] = {}
    for script in scripts:
        key = (getattr(script, "filename", script) or "", getattr(script, "attributes", {}).get("body"))
        kept.setdefault(key, script)
    scripts[:] = kept.values()


def _link_book_pdf(context: dict[str, Any], pdf: str) -> None:
    """Make the page's .pdf button download the whole book's PDF ``pdf``, if this build made one.

    Without ``pdf`` ("") the button keeps the theme's action: it prints the page.
    """
    for group in (context.get("header_buttons") or []) if pdf else []:
        buttons = group.get("buttons", [])
        for i, button in enumerate(buttons):
            if button.get("label") == "download-pdf-button":
                kept = {k: v for k, v in button.items() if k != "javascript"}
                tooltip = "Download the whole book as one PDF"
                url = context["pathto"](pdf, 1)
                buttons[i] = kept | dict(type="link", url=url, text=".pdf (the whole book)", tooltip=tooltip)


def _jupytext_button(context: dict[str, Any], source: str) -> dict[str, str]:
    """The header button that downloads a chapter's Jupytext ``source`` (published under ``_sources/``)."""
    tooltip = "Download the notebook's source (opens as a notebook with Jupytext)"
    jupytext = dict(type="link", url=context["pathto"](f"_sources/{source}", 1), tooltip=tooltip)
    jupytext.update(text=".md (Jupytext source)", icon="fas fa-file-code", label="download-jupytext-button")
    return jupytext


def _binder_group(url: str) -> dict[str, Any]:
    """The header's group of launch buttons: one, that runs the chapter on Binder at ``url``."""
    launch = dict(type="link", text="Binder", tooltip="Run this chapter on Binder")
    launch.update(icon="_static/images/logo_binder.svg", label="launch-binder-button")
    launch["url"] = url
    group = dict(type="group", tooltip="Launch interactive content", icon="fas fa-rocket")
    return {**group, "buttons": [launch], "label": "launch-buttons"}


#: CDN stylesheets that notebook outputs link (Font Awesome 4, by matplotlib's ``to_jshtml``),
#: which the theme's own Font Awesome replaces; offline the request fails and logs an error.
_CDN_LINKS = re.compile(
    r"<link[^>]*href=\"https://maxcdn\.bootstrapcdn\.com/font-awesome/[^\"]*\"[^>]*>\s*", re.IGNORECASE
)


def _drop_cdn_links(body: str) -> str:
    """``body`` without the CDN stylesheet links of :data:`_CDN_LINKS`."""
    return _CDN_LINKS.sub("", body)


def _present_source(app: Sphinx, docname: str) -> str | None:
    """The Jupytext source of chapter page ``docname`` when the book's sources hold it, else None."""
    source = source_of_chapter(docname)
    return source if source and (Path(app.srcdir) / source).is_file() else None


def _copy_sources(app: Sphinx, exception: Exception | None) -> None:
    """Publish each chapter's Jupytext source under ``_sources/notebooks/`` for download."""
    if exception is not None or app.builder.format != "html":
        return
    for docname in app.env.found_docs:
        if source := _present_source(app, docname):
            target = Path(app.outdir) / "_sources" / source
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(Path(app.srcdir) / source, target)


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the notebook check, static files, footers, chapter buttons and the API docstrings."""
    app.add_config_value("ntpnb_binderhub_url", DEFAULT_BINDERHUB, "html")
    # where the whole book's PDF is, relative to the HTML book's root ("": this build makes none)
    app.add_config_value("ntpnb_book_pdf", os.environ.get(PDF_ENV, ""), "html")
    app.add_directive("book-pdf", scoreboard.Placeholder)
    app.connect("doctree-resolved", _link_pdf)
    api_reference.setup(app)
    app.connect("env-updated", _check)
    app.connect("config-inited", _add_footer_template)
    app.connect("builder-inited", _add_static_and_read_footers)
    app.add_css_file("ntpnb-print.css")  # the printed book (ntpnb.book._pdf), in the static folder above
    app.connect("html-page-context", _page_context, priority=502)  # after the theme's (501)
    app.connect("build-finished", _copy_sources)
    scoreboard.setup(app)
    pictures.setup(app)
    words.setup(app)
    term_links.setup(app)
    bibliography.setup(app)
    return {"version": "2", "parallel_read_safe": True, "parallel_write_safe": True}
