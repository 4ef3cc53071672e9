#!/usr/bin/env bash
# The two commands of the README's quick start.
#
#   ./run.sh reproduce   set up .venv, execute every notebook at the paper's settings at the
#                        book's seed (its figures, in outputs/figures) and at four more seeds
#                        (outputs/seeds/; the verdicts count every seed), build the book in
#                        _build/html
#   ./run.sh test        set up .venv, lint, run the unit tests, every notebook at the quick
#                        profile with nbval, the book build, and the browser test (which needs
#                        Debian's chromium: apt-get install chromium; .ci/run installs it)
#
# Set PYTHON to choose the interpreter (default: python3, which must be 3.10 or newer) and
# NTPNB_VENV to choose where the virtual environment lives (default: .venv).
set -euo pipefail
cd "$(dirname "$0")"

PYTHON=${PYTHON:-python3}
VENV=${NTPNB_VENV:-.venv}

setup() {
    if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
        echo "run.sh: need Python 3.10 or newer as '$PYTHON' (set PYTHON=...)" >&2
        exit 2
    fi
    if [ ! -x "$VENV/bin/python" ]; then
        echo "run.sh: creating the virtual environment $VENV"
        "$PYTHON" -m venv "$VENV"
    fi
    # Reinstall only when the dependency declarations change.
    local stamp="$VENV/.ntpnb-installed" wanted
    wanted=$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)
    if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
        # pip's and setuptools' full output goes to a log that an error names
        local log="$VENV/ntpnb-install.log"
        echo "run.sh: installing ntpnb and its pinned dependencies into $VENV (log: $log)"
        if ! { "$VENV/bin/python" -m pip install --upgrade pip \
                && "$VENV/bin/python" -m pip install -c constraints.txt -e ".[book,test]"; } >"$log" 2>&1; then
            tail -n 20 "$log" >&2
            echo "run.sh: the install failed; the full log is $log" >&2
            exit 1
        fi
        echo "run.sh: installed $("$VENV/bin/python" -m pip list --format=freeze 2>/dev/null | wc -l) packages"
        # the compiled training loops, into numba's cache, so that no chapter waits for the compiler
        if ! "$VENV/bin/python" -c "import ntpnb; ntpnb.compile_kernels()" >>"$log" 2>&1; then
            tail -n 20 "$log" >&2
            echo "run.sh: compiling the training loops failed; the full log is $log" >&2
            exit 1
        fi
        echo "$wanted" > "$stamp"
    fi
    export PATH="$PWD/$VENV/bin:$PATH"
}

case "${1:-}" in
    reproduce)
        setup
        # a check that failed still leaves every output in place: the book is built to show it,
        # and the command then fails; an interrupted or broken run builds nothing
        status=0
        ntpnb reproduce --profile paper || status=$?
        if [ "$status" -ne 0 ] && [ "$status" -ne 1 ]; then
            exit "$status"
        fi
        ntpnb book
        echo "run.sh: figures in outputs/figures, the book at _build/html/index.html"
        if [ "$status" -ne 0 ]; then
            echo "run.sh: some claim checks failed (listed above, and in the book's report)" >&2
        fi
        exit "$status"
        ;;
    test)
        setup
        ruff check .
        ruff format --check .
        python -m pytest
        ;;
    *)
        echo "usage: ./run.sh reproduce | ./run.sh test" >&2
        exit 2
        ;;
esac
