"""The packages' public names are imported when first used, and behave as eagerly imported ones.

Each check runs in a fresh interpreter, since what a test imports stays imported.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from ntpnb._lazy import lazy_exports

#: What the runner and the command line must not load: the science and the plotting stack.
SCIENCE = ("numpy", "scipy", "matplotlib", "cvxpy", "numba", "joblib")


def run_python(code: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def loaded_after(statement: str) -> set[str]:
    """The modules of :data:`SCIENCE` that ``statement`` loads in a fresh interpreter."""
    out = run_python(f"import sys\n{statement}\nprint(*[m for m in {SCIENCE!r} if m in sys.modules])")
    return set(out.split())


@pytest.mark.parametrize("statement", ["import ntpnb", "import ntpnb.runner.workers", "import ntpnb.cli"])
def test_the_runner_and_the_command_line_load_no_science(statement):
    assert loaded_after(statement) == set()


def test_a_chapter_loads_only_what_it_uses():
    # Paper A's data: no solver, no compiled loop, nothing of Paper B
    assert loaded_after("import ntpnb as ntp; ntp.NTPData; ntp.toy2d_instance") == {"numpy", "scipy"}
    out = run_python("""
        import sys
        import ntpnb as ntp
        from ntpnb.chapter import ClaimLog, paper_value
        ntp.entropy
        print("ntpnb.attention" in sys.modules, "ntpnb.chapter.figures" in sys.modules)
    """)
    assert out.split() == ["False", "False"]
    # cvxpy is loaded by the functions that solve with it, not by their modules
    out = run_python("""
        import sys
        import ntpnb as ntp
        ntp.best_achievable_loss, ntp.cvxpy_path_point, ntp.ntp_svm
        print("cvxpy" in sys.modules)
    """)
    assert out.split() == ["False"]


@pytest.mark.parametrize("package", ["ntpnb", "ntpnb.linear", "ntpnb.chapter", "ntpnb.book"])
def test_public_names_behave_as_if_imported_eagerly(package):
    out = run_python(f"""
        import importlib, inspect
        package = importlib.import_module({package!r})
        names = list(package.__all__)
        assert len(set(names)) == len(names), "a name is listed twice"
        assert set(names) <= set(dir(package)), set(names) - set(dir(package))
        star = {{}}
        exec("from {package} import *", star)
        assert set(star) - {{"__builtins__"}} == set(names)
        for name in names:
            value = getattr(package, name)
            assert star[name] is value, name
            if inspect.isclass(value) or inspect.isfunction(value):  # defined where the origin says
                module = importlib.import_module(value.__module__)
                assert getattr(module, name) is value, name
        print(len(names))
    """)
    assert int(out) > 0


@pytest.mark.parametrize("package", ["ntpnb", "ntpnb.linear", "ntpnb.chapter", "ntpnb.book"])
def test_a_public_name_stays_itself_when_its_namesake_submodule_is_imported(package):
    """Importing a submodule binds it in its package: a public name of the same name is not lazy."""
    out = run_python(f"""
        import importlib, pkgutil
        package = importlib.import_module({package!r})
        names = set(package.__all__)
        for info in pkgutil.walk_packages(package.__path__, prefix=package.__name__ + "."):
            importlib.import_module(info.name)
        for name in sorted(names):
            value = getattr(package, name)
            if f"{{package.__name__}}.{{name}}" in ("ntpnb.attention", "ntpnb.optim"):
                continue  # public names that are modules
            assert type(value).__name__ != "module", f"{{name}} became its module"
        print("ok")
    """)
    assert out.split() == ["ok"]


def test_the_top_level_reexports_paper_a_and_its_own_names():
    out = run_python("""
        import ntpnb, ntpnb.linear, ntpnb.linear.experiments as experiments
        from ntpnb import NTPError, errors
        assert ntpnb.__all__[: len(ntpnb.linear.__all__)] == ntpnb.linear.__all__
        assert set(experiments.__all__) <= set(ntpnb.linear.__all__)
        assert {"optim", "attention", "compile_kernels", "__version__", "NTPError"} <= set(ntpnb.__all__)
        assert NTPError is errors.NTPError and ntpnb.attention.graphs is not None
        print("ok")
    """)
    assert out.split() == ["ok"]


def test_submodules_stay_reachable_as_attributes():
    """``ntp.settings`` worked because the eager imports bound it; it still does, alone."""
    out = run_python("""
        import sys
        import ntpnb as ntp
        print(ntp.settings.__name__, "numpy" in sys.modules)
    """)
    assert out.split() == ["ntpnb.settings", "False"]


def test_unknown_names_raise_attribute_error():
    out = run_python("""
        import ntpnb, ntpnb.chapter
        for package in (ntpnb, ntpnb.chapter):
            try:
                package.no_such_name
            except AttributeError as exc:
                print("no_such_name" in str(exc))
    """)
    assert out.split() == ["True", "True"]


def test_lazy_exports_keeps_a_resolved_name_in_the_package():
    import types

    module = types.ModuleType("fake_lazy_package")
    module.__path__ = []
    sys.modules[module.__name__] = module
    try:
        get, names = lazy_exports(module.__name__, {"dumps": "json"})
        assert get("dumps") is __import__("json").dumps
        assert module.__dict__["dumps"] is get("dumps")  # later uses are plain lookups
        assert "dumps" in names()
        with pytest.raises(AttributeError, match="nothing"):
            get("nothing")
    finally:
        del sys.modules[module.__name__]
