"""Test-only `numba.cuda.cudaimpl`: a stand-in so that test modules which register a
lowering function for numba's data-model extension API at import time import at all.
`lower` returns the function unchanged and registers nothing; gpujit refuses the
registered types in kernels (gpujit.extending), and the tests that use them are out of
scope (numba's extension API)."""


def lower(*args, **kwargs):
    """Placeholder for numba's lowering registry decorator; registers nothing."""
    def decorate(fn):
        return fn
    return decorate
