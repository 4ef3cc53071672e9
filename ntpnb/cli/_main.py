"""The entry point of the ``ntpnb`` console script: parse, run the command, its end as an exit status."""

from __future__ import annotations

import argparse
import io
import os
import signal
import sys
from collections.abc import Sequence
from contextlib import suppress

from ..errors import NTPError, RunInterruptedError
from ._commands import COMMANDS
from ._parser import UsageError, parse_command

#: The exit status of an interrupted command (128 + SIGINT, as a shell reports it).
INTERRUPTED = 130
#: The exit status when the reader of the output went away (128 + SIGPIPE, as a shell reports it).
PIPE_CLOSED = 141


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ntpnb`` console script."""
    if isinstance(sys.stdout, io.TextIOWrapper):  # a file or a pipe gets each line as printed, not in blocks
        sys.stdout.reconfigure(line_buffering=True)
    try:
        args = parse_command(argv)
        from ..runner import STOP_SIGNALS, signals_handled  # once parsed: a --help loads no command

        # SIGTERM acts as a Ctrl-C; SIGINT is set too: a shell's background job inherits it ignored
        with signals_handled(STOP_SIGNALS, signal.default_int_handler):
            return int(COMMANDS[args.command](args))
    except UsageError as exc:  # as argparse reports it: the usage, the error, exit 2
        argparse.ArgumentParser.error(exc.parser, str(exc))
    except BrokenPipeError:  # ``ntpnb list | head``: the reader exited; stop quietly
        with suppress(OSError, ValueError):  # to the null device, so the last flush prints no error
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return PIPE_CLOSED
    except RunInterruptedError as exc:
        print(f"ntpnb: {exc}", file=sys.stderr)
        return INTERRUPTED
    except KeyboardInterrupt:
        print("ntpnb: interrupted; completed outputs kept; rerun to resume", file=sys.stderr)
        return INTERRUPTED
    except NTPError as exc:
        print(f"ntpnb: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file the pipeline could not read or write: one line, no traceback
        where = f": {exc.filename}" if exc.filename else ""
        print(f"ntpnb: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2
