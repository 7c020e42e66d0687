"""Run a fuzz reproducer's GPU kernel as LLVM IR on the host, to tell a wrong IR from a wrong
NVPTX back end or ptxas without a GPU.

    python3 tests/fuzz/irhost.py REPRODUCER.txt [IR.ll]    (LLC_OPTS="-O3 -mattr=+fma" to vary)

The kernel is compiled for the cuda target (the optimised IR that goes to NVPTX), its special
registers and the few NVVM intrinsics libdevice's fmod uses are given host definitions, llc
compiles it for this machine, and the kernel runs once per thread (one thread at a time, so
barriers and shared memory are not supported) on the reproducer's inputs; the result is
compared with CPython's as fuzz.py does. If the GPU disagrees with CPython but this agrees,
the IR was right and the fault is in code generation (src/ptxfix.c has the cases found so far).
Needs LLVM 19's llc (/usr/lib/llvm-19/bin) and gcc.
"""
import ctypes
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzz  # noqa: E402

LLC = os.environ.get("LLC", "/usr/lib/llvm-19/bin/llc")

NVVM_HOST = '''
define double @nv_add_rn_d(double %a, double %b) {
  %r = fadd double %a, %b
  ret double %r
}
define double @nv_lohi(i32 %lo, i32 %hi) {
  %l = zext i32 %lo to i64
  %h = zext i32 %hi to i64
  %s = shl i64 %h, 32
  %o = or i64 %s, %l
  %d = bitcast i64 %o to double
  ret double %d
}
define i32 @nv_lo(double %d) {
  %i = bitcast double %d to i64
  %t = trunc i64 %i to i32
  ret i32 %t
}
define i32 @nv_hi(double %d) {
  %i = bitcast double %d to i64
  %s = lshr i64 %i, 32
  %t = trunc i64 %s to i32
  ret i32 %t
}
@g_tid_x = global i32 0
@g_ctaid_x = global i32 0
'''


def kernel_ir(prog, out, a, b):
    import gpujit
    from gpujit import _core, dispatcher
    g = {"math": math, "gpu": gpujit}
    exec(fuzz.code_of(prog), g)
    f = g["kern"]
    sig = dispatcher._normalise_sig(gpujit.typing.signature_of((out, a, b)))
    return _core.compile(f.__code__, f.__globals__, f.__closure__, sig, target="cuda", cc=(9, 0), fastmath=False,
                         lineinfo=False, debug=False, keep_llvm=True).llvm


def host_ir(ir, prog):
    ir = re.sub(r"^target (datalayout|triple).*$", "", ir, flags=re.M).replace("ptx_kernel ", "")
    sregs = set(re.findall(r"@llvm\.nvvm\.read\.ptx\.sreg\.([a-z.]+)\(\)", ir))
    ir = re.sub(r"^declare .*@llvm\.nvvm\.(read\.ptx\.sreg|add\.rn\.d|lohi\.i2d|d2i\.lo|d2i\.hi)\b.*$", "", ir, flags=re.M)
    for old, new in (("add.rn.d", "nv_add_rn_d"), ("lohi.i2d", "nv_lohi"), ("d2i.lo", "nv_lo"), ("d2i.hi", "nv_hi")):
        ir = ir.replace("@llvm.nvvm.%s(" % old, "@%s(" % new)
    defs = [NVVM_HOST]
    for s in sregs:
        name = s.replace(".", "_")
        ir = ir.replace("@llvm.nvvm.read.ptx.sreg.%s()" % s, "@sreg_%s()" % name)
        if name in ("tid_x", "ctaid_x"):
            body = "%%v = load i32, ptr @g_%s\n  ret i32 %%v" % name
        elif name == "laneid":
            body = "%v = load i32, ptr @g_tid_x\n  %w = and i32 %v, 31\n  ret i32 %w"
        else:
            val = {"ntid_x": prog.threads, "nctaid_x": prog.blocks}.get(name, 1 if name.startswith("n") else 0)
            body = "ret i32 %d" % val
        defs.append("define i32 @sreg_%s() {\n  %s\n}" % (name, body))
    return ir + "\n".join(defs) + "\n"


def run(path, ir_path=None):
    prog = fuzz.load_reproducer(path)
    out, a, b = fuzz.make_inputs(prog)
    want = out.copy()
    fuzz.run_reference(prog, fuzz.code_of(prog), want, a.copy(), b.copy())
    ir = open(ir_path).read() if ir_path else kernel_ir(prog, out, a, b)
    with tempfile.TemporaryDirectory() as d:
        ll, obj, so = (os.path.join(d, n) for n in ("k.ll", "k.o", "k.so"))
        with open(ll, "w") as fh:
            fh.write(host_ir(ir, prog))
        opts = os.environ.get("LLC_OPTS", "-O0").split()
        subprocess.run([LLC] + opts + ["-relocation-model=pic", "-filetype=obj", ll, "-o", obj], check=True)
        subprocess.run(["gcc", "-shared", "-o", so, obj, "-lm"], check=True)
        lib = ctypes.CDLL(so)
        got = out.copy()
        args = []
        for arr in (got, a, b):
            args.append(ctypes.c_void_p(arr.ctypes.data))
            args += [ctypes.c_int64(s) for s in arr.shape] + [ctypes.c_int64(s) for s in arr.strides]
        tid = ctypes.c_int32.in_dll(lib, "g_tid_x")
        cta = ctypes.c_int32.in_dll(lib, "g_ctaid_x")
        for blk in range(prog.blocks):
            for t in range(prog.threads):
                tid.value, cta.value = t, blk
                lib.kern(*args)
    return fuzz.compare(prog, got, want)


if __name__ == "__main__":
    diff = run(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
    print("IR on the host:", diff or "ok")
    sys.exit(1 if diff else 0)
