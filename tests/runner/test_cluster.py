"""The seed sweep on a Dask cluster (``ntpnb reproduce --scheduler``), on a local ``distributed`` cluster."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

from ntpnb.chapter import _parameters as profiles
from ntpnb.errors import NTPError, RunInterruptedError
from ntpnb.records._places import exploratory_output_dir, output_tree
from ntpnb.records._run import load_chapter_run
from ntpnb.runner import _cluster, reproduce
from ntpnb.runner._jupyter_kernel import RUN_MARKER
from ntpnb.runner._workers import marked_processes

from conftest import local_dask
from fake_notebooks import fake_notebook

pytestmark = pytest.mark.slow

BODY = """\
import os
import time

from ntpnb.chapter._claims import ClaimLog

claims = ClaimLog("{name}", profile, output_dir, seed=seed)
time.sleep(float(os.environ.get("NTPNB_TEST_SLEEP", "0")))
claims.check("A1", "seed parity", seed % 2, "==", 0)
print("seed", seed)
claims.conclude()
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "project"
    (root / "notebooks").mkdir(parents=True)
    (root / "_toc.yml").write_text("format: jb-book\nroot: x\n")
    for name in ("a_one", "b_two"):
        (root / "notebooks" / f"{name}.md").write_text(fake_notebook(BODY.format(name=name), "seed = 0"))
    monkeypatch.setattr(profiles, "CHANGES", {name: {} for name in ("a_one", "b_two")})
    return root


def test_a_sweep_runs_as_tasks_of_a_dask_cluster(project, dask_client):
    address = dask_client.scheduler.address
    results = reproduce(project, profile="quick", seeds=3, scheduler=address, log=lambda line: None)
    assert [(r.notebook, r.seed, r.sweep) for r in results] == [
        ("a_one", 0, False),
        ("a_one", 1, True),
        ("a_one", 2, True),
        ("b_two", 0, False),
        ("b_two", 1, True),
        ("b_two", 2, True),
    ]
    # every run completed; the check fails at the odd seed, which the result and record say
    assert all(r.complete for r in results)
    assert [r.ok for r in results] == [True, False, True, True, False, True]
    assert results[1].failed_checks == (
        "A1 seed parity: measured 1; required = 0 (relation ==, value 0, tolerance 0)",
    )
    layout = output_tree(results[0].executed.parent.parent)
    assert layout.root == exploratory_output_dir(project.resolve(), "quick", {})  # not the book's tree
    record = load_chapter_run(layout.seed_root(2) / "claims" / "b_two.json")
    assert record.seed == 2 and record.complete and record.parameters["seed"] == 2
    executed = json.loads((layout.seed_root(1) / "notebooks" / "a_one.ipynb").read_text())
    assert "seed 1" in json.dumps(executed)
    # a second run finds every (notebook, seed) cached, on the cluster as locally
    again = reproduce(project, profile="quick", seeds=3, scheduler=address, log=lambda line: None)
    assert all(r.cached for r in again)


def test_an_interrupted_cluster_run_ends_its_processes_on_the_workers(project, dask_client, monkeypatch):
    from ntpnb.runner import _run as run_module

    marks = []
    environment = run_module.run_environment

    @contextmanager
    def recorded():
        with environment() as mark:
            marks.append(mark)
            yield mark

    monkeypatch.setattr(run_module, "run_environment", recorded)
    monkeypatch.setenv("NTPNB_TEST_SLEEP", "60")
    handled = _cluster.signals_handled

    @contextmanager
    def interrupted_while_handled(signals, handler):
        # Ctrl-C 4 s into the run, sent only while the run handles it: never to pytest's own
        # handler (which would end this test process, an xdist worker, with a KeyboardInterrupt)
        with handled(signals, handler):
            timer = threading.Timer(4.0, os.kill, (os.getpid(), signal.SIGINT))
            timer.start()
            try:
                yield
            finally:
                timer.cancel()

    monkeypatch.setattr(_cluster, "signals_handled", interrupted_while_handled)
    started = time.monotonic()
    with pytest.raises(RunInterruptedError, match="interrupted after 0 of 4 notebook runs"):
        reproduce(project, profile="quick", seeds=2, scheduler=dask_client.scheduler.address, force=True)
    assert time.monotonic() - started < 30
    (mark,) = marks
    deadline = time.monotonic() + 10
    while marked_processes(RUN_MARKER, mark) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not marked_processes(RUN_MARKER, mark)


def test_an_unreachable_scheduler_is_named(project, monkeypatch):
    monkeypatch.setattr(_cluster, "SCHEDULER_TIMEOUT_SECONDS", 1.0)  # the answer, not the wait
    with pytest.raises(NTPError, match=r"no Dask scheduler answers at tcp://127\.0\.0\.1:9"):
        reproduce(project, profile="quick", seeds=1, scheduler="tcp://127.0.0.1:9", log=lambda line: None)


def test_marked_processes_ignore_other_runs():
    assert marked_processes(RUN_MARKER, "no-such-run") == []


KILLED_BODY = """\
import os
import pathlib
import time

from ntpnb.chapter._claims import ClaimLog

claims = ClaimLog("{name}", profile, output_dir, seed=seed)
started = pathlib.Path(os.environ["NTPNB_TEST_STARTED"])
if not started.exists():  # the first attempt: it says so, then waits to be killed with its worker
    started.write_text(str(os.getpid()))
    time.sleep(60)
claims.check("A1", "seed parity", seed % 2, "==", 0)
print("seed", seed)
claims.conclude()
"""


@pytest.fixture
def process_cluster(tmp_path, monkeypatch):
    """A local Dask cluster of a scheduler and two worker processes (each under a nanny)."""
    monkeypatch.setenv("NTPNB_TEST_STARTED", str(tmp_path / "started"))  # the workers inherit it
    with local_dask(processes=True) as client:
        yield client


@pytest.mark.parametrize("killed", ["worker", "task"])
def test_a_run_whose_worker_or_process_is_killed_runs_again_and_prints_what_a_local_run_prints(
    project, process_cluster, tmp_path, killed
):
    """A worker killed mid-run: Dask moves its task; the task's own process killed: Dask retries it."""
    from ntpnb.book._compare import print_comparison

    body = KILLED_BODY.format(name="a_one")
    (project / "notebooks" / "a_one.md").write_text(fake_notebook(body, "seed = 0"))
    (project / "notebooks" / "b_two.md").unlink()
    client, started, kernels = process_cluster, tmp_path / "started", []

    def kill_while_it_runs():
        deadline = time.monotonic() + 60
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        kernels.append(int(started.read_text()))
        if killed == "task":  # as the kernel's out-of-memory killer would: the kernel's parent
            os.kill(parent_of(kernels[0]), signal.SIGKILL)
            return
        workers = [pid for pid in client.run(os.getpid).values() if kernels[0] in descendants(pid)]
        assert len(workers) == 1
        os.kill(workers[0], signal.SIGKILL)

    killer = threading.Thread(target=kill_while_it_runs)
    killer.start()
    address, lines = client.scheduler.address, []
    remote = reproduce(
        project, ["a_one"], "quick", tmp_path / "remote", lines.append, seeds=1, scheduler=address
    )
    killer.join()
    assert [r.ok for r in remote] == [True], lines
    local = reproduce(project, ["a_one"], "quick", tmp_path / "local", lambda line: None, seeds=1)
    assert [r.ok for r in local] == [True]
    assert print_comparison(tmp_path / "remote", tmp_path / "local") == 0
    deadline = time.monotonic() + 10  # the first attempt's kernel ended with its worker or process
    while Path(f"/proc/{kernels[0]}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(f"/proc/{kernels[0]}").exists()


def parent_of(pid: int) -> int:
    """The parent of process ``pid`` (Linux: /proc/<pid>/stat)."""
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])


def descendants(pid: int) -> set[int]:
    """The processes below ``pid`` (Linux: /proc/<pid>/task/*/children)."""
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        for children in Path(f"/proc/{parent}/task").glob("*/children"):
            with suppress(OSError):
                for child in map(int, children.read_text().split()):
                    if child not in found:
                        found.add(child)
                        todo.append(child)
    return found
