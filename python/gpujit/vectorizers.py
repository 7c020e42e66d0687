"""NumPy-style ufuncs on the device: gpujit.vectorize and gpujit.guvectorize
(numba.cuda's, also numba.vectorize(..., target='cuda')).

    @gpujit.vectorize(['float32(float32, float32)', 'float64(float64, float64)'])
    def add(a, b):
        return a + b

    add(x, y)               # NumPy arrays in, a NumPy array out
    add(dx, 2.0, out=dz)    # device arrays stay on the device; scalars broadcast

The element function is compiled as a device function into a kernel generated
here as Python source (one thread per output element) and compiled by
gpujit.jit like any kernel; kernels are cached per element types, per which
arguments are scalars and per number of dimensions. Arguments broadcast as
NumPy's do, by zero strides, on the device, without copies.

A gufunc ('(m,n),(n,p)->(m,p)') runs its function once per element of the
loop dimensions, each call getting views of its arguments' core dimensions;
deviceufunc.GUFuncEngine works out those dimensions.
"""
import collections
import linecache
import math
import warnings

import numpy as np

from . import _core
from . import typing as _typing
from .devicearray import DeviceArray, _alloc, _kept_stream
from .deviceufunc import GUFuncEngine, broadcast_shapes
from .numba_interop import from_numba
from .types import Signature, Type
from .typing import contiguous_as, dtype_name, parse_signature, signature_string

__all__ = ["vectorize", "guvectorize", "DeviceUFunc", "DeviceGUFunc", "CUDAVectorize", "CUDAGUFuncVectorize"]

_IDENTITIES = (0, 1, None, "reorderable")


# -- arguments --------------------------------------------------------------------------------
def _is_device_array(obj):
    if isinstance(obj, _core.DeviceArrayBase):
        return True
    try:
        return getattr(obj, "__cuda_array_interface__", None) is not None
    except Exception:
        return False


def _as_device_array(obj):
    if isinstance(obj, _core.DeviceArrayBase):
        return obj
    from .devicearray import as_cuda_array
    return as_cuda_array(obj)


def _is_scalar(obj):
    return isinstance(obj, (bool, int, float, complex, np.generic)) or (isinstance(obj, np.ndarray) and obj.ndim == 0)


def _scalar_dtype(value):
    return np.asarray(value).dtype


def _np_dtype(name):
    return np.dtype("bool" if name == "bool" else name)


def _type_name(dtype):
    return dtype_name(dtype)


def _view(dary, shape, strides):
    """A view of a device array with another shape and strides over its memory (zero
    strides repeat an element: broadcasting)."""
    return dary._view(tuple(shape), tuple(strides), dary._ptr)


def _broadcast_view(dary, shape):
    """dary seen as `shape` (NumPy broadcasting: missing leading and length-1 axes get
    stride 0)."""
    if tuple(dary.shape) == tuple(shape):
        return dary
    lead = len(shape) - dary.ndim
    strides = [0] * lead + [0 if n == 1 and m != 1 else s for n, m, s in zip(dary.shape, shape[lead:], dary.strides)]
    return _view(dary, shape, strides)




def _stream_sync(stream):
    if stream:
        from .cudadrv import Stream
        (stream if isinstance(stream, _core.Stream) else Stream(_core.stream_handle(stream))).synchronize()


def _check_options(kind, options):
    """numba's option checks: nopython is accepted (it is the only mode), cache and the
    rest are refused."""
    opts = dict(options)
    if kind == "vectorize":
        if "nopython" in opts:
            opts.pop("nopython")
            warnings.warn("nopython kwarg for cuda target is redundant", RuntimeWarning, stacklevel=4)
        if opts.pop("cache", False):
            raise TypeError("caching is not supported")
        for k in opts:
            raise KeyError("Unrecognized options. cuda vectorize target does not support option: %r" % k)
    else:
        if not opts.pop("nopython", True):
            raise TypeError("nopython flag must be True")
        if opts.pop("cache", False):
            raise TypeError("caching is not supported")
        if opts.pop("writable_args", ()):
            raise TypeError("writable_args are not supported")
        if opts:
            raise TypeError("The following target options are not supported: %s"
                            % ", ".join(repr(k) for k in opts))


def _check_target(target):
    if target not in ("cuda", "gpu"):
        raise ValueError("Unsupported target: %r (gpujit's ufuncs run on its device: target='cuda')" % (target,))


# -- kernel generation ------------------------------------------------------------------------
def _exec_source(src, filename, glbls, name):
    """Define the generated function `name` from src; its lines are registered with
    linecache so compile errors show them."""
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(compile(src, filename, "exec"), glbls)
    return glbls[name]


def _symbol(pyfunc):
    name = getattr(pyfunc, "__name__", "ufunc")
    return name if name.isidentifier() else "ufunc"


def _core_function(pyfunc):
    """What a generated kernel calls: the function itself (a plain Python function or a
    gpujit.jit(device=True) one), compiled into the kernel as a device function."""
    from .dispatcher import DeviceFunction, Dispatcher
    if isinstance(pyfunc, Dispatcher):
        raise TypeError("%s is a kernel (gpujit.jit): vectorize a plain function or a device function"
                        % pyfunc.__name__)
    if not (isinstance(pyfunc, DeviceFunction) or callable(pyfunc) and hasattr(pyfunc, "__code__")):
        raise TypeError("vectorize decorates a Python function, not %s" % type(pyfunc).__name__)
    return pyfunc


def _result_type(core, argtypes):
    """The type the element function returns for these argument types, found by
    compiling a probe kernel that stores the result in a local (its type is in the
    kernel's types report)."""
    import gpujit
    args = ", ".join("a%d" % i for i in range(len(argtypes)))
    src = "def __probe__(%s):\n    __result__ = __core__(%s)\n" % (args, args)
    fn = _exec_source(src, "<gpujit vectorize probe %s>" % _symbol(core), {"__core__": core, "__gj__": gpujit},
                      "__probe__")
    k = _core.compile(fn.__code__, fn.__globals__, None, "void(%s)" % ", ".join(argtypes), target="cuda", cc=(9, 0),
                      fastmath=False, lineinfo=False, debug=False, boundscheck=False)
    for line in k.types.splitlines():
        parts = line.split(None, 3)
        if len(parts) == 4 and parts[2] == "__result__":
            return parts[3].strip()
    raise TypeError("%s returns nothing for (%s): a vectorized function returns a number"
                    % (_symbol(core), ", ".join(argtypes)))


def _jit(fn, sig):
    from .dispatcher import Dispatcher
    return Dispatcher(fn, [sig])


# A GPU block of a generated elementwise kernel holds at most this many threads: on the H200,
# a*x+y over 2^27 float32 ran at 2954 GB/s in the 1024-thread blocks the occupancy query
# suggests and at 3379 GB/s in blocks of 256 (the hand-written kernel's 3380).
_GPU_MAX_BLOCK = 256


def _block_size(kernel, args):
    """The block size of a generated kernel (one signature) on the current device: full
    occupancy's, asked of the driver once per kernel and device, at most _GPU_MAX_BLOCK
    on a GPU."""
    sizes = getattr(kernel, "_block_sizes", None)
    if sizes is None:
        sizes = kernel._block_sizes = {}
    key = (_core.get_target(), _core.current_device())
    tpb = sizes.get(key)
    if tpb is None:
        tpb = _core.max_potential_block(kernel._specialize(args), 0)[1]
        if key[0] == "cuda":
            tpb = min(tpb, _GPU_MAX_BLOCK)
        sizes[key] = tpb
    return tpb


def _launch(kernel, n, stream, args):
    """n threads, one per element, in blocks sized for occupancy (a grid of few blocks
    warns, config.CUDA_LOW_OCCUPANCY_WARNINGS, at the caller's line, as any launch does).
    Returns the grid (blocks, threads per block)."""
    if n:
        tpb = _block_size(kernel, args)
        blocks = (n + tpb - 1) // tpb
        kernel[blocks, tpb, stream](*args)
        return blocks, tpb
    return 0, 0


_SM_COUNTS = {}     # CUDA device -> multiprocessors (asked of the driver once)


def sm_count():
    """The current device's multiprocessor count, without building a Device per call."""
    if _core.get_target() != "cuda":
        from .cudadrv import get_current_device
        return get_current_device().multiprocessor_count
    dev = _core.current_device()
    n = _SM_COUNTS.get(dev)
    if n is None:
        n = _SM_COUNTS[dev] = _core.device_info(dev)["multiprocessor_count"]
    return n


def _to_device(host, stream):
    """A host argument copied to the device; config.CUDA_WARN_ON_IMPLICIT_COPY warns on a GPU
    (at the caller's line, as the launcher does for a kernel's host arguments)."""
    from .devicearray import to_device
    _core.DispatcherBase._warn_implicit_copy()
    return to_device(host, stream=stream)


# -- vectorize's fast path ---------------------------------------------------------------------
# A call whose arrays are all gpujit device arrays of one shape (and whose other arguments
# are scalars of a fixed dtype) repeats everything the previous such call decided: the loop,
# the kernel, the grid, the scalars' casts. Its key holds what those decisions read: the
# target and device, each array's dtype, shape and strides, each scalar's type.
_PLANS_KEPT = 256
_INT64 = (-(1 << 63), 1 << 63)
_FAST_SCALARS = frozenset([bool, float, complex] + [np.dtype(name).type for name in _core.dtype_codes
                                                    if name not in _typing._ML_DTYPES])


def _fast_key(args, out):
    """The fast path's key for a call, or None where the call must take the full path
    (host arrays, other libraries' arrays, 0-d arrays, ints beyond int64, no device array:
    the result then goes back to the host)."""
    key = [_core.get_target(), _core.current_device()]
    device = False
    for a in args:
        if isinstance(a, _core.DeviceArrayBase):
            key.append((a._dtype_code, a.shape, a.strides))
            device = True
        else:
            t = type(a)
            if t in _FAST_SCALARS or t is int and _INT64[0] <= a < _INT64[1]:
                key.append(t)
            else:
                return None
    if out is None:
        if not device:
            return None
        key.append(None)
    elif isinstance(out, _core.DeviceArrayBase):
        key.append((out._dtype_code, out.shape, out.strides))
    else:
        return None
    return tuple(key)


class _Plan:
    __slots__ = ("kernel", "blocks", "tpb", "casts", "flat", "size", "shape", "nbytes", "code")

    def __init__(self, kernel, blocks, tpb, casts, flat, size, shape, dtype):
        from .devicearray import _dtype_code
        self.kernel, self.blocks, self.tpb, self.casts, self.flat = kernel, blocks, tpb, casts, flat
        self.size, self.shape, self.nbytes, self.code = size, shape, size * dtype.itemsize, _dtype_code(dtype)


def _run_plan(plan, args, out, stream):
    kargs = list(args)
    for i, cast in plan.casts:
        kargs[i] = cast(kargs[i])
    if out is None:
        # a new C-contiguous array (DeviceArray's constructor, its checks done once)
        out = DeviceArray.__new__(DeviceArray)
        mem = _alloc(plan.nbytes)
        _core.DeviceArrayBase.__init__(out, plan.shape, None, plan.code, mem, mem.ptr, stream=_kept_stream(stream))
    kargs.append(out)
    if plan.flat:
        size = plan.size
        kargs = [a._view((size,), (a.itemsize,), a._ptr) if isinstance(a, _core.DeviceArrayBase) else a
                 for a in kargs]
    plan.kernel[plan.blocks, plan.tpb, stream](*kargs)
    return out


# -- vectorize ------------------------------------------------------------------------------
def _init_function(self, pyfunc, identity):
    """What a ufunc and a gufunc take from their scalar function, and the identity check."""
    if identity not in _IDENTITIES:
        raise ValueError("Invalid identity value %r" % (identity,))
    self.py_func = pyfunc
    self._core = _core_function(pyfunc)
    self.__name__ = _symbol(pyfunc)
    self.__qualname__ = getattr(pyfunc, "__qualname__", self.__name__)
    self.__doc__ = getattr(pyfunc, "__doc__", None)
    self.identity = identity


class DeviceUFunc:
    """A ufunc made by gpujit.vectorize: call it on arrays (NumPy or device), scalars and
    anything np.asarray takes; out=, stream=; .reduce() for binary ones."""

    def __init__(self, pyfunc, sigs=(), identity=None):
        _init_function(self, pyfunc, identity)
        self._sigs = list(sigs)
        self._types = collections.OrderedDict()  # (arg dtypes) -> result dtype
        self._kernels = {}                       # (arg dtypes, scalar mask, ndim) -> Dispatcher
        self._plans = {}                         # _fast_key(args, out) -> _Plan
        self.nin = None
        for s in self._sigs:
            self._add(s)
        self._lazy = not self._types

    def __repr__(self):
        return "<gpujit ufunc %s>" % self.__qualname__

    def __reduce__(self):
        from .serialize import dumps_function
        return (_rebuild_ufunc, (dumps_function(self.py_func), self._sigs, self.identity))

    @property
    def pyfunc(self):
        return self.py_func

    @property
    def nout(self):
        return 1

    @property
    def nargs(self):
        return None if self.nin is None else self.nin + 1

    @property
    def types(self):
        """NumPy's spelling of the loops: 'ff->f'."""
        return ["%s->%s" % ("".join(d.char for d in k), v.char) for k, v in self._types.items()]

    @property
    def ntypes(self):
        return len(self._types)

    def _set_nin(self, n):
        if self.nin is None:
            self.nin = n
        elif self.nin != n:
            raise TypeError("%s: every signature of a ufunc takes the same number of arguments (%d, not %d)"
                            % (self.__name__, self.nin, n))

    def _add(self, sig):
        ret, args = parse_signature(signature_string(sig))
        for a in args:
            if a[1] != "scalar":
                raise TypeError("%s: vectorize takes signatures of scalars, not %s" % (self.__name__, a[0]))
        if not args:
            raise TypeError("%s: a ufunc takes at least one argument" % self.__name__)
        names = [a[2] for a in args]
        if ret is None:
            res = _result_type(self._core, names)
        elif ret[1] != "scalar":
            raise TypeError("%s: a vectorized function returns a number, not %s" % (self.__name__, ret[0]))
        else:
            res = ret[2]
        try:
            self._set_nin(len(args))
            key = tuple(_np_dtype(n) for n in names)
            self._types[key] = _np_dtype(res)
        except TypeError as e:
            raise TypeError("%s: %s" % (self.__name__, e)) from None

    def _kernel(self, argdtypes, scalars, ndim, unit=False):
        key = (argdtypes, scalars, ndim, unit)
        k = self._kernels.get(key)
        if k is None:
            k = self._kernels[key] = self._make_kernel(argdtypes, self._types[argdtypes], scalars, ndim, unit)
        return k

    def _make_kernel(self, argdtypes, resdtype, scalars, ndim, unit=False):
        import gpujit
        name = _symbol(self.py_func)
        params = ["a%d" % i for i in range(len(argdtypes))]
        idx = ", ".join("__i%d__" % d for d in range(ndim)) if ndim > 1 else "__t__"
        lines = ["def __vectorized_%s(%s, __out__):" % (name, ", ".join(params)),
                 "    __t__ = __gj__.grid(1)",
                 "    if __t__ < __out__.size:"]
        if ndim > 1:
            # the element's index in C order from the thread's number
            lines.append("        __r__ = __t__")
            for d in range(ndim - 1, 0, -1):
                lines.append("        __i%d__ = __r__ %% __out__.shape[%d]" % (d, d))
                lines.append("        __r__ = __r__ // __out__.shape[%d]" % d)
            lines.append("        __i0__ = __r__")
        items = [p if s else "%s[%s]" % (p, idx) for p, s in zip(params, scalars)]
        lines.append("        __out__[%s] = __core__(%s)" % (idx, ", ".join(items)))
        src = "\n".join(lines) + "\n"
        fn = _exec_source(src, "<gpujit vectorize %s>" % name, {"__gj__": gpujit, "__core__": self._core},
                          "__vectorized_%s" % name)
        arr = "[::1]" if unit else "[%s]" % ", ".join([":"] * ndim)
        sig = "void(%s)" % ", ".join([_type_name(d) + ("" if s else arr) for d, s in zip(argdtypes, scalars)] +
                                     [_type_name(resdtype) + arr])
        return _jit(fn, sig)

    # -- calls --
    def _resolve(self, dtypes, scalar_values):
        """The loop (argument dtypes) for a call: numba's rule. Arrays must match a
        signature exactly; scalars first exactly, else by casting."""
        if self._lazy:
            key = tuple(dtypes)
            if key not in self._types:
                res = _result_type(self._core, [_type_name(d) for d in key])
                if res not in dict(_core.dtype_codes):
                    raise TypeError("%s returns %s for (%s): a vectorized function returns a number"
                                    % (self.__name__, res, ", ".join(map(str, key))))
                self._types[key] = _np_dtype(res)
            return key
        matches = []
        if scalar_values:
            matches = [k for k in self._types if tuple(k) == tuple(dtypes)]
        if not matches:
            matches = [k for k in self._types
                       if all(i in scalar_values or f == a for i, (f, a) in enumerate(zip(k, dtypes)))]
        if not matches:
            raise TypeError("No matching version for %s(%s): the ufunc's arrays must have exactly the types of a "
                            "signature (%s), as a NumPy ufunc with casting='no'"
                            % (self.__name__, ", ".join(map(str, dtypes)), "; ".join(self.types)))
        if len(matches) > 1:
            raise TypeError("Failed to resolve ufunc due to ambiguous signature: scalar arguments fit more than "
                            "one of %s; pass NumPy scalars (np.float32(x)) to choose" % "; ".join(self.types))
        return matches[0]

    def __call__(self, *args, out=None, stream=0, **kws):
        # the fast path: device arrays of the same shape (and scalars) as a call seen before
        key = None if kws else _fast_key(args, out)
        if key is not None:
            plan = self._plans.get(key)
            if plan is not None:
                return _run_plan(plan, args, out, stream)
        return self._call(args, out, stream, kws, key)

    def _call(self, args, out, stream, kws, fast_key):
        from .devicearray import device_array
        if kws:
            raise TypeError("%s() got unexpected keyword arguments: %s" % (self.__name__, ", ".join(sorted(kws))))
        if self.nin is not None and len(args) != self.nin:
            raise TypeError("%s() takes %d argument%s (%d given)"
                            % (self.__name__, self.nin, "" if self.nin == 1 else "s", len(args)))
        if not args:
            raise TypeError("%s() takes at least one argument" % self.__name__)
        on_device = False
        values, dtypes, scalars = [], [], set()
        for i, a in enumerate(args):
            if _is_device_array(a):
                a = _as_device_array(a)
                on_device = True
            elif _is_scalar(a):
                scalars.add(i)
            else:
                a = np.asarray(a)
            values.append(a)
            dtypes.append(_scalar_dtype(a) if i in scalars else np.dtype(a.dtype))
        key = self._resolve(dtypes, scalars)
        resdtype = self._types[key]

        shapes = [tuple(v.shape) for i, v in enumerate(values) if i not in scalars]
        dev_out = None
        if out is not None:
            if _is_device_array(out):
                dev_out = _as_device_array(out)
                if dev_out.dtype != resdtype:
                    raise TypeError("%s: out= has dtype %s, the result is %s (a device array is not cast)"
                                    % (self.__name__, dev_out.dtype, resdtype))
            elif not isinstance(out, np.ndarray):
                raise TypeError("%s: out= must be an array, not %s" % (self.__name__, type(out).__name__))
        shape = broadcast_shapes(*shapes)
        if out is None and any(not isinstance(values[i], np.ndarray) for i in scalars):
            # a scalar is an array of one element, as in numba: scalars alone give an array of one
            shape = broadcast_shapes(shape, (1,))
        if out is not None:
            oshape = tuple((dev_out if dev_out is not None else out).shape)  # a CAI exporter may have none
            try:
                fits = broadcast_shapes(shape, oshape) == oshape
            except ValueError:
                fits = False
            if not fits:
                raise ValueError("%s: out= has shape %s, the arguments broadcast to %s"
                                 % (self.__name__, oshape, shape))
            shape = oshape

        size = math.prod(shape)
        kshape = shape or (1,)
        if dev_out is None:
            dev_out = device_array(kshape, dtype=resdtype, stream=stream)
        elif not shape:
            dev_out = _view(dev_out, (1,), (dev_out.itemsize,))
        kargs = []
        for i, (v, d) in enumerate(zip(values, key)):
            if i in scalars:
                kargs.append(d.type(v))
                continue
            if not _is_device_array(v):
                v = _to_device(v if v.dtype == d else v.astype(d), stream)
            kargs.append(_broadcast_view(v, kshape))
        kargs.append(dev_out)
        arrays = [a for a in kargs if not isinstance(a, np.generic)]
        ndim = len(kshape)
        for order in ("C", "F"):
            if ndim > 1 and all(contiguous_as(a.shape, a.strides, a.itemsize, order) for a in arrays):
                # one contiguous run: a 1-D kernel over it (no index arithmetic)
                kargs = [a if isinstance(a, np.generic) else _view(a, (size,), (a.itemsize,)) for a in kargs]
                ndim = 1
                break
        # all of them one unit-stride run: the kernel indexes without a stride multiply
        unit = ndim == 1 and all(a.strides[0] == a.itemsize for a in kargs if not isinstance(a, np.generic))
        kernel = self._kernel(key, tuple(i in scalars for i in range(len(values))), ndim, unit)
        blocks, tpb = _launch(kernel, size, stream, kargs)
        if fast_key is not None and size and all(i in scalars or tuple(v.shape) == kshape
                                                  for i, v in enumerate(values)):
            # what this call decided, for the next call with the same key
            if len(self._plans) >= _PLANS_KEPT:
                self._plans.clear()
            self._plans[fast_key] = _Plan(kernel, blocks, tpb, tuple((i, key[i].type) for i in sorted(scalars)),
                                          len(kshape) > 1 and ndim == 1, size, kshape, resdtype)

        if out is not None:
            if isinstance(out, np.ndarray):
                host = dev_out.copy_to_host(stream=stream)
                _stream_sync(stream)
                out[...] = host.reshape(shape)
                return out
            return _as_device_array(out)
        if not shape:
            host = dev_out.copy_to_host(stream=stream)
            _stream_sync(stream)
            return host[0]
        if on_device:
            return dev_out
        host = dev_out.copy_to_host(stream=stream)
        _stream_sync(stream)
        return host

    def reduce(self, arg, stream=0):
        """Reduce a 1-D array along its axis with this binary ufunc (gpujit.Reduce's one
        launch, without an initial value): the function must be associative and
        commutative."""
        if self.nin not in (None, 2):
            raise TypeError("reduce needs a binary ufunc; %s takes %d argument%s"
                            % (self.__name__, self.nin, "" if self.nin == 1 else "s"))
        dev = _is_device_array(arg)
        a = _as_device_array(arg) if dev else np.asarray(arg)
        if a.ndim != 1:
            raise TypeError("%s.reduce takes a 1-D array, not %d-D" % (self.__name__, a.ndim))
        n = a.shape[0]
        if n == 0:
            raise TypeError("Reduction on an empty array.")
        dt = np.dtype(a.dtype)
        key = self._resolve([dt, dt], set())
        if self._types[key] != dt:
            raise TypeError("%s.reduce on %s: its loop for (%s, %s) returns %s, not %s"
                            % (self.__name__, dt, dt, dt, self._types[key], dt))
        reducer = self.__dict__.get("_reducer")
        if reducer is None:
            from .reduction import Reduce
            reducer = self._reducer = Reduce(self._core)
            reducer._with_init = False
        return reducer(a, stream=stream)


def _rebuild_ufunc(pyfunc, sigs, identity):
    from .serialize import loads_function
    return DeviceUFunc(loads_function(pyfunc), sigs, identity)


def vectorize(ftylist_or_function=(), target="cuda", identity=None, **options):
    """@vectorize(signatures) or @vectorize: make a ufunc from a scalar function.
    ftylist_or_function: the signatures ('float32(float32, float32)', or
    float32(float32, float32), or a list of them), whose loops are then those; or the
    function, whose loops are compiled for each new set of argument types.
    target: 'cuda' (numba's name; the ufunc runs on the current target); identity: the
    ufunc's identity, for reduce; options: numba's other options, `nopython` (accepted,
    with a warning) and `cache` (refused); another is a KeyError."""
    _check_target(target)
    _check_options("vectorize", options)
    if callable(ftylist_or_function) and not isinstance(ftylist_or_function, (str, list, tuple, Signature)):
        return DeviceUFunc(ftylist_or_function, (), identity)
    sigs = _signatures(ftylist_or_function)

    def wrap(func):
        return DeviceUFunc(func, sigs, identity)
    return wrap


def _signatures(sigs):
    """A decorator's signatures argument as a list: one signature (a string, a
    Signature, a tuple of argument types) or a list of them, in gpujit's types or numba's."""
    if sigs is None:
        return []
    sigs = from_numba(sigs)
    if isinstance(sigs, (str, Signature)) or (isinstance(sigs, tuple) and sigs and
                                              all(isinstance(t, Type) for t in sigs)):
        return [sigs]
    if isinstance(sigs, (list, tuple)):
        return list(sigs)
    raise TypeError("signatures are a list of signatures such as 'float32(float32, float32)', not %r" % (sigs,))


# -- guvectorize ------------------------------------------------------------------------------
class DeviceGUFunc:
    """A generalized ufunc made by gpujit.guvectorize."""

    # a kernel naming one gets numba's typing error (the compiler reads this)
    __gpujit_untyped__ = ("a gufunc (gpujit.guvectorize) is launched from the host, not called in kernels; "
                          "a kernel calls its Python function as a device function")

    def __init__(self, pyfunc, layout, sigs=(), identity=None):
        _init_function(self, pyfunc, identity)
        self.layout = layout
        self.engine = GUFuncEngine.from_signature(layout)
        self.nin, self.nout = self.engine.nin, self.engine.nout
        self._sigs = list(sigs)
        self._types = collections.OrderedDict()  # input dtypes -> (kernel argument types, output dtypes)
        self._kernels = {}
        for s in self._sigs:
            self._add(s)

    def __repr__(self):
        return "<gpujit gufunc %s %s>" % (self.__qualname__, self.layout)

    def __reduce__(self):
        from .serialize import dumps_function
        return (_rebuild_gufunc, (dumps_function(self.py_func), self.layout, self._sigs, self.identity))

    @property
    def pyfunc(self):
        return self.py_func

    @property
    def signature(self):
        return self.layout

    @property
    def nargs(self):
        return self.nin + self.nout

    def _add(self, sig):
        s = signature_string(sig)
        ret, args = parse_signature(s)
        if ret is not None and ret[1] != "none":
            raise TypeError("guvectorized functions cannot return values: signature %s specifies %s return type"
                            % (s, ret[0]))
        if len(args) != self.nargs:
            raise TypeError("%s: signature %s has %d arguments, the layout %r %d"
                            % (self.__name__, s, len(args), self.layout, self.nargs))
        core = self.engine.sin + self.engine.sout
        kinds = []
        for i, (a, dims) in enumerate(zip(args, core)):
            name, kind, dt, nd = a[0], a[1], a[2], a[3]
            if kind == "scalar" and not dims and i < self.nin:
                kinds.append(("scalar", dt))
            elif kind == "array" and nd == len(dims):
                kinds.append(("core", dt))
            elif kind == "array" and nd == 1 and not dims:
                kinds.append(("one", dt))   # a '()' core passed as a 1-element array
            else:
                raise TypeError("%s: argument %d of %s is %s but its core in %r has %d dimension%s"
                                % (self.__name__, i + 1, s, name, self.layout, len(dims),
                                   "" if len(dims) == 1 else "s"))
        dts = tuple(_np_dtype(k[1]) for k in kinds)
        self._types[dts[:self.nin]] = (tuple(kinds), dts[self.nin:])

    def _add_dynamic(self, given, inputs, outs):
        """A gufunc made from a layout alone (numba's dynamic gufunc): the loop for these
        inputs' and outputs' dtypes, compiled at its first call; the outputs must be given."""
        key = tuple(np.dtype(a.dtype) for a in inputs)
        if key in self._types:
            return
        if any(o is None for o in outs):
            raise TypeError("%s was made from its layout %r alone, without signatures: pass its output "
                            "array%s too (their dtypes and the inputs' choose the loop), or give signatures"
                            % (self.__name__, self.layout, "" if self.nout == 1 else "s"))
        core = self.engine.sin + self.engine.sout
        types = []
        for i, (a, dims) in enumerate(zip(list(inputs) + list(outs), core)):
            dt = dtype_name(np.dtype(a.dtype))
            if i < self.nin and not dims and _is_scalar(given[i]):
                types.append(dt)
            else:
                types.append("%s[%s]" % (dt, ", ".join([":"] * max(len(dims), 1))))
        self._add("void(%s)" % ", ".join(types))

    def _kernel(self, indtypes):
        k = self._kernels.get(indtypes)
        if k is None:
            k = self._kernels[indtypes] = self._make_kernel(self._types[indtypes][0])
        return k

    def _make_kernel(self, kinds):
        import gpujit
        name = _symbol(self.py_func)
        core = self.engine.sin + self.engine.sout
        params = ["a%d" % i for i in range(len(kinds))]
        items, types = [], []
        for p, (kind, dt), dims in zip(params, kinds, core):
            if kind == "scalar":
                items.append("%s[__t__]" % p)
                types.append("%s[:]" % dt)
            elif kind == "one":
                items.append("%s[__t__:__t__ + 1]" % p)
                types.append("%s[:]" % dt)
            else:
                items.append("%s[%s]" % (p, ", ".join(["__t__"] + [":"] * len(dims))))
                types.append("%s[%s]" % (dt, ", ".join([":"] * (len(dims) + 1))))
        src = ("def __gufunc_%s(%s):\n"
               "    __t__ = __gj__.grid(1)\n"
               "    if __t__ < %s.shape[0]:\n"
               "        __core__(%s)\n" % (name, ", ".join(params), params[-1], ", ".join(items)))
        fn = _exec_source(src, "<gpujit guvectorize %s>" % name, {"__gj__": gpujit, "__core__": self._core},
                          "__gufunc_%s" % name)
        return _jit(fn, "void(%s)" % ", ".join(types))

    def _resolve(self, indtypes):
        key = tuple(indtypes)
        if key in self._types:
            return key
        for k in self._types:
            if all(np.can_cast(have, want, "same_kind") for have, want in zip(key, k)):
                return k
        raise TypeError("no matching signature for %s(%s): it was compiled for %s"
                        % (self.__name__, ", ".join(map(str, key)),
                           "; ".join("(%s)" % ", ".join(map(str, k)) for k in self._types) or "no types"))

    def _loop_view(self, dary, outer, loopn, core_ndim):
        """dary (outer dims + core dims) seen as (loopn, core...): the outer dims merged
        into one, or repeated by a zero stride when the argument is pinned. None where
        its outer dims cannot merge into one stride."""
        shape, strides = tuple(dary.shape), tuple(dary.strides)
        k = len(shape) - core_ndim
        cshape, cstrides = shape[k:], strides[k:]
        if tuple(shape[:k]) != tuple(outer) or not outer:
            return _view(dary, (loopn,) + cshape, (0,) + cstrides)
        dims = [(n, s) for n, s in zip(shape[:k], strides[:k]) if n != 1]
        for (n0, s0), (n1, s1) in zip(dims, dims[1:]):
            if s0 != s1 * n1:
                return None
        return _view(dary, (loopn,) + cshape, ((dims[-1][1] if dims else 0),) + cstrides)

    def __call__(self, *args, out=None, stream=0, **kws):
        from .devicearray import device_array, to_device
        if kws:
            raise TypeError("%s() got unexpected keyword arguments: %s" % (self.__name__, ", ".join(sorted(kws))))
        nin, nout = self.nin, self.nout
        if out is None and len(args) not in (nin, nin + nout):
            def pos(n):
                return "%d positional argument%s" % (n, "" if n == 1 else "s")
            raise TypeError("This gufunc accepts %s (when providing input only) or %s (when providing input and "
                            "output). Got %s." % (pos(nin), pos(nin + nout), pos(len(args))))
        if out is not None and len(args) > nin:
            raise ValueError("cannot specify argument 'out' as both positional and keyword")
        if out is not None:
            outs = list(out) if isinstance(out, (tuple, list)) else [out]
            if len(outs) != nout:
                raise ValueError("%s has %d outputs; out= gives %d" % (self.__name__, nout, len(outs)))
        else:
            outs = list(args[nin:]) or [None] * nout
        inputs = []
        any_device = False
        for a in args[:nin]:
            if _is_device_array(a):
                inputs.append(_as_device_array(a))
                any_device = True
            else:
                inputs.append(np.asarray(a))
        if not self._sigs:
            self._add_dynamic(args[:nin], inputs, outs)
        key = self._resolve([np.dtype(a.dtype) for a in inputs])
        kinds, outdtypes = self._types[key]
        for i, (a, want) in enumerate(zip(inputs, key)):
            if a.dtype != want:
                if isinstance(a, np.ndarray):
                    inputs[i] = a.astype(want)
                else:
                    raise TypeError("argument %d of %s is a device array of %s where the signature takes %s: a "
                                    "compatible signature is possible by casting but %s does not support .astype()"
                                    % (i + 1, self.__name__, a.dtype, want, type(a).__name__))
        sched = self.engine.schedule([tuple(a.shape) for a in inputs])
        # another library's arrays (__cuda_array_interface__ only) as device arrays
        outs = [_as_device_array(o) if o is not None and not isinstance(o, np.ndarray) and _is_device_array(o) else o
                for o in outs]
        for o, shape, dt in zip(outs, sched.output_shapes, outdtypes):
            if o is not None and tuple(o.shape) != shape:
                raise ValueError("output shape mismatch: %s has shape %s, the call produces %s"
                                 % (self.__name__, tuple(o.shape), shape))
        dev_outs = [_as_device_array(o) if o is not None and _is_device_array(o) else None for o in outs]
        for o, dt in zip(dev_outs, outdtypes):
            if o is not None and o.dtype != dt:
                raise TypeError("%s: an output device array has dtype %s, the signature %s" % (self.__name__, o.dtype, dt))

        loopn = sched.loopn
        outer = sched.loopdims
        views, copies_back = [], []
        for a, dims in zip(inputs, sched.ishapes):
            d = a if not isinstance(a, np.ndarray) else _to_device(np.ascontiguousarray(a), stream)
            v = self._loop_view(d, outer, max(loopn, 1), len(dims))
            if v is None:   # a device view whose outer dims do not merge: a contiguous copy
                d = to_device(d.copy_to_host(stream=stream), stream=stream)
                v = self._loop_view(d, outer, max(loopn, 1), len(dims))
            views.append(v)
        results = []
        for o, shape, dims, dt in zip(dev_outs, sched.output_shapes, sched.oshapes, outdtypes):
            d = o
            if d is not None:
                v = self._loop_view(d, outer, max(loopn, 1), len(dims)) if d.ndim else None
                if v is None:
                    d = device_array(shape or (1,), dtype=dt, stream=stream)
                    copies_back.append((d, o))
                    v = self._loop_view(d, outer, max(loopn, 1), len(dims)) if shape else _view(d, (1,), (d.itemsize,))
            else:
                d = device_array(shape or (1,), dtype=dt, stream=stream)
                v = self._loop_view(d, outer, max(loopn, 1), len(dims)) if shape else _view(d, (1,), (d.itemsize,))
            results.append((d, shape))
            views.append(v)
        if loopn:
            kernel = self._kernel(key)
            _launch(kernel, loopn, stream, views)
        for tmp, o in copies_back:
            o.copy_to_device(tmp.reshape(o.shape) if o.shape else tmp, stream=stream)

        final = []
        to_host = not any_device and all(o is None or isinstance(o, np.ndarray) for o in outs)
        for (d, shape), o, dev in zip(results, outs, dev_outs):
            if dev is not None:
                final.append(dev)
            elif isinstance(o, np.ndarray) or to_host:
                host = d.copy_to_host(stream=stream)
                _stream_sync(stream)
                host = host.reshape(shape)
                if isinstance(o, np.ndarray):
                    o[...] = host
                    host = o
                final.append(host)
            else:
                final.append(d)
        return final[0] if len(final) == 1 else tuple(final)


def _rebuild_gufunc(pyfunc, layout, sigs, identity):
    from .serialize import loads_function
    return DeviceGUFunc(loads_function(pyfunc), layout, sigs, identity)


def guvectorize(*args, target="cuda", identity=None, **options):
    """@guvectorize(signatures, layout) or @guvectorize(layout): a generalized ufunc; the
    layout ('(m,n),(n,p)->(m,p)') names each argument's core dimensions, outputs last,
    and the function writes its outputs (a '()' output is a 1-element array). args: the
    signatures (optional) and the layout; target: 'cuda' (numba's name; the gufunc runs
    on the current target); identity: the identity, for reduce; options: numba's other
    options (`is_dynamic` accepted), refused as numba refuses them."""
    if len(args) == 1:
        sigs, layout = [], args[0]
    elif len(args) == 2:
        sigs, layout = args
    else:
        raise TypeError("guvectorize() takes one or two positional arguments (signatures, layout)")
    _check_target(target)
    options.pop("is_dynamic", None)
    _check_options("guvectorize", options)
    sigs = _signatures(sigs)

    def wrap(func):
        return DeviceGUFunc(func, layout, sigs, identity)
    return wrap


# -- numba's decorators, target='cuda' --------------------------------------------------------
class _NumbaBuilder:
    """What numba's ufunc decorators call on the builder they look up: add() per signature,
    then build_ufunc()."""

    @property
    def pyfunc(self):
        return self.py_func

    def add(self, sig=None):
        if sig is not None:
            self._sigs.extend(_signatures(sig))

    def disable_compile(self):
        """numba's call after the signatures given: a ufunc with signatures compiles no others."""


class CUDAVectorize(_NumbaBuilder):
    """What numba.vectorize(..., target='cuda') builds where numba.cuda is gpujit (the place
    mode): numba's decorator looks numba.cuda.vectorizers.CUDAVectorize up, makes one with
    (func, identity=, cache=, targetoptions=), add()s each signature, then calls build_ufunc(),
    which gives gpujit's ufunc (what gpujit.vectorize gives). Options are checked as
    gpujit.vectorize checks them."""

    def __init__(self, func, identity=None, cache=False, targetoptions=None):
        opts = dict(targetoptions or {})
        if cache:
            opts["cache"] = cache
        _check_options("vectorize", opts)
        self.py_func = func
        self.identity = identity
        self._sigs = []

    def build_ufunc(self):
        return DeviceUFunc(self.py_func, self._sigs, self.identity)


class CUDAGUFuncVectorize(_NumbaBuilder):
    """What numba.guvectorize(..., target='cuda') builds where numba.cuda is gpujit (the place
    mode), as CUDAVectorize for numba.vectorize: build_ufunc() gives gpujit's gufunc."""

    def __init__(self, func, sig, identity=None, cache=False, targetoptions=None, writable_args=()):
        opts = dict(targetoptions or {})
        opts.pop("is_dynamic", None)   # numba's, where only the layout is given
        if cache:
            opts["cache"] = cache
        if writable_args:
            opts["writable_args"] = writable_args
        _check_options("guvectorize", opts)
        GUFuncEngine.from_signature(sig)   # a malformed layout fails here, as with gpujit's
        self.py_func = func
        self.identity = identity
        self.signature = sig
        self._sigs = []

    def build_ufunc(self):
        return DeviceGUFunc(self.py_func, self.signature, self._sigs, self.identity)
