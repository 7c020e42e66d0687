"""Kernel-language helpers under numba.cuda's module names (numba.cuda.misc.special)."""
