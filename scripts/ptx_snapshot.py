#!/usr/bin/env python3
"""The PTX of every kernel the test suite compiles, to check that a refactor leaves the
generated code as it was.

    python3 scripts/ptx_snapshot.py take OUT.json [pytest args...]   # runs the suite
    python3 scripts/ptx_snapshot.py compare BEFORE.json AFTER.json

`take` runs the suite (PYTHONPATH=python, the in-place build) with GPUJIT_PTX_SNAPSHOT
set: tests/conftest.py then records each PTX the suite makes, keyed by the kernel's
file, name and code (not its line: editing a test file moves kernels without changing
them), signature, options and closure values. `compare` lists the kernels whose PTX differs
(and those only one side compiled) and exits 1 if any PTX differs.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def take(out, pytest_args):
    with tempfile.TemporaryDirectory(prefix="gj-snap-") as d:
        env = dict(os.environ, GPUJIT_PTX_SNAPSHOT=d, GPUJIT_TARGET="cpu",
                   PYTHONPATH=os.path.join(ROOT, "python"))
        rc = subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                              *(pytest_args or ["tests"])], cwd=ROOT, env=env)
        snap = {}
        for name in sorted(os.listdir(d)):
            with open(os.path.join(d, name)) as f:
                for line in f:
                    r = json.loads(line)
                    snap.setdefault(r["key"], {})[r["sha"]] = r["ptx"]
    nondet = [k for k, v in snap.items() if len(v) > 1]
    with open(out, "w") as f:
        json.dump({k: sorted(v.items()) for k, v in snap.items()}, f, sort_keys=True)
    print("%d kernels recorded in %s (%d with more than one PTX for one key)" % (len(snap), out, len(nondet)))
    return rc


def compare(a_path, b_path):
    a, b = (json.load(open(p)) for p in (a_path, b_path))
    differ = sorted(k for k in a.keys() & b.keys() if [s for s, _ in a[k]] != [s for s, _ in b[k]])
    for k in differ:
        print("DIFFERS  ", k)
    for k in sorted(a.keys() - b.keys()):
        print("only in %s: %s" % (a_path, k))
    for k in sorted(b.keys() - a.keys()):
        print("only in %s: %s" % (b_path, k))
    print("%d kernels in both, %d differ; %d only before, %d only after"
          % (len(a.keys() & b.keys()), len(differ), len(a.keys() - b.keys()), len(b.keys() - a.keys())))
    return 1 if differ else 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "take":
        sys.exit(take(sys.argv[2], sys.argv[3:]))
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    sys.exit(__doc__)
