"""The shape side of generalized ufuncs, under numba.cuda's module name: reading a
layout such as '(m,n),(n,p)->(m,p)' and working out, for the shapes of one
call, the core (inner) shapes, the output shapes and the loop dimensions the
kernel runs over. Nothing here touches a device; gpujit.vectorizers launches.

    GUFuncEngine.from_signature('(m,n),(n,p)->(m,p)').schedule([(100, 4, 5), (5, 7)])
    -> ishapes [(4, 5), (5, 7)], oshapes [(4, 7)], loopdims (100,), pinned [False, True]
"""
import math
import re

__all__ = ["parse_signature", "GUFuncEngine", "GUFuncSchedule", "broadcast_shapes"]

_GROUP = re.compile(r"\(\s*([A-Za-z_0-9\s,]*?)\s*\)")


def _parse_groups(text, where, layout):
    """'(m,n),(n,p)' -> [('m', 'n'), ('n', 'p')]; a trailing comma is allowed, as NumPy's."""
    groups, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _GROUP.match(text, pos)
        if not m:
            raise ValueError("bad gufunc layout %r: expected '(' at %r in its %s" % (layout, text[pos:], where))
        names = [s.strip() for s in m.group(1).split(",") if s.strip()]
        for n in names:
            if not n.isidentifier():
                raise ValueError("bad gufunc layout %r: %r is not a dimension name" % (layout, n))
        groups.append(tuple(names))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos < len(text):
            if text[pos] != ",":
                raise ValueError("bad gufunc layout %r: expected ',' at %r" % (layout, text[pos:]))
            pos += 1
            while pos < len(text) and text[pos].isspace():
                pos += 1
    return groups


def parse_signature(layout):
    """A gufunc layout '(m,n),(n,p)->(m,p)' as (inputs, outputs), each a list of tuples of
    dimension names. An output dimension must appear among the inputs' (NameError)."""
    if not isinstance(layout, str) or "->" not in layout:
        raise ValueError("a gufunc layout is a string such as '(m,n),(n,p)->(m,p)', not %r" % (layout,))
    ins, _, outs = layout.partition("->")
    inputs = _parse_groups(ins, "inputs", layout)
    outputs = _parse_groups(outs, "outputs", layout)
    if not outputs:
        raise ValueError("bad gufunc layout %r: it has no output" % (layout,))
    known = {n for g in inputs for n in g}
    missing = sorted({n for g in outputs for n in g} - known)
    if missing:
        raise NameError("undefined output symbols: %s" % ",".join(missing))
    return inputs, outputs


def broadcast_shapes(*shapes):
    """NumPy's broadcasting of shapes; ValueError naming the argument that does not fit."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for argn, s in enumerate(shapes, 1):
        for k, n in enumerate(s, ndim - len(s)):
            if n == out[k] or n == 1:
                continue
            if out[k] != 1:
                raise ValueError("operands could not be broadcast together: argument %d has shape %s, "
                                 "the others broadcast to %s" % (argn, tuple(s), tuple(out)))
            out[k] = n
    return tuple(out)


class GUFuncSchedule:
    """How one call runs: core shapes of inputs (ishapes) and outputs (oshapes), the
    loop dimensions (loopdims, loopn elements), which inputs are the same for every
    iteration (pinned) and the full shape of each output (output_shapes)."""

    def __init__(self, engine, ishapes, oshapes, loopdims, pinned):
        self.parent = engine
        self.ishapes = ishapes
        self.oshapes = oshapes
        self.loopdims = loopdims
        self.loopn = math.prod(loopdims)
        self.pinned = pinned
        self.output_shapes = [tuple(loopdims) + tuple(s) for s in oshapes]

    def __repr__(self):
        return ("GUFuncSchedule(ishapes=%s, oshapes=%s, loopdims=%s, loopn=%d, pinned=%s)"
                % (self.ishapes, self.oshapes, self.loopdims, self.loopn, self.pinned))


class GUFuncEngine:
    """Reads a layout once; schedule() fits the shapes of one call to it."""

    @classmethod
    def from_signature(cls, layout):
        return cls(*parse_signature(layout))

    def __init__(self, inputsig, outputsig):
        self.sin, self.sout = list(inputsig), list(outputsig)
        self.nin, self.nout = len(self.sin), len(self.sout)

    def schedule(self, ishapes):
        """Core shapes, dimension sizes and loop dimensions for inputs of these shapes.
        An input's loop (outer) shape is the loop dimensions or nothing (or (1,)): then
        it is pinned, the same core for every iteration."""
        if len(ishapes) != self.nin:
            raise TypeError("this gufunc takes %d inputs, not %d" % (self.nin, len(ishapes)))
        sizes, outer, inner = {}, [], []
        for argn, (shape, names) in enumerate(zip(ishapes, self.sin), 1):
            shape = tuple(shape)
            k = len(names)
            if len(shape) < k:
                raise ValueError("argument %d: its %d dimension%s are fewer than the %d of its core %s"
                                 % (argn, len(shape), "" if len(shape) == 1 else "s", k, "(%s)" % ",".join(names)))
            core = shape[len(shape) - k:]
            for axis, (n, name) in enumerate(zip(core, names), len(shape) - k):
                if sizes.setdefault(name, n) != n:
                    raise ValueError("argument %d: shape[%d] is %d but dimension %r is %d elsewhere"
                                     % (argn, axis, n, name, sizes[name]))
            outer.append(shape[:len(shape) - k])
            inner.append(core)
        loopdims = max(outer, key=math.prod) if outer else ()
        pinned = []
        for argn, o in enumerate(outer, 1):
            if o == loopdims:
                pinned.append(False)
            elif o in ((), (1,)):
                pinned.append(True)
            else:
                raise ValueError("argument %d: its loop dimensions %s do not match %s" % (argn, o, loopdims))
        oshapes = [tuple(sizes[n] for n in names) for names in self.sout]
        return GUFuncSchedule(self, inner, oshapes, tuple(loopdims), pinned)
