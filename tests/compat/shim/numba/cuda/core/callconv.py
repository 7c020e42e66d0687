"""Test-only `numba.cuda.core.callconv`: a stand-in so that test modules which import
numba's CUDACallConv (an internal class of numba's code generator) import at all.
CUDACallConv here is an empty placeholder: no gpujit object is an instance of it, so a
test that checks for it still fails."""


class CUDACallConv:
    """Placeholder for numba's calling-convention class; gpujit has no such object."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("numba's CUDACallConv is a numba internal that gpujit does not have")
