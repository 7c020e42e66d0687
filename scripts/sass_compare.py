#!/usr/bin/env python3
"""The machine code (SASS) of every kernel in two PTX snapshots, compared: for a change that
alters PTX (an optimisation pipeline, a code generator setting), whether what the GPU runs
changed too.

    python3 scripts/sass_compare.py BEFORE.json AFTER.json [-j N] [--all] [--show N]

The snapshots are scripts/ptx_snapshot.py's. For each kernel in both whose PTX differs (with
--all: every kernel in both), each side's PTX is assembled by ptxas for its .target (sm_90 for
older targets, as the tests assemble them) and disassembled by nvdisasm, or by cuobjdump
where there is no nvdisasm ($NVDISASM and $CUOBJDUMP name them; /opt/nvbin is looked in too).
The instruction sequences are compared with addresses and encodings left out. Kernels whose
PTX is byte-identical have identical SASS (ptxas is deterministic) and are counted as such
without assembling. Prints one line per kernel whose SASS differs (instruction counts before
and after) and a summary; exits 1 if any SASS differs.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor


def tool(name, env):
    for cand in (os.environ.get(env), shutil.which(name), os.path.join("/opt/nvbin", name)):
        if cand and os.access(cand, os.X_OK):
            return cand
    return None


PTXAS = tool("ptxas", "PTXAS")
NVDISASM = tool("nvdisasm", "NVDISASM")
CUOBJDUMP = tool("cuobjdump", "CUOBJDUMP")

_target = re.compile(r"^\s*\.target\s+(sm_(\d+)[a-z]?)", re.M)
_addr = re.compile(r"/\*[0-9a-f]{4,}\*/")
_enc = re.compile(r"/\*\s*0x[0-9a-f]+\s*\*/")


def arch_of(ptx):
    m = _target.search(ptx)
    return m.group(1) if m and int(m.group(2)) >= 90 else "sm_90"


def sass(ptx, d, tag):
    """The kernel's SASS as a list of instructions (and labels), or an error string."""
    src, cubin = os.path.join(d, tag + ".ptx"), os.path.join(d, tag + ".cubin")
    with open(src, "w") as f:
        f.write(ptx)
    p = subprocess.run([PTXAS, "-arch=" + arch_of(ptx), "-o", cubin, src], capture_output=True, text=True)
    if p.returncode:
        return "ptxas failed: " + p.stderr.strip()[-300:]
    cmd = [NVDISASM, "-c", cubin] if NVDISASM else [CUOBJDUMP, "-sass", cubin]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        return "disassembly failed: " + p.stderr.strip()[-300:]
    out = []
    for line in p.stdout.splitlines():
        line = _enc.sub("", _addr.sub("", line)).strip()
        if not line or line.startswith(("//", ".section", ".headerflags", "Function", ".text", "code for",
                                        ".elftype", "Fatbin", "arch", "code version", "host", "compile_size")):
            continue
        if line.startswith("."):  # labels (.L_x_3:) and directives
            if line.endswith(":"):
                out.append(line)
            continue
        out.append(" ".join(line.rstrip(";").split()))
    return out


def count(seq):
    return sum(1 for x in seq if not x.endswith(":"))


def compare_one(key, a, b, d):
    n = abs(hash(key)) % (1 << 40)
    sa, sb = sass(a, d, "%x_a" % n), sass(b, d, "%x_b" % n)
    if isinstance(sa, str) or isinstance(sb, str):
        return key, "error", sa if isinstance(sa, str) else sb
    return key, "identical" if sa == sb else "differ", (count(sa), count(sb))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--all", action="store_true", help="assemble kernels whose PTX is identical too")
    ap.add_argument("--show", type=int, default=0, help="print the first N differing kernels' SASS side by side")
    args = ap.parse_args()
    if not PTXAS or not (NVDISASM or CUOBJDUMP):
        sys.exit("sass_compare: needs ptxas and nvdisasm or cuobjdump (PTXAS, NVDISASM, CUOBJDUMP)")
    a, b = (json.load(open(p)) for p in (args.before, args.after))
    both = sorted(a.keys() & b.keys())
    # a key can hold more than one PTX (a kernel compiled with options the key does not
    # tell apart): the i-th of each side's sorted list is compared with the i-th
    jobs, same_ptx, unmatched = [], 0, []
    for k in both:
        pa, pb = [p for _, p in a[k]], [p for _, p in b[k]]
        if len(pa) != len(pb):
            unmatched.append(k)
            continue
        for i, (x, y) in enumerate(zip(pa, pb)):
            if x == y and not args.all:
                same_ptx += 1
            else:
                jobs.append(("%s#%d" % (k, i) if len(pa) > 1 else k, x, y))
    with tempfile.TemporaryDirectory(prefix="gj-sass-") as d, ThreadPoolExecutor(args.jobs) as ex:
        results = list(ex.map(lambda j: compare_one(j[0], j[1], j[2], d), jobs))
    ident = [r for r in results if r[1] == "identical"]
    differ = [r for r in results if r[1] == "differ"]
    errors = [r for r in results if r[1] == "error"]
    for k, _, (na, nb) in differ:
        print("SASS DIFFERS  %s: %d -> %d instructions" % (k, na, nb))
    for k, _, why in errors:
        print("ERROR  %s: %s" % (k, why))
    for k in unmatched:
        print("UNMATCHED  %s: %d PTX before, %d after" % (k, len(a[k]), len(b[k])))
    if args.show:
        with tempfile.TemporaryDirectory(prefix="gj-sass-") as d:
            for k, _, _ in differ[: args.show]:
                x, y = next((x, y) for kk, x, y in jobs if kk == k)
                sa, sb = sass(x, d, "a"), sass(y, d, "b")
                print("==== %s" % k)
                for i in range(max(len(sa), len(sb))):
                    l, r = (sa[i] if i < len(sa) else ""), (sb[i] if i < len(sb) else "")
                    print("%s %-60s | %s" % (" " if l == r else "*", l[:60], r))
    grow = sum(1 for _, _, (na, nb) in differ if nb > na)
    shrink = sum(1 for _, _, (na, nb) in differ if nb < na)
    print("%d kernels in both: PTX identical (not assembled) %d; assembled %d, of which SASS identical %d, SASS differs %d "
          "(%d longer, %d shorter, %d same length); %d errors, %d unmatched"
          % (len(both), same_ptx, len(results), len(ident), len(differ), grow, shrink,
             len(differ) - grow - shrink, len(errors), len(unmatched)))
    return 1 if differ or errors else 0


if __name__ == "__main__":
    sys.exit(main())
