"""NumPy-facing helpers under numba.cuda's module names (numba.cuda.np.numpy_support)."""
