"""Compiling without launching, as numba.cuda.compiler: compile_ptx, compile and their
*_for_current_device forms. Each returns (code, return_type), the return type being one
of gpujit.types' objects. None of them needs a GPU or a driver.

A kernel (device=False) compiles to a PTX `.entry`; a device function (device=True) to a
`.visible .func` that takes its arguments by value and returns its value (func_retval0),
named after the Python function or abi_info['abi_name'], for linking with other code.
"""
import re

from . import _core, types
from .typing import signature_string

__all__ = ["compile", "compile_all", "compile_for_current_device", "compile_ptx", "compile_ptx_for_current_device"]

_ABIS = ("numba", "c")
_OUTPUTS = ("ptx", "ltoir")


class KernelReturnError(_core.TypingError, TypeError):
    """A kernel that returns a value: a TypingError, and the TypeError numba raises."""


def _type_of_name(name):
    """The gpujit.types object of a type as the compiler spells it ('float32',
    'UniTuple(int64 x 2)', 'Tuple(int32, float64)', 'none')."""
    name = name.strip()
    if name in ("none", "void"):
        return types.void
    if name.endswith("*"):
        return types.CPointer(_type_of_name(name[:-1]))
    for t in types.NUMBERS.values():
        if t.name == name:
            return t
    m = re.fullmatch(r"(\w+)\[([:, 1]*)\]", name)
    if m:
        dims = [d.strip() for d in m.group(2).split(",")]
        layout = "C" if dims[-1] == "::1" else "F" if dims[0] == "::1" else "A"
        return types.Array(_type_of_name(m.group(1)), len(dims), layout)
    m = re.fullmatch(r"UniTuple\((.*) x (\d+)\)", name)
    if m:
        return types.UniTuple(_type_of_name(m.group(1)), int(m.group(2)))
    m = re.fullmatch(r"Tuple\((.*)\)", name)
    if m:
        items, depth, start = [], 0, 0
        body = m.group(1)
        for i, ch in enumerate(body):
            depth += ch in "([" and 1 or ch in ")]" and -1 or 0
            if ch == "," and depth == 0:
                items.append(body[start:i])
                start = i + 1
        items.append(body[start:])
        return types.Tuple([_type_of_name(s) for s in items if s.strip()])
    return types.Type(name)


def _launch_bounds(launch_bounds):
    """numba's launch_bounds: max threads per block, or a tuple of (max threads per
    block[, min blocks per multiprocessor[, max blocks per cluster]])."""
    if launch_bounds is None:
        return ()
    lb = tuple(launch_bounds) if isinstance(launch_bounds, (tuple, list)) else (launch_bounds,)
    if len(lb) > 3:
        raise ValueError("Got %d launch bounds: %s; at most 3 are allowed (max threads per block, "
                         "min blocks per multiprocessor, max blocks per cluster)" % (len(lb), lb))
    for v in lb:
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError("launch bounds are positive ints, not %r" % (v,))
    return lb


def _given(**kw):
    """The options that differ from the compiler's defaults (so a compilation's record, as
    scripts/ptx_snapshot.py keys kernels, names only what was asked for)."""
    return {k: v for k, v in kw.items() if v}


def _opt_given(opt):
    """_core.compile's opt=False for numba's opt=False (no optimisation), else nothing."""
    return {"opt": False} if opt is not None and not opt else {}


# The options of compile(), compile_all() and compile_ptx(), written once: each docstring ends with it.
_OPTIONS_DOC = """
    pyfunc        the Python function (or a @jit kernel or device function: its py_func)
    sig           the signature: "float32(float32, int32)", types called, or a tuple of
                  argument types
    debug         True: check array indices and division by zero, and report exceptions
    lineinfo      True: map the PTX to the Python lines (.loc directives)
    device        True: a device function; False: a kernel (its return type void)
    fastmath      True: fast, less precise float operations
    cc            the compute capability, (major, minor) or numba's (9, 0, 'a'); default 9.0
    opt           False: compile without optimisation (locals stay in memory, no FMA
                  contraction), as numba's
    abi           'c' (device functions only) or 'numba': both give a function that
                  returns its value
    abi_info      {'abi_name': name} names the function
    output        'ptx'; 'ltoir' (NVVM's LTO-IR) raises NotImplementedError
    forceinline   accepted, no effect (a device function compiled on its own is a
                  function for others to call); True needs output='ltoir', as numba's
    launch_bounds a kernel's .maxntid (an int) and optionally .minnctapersm and
                  .maxclusterrank (a tuple of up to 3 ints)
    boundscheck   check array indices (default: as debug)
"""


def compile(pyfunc, sig, debug=None, lineinfo=False, device=True, fastmath=False, cc=None, opt=None, abi="c",
            abi_info=None, output="ptx", forceinline=False, launch_bounds=None, boundscheck=None):
    """Compile `pyfunc` for signature `sig` to `output` ('ptx'). Returns (code, return_type).
    A device function with the C ABI by default."""
    if abi not in _ABIS:
        raise NotImplementedError("Unsupported ABI: %s" % abi)
    if abi == "c" and not device:
        raise NotImplementedError("The C ABI is not supported for kernels")
    if output not in _OUTPUTS:
        raise NotImplementedError("Unsupported output type: %s" % output)
    if forceinline and output != "ltoir":
        raise ValueError("Can only designate forced inlining in LTO-IR output (output='ltoir'); "
                         "a PTX function is inlined by its caller's compiler")
    if output == "ltoir":
        raise NotImplementedError("output='ltoir' is NVVM's LTO-IR, which gpujit (compiling with LLVM) "
                                  "does not produce: use output='ptx'")
    pyfunc = getattr(pyfunc, "py_func", pyfunc)
    if not hasattr(pyfunc, "__code__"):
        raise TypeError("compile() takes a Python function, not %s" % type(pyfunc).__name__)
    name = (abi_info or {}).get("abi_name")
    if name is not None and not isinstance(name, str):
        raise TypeError("abi_info['abi_name'] must be a str, not %s" % type(name).__name__)
    bounds = _launch_bounds(launch_bounds)
    sig = signature_string(sig)
    debug = bool(debug)
    try:
        k = _core.compile(pyfunc.__code__, pyfunc.__globals__, pyfunc.__closure__, sig, target="cuda",
                          cc=(9, 0) if cc is None else cc, fastmath=fastmath, lineinfo=lineinfo, debug=debug,
                          boundscheck=debug if boundscheck is None else bool(boundscheck), device=bool(device),
                          **_given(name=name, launch_bounds=bounds), **_opt_given(opt))
    except _core.TypingError as e:
        if not device and "cannot return a value" in str(e):
            err = KernelReturnError(*e.args)
            err.__dict__.update(e.__dict__)   # filename, lineno, ...
            raise err from None
        raise
    return k.ptx, _type_of_name(k.restype)


def compile_all(pyfunc, sig, debug=None, lineinfo=False, device=True, fastmath=False, cc=None, opt=None, abi="c",
                abi_info=None, output="ltoir", forceinline=False, launch_bounds=None):
    """As compile(), but returns ([code], return_type): the function's code. The files of
    the declared external functions it calls (gpujit.linking) are linked when a kernel
    calling it loads, not returned here. output='ltoir', numba's default here, is refused
    as in compile(): pass output='ptx'."""
    code, resty = compile(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device, fastmath=fastmath, cc=cc,
                          opt=opt, abi=abi, abi_info=abi_info, output=output, forceinline=forceinline,
                          launch_bounds=launch_bounds)
    return [code], resty


def compile_ptx(pyfunc, sig, debug=None, lineinfo=False, device=False, fastmath=False, cc=None, opt=None,
                abi="numba", abi_info=None, forceinline=False, launch_bounds=None, boundscheck=None):
    """PTX of `pyfunc` for signature `sig`: (ptx, return_type). A kernel by default
    (device=False), with numba's ABI."""
    return compile(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device, fastmath=fastmath, cc=cc, opt=opt,
                   abi=abi, abi_info=abi_info, output="ptx", forceinline=forceinline,
                   launch_bounds=launch_bounds, boundscheck=boundscheck)


def _current_cc():
    from .dispatcher import _current_target, _target_cc
    return _target_cc(_current_target())


def compile_for_current_device(pyfunc, sig, debug=None, lineinfo=False, device=True, fastmath=False, opt=None,
                               abi="c", abi_info=None, output="ptx", forceinline=False, launch_bounds=None,
                               boundscheck=None):
    """compile() for the current device's compute capability (sm_90 on the CPU target)."""
    return compile(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device, fastmath=fastmath, cc=_current_cc(),
                   opt=opt, abi=abi, abi_info=abi_info, output=output, forceinline=forceinline,
                   launch_bounds=launch_bounds, boundscheck=boundscheck)


def compile_ptx_for_current_device(pyfunc, sig, debug=None, lineinfo=False, device=False, fastmath=False, opt=None,
                                   abi="numba", abi_info=None, forceinline=False, launch_bounds=None,
                                   boundscheck=None):
    """compile_ptx() for the current device's compute capability (sm_90 on the CPU target)."""
    return compile_ptx(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device, fastmath=fastmath,
                       cc=_current_cc(), opt=opt, abi=abi, abi_info=abi_info, forceinline=forceinline,
                       launch_bounds=launch_bounds, boundscheck=boundscheck)


def _document_options(f):
    """f's docstring followed by the entries of _OPTIONS_DOC that name its parameters."""
    params = f.__code__.co_varnames[:f.__code__.co_argcount]
    entries = re.split(r"\n(?=    [a-z_]+ )", _OPTIONS_DOC.strip("\n"))
    f.__doc__ += "\n\n" + "\n".join(e for e in entries if e.split()[0] in params) + "\n"


for _f in (compile, compile_all, compile_ptx, compile_for_current_device, compile_ptx_for_current_device):
    _document_options(_f)
del _f
