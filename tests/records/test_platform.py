"""The platform a run records: CPU, BLAS libraries with their kernel and threads, versions."""

from __future__ import annotations

import json

import numpy as np

from ntpnb.records._platform import cpu_model, format_platform, platform_info


def test_platform_info_is_json_and_names_the_blas():
    info = platform_info()
    assert json.loads(json.dumps(info)) == info
    assert info["cpu"] == cpu_model() and info["cpu"]
    assert info["packages"]["numpy"] == np.__version__
    blas = [lib for lib in info["threadpools"] if lib["user_api"] == "blas"]
    assert blas and all(lib["version"] and lib["file"] and lib["num_threads"] >= 1 for lib in blas)
    table = format_platform(info)
    assert all(f"`{lib['file']}`" in table for lib in blas)
    assert table.count("\n") == len(table.splitlines())  # every row ends its line


def test_a_run_that_never_loaded_scipy_records_the_same_libraries():
    """One machine is one platform in the report: whichever BLAS its code had loaded, a run
    records numpy's and scipy's libraries alike (a chapter without scipy once made "2 platforms")."""
    import subprocess
    import sys

    code = "import json, sys; from ntpnb.records._platform import platform_info; "
    show = "json.dump([lib['file'] for lib in platform_info()['threadpools']], sys.stdout)"

    def files(prefix: str) -> list[str]:
        run = subprocess.run([sys.executable, "-c", prefix + code + show], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        return json.loads(run.stdout)

    assert files("") == files("import scipy.linalg; ")
