#!/usr/bin/env python3
"""The numba.cuda compatibility yardstick: numba-cuda 0.30.4's own kernel
tests, run unchanged against gpujit.

    python3 tests/compat/run.py [--target cpu|cuda] [--write-docs] [-k SUBSTR ...] [-j N] [--numba]

The tests come from numba-cuda's wheel on PyPI, downloaded at run time
(`pip download --no-deps numba-cuda==0.30.4`, cached in ~/.cache/gpujit-compat
or $GPUJIT_COMPAT_CACHE) and extracted to a temporary folder; none of them is
kept in this repository. NVIDIA's cuda-core and cuda-bindings, which the
peer's test modules import, are installed for this run only, into the same cache
(PEER_DEPS). A test-only `numba` package (shim/) comes first on
sys.path: `numba.cuda` is gpujit, `numba.cuda.testing` holds stand-ins for the
peer's test decorators. numba itself is never imported, except with --numba: then
the interpreter's numba is numba, `numba.cuda` alone is the shim's (gpujit), the
peer sees HAS_NUMBA true, and its tests of numba interoperation are in scope.

Each test module runs in its own pytest subprocess (compat_plugin.py logs each
test as it starts and ends). A test that crashes the process or runs past
--test-timeout is charged as an error, and the rest of its module runs again
in a fresh process; a module that cannot be imported charges each of its
in-scope tests (listed from its source) as failed with the import error.
Tests the out-of-scope rules name (out_of_scope.txt) are not counted; a
module they put wholly out of scope is not run (its tests are listed from its
source).
Modules not reached within --budget seconds are charged as errors.

Exit status: 1 when the CPU target's passes drop below floor.txt (full runs
only), else 0.
"""
import argparse
import collections
import datetime
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import rules as _rules  # noqa: E402

PEER_VERSION = "0.30.4"
WHEEL_PREFIX = "numba_cuda/numba/cuda/tests/"

# Which peer modules are run, in three groups. "host-api" gathers the modules
# that exercise the host runtime (streams, device arrays, transfers) more than
# the kernel language.
HOST_API = ["cudapy/test_stream_api.py", "cudapy/test_array_args.py", "cudapy/test_sm_creation.py",
            "cudapy/test_transpose.py", "cudapy/test_reduction.py",
            "cudadrv/test_array_attr.py", "cudadrv/test_cuda_array_slicing.py",
            "cudadrv/test_cuda_ndarray.py", "cudadrv/test_events.py", "cudadrv/test_streams.py",
            "cudadrv/test_pinned.py", "cudadrv/test_host_alloc.py", "cudadrv/test_detect.py",
            "cudadrv/test_select_device.py"]


def groups_of(tests_dir):
    cudapy = sorted(os.path.relpath(p, tests_dir)
                    for p in glob.glob(os.path.join(tests_dir, "cudapy", "test_*.py")))
    return collections.OrderedDict([
        ("cudapy", [m for m in cudapy if m not in HOST_API]),
        ("host-api", [m for m in HOST_API if os.path.exists(os.path.join(tests_dir, m))]),
        ("doc_examples", sorted(os.path.relpath(p, tests_dir)
                                for p in glob.glob(os.path.join(tests_dir, "doc_examples", "test_*.py")))),
    ])


def fetch_wheel(cache):
    os.makedirs(cache, exist_ok=True)
    found = sorted(glob.glob(os.path.join(cache, "numba_cuda-%s-*.whl" % PEER_VERSION)))
    if not found:
        print("== downloading numba-cuda %s from PyPI into %s" % (PEER_VERSION, cache), flush=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check",
                        "--no-deps", "numba-cuda==" + PEER_VERSION, "-d", cache], check=True)
        found = sorted(glob.glob(os.path.join(cache, "numba_cuda-%s-*.whl" % PEER_VERSION)))
    if not found:
        sys.exit("compat: no numba-cuda %s wheel in %s" % (PEER_VERSION, cache))
    return found[0]


# NVIDIA's Python packages that the peer's test modules import themselves (cuda.core's
# Device, Buffer and CUDAError; cuda.bindings' driver module); they import without a GPU.
# Installed for the compat run only, into the cache (never into the interpreter's site
# packages), without their dependencies: numpy is the interpreter's own.
PEER_DEPS = ["cuda-core>=0.5.1,<2", "cuda-bindings>=13,<14", "cuda-pathfinder>=1.4,<2", "cffi>=1.15", "pycparser"]


def fetch_deps(cache):
    """A folder holding PEER_DEPS, put on the test processes' sys.path."""
    want = "\n".join(PEER_DEPS)
    site = os.path.join(cache, "site-py%d%d-%08x" % (sys.version_info[:2] + (zlib.crc32(want.encode()),)))
    if os.path.isdir(site):
        return site
    print("== installing %s into %s" % (", ".join(PEER_DEPS), site), flush=True)
    # into a private folder first, renamed when complete: runs in parallel never see half of it
    tmp = tempfile.mkdtemp(prefix="site-", dir=cache)
    rc = subprocess.call([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                          "--root-user-action=ignore", "--no-deps", "--target", tmp] + PEER_DEPS)
    if rc:  # the modules that import them then fail on that import, and are counted so
        print("== compat: could not install %s (pip exited %d)" % (", ".join(PEER_DEPS), rc), flush=True)
        shutil.rmtree(tmp, ignore_errors=True)
        return None
    try:
        os.rename(tmp, site)
    except OSError:  # another run finished first
        shutil.rmtree(tmp, ignore_errors=True)
    return site


def extract_tests(wheel, dest):
    """The wheel's numba_cuda/numba/cuda/tests/ tree, as dest/tests/."""
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.startswith(WHEEL_PREFIX) and not name.endswith("/"):
                out = os.path.join(dest, "tests", name[len(WHEEL_PREFIX):])
                os.makedirs(os.path.dirname(out), exist_ok=True)
                with z.open(name) as src, open(out, "wb") as dst:
                    shutil.copyfileobj(src, dst)
    with open(os.path.join(dest, "pytest.ini"), "w") as f:
        f.write("[pytest]\n")


class ModuleRun:
    """Runs one peer module to completion, attempt after attempt, charging
    a crash or a hang to the test that was running."""

    def __init__(self, args, peer, rel, deadline):
        self.args, self.peer, self.rel, self.deadline = args, peer, rel, deadline
        self.results = collections.OrderedDict()   # test id -> (outcome, cause)
        self.collected = None
        self.collect_error = None       # why the module's tests never ran
        self.collect_outcome = "failed"  # "error" when that was a crash, a hang or the budget
        self.attempts = 0

    def env(self, log, done):
        env = dict(os.environ)
        # --numba: the real numba, and the shim's numba.cuda alone (compat_plugin puts it in place)
        shim = [os.path.join(HERE, "numba_site")] if self.args.numba else [os.path.join(HERE, "shim")]
        env.update(GPUJIT_COMPAT_PEER=self.peer, GPUJIT_COMPAT_LOG=log, GPUJIT_COMPAT_DONE=done,
                   GPUJIT_TARGET=self.args.target, PYTHONDONTWRITEBYTECODE="1",
                   GPUJIT_COMPAT_NUMBA="1" if self.args.numba else "0",
                   # an installed numba-cuda registers a pytest plugin that imports the real
                   # numba.core; only this runner's own plugin is loaded (-p)
                   PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
                   PYTHONPATH=os.pathsep.join(shim + [os.path.join(REPO, "python"), HERE]
                                              + ([self.args.deps] if self.args.deps else [])))
        return env

    def run(self, rule_list):
        whole = _rules.match_test(rule_list, self.rel)
        if whole is not None:  # the whole module is out of scope: list it, run nothing
            for tid, _, _ in self.static():
                self.results[tid] = ("oos", "%s (rule line %d)" % (whole.reason, whole.line))
            return
        work = tempfile.mkdtemp(prefix="attempt-", dir=self.peer)
        while True:
            if time.monotonic() >= self.deadline:
                if self.collected is None:
                    self.collect_error, self.collect_outcome = "not run: the whole-run time budget was spent", "error"
                else:
                    self.charge_rest("error", "not run: the whole-run time budget was spent")
                return
            self.attempts += 1
            log = os.path.join(work, "log%d.jsonl" % self.attempts)
            done = os.path.join(work, "done%d.txt" % self.attempts)
            with open(done, "w") as f:
                f.write("".join(t + "\n" for t in self.results))
            before = len(self.results)
            status = self.attempt(log, done)
            if self.collect_error is not None or self.collected is None:
                if self.collected is None and self.collect_error is None:
                    self.collect_error = "crash while importing the module (%s)" % status
                    self.collect_outcome = "error"
                return
            if not [t for t in self.collected if t not in self.results]:
                return
            if status in ("exited 0", "exited 1") or len(self.results) == before:
                # pytest ended normally, or the attempt made no progress, yet
                # some tests never reported: charge them rather than loop
                self.charge_rest("error", "no result reported (pytest %s)" % status)
                return

    def attempt(self, log, done):
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "compat_plugin", "-p", "no:cacheprovider",
               "-c", os.path.join(self.peer, "pytest.ini"), "--rootdir", self.peer,
               "-o", "python_files=test_*.py", os.path.join(self.peer, "tests", self.rel)]
        self.running, self.pos, self.last_event = None, 0, time.monotonic()
        why = None
        with open(os.path.join(os.path.dirname(log), "out.txt"), "ab") as out:
            proc = subprocess.Popen(cmd, env=self.env(log, done), stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True, cwd=self.peer)
            while True:
                try:
                    rc = proc.wait(timeout=0.2)
                    break
                except subprocess.TimeoutExpired:
                    pass
                self.read_log(log)
                now = time.monotonic()
                # No event for test_timeout seconds: a test (or the import, or a
                # fixture between tests) hangs.
                if now - self.last_event > self.args.test_timeout:
                    why = "hang: nothing reported for %d s (the per-test timeout)" % self.args.test_timeout
                elif now >= self.deadline:
                    why = "killed: the whole-run time budget was spent"
                if why:
                    os.killpg(proc.pid, signal.SIGKILL)
                    rc = proc.wait()
                    break
        self.read_log(log)
        status = why or ("exited %d" % rc if rc >= 0 else "killed by signal %s" % signal.Signals(-rc).name)
        if self.running is not None:
            self.results[self.running] = ("error", why or "crash: " + status)
        elif why and self.collected is None:
            self.collect_error, self.collect_outcome = why, "error"
        return status

    def read_log(self, log):
        if not os.path.exists(log):
            return
        with open(log, "rb") as f:
            f.seek(self.pos)
            while True:
                line = f.readline()
                if not line.endswith(b"\n"):
                    break
                self.pos += len(line)
                self.last_event = time.monotonic()
                ev = json.loads(line)
                if ev["ev"] == "collected":
                    if self.collected is None:
                        self.collected = ev["ids"]
                elif ev["ev"] == "collect_error":
                    self.collect_error = ev["cause"]
                elif ev["ev"] == "start":
                    self.running = ev["id"]
                elif ev["ev"] == "result":
                    self.results[ev["id"]] = (ev["outcome"], ev["cause"])
                    if ev["id"] == self.running:
                        self.running = None

    def charge_rest(self, outcome, cause):
        for t in self.collected:
            if t not in self.results:
                self.results[t] = (outcome, cause)

    def static(self):
        return _rules.static_tests(os.path.join(self.peer, "tests", self.rel), self.rel, self.args.numba)

    def finish(self, rule_list):
        """Results for every test of the module; a module that did not
        import gets its statically listed tests, each in scope charged
        with the import error."""
        if self.collect_error is not None:
            self.results.clear()
            for tid, cudasim, skips in self.static():
                rule = _rules.match_test(rule_list, tid, cudasim)
                if rule is None:
                    for s in skips:
                        rule = _rules.match_skip(rule_list, s) or rule
                if rule:
                    self.results[tid] = ("oos", "%s (rule line %d)" % (rule.reason, rule.line))
                elif self.collect_outcome == "error":
                    self.results[tid] = ("error", self.collect_error)
                else:
                    self.results[tid] = ("failed", "import: " + self.collect_error)
        return self.results


def normalise(cause):
    """Groups causes that differ only in a location, address or number."""
    c = re.sub(r"(/[^\s:'\"]+)+\.py", "<file>", cause or "")
    c = re.sub(r"<file>:\d+(:\d+)?", "<file>", c)
    c = re.sub(r"0x[0-9a-fA-F]+", "0x…", c)
    c = re.sub(r"\b\w+\(\)", "<fn>()", c)                                # a kernel's name
    c = re.sub(r"Module/Function\([\w.]+\)", "Module/Function(<name>)", c)
    c = re.sub(r"variable '\w+'", "variable '<name>'", c)
    c = re.sub(r"\b\d+(\.\d+)?(e[-+]?\d+)?\b", "N", c)
    return c[:200]


def summarise(by_module, groups):
    rows = []
    for group, mods in groups.items():
        for m in mods:
            if m not in by_module:
                continue
            c = collections.Counter(o for o, _ in by_module[m].values())
            rows.append((group, m, c["passed"], c["failed"], c["oos"], c["error"]))
    return rows


def table(rows, totals_only=False):
    out = ["| group | module | passed | failed | errors | out of scope | in scope |",
           "|---|---|---:|---:|---:|---:|---:|"]
    tot = collections.OrderedDict((g, [0, 0, 0, 0]) for g in dict.fromkeys([r[0] for r in rows] + ["all"]))
    for g, m, p, f, o, e in rows:
        if not totals_only:
            out.append("| %s | %s | %d | %d | %d | %d | %d |" % (g, m.split("/")[-1][:-3], p, f, e, o, p + f + e))
        for key in (g, "all"):
            t = tot[key]
            t[0] += p; t[1] += f; t[2] += o; t[3] += e
    for key, (p, f, o, e) in tot.items():
        pct = 100.0 * p / (p + f + e) if p + f + e else 0.0
        out.append("| **%s** | **total** (%.0f %% of in scope) | **%d** | **%d** | **%d** | **%d** | **%d** |"
                   % (key, pct, p, f, e, o, p + f + e))
    return out


def causes(by_module, outcomes=("failed", "error")):
    c = collections.Counter()
    mods = collections.defaultdict(set)
    for m, res in by_module.items():
        for _, (o, cause) in res.items():
            if o in outcomes:
                k = normalise(cause)
                c[k] += 1
                mods[k].add(m.split("/")[-1][:-3])
    return [(n, k, sorted(mods[k])) for k, n in c.most_common()]


def oos_reasons(by_module):
    c = collections.Counter()
    for res in by_module.values():
        for o, cause in res.values():
            if o == "oos":
                c[cause] += 1
    return c.most_common()


# Sections of the page that other checks own (tests/test_public_names.py reads this one); a rewrite keeps them.
KEPT_SECTIONS = ("## With numba installed", "## numba.cuda names gpujit leaves out", "## Real projects' GPU tests")


def kept_sections(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return []
    out = []
    for title in KEPT_SECTIONS:
        start = text.find("\n" + title + "\n")
        if start >= 0:
            end = text.find("\n## ", start + 1)
            out += [""] + text[start + 1:end if end >= 0 else len(text)].rstrip("\n").split("\n")
    return out


def write_docs(path, rows, cause_list, oos, meta):
    md = lambda s: s.replace("|", "\\|")  # noqa: E731
    lines = [
        "# numba.cuda compatibility",
        "",
        "How much numba.cuda code runs unchanged on gpujit, measured with numba-cuda %s's own tests"
        % PEER_VERSION,
        "(`tests/compat/run.py`; rules for what is out of scope: `tests/compat/out_of_scope.txt`).",
        "The tests are taken from numba-cuda's wheel on PyPI at run time; none is kept here. A test-only",
        "`numba` package (`tests/compat/shim/`) makes `numba.cuda` gpujit itself and gives stand-ins for",
        "the peer's test decorators; whatever name gpujit lacks stays missing, so the test fails on it.",
        "",
        "Counting: each test module runs in its own process. *failed*: the test raised (or its module",
        "could not be imported: then each of its in-scope tests, listed from the source, is charged with",
        "the import error; a test the peer expects to fail is out of scope when it fails here too, by",
        "the `xfail` rule, and passed when it passes). *errors*: the test",
        "crashed the process or ran past the per-test timeout; the rest of its module then runs again in",
        "a fresh process. A skip that no rule covers counts as failed. *in scope* = passed + failed +",
        "errors; the percentage is passed / in scope. A module the rules put wholly out of scope is not",
        "run; its tests are listed from its source.",
        "",
        "Run it with `scripts/compat.sh` (`--target cuda` on a GPU machine, `--write-docs` to rewrite this",
        "page); it fails when the CPU target's passes drop below `tests/compat/floor.txt`. Results per",
        "test: `build/compat-cpu.json`.",
        "",
        "Measured %s, %s target, %s; wall time %.0f s (%s)." % (
            meta["date"], meta["target"], meta["machine"], meta["wall_s"], meta["note"]),
        "",
        "## Per module",
        "",
    ]
    lines += table(rows)
    lines += ["", "## What breaks the most tests", "",
              "Each failure's exception type and first message line (paths and numbers folded), with",
              "the count of tests it fails and the modules they are in.", "",
              "| tests | cause | modules |", "|---:|---|---|"]
    shown = 40
    for n, k, mods in cause_list[:shown]:
        lines.append("| %d | %s | %s |" % (n, md(k), ", ".join(mods[:8]) + (" …" if len(mods) > 8 else "")))
    rest = cause_list[shown:]
    if rest:
        lines.append("| %d | (%d other causes, each failing %d test%s or fewer) | |"
                     % (sum(n for n, _, _ in rest), len(rest), rest[0][0], "s" if rest[0][0] > 1 else ""))
    lines += ["", "## Out of scope, by rule", "", "| tests | reason |", "|---:|---|"]
    for reason, n in oos:
        lines.append("| %d | %s |" % (n, md(reason)))
    lines += kept_sections(path)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("-k", dest="filter", action="append", default=None,
                    help="only modules whose path contains this (repeatable: any of them)")
    ap.add_argument("--group", action="append", help="cudapy, host-api, doc_examples (default: all)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--budget", type=float, default=900, help="whole-run time budget, seconds")
    ap.add_argument("--test-timeout", type=float, default=180, help="per-test time limit, seconds")
    ap.add_argument("--cache", default=os.environ.get("GPUJIT_COMPAT_CACHE",
                                                      os.path.expanduser("~/.cache/gpujit-compat")))
    ap.add_argument("--json", default=os.path.join(REPO, "build", "compat-%s.json"))
    ap.add_argument("--write-docs", action="store_true", help="write docs/compatibility.md")
    ap.add_argument("--keep", action="store_true", help="keep the extracted tests and logs")
    ap.add_argument("--from-json", help="report (and --write-docs) from an earlier run's JSON, running nothing")
    ap.add_argument("--peer-dir", help="run the tests of this folder (holding tests/) instead of the wheel's")
    ap.add_argument("--numba", action="store_true",
                    help="run with the interpreter's numba installed (numba.cuda is still gpujit): the tests that "
                         "need numba's CPU JIT come into scope (the @no-numba rules drop out)")
    args = ap.parse_args()
    if args.numba:
        import importlib.util
        if importlib.util.find_spec("numba") is None:
            sys.exit("compat: --numba needs numba installed in %s" % sys.executable)
        if args.json == ap.get_default("json"):
            args.json = os.path.join(REPO, "build", "compat-%s-numba.json")

    t_start = time.monotonic()
    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        by_module = {m: collections.OrderedDict((t, (r["outcome"], r["cause"])) for t, r in res.items())
                     for m, res in saved["modules"].items()}
        groups = collections.OrderedDict()
        for m in by_module:
            groups.setdefault(saved.get("groups", {}).get(m, "host-api" if m in HOST_API else m.split("/")[0]), []).append(m)
        return report(args, groups, by_module, saved["wall_s"], saved.get("jobs", args.jobs))
    peer = tempfile.mkdtemp(prefix="gpujit-compat-")
    try:
        if args.peer_dir:
            shutil.copytree(os.path.join(args.peer_dir, "tests"), os.path.join(peer, "tests"))
            with open(os.path.join(peer, "pytest.ini"), "w") as f:
                f.write("[pytest]\n")
        else:
            extract_tests(fetch_wheel(args.cache), peer)
        # a --peer-dir folder (the runner's own tests use a small fake one) brings its own needs
        args.deps = None if args.peer_dir else fetch_deps(args.cache)
        groups = groups_of(os.path.join(peer, "tests"))
        if args.group:
            groups = collections.OrderedDict((g, m) for g, m in groups.items() if g in args.group)
        if args.filter:
            groups = collections.OrderedDict((g, [m for m in ms if any(f in m for f in args.filter)]) for g, ms in groups.items())
        todo = [m for ms in groups.values() for m in ms]
        rule_list = _rules.load_rules(target=args.target, numba=args.numba)
        deadline = t_start + args.budget
        by_module = run_all(args, peer, todo, deadline, rule_list)
    finally:
        if args.keep:
            print("== kept", peer)
        else:
            shutil.rmtree(peer, ignore_errors=True)
    wall = time.monotonic() - t_start
    return report(args, groups, by_module, wall, args.jobs)


def report(args, groups, by_module, wall, jobs):
    rows = summarise(by_module, groups)
    print("\n".join(table(rows)))
    cause_list = causes(by_module)
    print("\ntop failure causes:")
    for n, k, mods in cause_list[:15]:
        print("%5d  %s   [%s]" % (n, k, ", ".join(mods[:5]) + (" …" if len(mods) > 5 else "")))
    passed = sum(r[2] for r in rows)
    print("\ncompat: %d passed, wall %.0f s, target %s" % (passed, wall, args.target))

    json_path = args.json % args.target if "%s" in args.json else args.json
    os.makedirs(os.path.dirname(json_path), exist_ok=True)
    with open(json_path, "w") as f:
        json.dump({"peer": "numba-cuda " + PEER_VERSION, "target": args.target, "wall_s": round(wall, 1),
                   "jobs": jobs, "groups": {m: g for g, ms in groups.items() for m in ms},
                   "modules": {m: {t: {"outcome": o, "cause": c} for t, (o, c) in res.items()}
                               for m, res in by_module.items()}}, f, indent=1)
    print("compat: results in", json_path)

    if args.write_docs:
        meta = {"date": os.environ.get("GPUJIT_COMPAT_DATE", datetime.date.today().isoformat()),
                "target": args.target.upper() if args.target == "cpu" else "CUDA",
                "machine": os.environ.get("GPUJIT_COMPAT_MACHINE", "%d cores" % (os.cpu_count() or 1)),
                "wall_s": wall, "note": "%d modules at a time" % jobs}
        write_docs(os.path.join(REPO, "docs", "compatibility.md"), rows, cause_list, oos_reasons(by_module), meta)
        print("compat: wrote docs/compatibility.md")

    full = not args.filter and not args.group and not args.peer_dir and not args.from_json
    if args.target == "cpu" and full:
        with open(os.path.join(HERE, "floor.txt")) as f:
            floor = int(f.read().split()[0])
        if passed < floor:
            print("compat: FAIL: %d passes, below the floor of %d (tests/compat/floor.txt)" % (passed, floor))
            return 1
        print("compat: %d passes >= floor %d" % (passed, floor))
    return 0


def run_all(args, peer, todo, deadline, rule_list):
    """Runs the modules, args.jobs at a time, each ModuleRun in a thread."""
    import concurrent.futures
    by_module = {}

    def one(rel):
        t = time.monotonic()
        mr = ModuleRun(args, peer, rel, deadline)
        mr.run(rule_list)
        res = mr.finish(rule_list)
        c = collections.Counter(o for o, _ in res.values())
        print("%-45s %3d passed %3d failed %3d errors %3d oos  %5.1f s%s" % (
            rel, c["passed"], c["failed"], c["error"], c["oos"], time.monotonic() - t,
            "  (%d attempts)" % mr.attempts if mr.attempts > 1 else ""), flush=True)
        return rel, res

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        for rel, res in ex.map(one, todo):
            by_module[rel] = res
    return by_module


if __name__ == "__main__":
    sys.exit(main())
