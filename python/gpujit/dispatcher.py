"""@gpujit.jit: the kernel object users launch with kernel[grid, block](args).

The launch itself is C (_core.DispatcherBase / LaunchConfig: type key ->
cached specialisation -> packed parameters -> launch). This class supplies
what happens on a cache miss (_specialize) and the introspection API.
"""
import inspect
import os

from . import _core
from .typing import match_cost, parse_signature, signature_list, signature_of, signature_string


def _current_target():
    from .cudadrv import current_target
    return current_target()


def _target_cc(target):
    if target != "cuda":
        return (9, 0)
    from .cudadrv import get_current_device
    return tuple(get_current_device().compute_capability)


_normalise_sig = signature_string  # one signature, any spelling -> its string


class Dispatcher(_core.DispatcherBase):
    """A @jit kernel: specialises on argument types, compiles on first use."""

    def __init__(self, pyfunc, sigs=None, fastmath=False, lineinfo=False, debug=False, device=False,
                 inline=False, opt=True, cache=False, boundscheck=None, **options):
        super().__init__()
        if options:
            raise TypeError("unknown jit options: %s" % ", ".join(sorted(options)))
        if device:
            raise TypeError("use gpujit.jit(device=True), which makes a DeviceFunction")
        if not inspect.isfunction(pyfunc):
            raise TypeError("@gpujit.jit decorates a Python function, not %s" % type(pyfunc).__name__)
        self.py_func = pyfunc
        self.__name__ = pyfunc.__name__
        self.__qualname__ = pyfunc.__qualname__
        self.__doc__ = pyfunc.__doc__
        self.__wrapped__ = pyfunc
        self.fastmath = bool(fastmath)
        self.lineinfo = bool(lineinfo)
        self.debug = bool(debug)
        self.boundscheck = None if boundscheck is None else bool(boundscheck)
        self._compiled = {}  # (sig, target, cc) -> CompiledKernel
        self._overload_objs = {}  # the same keys -> its _Overload (overloads)
        self._eager = signature_list(sigs)
        if self._eager:
            for s in self._eager:
                self.compile(s)

    def __repr__(self):
        return "<gpujit kernel %s>" % self.__qualname__

    # -- compilation --------------------------------------------------------
    def _boundscheck(self, target):
        """Are array indices checked on this target? boundscheck=True/False
        decides; else debug=True, or the CPU target unless
        GPUJIT_CPU_BOUNDSCHECK=0 (read at each compile)."""
        if self.boundscheck is not None:
            return self.boundscheck
        if self.debug:
            return True
        return target == "cpu" and os.environ.get("GPUJIT_CPU_BOUNDSCHECK", "1").strip() != "0"

    def compile(self, sig, target=None, cc=None):
        """Compile one signature for a target ('cuda' or 'cpu'); cached."""
        target = target or _current_target()
        cc = tuple(cc) if cc else _target_cc(target)
        key = (_normalise_sig(sig), target, cc, self._boundscheck(target))
        k = self._compiled.get(key)
        if k is None:
            f = self.py_func
            k = _core.compile(f.__code__, f.__globals__, f.__closure__, key[0], target=target, cc=cc,
                              fastmath=self.fastmath, lineinfo=self.lineinfo, debug=self.debug,
                              boundscheck=key[3])
            self._compiled[key] = k
        return k

    def _specialize(self, args):
        """Called by the C launcher on a cache miss: the kernel for these args."""
        target = _current_target()
        if len(args) != self.py_func.__code__.co_argcount:
            n = self.py_func.__code__.co_argcount
            raise TypeError("%s() takes %d argument%s (%d given)" % (self.__name__, n, "" if n == 1 else "s", len(args)))
        sig = signature_of(args)
        if self._eager is None:
            return self.compile(sig, target)
        # numba's choice: the eager signature needing the fewest (and safest) conversions;
        # the first declared of equals
        have = parse_signature(sig)[1]
        best, best_cost = None, None
        for s in self._eager:
            cost = match_cost(parse_signature(s)[1], have)
            if cost is not None and (best_cost is None or cost < best_cost):
                best, best_cost = s, cost
        if best is not None:
            return self.compile(best, target)
        raise TypeError("no matching signature for %s%s; the kernel was compiled for: %s" % (
            self.__name__, sig[4:], "; ".join(self._eager)))

    @property
    def overloads(self):
        """The kernels compiled for the current target, by argument types (a
        tuple of types, or any signature spelling, looks one up)."""
        target = _current_target()
        wrapped = self._overload_objs
        for k, v in self._compiled.items():
            if k not in wrapped:
                wrapped[k] = _Overload(v)
        return _Overloads({k[0]: wrapped[k] for k in self._compiled if k[1] == target})

    @property
    def signatures(self):
        return sorted({k[0] for k in self._compiled})

    def _pick(self, sig):
        if sig is not None:
            return self.compile(sig)
        if not self._compiled:
            raise ValueError("%s has not been compiled yet: pass a signature or launch it first" % self.__name__)
        return self._compiled

    def _inspect(self, attr, sig, target=None):
        if sig is not None:
            return getattr(self.compile(sig, target), attr)
        if not self._compiled:
            raise ValueError("%s has not been compiled yet: pass a signature or launch it first" % self.__name__)
        return {k[0]: getattr(v, attr) for k, v in self._compiled.items() if target is None or k[1] == target}

    def inspect_ptx(self, sig=None):
        """PTX text of a signature (or {signature: ptx} of all compiled)."""
        if sig is not None:
            return self.compile(sig, "cuda", _target_cc("cuda") if _current_target() == "cuda" else (9, 0)).ptx
        return self._inspect("ptx", None, "cuda")

    def inspect_asm(self, sig=None):
        return self.inspect_ptx(sig)

    def inspect_llvm(self, sig=None):
        """Optimised LLVM IR of a signature (or {signature: ir} of all compiled).
        The IR text is not kept by ordinary compiles (printing it costs time), so
        this compiles again with it kept."""
        def ir(key):
            f = self.py_func
            return _core.compile(f.__code__, f.__globals__, f.__closure__, key[0], target=key[1], cc=key[2],
                                 fastmath=self.fastmath, lineinfo=self.lineinfo, debug=self.debug, boundscheck=key[3],
                                 keep_llvm=True).llvm
        if sig is not None:
            target = _current_target()
            return ir((_normalise_sig(sig), target, _target_cc(target), self._boundscheck(target)))
        if not self._compiled:
            raise ValueError("%s has not been compiled yet: pass a signature or launch it first" % self.__name__)
        return {k[0]: ir(k) for k in self._compiled}

    def inspect_types(self, sig=None, file=None):
        text = self._inspect("types", sig)
        if isinstance(text, dict):
            text = "\n".join(text.values())
        if file is not None:
            print(text, file=file)
            return None
        return text

    # -- launch helpers -----------------------------------------------------
    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        """kernel.forall(n)(args): a 1-D launch covering n threads, sized by occupancy."""
        if ntasks < 0:
            raise ValueError("ntasks must be non-negative")
        return _ForAll(self, int(ntasks), int(tpb), stream, sharedmem)

    def _one(self, sig=None):
        if sig is not None:
            return self.compile(sig)
        if not self._compiled:
            raise ValueError("%s has not been compiled yet: pass a signature or launch it first" % self.__name__)
        return next(iter(self._compiled.values()))

    def get_regs_per_thread(self, sig=None):
        return _core.kernel_attributes(self._one(sig))["regs_per_thread"]

    def get_max_threads_per_block(self, sig=None):
        return _core.kernel_attributes(self._one(sig))["max_threads_per_block"]

    def get_shared_mem_per_block(self, sig=None):
        return _core.kernel_attributes(self._one(sig))["shared_bytes"]

    def get_local_mem_per_thread(self, sig=None):
        return _core.kernel_attributes(self._one(sig))["local_bytes"]


def _argtypes_key(sig):
    return tuple(parse_signature(_normalise_sig(sig))[1])


class _Overloads(dict):
    """{signature: _Overload}; indexed by any spelling of a signature, as numba's
    overloads are by a tuple of argument types."""

    def __init__(self, by_sig):
        super().__init__(by_sig)
        self._by_args = {_argtypes_key(s): k for s, k in by_sig.items()}

    def __getitem__(self, sig):
        if dict.__contains__(self, sig):
            return dict.__getitem__(self, sig)
        try:
            key = _argtypes_key(sig)
        except (TypeError, ValueError):
            raise KeyError(sig) from None
        if key not in self._by_args:
            raise KeyError(sig)
        return self._by_args[key]

    def __contains__(self, sig):
        try:
            self[sig]
        except KeyError:
            return False
        return True


class _Overload:
    """One compiled kernel as numba's overloads hold it: the CompiledKernel's
    attributes, and the occupancy of a cooperative launch."""

    def __init__(self, kernel):
        self._kernel = kernel

    def __getattr__(self, name):
        return getattr(self._kernel, name)

    def __repr__(self):
        return "<gpujit overload %s%s>" % (self._kernel.name, self._kernel.signature)

    def max_cooperative_grid_blocks(self, blockdim, dynsmem=0):
        """The most blocks of shape `blockdim` a cooperative launch of this kernel
        may have (all resident at once); a larger grid fails to launch."""
        dims = tuple(blockdim) if isinstance(blockdim, (tuple, list)) else (blockdim,)
        if not 1 <= len(dims) <= 3 or not all(isinstance(d, int) and d > 0 for d in dims):
            raise ValueError("blockdim must be 1 to 3 positive ints, not %r" % (blockdim,))
        n = 1
        for d in dims:
            n *= d
        return _core.max_cooperative_grid_blocks(self._kernel, n, int(dynsmem))


class DeviceFunction:
    """@jit(device=True): a function kernels call. It is compiled into each
    kernel that calls it, specialised on the argument types at the call, and
    may return a number, a tuple or nothing. Called from Python it runs as
    plain Python. (A plain undecorated Python function called from a kernel
    is compiled the same way.)"""

    __gpujit_device__ = True

    def __init__(self, pyfunc, sigs=None, **options):
        if not inspect.isfunction(pyfunc):
            raise TypeError("@gpujit.jit(device=True) decorates a Python function, not %s" % type(pyfunc).__name__)
        unknown = set(options) - {"fastmath", "inline", "opt", "cache", "lineinfo", "debug", "boundscheck"}
        if unknown:
            raise TypeError("unknown jit options: %s" % ", ".join(sorted(unknown)))
        self.py_func = pyfunc
        # kept for introspection, checked by the compiler's parser: a device function is
        # compiled into each caller, specialised on the types at the call
        self.signatures = signature_list(sigs) or []
        for s in self.signatures:
            parse_signature(s)
        self.__name__ = pyfunc.__name__
        self.__qualname__ = pyfunc.__qualname__
        self.__doc__ = pyfunc.__doc__
        self.__wrapped__ = pyfunc

    def __repr__(self):
        return "<gpujit device function %s>" % self.__qualname__

    def __call__(self, *args, **kwargs):
        return self.py_func(*args, **kwargs)

    def __getitem__(self, config):
        raise TypeError("%s is a device function: call it from a kernel; only kernels are launched "
                        "with [griddim, blockdim]" % self.__name__)


class _ForAll:
    def __init__(self, dispatcher, ntasks, tpb, stream, sharedmem):
        self.dispatcher, self.ntasks, self.tpb, self.stream, self.sharedmem = dispatcher, ntasks, tpb, stream, sharedmem

    def __call__(self, *args):
        if self.ntasks == 0:
            return None
        tpb = self.tpb
        if not tpb:
            kernel = self.dispatcher._specialize(args)
            _, tpb = _core.max_potential_block(kernel, self.sharedmem)
        blocks = (self.ntasks + tpb - 1) // tpb
        return self.dispatcher[blocks, tpb, self.stream, self.sharedmem](*args)
