#!/usr/bin/env bash
# The main job (README): build gpujit in place, run the saxpy example (on the
# GPU if there is one, else on the CPU backend; it checks its own result) and
# print its PTX, assembled by ptxas when the CUDA toolkit is present.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
scripts/build.sh "$PY"
export PYTHONPATH="$PWD/python"
"$PY" examples/saxpy.py
"$PY" -m gpujit ptx examples/saxpy.py -o /tmp/gpujit-saxpy.ptx
cat /tmp/gpujit-saxpy.ptx
if command -v ptxas >/dev/null 2>&1; then
    ptxas -arch=sm_90 /tmp/gpujit-saxpy.ptx -o /dev/null && echo "ptxas -arch=sm_90: OK"
fi
