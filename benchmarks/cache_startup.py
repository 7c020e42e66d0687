"""A fresh process's first launch of saxpy with @jit(cache=True): the time from just after
`import gpujit` and the CUDA context's creation (on a GPU) to the kernel's result, with a cold cache (compiled) and a warm one (loaded from
the cache directory another process wrote). Median of N fresh processes each.

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
x = np.arange(1000, dtype=np.float32)
y = np.ones(1000, dtype=np.float32)
out = np.zeros_like(x)
saxmod.saxpy[4, 256](out, np.float32(2), x, y)
assert (out == 2 * x + 1).all()
t = time.perf_counter() - t0
s = saxmod.saxpy.stats
print(t * 1e3, sum(s.cache_hits.values()), sum(s.cache_misses.values()))
'''


def child(src, cache):
    env = dict(os.environ, GPUJIT_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, "-c", CHILD, src], capture_output=True, text=True, env=env, check=True)
    ms, hits, misses = out.stdout.split()
    return float(ms), int(hits), int(misses)


def main(n=10):
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "src")
        os.mkdir(src)
        with open(os.path.join(src, "saxmod.py"), "w") as f:
            f.write(MODULE)
        cold, warm = [], []
        for i in range(n):
            cache = os.path.join(tmp, "cache%d" % i)
            ms, hits, misses = child(src, cache)          # an empty cache directory: compiles
            assert (hits, misses) == (0, 1)
            cold.append(ms)
            ms, hits, misses = child(src, cache)          # what the first wrote: loads
            assert (hits, misses) == (1, 0)
            warm.append(ms)
    import gpujit
    res = {"target": gpujit.current_target(), "processes": n, "cold_ms": round(statistics.median(cold), 1),
           "warm_ms": round(statistics.median(warm), 1)}
    print(json.dumps(res))
    print("first launch of saxpy in a fresh process (%s target, median of %d): cold cache %.1f ms, warm %.1f ms"
          % (res["target"], n, res["cold_ms"], res["warm_ms"]))


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:2]))
