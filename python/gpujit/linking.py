"""External device functions, as numba.cuda's declare_device, CUSource and PTXSource.

declare_device(name, sig, link=...) describes a function written in CUDA C or PTX (the
`link=` sources). gpujit compiles Python only and links nothing into its kernels: neither
its CPU target nor its GPU runtime can build CUDA C or link PTX modules. So a kernel that
calls a declared function is refused when it is compiled, with an UnsupportedError naming
the call's file:line; the declaration itself (its name and signature) is checked and kept,
so code that declares functions imports and runs up to that call."""
import os

from . import types
from .typing import signature_string

__all__ = ["CUSource", "PTXSource", "declare_device", "ExternFunction"]

_NOT_LINKED = ("is an external function (declare_device) whose code is CUDA C or PTX; gpujit "
               "compiles Python only and does not link CUDA C or PTX into kernels")


class _Source:
    kind = None

    def __init__(self, data, name=None, setup_callback=None, teardown_callback=None):
        if isinstance(data, str):
            data = data.encode()
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError("%s takes the source as str or bytes, not %s" % (type(self).__name__,
                                                                              type(data).__name__))
        self.data = bytes(data)
        self.name = name or "<unnamed-%s>" % self.kind
        self.setup_callback, self.teardown_callback = setup_callback, teardown_callback

    def __repr__(self):
        return "<%s %s, %d bytes>" % (type(self).__name__, self.name, len(self.data))


class CUSource(_Source):
    """CUDA C++ source text to link with a kernel (numba.cuda.CUSource)."""
    kind = "cu"


class PTXSource(_Source):
    """PTX text to link with a kernel (numba.cuda.PTXSource)."""
    kind = "ptx"


def _check_link(link):
    if link is None:
        return ()
    items = [link] if isinstance(link, (str, os.PathLike, _Source)) else list(link)
    for item in items:
        if not isinstance(item, (str, os.PathLike, _Source)):
            raise TypeError("link= takes file paths, CUSource and PTXSource objects, not %r" % (item,))
    return tuple(items)


class ExternFunction:
    """A declared external device function: its name, signature (a gpujit.types.Signature)
    and the sources that would define it. Kernels cannot call it (see the module's doc)."""

    def __init__(self, name, sig, link=(), use_cooperative=False, abi="numba"):
        self.name, self.sig, self.link = name, sig, link
        self.use_cooperative, self.abi = use_cooperative, abi
        self.__gpujit_unsupported__ = "%s() %s" % (name, _NOT_LINKED)

    def __repr__(self):
        return "<external device function %s %s>" % (self.name, self.sig)

    def __call__(self, *args):
        raise TypeError("%s() is an external device function: it can only be called from a kernel"
                        % self.name)


def _signature(sig):
    text = signature_string(sig)
    from .compiler import _type_of_name
    from ._core import parse_signature
    if text.startswith("("):
        raise TypeError("Return type must be given in the signature of an external function: %r" % (sig,))
    ret, args = parse_signature(text)   # checks the spelling
    return types.Signature(_type_of_name(ret[0]), [_type_of_name(a[0]) for a in args])


def declare_device(name, sig, link=None, use_cooperative=False, abi="numba"):
    """Declare the external device function `name` of signature `sig` (a string or types
    called: "int32(float32[:])"; the return type is required), defined by the `link=`
    sources."""
    if not isinstance(name, str) or not name:
        raise TypeError("declare_device() takes the function's name as a str, not %r" % (name,))
    if abi not in ("numba", "c"):
        raise NotImplementedError("Unsupported ABI: %s" % abi)
    return ExternFunction(name, _signature(sig), _check_link(link), use_cooperative, abi)
