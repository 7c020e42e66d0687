#!/usr/bin/env bash
# Print the path of a wrapper that runs the sid root's CPython 3.14 or 3.15 on this host, outside
# the root: sid's interpreter with sid's own loader and libraries, its standard library and
# its venv's packages (pip, meson, numpy) from the root. scripts/wheel.sh builds the cp314 and
# cp315 wheels with it, compiling with this host's toolchain against sid's python3.X-dev
# headers, so that the wheels need only this host's glibc (manylinux_2_34).
#   scripts/sid_python.sh 3.14
set -euo pipefail
cd "$(dirname "$0")/.."
ver=$1
scripts/sid_run.sh "$ver" true >&2 # the root and its venv of that version
ROOT=$(bash scripts/sid_root.sh --path)
dir=$PWD/build/sid-python
mkdir -p "$dir/include/x86_64-linux-gnu"
# sid's pyconfig.h includes <x86_64-linux-gnu/python3.X/pyconfig.h>: that folder alone, so that
# the host's own C headers are the ones compiled against
ln -sfn "$ROOT/usr/include/x86_64-linux-gnu/python$ver" "$dir/include/x86_64-linux-gnu/python$ver"
w=$dir/python$ver
cat > "$w" <<EOW
#!/bin/sh
export PYTHONHOME=$ROOT/usr PYTHONPATH=\${PYTHONPATH:+\$PYTHONPATH:}$ROOT/opt/gpujit-py${ver/./}/lib/python$ver/site-packages
export CFLAGS="\${CFLAGS:-} -I$dir/include"
exec $ROOT/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 --library-path $ROOT/usr/lib/x86_64-linux-gnu \\
    --argv0 "\$0" $ROOT/usr/bin/python$ver "\$@"
EOW
chmod +x "$w"
echo "$w"
