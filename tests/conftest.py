"""Shared fixtures: small data sets and, for the slow tests, one quick-profile run."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import pytest
from filelock import FileLock

import ntpnb as ntp
from ntpnb._parallel import limit_threads
from ntpnb.chapter._progress import QUIET_VAR

from helpers import random_data

ROOT = Path(__file__).resolve().parents[1]
T = TypeVar("T")
# the notebook kernels the tests start (nbval's) show no progress: their outputs must equal the
# executed notebooks', which ntpnb reproduce keeps free of it
os.environ.setdefault(QUIET_VAR, "off")
if str(ROOT) not in sys.path:  # the benchmarks package lives at the repository root, not installed
    sys.path.insert(0, str(ROOT))


#: The session fixtures built from one quick-profile run (minutes).
QUICK_RUN_FIXTURES = frozenset({"quick_run", "built_book", "book_copy"})
#: The longest tests that read the quick-profile run (each a minute or more of one core: nbval runs
#: every notebook again, the others build a book), longest first: they start before the other
#: tests that read it, so that none is left running alone on one worker at the end of the session.
LONGEST_QUICK_RUN_TESTS = (
    "test_nbval_reproduces_every_output",
    "test_the_book_builds_with_benchmark_results",
    "test_a_p_run_of_one_chapter_renders_as_a_book_of_its_own_labelled_by_its_run_record",
)


def fixtures_of(item: pytest.Item) -> set[str]:
    """The names of the fixtures ``item`` uses (none for an item that is not a function)."""
    return set(getattr(item, "fixturenames", ()))


def run_order(item: pytest.Item) -> tuple[int, int]:
    """(0, 0) for a test that needs no quick-profile run; (1, rank) for the longest that do, by
    their rank in :data:`LONGEST_QUICK_RUN_TESTS`; (2, 0) for the others."""
    if not QUICK_RUN_FIXTURES & fixtures_of(item):
        return 0, 0
    name = getattr(item, "originalname", item.name)
    return (1, LONGEST_QUICK_RUN_TESTS.index(name)) if name in LONGEST_QUICK_RUN_TESTS else (2, 0)


def worker_blas_threads() -> int | None:
    """The BLAS threads of a pytest-xdist worker: its share of the cores (None outside xdist).

    The workers are one per core (``-n auto``), so a BLAS that spreads a product over every core
    competes with the other workers: its threads then wait for each other (measured here: one
    separability test took 13.8 s and 18 s of CPU with two threads beside a busy core, 5.4 s
    and 5 s with one). Notebook kernels and benchmarks set their own (``blas_variables``).
    """
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if "PYTEST_XDIST_WORKER" not in os.environ or not workers:
        return None
    return max(1, (os.cpu_count() or 1) // int(workers))


def pytest_configure(config: pytest.Config) -> None:
    """Give each pytest-xdist worker's BLAS and OpenMP libraries its share of the cores.

    The limit applies to the libraries loaded so far, so scipy's BLAS is loaded first (numpy's
    is, by ntpnb); not left as a context, it holds for the whole session.
    """
    threads = worker_blas_threads()
    if threads is not None:
        import scipy.linalg  # noqa: F401  (loads scipy's own BLAS)

        limit_threads(threads)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Order the tests so that the workers of pytest-xdist are busy until the end.

    First one test of the built book: the worker that runs it makes the quick-profile run and
    the book while the others run the unit tests, so that no worker waits for them at the end.
    Then the unit tests, then the tests that read the quick-profile run, the longest first (a
    stable sort keeps the rest in their order).
    """
    items.sort(key=run_order)
    first = next((i for i, item in enumerate(items) if "built_book" in fixtures_of(item)), None)
    if first is not None:
        items.insert(0, items.pop(first))


def made_once(tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """The folder ``name`` that ``make`` fills, made once per test session even under pytest-xdist.

    Without xdist, a fresh temporary folder. Under xdist, a folder shared by the workers (their
    base folders' parent): the first worker to ask makes it while holding a file lock, the others
    wait on the lock and use it. A failure is recorded beside it, so the other workers fail with
    the same message instead of making it again.
    """
    if "PYTEST_XDIST_WORKER" not in os.environ:
        folder = tmp_path_factory.mktemp(name)
        make(folder)
        return folder
    shared = tmp_path_factory.getbasetemp().parent
    folder, outcome = shared / name, shared / f"{name}.outcome"
    with FileLock(shared / f"{name}.lock"):
        if not outcome.is_file():
            try:
                folder.mkdir(exist_ok=True)
                make(folder)
            except BaseException as exc:
                outcome.write_text(f"making the shared {name} failed in another worker:\n{exc}")
                raise
            outcome.write_text("")
    failure = outcome.read_text()
    if failure:
        pytest.fail(failure)
    return folder


def made_once_value(tmp_path_factory: pytest.TempPathFactory, name: str, compute: Callable[[], T]) -> T:
    """What ``compute()`` returns, computed once per test session even under pytest-xdist.

    :func:`made_once` stores it (a pickle in the shared folder ``name``); every worker reads it.
    """

    def store(folder: Path) -> None:
        (folder / f"{name}.pickle").write_bytes(pickle.dumps(compute()))

    folder = made_once(tmp_path_factory, name, store)
    return pickle.loads((folder / f"{name}.pickle").read_bytes())


@pytest.fixture
def dask_client():
    """A Dask client on a local two-worker cluster (threads) for the joblib backend tests.

    A cluster a test: one kept for the session lost its workers when the test process was busy
    for minutes between two tests that use it (no heartbeat: the scheduler removed them).

    Its HTTP server takes a free port: with ``dashboard_address=None`` the scheduler still serves it
    on 8787, which another pytest worker's cluster may hold (distributed then warns).
    """
    with local_dask(processes=False) as client:
        yield client


@contextmanager
def local_dask(processes: bool) -> Iterator:
    """A client of a local Dask cluster of two workers, threads or processes (each under a nanny)."""
    import distributed  # the test extra pins it; ntpnb itself does not need it

    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=processes, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


SIZES = [(3, 5, 4, 2, 0), (6, 9, 7, 3, 1), (10, 12, 6, 4, 2)]  # (m, d, V, S, seed), all d > m


@pytest.fixture(params=SIZES, ids=lambda p: "m{}-d{}-V{}-S{}".format(*p))
def overparam_data(request) -> ntp.NTPData:
    """Data with d > m (compatible and separable by Lemma 1 of Paper A)."""
    return random_data(*request.param)


#: The seeds of the test suite's quick-profile sweep: the book's and two more.
QUICK_SEEDS = 3


@pytest.fixture(scope="session")
def small_synthetic() -> tuple:
    """Paper A's synthetic recipe, small: the data, their limits and chapter 4's LeCun start."""
    data = ntp.synthetic_instance(n=400, m=6, d=8, V=4, S=2, seed=3)
    return data, ntp.limits(data), ntp.lecun_decoder(data, ntp.own_stream(3, 1))


#: A book built already (a folder with ``outputs/`` and ``_build/html``, e.g. a paper book of
#: ``./run.sh reproduce``) that the tests of the built book check instead of the quick one:
#: ``NTPNB_TEST_BOOK=. pytest tests/book/test_browser.py tests/book/test_pdf.py``. Tests of the
#: quick run's own numbers do not hold there (:data:`OWN_BOOK_ONLY` skips the book tests').
TEST_BOOK_VAR = "NTPNB_TEST_BOOK"


#: A test of the suite's own quick book (its build log, its run's label), skipped on a given book.
OWN_BOOK_ONLY = pytest.mark.skipif(
    bool(os.environ.get(TEST_BOOK_VAR)), reason=f"checks the suite's own quick book, not {TEST_BOOK_VAR}'s"
)


def given_book() -> Path | None:
    """The book :data:`TEST_BOOK_VAR` names, checked to be built (None: the suite builds its own)."""
    if not (folder := os.environ.get(TEST_BOOK_VAR)):
        return None
    book = Path(folder).resolve()
    if not (book / "outputs").is_dir() or not (book / "_build" / "html" / "index.html").is_file():
        pytest.fail(f"{TEST_BOOK_VAR}={folder} is not a built book (outputs/ and _build/html/index.html)")
    return book


@pytest.fixture(scope="session")
def quick_run(tmp_path_factory) -> Path:
    """Every notebook executed at the quick profile, at :data:`QUICK_SEEDS` seeds, into a temporary tree.

    The run must succeed: no check fails at the book's seed, no sanity check at any seed, no
    statistical check pooled over the seeds. (The outputs of :func:`given_book` where one is.)
    """
    if (book := given_book()) is not None:
        return book / "outputs"

    def run(out: Path) -> None:
        cmd = [sys.executable, "-m", "ntpnb.cli", "reproduce", "--profile", "quick", "--out", str(out)]
        cmd += ["--seeds", str(QUICK_SEEDS)]
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if proc.returncode != 0:
            pytest.fail(f"ntpnb reproduce --profile quick failed:\n{proc.stdout}\n{proc.stderr}")

    return made_once(tmp_path_factory, "outputs", run)


def copy_book_sources(root: Path, outputs: Path) -> Path:
    """Copy the book's sources and the output tree ``outputs`` into a new folder ``root``."""
    root.mkdir()
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(ROOT / name, root / name)
    shutil.copytree(ROOT / "book", root / "book")
    shutil.copytree(ROOT / "notebooks", root / "notebooks")  # excluded from the build; downloads
    shutil.copytree(ROOT / "benchmarks", root / "benchmarks")  # benchmarks.page writes a page
    shutil.copytree(outputs, root / "outputs")
    return root


def build_book(root: Path, *args: str) -> subprocess.CompletedProcess:
    """``ntpnb book ARGS`` on the copy at ``root``."""
    cmd = [sys.executable, "-m", "ntpnb.cli", "book", "--root", str(root), *args]
    return subprocess.run(cmd, cwd=root, capture_output=True, text=True)


@pytest.fixture
def book_copy(tmp_path, quick_run) -> Path:
    """A copy of the book sources with the quick-profile outputs, to build in isolation."""
    return copy_book_sources(tmp_path / "book-root", quick_run)


@pytest.fixture(scope="session")
def built_book(tmp_path_factory, quick_run) -> Path:
    """The book built once from the quick-profile outputs (the build log in ``_build/build.log``).

    Shared by the build test and the browser test, so the suite builds the book only once.
    (:func:`given_book`, where one is given.)
    """
    if (book := given_book()) is not None:
        return book

    def build(folder: Path) -> None:
        root = copy_book_sources(folder / "book-root", quick_run)
        proc = build_book(root)
        (root / "_build" / "build.log").write_text(proc.stdout + proc.stderr)
        if proc.returncode != 0:
            pytest.fail(f"ntpnb book failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")

    return made_once(tmp_path_factory, "built", build) / "book-root"
