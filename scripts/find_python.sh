# Sourced by scripts/test.sh and scripts/wheel.sh: find_python 3.X prints the
# path of a CPython 3.X from PATH or pyenv, or fails.
find_python() {
    local v=$1 p
    for p in "python$v" "$HOME/.pyenv/versions/$v"*/bin/python3 "$(pyenv root 2>/dev/null)/versions/$v"*/bin/python3; do
        if command -v "$p" >/dev/null 2>&1 && "$p" -c "import sys; assert sys.version_info[:2] == tuple(map(int, '$v'.split('.')))" 2>/dev/null; then
            command -v "$p"; return 0
        fi
    done
    return 1
}
