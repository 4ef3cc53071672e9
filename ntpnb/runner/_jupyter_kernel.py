"""How a notebook's kernel starts: its BLAS threads, its sockets, and the mark of its run.

Kernels run their BLAS with :data:`ntpnb.settings.BLAS_THREADS` threads (notebooks side by side
would otherwise oversubscribe the cores) and talk to their worker over Unix-domain sockets
(:class:`IPCKernelManager`) in the run's private folder (:func:`run_environment`); ipykernel starts
through :mod:`._kernel_launch`, which keeps a race at its shutdown from logging an error.
"""

from __future__ import annotations

import os
import sys
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import default

from .. import settings

KERNEL_NAME = "python3"
#: The environment variable whose value marks the processes of one run (:func:`run_environment`).
RUN_MARKER = "NTPNB_RUN_ID"
#: The name of every run's private folder (kernel sockets and connection files) starts so.
RUN_FOLDER_PREFIX = "ntpnb-run-"

#: The script that starts a kernel (ipykernel with its shutdown race mended, :mod:`._kernel_launch`).
KERNEL_LAUNCHER = Path(__file__).with_name("_kernel_launch.py")
#: How the ipykernel kernel spec starts a kernel, which :class:`IPCKernelManager` replaces.
_IPYKERNEL_LAUNCH = [sys.executable, "-m", "ipykernel_launcher"]

#: The thread-count variables of the BLAS libraries numpy and scipy may load.
BLAS_ENV_VARS: tuple[str, ...] = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def blas_variables() -> dict[str, str]:
    """The BLAS thread counts of a kernel: :data:`ntpnb.settings.BLAS_THREADS`, for those not set."""
    return {var: str(settings.BLAS_THREADS) for var in BLAS_ENV_VARS if var not in os.environ}


class IPCKernelManager(AsyncKernelManager):
    """A kernel manager that talks to its kernel over Unix-domain sockets (no network, no TCP warning)."""

    @default("transport")
    def _default_transport(self) -> str:
        return "ipc"

    def _ip_default(self) -> str:
        # jupyter_client's default, ``kernel-ipc`` in the working folder, is shared by kernels
        # started there at once (``--jobs``), which then answer each other's messages: give
        # every kernel its own socket prefix, in the run's folder (see :func:`run_folder`).
        return os.path.join(run_folder(), f"ntpnb-kernel-{uuid.uuid4().hex[:16]}-ipc")

    async def _async_interrupt_kernel(self) -> None:
        # jupyter_client interrupts (SIGINT) every kernel before shutdown; one still handling a
        # message then logs "KeyboardInterrupt caught in kernel." after a successful run. The
        # notebook has finished, and a kernel that does not stop gets SIGTERM and SIGKILL.
        if self.shutting_down:
            return
        await super()._async_interrupt_kernel()

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        """The kernel spec's command, with ipykernel started through :data:`KERNEL_LAUNCHER`."""
        cmd = super().format_kernel_cmd(extra_arguments)
        if cmd[: len(_IPYKERNEL_LAUNCH)] == _IPYKERNEL_LAUNCH:
            return [sys.executable, str(KERNEL_LAUNCHER), *cmd[len(_IPYKERNEL_LAUNCH) :]]
        return cmd

    @default("connection_file")
    def _default_connection_file(self) -> str:
        # jupyter_client's default is a new file in the temporary folder, left there when the
        # kernel is killed: in the run's folder instead, which the run removes
        return os.path.join(run_folder(), f"kernel-{uuid.uuid4().hex[:16]}.json")


def run_folder() -> str:
    """The private folder of the current run (:func:`run_environment`), else the temporary folder."""
    folder = os.environ.get("JUPYTER_RUNTIME_DIR") if os.environ.get(RUN_MARKER) else None
    return folder or tempfile.gettempdir()


def progress_file(label: str) -> Path:
    """Where the kernel of the run ``label`` (a notebook, at a seed) reports its long loops' progress."""
    return Path(run_folder()) / f"progress-{label.replace(' ', '-')}.json"


@contextmanager
def run_environment() -> Iterator[str]:
    """Within: the environment workers and kernels inherit holds the run's mark (yielded) and its folder.

    Afterwards the environment is restored and the folder removed, even when kernels were killed.
    """
    mark = uuid.uuid4().hex
    saved = {var: os.environ.get(var) for var in (RUN_MARKER, "JUPYTER_RUNTIME_DIR")}
    with tempfile.TemporaryDirectory(prefix=RUN_FOLDER_PREFIX, ignore_cleanup_errors=True) as runtime:
        os.environ.update({RUN_MARKER: mark, "JUPYTER_RUNTIME_DIR": runtime})
        try:
            yield mark
        finally:
            for var, value in saved.items():
                if value is None:
                    os.environ.pop(var, None)
                else:
                    os.environ[var] = value
