"""@gpujit.jit: the kernel object users launch with kernel[grid, block](args).

The launch itself is C (_core.DispatcherBase / LaunchConfig: type key ->
cached specialisation -> packed parameters -> launch). This class supplies
what happens on a cache miss (_specialize) and the introspection API.
"""
import inspect
import os
import sys
import time
import re

from . import _core, _profiler as profiler
from .compiler import _given
from .compiler import compile as _compile_device
from .types import Type
from .typing import match_cost, parse_signature, signature_list, signature_of, signature_string, typeof_string


def _current_target():
    from .cudadrv import current_target
    return current_target()


def _target_cc(target):
    if target != "cuda":
        return (9, 0)
    from .cudadrv import get_current_device
    return tuple(get_current_device().compute_capability)


_normalise_sig = signature_string  # one signature, any spelling -> its string


def _argtypes(sig):
    """The parsed argument types of a signature in any spelling: what two
    spellings of one signature have in common."""
    if isinstance(sig, tuple) and not all(isinstance(t, Type) for t in sig):
        raise KeyError(sig)
    return tuple(parse_signature(_normalise_sig(sig))[1])


class SignatureDict(dict):
    """{signature string: value}, also indexed by numba's keys: a tuple of
    argument types (float32[::1], int64), a Signature, or another spelling
    of the same signature."""

    def __missing__(self, key):
        try:
            want = _argtypes(key)
        except (TypeError, ValueError, KeyError):
            raise KeyError(key) from None
        for k, v in self.items():
            if _argtypes(k) == want:
                return v
        raise KeyError(key)

    def __contains__(self, key):
        try:
            self[key]
        except KeyError:
            return False
        return True


# numba's carve-out names (cudaSharedmemCarveout)
_CARVEOUTS = {"default": -1, "maxl1": 0, "maxshared": 100}


def _check_carveout(value):
    if value is None:
        return None
    if isinstance(value, str):
        if value.lower() not in _CARVEOUTS:
            raise ValueError("Invalid carveout value: %r (an int from -1 to 100, 'MaxL1', 'MaxShared' or "
                             "'default')" % value)
        return _CARVEOUTS[value.lower()]
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError("shared_memory_carveout must be an int or a string, not %s" % type(value).__name__)
    if not -1 <= value <= 100:
        raise ValueError("shared_memory_carveout must be between -1 and 100, not %d" % value)
    return value


def _same_memory(want, have):
    """Whether arguments of types `have` may be passed to a kernel compiled for one signature,
    `want`, integer arrays whose dtype differs only in signedness (int32 for uint32) passed as
    they are: numba launches such a kernel without matching the arguments' types, so the
    kernel reads the array's memory as its own dtype."""
    if len(want) != len(have):
        return False
    for w, h in zip(want, have):
        if w[1] == h[1] == "array" and w[2] != h[2] and w[2].lstrip("u") == h[2].lstrip("u") \
                and w[2].lstrip("u").startswith("int"):
            h = (w[0],) + h[1:2] + (w[2],) + h[3:]
        if match_cost([w], [h]) is None:
            return False
    return True


class Dispatcher(_core.DispatcherBase):
    """A @jit kernel: specialises on argument types, compiles on first use. Called from
    another kernel it is a device function (compiled into the caller, as numba.cuda does).
    jit makes it: Dispatcher(pyfunc, sigs, ...) takes the Python function `pyfunc`, its
    signatures `sigs` (a list; None: compiled per launch) and jit's options fastmath,
    lineinfo, debug, device (False here), inline, opt, cache, boundscheck, lto,
    shared_memory_carveout, forceinline, launch_bounds, extensions, link and racecheck (see
    help(gpujit.jit)); other options are a TypeError."""

    __gpujit_device__ = True   # the compiler reads py_func where a kernel calls it

    def __init__(self, pyfunc, sigs=None, fastmath=False, lineinfo=False, debug=False, device=False,
                 inline=False, opt=True, cache=False, boundscheck=None, lto=False, shared_memory_carveout=None,
                 forceinline=False, launch_bounds=None, extensions=None, link=None, racecheck=None,
                 **options):
        super().__init__()
        if extensions:
            self.extensions = list(extensions)
        # a hint to the driver about the L1/shared split; kept, checked as numba does
        self.shared_memory_carveout = _check_carveout(shared_memory_carveout)
        if options:
            raise TypeError("unknown jit options: %s" % ", ".join(sorted(options)))
        from .linking import _check_link
        self.link = _check_link(link)   # linked with every specialisation on the cuda target
        if self.link and cache:
            raise RuntimeError("Cannot pickle CUDACodeLibrary with linking files: a kernel that links "
                               "external code (link=) cannot be cached (cache=True)")
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
        self.racecheck = None if racecheck is None else bool(racecheck)
        from .compiler import _launch_bounds
        self.launch_bounds = _launch_bounds(launch_bounds)
        from .compiler import _opt_given
        self._opt = _opt_given(opt)
        self._options = dict(fastmath=fastmath, lineinfo=lineinfo, debug=debug, inline=inline, opt=opt,
                             boundscheck=boundscheck, forceinline=forceinline, launch_bounds=launch_bounds,
                             cache=cache, link=link, racecheck=racecheck)
        if cache:
            from .caching import FunctionCache
            self._cache = FunctionCache(pyfunc)
            self.stats = self._cache.stats
        else:
            from .caching import CacheStats
            self._cache = None
            self.stats = CacheStats()
        self._compiled = {}  # (sig, target, cc, boundscheck, racecheck) -> CompiledKernel
        self._overload_objs = {}  # the same keys -> its _Overload (overloads)
        self._eager = signature_list(sigs)
        self.specializations = {}  # (cc, argument types) -> Dispatcher, from specialize()
        self._specialized = bool(self._eager) and len(self._eager) == 1
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
        from .config import flag
        return target == "cpu" and bool(flag("GPUJIT_CPU_BOUNDSCHECK", 1))

    def _racecheck(self, target):
        """Does the race detector watch this kernel? Only on the cpu target:
        racecheck=True/False decides, else GPUJIT_CPU_RACECHECK (read at each
        compile; off by default)."""
        if target != "cpu":
            return False
        if self.racecheck is not None:
            return self.racecheck
        from .config import flag
        return bool(flag("GPUJIT_CPU_RACECHECK", 0))

    def _key(self, sig, target, cc):
        """The key of _compiled for a signature: (sig, target, cc, boundscheck, racecheck)."""
        return (_normalise_sig(sig), target, cc, self._boundscheck(target), self._racecheck(target))

    def compile(self, sig, target=None, cc=None):
        """Compile one signature for a target ('cuda' or 'cpu'); cached (on disk too with cache=True)."""
        target = target or _current_target()
        cc = tuple(cc) if cc else _target_cc(target)
        key = self._key(sig, target, cc)
        k = self._compiled.get(key)
        if k is None:
            k = self._compiled[key] = self._build(key)
        return k

    def _build(self, key, use_cache=True):
        f = self.py_func

        def build(keep_bitcode=False):
            k = _core.compile(f.__code__, f.__globals__, f.__closure__, key[0], target=key[1], cc=key[2],
                              fastmath=self.fastmath, lineinfo=self.lineinfo, debug=self.debug,
                              boundscheck=key[3], **_given(launch_bounds=self.launch_bounds,
                                                           keep_bitcode=keep_bitcode, racecheck=key[4]), **self._opt)
            if key[1] == "cuda" and (self.link or k.externs):
                from .linking import link_items
                # the kernel's own files, then each called declaration's
                k.link = link_items(list(self.link) + [x for e in k.externs for x in e.link], key[2])
            return k
        if profiler._active:  # GPUJIT_PROFILE: the compile's time, in the summary
            t0 = time.perf_counter()
            try:
                return self._build_now(key, build, use_cache)
            finally:
                profiler.compiled(self, key, time.perf_counter() - t0)
        return self._build_now(key, build, use_cache)

    def _build_now(self, key, build, use_cache):
        if self._cache is None:
            return build()
        ckey = self._cache.key(key[0], key[1], key[2], dict(
            boundscheck=key[3], fastmath=self.fastmath, lineinfo=self.lineinfo, debug=self.debug,
            launch_bounds=self.launch_bounds, **_given(racecheck=key[4]), **self._opt))

        def build_cached():
            k = build(True)
            if k.externs:
                raise RuntimeError("Cannot pickle CUDACodeLibrary with linking files: %s calls external functions "
                                   "(declare_device), whose code is linked when it loads, so it cannot be cached "
                                   "(cache=True)" % self.__name__)
            return k
        return self._cache.load_or_compile(ckey, self.__name__, key[0], build_cached, use_cache=use_cache)

    def recompile(self):
        """Compile every specialisation again (reading the globals anew), replacing the
        on-disk cache's entries."""
        keys = list(self._compiled)
        self._cache_clear()
        self._compiled = {}
        for key in keys:
            self._compiled[key] = self._build(key, use_cache=False)

    def _prepare_args(self, args, stream):
        """Called by the launcher when there are launch extensions or In/Out/InOut arguments:
        each extension's prepare_args(ty, val, stream=, retr=) sees each argument (the last
        extension first, as numba), then a wrapped argument becomes what the kernel gets.
        Returns the arguments and the write-backs to call after the launch."""
        from .args import ArgHint
        retr = []
        out = []
        stream = 0 if stream is None else stream
        for val in args:
            if self.extensions:
                from .typing.typeof import typeof
                try:
                    ty = typeof(val.value if isinstance(val, ArgHint) else val)
                except (TypeError, ValueError):
                    ty = None
                for ext in reversed(self.extensions):
                    ty, val = ext.prepare_args(ty, val, stream=stream, retr=retr)
            if isinstance(val, ArgHint):
                val = val.to_device(retr, stream=stream)
            out.append(val)
        return tuple(out), retr

    def _specialize(self, args):
        """Called by the C launcher on a cache miss: the kernel for these args."""
        if len(args) != self.py_func.__code__.co_argcount:
            n = self.py_func.__code__.co_argcount
            raise TypeError("%s() takes %d argument%s (%d given)" % (self.__name__, n, "" if n == 1 else "s", len(args)))
        return self._compile_for_args(*args)

    def _compile_for_args(self, *args):
        """The kernel for a launch with these arguments: compiled for their types,
        or the best of the eager signatures. While the launcher calls it,
        gpujit.launchconfig.current_launch_config() is the launch's configuration."""
        target = _current_target()
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
        if best is None and self._specialized and _same_memory(parse_signature(self._eager[0])[1], have):
            best = self._eager[0]
        if best is not None:
            return self.compile(best, target)
        raise TypeError("No matching definition for argument type(s) %s of %s; the kernel was compiled "
                        "for: %s" % (sig[5:-1], self.__name__, "; ".join(self._eager)))

    # -- numba's specialisation API -----------------------------------------
    @property
    def specialized(self):
        """True for a kernel compiled for exactly one signature (jit(sig) or specialize())."""
        return self._specialized

    def specialize(self, *args):
        """A kernel compiled only for these argument types (types, or values whose
        types are taken), cached per device: a launch with other types is refused."""
        if self._specialized:
            raise RuntimeError("Dispatcher already specialized")
        sig = "void(%s)" % ", ".join(str(a) if isinstance(a, Type) else typeof_string(a, i)
                                     for i, a in enumerate(args))
        key = (_target_cc(_current_target()), _argtypes(sig))
        disp = self.specializations.get(key)
        if disp is None:
            disp = Dispatcher(self.py_func, [sig], **self._options)
            self.specializations[key] = disp
        return disp

    def __reduce__(self):
        """Pickled by reference (module and qualified name) where another process can
        import the kernel (a multiprocessing or Dask worker finds the same one there);
        else (a kernel of __main__, of a notebook, or defined in a function) by value:
        its code, the globals and closure variables it reads, its eager signatures and
        options (gpujit.serialize)."""
        from .serialize import dumps, importable
        if importable(self, self.py_func.__module__, self.__qualname__):
            return (_lookup, (self.py_func.__module__, self.__qualname__))
        return (_loads, (dumps(self),))

    def _reduce_by_value(self):
        opts = dict(self._options, shared_memory_carveout=self.shared_memory_carveout,
                    extensions=getattr(self, "extensions", None) or None)
        return (_rebuild_kernel, (self.py_func, self._eager, opts))

    @property
    def overloads(self):
        """The kernels compiled for the current target, by argument types (a
        tuple of types, or any signature spelling, looks one up)."""
        target = _current_target()
        wrapped = self._overload_objs
        for k, v in self._compiled.items():
            if k not in wrapped:
                wrapped[k] = _Overload(v, self, k)
        return SignatureDict((k[0], wrapped[k]) for k in self._compiled if k[1] == target)

    definitions = overloads

    @property
    def signatures(self):
        return sorted({k[0] for k in self._compiled})

    def _inspect(self, attr, sig, target=None):
        if sig is not None:
            return getattr(self.compile(sig, target), attr)
        if not self._compiled:
            raise ValueError("%s has not been compiled yet: pass a signature or launch it first" % self.__name__)
        return {k[0]: getattr(v, attr) for k, v in self._compiled.items() if target is None or k[1] == target}

    def inspect_ptx(self, signature=None):
        """PTX text of a signature, or {signature: ptx} of every signature compiled
        so far. A kernel compiled only for the cpu target has its PTX compiled on
        demand (for the current device's compute capability, or 9.0 without one),
        as compile_ptx does; no GPU is needed."""
        sig = signature
        cc = _target_cc("cuda") if _current_target() == "cuda" else (9, 0)
        if sig is not None:
            return self.compile(sig, "cuda", cc).ptx
        if not self._compiled:
            raise ValueError("%s has not been compiled yet: pass a signature or launch it first" % self.__name__)
        out = SignatureDict()
        for k, v in list(self._compiled.items()):
            if k[0] not in out:
                out[k[0]] = v.ptx if k[1] == "cuda" else self.compile(k[0], "cuda", cc).ptx
        return out

    def inspect_asm(self, signature=None):
        """numba's name for the PTX (inspect_ptx)."""
        return self.inspect_ptx(signature)

    def inspect_lto_ptx(self, signature=None):
        """numba's PTX after link-time optimisation: a kernel is already one LLVM module
        (device functions and libdevice linked in before LLVM's optimiser), so
        this is its PTX, and jit(lto=True) changes nothing."""
        return self.inspect_ptx(signature)

    def inspect_sass(self, signature=None):
        """The SASS (the GPU's machine code) of a signature, or {signature: sass} of every
        signature compiled so far: the PTX (as inspect_ptx) assembled by CUDA's ptxas and
        listed by nvdisasm, which must be installed (a toolkit, or NVIDIA's pip wheels);
        no GPU is needed."""
        return self._sass(signature, False)

    def inspect_sass_cfg(self, signature=None):
        """The control-flow graph of inspect_sass's code, in DOT (nvdisasm -cfg)."""
        return self._sass(signature, True)

    def _sass(self, signature, cfg):
        from .sass import disassemble
        if signature is None and not self._compiled:
            raise ValueError("%s has not been compiled yet: pass a signature or launch it first" % self.__name__)
        cc = _target_cc("cuda") if _current_target() == "cuda" else (9, 0)
        sigs = [_normalise_sig(signature)] if signature is not None else sorted({k[0] for k in self._compiled})
        out = SignatureDict()
        for sig in sigs:
            # compiled again with line information, so that the listing names the Python lines
            k = self._compile_again(self._key(sig, "cuda", cc), lineinfo=True)
            if self.link or k.externs:
                raise NotImplementedError("inspect_sass of %s: it links external code (link= or declare_device), "
                                          "which ptxas alone cannot assemble" % self.__name__)
            out[sig] = disassemble(k.ptx, cfg)
        return out[sigs[0]] if signature is not None else out

    def inspect_llvm(self, signature=None):
        """Optimised LLVM IR of a signature (or {signature: ir} of all compiled).
        The IR text is not kept by ordinary compiles (printing it costs time), so
        this compiles again with it kept."""
        if signature is not None:
            target = _current_target()
            return self._llvm(self._key(signature, target, _target_cc(target)))
        if not self._compiled:
            raise ValueError("%s has not been compiled yet: pass a signature or launch it first" % self.__name__)
        return {k[0]: self._llvm(k) for k in self._compiled}

    def _llvm(self, key):
        """The LLVM IR of the kernel of a key of _compiled, compiled again to keep it."""
        return self._compile_again(key, keep_llvm=True).llvm

    def _compile_again(self, key, **changed):
        """The kernel of a key of _compiled (signature, target, cc, boundscheck, racecheck) compiled
        anew, outside the caches, with the kernel's options but those `changed` gives."""
        f = self.py_func
        opts = dict(fastmath=self.fastmath, lineinfo=self.lineinfo, debug=self.debug, boundscheck=key[3],
                    **_given(launch_bounds=self.launch_bounds, racecheck=key[4]), **self._opt)
        opts.update(changed)
        return _core.compile(f.__code__, f.__globals__, f.__closure__, key[0], target=key[1], cc=key[2], **opts)

    def inspect_types(self, file=None, signature=None):
        """Print the kernel's typed listing (each Python line with the types of the
        variables it assigns) to `file` (default: sys.stdout), as numba does: of
        `signature`, or of every signature compiled so far. Returns None;
        inspect_types_text gives the text."""
        print(self.inspect_types_text(signature), file=sys.stdout if file is None else file)

    def inspect_types_text(self, signature=None):
        """The text inspect_types prints: of `signature` (compiled if it is not yet),
        or of every signature compiled so far, one after another."""
        text = self._inspect("types", signature)
        if isinstance(text, dict):
            text = "\n".join(text.values())
        return text

    # -- launch helpers -----------------------------------------------------
    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        """kernel.forall(n)(args): a 1-D launch covering n threads, sized by occupancy."""
        if ntasks < 0:
            raise ValueError("Can't create ForAll with negative task count")
        return _ForAll(self, int(ntasks), int(tpb), stream, sharedmem)

    def _attribute(self, name, sig):
        """A kernel attribute: of one signature, of the only one of a specialized
        kernel, else {signature: value} of every signature compiled."""
        if sig is not None:
            return _core.kernel_attributes(self.compile(sig))[name]
        if not self._compiled:
            raise ValueError("%s has not been compiled yet: pass a signature or launch it first" % self.__name__)
        kernels = {k: v._kernel for k, v in self.overloads.items()}
        if self._specialized and len(kernels) == 1:
            return _core.kernel_attributes(next(iter(kernels.values())))[name]
        return SignatureDict((k, _core.kernel_attributes(v)[name]) for k, v in kernels.items())

    def get_regs_per_thread(self, signature=None):
        return self._attribute("regs_per_thread", signature)

    def get_max_threads_per_block(self, signature=None):
        return self._attribute("max_threads_per_block", signature)

    def get_shared_mem_per_block(self, signature=None):
        return self._attribute("shared_bytes", signature)

    def get_local_mem_per_thread(self, signature=None):
        return self._attribute("local_bytes", signature)

    def get_const_mem_size(self, signature=None):
        return self._attribute("const_bytes", signature)


class _Overload:
    """One compiled kernel as numba's overloads hold it: the CompiledKernel's
    attributes, its code (inspect_llvm, inspect_asm) and the occupancy of a
    cooperative launch."""

    def __init__(self, kernel, dispatcher, key):
        self._kernel = kernel
        self._dispatcher, self._key = dispatcher, key

    def inspect_llvm(self):
        """Its optimised LLVM IR (the dispatcher's inspect_llvm of its signature)."""
        return self._dispatcher._llvm(self._key)

    def inspect_asm(self, cc=None):
        """Its PTX; a kernel of the cpu target has its PTX compiled for compute
        capability `cc` (default: the current device's, 9.0 without a GPU)."""
        if self._key[1] == "cuda" and (cc is None or tuple(cc) == self._key[2]):
            return self._kernel.ptx
        cc = tuple(cc) if cc is not None else _target_cc("cuda") if _current_target() == "cuda" else (9, 0)
        return self._dispatcher.compile(self._key[0], "cuda", cc).ptx

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


def _as_compiled(obj):
    """The CompiledKernel a kernel_attributes()/max_potential_block() argument names: a
    CompiledKernel, an entry of kernel.overloads, or a kernel compiled for one signature
    on the current target."""
    if isinstance(obj, _Overload):
        return obj._kernel
    if isinstance(obj, Dispatcher):
        kernels = list(obj.overloads.values())
        if not kernels:
            raise ValueError("%s has not been compiled yet: launch it or compile it first" % obj.__name__)
        if len(kernels) > 1:
            raise TypeError("%s has %d compiled signatures: pass one of kernel.overloads[sig]"
                            % (obj.__name__, len(kernels)))
        return kernels[0]._kernel
    return obj


class DeviceFunction:
    """@jit(device=True): a function kernels call. It is compiled into each
    kernel that calls it, specialised on the argument types at the call, and
    may return a number, a tuple or nothing. Called from Python it runs as
    plain Python. (A plain undecorated Python function called from a kernel
    is compiled the same way.)
    jit(device=True) makes it: DeviceFunction(pyfunc, sigs, **options) takes the Python
    function `pyfunc`, its signatures `sigs` (a list, or None) and, as options, jit's
    fastmath, inline, forceinline, opt, cache, lineinfo, debug, boundscheck, lto and racecheck
    (racecheck is left to the kernel the function is compiled into);
    others are a TypeError."""

    __gpujit_device__ = True

    def __init__(self, pyfunc, sigs=None, **options):
        if not inspect.isfunction(pyfunc):
            raise TypeError("@gpujit.jit(device=True) decorates a Python function, not %s" % type(pyfunc).__name__)
        # racecheck is accepted and left to the kernel: a device function is compiled into it
        unknown = set(options) - {"fastmath", "inline", "forceinline", "opt", "cache", "lineinfo", "debug",
                                  "boundscheck", "lto", "racecheck"}
        if unknown:
            raise TypeError("unknown jit options: %s" % ", ".join(sorted(unknown)))
        self.py_func = pyfunc
        self._options = options
        # kept for introspection, checked by the compiler's parser: a device function is
        # compiled into each caller, specialised on the types at the call
        self.signatures = signature_list(sigs) or []
        for s in self.signatures:
            parse_signature(s)
        if self.signatures:
            self.__gpujit_func__ = _signature_casts(pyfunc, self.signatures)
        self.__name__ = pyfunc.__name__
        self.__qualname__ = pyfunc.__qualname__
        self.__doc__ = pyfunc.__doc__
        self.__wrapped__ = pyfunc

    def __repr__(self):
        return "<gpujit device function %s>" % self.__qualname__

    def __reduce__(self):
        """As a kernel's (Dispatcher.__reduce__): by reference where importable, else by value."""
        from .serialize import dumps, importable
        if importable(self, self.py_func.__module__, self.__qualname__):
            return (_lookup, (self.py_func.__module__, self.__qualname__))
        return (_loads, (dumps(self),))

    def _reduce_by_value(self):
        return (_rebuild_device_function, (self.py_func, self.signatures, self._options))

    def __call__(self, *args, **kwargs):
        return self.py_func(*args, **kwargs)

    def inspect_ptx(self, sig):
        """PTX of the function on its own for a signature (a .visible .func; see gpujit.compile)."""
        from .compiler import compile_ptx
        opts = {k: v for k, v in self._options.items() if k in ("fastmath", "lineinfo", "debug", "boundscheck", "opt")}
        return compile_ptx(self.py_func, sig, device=True, **opts)[0]

    inspect_asm = inspect_ptx

    def inspect_llvm(self, sig):
        """Optimised LLVM IR of the function on its own for a signature (as inspect_ptx)."""
        f = self.py_func
        from .compiler import _opt_given
        opts = {k: bool(v) for k, v in self._options.items() if k in ("fastmath", "lineinfo", "debug", "boundscheck")}
        return _core.compile(f.__code__, f.__globals__, f.__closure__, signature_string(sig), target="cuda",
                             device=True, keep_llvm=True, **opts, **_opt_given(self._options.get("opt"))).llvm

    def compile_device(self, args, return_type=None):
        """Compile the function on its own for the argument types `args` (and, given,
        its return type), as numba's compile_device: a DeviceCompileResult with the
        signature and the PTX; fndesc.mangled_name is the name of its .func there."""
        sig = return_type(*args) if return_type is not None else tuple(args)
        key = signature_string(sig)
        done = self.__dict__.setdefault("_device_results", {})
        if key not in done:
            opts = {k: v for k, v in self._options.items() if k in ("fastmath", "lineinfo", "debug", "boundscheck", "opt")}
            ptx, resty = _compile_device(self.py_func, sig, device=True, abi="numba", **opts)
            done[key] = DeviceCompileResult(self.py_func, tuple(args), resty, ptx)
        return done[key]

    def inspect_sass(self, sig=None):
        raise RuntimeError("Cannot inspect SASS of a device function: it is compiled into its callers")

    def __getitem__(self, config):
        raise NotLaunchableError("Cannot compile a device function as a kernel: %s is a device function; "
                                 "call it from a kernel; only kernels are launched with [griddim, blockdim]"
                                 % self.__name__)


class DeviceCompileResult:
    """A device function compiled on its own (DeviceFunction.compile_device): its
    signature (a gpujit.types.Signature), PTX, and fndesc, whose name, qualname and
    mangled_name (the .func's symbol in the PTX) numba's function descriptor also has."""

    def __init__(self, pyfunc, args, return_type, ptx):
        from . import types
        self.signature = types.Signature(return_type, list(args))
        self.return_type, self.ptx = return_type, ptx
        m = re.search(r"\.visible\s+\.func\s+(?:\([^)]*\)\s*)?([\w$]+)\(", ptx)
        self.fndesc = _FunctionDescriptor(pyfunc.__name__, pyfunc.__qualname__, m.group(1) if m else pyfunc.__name__)

    def __repr__(self):
        return "<compiled device function %s %s>" % (self.fndesc.qualname, self.signature)


class _FunctionDescriptor:
    def __init__(self, name, qualname, mangled_name):
        self.name, self.qualname, self.mangled_name = name, qualname, mangled_name


def _signature_casts(pyfunc, sigs):
    """What kernels call for a device function declared with signatures: a stand-in whose
    overload (gpujit.extending's protocol) picks the signature for each call's argument types,
    as numba does (the closest; else the first of the right arity, converting unsafely), and
    converts the arguments and the result to its types (where the arguments need converting)."""
    from .types import NUMBERS

    casts = {t.name: t for t in NUMBERS.values()}
    impls = {}

    def impl_for(sig):
        if sig not in impls:
            ret, args = parse_signature(sig)
            ns = {"__f": pyfunc}
            params = ["a%d" % i for i in range(len(args))]
            conv = []
            for p, a in zip(params, args):
                if a[1] == "scalar" and a[0] in casts:
                    ns["__t_" + p] = casts[a[0]]
                    conv.append("__t_%s(%s)" % (p, p))
                else:
                    conv.append(p)
            call = "__f(%s)" % ", ".join(conv)
            if ret is not None and ret[1] == "scalar" and ret[0] in casts:
                ns["__r"] = casts[ret[0]]
                call = "__r(%s)" % call
            exec("def __conv(%s):\n    return %s\n" % (", ".join(params), call), ns)
            ns["__conv"].__name__ = ns["__conv"].__qualname__ = pyfunc.__name__   # a lambda's '<lambda>' too
            impls[sig] = ns["__conv"]
        return impls[sig]

    def pick(names):
        try:
            have = parse_signature("void(%s)" % ", ".join(names))[1]
        except (TypeError, ValueError):
            return pyfunc        # compile-time arguments (functions, dtypes): no conversions
        costs = [(match_cost(parse_signature(s)[1], have), i) for i, s in enumerate(sigs)]
        costs = [(c, i) for c, i in costs if c is not None]
        if costs:
            cost, i = min(costs)
            # the arguments are the signature's already: the function itself, so that a
            # recursive one recurses into itself (through a converting stand-in, it would be a
            # mutual recursion, which typing cannot settle); its result is then the type its
            # returns give
            return pyfunc if cost == 0 else impl_for(sigs[i])
        for s in sigs:
            want = parse_signature(s)[1]
            # numba converts any number to any other here, but no complex to a real
            if len(want) == len(have) and all(w[1] == h[1] and (w[1] != "array" or w[2:4] == h[2:4]) and
                                              not (w[1] == "scalar" and h[2].startswith("complex") and
                                                   not w[2].startswith("complex"))
                                              for w, h in zip(want, have)):
                return impl_for(s)
        raise TypeError("Invalid use of type(CUDADispatcher(%s)) with parameters (%s): no signature of %s "
                        "(%s) accepts them" % (pyfunc.__qualname__, ", ".join(names), pyfunc.__qualname__,
                                               "; ".join(sigs)))

    def stand_in(*args):
        return pyfunc(*args)
    stand_in.__name__, stand_in.__qualname__ = pyfunc.__name__, pyfunc.__qualname__
    stand_in.__gpujit_overload__ = pick
    return stand_in


def _lookup(module, qualname):
    import importlib
    try:
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return None
    return obj


_UNPICKLED = None


def _loads(data):
    """A kernel or device function pickled by value: one object per process for one pickle, so
    that a worker that receives it with each task (Dask) compiles and loads it once."""
    global _UNPICKLED
    import pickle
    import weakref
    from .caching import _digest
    if _UNPICKLED is None:
        _UNPICKLED = weakref.WeakValueDictionary()
    key = _digest(data).digest()
    obj = _UNPICKLED.get(key)
    if obj is None:
        obj = pickle.loads(data)
        _UNPICKLED[key] = obj
    return obj


def _rebuild_kernel(py_func, sigs, options):
    if options.get("cache"):
        try:
            from .caching import FunctionCache
            FunctionCache(py_func)
        except RuntimeError:         # no source file here: the kernel works, uncached
            options = dict(options, cache=False)
    return Dispatcher(py_func, sigs, **options)


def _rebuild_device_function(py_func, sigs, options):
    return DeviceFunction(py_func, sigs or None, **options)


class NotLaunchableError(TypeError, RuntimeError):
    """A device function launched as a kernel (numba raises RuntimeError; gpujit TypeError)."""


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
