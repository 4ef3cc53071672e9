"""The optional parts of ntpnb (its extras), and how a command refuses to start without one it needs.

Each extra of ``pyproject.toml`` is installed by one level of the project's set-up
(:data:`SETUP`); a command that needs a missing one refuses before it does any work, naming that
command (:func:`require`), which installs the versions pinned in ``constraints.txt``.
"""

from __future__ import annotations

import importlib.util
import sys

from .errors import NTPError

#: The set-up command of the project that installs each extra (``./run.sh setup`` is a reader's).
SETUP = {
    "book": "./run.sh setup",
    "pdf": "./run.sh setup",
    "lab": "./run.sh setup lab",
    "test": "./run.sh setup test",
}


def installed(package: str) -> bool:
    """Whether the top-level ``package`` can be imported here (found, not imported)."""
    return importlib.util.find_spec(package) is not None


def install_advice(extra: str) -> str:
    """How to install ``extra``: the project's set-up command, then pip's pinned equivalent."""
    return (
        f"`{SETUP[extra]}` installs it into the project's .venv (in another environment, "
        f"pip install -c constraints.txt -e '.[{extra}]')"
    )


def missing_extra(what: str, package: str, extra: str) -> str:
    """Why ``what`` cannot run without ``package`` (of the extra ``extra``), and what installs it."""
    return f"{what} needs {package}, which is not installed for {sys.executable}: {install_advice(extra)}"


def require(what: str, package: str, extra: str) -> None:
    """Refuse ``what`` unless the top-level ``package`` (of the extra ``extra``) is installed.

    Raises
    ------
    NTPError
        If it is not: naming the set-up command that installs it (:func:`missing_extra`).
    """
    if not installed(package):
        raise NTPError(missing_extra(what, package, extra))
