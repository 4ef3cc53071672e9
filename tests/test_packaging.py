"""The product around the book: Binder's environment, the one repository URL, the workflows."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from jupytext import TextFileContentsManager
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from ntpnb.book._binder import binder_url, source_of_chapter
from ntpnb.book._pdf import PDF_NAME, SCREENSHOT_CHAPTER, SCREENSHOT_NAME
from ntpnb.lab import ChapterContentsManager

from conftest import ROOT
from helpers import book_config, config_binder_url

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
ENVIRONMENT = yaml.safe_load((ROOT / "environment.yml").read_text())
#: environment.yml holds what a reader needs: the runtime dependencies and the book extra
BINDER_GROUPS = (
    PYPROJECT["project"]["dependencies"],
    PYPROJECT["project"]["optional-dependencies"]["book"],
    PYPROJECT["project"]["optional-dependencies"]["lab"],  # Binder's JupyterLab renders the MyST prose
)
#: ... and what postBuild builds ntpnb with (``--no-build-isolation``): the build system's requirements
BUILD_REQUIRES = [Requirement(r) for r in PYPROJECT["build-system"]["requires"]]


def pinned_constraints() -> dict[str, str]:
    """constraints.txt's versions for the Python of Binder (>= 3.11)."""
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        spec, _, marker = line.partition(";")
        if marker and '< "3.11"' in marker:
            continue
        name, version = spec.strip().split("==")
        pins[canonicalize_name(name)] = version
    return pins


def environment_pins() -> dict[str, str]:
    pins = {}
    for dep in ENVIRONMENT["dependencies"]:
        for spec in dep["pip"] if isinstance(dep, dict) else [dep]:
            name, sep, version = spec.partition("==")
            assert sep and version, f"environment.yml: {spec!r} is not pinned exactly (use ==)"
            pins[canonicalize_name(name)] = version
    return pins


def test_environment_uses_conda_forge_only():
    assert ENVIRONMENT["channels"] == ["conda-forge"]


def test_environment_names_the_same_packages_as_pyproject():
    wanted = {canonicalize_name(Requirement(r).name) for group in BINDER_GROUPS for r in group}
    wanted |= {canonicalize_name(r.name) for r in BUILD_REQUIRES}
    named = set(environment_pins()) - {"python", "pip"}
    assert named == wanted, f"only in environment.yml: {named - wanted}; only in pyproject: {wanted - named}"


def test_environment_pins_a_build_backend_that_pyproject_accepts():
    """postBuild builds without isolation, so the environment's setuptools must satisfy [build-system]."""
    pins = environment_pins()
    for req in BUILD_REQUIRES:
        assert req.specifier.contains(pins[canonicalize_name(req.name)]), (
            req,
            pins[canonicalize_name(req.name)],
        )
    assert "--no-build-isolation" in (ROOT / "postBuild").read_text()


def test_environment_pins_the_versions_of_constraints():
    constraints = pinned_constraints()
    build = {canonicalize_name(r.name) for r in BUILD_REQUIRES}
    for name, version in environment_pins().items():
        if name in {"python", "pip"} | build:
            continue
        assert constraints[name] == version, (
            f"{name}: environment.yml {version}, constraints {constraints[name]}"
        )
    assert environment_pins()["python"].startswith("3.11.")


def test_binder_installs_ntpnb_and_opens_the_sources_as_notebooks():
    post_build = (ROOT / "postBuild").read_text()
    assert "pip install --no-deps" in post_build and " -e ." in post_build
    assert "ntpnb.compile_kernels()" in post_build  # no reader waits for numba's compiler
    assert (ROOT / "postBuild").stat().st_mode & 0o111, "postBuild must be executable"
    assert canonicalize_name("jupytext") in environment_pins()
    server = (ROOT / ".jupyter" / "jupyter_server_config.py").read_text()
    assert '"ntpnb.lab.ChapterContentsManager"' in server  # Jupytext's, the chapters read-only
    assert issubclass(ChapterContentsManager, TextFileContentsManager)


def test_binder_url_is_derived_from_the_repository():
    assert binder_url("https://github.com/org/repo", "main", "notebooks/01_x.md") == (
        "https://mybinder.org/v2/gh/org/repo/main?urlpath=lab/tree/notebooks/01_x.md"
    )
    assert binder_url("https://github.com/org/repo.git/", "dev") == "https://mybinder.org/v2/gh/org/repo/dev"
    assert binder_url("https://gitlab.example/a/b", "main").startswith("https://mybinder.org/v2/git/https%3A")


def test_chapter_pages_map_to_their_jupytext_sources():
    assert source_of_chapter("outputs/notebooks/01_entropy_separability") == (
        "notebooks/01_entropy_separability.md"
    )
    assert source_of_chapter("book/intro") is None
    assert source_of_chapter("outputs/report") is None


def test_repository_url_lives_in_config_and_the_readme_badge_derives_from_it():
    url = book_config(ROOT)["repository"]["url"]
    assert url.startswith("https://")
    readme = (ROOT / "README.md").read_text()
    badges = re.findall(r"\]\((https://mybinder\.org/v2/[^)]+)\)", readme)
    assert badges == [config_binder_url(ROOT, "notebooks")], badges
    assert (ROOT / "notebooks").is_dir()  # the folder the badge opens exists in the image
    # no other copy of the repository URL anywhere in the product's text
    for path in ["README.md", "CITATION.cff", *map(str, (ROOT / "book").glob("*.md"))]:
        text = (ROOT / path).read_text()
        assert url not in text, f"{path} repeats the repository URL: derive it from _config.yml"


def test_the_readme_links_the_published_book_its_pdf_and_screenshot_derived_from_the_repository():
    readme = (ROOT / "README.md").read_text()
    # GitHub Pages publishes the book of https://github.com/<owner>/<repo> at https://<owner>.github.io/<repo>/
    owner, name = book_config(ROOT)["repository"]["url"].removeprefix("https://github.com/").split("/")
    book = f"https://{owner.lower()}.github.io/{name}/"
    assert book == "https://ntpnb.github.io/ntpnb/"
    links = set(re.findall(r"https://[\w.-]+\.github\.io/[^)>\s]*", readme))
    chapter = f"outputs/notebooks/{SCREENSHOT_CHAPTER}.html"
    assert links == {book, book + PDF_NAME, book + SCREENSHOT_NAME, book + chapter}, links
    assert (ROOT / "notebooks" / f"{SCREENSHOT_CHAPTER}.md").is_file()


def workflow(name):
    return yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text())


def _steps(flow):
    return [step for job in flow["jobs"].values() for step in job.get("steps", [])]


def test_test_workflow_runs_ci_on_pushes_and_pull_requests():
    flow = workflow("tests.yml")
    triggers = flow[True]  # YAML 1.1 reads the key `on` as True
    assert "push" in triggers and "pull_request" in triggers
    runs = [s.get("run", "") for s in _steps(flow)]
    assert "bash .ci/run" in runs
    caches = [s for s in _steps(flow) if s.get("uses", "").startswith("actions/cache")]
    assert caches and "hashFiles('constraints.txt'" in caches[0]["with"]["key"]
    assert caches[0]["with"]["path"].endswith(".cache/pip")  # downloads only, never results


def test_book_workflow_builds_with_the_readme_command_and_deploys_pages():
    flow = workflow("book.yml")
    readme = (ROOT / "README.md").read_text()
    steps = _steps(flow)
    runs = [s.get("run", "") for s in steps]
    assert "./run.sh reproduce" in runs and "./run.sh reproduce" in readme
    # the book is printed to its PDF by the runner's Chrome, and is not published without it
    build = next(s for s in steps if s.get("run") == "./run.sh reproduce")
    assert Path(build["env"]["NTPNB_CHROMIUM"]).name == "google-chrome"
    assert runs.index(f"test -s _build/html/{PDF_NAME}") > runs.index("./run.sh reproduce")
    # the published Benchmarks page has the tables: the benchmarks run before the book is built
    bench = next(i for i, r in enumerate(runs) if "ntpnb benchmarks" in r)
    assert bench < runs.index("./run.sh reproduce") and "--notebooks" in runs[bench]
    uses = [s.get("uses", "") for s in steps]
    assert any(u.startswith("actions/upload-pages-artifact") for u in uses)
    assert any(u.startswith("actions/deploy-pages") for u in uses)
    setup = next(s for s in steps if s.get("uses", "").startswith("actions/setup-python"))
    assert setup["with"]["cache"] == "pip" and "constraints.txt" in setup["with"]["cache-dependency-path"]
    assert flow["permissions"]["pages"] == "write"


def test_ci_runs_the_suite_under_a_second_blas_kernel_and_on_python_3_10():
    """Results must not depend on the machine: the whole suite also runs with
    OPENBLAS_CORETYPE=Haswell, and on 3.10's pins."""
    job = workflow("tests.yml")["jobs"]["tests"]
    matrix = job["strategy"]["matrix"]["include"]
    assert job["container"] == "python:${{ matrix.python }}-bookworm"
    assert {(m["python"], m["coretype"]) for m in matrix} == {("3.11", ""), ("3.11", "Haswell"), ("3.10", "")}
    step = next(s for s in job["steps"] if s.get("run") == "bash .ci/run")
    assert step["env"]["OPENBLAS_CORETYPE"] == "${{ matrix.coretype }}"
    # the browser test's screenshots are taken where the artifact step collects them
    upload = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["with"]["path"].rstrip("/") == step["env"]["NTPNB_SCREENSHOTS"]
    cache = next(s for s in job["steps"] if "cache" in s.get("uses", ""))
    assert "${{ matrix.python }}" in cache["with"]["key"]
    # an empty OPENBLAS_CORETYPE must be unset before anything loads OpenBLAS
    ci = (ROOT / ".ci" / "run").read_text()
    assert ci.index("unset OPENBLAS_CORETYPE") < ci.index("./run.sh test")
    # the 3.10 job installs the 3.10 pins: constraints.txt marks them, run.sh passes it to pip
    pins = (ROOT / "constraints.txt").read_text()
    assert re.search(r'^numpy==[\d.]+ ; python_version < "3\.11"$', pins, flags=re.M)
    assert "-c constraints.txt" in (ROOT / "run.sh").read_text()


def test_ci_installs_chromium_and_requires_the_browser_test():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "apt-get install" in ci and "chromium" in ci
    assert "NTPNB_REQUIRE_BROWSER=1" in ci and "NTPNB_REQUIRE_MOUNTS=1" in ci


def test_cdn_stylesheets_of_notebook_outputs_are_dropped():
    from ntpnb.book.sphinx_ext import _drop_cdn_links as drop_cdn_links

    animation = (
        '<link rel="stylesheet"\nhref="https://maxcdn.bootstrapcdn.com/font-awesome/4.4.0/css/'
        'font-awesome.min.css">\n<div class="animation"><i class="fa fa-play"></i></div>'
    )
    assert drop_cdn_links(animation) == '<div class="animation"><i class="fa fa-play"></i></div>'
    assert drop_cdn_links('<link rel="stylesheet" href="_static/x.css">') == (
        '<link rel="stylesheet" href="_static/x.css">'
    )


#: A Python run as the reader's environment has it (``./run.sh reproduce`` installs the book and
#: pdf extras, not the lab one): jupyter_server, which only the lab extra brings, cannot be imported.
_WITHOUT_LAB = """
import importlib, pkgutil, sys
class _Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("jupyter_server", "jupyterlab", "jupyterlab_myst"):
            raise ImportError(f"No module named {name!r} (blocked by the test)")
sys.meta_path.insert(0, _Absent())
import ntpnb
failed = []
for module in pkgutil.walk_packages(ntpnb.__path__, "ntpnb."):
    if module.name == "ntpnb.lab" or module.name.endswith(".__main__"):  # a __main__ runs the command
        continue
    try:
        importlib.import_module(module.name)
    except Exception as error:
        failed.append(f"{module.name}: {type(error).__name__}: {error}")
try:
    import ntpnb.lab
except ImportError as error:
    print("LAB:", error)
print("FAILED:", failed)
"""


def test_without_the_lab_extra_every_module_but_the_lab_one_imports_and_that_one_says_what_it_needs():
    # the book is built where the lab extra is not installed: its API pages resolve references by
    # importing the module named, so a module that fails to import there otherwise than by an
    # ImportError (jupytext's stand-in manager raised a TypeError) broke `./run.sh reproduce`
    shown = subprocess.run(
        [sys.executable, "-c", _WITHOUT_LAB], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert "FAILED: []" in shown, shown
    assert "LAB: ntpnb.lab is JupyterLab's contents manager and needs the lab extra" in shown, shown


def test_no_docstring_links_the_lab_module_which_the_readers_book_build_cannot_import():
    linked = re.compile(r":(?:mod|func|class|data|attr):`~?ntpnb\.lab\b")
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "ntpnb").rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if linked.search(line)
    ]
    assert found == []


#: Each layer of the package and the packages above it, which it never imports (DESIGN.md): the
#: science below everything, the evidence (claims, checks, verdicts, their words) below the
#: records, and the records below what a chapter calls, runs, renders, maps and commands.
_ABOVE = {
    "linear": ("evidence", "records", "chapter", "runner", "book", "explore", "cli", "lab"),
    "attention": ("evidence", "records", "chapter", "runner", "book", "explore", "cli", "lab"),
    "evidence": ("records", "chapter", "runner", "book", "explore", "cli", "lab"),
    "records": ("chapter", "runner", "book", "explore", "cli", "lab", "linear", "attention"),
}


def _imports_above(package: str) -> list[str]:
    """The imports of ``ntpnb.<package>``'s modules (any depth) from a package above it."""
    import ast

    root = Path(__file__).resolve().parents[1] / "ntpnb"
    found = []
    for path in sorted((root / package).rglob("*.py")):
        depth = len(path.relative_to(root).parts) - 1  # ntpnb/linear/experiments/x.py: 2
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                module = (node.module or "").split(".")
                if node.level == 0:
                    up = module[1] if module[0] == "ntpnb" and len(module) > 1 else ""
                else:
                    up = module[0] if node.level == depth + 1 else ""
                if up in _ABOVE[package]:
                    found.append(f"{path.relative_to(root)}:{node.lineno} {'.' * node.level}{node.module}")
    return found


@pytest.mark.parametrize("package", sorted(_ABOVE))
def test_each_layer_imports_nothing_above_it(package):
    assert _imports_above(package) == []


def test_a_process_that_reads_a_notebook_builds_no_grammar():
    # jsonschema from 4.24 imports rfc3987-syntax where it is installed (the lab extra's
    # jupyter-events brings it), which builds a Lark grammar on import: 0.8 s of CPU in each
    # process that imports nbformat without ntpnb's guard (the book's build, nbval, JupyterLab)
    code = (
        "import sys, jupytext, nbformat, papermill\n"
        "nbformat.validate(nbformat.v4.new_notebook())\n"
        "print(sorted(name for name in ('lark', 'rfc3987_syntax') if name in sys.modules))\n"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert shown.strip() == "[]", f"imported {shown.strip()}: hold jsonschema below 4.24 in constraints.txt"
