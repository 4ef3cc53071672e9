"""The notebook libraries (jupytext, nbformat, papermill) load without a grammar no notebook uses.

nbformat validates notebooks with jsonschema. When the package ``rfc3987-syntax`` is installed
(``jsonschema[format-nongpl]``, which JupyterLab's ``jupyter-events`` asks for), importing
jsonschema builds about thirty Earley parsers for the ``iri`` formats, 0.8 to 0.9 s of CPU in
every process that reads a notebook: each ``ntpnb`` command and each worker. No notebook schema uses those
formats, so :func:`import_jsonschema_without_iri_grammar` imports jsonschema without them; the
package itself stays importable for anyone who asks for it later.

Only jsonschema 4.24 and later load it. ``constraints.txt`` holds jsonschema at 4.23.0, which spares
every process of an environment ``run.sh`` installs, the book's build and nbval among them; this
guard spares ntpnb's own processes where jsonschema is not held (Binder's conda environment, a
reader's own).
"""

from __future__ import annotations

import sys

#: The package whose import jsonschema would otherwise pay on load.
IRI_GRAMMAR_PACKAGE = "rfc3987_syntax"


def import_jsonschema_without_iri_grammar() -> None:
    """Import jsonschema (once per process) with its ``iri`` format checkers left out.

    Call before the first import of jupytext, nbformat or papermill; once jsonschema is loaded,
    nothing is done.
    """
    if "jsonschema" in sys.modules or IRI_GRAMMAR_PACKAGE in sys.modules:
        return
    sys.modules[IRI_GRAMMAR_PACKAGE] = None  # type: ignore[assignment]  # its import raises ImportError
    try:
        import jsonschema  # noqa: F401
    finally:
        del sys.modules[IRI_GRAMMAR_PACKAGE]
