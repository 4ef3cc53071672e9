"""Lazy re-export: a package's public names, imported from their modules when first used.

A package whose ``__init__`` imports the names of its modules imports all of them, and all they
import, whenever any part of it is imported: ``import ntpnb.runner`` runs ``ntpnb/__init__.py``
first, and a chapter that only draws a figure would load every solver. Instead, a package
names where each public name lives and gets, from :func:`lazy_exports`, the module-level
``__getattr__`` and ``__dir__`` of PEP 562: a name's module is imported the first time the name
is asked for, and the name is then kept in the package, so later uses cost nothing.
``package.name``, ``from package import name``, ``from package import *`` and ``dir(package)``
behave as if the names had been imported eagerly; so does ``package.submodule`` for a submodule
that those imports used to bind as a side effect.

A name that is also the name of a submodule (``ntpnb.chapter.progress``, a module and its
function) cannot be lazy: importing the submodule binds it in the package, in place of the
name. The package imports such a name itself.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]

#: The name under which a package that uses :func:`lazy_exports` answers whether it exports a
#: name, without importing anything to find out.
EXPORTS_NAME = "_exports_name"


def lazy_exports(
    package: str,
    origins: Mapping[str, str],
    every_name_of: str | None = None,
    public: Callable[[], list[str]] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` that import its public names on first use.

    Parameters
    ----------
    package
        The package's ``__name__``.
    origins
        Each public name and the module (relative to ``package``, e.g. ``".claims"``) that
        defines it; a subpackage that is itself a public name maps to itself
        (``"attention": ".attention"``).
    every_name_of
        A module (relative) every public name of which the package also re-exports, without
        listing them; it is imported when a name not in ``origins`` is asked for.
    public
        Returns the package's ``__all__`` when it is first asked for, for a package whose
        public names include those of ``every_name_of`` (and so are not known before it is
        imported); a package that lists its names defines ``__all__`` itself.

    Returns
    -------
    tuple
        ``(__getattr__, __dir__)``, to assign at the module level of ``package``.
    """
    namespace = sys.modules[package].__dict__

    def exports(name: str) -> bool:
        return name in origins or (every_name_of is not None and _exports(every_name_of, package, name))

    def get_attribute(name: str) -> Any:
        if name == "__all__" and public is not None:
            value: Any = public()
        elif name in origins:
            module = importlib.import_module(origins[name], package)
            # a subpackage that is a public name: importing it bound it in the namespace
            value = namespace[name] if origins[name] == f".{name}" else getattr(module, name)
        elif not name.startswith("_") and importlib.util.find_spec(f"{package}.{name}") is not None:
            # a submodule: ``from package import submodule`` asks the package first
            value = importlib.import_module(f".{name}", package)
        elif every_name_of is not None and _exports(every_name_of, package, name):
            value = getattr(importlib.import_module(every_name_of, package), name)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def list_names() -> list[str]:
        names = set(namespace) | set(origins)
        if every_name_of is not None:
            names |= set(importlib.import_module(every_name_of, package).__all__)
        return sorted(names)

    namespace[EXPORTS_NAME] = exports
    return get_attribute, list_names


def _exports(module: str, package: str, name: str) -> bool:
    """Whether ``module`` (relative to ``package``) exports ``name``, importing it only if it must.

    A module that uses :func:`lazy_exports` answers from its list of origins; any other from
    its ``__all__``.
    """
    imported = importlib.import_module(module, package)
    exports = imported.__dict__.get(EXPORTS_NAME)
    return exports(name) if exports is not None else name in imported.__all__
