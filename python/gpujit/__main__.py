"""python3 -m gpujit ptx FILE.py [--kernel NAME] [--sig SIG] [--cc 9.0] [-o OUT]

Prints the PTX of the @gpujit.jit kernels in a script without running its
main block (the script is imported under another __name__). Kernels with
eager signatures use them; others need --sig.
"""
import argparse
import runpy
import sys

from . import Dispatcher


def _ptx(args):
    ns = runpy.run_path(args.file, run_name="__gpujit_ptx__")
    kernels = {name: obj for name, obj in ns.items() if isinstance(obj, Dispatcher)}
    if args.kernel:
        if args.kernel not in kernels:
            sys.exit("gpujit: no kernel named %r in %s (found: %s)" % (args.kernel, args.file,
                                                                      ", ".join(sorted(kernels)) or "none"))
        kernels = {args.kernel: kernels[args.kernel]}
    if not kernels:
        sys.exit("gpujit: no @gpujit.jit kernels in %s" % args.file)
    major, _, minor = args.cc.partition(".")
    cc = (int(major), int(minor or 0))
    out = []
    for name, k in sorted(kernels.items()):
        sigs = [args.sig] if args.sig else (k._eager or [])
        if not sigs:
            sys.exit("gpujit: kernel %r has no eager signature; pass --sig 'void(...)'" % name)
        for sig in sigs:
            out.append("// kernel %s, signature %s, sm_%d%d\n" % (name, sig, cc[0], cc[1]))
            out.append(k.compile(sig, "cuda", cc).ptx)
    text = "".join(out)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m gpujit")
    sub = p.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("ptx", help="print the PTX of a script's kernels")
    q.add_argument("file")
    q.add_argument("--kernel")
    q.add_argument("--sig")
    q.add_argument("--cc", default="9.0")
    q.add_argument("-o", "--output")
    args = p.parse_args(argv)
    if args.cmd == "ptx":
        _ptx(args)


if __name__ == "__main__":
    main()
