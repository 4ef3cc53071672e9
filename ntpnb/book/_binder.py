"""Binder links, derived from the repository URL of ``_config.yml``.

The repository URL is written in one place. The book's launch button on each chapter
(:mod:`.sphinx_ext`) and the README's badge are both :func:`binder_url` of it; tests keep the
README equal to what this module derives (and its links to the book that CI publishes equal to
the GitHub Pages address of the repository).
"""

from __future__ import annotations

from urllib.parse import quote

DEFAULT_BINDERHUB = "https://mybinder.org"


def binder_url(
    repository_url: str, branch: str, path: str | None = None, binderhub: str = DEFAULT_BINDERHUB
) -> str:
    """The Binder URL that opens ``path`` (relative to the repository root) in JupyterLab.

    ``repository_url`` is ``https://github.com/<org>/<repo>`` (other hosts use Binder's generic
    git provider); ``branch`` may be a tag or a commit; ``path`` None opens the repository root.
    """
    repository_url = repository_url.strip().rstrip("/").removesuffix(".git")
    prefix = "https://github.com/"
    if repository_url.startswith(prefix) and repository_url.count("/") == 4:
        spec = f"gh/{repository_url.removeprefix(prefix)}/{branch}"
    else:
        spec = f"git/{quote(repository_url, safe='')}/{branch}"
    url = f"{binderhub.rstrip('/')}/v2/{spec}"
    return f"{url}?urlpath=lab/tree/{quote(path)}" if path else url


def source_of_chapter(docname: str) -> str | None:
    """The Jupytext source (``notebooks/<name>.md``) of a chapter page, None for other pages."""
    prefix = "outputs/notebooks/"
    if docname.startswith(prefix) and "/" not in docname.removeprefix(prefix):
        return f"notebooks/{docname.removeprefix(prefix)}.md"
    return None
