"""The API reference of the book (``book/api/``): one page per module, for a person to read.

* ``.. ntpnb-api:: <module>`` (:class:`ApiNames`, in ``eval-rst``) documents, after the module's
  docstring, every name of a public module's ``__all__`` (option ``:public:``, default the module
  itself) that the module defines (:func:`home_of`), in the order of ``__all__``, under the name a
  reader imports it by: the functions of ``ntpnb.linear._loss`` as ``ntpnb.softmax``. Each public
  name thus has exactly one page, the page of its topic; a name defined nowhere in the
  reference fails the build (:func:`_check_every_name`).
* Types read as written: ``ArrayLike`` stays ``ArrayLike`` (``autodoc_type_aliases`` in
  ``_config.yml``; Sphinx before 9 cannot evaluate an alias in a union such as ``ArrayLike |
  None``, :func:`_alias_unions` gives it that), and numpy's and the standard library's types link
  to their documentation (:func:`external_url`) with no inventory fetched: the build is offline.
* Data documented by a ``#:`` comment where it is defined keeps that comment when a package
  re-exports it (:class:`ModuleDataDocumenter`); data and property docstrings are prose, kept from
  napoleon (:class:`_ProseDocstrings`).
* A reference to an internal object links to its public entry, or is unlinked code
  (:func:`_internal_reference`).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import pkgutil
import re
import sys
import types
import typing
from contextlib import suppress
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.errors import PycodeError
from sphinx.ext.autodoc import DataDocumenter
from sphinx.pycode import ModuleAnalyzer
from sphinx.util import inspect as sphinx_inspect
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import make_refnode, nested_parse_with_titles

logger = logging.getLogger(__name__)

#: The package whose internal objects a docstring may name (shown unlinked when not public).
PACKAGE = "ntpnb"
#: The directive of an API page.
DIRECTIVE = "ntpnb-api"
#: Data whose value prints longer than this is documented by its comment alone, without its value.
MAX_VALUE_CHARS = 200

#: numpy's reference pages of the numpy types that signatures use, by name (numpy's own
#: documentation, the stable release); another numpy name is shown unlinked.
NUMPY_REFERENCE = "https://numpy.org/doc/stable/reference/"
NUMPY_PAGES = {
    "ArrayLike": "typing.html#numpy.typing.ArrayLike",
    "NDArray": "typing.html#numpy.typing.NDArray",
    "DTypeLike": "typing.html#numpy.typing.DTypeLike",
    "ndarray": "generated/numpy.ndarray.html",
    "dtype": "generated/numpy.dtype.html",
    "Generator": "random/generator.html#numpy.random.Generator",
}
#: The standard library's documentation: ``<module>.html#<module>.<name>`` for a public name.
PYTHON_LIBRARY = "https://docs.python.org/3/library/"
#: The pages of the other libraries' types that signatures name, by the name a signature writes
#: (matplotlib's are imported for type checking only, so a signature shows their bare name).
OTHER_PAGES = {
    "Figure": "https://matplotlib.org/stable/api/_as_gen/matplotlib.figure.Figure.html",
    "Axes": "https://matplotlib.org/stable/api/_as_gen/matplotlib.axes.Axes.html",
    "FileLock": "https://py-filelock.readthedocs.io/en/latest/api.html#filelock.FileLock",
}


def external_url(target: str) -> str | None:
    """The documentation page of a numpy, standard-library or other library's type named ``target``, or None.

    ``target`` is a dotted name as a signature writes it (``numpy.typing.ArrayLike``,
    ``np.ndarray``, ``numpy.random._generator.Generator``, ``collections.abc.Callable``).
    """
    module, _, name = target.rpartition(".")
    top = module.split(".")[0]
    if top in ("numpy", "np"):
        page = NUMPY_PAGES.get(name)
        return NUMPY_REFERENCE + page if page else None
    public = all(part and not part.startswith("_") for part in target.split("."))
    if module and public and top in sys.stdlib_module_names:
        return f"{PYTHON_LIBRARY}{module}.html#{target}"
    if top in ("", "matplotlib", "filelock"):
        return OTHER_PAGES.get(name)
    return None


def _alias_unions() -> None:
    """Let a type alias of ``autodoc_type_aliases`` stand in a union (``ArrayLike | None``).

    Sphinx before 9.0 fails to evaluate such an annotation and then prints every annotation of
    the function as its source text; Sphinx 9.0 added these two operators (sphinx-doc/sphinx#14004).
    """
    alias = sphinx_inspect.TypeAliasForwardRef
    if "__or__" not in vars(alias):  # (hasattr would find type.__or__, the metaclass's)
        alias.__or__ = lambda self, other: typing.Union[self, other]  # type: ignore[attr-defined]  # noqa: UP007
        alias.__ror__ = lambda self, other: typing.Union[other, self]  # type: ignore[attr-defined]  # noqa: UP007


@functools.cache
def _module_comments(module: str) -> dict[str, list[str]]:
    """The ``#:`` comments of the module-level data of ``module``, by name."""
    try:
        analyzer = ModuleAnalyzer.for_module(module)
        analyzer.analyze()
    except PycodeError:
        return {}
    return {name: list(doc) for (scope, name), doc in analyzer.attr_docs.items() if scope == ""}


def home_of(public: str, name: str) -> str | None:
    """The module that defines ``public.name``, or None for a module or undocumented data.

    A class's or function's ``__module__``; for data, the module of the package whose ``#:``
    comment documents it.
    """
    obj = getattr(importlib.import_module(public), name)
    if inspect.ismodule(obj):
        return None
    if inspect.isclass(obj) or inspect.isroutine(obj):
        return getattr(obj, "__module__", None)
    for module in sorted(m for m in sys.modules if m == PACKAGE or m.startswith(f"{PACKAGE}.")):
        if name in _module_comments(module) and getattr(sys.modules[module], name, None) is obj:
            return module
    return None


def names_defined_in(module: str, public: str) -> list[str]:
    """The names of ``public.__all__`` that ``module`` defines, in the order of ``__all__``."""
    names = getattr(importlib.import_module(public), "__all__", None)
    if names is None:
        raise ValueError(f"{public} has no __all__: its public names are not listed")
    return [name for name in names if not name.startswith("__") and home_of(public, name) == module]


def _autodoc_directive(obj: object) -> str:
    """The autodoc directive of an object."""
    if isinstance(obj, types.GenericAlias):  # a type alias such as ``dict[str, int]``: data
        return "autodata"
    if inspect.isclass(obj):
        return "autoexception" if issubclass(obj, BaseException) else "autoclass"
    return "autofunction" if callable(obj) else "autodata"


class ApiNames(SphinxDirective):
    """``.. ntpnb-api:: <module>``: the module's docstring, then the public names it defines.

    Options: ``:public:`` the module a reader imports the names from (default: the module);
    ``:no-docstring:`` leaves the module's docstring out; ``:show-inheritance:`` shows each class's
    bases.
    """

    required_arguments = 1
    option_spec = {  # noqa: RUF012 (docutils' interface)
        "public": directives.unchanged,
        "no-docstring": directives.flag,
        "show-inheritance": directives.flag,
    }

    def run(self) -> list[nodes.Node]:
        """The autodoc directives of the module and its names, parsed."""
        module = self.arguments[0]
        public = self.options.get("public", module)
        try:
            names = names_defined_in(module, public)
        except (ImportError, ValueError) as exc:
            raise self.error(f"{DIRECTIVE} {module}: {exc}") from None
        if not names:
            raise self.error(f"{DIRECTIVE} {module}: defines no name of {public}.__all__")
        # the page changes with the module and the __all__ of the packages that list its names
        parts = module.split(".")
        for listing in sorted({public, *(".".join(parts[:n]) for n in range(1, len(parts) + 1))}):
            self.env.note_dependency(importlib.import_module(listing).__file__)
        placed = self.env.temp_data.setdefault("ntpnb_api_names", set())
        lines = [] if "no-docstring" in self.options else [f".. automodule:: {module}", ""]
        lines += [f".. currentmodule:: {public}", ""]
        namespace = importlib.import_module(public)
        for name in names:
            directive = _autodoc_directive(getattr(namespace, name))
            lines.append(f".. {directive}:: {public}.{name}")
            if directive == "autodata" and len(repr(getattr(namespace, name))) > MAX_VALUE_CHARS:
                lines.append("   :no-value:")  # a registry, say: its comment says what it holds
            if directive in ("autoclass", "autoexception"):
                lines.append("   :members:")
                if "show-inheritance" in self.options:
                    lines.append("   :show-inheritance:")
            lines.append("")
            placed.add(f"{public}.{name}")
        _record(self.env, self.env.docname, sorted(placed))
        content = StringList(lines, source=f"<{DIRECTIVE} {module}>")
        node = nodes.container()
        nested_parse_with_titles(self.state, content, node)
        return node.children


def _record(env: BuildEnvironment, docname: str, names: list[str]) -> None:
    """Remember which public names page ``docname`` documents (checked once every page is read)."""
    pages: dict[str, list[str]] = env.__dict__.setdefault("ntpnb_api_pages", {})
    pages[docname] = names


def _purge(_app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    env.__dict__.setdefault("ntpnb_api_pages", {}).pop(docname, None)


def _merge(_app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment) -> None:
    pages = env.__dict__.setdefault("ntpnb_api_pages", {})
    pages.update({d: n for d, n in other.__dict__.get("ntpnb_api_pages", {}).items() if d in docnames})


def _check_every_name(_app: Sphinx, env: BuildEnvironment) -> None:
    """Every name of ``__all__`` of each public module that a page documents is on exactly one page."""
    pages: dict[str, list[str]] = env.__dict__.get("ntpnb_api_pages", {})
    where: dict[str, list[str]] = {}
    for docname, names in sorted(pages.items()):
        for name in names:
            where.setdefault(name, []).append(docname)
    for name, docnames in where.items():
        if len(docnames) > 1:
            logger.warning(f"{name} is documented on {len(docnames)} API pages: {', '.join(docnames)}")
    for public in sorted({name.rpartition(".")[0] for name in where}):
        module = importlib.import_module(public)
        for name in module.__all__:
            skip = name.startswith("__") or inspect.ismodule(getattr(module, name))
            if skip or f"{public}.{name}" in where:
                continue
            home = home_of(public, name)
            if home is None:
                logger.warning(f"{public}.{name} is data with no #: comment where it is defined")
            elif f"{home}.{name}" not in where:  # nor under the module that defines it
                logger.warning(f"{public}.{name} (defined in {home}) is on no API page")


def _factory_defaults(
    _app: Sphinx,
    what: str,
    _name: str,
    obj: object,
    _options: object,
    signature: str | None,
    annotation: str | None,
) -> tuple[str, str | None] | None:
    """``autodoc-process-signature``: a dataclass field's ``<factory>`` default as its call, ``dict()``.

    ``<factory>`` (what :mod:`dataclasses` writes) is no Python expression: Sphinx would print the
    whole signature as unparsed text.
    """
    if what != "class" or not signature or not dataclasses.is_dataclass(obj) or "<factory>" not in signature:
        return None
    for field in dataclasses.fields(obj):
        factory = field.default_factory
        if factory is not dataclasses.MISSING:
            call = f"{getattr(factory, '__qualname__', 'factory')}()"
            default = rf"\b({re.escape(field.name)}(?::[^=]*?)?) = <factory>"
            signature = re.sub(default, rf"\1 = {call}", signature)
    return signature, annotation


class ModuleDataDocumenter(DataDocumenter):
    """Module data: its ``#:`` comment, read where the data is defined when a package re-exports it."""

    def get_module_comment(self, attrname: str) -> list[str] | None:
        """The comment in this module, else in the module of the package that defines the data."""
        comment = super().get_module_comment(attrname)
        if comment:
            return comment
        home = home_of(self.modname, attrname) if self.modname.startswith(PACKAGE) else None
        return _module_comments(home).get(attrname) if home else None


@functools.cache
def _lookup(target: str, module: str | None) -> object | None:
    """The object of the package that ``target`` (absolute, relative to ``module``, or short) names, or None.

    Relative to ``module`` means in it or in one of the packages that hold it (a module's
    docstring names its siblings so). A short name is looked up among the loaded modules of the
    package: the one a docstring is in is not known. The answers are kept: references are
    resolved after every module is imported.
    """
    parts = module.split(".") if module else []
    within = [f"{'.'.join(parts[:n])}.{target}" for n in range(len(parts), 0, -1)]
    for dotted in (target, *within):
        if dotted == PACKAGE or dotted.startswith(f"{PACKAGE}."):
            with suppress(ImportError, AttributeError, ValueError):
                return pkgutil.resolve_name(dotted)
    head, _, rest = target.partition(".")
    for name in sorted(sys.modules):
        found = getattr(sys.modules[name], head, None) if name.startswith(f"{PACKAGE}.") else None
        if found is None or (rest and not getattr(found, "__module__", "").startswith(PACKAGE)):
            continue  # ``Class.member`` names a member of a class the package defines, no other
        with suppress(AttributeError):
            return functools.reduce(getattr, rest.split(".") if rest else [], found)
    return None


def _is_field(target: str, node: Any) -> bool:
    """Whether ``target`` names an annotated field of a class of the package (which no object holds).

    ``Class.field``, or ``field`` in the docstring of a class: a dataclass field without a default
    is no attribute of its class, so :func:`_lookup` cannot find it.
    """
    owner, _, field = target.rpartition(".")
    owner = owner or node.get("py:class") or ""
    cls = _lookup(owner, node.get("py:module")) if owner else None
    return inspect.isclass(cls) and any(field in vars(k).get("__annotations__", {}) for k in cls.__mro__)


def _internal_reference(app: Sphinx, env: BuildEnvironment, node: Any, contnode: Any) -> Any:
    """A Python reference Sphinx did not find, resolved where it can be.

    To numpy's or Python's page of one of their types, the object's public entry, or unlinked
    code if the object is internal.
    """
    if node.get("refdomain") != "py":
        return None
    url = external_url(node["reftarget"])
    if url is not None:
        return nodes.reference("", "", contnode, internal=False, refuri=url, reftitle=node["reftarget"])
    obj = _lookup(node["reftarget"], node.get("py:module"))
    if obj is None:  # a field is shown as unlinked code; anything else stays a warning
        return contnode if _is_field(node["reftarget"], node) else None
    domain = env.get_domain("py")
    for name, entry in domain.objects.items():
        if name.startswith(f"{PACKAGE}.") and name.rsplit(".", 1)[-1] == getattr(obj, "__name__", None):
            if _lookup(name, None) is obj:
                return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, name)
    return contnode


#: Kinds of object whose docstring is prose, never numpy sections.
_PROSE_KINDS = ("data", "attribute", "property")


@dataclasses.dataclass
class _ProseDocstrings:
    """Prose docstrings handed from before napoleon to after it, by object name, in one build.

    Not a cache: :meth:`keep` holds a data or property docstring as autodoc reads it and
    :meth:`restore` hands it back once napoleon has run, removing it, so nothing outlives the
    processing of its own docstring. One instance per Sphinx application (see :func:`setup`).
    """

    kept: dict[str, list[str]] = dataclasses.field(default_factory=dict)

    def keep(
        self, _app: Sphinx, what: str, name: str, _obj: object, _options: object, lines: list[str]
    ) -> None:
        """``autodoc-process-docstring`` before napoleon: hold a prose docstring."""
        if what in _PROSE_KINDS:
            self.kept[name] = list(lines)

    def restore(
        self, _app: Sphinx, what: str, name: str, _obj: object, _options: object, lines: list[str]
    ) -> None:
        """``autodoc-process-docstring`` after napoleon: put the held docstring back."""
        if what in _PROSE_KINDS and name in self.kept:
            lines[:] = self.kept.pop(name)


def setup(app: Sphinx) -> None:
    """Register the API pages' directive, their check, the type aliases' unions and the references."""
    _alias_unions()
    app.add_directive(DIRECTIVE, ApiNames)
    app.add_autodocumenter(ModuleDataDocumenter, override=True)
    app.add_css_file("ntpnb-api.css")
    app.connect("autodoc-process-signature", _factory_defaults)
    # napoleon's runs at 500
    prose = _ProseDocstrings()
    app.connect("autodoc-process-docstring", prose.keep, priority=100)
    app.connect("autodoc-process-docstring", prose.restore, priority=900)
    app.connect("missing-reference", _internal_reference)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("env-check-consistency", _check_every_name)
