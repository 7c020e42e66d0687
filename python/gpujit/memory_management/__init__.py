"""Memory management under numba.cuda's module names (numba.cuda.memory_management.nrt)."""
