#!/usr/bin/env bash
# Run a command with CPython 3.14 or 3.15 inside the sid root (scripts/sid_root.sh creates it),
# in this checkout, which is bind-mounted at /work/gpujit in the root:
#   scripts/sid_run.sh 3.14 scripts/build.sh python
#   scripts/sid_run.sh 3.15 python -m pytest -q tests/test_pyversions.py
# `python` inside is a venv of that version (/opt/gpujit-py3XX in the root, made on first use,
# with numpy, pytest, meson and ninja). Needs root (mount, chroot).
set -euo pipefail
cd "$(dirname "$0")/.."
ver=$1
shift
bash scripts/sid_root.sh
ROOT=$(bash scripts/sid_root.sh --path)
mnt=$ROOT/work/gpujit
mkdir -p "$mnt"
mountpoint -q "$mnt" || mount --bind "$PWD" "$mnt"
mountpoint -q "$ROOT/proc" || mount -t proc proc "$ROOT/proc"
venv=/opt/gpujit-py${ver/./}
if [ ! -x "$ROOT$venv/bin/python" ]; then
    chroot "$ROOT" env -u PIP_FIND_LINKS "python$ver" -m venv "$venv"
    chroot "$ROOT" env -u PIP_FIND_LINKS "$venv/bin/python" -m pip install -q numpy pytest meson ninja
fi
exec chroot "$ROOT" /usr/bin/env -u PIP_FIND_LINKS PATH="$venv/bin:/usr/bin:/bin" HOME=/root \
    bash -c 'cd /work/gpujit && "$@"' sid_run "$@"
