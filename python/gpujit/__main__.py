"""gpujit's command line: python3 -m gpujit [--version] {info,ptx} ...

    python3 -m gpujit info                  what gpujit finds on this machine (as `numba -s`)
    python3 -m gpujit ptx FILE.py [--kernel NAME] [--sig SIG | --run] [--cc 9.0] [-o OUT]

`ptx` writes the PTX of the @gpujit.jit kernels in a script without running its
main block (the script is run under another __name__, its output sent to standard
error). Kernels with eager signatures use them. For the others, --run runs the
script's main block on the CPU target and compiles each kernel for the argument
types it was launched with; without it they need --kernel and --sig, and are
listed by name. Every output is one PTX module that ptxas assembles: several
kernels or signatures need -o DIR, which gets a file each. A bad file, compute
capability or signature is one line on stderr and exit status 2; a kernel that
does not compile prints gpujit's error (with its file:line) and exits 1.
"""
import argparse
import contextlib
import os
import platform
import re
import sys
import types

EXIT_USAGE = 2
EXIT_COMPILE = 1


class _Fail(Exception):
    """A one-line user error: printed as `gpujit: ...`, exit status `code`."""

    def __init__(self, msg, code=EXIT_USAGE):
        super().__init__(msg)
        self.code = code


# ---- ptx ----------------------------------------------------------------------------

def _parse_cc(text):
    """--cc's value as compile_ptx's cc: (major, minor), or (9, 0, 'a') for 9.0a. Only the compute
    capabilities the compiler makes PTX for are taken, so that the output's .target is the one asked
    for."""
    from . import _core
    known = ["%d.%d" % c for c in _core.supported_ccs()] + ["9.0a"]
    m = re.fullmatch(r"\s*(\d+)\.(\d)(a?)\s*", text or "")
    if not m or "%s.%s%s" % m.groups() not in known:
        raise _Fail("bad --cc %r: gpujit makes PTX for compute capabilities %s" % (text, ", ".join(known)))
    cc = (int(m.group(1)), int(m.group(2)))
    return cc + ("a",) if m.group(3) else cc


def _cc_label(cc):
    return "sm_%d%d%s" % (cc[0], cc[1], cc[2] if len(cc) > 2 else "")


class _ScriptExit(BaseException):
    """os._exit() called by the script while it is loaded or run: it would end this process
    without a word, so it ends the script instead."""

    def __init__(self, code):
        super().__init__(code)
        self.code = code


@contextlib.contextmanager
def _script_context(path, name):
    """While the script at `path` runs as module `name`: its output goes to standard error
    (standard output is for the PTX), os._exit() raises _ScriptExit, and sys.argv, sys.path
    and sys.modules[name] are the script's."""
    def _exit(code):
        raise _ScriptExit(code)

    saved = sys.modules.get(name), sys.argv, list(sys.path), os._exit
    mod = types.ModuleType(name)
    mod.__file__ = os.path.abspath(path)
    sys.modules[name], sys.argv, os._exit = mod, [path], _exit
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield mod
    finally:
        sys.stdout.flush()
        os._exit = saved[3]
        sys.argv, sys.path[:] = saved[1], saved[2]
        if name == "__main__":  # the script's own module stays importable under its ptx name
            sys.modules[name] = saved[0]


def _load_kernels(path, run=False):
    """The script's module-level kernels, by name. Loaded as module __gpujit_ptx__, so that its
    main block does not run; with run, it runs as __main__ on the CPU target, so that its
    kernels are specialised for the arguments it launches them with."""
    from . import CompileError, Dispatcher, _core
    if os.path.isdir(path):
        raise _Fail("%s is a directory: pass the Python script that defines the kernels" % path)
    if not os.path.isfile(path):
        raise _Fail("%s: no such file" % path)
    how = "run" if run else "loaded"
    before = _core.get_target()
    try:
        with open(path, "rb") as f:
            source = f.read()
        with _script_context(path, "__main__" if run else "__gpujit_ptx__") as mod:
            if run:
                _core.set_target("cpu")
            try:
                exec(compile(source, path, "exec"), mod.__dict__)
            except (SystemExit, _ScriptExit) as e:
                status = e.code
                if not (run and status in (0, None)):
                    call = "os._exit(%s)" % status if isinstance(e, _ScriptExit) else "exited (status %s)" % status
                    raise _Fail("%s: the script %s while being %s%s" % (
                        path, "called " + call if isinstance(e, _ScriptExit) else call, how,
                        "" if run else " (put its top-level code under `if __name__ == \"__main__\":`)"))
            finally:
                if run:
                    _core.set_target(before)
        ns = mod.__dict__
    except _Fail:
        raise
    except CompileError as e:  # an eager signature's kernel: gpujit's message names its file:line
        raise _Fail("%s" % e, EXIT_COMPILE)
    except Exception as e:  # the user's script: any error it raises is a bad input
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


def _modules(args, kernels, cc):
    """[(kernel name, signature, ptx), ...] in order, and the names of kernels left without a
    signature."""
    from . import CompileError
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
            out.append((name, str(sig), "// kernel %s, signature %s, %s\n%s" % (name, sig, _cc_label(cc), ptx)))
    return out, unsigned


def _write(path, text):
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as e:
        raise _Fail("cannot write %s: %s" % (path, e.strerror or e))


def _ptx(args):
    cc = _parse_cc(args.cc)
    kernels = _load_kernels(args.file, run=args.run)
    if args.kernel:
        if args.kernel not in kernels:
            raise _Fail("no kernel named %r in %s (found: %s)" % (args.kernel, args.file,
                                                                  ", ".join(sorted(kernels)) or "none"))
        kernels = {args.kernel: kernels[args.kernel]}
    if not kernels:
        raise _Fail("no @gpujit.jit kernels in %s" % args.file)
    if args.sig and len(kernels) > 1:
        raise _Fail("--sig applies to one kernel: pass --kernel NAME too (found: %s)" % ", ".join(sorted(kernels)))
    out, unsigned = _modules(args, kernels, cc)
    to_dir = args.output and (os.path.isdir(args.output) or args.output.endswith(os.sep))
    if len(out) > 1 and not to_dir:
        raise _Fail("%d PTX modules (%s): a file holds one, so pass -o DIR to write one file each, or --kernel "
                    "NAME (and --sig SIG) to pick one" % (len(out), ", ".join("%s %s" % m[:2] for m in out)))
    if to_dir:
        os.makedirs(args.output, exist_ok=True)
        counts = {}
        for name, _, _ in out:
            counts[name] = counts.get(name, 0) + 1
        seen = {}
        for name, sig, text in out:
            seen[name] = seen.get(name, 0) + 1
            base = name if counts[name] == 1 else "%s.%d" % (name, seen[name])
            path = os.path.join(args.output, base + ".ptx")
            _write(path, text)
            print("gpujit: wrote %s (kernel %s, signature %s)" % (path, name, sig), file=sys.stderr)
    elif out and args.output:
        _write(args.output, out[0][2])
    elif out:
        sys.stdout.write(out[0][2])
    if unsigned:
        msg = ("kernels never launched by the script's main block, not compiled (pass --sig 'void(...)'): %s"
               if args.run else "kernels with no eager signature, not compiled (pass --sig 'void(...)', or --run "
               "to take the argument types from a run of the script on the CPU target): %s") % ", ".join(unsigned)
        if not out:
            raise _Fail(msg)
        print("gpujit: " + msg, file=sys.stderr)


# ---- info ---------------------------------------------------------------------------

def _environment_problems():
    """{variable: one-line message} for every GPUJIT_* variable whose value gpujit does not
    take: config.check_environment() asked again with each bad one set aside (config's own
    settings are read when it is imported, which a bad one makes fail)."""
    import importlib
    problems, aside = {}, {}
    try:
        for _ in range(len(os.environ)):
            try:
                importlib.import_module(__package__ + ".config").check_environment()
                break
            except ValueError as e:
                var = str(e).split("=", 1)[0]
                if var not in os.environ or var in aside:
                    problems.setdefault("GPUJIT", str(e))
                    break
                problems[var] = str(e)
                aside[var] = os.environ.pop(var)
    finally:
        os.environ.update(aside)
    return problems


def _memory():
    """(total, available) bytes of memory, from /proc/meminfo (None where it is not readable)."""
    found = {}
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("MemTotal", "MemAvailable"):
                    found[key] = int(rest.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return found.get("MemTotal"), found.get("MemAvailable")


def _gib(n):
    return "?" if n is None else "%.1f GiB" % (n / 2**30)


def _nvrtc_path():
    from .cudadrv import nvrtc
    try:
        lib = nvrtc._nvrtc()
        return "found (%s), version %d.%d" % ((lib._name,) + tuple(nvrtc._get_nvrtc_version()))
    except Exception as e:
        return "not found (%s)" % (str(e).splitlines()[0] if str(e) else type(e).__name__)


def _nvidia_wheels():
    from importlib import metadata
    found = sorted({"%s %s" % (d.metadata["Name"], d.version) for d in metadata.distributions()
                    if (d.metadata["Name"] or "").lower().startswith(("nvidia-", "cuda-"))})
    return found


def _cache_state(path):
    """What the directory at `path` is, for the kernel cache: its entries and their size, or why it
    is not usable."""
    if os.path.isfile(path):
        return "a file, not a directory: not usable"
    if not os.path.exists(path):
        return "does not exist yet (made on the first cached compile)"
    if not os.access(path, os.W_OK | os.X_OK):
        return "not writable: not usable"
    files = size = 0
    for dirpath, _, names in os.walk(path):
        for n in names:
            try:
                size += os.path.getsize(os.path.join(dirpath, n))
                files += 1
            except OSError:
                pass
    return "%d files, %.1f MiB" % (files, size / 2**20)


def _cache_rows():
    """The cache directory cache=True uses, as caching.py picks it, with its state; where a
    variable names one that is not used, why, and what is used instead."""
    from .caching import _user_cache, cache_location
    user = _user_cache()
    used, _, ignored = cache_location().partition("; ")
    rows = []
    if used.startswith("$"):
        root = used.partition("=")[2]
        rows.append(("cache directory (cache=True)", "%s: %s" % (used, _cache_state(root))))
        if ignored:
            rows.append(("not used", ignored))
    elif ignored:
        rows.append(("cache directory (cache=True)", "%s: not usable" % ignored))
        rows.append(("cache directory used instead", used))
    else:
        rows.append(("cache directory (cache=True)", used))
    rows.append(("per-user cache", "%s: %s" % (user, _cache_state(user))))
    return rows


def sysinfo():
    """[(section, [(key, value), ...]), ...]: what `info` prints."""
    import numpy as np
    import gpujit
    from . import _core
    from .cudadrv import _cpu_name, cuda_devices
    from .sass import find_tool

    lv = _core.llvm_version()
    versions = [("gpujit", "%s (%s)" % (gpujit.__version__, os.path.dirname(gpujit.__file__))),
                ("LLVM", "%d.%d.%d" % lv),
                ("Python", "%s %s (%s)" % (platform.python_implementation(), platform.python_version(),
                                           sys.executable)),
                ("NumPy", np.__version__)]
    total, available = _memory()
    libc = " ".join(platform.libc_ver()).strip() or "unknown"
    system = [("OS", "%s %s" % (platform.system(), platform.release())),
              ("machine", platform.machine()),
              ("CPU", _cpu_name()),
              ("CPU cores", str(os.cpu_count() or "?")),
              ("memory", "%s, %s available" % (_gib(total), _gib(available))),
              ("C library", libc)]

    env = _core.cache_environment()
    cpu = _core.cpu_settings()
    features = sorted(f[1:] for f in env["host_features"].split(",") if f.startswith("+"))
    cpu_target = [("compiles for (and caches by)", "%s, %s" % (env["host_cpu"],
                                                             "LLVM %d.%d.%d" % lv)),
                  ("CPU features", " ".join(features) or "none"),
                  ("threads running blocks", "%d (GPUJIT_CPU_THREADS%s)" % (
                      cpu["threads"], "=" + os.environ["GPUJIT_CPU_THREADS"]
                      if os.environ.get("GPUJIT_CPU_THREADS") else " unset: the CPUs this process may use")),
                  ("stack per GPU thread", "%d KiB" % (cpu["stack"] // 1024))]

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
    tools = [("ptxas", find_tool("ptxas") or "not found (inspect_sass needs it)"),
             ("nvdisasm", find_tool("nvdisasm") or "not found (inspect_sass needs it)"),
             ("NVRTC", _nvrtc_path()),
             ("libdevice", libdevice or "not found")]
    wheels = [("installed", ", ".join(_nvidia_wheels()) or "none")]

    problems = _environment_problems()
    settings = [(k, v if k not in problems else "%s  <- bad: %s" % (v, problems[k]))
                for k, v in sorted(os.environ.items()) if k.startswith("GPUJIT_")]
    settings += [(k, v) for k, v in sorted(os.environ.items()) if k.startswith("NUMBA_")]
    if "GPUJIT" in problems:
        settings.append(("problem", problems["GPUJIT"]))

    env_target = os.environ.get("GPUJIT_TARGET")
    try:
        target = _core.get_target()
        why = ("GPUJIT_TARGET=%s" % env_target if env_target else
               "GPUJIT_TARGET unset: a driver and a device were found" if target == "cuda"
               else "GPUJIT_TARGET unset: no usable GPU")
        default_target = "%s (%s)" % (target, why)
    except ValueError as e:
        default_target = "none: %s" % e
    compiler = [("default target", default_target),
                ("PTX for compute capabilities", ", ".join("%d.%d" % c for c in _core.supported_ccs()) + ", 9.0a")]
    compiler += _cache_rows()
    usable = all(m.startswith("libdevice") for m in missing)  # without libdevice only math functions fail
    gpu = [("GPU target", "usable" if usable else "not usable")]
    gpu += [("missing", m) for m in missing] or [("missing", "nothing")]
    return [("Versions", versions), ("System", system), ("CPU target", cpu_target), ("CUDA driver", driver),
            ("CUDA devices", devices), ("CUDA tools", tools), ("NVIDIA wheels", wheels),
            ("Environment (GPUJIT_*, NUMBA_*)", settings or [("set", "none")]), ("Compiler", compiler),
            ("For the GPU target", gpu)], problems


def _info(args):
    sections, problems = sysinfo()
    width = max(len(k) for _, rows in sections for k, _ in rows)
    for title, rows in sections:
        print("__%s__" % title)
        for k, v in rows:
            print("%-*s : %s" % (width, k, v))
        print()
    if problems:
        sys.stdout.flush()
        raise _Fail("; ".join(problems.values()))


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
    how = q.add_mutually_exclusive_group()
    how.add_argument("--sig", metavar="SIG", help="compile the kernel --kernel names with this signature, e.g. "
                                                  "'void(float32[::1], int32)' (default: each kernel's eager "
                                                  "signatures)")
    how.add_argument("--run", action="store_true",
                     help="run the script's main block on the CPU target and compile each kernel without an eager "
                          "signature for the argument types it was launched with")
    q.add_argument("--cc", default="9.0", metavar="MAJOR.MINOR",
                   help="the compute capability to compile for, e.g. 8.6 or 9.0a (default: 9.0)")
    q.add_argument("-o", "--output", metavar="OUT",
                   help="write the PTX to OUT (default: standard output); a directory (existing, or ending in /) "
                        "gets one file per kernel and signature, NAME.ptx (NAME.1.ptx, NAME.2.ptx, ... for "
                        "several signatures), which several modules need")
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
