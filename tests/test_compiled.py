"""The numba cache of the package's kernels is stamped by every module a kernel imports."""

from __future__ import annotations

import importlib
from pathlib import Path

from ntpnb import _compiled as compiled


def _package(tmp_path: Path) -> Path:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("from . import unrelated\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "kernel.py").write_text("from ..rules import step\nfrom pkg import consts\n")
    (package / "rules.py").write_text("from . import consts\nstep = 1\n")
    (package / "consts.py").write_text("SCALE = 2.0\n")
    (package / "unrelated.py").write_text("X = 0\n")
    return package


def _digest(package: Path) -> str:
    compiled.source_digest.cache_clear()
    return compiled.source_digest(package / "sub" / "kernel.py", package)


def test_the_digest_changes_with_any_module_the_kernel_imports_transitively(tmp_path):
    package = _package(tmp_path)
    before = _digest(package)
    (package / "consts.py").write_text("SCALE = 3.0\n")  # imported by rules.py and by name
    assert _digest(package) != before


def test_the_digest_ignores_modules_the_kernel_does_not_import(tmp_path):
    package = _package(tmp_path)
    before = _digest(package)
    (package / "unrelated.py").write_text("X = 1\n")  # only the package's __init__ imports it
    assert _digest(package) == before


def test_every_kernel_module_is_cached_under_the_stamp_of_its_imports():
    for name in ("ntpnb._optim_loops", "ntpnb.linear._decoder_loops", "ntpnb.attention._ngd_loops"):
        module = importlib.import_module(name)
        kernels = [v for v in vars(module).values() if hasattr(v, "_cache") and hasattr(v._cache, "_impl")]
        assert kernels, name
        path = Path(module.__file__)
        compiled.source_digest.cache_clear()
        for kernel in kernels:
            if Path(kernel.py_func.__code__.co_filename).resolve() != path.resolve():
                continue  # a kernel of another module, imported by name
            assert kernel._cache._impl._locator.get_source_stamp() == compiled.source_digest(path)
        optim = compiled.PACKAGE / "_optim.py"
        assert optim in compiled._imported_modules(compiled.PACKAGE / "_optim_loops.py", compiled.PACKAGE)


def test_the_cache_state_changes_when_a_kernel_is_compiled_into_the_cache(tmp_path, monkeypatch):
    """What a run compares to know that its time includes numba's compiling (ntpnb list says so)."""
    from ntpnb import _compiled

    monkeypatch.setattr(_compiled, "PACKAGE", tmp_path)
    before = _compiled.cache_state()
    cache = tmp_path / "linear" / "__pycache__"
    cache.mkdir(parents=True)
    (cache / "_descent.train-12.py311.nbi").write_bytes(b"index")
    after = _compiled.cache_state()
    assert before == {} and list(after) == [str(cache / "_descent.train-12.py311.nbi")]
    assert _compiled.cache_state() == after  # loading from the cache writes nothing
