"""gpujit's command line: python3 -m gpujit [--version] {info,ptx} ...

    python3 -m gpujit info                  what gpujit finds on this machine (as `numba -s`)
    python3 -m gpujit ptx FILE.py [--kernel NAME] [--sig SIG] [--cc 9.0] [-o OUT]

`ptx` prints the PTX of the @gpujit.jit kernels in a script without running its
main block (the script is run under another __name__). Kernels with eager
signatures use them; the others need --sig, and are listed by name when it is
missing. A bad file, compute capability or signature is one line on stderr and
exit status 2; a kernel that does not compile prints gpujit's error (with its
file:line) and exits 1.
"""
import argparse
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


def _load_kernels(path):
    from . import CompileError, Dispatcher
    if not os.path.isfile(path):
        raise _Fail("%s: no such file" % path)
    try:
        ns = runpy.run_path(path, run_name="__gpujit_ptx__")
    except SystemExit as e:
        raise _Fail("%s: the script exited (status %s) while being loaded" % (path, e.code))
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
    return {name: obj for name, obj in ns.items() if isinstance(obj, Dispatcher)}


def _ptx(args):
    from . import CompileError
    cc = _parse_cc(args.cc)
    kernels = _load_kernels(args.file)
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
        msg = "kernels with no eager signature, not compiled (pass --sig 'void(...)'): %s" % ", ".join(unsigned)
        if not out:
            raise _Fail(msg)
        print("gpujit: " + msg, file=sys.stderr)


# ---- info ---------------------------------------------------------------------------

def sysinfo():
    """[(section, [(key, value), ...]), ...]: what `info` prints."""
    import numpy as np
    import gpujit
    from . import _core
    from .cudadrv import list_devices

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
        devs = list_devices()
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
    cache = next(("$%s=%s" % (var, os.environ[var]) for var in ("NUMBA_CACHE_DIR", "GPUJIT_CACHE_DIR")
                  if os.environ.get(var)), None)
    if cache is None:
        cache = "__pycache__ beside each source file (else %s)" % os.path.join(
            os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "gpujit")
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
                                   "need --sig.")
    q.add_argument("file", help="the Python script that defines the kernels")
    q.add_argument("--kernel", metavar="NAME", help="only this kernel (default: all of them)")
    q.add_argument("--sig", metavar="SIG", help="compile with this signature, e.g. 'void(float32[::1], int32)' "
                                                "(default: each kernel's eager signatures)")
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
