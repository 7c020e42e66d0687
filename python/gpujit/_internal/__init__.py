"""numba.cuda's _internal modules, where its own tests import from them."""
