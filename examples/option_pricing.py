"""European call options: the Black-Scholes closed form per option, and a Monte
Carlo estimate with gpujit.random, checked against each other and NumPy.

    python3 examples/option_pricing.py
"""
import math

import numpy as np

import gpujit as gpu
from gpujit.random import create_xoroshiro128p_states, xoroshiro128p_normal_float64


@gpu.jit(device=True)
def cnd(d):
    return 0.5 * (1.0 + math.erf(d / math.sqrt(2.0)))


@gpu.jit
def black_scholes(call, S, K, T, r, sigma):
    i = gpu.grid(1)
    if i < S.size:
        sqrt_t = math.sqrt(T[i])
        d1 = (math.log(S[i] / K[i]) + (r + 0.5 * sigma * sigma) * T[i]) / (sigma * sqrt_t)
        d2 = d1 - sigma * sqrt_t
        call[i] = S[i] * cnd(d1) - K[i] * math.exp(-r * T[i]) * cnd(d2)


@gpu.jit
def monte_carlo(partial, states, S, K, T, r, sigma, paths_per_thread):
    # each thread prices one option along `paths_per_thread` simulated endpoints
    i = gpu.grid(1)
    if i < S.size:
        drift = (r - 0.5 * sigma * sigma) * T[i]
        vol = sigma * math.sqrt(T[i])
        acc = 0.0
        for _ in range(paths_per_thread):
            z = xoroshiro128p_normal_float64(states, i)
            acc += max(S[i] * math.exp(drift + vol * z) - K[i], 0.0)
        partial[i] = math.exp(-r * T[i]) * acc / paths_per_thread


def main(n=2048, paths=4000):
    rng = np.random.default_rng()
    S = rng.uniform(50, 150, n)
    K = rng.uniform(50, 150, n)
    T = rng.uniform(0.25, 2.0, n)
    r, sigma = 0.03, 0.25
    call = np.full(n, np.nan)
    tpb = 128
    blocks = (n + tpb - 1) // tpb
    black_scholes[blocks, tpb](call, S, K, T, r, sigma)
    d1 = (np.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * np.sqrt(T))
    d2 = d1 - sigma * np.sqrt(T)
    erf = np.vectorize(math.erf)
    want = S * 0.5 * (1 + erf(d1 / math.sqrt(2))) - K * np.exp(-r * T) * 0.5 * (1 + erf(d2 / math.sqrt(2)))
    np.testing.assert_allclose(call, want, rtol=1e-12, atol=1e-10)

    states = create_xoroshiro128p_states(n, seed=int(rng.integers(1 << 62)))
    mc = np.full(n, np.nan)
    monte_carlo[blocks, tpb](mc, states, S, K, T, r, sigma, paths)
    # the Monte Carlo mean error shrinks as 1/sqrt(paths): compare the average error
    rel = np.abs(mc - call).mean() / call.mean()
    assert rel < 0.05, rel
    print("option pricing, %d options on the %s target: closed form OK, Monte Carlo (%d paths) "
          "within %.2f%%: OK" % (n, gpu.current_target(), paths, 100 * rel))


if __name__ == "__main__":
    main()
