"""literal_unroll(t), under numba.cuda's name: `for x in literal_unroll(t)` is `for x in t`.
A kernel compiles it as any plain function (it returns its argument), so the loop is gpujit's
loop over a tuple: items of one type. numba also unrolls tuples of mixed types; gpujit raises
a TypingError for those ("variable index into a tuple of mixed types")."""


def literal_unroll(container):
    """`for x in literal_unroll(container)` in a kernel is `for x in container`, a tuple
    whose items have one type; called from Python it returns `container`."""
    return container
