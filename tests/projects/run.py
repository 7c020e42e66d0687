#!/usr/bin/env python3
"""Real projects' own GPU tests, run unchanged on numba's simulator and on gpujit.

    python3 tests/projects/run.py [-k NAME ...] [--json PATH] [--cache DIR]

The projects, their pinned versions and which of their tests exercise their
numba.cuda code are listed in projects.json (next to this file); each is a
project whose own test set-up runs those tests on numba's CUDA simulator when
there is no GPU. Nothing of theirs is kept in this repository: at run time
each project's sdist is downloaded from PyPI (`pip download --no-deps
--no-binary :all: NAME==VERSION`, the way tests/compat/run.py fetches
numba-cuda's wheel), cached under build/projects-cache/ (or --cache), and a venv
per project is made there holding numba, numba-cuda, pytest, the project
(installed from its sdist, with its dependencies) and its test dependencies.
A rerun with a warm cache needs no network.

Each project's tests run twice, in the unpacked sdist, in a pytest subprocess:
  simulator  NUMBA_ENABLE_CUDASIM=1: numba-cuda's simulator, as the project's CI does;
  gpujit     GPUJIT_AS_NUMBA_CUDA=1 NUMBA_ENABLE_CUDASIM=1 with this checkout's
             python/ on PYTHONPATH: gpujit in numba.cuda's place, on its CPU target
             (numba itself stays numba's).
For each run: passed, failed (failures and errors), skipped, and the CPU time of
the pytest process (user + sys of the waited-for children, getrusage).

Exit status: 1 when a test passes on the simulator and fails on gpujit.
"""
import argparse
import collections
import datetime
import glob
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def _compat_runner():
    """tests/compat/run.py, the numba-cuda yardstick, as a module (its grouping of failure causes)."""
    import importlib.util
    sys.path.insert(0, os.path.join(REPO, "tests", "compat"))
    spec = importlib.util.spec_from_file_location("gpujit_compat_run", os.path.join(REPO, "tests", "compat", "run.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


normalise = _compat_runner().normalise

PIP = ["-m", "pip", "--disable-pip-version-check", "-q"]


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def fetch_sdist(cache, name, version):
    """The project's sdist from PyPI, downloaded once into cache/sdists."""
    d = os.path.join(cache, "sdists")
    os.makedirs(d, exist_ok=True)
    stem = name.replace("-", "_").lower()

    def found():
        return sorted(p for p in glob.glob(os.path.join(d, "*"))
                      if os.path.basename(p).lower().replace("-", "_").startswith("%s_%s." % (stem, version))
                      or os.path.basename(p).lower().replace("-", "_").startswith("%s_%s.tar" % (stem, version)))
    if not found():
        print("== downloading %s %s's sdist from PyPI into %s" % (name, version, d), flush=True)
        subprocess.run([sys.executable] + PIP + ["download", "--no-deps", "--no-binary", ":all:",
                                                 "%s==%s" % (name, version), "-d", d], check=True)
    got = found()
    if not got:
        sys.exit("projects: no sdist of %s %s in %s" % (name, version, d))
    return got[0]


def make_venv(cache, cfg, proj, sdist):
    """A venv for the project: numba, numba-cuda, pytest, the project and its
    test dependencies. Made once (keyed by what goes into it), renamed into
    place when complete."""
    want = [cfg["numba"], cfg["numba_cuda"], cfg["pytest"]] + proj.get("test_deps", [])
    key = hashlib.sha1(("\n".join(want + [os.path.basename(sdist), sys.version])).encode()).hexdigest()[:10]
    venv = os.path.join(cache, "venv-%s-%s-%s" % (proj["name"], proj["version"], key))
    py = os.path.join(venv, "bin", "python")
    if os.path.exists(py):
        return py
    print("== making %s (%s, the project's sdist)" % (venv, ", ".join(want)), flush=True)
    tmp = venv + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", tmp], check=True)
    tpy = os.path.join(tmp, "bin", "python")
    subprocess.run([tpy] + PIP + ["install", sdist] + want, check=True)
    os.rename(tmp, venv)   # a venv's scripts name its folder; only python -m is used here
    return py


def unpack(sdist, dest):
    if sdist.endswith(".zip"):
        with zipfile.ZipFile(sdist) as z:
            z.extractall(dest)
    else:
        with tarfile.open(sdist) as t:
            t.extractall(dest, filter="data")
    tops = os.listdir(dest)
    return os.path.join(dest, tops[0]) if len(tops) == 1 else dest


MODES = collections.OrderedDict([
    ("simulator", {"NUMBA_ENABLE_CUDASIM": "1"}),
    ("gpujit", {"NUMBA_ENABLE_CUDASIM": "1", "GPUJIT_AS_NUMBA_CUDA": "1"}),
])


def run_tests(py, src, proj, mode, work, timeout):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NUMBA_", "GPUJIT_")) and k != "PYTHONPATH"}
    env.update(MODES[mode])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if mode == "gpujit":
        env["PYTHONPATH"] = os.path.join(REPO, "python")
    xml = os.path.join(work, "%s-%s.xml" % (proj["name"], mode))
    cmd = [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml", xml] \
        + proj.get("pytest_args", []) + (["-k", proj["k"]] if proj.get("k") else []) + proj["tests"]
    log = os.path.join(work, "%s-%s.log" % (proj["name"], mode))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    with open(log, "wb") as out:
        try:
            rc = subprocess.run(cmd, cwd=src, env=env, stdout=out, stderr=subprocess.STDOUT,
                                timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    results = collections.OrderedDict()
    if os.path.exists(xml):
        for tc in ET.parse(xml).getroot().iter("testcase"):
            tid = "%s::%s" % (tc.get("classname"), tc.get("name"))
            outcome, cause = "passed", ""
            for child in tc:
                if child.tag in ("failure", "error"):
                    outcome, cause = "failed", (child.get("message") or child.text or "").strip()
                    break
                if child.tag == "skipped":
                    outcome, cause = "skipped", (child.get("message") or "").strip()
            results[tid] = (outcome, cause.splitlines()[0][:300] if cause else "")
    with open(log, "rb") as f:
        tail = f.read()[-3000:].decode("utf-8", "replace")
    return {"rc": rc, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "log": log,
            "tail": tail, "tests": results}


def counts(res):
    c = collections.Counter(o for o, _ in res["tests"].values())
    return c["passed"], c["failed"], c["skipped"]


def table(rows):
    out = ["| project | version | simulator: passed / failed / skipped | CPU s | "
           "gpujit: passed / failed / skipped | CPU s |", "|---|---|---|---:|---|---:|"]
    for proj, res in rows:
        s, g = res["simulator"], res["gpujit"]
        out.append("| %s | %s | %d / %d / %d | %.1f | %d / %d / %d | %.1f |"
                   % ((proj["name"], proj["version"]) + counts(s) + (s["cpu_s"],) + counts(g) + (g["cpu_s"],)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-k", dest="only", action="append", help="only these projects (by name)")
    ap.add_argument("--list", default=os.path.join(HERE, "projects.json"))
    ap.add_argument("--cache", default=os.path.join(REPO, "build", "projects-cache"))
    ap.add_argument("--json", default=os.path.join(REPO, "build", "projects.json"))
    ap.add_argument("--mode", action="append", choices=list(MODES), help="default: both")
    ap.add_argument("--timeout", type=float, default=1800, help="per project and mode, seconds")
    ap.add_argument("--keep", action="store_true", help="keep the unpacked sources and logs")
    args = ap.parse_args()
    cfg = load(args.list)
    projects = [p for p in cfg["projects"] if not args.only or p["name"] in args.only]
    t_start = time.monotonic()
    work = tempfile.mkdtemp(prefix="gpujit-projects-")
    rows, gaps = [], []
    try:
        for proj in projects:
            sdist = fetch_sdist(args.cache, proj["name"], proj["version"])
            py = make_venv(args.cache, cfg, proj, sdist)
            res = {}
            for mode in args.mode or MODES:
                src = unpack(sdist, tempfile.mkdtemp(prefix="%s-%s-" % (proj["name"], mode), dir=work))
                r = run_tests(py, src, proj, mode, work, args.timeout)
                res[mode] = r
                p, f, s = counts(r)
                print("%-12s %-9s %4d passed %4d failed %4d skipped  cpu %6.1f s  wall %6.1f s  (pytest %s)"
                      % (proj["name"], mode, p, f, s, r["cpu_s"], r["wall_s"], r["rc"]), flush=True)
                if not r["tests"]:
                    print(r["tail"])
            if "simulator" in res and "gpujit" in res:
                for tid, (o, _) in res["simulator"]["tests"].items():
                    go, cause = res["gpujit"]["tests"].get(tid, ("missing", "not run under gpujit"))
                    if o == "passed" and go != "passed":
                        gaps.append((proj["name"], tid, go, cause))
            elif "gpujit" in res:
                # gpujit alone (CI): the pinned versions pass every GPU test on the simulator
                # (docs/compatibility.md), so each one that does not pass here is a gap
                tests = res["gpujit"]["tests"]
                if not tests:
                    gaps.append((proj["name"], "(the whole run)", "no tests", "pytest exit status %s" % res["gpujit"]["rc"]))
                for tid, (go, cause) in tests.items():
                    if go not in ("passed", "skipped"):
                        gaps.append((proj["name"], tid, go, cause))
            rows.append((proj, res))
    finally:
        if args.keep:
            print("== kept", work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    wall = time.monotonic() - t_start
    if all(len(r) == len(MODES) for _, r in rows):
        print("\n".join([""] + table(rows)))
    if gaps:
        print("\npassed on the simulator, not under gpujit:")
        causes = collections.Counter(normalise(c) for _, _, _, c in gaps)
        for name, tid, o, cause in gaps[:40]:
            print("  %s %s: %s %s" % (name, tid, o, cause[:160]))
        for k, n in causes.most_common(10):
            print("%5d  %s" % (n, k))
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    print("\nprojects: wall %.0f s, children's CPU %.0f s" % (wall, cpu.ru_utime + cpu.ru_stime))
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"date": datetime.date.today().isoformat(), "wall_s": round(wall, 1),
                   "projects": [{"name": p["name"], "version": p["version"],
                                 "runs": {m: {k: v for k, v in r.items() if k not in ("tail", "log")}
                                          for m, r in res.items()}} for p, res in rows]}, f, indent=1)
    print("projects: results in", args.json)
    return 1 if gaps else 0


if __name__ == "__main__":
    sys.exit(main())
