"""Test-only `numba.cuda.cgutils`: a stand-in so that test modules which import numba's
LLVM code-generation helpers import at all. gpujit has no such helpers: every function
here raises when called."""


def create_struct_proxy(*args, **kwargs):
    raise NotImplementedError("numba's cgutils builds LLVM IR through numba's code generator, which gpujit does not have")
