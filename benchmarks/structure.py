"""The package's structure measured: long functions, import cycles, private imports, public names.

``python -m benchmarks.structure [ROOT]`` prints, for the sources under ``ntpnb/`` and
``benchmarks/`` of ``ROOT`` (default: this checkout):

* the functions of more than 30 and of more than 50 code lines (code = not blank, comment or
  docstring), with their names;
* modules that import each other in a loop (any import, inside a function too);
* imports of a private name (``_x``) of another module, and uses of ``importlib``;
* dead parameters: a parameter that its function's body never reads (methods that implement a
  protocol, ``self``/``cls``, ``*args``/``**kwargs``, stubs and names starting ``_`` that are
  declared unused are left out);
* the public surface (every name importable with no ``_`` in its path: the ``__all__`` of the public
  modules and packages) and how many of those names a notebook, the CLI or a benchmark names;
* what each chapter's code calls: the science (``ntpnb``'s top level, ``ntpnb.attention``,
  ``ntpnb.linear``, ``ntpnb.optim``, ``ntpnb.statistics``) against the machinery (``ntpnb.chapter``,
  ``ntpnb.explore``, ``ntpnb.records``, ``ntpnb.runner``, ``ntpnb.book``, ``ntpnb.evidence`` and
  the chapter's claim log), with its claim checks and glue calls (:func:`notebook_calls`).

Text only, but for the public surface, which imports the package in a child process.
"""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

#: Code lines above which a function is long, and very long.
LONG, VERY_LONG = 30, 50


@dataclass(frozen=True)
class Function:
    """One function or method with its code-line count."""

    where: str
    name: str
    code_lines: int


def _sources(root: Path) -> list[Path]:
    """The package's and the benchmarks' Python files."""
    return sorted(p for top in ("ntpnb", "benchmarks") for p in (root / top).rglob("*.py"))


def _code_lines(source: str) -> set[int]:
    """The lines that hold code: not blank, a comment or (part of) a docstring."""
    tree = ast.parse(source)
    doc_lines: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                doc_lines.update(range(body[0].lineno, body[0].end_lineno + 1))
    lines: set[int] = set()
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in skip or tok.type == tokenize.ENDMARKER:
            continue
        lines.update(range(tok.start[0], tok.end[0] + 1))
    return lines - doc_lines


def functions(root: Path) -> list[Function]:
    """Every function of the sources with its code lines (a nested function counts in its parent too)."""
    out = []
    for path in _sources(root):
        source = path.read_text()
        code = _code_lines(source)
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = sum(1 for line in range(node.lineno, node.end_lineno + 1) if line in code)
                out.append(Function(f"{path.relative_to(root)}:{node.lineno}", node.name, n))
    return out


def _imported_from(root: Path, path: Path, node: ast.ImportFrom) -> Path:
    """The folder of the package (or the module's path less ``.py``) that ``node`` imports from."""
    base = path.parent
    for _ in range(node.level - 1):
        base = base.parent
    if node.level == 0:
        base = root
    return base.joinpath(*(node.module or "").split(".")) if node.module else base


def private_imports(root: Path) -> list[str]:
    """``file:line name`` for each import of another module's private name.

    Importing a private module (``from . import _optim``) is no such import: a package's modules
    share its private modules (scikit-learn's convention); only their ``_x`` names stay inside.
    """
    out = []
    for path in _sources(root):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                where = _imported_from(root, path, node)
                for alias in node.names:
                    if not alias.name.startswith("_") or alias.name.startswith("__"):
                        continue
                    if (where / f"{alias.name}.py").is_file() or (where / alias.name).is_dir():
                        continue  # a private module, not a private name
                    out.append(f"{path.relative_to(root)}:{node.lineno} {alias.name}")
    return out


def _module_file(where: Path) -> Path | None:
    """The file of the module or package at ``where`` (a path less ``.py``), if it is one."""
    for candidate in (where.with_suffix(".py"), where / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported_files(root: Path, path: Path) -> set[Path]:
    """The package's files that ``path`` imports anywhere (inside functions and ``TYPE_CHECKING`` too)."""
    out: set[Path] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            where = _imported_from(root, path, node)
            modules = [_module_file(where / alias.name) for alias in node.names]
            out.update(m for m in modules if m is not None)
            if not all(modules):  # a name of the module or package itself
                out.add(_module_file(where))
        elif isinstance(node, ast.Import):
            out.update(_module_file(root.joinpath(*alias.name.split("."))) for alias in node.names)
    return {m for m in out if m is not None and m != path}


def import_cycles(root: Path) -> list[list[str]]:
    """The package's modules that import each other in a loop: each strongly connected group, sorted.

    Every import counts, also one made inside a function or under ``TYPE_CHECKING``: it hides the
    loop from the reader, not from the design.
    """
    files = sorted((root / "ntpnb").rglob("*.py"))
    edges = {f: _imported_files(root, f) & set(files) for f in files}
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    stack: list[Path] = []
    groups: list[list[str]] = []

    def visit(f: Path) -> None:
        """Tarjan's strongly connected components, from the module ``f``."""
        index[f] = low[f] = len(index)
        stack.append(f)
        for g in edges[f]:
            if g not in index:
                visit(g)
                low[f] = min(low[f], low[g])
            elif g in stack:
                low[f] = min(low[f], index[g])
        if low[f] == index[f]:
            group = []
            while True:
                g = stack.pop()
                group.append(str(g.relative_to(root)))
                if g == f:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for f in files:
        if f not in index:
            visit(f)
    return sorted(groups)


def importlib_uses(root: Path) -> list[str]:
    """``file:line`` for each ``importlib.import_module`` call."""
    out = []
    for path in _sources(root):
        if path.name == "structure.py":
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if "import_module(" in line and not line.lstrip().startswith("#"):
                out.append(f"{path.relative_to(root)}:{i}")
    return out


def _is_stub(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A body of only a docstring, ``...``, ``pass`` or ``raise``: an interface, not an implementation."""
    body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return all(isinstance(s, ast.Pass | ast.Raise) for s in body)


def _protocol_methods(tree: ast.Module) -> set[str]:
    """Names of methods defined in two classes or more of one module, or overriding a base's method."""
    seen: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    seen[item.name] = seen.get(item.name, 0) + 1
    return {name for name, n in seen.items() if n > 1}


def dead_parameters(root: Path) -> list[str]:
    """``file:line function(param)`` for each parameter its function never reads.

    Left out: ``self``, ``cls``, ``*args``, ``**kwargs``, names starting ``_``, stubs, dunder
    methods, methods that implement a protocol (defined in two classes of the module, or in a
    class with bases), and functions decorated as callbacks (any decorator).
    """
    out = []
    for path in _sources(root):
        tree = ast.parse(path.read_text())
        protocol = _protocol_methods(tree)
        methods_with_bases: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.bases:
                methods_with_bases.update(id(i) for i in node.body if isinstance(i, ast.FunctionDef))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if _is_stub(node) or node.decorator_list or node.name.startswith("__"):
                continue
            if node.name in protocol or id(node) in methods_with_bases:
                continue
            used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
            for a in args:
                if a.arg in ("self", "cls") or a.arg.startswith("_"):
                    continue
                if a.arg not in used:
                    out.append(f"{path.relative_to(root)}:{node.lineno} {node.name}({a.arg})")
    return out


#: Prints, for every public module of the package under the working directory (no ``_`` in its
#: dotted path), ``<module>:<name>:<kind>`` (class, function or data) of each name a reader
#: imports from it: its ``__all__`` (less subpackages), else the functions and classes it defines;
#: each object once, where it is defined.
_SURFACE_SCRIPT = """
import importlib, inspect, pathlib, sys
seen = {}
for path in sorted(pathlib.Path("ntpnb").rglob("*.py")):
    parts = path.with_suffix("").parts
    parts = parts[:-1] if parts[-1] == "__init__" else parts
    if any(p.startswith("_") for p in parts):
        continue
    name = ".".join(parts)
    module = importlib.import_module(name)
    listed = getattr(module, "__all__", None)
    if listed is None:
        listed = [k for k, v in vars(module).items() if not k.startswith("_")
                  and (inspect.isfunction(v) or inspect.isclass(v)) and v.__module__ == name]
    for key in listed:
        obj = getattr(module, key)
        if inspect.ismodule(obj) or key.startswith("__"):
            continue
        home = getattr(obj, "__module__", None) if callable(obj) else None
        kind = "class" if inspect.isclass(obj) else "function" if callable(obj) else "data"
        seen.setdefault((home or name, key), (name, kind))
for (home, key), (where, kind) in sorted(seen.items()):
    print(f"{where}:{key}:{kind}")
"""


def public_names(root: Path) -> tuple[list[str], list[str]]:
    """The public surface (every name a reader imports with no underscore in its path), and what users name.

    Each name is ``<module>:<name>:<kind>`` (class, function or data), in the public module that
    offers it.

    The surface is read by importing the package of ``root`` in a child process (the one measure
    here that runs code): a module whose dotted path has a part starting ``_`` is private
    (scikit-learn's convention), and a public module or package offers its ``__all__``. Users: the
    notebooks, the CLI and the benchmarks.
    """
    listing = subprocess.run(
        [sys.executable, "-c", _SURFACE_SCRIPT], cwd=root, capture_output=True, text=True, check=True
    )
    names = listing.stdout.split()
    users = [p.read_text() for p in sorted((root / "notebooks").glob("*.md"))]
    users += [p.read_text() for p in sorted((root / "benchmarks").glob("*.py")) if p.name != "structure.py"]
    users += [p.read_text() for p in sorted((root / "ntpnb" / "cli").glob("*.py"))]
    text = "\n".join(users)
    used = [n for n in names if re.search(rf"\b{re.escape(n.split(':')[1])}\b", text)]
    return names, used


#: The packages a chapter's call lands in: the science, or the machinery that runs and records it.
SCIENCE = ("ntpnb", "ntpnb.attention", "ntpnb.linear", "ntpnb.optim", "ntpnb.statistics")
MACHINERY = (
    "ntpnb.chapter",
    "ntpnb.explore",
    "ntpnb.records",
    "ntpnb.runner",
    "ntpnb.book",
    "ntpnb.evidence",
)
#: The chapter's claim log, a machinery object: ``claims.check(...)``.
CLAIM_LOG = "claims"


@dataclass(frozen=True)
class ChapterCalls:
    """What one chapter's code cells call: the science and the machinery, and its checks and glue."""

    chapter: str
    science: int
    machinery: int
    checks: int
    glue: int

    @property
    def machinery_share(self) -> float:
        """The machinery's share of the calls into ``ntpnb``."""
        return self.machinery / max(1, self.science + self.machinery)


def _code_cells(path: Path) -> list[str]:
    """The sources of the code cells of the Jupytext notebook ``path`` (read by jupytext)."""
    import jupytext

    return [cell.source for cell in jupytext.read(path).cells if cell.cell_type == "code"]


def _origins(tree: ast.Module) -> dict[str, str]:
    """Each local name bound by an import from ``ntpnb`` -> the package it comes from."""
    origins = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ntpnb"):
            for alias in node.names:
                module = f"{node.module}.{alias.name}"
                origins[alias.asname or alias.name] = (
                    module if module in (*SCIENCE, *MACHINERY) else node.module
                )
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("ntpnb"):
                    origins[alias.asname or alias.name] = alias.name
    return origins


def _called_package(call: ast.Call, origins: dict[str, str]) -> str:
    """The ``ntpnb`` package a call lands in ("" for another library's or the chapter's own)."""
    func = call.func
    while isinstance(func, ast.Attribute):
        func = func.value
    if isinstance(func, ast.Name):
        if func.id == CLAIM_LOG:
            return "ntpnb.chapter"
        return origins.get(func.id, "")
    return ""


def notebook_calls(root: Path) -> list[ChapterCalls]:
    """Per chapter (``notebooks/*.md``), its calls into the science and into the machinery.

    A call is counted by the package its name was imported from (``ntp.ntp_svm(...)``: the
    science; ``glue_number(...)``, ``claims.check(...)``: the machinery); the claim checks and the
    glue calls (``glue_number``, ``glue_text``, ``glue``) are counted apart too.
    """
    out = []
    for path in sorted((root / "notebooks").glob("*.md")):
        tree = ast.parse("\n".join(_code_cells(path)))
        origins = _origins(tree)
        science = machinery = checks = glue = 0
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            package = _called_package(node, origins)
            science += package in SCIENCE
            machinery += package.startswith(MACHINERY)
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            checks += isinstance(node.func, ast.Attribute) and name == "check" and package == "ntpnb.chapter"
            glue += name in ("glue_number", "glue_text", "glue")
        out.append(ChapterCalls(path.stem, science, machinery, checks, glue))
    return out


def main(argv: list[str] | None = None) -> int:
    """Print the measures of the checkout at ``argv[0]`` (default: this one)."""
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]) if args else Path(__file__).resolve().parents[1]
    funcs = functions(root)
    long = sorted((f for f in funcs if f.code_lines > LONG), key=lambda f: -f.code_lines)
    print(f"functions: {len(funcs)}; over {LONG} code lines: {len(long)}; ", end="")
    print(f"over {VERY_LONG}: {sum(f.code_lines > VERY_LONG for f in long)}")
    for f in long:
        print(f"  {f.code_lines:4d}  {f.name}  ({f.where})")
    for title, rows in (
        ("import cycles between modules", [" <-> ".join(group) for group in import_cycles(root)]),
        ("imports of private names", private_imports(root)),
        ("importlib.import_module", importlib_uses(root)),
        ("dead parameters", dead_parameters(root)),
    ):
        print(f"{title}: {len(rows)}")
        for row in rows:
            print(f"  {row}")
    names, used = public_names(root)
    print(f"public names (no underscore in their path): {len(names)}; ", end="")
    print(f"named by a notebook, the CLI or a benchmark: {len(used)}")
    unnamed = sorted(set(names) - set(used))
    classes = [n for n in unnamed if n.endswith(":class")]
    print(f"  not named by a user: {len(classes)} classes (the types users receive, and errors)", end="")
    print(f"{': ' if len(classes) < len(unnamed) else ''}", end="")
    print(", ".join(n for n in unnamed if not n.endswith(":class")))
    calls = notebook_calls(root)
    science, machinery = sum(c.science for c in calls), sum(c.machinery for c in calls)
    checks, glue = sum(c.checks for c in calls), sum(c.glue for c in calls)
    print(f"chapters' calls: science {science}, machinery {machinery} (claim checks {checks}, glue {glue})")
    for c in calls:
        print(f"  {c.chapter}: science {c.science}, machinery {c.machinery} ({c.machinery_share:.0%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
