"""A fresh process's first launch of saxpy with @jit(cache=True): the time from just after
`import gpujit` and the CUDA context's creation (on a GPU) to the kernel's result, with a cold cache (compiled) and a warm one (loaded from
the cache directory another process wrote). Median of N fresh processes each.

The children run with Python's default of writing bytecode (PYTHONDONTWRITEBYTECODE unset), as a
user's do. The time is also given in three parts: 'import' (the module's import, which makes the
dispatcher and finds its cache directory), 'load' (the kernel for the arguments: the cache key
and files, and on a GPU the module's load: from the stored cubin when 'cubin' hits, else the
driver compiles the PTX; cold: the compilation), 'launch' (the arrays' copies, the launch and
the result's copy back). 'cubin' counts the processes that loaded the stored machine code.

    PYTHONPATH=python python3 benchmarks/cache_startup.py [N]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

MODULE = '''
import gpujit as gpu


@gpu.jit(cache=True)
def saxpy(out, a, x, y):
    i = gpu.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]
'''

CHILD = '''
import sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
import gpujit
gpujit.synchronize()    # the CUDA context exists before the clock starts (its creation is not the cache's)
t0 = time.perf_counter()
import saxmod
t1 = time.perf_counter()
x = np.arange(1000, dtype=np.float32)
y = np.ones(1000, dtype=np.float32)
out = np.zeros_like(x)
saxmod.saxpy._compile_for_args(out, np.float32(2), x, y)    # what the launch's miss calls
if gpujit.current_target() == "cuda":
    gpujit._core.kernel_attributes(saxmod.saxpy._compile_for_args(out, np.float32(2), x, y))  # the module, loaded
t2 = time.perf_counter()
saxmod.saxpy[4, 256](out, np.float32(2), x, y)
assert (out == 2 * x + 1).all()
t3 = time.perf_counter()
s = saxmod.saxpy.stats
print((t3 - t0) * 1e3, sum(s.cache_hits.values()), sum(s.cache_misses.values()), sum(s.cubin_hits.values()),
      (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3)
'''


def child(src, cache):
    """(total ms, hits, misses, cubin hits, (import, load, launch) ms) of one fresh process."""
    env = dict(os.environ, GPUJIT_CACHE_DIR=cache)
    # Python's default: the cold process writes the kernel module's bytecode, the warm one reads
    # it (an environment that turns bytecode off would time compiling the module's source)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = subprocess.run([sys.executable, "-c", CHILD, src], capture_output=True, text=True, env=env, check=True)
    ms, hits, misses, cubin, *parts = out.stdout.split()
    return float(ms), int(hits), int(misses), int(cubin), tuple(float(p) for p in parts)


def _parts(runs):
    return " + ".join("%s %.1f" % (name, statistics.median(r[i] for r in runs))
                      for i, name in enumerate(("import", "load", "launch")))


def main(n=10):
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "src")
        os.mkdir(src)
        with open(os.path.join(src, "saxmod.py"), "w") as f:
            f.write(MODULE)
        cold, warm, cold_parts, warm_parts, cubin = [], [], [], [], 0
        for i in range(n):
            cache = os.path.join(tmp, "cache%d" % i)
            ms, hits, misses, _, parts = child(src, cache)          # an empty cache directory: compiles
            assert (hits, misses) == (0, 1)
            cold.append(ms)
            cold_parts.append(parts)
            ms, hits, misses, cubin_hits, parts = child(src, cache)  # what the first wrote: loads
            assert (hits, misses) == (1, 0)
            warm.append(ms)
            warm_parts.append(parts)
            cubin += cubin_hits
    import gpujit
    res = {"target": gpujit.current_target(), "processes": n, "cold_ms": round(statistics.median(cold), 1),
           "warm_ms": round(statistics.median(warm), 1), "warm_cubin_hits": cubin}
    print(json.dumps(res))
    print("first launch of saxpy in a fresh process (%s target, median of %d): cold cache %.1f ms, warm %.1f ms"
          % (res["target"], n, res["cold_ms"], res["warm_ms"]))
    print("  cold: %s ms; warm: %s ms; warm processes that loaded the stored cubin: %d of %d"
          % (_parts(cold_parts), _parts(warm_parts), cubin, n))


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:2]))
