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
#   ./run.sh setup       only set up .venv (both commands above start with it); a .venv that an
#                        interrupted set-up left without a working pip is rebuilt
#   ./run.sh lab [ARGS]  set up .venv and start JupyterLab on the project, where notebooks/*.md
#                        open as notebooks (ARGS go to `jupyter lab`, e.g. --no-browser --port 8890)
#
# Set PYTHON to choose the interpreter (default: python3, which must be 3.10 or newer) and
# NTPNB_VENV to choose where the virtual environment lives (default: .venv).
set -euo pipefail
cd "$(dirname "$0")"

PYTHON=${PYTHON:-python3}
VENV=${NTPNB_VENV:-.venv}

# Whether the virtual environment's interpreter runs and has pip: an interrupted first set-up
# can leave one without (venv stopped before ensurepip, or pip's own upgrade stopped midway).
venv_works() {
    [ -f "$VENV/pyvenv.cfg" ] && "$VENV/bin/python" -c 'import pip' >/dev/null 2>&1
}

create_venv() {
    if [ -e "$VENV" ]; then
        echo "run.sh: $VENV is incomplete (an interrupted set-up?); rebuilding it"
        rm -rf "$VENV"
    else
        echo "run.sh: creating the virtual environment $VENV"
    fi
    "$PYTHON" -m venv "$VENV"
}

# pip's and setuptools' full output goes to a log that an error names
install() {
    local log="$1"
    { "$VENV/bin/python" -m pip install --upgrade pip \
        && "$VENV/bin/python" -m pip install -c constraints.txt -e ".[book,test,lab]"; } >"$log" 2>&1
}

setup() {
    if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
        echo "run.sh: need Python 3.10 or newer as '$PYTHON' (set PYTHON=...)" >&2
        exit 2
    fi
    if ! venv_works; then
        create_venv
    fi
    # Reinstall only when the dependency declarations change; the stamp is written last, so a
    # set-up that was stopped installs again.
    local stamp="$VENV/.ntpnb-installed" wanted
    wanted=$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)
    if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
        local log="$VENV.install.log"
        echo "run.sh: installing ntpnb and its pinned dependencies into $VENV (log: $log)"
        if ! install "$log"; then
            # an environment that a stopped install left broken is rebuilt once, from nothing
            if [ -f "$stamp" ] || ! { create_venv && install "$log"; }; then
                tail -n 20 "$log" >&2
                echo "run.sh: the install failed; the full log is $log" >&2
                exit 1
            fi
        fi
        echo "run.sh: installed $("$VENV/bin/python" -m pip list --format=freeze 2>/dev/null | wc -l) packages"
        # the compiled training loops, into numba's cache, so that no chapter waits for the compiler
        echo "run.sh: compiling the training loops into numba's cache (once per install; about a minute)"
        local started=$SECONDS
        if ! "$VENV/bin/python" -c "import ntpnb; ntpnb.compile_kernels()" >>"$log" 2>&1; then
            tail -n 20 "$log" >&2
            echo "run.sh: compiling the training loops failed; the full log is $log" >&2
            exit 1
        fi
        echo "run.sh: compiled in $((SECONDS - started)) s"
        echo "$wanted" > "$stamp"
    fi
    PATH="$(cd "$VENV" && pwd)/bin:$PATH"  # NTPNB_VENV may be relative or absolute
    export PATH
}

# JupyterLab on the project: jupytext's contents manager (.jupyter/jupyter_server_config.py) reads
# notebooks/*.md as notebooks, and the project's JupyterLab settings (.jupyter/lab/user-settings,
# Binder's too) make a double click open them with the notebook editor.
lab() {
    local as_root=() venv
    [ "$(id -u)" -ne 0 ] || as_root=(--allow-root)
    venv=$(cd "$VENV" && pwd)
    JUPYTER_CONFIG_DIR="$PWD/.jupyter" JUPYTERLAB_WORKSPACES_DIR="$venv/jupyterlab-workspaces" \
        exec jupyter lab --ServerApp.root_dir="$PWD" --LabApp.default_url=/lab/tree/notebooks \
        "${as_root[@]}" "$@"
}

case "${1:-}" in
    setup)
        setup
        ;;
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
    lab)
        setup
        shift
        lab "$@"
        ;;
    test)
        setup
        ruff check .
        ruff format --check .
        python -m pytest -n auto  # a worker per core (tests/conftest.py: the quick run is made once)
        ;;
    *)
        echo "usage: ./run.sh reproduce | ./run.sh test   (./run.sh setup: only the environment; ./run.sh lab: JupyterLab)" >&2
        exit 2
        ;;
esac
