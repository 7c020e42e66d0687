#!/usr/bin/env bash
# Build gpujit's extension in place for one Python (default: python3), so that
# `PYTHONPATH=python` imports it from the checkout:
#   scripts/build.sh [PYTHON] [meson options...]
# Installs LLVM 19 from apt first if it is missing (Debian: llvm-19-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:-python3}
shift || true
if ! command -v llvm-config-19 >/dev/null 2>&1; then
    echo "gpujit: installing llvm-19-dev (apt)" >&2
    SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq llvm-19-dev >/dev/null
fi
"$PY" -m pip --version >/dev/null 2>&1 || { echo "gpujit: $PY has no pip" >&2; exit 1; }
"$PY" -c "import mesonbuild, ninja, numpy" 2>/dev/null || "$PY" -m pip install -q meson ninja numpy
tag=$("$PY" -c 'import sys; print("py%d%d" % sys.version_info[:2])')
dir=build/$tag
if [ ! -f "$dir/build.ninja" ]; then
    "$PY" -m mesonbuild.mesonmain setup "$dir" -Dbuildtype=release -Dpython.install_env=auto \
        --native-file <(printf "[binaries]\npython = '%s'\n" "$(command -v "$PY")") "$@" >/dev/null
fi
ninja_bin=$("$PY" -c 'import ninja, os; print(os.path.join(ninja.BIN_DIR, "ninja"))' 2>/dev/null || command -v ninja)
if ! log=$("$ninja_bin" -C "$dir" 2>&1); then echo "$log" >&2; exit 1; fi
so=$(cd "$dir" && ls _core*.so)
ln -sf "../../$dir/$so" "python/gpujit/$so"
echo "built python/gpujit/$so"
