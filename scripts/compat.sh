#!/usr/bin/env bash
# The numba.cuda compatibility yardstick (tests/compat/run.py, docs/compatibility.md):
# numba-cuda 0.30.4's own tests run against gpujit, on the CPU target unless
# --target cuda is given. Exits non-zero when the passes drop below
# tests/compat/floor.txt. Downloads numba-cuda's wheel from PyPI on first use
# (cached in ~/.cache/gpujit-compat).
#   scripts/compat.sh [run.py options]       PYTHON=python3.12 picks the interpreter
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
"$PY" -c "import pytest, numpy" 2>/dev/null ||
    "$PY" -m pip install -q --disable-pip-version-check --root-user-action=ignore pytest numpy
tag=$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
[ -e "python/gpujit/_core$tag" ] || scripts/build.sh "$PY"
exec "$PY" tests/compat/run.py "$@"
