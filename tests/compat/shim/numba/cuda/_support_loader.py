"""Loads the peer's tests/support.py as `numba.cuda.tests.support`.

Its helpers (TestCase.assertPreciseEqual, captured_stdout, override_config,
...) need no numba, but the file imports numba internals at its top (NRT
statistics, cffi typing, the extension API). Each such top-level
`from numba... import x` that fails binds x to a Missing placeholder instead:
false when tested (so `skipUnless(cffi_utils.SUPPORTED)` skips), an error
when called. A test that really uses one of those internals fails on it.
"""
import ast
import importlib.abc
import importlib.util
import sys

MODULE = "numba.cuda.tests.support"


class Missing:
    def __init__(self, name):
        self._name = name

    def __bool__(self):
        return False

    def _compare(self, other):
        return False

    __lt__ = __le__ = __gt__ = __ge__ = _compare

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Missing(self._name + "." + attr)

    def __call__(self, *args, **kwargs):
        raise NotImplementedError("%s is numba internals, absent in gpujit" % self._name)

    def __repr__(self):
        return "<missing %s>" % self._name


def _guard_imports(tree):
    """Wraps each top-level `from numba... import a, b` in try/except that
    binds a, b to Missing placeholders when the import fails."""
    body = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("numba"):
            fallback = [ast.Assign(targets=[ast.Name(id=a.asname or a.name, ctx=ast.Store())],
                                   value=ast.Call(func=ast.Name(id="_Missing", ctx=ast.Load()),
                                                  args=[ast.Constant(node.module + "." + a.name)],
                                                  keywords=[]))
                        for a in node.names]
            handler = ast.ExceptHandler(type=ast.Name(id="ImportError", ctx=ast.Load()), name=None,
                                        body=fallback)
            node = ast.Try(body=[node], handlers=[handler], orelse=[], finalbody=[])
        body.append(node)
    tree.body = body
    return ast.fix_missing_locations(tree)


class _Loader(importlib.abc.Loader):
    def __init__(self, path):
        self.path = path

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        with open(self.path, encoding="utf-8") as f:
            tree = _guard_imports(ast.parse(f.read(), self.path))
        module.__dict__["_Missing"] = Missing
        exec(compile(tree, self.path, "exec"), module.__dict__)


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, path):
        self.path = path

    def find_spec(self, name, path=None, target=None):
        if name != MODULE:
            return None
        return importlib.util.spec_from_file_location(name, self.path, loader=_Loader(self.path))


def install(path):
    sys.meta_path.insert(0, _Finder(path))
