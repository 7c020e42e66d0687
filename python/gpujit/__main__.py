"""gpujit's command line: python3 -m gpujit [--version] {info,ptx} ...

    python3 -m gpujit info                  what gpujit finds on this machine (as `numba -s`)
    python3 -m gpujit ptx FILE.py [--kernel NAME] [--sig SIG | --run] [--cc 9.0] [-o OUT]

`ptx` prints the PTX of the @gpujit.jit kernels in a script without running its
main block (the script is run under another __name__). Kernels with eager
signatures use them. For the others, --run runs the script's main block on the
CPU target and compiles each kernel for the argument types it was launched with;
without it they need --sig, and are listed by name. A bad file, compute
capability or signature is one line on stderr and exit status 2; a kernel that
does not compile prints gpujit's error (with its file:line) and exits 1.
"""
import argparse
import contextlib
import os
import platform
import re
import runpy
import sys

EXIT_USAGE = 2
EXIT_COMPILE = 1


class _Fail(Exception):
    """A one-line user error: printed as `gpujit: ...`, exit status `code`."""

    def __init__(self, msg, code=EXIT_USAGE):
        super().__init__(msg)
        self.code = code


# ---- ptx ----------------------------------------------------------------------------

def _parse_cc(text):
    m = re.fullmatch(r"\s*(\d+)(?:\.(\d))?\s*", text or "")
    if not m:
        raise _Fail("bad --cc %r: a compute capability is MAJOR.MINOR, e.g. 9.0 or 8.6" % text)
    cc = (int(m.group(1)), int(m.group(2) or 0))
    if not 3 <= cc[0] <= 99:  # what the compiler accepts: 3.0 and newer (a newer cc compiles for the newest known)
        raise _Fail("bad --cc %r: gpujit compiles for compute capability 3.0 and newer" % text)
    return cc


def _load_kernels(path, run=False):
    """The script's module-level kernels, by name. With run, the script runs as __main__
    on the CPU target, so that its kernels are specialised for the arguments it launches
    them with."""
    from . import CompileError, Dispatcher
    if not os.path.isfile(path):
        raise _Fail("%s: no such file" % path)
    ns = None
    try:
        if run:
            ns = _run_on_cpu(path)
        else:
            ns = runpy.run_path(path, run_name="__gpujit_ptx__")
    except SystemExit as e:
        if not (run and e.code in (0, None)):
            raise _Fail("%s: the script exited (status %s) while being %s" % (path, e.code, "run" if run else "loaded"))
        ns = getattr(e, "namespace", None)
    except CompileError as e:  # an eager signature's kernel: gpujit's message names its file:line
        raise _Fail("%s" % e, EXIT_COMPILE)
    except BaseException as e:  # the user's script: any error it raises is a bad input
        where = ""
        tb = e.__traceback__
        while tb is not None:
            if os.path.abspath(tb.tb_frame.f_code.co_filename) == os.path.abspath(path):
                where = ":%d" % tb.tb_lineno
            tb = tb.tb_next
        if isinstance(e, SyntaxError) and e.lineno:
            where = ":%d" % e.lineno
        raise _Fail("%s%s: cannot load the script: %s: %s" % (path, where, type(e).__name__,
                                                             str(e).splitlines()[0] if str(e) else ""))
    return {name: obj for name, obj in (ns or {}).items() if isinstance(obj, Dispatcher)}


def _run_on_cpu(path):
    """Runs the script as __main__ with launches on the CPU target; its globals (also
    when it ends with sys.exit(0): on SystemExit.namespace)."""
    import types
    from . import _core
    before = _core.get_target()
    mod = types.ModuleType("__main__")
    mod.__file__ = os.path.abspath(path)
    saved_main, saved_argv, saved_path = sys.modules.get("__main__"), sys.argv, list(sys.path)
    sys.modules["__main__"], sys.argv = mod, [path]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    _core.set_target("cpu")
    try:
        with open(path, "rb") as f:
            code = compile(f.read(), path, "exec")
        try:
            with contextlib.redirect_stdout(sys.stderr):  # standard output is for the PTX
                exec(code, mod.__dict__)
        except SystemExit as e:
            e.namespace = mod.__dict__
            raise
        return mod.__dict__
    finally:
        _core.set_target(before)
        sys.modules["__main__"], sys.argv, sys.path[:] = saved_main, saved_argv, saved_path


def _ptx(args):
    from . import CompileError
    cc = _parse_cc(args.cc)
    kernels = _load_kernels(args.file, run=args.run and not args.sig)
    if args.kernel:
        if args.kernel not in kernels:
            raise _Fail("no kernel named %r in %s (found: %s)" % (args.kernel, args.file,
                                                                  ", ".join(sorted(kernels)) or "none"))
        kernels = {args.kernel: kernels[args.kernel]}
    if not kernels:
        raise _Fail("no @gpujit.jit kernels in %s" % args.file)
    out, unsigned = [], []
    for name, k in sorted(kernels.items()):
        sigs = [args.sig] if args.sig else list(k._eager or [])
        if not sigs and args.run:
            sigs = k.signatures  # what the run launched it with
        if not sigs:
            unsigned.append(name)
            continue
        for sig in sigs:
            try:
                ptx = k.compile(sig, "cuda", cc).ptx
            except (TypeError, ValueError) as e:  # the signature: unparsable, or not the kernel's
                first = str(e).splitlines()[0] if str(e) else type(e).__name__
                raise _Fail("kernel %s: %s" % (name, first if first.startswith("bad signature")
                                               else "bad signature %r: %s" % (sig, first)))
            except CompileError as e:
                raise _Fail("kernel %s, signature %s:\n%s" % (name, sig, e), EXIT_COMPILE)
            out.append("// kernel %s, signature %s, sm_%d%d\n" % (name, sig, cc[0], cc[1]))
            out.append(ptx)
    if out:
        text = "".join(out)
        if args.output:
            try:
                with open(args.output, "w") as f:
                    f.write(text)
            except OSError as e:
                raise _Fail("cannot write %s: %s" % (args.output, e.strerror or e))
        else:
            sys.stdout.write(text)
    if unsigned:
        msg = ("kernels never launched by the script's main block, not compiled (pass --sig 'void(...)'): %s"
               if args.run else "kernels with no eager signature, not compiled (pass --sig 'void(...)', or --run "
               "to take the argument types from a run of the script on the CPU target): %s") % ", ".join(unsigned)
        if not out:
            raise _Fail(msg)
        print("gpujit: " + msg, file=sys.stderr)


# ---- info ---------------------------------------------------------------------------

def sysinfo():
    """[(section, [(key, value), ...]), ...]: what `info` prints."""
    import numpy as np
    import gpujit
    from . import _core
    from .cudadrv import cuda_devices

    lv = _core.llvm_version()
    versions = [("gpujit", "%s (%s)" % (gpujit.__version__, os.path.dirname(gpujit.__file__))),
                ("LLVM", "%d.%d.%d" % lv),
                ("Python", "%s %s (%s)" % (platform.python_implementation(), platform.python_version(),
                                           sys.executable)),
                ("NumPy", np.__version__)]
    system = [("OS", "%s %s" % (platform.system(), platform.release())),
              ("machine", platform.machine()),
              ("CPU cores", str(os.cpu_count() or "?"))]

    missing = []
    try:
        v = _core.driver_version()
        driver = [("driver", "loaded (%s)" % os.environ.get("GPUJIT_LIBCUDA", "libcuda.so.1")),
                  ("CUDA version (driver)", "%d.%d" % (v // 1000, (v % 1000) // 10))]
        if v < 12000:
            missing.append("a CUDA 12.0 or newer driver (this one is CUDA %d.%d)" % (v // 1000, (v % 1000) // 10))
    except Exception as e:
        driver = [("driver", "not found: %s" % e)]
        missing.append("the NVIDIA driver (libcuda.so.1; GPUJIT_LIBCUDA names another)")
    devices = []
    try:
        devs = cuda_devices()
    except Exception as e:
        devs = []
        devices.append(("devices", "cannot list: %s" % e))
    for d in devs:
        devices.append(("device %d" % d.id, "%s, compute capability %d.%d, %.1f GiB, %d SMs, pci %s" % (
            d.name, d.compute_capability[0], d.compute_capability[1], d.total_memory / 2**30,
            d.multiprocessor_count, d.pci_bus_id)))
    if not devs and not missing:
        missing.append("a CUDA device (the driver found none)")
    if not devices:
        devices.append(("devices", "none"))

    libdevice = _core.libdevice_path()
    if libdevice is None:
        missing.append("libdevice.10.bc, for kernels calling math functions (set GPUJIT_LIBDEVICE or CUDA_HOME)")
    env_target = os.environ.get("GPUJIT_TARGET")
    target = _core.get_target()
    why = ("GPUJIT_TARGET=%s" % env_target if env_target else
           "a driver and a device were found" if target == "cuda" else "no usable GPU")
    from .caching import cache_location
    cache = cache_location()
    compiler = [("default target", "%s (%s)" % (target, why)),
                ("PTX for compute capabilities", ", ".join("%d.%d" % c for c in _core.supported_ccs())),
                ("libdevice", libdevice or "not found"),
                ("cache directory (cache=True)", cache)]
    usable = all(m.startswith("libdevice") for m in missing)  # without libdevice only math functions fail
    gpu = [("GPU target", "usable" if usable else "not usable")]
    gpu += [("missing", m) for m in missing] or [("missing", "nothing")]
    return [("Versions", versions), ("System", system), ("CUDA driver", driver), ("CUDA devices", devices),
            ("Compiler", compiler), ("For the GPU target", gpu)]


def _info(args):
    sections = sysinfo()
    width = max(len(k) for _, rows in sections for k, _ in rows)
    for title, rows in sections:
        print("__%s__" % title)
        for k, v in rows:
            print("%-*s : %s" % (width, k, v))
        print()


# ---- the parser ---------------------------------------------------------------------

def _parser():
    from . import __version__
    p = argparse.ArgumentParser(prog="python3 -m gpujit",
                                description="gpujit: numba.cuda-style Python kernels compiled to PTX "
                                            "or to host code (the CPU target).")
    p.add_argument("--version", action="version", version="gpujit %s" % __version__,
                   help="print gpujit's version and exit")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    sub.add_parser("info", help="print what gpujit finds on this machine: versions, driver, devices, "
                                "libdevice, default target, cache directory, what the GPU target lacks",
                   description="What gpujit finds on this machine (as `numba -s`).")
    q = sub.add_parser("ptx", help="print the PTX of a script's kernels",
                       description="Print the PTX of the @gpujit.jit kernels in a script, without running "
                                   "its main block. Kernels with eager signatures use them; the others "
                                   "need --sig, or --run.")
    q.add_argument("file", help="the Python script that defines the kernels")
    q.add_argument("--kernel", metavar="NAME", help="only this kernel (default: all of them)")
    q.add_argument("--sig", metavar="SIG", help="compile with this signature, e.g. 'void(float32[::1], int32)' "
                                                "(default: each kernel's eager signatures)")
    q.add_argument("--run", action="store_true",
                   help="run the script's main block on the CPU target and compile each kernel without an eager "
                        "signature for the argument types it was launched with")
    q.add_argument("--cc", default="9.0", metavar="MAJOR.MINOR",
                   help="the compute capability to compile for (default: 9.0)")
    q.add_argument("-o", "--output", metavar="OUT", help="write the PTX to OUT (default: standard output)")
    return p


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        if args.cmd == "ptx":
            _ptx(args)
        elif args.cmd == "info":
            _info(args)
    except _Fail as e:
        print("gpujit: %s" % e, file=sys.stderr)
        return e.code
    return 0


if __name__ == "__main__":
    sys.exit(main())
