"""Regenerates the libdevice table in python/gpujit/libdevicefuncs.py from libdevice's own
definitions: `python3 scripts/gen_libdevice_table.py [libdevice.10.bc]` (needs llvm-dis).

Each line of the table is `name ret:params`, one letter a type (i int32, l int64, h int16,
f float32, d float64, v void) and `*` before a pointer the function writes a result through.
Functions taking an input pointer (nan's tag string, norm's array) are left out."""
import os
import re
import subprocess
import sys

TYPES = {"i32": "i", "i64": "l", "i16": "h", "float": "f", "double": "d", "void": "v"}
FILE = os.path.join(os.path.dirname(__file__), "..", "python", "gpujit", "libdevicefuncs.py")


def table(bc):
    ll = subprocess.run(["llvm-dis", bc, "-o", "-"], check=True, capture_output=True, text=True).stdout
    rows = []
    for m in re.finditer(r"^define (\w+) @__nv_(\w+)\(([^)]*)\)", ll, re.M):
        ret, name, params = m.groups()
        types = [p.split()[0] for p in params.split(",") if p.strip()]
        # an i8* (nan's tag string) or the array of norm(dim, t) is an input, not a result
        if "i8*" in types or types[:1] == ["i32"] and any(t.endswith("*") for t in types):
            continue
        codes = ["*" + TYPES[t[:-1]] if t.endswith("*") else TYPES[t] for t in types]
        rows.append("%s %s:%s" % (name, TYPES[ret], "".join(codes)))
    return sorted(rows)


def main():
    bc = sys.argv[1] if len(sys.argv) > 1 else "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"
    src = open(FILE).read()
    start = src.index('_TABLE = """\\\n') + len('_TABLE = """\\\n')
    end = src.index('"""', start)
    open(FILE, "w").write(src[:start] + "\n".join(table(bc)) + "\n" + src[end:])


if __name__ == "__main__":
    main()
