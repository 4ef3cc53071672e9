"""A command that needs a missing extra is refused before any work, naming the set-up that installs it."""

from __future__ import annotations

import importlib.util

import pytest

from ntpnb import _extras, cli
from ntpnb.errors import NTPError


@pytest.fixture
def without_distributed(monkeypatch):
    """Dask's distributed not installed (Dask's core may be)."""
    found = importlib.util.find_spec
    monkeypatch.setattr(
        _extras.importlib.util,
        "find_spec",
        lambda name, *args: None if name == "distributed" else found(name),
    )


def test_a_missing_extra_names_the_projects_set_up(without_distributed):
    assert not _extras.installed("distributed") and _extras.installed("numpy")
    with pytest.raises(
        NTPError, match=r"--scheduler needs distributed, which is not installed for .*`\./run\.sh setup test`"
    ):
        _extras.require("--scheduler", "distributed", "test")


def test_scheduler_without_distributed_is_refused_before_the_run(without_distributed, capsys, monkeypatch):
    import ntpnb.runner as runner

    monkeypatch.setattr(runner, "__getattr__", lambda name: pytest.fail(f"the run's {name} was loaded"))
    assert cli.main(["reproduce", "03", "--profile", "quick", "--scheduler", "tcp://host:8786"]) == 2
    assert "--scheduler needs distributed" in capsys.readouterr().err
