"""pytest plugin for the yardstick's per-module subprocess (run.py).

Imports each peer module under its real name (numba.cuda.tests.<group>.<m>),
drops the tests the out-of-scope rules name, and appends one JSON line per
event to GPUJIT_COMPAT_LOG as it happens, flushed at once, so that when the
process crashes or hangs the runner knows which test was running:
  {"ev": "collected", "ids": [...]}           every test of the module
  {"ev": "collect_error", "cause": "..."}     the module did not import
  {"ev": "start", "id": ...}
  {"ev": "result", "id": ..., "outcome": "passed|failed|oos", "cause": ...}
Tests listed in GPUJIT_COMPAT_DONE (one id a line) are already counted by an
earlier attempt and are deselected.

With GPUJIT_COMPAT_NUMBA=1 (run.py --numba) the real numba is on sys.path instead of
the shim's stand-in for it, and only `numba.cuda` is the shim's (gpujit), through
numba_site/sitecustomize.py.
"""
import importlib
import json
import os

import pytest

import rules as _rules

PEER = os.environ["GPUJIT_COMPAT_PEER"]
TESTS_DIR = os.path.join(PEER, "tests")
CUDASIM_ATTR = "__gpujit_compat_cudasim__"

NUMBA = os.environ.get("GPUJIT_COMPAT_NUMBA") == "1"   # numba_site/sitecustomize.py put numba.cuda in place

_log = open(os.environ["GPUJIT_COMPAT_LOG"], "a", encoding="utf-8")
_rule_list = _rules.load_rules(target=os.environ.get("GPUJIT_TARGET"), numba=NUMBA)
_phases = {}


def _emit(**ev):
    _log.write(json.dumps(ev) + "\n")
    _log.flush()


def cause_of(excinfo):
    value = excinfo.value
    text = str(value).strip().splitlines()
    return "%s: %s" % (type(value).__name__, text[0][:300] if text else "")


def _rel(path):
    return os.path.relpath(str(path), TESTS_DIR).replace(os.sep, "/")


class PeerModule(pytest.Module):
    def _getobj(self):
        name = "numba.cuda.tests." + _rel(self.path)[:-3].replace("/", ".")
        try:
            return importlib.import_module(name)
        except BaseException as e:  # noqa: B036  (recorded, then pytest reports it)
            _emit(ev="collect_error", cause=cause_of(pytest.ExceptionInfo.from_exception(e)))
            raise


def pytest_pycollect_makemodule(module_path, parent):
    if str(module_path).startswith(TESTS_DIR) and module_path.name.startswith("test_"):
        return PeerModule.from_parent(parent, path=module_path)
    return None


def _test_id(item):
    return _rel(item.path) + "::" + item.nodeid.split("::", 1)[1]


def _cudasim_reasons(item):
    reasons = []
    for obj in (getattr(item, "cls", None), getattr(item, "obj", None)):
        reasons.extend(getattr(obj, CUDASIM_ATTR, ()) if obj is not None else ())
    return reasons


def pytest_collection_modifyitems(session, config, items):
    done = set()
    done_file = os.environ.get("GPUJIT_COMPAT_DONE")
    if done_file and os.path.exists(done_file):
        with open(done_file, encoding="utf-8") as f:
            done = {line.strip() for line in f if line.strip()}
    ids = [_test_id(it) for it in items]
    _emit(ev="collected", ids=ids)
    keep, drop = [], []
    for it, tid in zip(items, ids):
        if tid in done:
            drop.append(it)
            continue
        rule = _rules.match_test(_rule_list, tid, _cudasim_reasons(it))
        if rule:
            _emit(ev="result", id=tid, outcome="oos", cause="%s (rule line %d)" % (rule.reason, rule.line))
            drop.append(it)
        else:
            keep.append(it)
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep


def pytest_runtest_setup(item):
    _emit(ev="start", id=_test_id(item))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    st = _phases.setdefault(item.nodeid, {"outcome": "passed", "cause": None})
    if st["outcome"] != "passed":
        return
    if hasattr(rep, "wasxfail"):
        if rep.skipped:  # failed as the peer expects: out of scope where a rule says so, else a failure
            rule = _rules.match_xfail(_rule_list, _test_id(item))
            if rule:
                st.update(outcome="oos", cause="%s (rule line %d)" % (rule.reason, rule.line))
            else:
                st.update(outcome="failed", cause="XFail: the peer expects this test to fail")
        return
    if rep.skipped:
        msg = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        msg = msg[len("Skipped: "):] if msg.startswith("Skipped: ") else msg
        rule = _rules.match_skip(_rule_list, msg)
        if rule:
            st.update(outcome="oos", cause="%s (rule line %d)" % (rule.reason, rule.line))
        else:
            st.update(outcome="failed", cause="Skipped: %s (no rule covers this skip)" % msg.strip()[:200])
    elif rep.failed:
        if call.excinfo is not None:
            cause = cause_of(call.excinfo)
        else:
            cause = "Failed: " + str(rep.longrepr).strip().splitlines()[-1][:300]
        if rep.when != "call":
            cause = "in %s: %s" % (rep.when, cause)
        st.update(outcome="failed", cause=cause)


def pytest_runtest_logfinish(nodeid, location):
    st = _phases.pop(nodeid, None)
    if st is None:
        return
    # nodeid -> test id: the module part is relative to the peer's tests dir
    _emit(ev="result", id=_rel_nodeid(nodeid), outcome=st["outcome"], cause=st["cause"])


def _rel_nodeid(nodeid):
    path, _, rest = nodeid.partition("::")
    full = path if os.path.isabs(path) else os.path.join(str(_rootdir[0]), path)
    return _rel(full) + "::" + rest


_rootdir = [None]


def pytest_configure(config):
    _rootdir[0] = config.rootpath
    import numba
    shim = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shim")
    if NUMBA:   # the real numba, and the shim's numba.cuda
        import numba.cuda
        if not os.path.abspath(numba.cuda.__file__).startswith(shim + os.sep):
            raise pytest.UsageError("compat: numba.cuda must be the test-only shim, not %s" % numba.cuda.__file__)
    elif not os.path.abspath(numba.__file__).startswith(shim + os.sep):
        raise pytest.UsageError("compat: numba must be the test-only shim, not %s" % numba.__file__)
