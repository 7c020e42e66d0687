"""Ready-made device kernels under numba.cuda's module names (kernels.transpose)."""
