"""The out-of-scope rules (out_of_scope.txt) and a static list of a test
module's tests, shared by the runner and its pytest plugin.

A rule line is `KIND PATTERN | REASON`:
  test     PATTERN is a glob on the test id `group-dir/test_x.py::Class::test`
           (a module or class id also covers everything inside it);
  cudasim  PATTERN is a regex searched in the reason the peer gives to
           skip_on_cudasim on that test or its class;
  skip     PATTERN is a regex searched in the message of a skip the test
           raised at run time (a skip no rule covers counts as a failure);
  xfail    PATTERN is a glob on the test id of a test the peer marks as an
           expected failure, which failed here too.
A KIND ending in `@cpu` (or `@cuda`) is a rule for that target alone: e.g. a
reason the peer gives for skipping on its simulator that holds for gpujit's
CPU target but not on a GPU.
"""
import ast
import fnmatch
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
RULES_FILE = os.path.join(HERE, "out_of_scope.txt")


class Rule:
    def __init__(self, kind, pattern, reason, line):
        self.kind, self.pattern, self.reason, self.line = kind, pattern, reason, line
        self.regex = re.compile(pattern) if kind in ("cudasim", "skip") else None

    def __repr__(self):
        return "%s %s" % (self.kind, self.pattern)


def load_rules(path=RULES_FILE, target=None, numba=False):
    """The rules for `target` ('cpu' or 'cuda'; None: the rules for every target only), in a
    run with numba installed (numba=True: the no-numba rules drop out) or without it."""
    rules = []
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            head, sep, reason = line.partition("|")
            kind, _, pattern = head.strip().partition(" ")
            kind, _, only = kind.partition("@")
            if (not sep or kind not in ("test", "cudasim", "skip", "xfail", "keep")
                    or only not in ("", "cpu", "cuda", "no-numba", "numba") or not pattern.strip()
                    or not reason.strip()):
                raise ValueError("%s:%d: expected 'test|cudasim|skip|xfail|keep[@cpu|@cuda|@no-numba|@numba] "
                                 "PATTERN | REASON'" % (path, n))
            if (only == "no-numba" and numba) or (only == "numba" and not numba):
                continue
            if only in ("cpu", "cuda") and only != target:
                continue
            rules.append(Rule(kind, pattern.strip(), reason.strip(), n))
    return rules


def match_test(rules, test_id, cudasim_reasons=()):
    """The first test or cudasim rule that puts this test out of scope, or None (also where a
    keep rule names the test: it is in scope whatever else matches)."""
    parts = test_id.split("::")
    prefixes = ["::".join(parts[:i]) for i in range(1, len(parts) + 1)]
    for r in rules:
        if r.kind == "keep" and any(fnmatch.fnmatchcase(p, r.pattern) for p in prefixes):
            return None
    for r in rules:
        if r.kind == "test" and any(fnmatch.fnmatchcase(p, r.pattern) for p in prefixes):
            return r
        if r.kind == "cudasim" and any(r.regex.search(s) for s in cudasim_reasons):
            return r
    return None


def match_xfail(rules, test_id):
    for r in rules:
        if r.kind == "xfail" and fnmatch.fnmatchcase(test_id, r.pattern):
            return r
    return None


def match_skip(rules, message):
    for r in rules:
        if r.kind == "skip" and r.regex.search(message):
            return r
    return None


# Decorators whose effect the static listing reproduces for a module that
# cannot be imported: the peer's skip_on_cudasim reason, and the two
# stand-ins that always skip (testing.py; the first only where numba is absent).
_STATIC_SKIPS = {"skip_on_standalone_numba_cuda": "requires base numba install",
                 "skip_unless_cudasim": "simulator only: "}


def _decorations(node, numba=False):
    cudasim, skips = [], []
    for d in node.decorator_list:
        name = d.func if isinstance(d, ast.Call) else d
        name = name.attr if isinstance(name, ast.Attribute) else getattr(name, "id", "")
        arg = ""
        if isinstance(d, ast.Call) and d.args and isinstance(d.args[0], ast.Constant):
            arg = str(d.args[0].value)
        if name == "skip_on_cudasim":
            cudasim.append(arg)
        elif name in _STATIC_SKIPS and not (numba and name == "skip_on_standalone_numba_cuda"):
            skips.append(_STATIC_SKIPS[name] + (arg if name == "skip_unless_cudasim" else ""))
    return cudasim, skips


def static_tests(path, rel, numba=False):
    """[(test_id, cudasim_reasons, static_skip_messages)] read from the
    module's source without importing it: test_* methods of its TestCase
    classes (with those inherited from classes of the same module) and its
    top-level test_* functions (a parametrised one counts once)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}

    def base_names(cls):
        return [b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in cls.bases]

    def is_test_class(cls, seen=()):
        for b in base_names(cls):
            if b.endswith("TestCase") or (b in classes and b not in seen and is_test_class(classes[b], seen + (b,))):
                return True
        return False

    def methods(cls, seen=()):
        out = {}
        for b in reversed(base_names(cls)):
            if b in classes and b not in seen:
                out.update(methods(classes[b], seen + (b,)))
        for n in cls.body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test"):
                out[n.name] = n
        return out

    found = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and is_test_class(node):
            c_sim, c_skip = _decorations(node, numba)
            for name, fn in methods(node).items():
                f_sim, f_skip = _decorations(fn, numba)
                found.append(("%s::%s::%s" % (rel, node.name, name), c_sim + f_sim, c_skip + f_skip))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            f_sim, f_skip = _decorations(node, numba)
            found.append(("%s::%s" % (rel, node.name), f_sim, f_skip))
    return found
