"""External device functions, as numba.cuda's declare_device, and the code kernels link.

declare_device(name, sig, link=...) describes a function written in CUDA C or PTX (the
`link=` sources). A kernel on the cuda target calls it as an external symbol (numba's
ABI: `int status = name(ret *out, args...)`; abi="c": `ret name(args...)`), and its
PTX is linked with the declaration's `link=` files, and the kernel's own
(jit(link=[...])), by the driver's linker when it loads (runtime/module.c): CUDA C
(.cu, CUSource) is compiled to PTX by NVRTC first; PTX, cubins, fatbins, objects and
archives go to the linker as they are; LTO-IR, which needs nvJitLink, is refused. The
cpu target cannot run CUDA C: a kernel calling a declared function is refused there when
it is compiled, with an UnsupportedError naming the call's file:line."""
import io
import os

from . import types
from .typing import signature_string

__all__ = ["LinkableCode", "CUSource", "PTXSource", "Fatbin", "Cubin", "Archive", "Object", "LTOIR",
           "declare_device", "ExternFunction"]

class LinkableCode:
    """Code to link with a kernel, held in memory (numba.cuda.LinkableCode); its subclasses
    name the kind. `data` is the text or bytes as given (a StringIO/BytesIO is read when
    `data` is used); the callbacks are numba's module set-up and tear-down hooks."""
    kind = None
    default_name = "<unnamed>"

    def __init__(self, data, name=None, setup_callback=None, teardown_callback=None, nrt=False):
        """data: the code (str, bytes, or a StringIO/BytesIO read when used); name: what
        messages call it (default: the kind's "<unnamed-...>"); setup_callback,
        teardown_callback: numba's hooks, called with the module when it loads and
        unloads; nrt: numba's flag for code that uses its runtime (kept, unused)."""
        if not isinstance(data, (str, bytes, bytearray, memoryview, io.StringIO, io.BytesIO)):
            raise TypeError("%s takes the code as str, bytes or a StringIO/BytesIO, not %s"
                            % (type(self).__name__, type(data).__name__))
        for what, cb in (("setup_callback", setup_callback), ("teardown_callback", teardown_callback)):
            if cb is not None and not callable(cb):
                raise TypeError("%s must be callable" % what)
        self._data, self._name, self.nrt = data, name, nrt
        self.setup_callback, self.teardown_callback = setup_callback, teardown_callback

    @property
    def name(self):
        return self._name or self.default_name

    @property
    def data(self):
        if isinstance(self._data, (io.StringIO, io.BytesIO)):
            return self._data.getvalue()
        return self._data

    @staticmethod
    def from_path(path):
        """The file at `path` as the LinkableCode subclass its extension names (.cu, .ptx,
        .fatbin, .cubin, .a, .o, .ltoir; another is a ValueError); named after its base
        name. Text kinds (.cu, .ptx) are read as str, the others as bytes."""
        root, ext = os.path.splitext(os.fspath(path))
        cls = _BY_EXTENSION.get(ext)
        if cls is None:
            raise ValueError("Unknown extension: %s (linkable code is one of %s)"
                             % (ext, ", ".join(sorted(_BY_EXTENSION))))
        with open(path, "r" if ext in (".cu", ".ptx") else "rb") as f:
            data = f.read()
        return cls(data, name=os.path.basename(root))

    @classmethod
    def from_path_or_obj(cls, path_or_obj):
        """A path (str or os.PathLike) loaded with from_path; a LinkableCode as it is."""
        if isinstance(path_or_obj, (str, os.PathLike)):
            return cls.from_path(path_or_obj)
        return path_or_obj

    def __repr__(self):
        return "<%s %s, %d bytes>" % (type(self).__name__, self.name, len(self.data))


class CUSource(LinkableCode):
    """CUDA C++ source text to link with a kernel (numba.cuda.CUSource)."""
    kind = "cu"
    default_name = "<unnamed-cu>"


class PTXSource(LinkableCode):
    """PTX text to link with a kernel (numba.cuda.PTXSource)."""
    kind = "ptx"
    default_name = "<unnamed-ptx>"


class Fatbin(LinkableCode):
    """An ELF fatbin in memory."""
    kind = "fatbin"
    default_name = "<unnamed-fatbin>"


class Cubin(LinkableCode):
    """An ELF cubin in memory."""
    kind = "cubin"
    default_name = "<unnamed-cubin>"


class Archive(LinkableCode):
    """An archive of object files in memory."""
    kind = "a"
    default_name = "<unnamed-archive>"


class Object(LinkableCode):
    """An object file in memory."""
    kind = "o"
    default_name = "<unnamed-object>"


class LTOIR(LinkableCode):
    """NVVM LTO-IR in memory."""
    kind = "ltoir"
    default_name = "<unnamed-ltoir>"


_BY_EXTENSION = {".cu": CUSource, ".ptx": PTXSource, ".fatbin": Fatbin, ".cubin": Cubin, ".a": Archive,
                 ".o": Object, ".ltoir": LTOIR}


def _check_link(link):
    if link is None:
        return ()
    items = [link] if isinstance(link, (str, os.PathLike, LinkableCode)) else list(link)
    for item in items:
        if not isinstance(item, (str, os.PathLike, LinkableCode)):
            raise TypeError("link= takes file paths and LinkableCode objects (CUSource, PTXSource, ...), not %r"
                            % (item,))
    return tuple(items)


class ExternFunction:
    """A declared external device function: its name, signature (a gpujit.types.Signature)
    and the sources that define it, linked with each kernel that calls it."""

    def __init__(self, name, sig, link=(), use_cooperative=False, abi="numba", sig_text=None):
        self.name, self.sig, self.link = name, sig, link
        self.use_cooperative, self.abi = use_cooperative, abi
        # what the compiler reads (src/externs.c): the symbol, the signature as it spells
        # one, and the ABI
        self.__gpujit_extern__ = (name, sig_text or signature_string(sig), abi)

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
    sources (files or LinkableCode objects, linked into each kernel that calls it).
    use_cooperative: True where the function syncs the grid (the launch is then
    cooperative); abi: "numba" (the result through a pointer, numba's convention) or
    "c" (returned as C returns it)."""
    if not isinstance(name, str) or not name:
        raise TypeError("declare_device() takes the function's name as a str, not %r" % (name,))
    if abi not in ("numba", "c"):
        raise NotImplementedError("Unsupported ABI: %s" % abi)
    return ExternFunction(name, _signature(sig), _check_link(link), use_cooperative, abi,
                          signature_string(sig))


def _item_bytes(code):
    data = code.data
    if isinstance(data, str):
        data = data.encode()
    return bytes(data)


def link_items(link, cc):
    """The CompiledKernel.link tuple for the paths and LinkableCode objects `link` (in
    order, each code once: two declarations may name one file, whose definitions must
    not be linked twice) on a device of compute capability `cc`: (kind, name, bytes) per
    item, CUDA C compiled to PTX by NVRTC, PTX NUL-terminated as the driver reads it."""
    items, seen = [], set()
    for entry in link:
        code = LinkableCode.from_path_or_obj(entry)
        if not isinstance(code, LinkableCode):
            raise TypeError("link= takes file paths and LinkableCode objects, not %r" % (entry,))
        key = (code.kind, _item_bytes(code))
        if key in seen:
            continue
        seen.add(key)
        if code.kind == "ltoir":
            raise NotImplementedError("cannot link LTO-IR (%s): it needs nvJitLink, which gpujit does not use; link "
                                      "CUDA C, PTX, cubins, fatbins, objects or archives" % code.name)
        if code.kind == "cu":
            from .cudadrv import nvrtc
            ptx, _ = nvrtc.compile(code.data, code.name + ".cu", cc)
            items.append(("ptx", code.name, ptx.encode() + b"\0"))
        elif code.kind == "ptx":
            data = _item_bytes(code)
            items.append(("ptx", code.name, data if data.endswith(b"\0") else data + b"\0"))
        else:
            items.append((code.kind, code.name, _item_bytes(code)))
    return tuple(items)
