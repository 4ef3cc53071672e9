"""Fault injection: real ``ntpnb reproduce`` processes killed, interrupted, run side by side.

Every test runs the CLI in a subprocess on a throwaway project whose two notebooks (named like
the book's first two chapters, so that their profiles exist) take the time and fail as the
environment of the test says. Every process a test starts carries a mark in its environment
(:data:`MARK`), inherited by the workers and kernels, so a test can see that none is left.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

import ntpnb
from ntpnb.chapter import _parameters as profiles
from ntpnb.records._files import atomic_path, atomic_write_text, is_temporary
from ntpnb.runner._workers import marked_processes

from conftest import ROOT
from fake_notebooks import fake_notebook

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")

NAMES = ("01_entropy_separability", "02_regularization_path")
MARK = "NTPNB_TEST_MARK"

BODY = """\
import os
import time

from ntpnb.chapter._claims import ClaimLog

claims = ClaimLog("{name}", profile, output_dir, seed=seed)
claims.check("A1", "tiny {name} started", 1.0, "~", 1.0, tol=0.1, kind="sanity")
end = time.monotonic() + float(os.environ.get("SLEEP_{short}", "0"))
gate = os.environ.get("GATE_{short}", "")  # a file whose creation ends the sleep early
while time.monotonic() < end and not (gate and os.path.exists(gate)):
    time.sleep(0.1)
if os.environ.get("FAIL_{short}"):
    raise ValueError("{name} broken on purpose")
print("done", os.environ.get("RUN_{short}", ""))
claims.conclude()
"""


@pytest.fixture
def project(tmp_path):
    """A two-notebook project, and a function that starts ``ntpnb reproduce`` on it."""
    root = tmp_path / "project"
    (root / "notebooks").mkdir(parents=True)
    (root / "book").mkdir()
    shutil.copy(ROOT / "_config.yml", root / "_config.yml")
    for name in ("references.bib", "logo.svg"):  # the files _config.yml names
        shutil.copy(ROOT / "book" / name, root / "book" / name)
    (root / "book" / "intro.md").write_text("# A tiny book\n\nTwo chapters.\n")
    shutil.copytree(ROOT / "benchmarks", root / "benchmarks")  # benchmarks.page writes a page
    chapters = "".join(f"  - file: outputs/notebooks/{name}\n" for name in NAMES)
    generated = ("outputs/report", "outputs/claim_list", "outputs/glossary", "outputs/benchmarks")
    pages = "".join(f"  - file: {page}\n" for page in generated)
    (root / "_toc.yml").write_text(f"format: jb-book\nroot: book/intro\nchapters:\n{chapters}{pages}")
    for name in NAMES:
        values = profiles.profile_parameters(ROOT / "notebooks" / f"{name}.md", "paper")  # unused
        parameters = "\n".join(f"{k} = {v!r}" for k, v in values.items())
        source = fake_notebook(BODY.format(name=name, short=name[:2]), parameters, title=name)
        (root / "notebooks" / f"{name}.md").write_text(source)
    return root


def start(
    root: Path, *args: str, env: dict[str, str] | None = None, prefix: tuple[str, ...] = (), **kwargs
) -> subprocess.Popen:
    """``ntpnb reproduce ARGS`` on ``root`` (the book's run, into its tree), marked, in a session of its own.

    ``prefix`` is a command that runs it (e.g. in a mount namespace). One seed, unless ``ARGS``
    ask for a sweep.
    """
    cmd = [*prefix, sys.executable, "-m", "ntpnb.cli", "reproduce"]
    cmd += ["--root", str(root)]
    if "--seeds" not in args:
        cmd += ["--seeds", "1"]
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), MARK: MARK_VALUE, **(env or {})}
    return subprocess.Popen(
        [*cmd, *args],
        cwd=root,
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # like a terminal's foreground job: its own process group
        **kwargs,
    )


MARK_VALUE = uuid.uuid4().hex


def run(
    root: Path,
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 180,
    prefix: tuple[str, ...] = (),
) -> tuple[int, str, str]:
    proc = start(root, *args, env=env, prefix=prefix)
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def wait_for(condition, timeout: float = 120, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def running_kernels(root: Path, count: int):
    """True once ``count`` notebooks of the run at ``root`` (at any seed) are executing their slow cell."""
    return lambda: len(staged_claims(root)) >= count


def staged_claims(root: Path) -> list[Path]:
    """The claim records of the notebooks executing now under ``root`` (staged, not yet published).

    A record being written is still a temporary file (``.<name>.json.tmp-...json``), not a record.
    A notebook's staging folder that the runner removes while it is listed (the notebook's outputs
    published) is listed again.
    """
    while True:
        try:
            return [
                p
                for p in (root / "outputs").rglob("*.json")
                if ".staging" in p.parts and p.parent.name == "claims" and not is_temporary(p)
            ]
        except FileNotFoundError:
            continue


def running_notebooks(root: Path) -> list[str]:
    """The notebooks of the run at ``root`` executing now (their claims staged, not yet published)."""
    return sorted({p.stem for p in staged_claims(root)})


def leftover_processes(timeout: float = 10) -> list[int]:
    """The marked processes still alive after ``timeout`` seconds (normally none)."""
    deadline = time.monotonic() + timeout
    while (left := marked_processes(MARK, MARK_VALUE)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def temporaries(root: Path) -> list[Path]:
    return [p for p in (root / "outputs").rglob("*") if is_temporary(p) or ".staging" in p.parts]


@pytest.fixture(autouse=True)
def _no_process_left_behind():
    yield
    left = leftover_processes()
    for pid in left:  # clean up for the next test, then fail this one
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left behind: {left}"


def test_atomic_write_to_a_read_only_folder_leaves_nothing(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    target = folder / "claims.json"
    atomic_write_text(target, '{"old": 1}\n')
    # the write runs in a child, under a read-only mount where the user is root (read_only)
    write = (
        "import sys\nfrom ntpnb.records._files import atomic_write_text\n"
        f"try:\n    atomic_write_text({str(target)!r}, '{{\"new\": 2}}\\n')\n"
        "except OSError as exc:\n    print(type(exc).__name__, exc.errno)\n    sys.exit(3)\n"
    )
    prefix, undo = read_only(folder)
    try:
        proc = subprocess.run(
            [*prefix, sys.executable, "-c", write], capture_output=True, text=True, timeout=60
        )
    finally:
        undo()
    assert proc.returncode == 3, (proc.stdout, proc.stderr)  # the write failed with an OSError
    assert target.read_text() == '{"old": 1}\n'
    assert [p.name for p in folder.iterdir()] == ["claims.json"]


def test_an_interrupted_write_leaves_the_old_file(tmp_path):
    target = tmp_path / "timings.json"
    atomic_write_text(target, "old\n")
    with pytest.raises(KeyboardInterrupt), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise KeyboardInterrupt
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["timings.json"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "jobs, to_group, earlier, at_start, seeds, signum",
    [
        (1, True, False, False, 1, signal.SIGINT),
        (1, False, False, False, 1, signal.SIGINT),
        (2, True, True, False, 1, signal.SIGINT),
        (2, False, False, False, 1, signal.SIGINT),
        (2, True, False, True, 1, signal.SIGINT),
        (2, True, False, False, 3, signal.SIGINT),
        (2, False, False, False, 1, signal.SIGTERM),
        (1, False, False, True, 1, signal.SIGTERM),
    ],
    ids=[
        "j1-group",
        "j1-main",
        "j2-group-after-a-good-run",
        "j2-main",
        "j2-group-while-workers-start",
        "j2-group-sweep",
        "j2-main-sigterm",
        "j1-main-sigterm-while-workers-start",
    ],
)
def test_sigint_stops_the_run_within_seconds(project, jobs, to_group, earlier, at_start, seeds, signum):
    """SIGINT (Ctrl-C, or ``kill -INT``) and SIGTERM (``kill``, a job scheduler) stop a run alike."""
    executed = {name: project / "outputs" / "notebooks" / f"{name}.ipynb" for name in NAMES}
    if earlier:
        code, out, err = run(project, "--jobs", "2", env={"RUN_01": "first", "RUN_02": "first"})
        assert code == 0, err
    before = {name: path.read_bytes() for name, path in executed.items() if path.exists()}

    slow = {"SLEEP_01": "60", "SLEEP_02": "60", "RUN_01": "second", "RUN_02": "second"}
    proc = start(project, "--force", "--jobs", str(jobs), "--seeds", str(seeds), env=slow)
    if at_start:  # the run holds its lock and starts its workers, which are still importing
        lock = project / "outputs" / ".lock"
        wait_for(lambda: lock.is_file() and f"process {proc.pid} " in lock.read_text(), what="the lock")
        time.sleep(0.5)
    else:
        wait_for(running_kernels(project, jobs), what="the notebooks to start")
    sent = time.monotonic()
    if to_group:  # Ctrl-C in a terminal
        os.killpg(proc.pid, signum)
    else:  # kill -INT <pid> or kill <pid>, as a job scheduler sends it
        proc.send_signal(signum)
    out, err = proc.communicate(timeout=30)
    assert time.monotonic() - sent < 20
    assert proc.returncode == 130, (out, err)
    runs = 2 * seeds
    assert f"interrupted after 0 of {runs} notebook runs; completed outputs kept; rerun to resume" in err
    assert "Traceback" not in err + out
    assert not leftover_processes()
    assert {name: path.read_bytes() for name, path in executed.items() if path.exists()} == before
    assert not temporaries(project)
    if earlier:  # the keys still describe the outputs in place: a plain rerun has nothing to do
        code, out, err = run(project)
        assert code == 0 and out.count("cached") == 2, (out, err)


@pytest.mark.slow
def test_a_closed_output_pipe_stops_the_run_quietly(project):
    """``ntpnb reproduce | head -1``: the reader leaves; the run stops with no traceback, nothing left."""
    gate = project / "gate"
    proc = start(project, "--jobs", "1", env={"SLEEP_01": "60", "GATE_01": str(gate), "RUN_01": "x"})
    wait_for(running_kernels(project, 1), what="the notebook to start")
    proc.stdout.close()  # the reader is gone: the next progress line meets a broken pipe
    gate.touch()
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 141, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert not leftover_processes()
    assert not temporaries(project)


@pytest.mark.slow
def test_kill_9_mid_notebook_then_the_rerun_resumes(project):
    """Whichever notebook the runner schedules first ends; the run is killed while the other runs."""
    gates = {name: project / f"gate-{name[:2]}" for name in NAMES}
    env = {f"SLEEP_{name[:2]}": "60" for name in NAMES} | {f"RUN_{name[:2]}": "killed-run" for name in NAMES}
    env |= {f"GATE_{name[:2]}": str(gate) for name, gate in gates.items()}
    proc = start(project, "--jobs", "1", env=env)
    wait_for(running_kernels(project, 1), what="a first notebook running")
    (first,) = running_notebooks(project)
    (second,) = (name for name in NAMES if name != first)
    gates[first].touch()  # the first ends; the runner starts the second, which sleeps
    key_first = project / "outputs" / "notebooks" / f"{first}.key.json"
    wait_for(
        lambda: key_first.is_file() and running_notebooks(project) == [second],
        what=f"{first} done, {second} running",
    )
    proc.kill()
    proc.communicate(timeout=10)
    assert not leftover_processes()  # the workers and kernels ended themselves
    assert not (project / "outputs" / "notebooks" / f"{second}.ipynb").exists()  # nothing partial

    code, out, err = run(project, "--jobs", "1", env={f"RUN_{second[:2]}": "resumed"})
    assert code == 0, err
    lines = out.splitlines()
    assert any(first in line and "cached" in line for line in lines), out  # the first is not run again
    assert any(second in line and " ok " in line for line in lines), out
    assert not temporaries(project)
    claims = json.loads((project / "outputs" / "claims" / f"{second}.json").read_text())
    assert claims["checks"][0]["passed"]

    book = subprocess.run(book_command(project, "--no-pdf"), capture_output=True, text=True, timeout=120)
    assert book.returncode == 0, book.stdout[-2000:] + book.stderr[-2000:]
    chapter = project / "_build" / "html" / "outputs" / "notebooks" / f"{second}.html"
    assert "done resumed" in chapter.read_text()


def book_command(root: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "ntpnb.cli", "book", "--root", str(root), *args]


def test_the_book_without_outputs_says_what_to_run(project):
    proc = subprocess.run(book_command(project), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "no executed notebooks in" in proc.stderr
    assert "(nothing yet (no run.json and no claim record)); run `ntpnb reproduce --root" in proc.stderr
    assert f"`ntpnb book --root {project} --run-missing`" in proc.stderr


def skip_mount(reason: str) -> None:
    """Skip a test that needs a private mount, or fail it where ``NTPNB_REQUIRE_MOUNTS`` is set (CI)."""
    if os.environ.get("NTPNB_REQUIRE_MOUNTS"):
        pytest.fail(f"NTPNB_REQUIRE_MOUNTS is set but {reason}")
    pytest.skip(reason)


def read_only(folder: Path) -> tuple[tuple[str, ...], Callable[[], None]]:
    """A command prefix under which ``folder`` cannot be written, and a function that undoes it.

    For a user, the folder's permissions; for root (who writes anyway), a read-only bind mount
    in a private mount namespace (``unshare -m``), skipped where that is not allowed.
    """
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return (), lambda: folder.chmod(0o755)
    mount = f"mount --bind '{folder}' '{folder}' && mount -o remount,bind,ro '{folder}'"
    if shutil.which("unshare") is None:
        skip_mount("root, and no unshare for a read-only mount")
    probe = ["unshare", "-m", "sh", "-c", f"{mount} && ! touch '{folder}/x'"]
    if subprocess.run(probe, capture_output=True).returncode != 0:
        skip_mount("root, and no private read-only mount (unshare -m) allowed here")
    return ("unshare", "-m", "sh", "-c", f'{mount} && exec "$@"', "sh"), lambda: None


def full_disk(outputs: Path, results: Path, free_kib: int) -> tuple[str, ...]:
    """A command prefix that runs its command with ``outputs`` on a small file system filled up.

    In a private mount namespace (``unshare -m``; root only), a 1 MiB tmpfs is mounted on
    ``outputs`` with a copy of what was there, then filled up to ``free_kib`` KiB; after the command,
    what it left there is copied to ``results`` (the tmpfs vanishes with the namespace). Where
    that is not allowed the test is skipped, unless ``NTPNB_REQUIRE_MOUNTS`` is set (``.ci/run``
    sets it), which makes it fail instead.
    """
    saved = results.parent / "saved"
    script = (
        f"cp -a '{outputs}' '{saved}' && mount -t tmpfs -o size=1m tmpfs '{outputs}' && "
        f"cp -a '{saved}/.' '{outputs}/' && "
        f"free=$(df -k --output=avail '{outputs}' | tail -n 1) && "
        f"{{ dd if=/dev/zero of='{outputs}/.filler' bs=1k count=$((free - {free_kib})) 2>/dev/null; "
        "true; } && "
        f"{{ \"$@\"; code=$?; }}; rm -f '{outputs}/.filler'; cp -a '{outputs}/.' '{results}/'; exit $code"
    )
    probe = ["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs '{results.parent}'"]
    if os.geteuid() != 0 or shutil.which("unshare") is None or subprocess.run(probe).returncode != 0:
        skip_mount("a small tmpfs in a private mount namespace needs root and unshare -m")
    results.mkdir()
    return ("unshare", "-m", "sh", "-c", script, "sh")


@pytest.mark.slow
@pytest.mark.parametrize("free_kib", [0, 4, 12])  # full at the start, or while papermill saves
def test_a_full_disk_is_named_in_one_line_and_leaves_nothing_half_written(project, tmp_path, free_kib):
    code, _out, err = run(project, NAMES[0], env={"RUN_01": "good"})
    assert code == 0, err
    outputs = project / "outputs"
    good = (outputs / "notebooks" / f"{NAMES[0]}.ipynb").read_bytes()
    results = tmp_path / "results"
    prefix = full_disk(outputs, results, free_kib)
    code, out, err = run(project, NAMES[0], "--force", env={"RUN_01": "new"}, prefix=prefix)
    said = out + err
    assert code != 0 and "Traceback" not in said and "WorkerDied" not in said, said
    named = [line for line in said.splitlines() if "No space left on device" in line]
    assert named and all("could not write the outputs" in line or "error" in line for line in named), said
    assert ": None" not in said
    # the last good notebook survives; nothing cut short is kept; no temporary file is left
    assert (results / "notebooks" / f"{NAMES[0]}.ipynb").read_bytes() == good
    for kept in (results / "failed").glob("*.ipynb") if (results / "failed").is_dir() else ():
        json.loads(kept.read_text())
    assert not [p for p in results.rglob("*") if is_temporary(p) or ".staging" in p.parts]


@pytest.mark.slow
def test_a_read_only_output_folder_leaves_the_previous_outputs_whole(project):
    code, _out, err = run(project, NAMES[1], env={"RUN_02": "good"})
    assert code == 0, err
    notebooks = project / "outputs" / "notebooks"
    before = {p.name: p.read_bytes() for p in notebooks.iterdir()}
    prefix, undo = read_only(notebooks)
    try:
        code, out, err = run(project, NAMES[1], "--force", env={"RUN_02": "new"}, prefix=prefix)
    finally:
        undo()
    assert code == 1 and "could not write the outputs: the folder is not writable" in out, (out, err)
    assert {p.name: p.read_bytes() for p in notebooks.iterdir()} == before
    assert not temporaries(project)
    record = json.loads((project / "outputs" / "failed" / f"{NAMES[1]}.json").read_text())
    assert "not writable" in record["error"]


@pytest.mark.slow
def test_a_failed_rerun_keeps_the_last_good_outputs_and_records_the_failure(project):
    code, _out, err = run(project, NAMES[1], env={"RUN_02": "good"})
    assert code == 0, err
    outputs = project / "outputs"
    executed = outputs / "notebooks" / f"{NAMES[1]}.ipynb"
    good = executed.read_bytes()
    assert b"done good" in good

    code, _out, err = run(project, NAMES[1], "--force", env={"FAIL_02": "1"})
    assert code == 1
    assert executed.read_bytes() == good  # the book still shows the last successful run
    assert not executed.with_name(f"{NAMES[1]}.key.json").exists()  # but it runs again next time
    record = json.loads((outputs / "failed" / f"{NAMES[1]}.json").read_text())
    assert "ValueError: 02_regularization_path broken on purpose" in record["error"]
    assert "in cell" in record["error"] and record["checks"][0]["claim"] == "A1"
    assert "broken on purpose" in (outputs / "failed" / f"{NAMES[1]}.ipynb").read_text()
    assert str(outputs / "failed" / f"{NAMES[1]}.ipynb") in err

    code, _out, err = run(project, NAMES[1], env={"RUN_02": "again"})
    assert code == 0 and b"done again" in executed.read_bytes()
    assert not (outputs / "failed" / f"{NAMES[1]}.json").exists()  # the success clears the record


@pytest.mark.slow
def test_a_dead_kernel_is_named_with_its_cell(project):
    source = project / "notebooks" / f"{NAMES[0]}.md"
    source.write_text(source.read_text().replace("import time\n", "import time\nos.kill(os.getpid(), 9)\n"))
    code, _out, err = run(project, NAMES[0])
    assert code == 1
    assert "KernelDied: the kernel died in cell" in err, err
    assert "Traceback" not in err


@pytest.mark.slow
def test_two_runs_at_once_take_turns(project, tmp_path):
    gate = tmp_path / "gate"
    first = start(project, NAMES[1], env={"SLEEP_02": "120", "GATE_02": str(gate), "FAIL_02": "1"})
    try:
        wait_for(running_kernels(project, 1), what="the first run to start")
        code, _out, err = run(project, NAMES[1], "--no-wait")
        assert code == 2
        assert f"is in use by process {first.pid}" in err and "Traceback" not in err
        second = start(project, NAMES[1], env={"PYTHONUNBUFFERED": "1"})
        assert f"waiting for process {first.pid}" in second.stdout.readline()
    finally:
        gate.touch()  # the first run's notebook goes on, and fails
    out1, _err1 = first.communicate(timeout=60)
    out2, err2 = second.communicate(timeout=60)
    assert first.returncode == 1 and "FAILED" in out1
    # the second run started after the first had finished: its failed notebook is not cached
    assert second.returncode == 0 and " ok " in out2 and "cached" not in out2, (out2, err2)


@pytest.mark.slow
def test_clear_one_line_errors_for_bad_output_paths_and_values(project):
    sources = sorted(p.relative_to(project) for p in project.rglob("*"))
    for args, problem in [
        (("--out", "/proc/ntpnb-out"), "cannot create the output folder"),
        (
            ("-p", "g_max=30." + "0" * 300 + "1"),
            None,
        ),  # a long value is a valid value: its folder is shortened
        (("--out", "."), "is the project's folder or above it"),  # its notebooks/ are the sources'
        (("--out", str(project.parent)), "is the project's folder or above it"),
        (("--out", "notebooks/run"), "lies inside the project's notebooks/"),
        (("--out", "outputs", "-p", "n_g=11"), "is the book's own tree, which only the book's run writes"),
        (("--profile", "quick", "--out", "outputs"), "is the book's own tree"),
        (("-p", f"seed={2**64}"), "is not a whole number that fits in 64 bits"),  # it would fail inside
        (("-p", "g_max=true"), "is not a number"),
        (("-p", "g_max=1e999"), "is not a number"),
        (("-p", f"seed={2**63 - 2}", "--seeds", "3"), "would reach seed 9223372036854775808"),
    ]:
        code, _out, err = run(project, NAMES[0], *args, env={"RUN_01": "x"})
        assert "Traceback" not in err
        if problem:
            assert code == 2 and problem in err and len(err.strip().splitlines()) == 1, (args, err)
        else:
            assert code == 0, err
    shutil.rmtree(project / "outputs")
    assert sorted(p.relative_to(project) for p in project.rglob("*")) == sources  # nothing written


@pytest.mark.slow
def test_a_tree_holds_one_setting_and_says_which(project):
    """Runs of other settings go to trees of their own; an explicit --out of another setting is refused."""
    code, _out, err = run(project, NAMES[0], "-p", "seed=0", env={"RUN_01": "x"})
    assert code == 0, err
    tree = project / "outputs" / "runs" / "seed=0"
    record = json.loads((tree / "run.json").read_text())
    assert record == {
        "profile": "paper",
        "overrides": {"seed": "0"},
        "seeds": [0],
        "notebooks": [NAMES[0]],
        "interactive": False,
        "version": ntpnb.__version__,
    }
    assert not (project / "outputs" / "notebooks").exists()  # the book's tree is untouched
    code, _out, err = run(project, NAMES[0], "--profile", "quick", "--out", str(tree))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"{tree} holds a run of profile paper with seed=0; seed 0; this run is profile quick" in err
    # the same setting adds its seeds and notebooks
    code, _out, err = run(project, "-p", "seed=0", "--seeds", "2", "--out", str(tree), env={"RUN_01": "x"})
    assert code == 0, err
    record = json.loads((tree / "run.json").read_text())
    assert record["seeds"] == [0, 1] and record["notebooks"] == list(NAMES)
    (tree / "run.json").write_text("[]")  # damaged: the tree's setting is unknown
    code, _out, err = run(project, NAMES[0], "-p", "seed=0", "--out", str(tree))
    assert code == 2 and "the run record" in err and "is damaged" in err and "delete that file" in err


@pytest.mark.slow
def test_damaged_outputs_make_the_chapter_run_again_and_say_why(project):
    code, _out, err = run(project, NAMES[0], env={"RUN_01": "x"})
    assert code == 0, err
    outputs = project / "outputs"
    record = outputs / "claims" / f"{NAMES[0]}.json"
    executed = outputs / "notebooks" / f"{NAMES[0]}.ipynb"
    good = record.read_bytes()
    for damage, said in [
        (lambda: record.unlink(), f"claims/{NAMES[0]}.json is missing"),
        (lambda: executed.write_text("[]"), f"notebooks/{NAMES[0]}.ipynb differs from what its run wrote"),
        (lambda: record.write_bytes(good[:-9]), f"claims/{NAMES[0]}.json differs from what its run wrote"),
        (
            lambda: executed.with_name(f"{NAMES[0]}.key.json").write_text('{"key": 1}'),
            "is damaged: no cache key",
        ),
    ]:
        code, out, err = run(project, NAMES[0], env={"RUN_01": "x"})  # in place (or restored): cached
        assert code == 0 and "cached" in out, (out, err)
        damage()
        code, out, err = run(project, NAMES[0], env={"RUN_01": "x"})
        assert code == 0 and "cached" not in out and f"{NAMES[0]} runs again: " in out and said in out, (
            out,
            err,
        )
        assert json.loads(record.read_text())["complete"] is True  # whole again
        assert json.loads(executed.read_text())["cells"]


def test_a_run_finds_its_processes_by_their_mark():
    value = uuid.uuid4().hex
    sleeper = [sys.executable, "-c", "import time; time.sleep(30)"]
    child = subprocess.Popen(sleeper, env={**os.environ, MARK: value})
    try:
        wait_for(lambda: marked_processes(MARK, value) == [child.pid], timeout=10, what="the child")
        assert marked_processes(MARK, value[:-1]) == [] and marked_processes(MARK, "") == []
    finally:
        child.kill()
        child.wait()
    assert marked_processes(MARK, value) == []
