#!/usr/bin/env bash
# The two commands of the README's quick start.
#
#   ./run.sh reproduce   set up .venv (what running the chapters and building the book need),
#                        execute every notebook at the paper's settings at the book's seed (its
#                        figures, in outputs/figures) and at four more seeds (outputs/seeds/; the
#                        verdicts count every seed), build the book in _build/html
#   ./run.sh reproduce ARGS  the same with the options of ntpnb reproduce, e.g. --profile quick:
#                        the whole book at the quick profile, in outputs/runs/profile=quick/_book/html
#   ./run.sh test        set up .venv with the test stack too, lint, run the unit tests, every
#                        notebook at the quick profile with nbval, the book build, and the browser
#                        test (which needs Debian's chromium: apt-get install chromium; .ci/run
#                        installs it)
#   ./run.sh setup [reader|lab|test]  only set up .venv for that command (default: reader, what
#                        reproduce needs); a .venv that an interrupted set-up left without a
#                        working pip is rebuilt
#   ./run.sh lab [ARGS]  set up .venv with JupyterLab and start it on the project, where
#                        notebooks/*.md open as notebooks (ARGS go to `jupyter lab`, e.g.
#                        --no-browser --port 8890)
#
# The set-up installs with uv (pinned in constraints.txt, installed into the venv by pip), or
# with pip when uv cannot be had (it says why). Numba compiles each training loop the first time
# a chapter uses it, into its cache beside the sources, so no set-up step waits for the compiler.
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

# The extras of each level of install: a reader's (run the chapters, build the book and print
# its PDF), with JupyterLab, with the test stack; each level holds the ones before it.
extras_of() {
    case "$1" in
        reader) echo "book,pdf" ;;
        lab) echo "book,lab,pdf" ;;
        test) echo "book,lab,pdf,test" ;;
        *) echo "run.sh: no set-up level '$1' (reader, lab or test)" >&2; exit 2 ;;
    esac
}

# The first error line of the log $1 (pip's ERROR:, uv's error:), else its last line.
first_error() {
    grep -m 1 -iE '^(ERROR|error):' "$1" || grep -v '^\s*$' "$1" | tail -n 1
}

# Install the package with the extras $2 into the venv, with uv if it can be had and installs,
# else pip (saying why in one line); the full output goes to the log $1, which an error names.
# uv takes the platform's certificates, as pip does (a proxy's own authority among them), and
# compiles the bytecode at install, as pip does: where PYTHONDONTWRITEBYTECODE is set, every
# worker and kernel would otherwise compile every module it imports (3-4 s a notebook run here).
install() {
    local log="$1" extras="$2" why
    : >"$log"
    if "$VENV/bin/python" -m pip install --disable-pip-version-check -c constraints.txt uv >>"$log" 2>&1 \
        && "$VENV/bin/python" -m uv --version >>"$log" 2>&1; then
        if "$VENV/bin/python" -m uv pip install --system-certs --compile-bytecode \
            --python "$VENV/bin/python" -c constraints.txt -e ".[$extras]" >>"$log" 2>&1; then
            return 0
        fi
        why="uv could not install: $(first_error "$log")"
    else
        why="uv could not be installed: $(first_error "$log")"
    fi
    echo "run.sh: installing with pip ($why)"
    { "$VENV/bin/python" -m pip install --upgrade pip \
        && "$VENV/bin/python" -m pip install -c constraints.txt -e ".[$extras]"; } >>"$log" 2>&1
}

# Whether the stamp $1 records an install of these declarations ($2) with every extra of $3.
installed() {
    local stamp="$1" wanted="$2" extras="$3" have extra
    [ -f "$stamp" ] && read -r have _ <"$stamp" || return 1
    [ "$have" = "$wanted" ] || return 1
    for extra in ${extras//,/ }; do
        grep -qw -- "$extra" <(cut -d' ' -f2 "$stamp") || return 1
    done
}

setup() {
    local level="${1:-reader}" extras
    extras=$(extras_of "$level")
    if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
        echo "run.sh: need Python 3.10 or newer as '$PYTHON' (set PYTHON=...)" >&2
        exit 2
    fi
    if ! venv_works; then
        create_venv
    fi
    # Reinstall only when the dependency declarations change or an extra is missing; the stamp
    # (declarations' hash, extras installed) is written last, so a set-up that was stopped
    # installs again.
    local stamp="$VENV/.ntpnb-installed" wanted
    wanted=$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)
    if ! installed "$stamp" "$wanted" "$extras"; then
        if [ -f "$stamp" ] && read -r have held <"$stamp" && [ "$have" = "$wanted" ]; then
            extras="$held,$extras"  # keep what an earlier set-up of these declarations installed
        fi
        extras=$(tr ',' '\n' <<<"$extras" | sort -u | paste -sd, -)
        local log="$VENV.install.log" started=$SECONDS
        echo "run.sh: installing ntpnb[$extras] and its pinned dependencies into $VENV (log: $log)"
        if ! install "$log" "$extras"; then
            # an environment that a stopped install left broken is rebuilt once, from nothing
            if [ -f "$stamp" ] || ! { create_venv && install "$log" "$extras"; }; then
                tail -n 20 "$log" >&2
                echo "run.sh: the install failed; the full log is $log" >&2
                exit 1
            fi
        fi
        echo "run.sh: installed $("$VENV/bin/python" -m pip list --format=freeze 2>/dev/null | wc -l) packages in $((SECONDS - started)) s"
        echo "$wanted $extras" > "$stamp"
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
    JUPYTER_CONFIG_DIR="$PWD/.jupyter" JUPYTERLAB_WORKSPACES_DIR="${JUPYTERLAB_WORKSPACES_DIR:-$venv/jupyterlab-workspaces}" \
        exec jupyter lab --ServerApp.root_dir="$PWD" --LabApp.default_url=/lab/tree/notebooks \
        "${as_root[@]}" "$@"
}

case "${1:-}" in
    setup)
        setup "${2:-reader}"
        ;;
    reproduce)
        setup reader
        shift
        # the run, then its book (ntpnb reproduce --book): a check that failed still leaves every
        # output in place and the book is built to show it, and the command then fails (1); an
        # interrupted or broken run builds nothing; a book build that failed has a status of its
        # own (3, whether a check failed or not), so that it is not taken for the run's failure
        status=0
        ntpnb reproduce --book "$@" || status=$?
        case "$status" in
            1) echo "run.sh: some notebooks or claim checks failed (listed above; the book's report shows them too, unless a notebook failed before its end: then no book was built)" >&2 ;;
            3) echo "run.sh: every notebook ran to its end, but the book build failed: its messages are above, after any claim check that failed; the run's outputs are kept, and the same command again builds the book without rerunning them" >&2 ;;
        esac
        exit "$status"
        ;;
    lab)
        setup lab
        shift
        lab "$@"
        ;;
    test)
        setup test
        ruff check .
        ruff format --check .
        python -m pytest -n auto  # a worker per core (tests/conftest.py: the quick run is made once)
        ;;
    *)
        echo "usage: ./run.sh reproduce [--profile quick] | ./run.sh test   (./run.sh setup [reader|lab|test]: only the environment; ./run.sh lab: JupyterLab)" >&2
        exit 2
        ;;
esac
