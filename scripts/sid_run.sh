#!/usr/bin/env bash
# Run a command with CPython 3.14 or 3.15 inside the sid root (scripts/sid_root.sh creates it),
# in this checkout, which is bind-mounted at /work/gpujit in the root:
#   scripts/sid_run.sh 3.14 scripts/build.sh python
#   scripts/sid_run.sh 3.15 python -m pytest -q tests/test_pyversions.py
# `python` inside is a venv of that version (/opt/gpujit-py3XX in the root, made on first use,
# with numpy, pytest, meson and ninja). Needs root (mount, chroot). The mounts are made in a
# mount namespace of the command's own (unshare), so they end with it: nothing stays mounted
# inside build/ afterwards, and removing build/ never reaches the checkout through them.
set -euo pipefail
cd "$(dirname "$0")/.."
ver=$1
shift
bash scripts/sid_root.sh
if [ -z "${GPUJIT_SID_NAMESPACE:-}" ]; then
    GPUJIT_SID_NAMESPACE=1 exec unshare --mount --propagation private bash "$0" "$ver" "$@"
fi
ROOT=$(bash scripts/sid_root.sh --path)
mnt=$ROOT/work/gpujit
mkdir -p "$mnt"
mountpoint -q "$mnt" || mount --bind "$PWD" "$mnt"
mountpoint -q "$ROOT/proc" || mount -t proc proc "$ROOT/proc"
# the host's CUDA toolkit (libdevice, ptxas), where it has one, read-only at the same paths
if [ -d /usr/local/cuda/ ]; then
    real=$(readlink -f /usr/local/cuda)
    mkdir -p "$ROOT$real"
    mountpoint -q "$ROOT$real" || mount --bind -o ro "$real" "$ROOT$real"
    [ "$real" = /usr/local/cuda ] || [ -e "$ROOT/usr/local/cuda" ] || ln -s "$real" "$ROOT/usr/local/cuda"
fi
if command -v ptxas >/dev/null 2>&1 && [ ! -e "$ROOT/usr/local/bin/ptxas" ]; then
    mkdir -p "$ROOT/usr/local/bin"
    cp "$(command -v ptxas)" "$ROOT/usr/local/bin/ptxas"
fi
venv=/opt/gpujit-py${ver/./}
if [ ! -x "$ROOT$venv/bin/python" ]; then
    chroot "$ROOT" env -u PIP_FIND_LINKS "python$ver" -m venv "$venv"
    chroot "$ROOT" env -u PIP_FIND_LINKS "$venv/bin/python" -m pip install -q numpy pytest meson ninja
fi
exec chroot "$ROOT" /usr/bin/env -u PIP_FIND_LINKS PATH="$venv/bin:/usr/local/bin:/usr/bin:/bin" HOME=/root \
    bash -c 'cd /work/gpujit && "$@"' sid_run "$@"
