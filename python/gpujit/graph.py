"""CUDA graphs: a sequence of kernel launches and copies recorded once and
replayed with one call, for work made of many small launches.

    s = gpujit.stream()
    with gpujit.graph(s) as g:          # captures what is queued on s: nothing runs yet
        scale[blocks, threads, s](x, 2.0)
        add[blocks, threads, s](x, y, out)
    g.launch()                          # replays it on s (g.launch(other) on another stream)
    g.update(0, x, 3.0)                 # the first launch's arguments, for later replays
    g.launch()
    s.synchronize()

The module is callable: gpujit.graph(stream, mode='thread_local') makes a Graph.
On the GPU the capture is the driver's stream capture (cuStreamBeginCapture /
cuStreamEndCapture, cuGraphInstantiate) and a replay is one cuGraphLaunch; an
update sets the kernel node's parameters in the instantiated graph
(cuGraphExecKernelNodeSetParams), without capturing again. On the cpu target
the same API records the launches and copies and replays them in order.
runtime/graph.c holds the capture state the launcher and the copies consult.
"""
import sys
import types
import weakref

from . import _core

__all__ = ["Graph", "KernelNode", "GraphCaptureError"]

GraphCaptureError = _core.GraphCaptureError

# CUstreamCaptureMode: which calls the driver refuses while capturing ('global': from any
# thread; 'thread_local': from the capturing thread; 'relaxed': none, allocation included)
_MODES = {"global": 0, "thread_local": 1, "relaxed": 2}


def _stream_arg(stream):
    """What the runtime reads as a stream: gpujit's Stream, an int handle, an object with
    __cuda_stream__, or CuPy's (.ptr) and PyTorch's (.cuda_stream) stream objects."""
    if stream is None or isinstance(stream, (int, _core.Stream)) or hasattr(stream, "__cuda_stream__"):
        return stream
    for attr in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
        h = getattr(stream, attr, None)
        if isinstance(h, int):
            return h
    return stream


class KernelNode:
    """One captured kernel launch of a Graph: its kernel, configuration and arguments.
    `update(*args)` gives it new arguments of the same types for later replays."""

    __slots__ = ("_graph", "index", "_config", "args", "_kernel", "_node")

    def __init__(self, graph, index, config, args, kernel, node):
        self._graph = weakref.ref(graph)
        self.index = index
        self._config = config
        self.args = args
        self._kernel = kernel
        self._node = node

    @property
    def kernel(self):
        """The kernel (the @jit dispatcher) launched."""
        return self._config.dispatcher

    @property
    def griddim(self):
        return self._config.griddim

    @property
    def blockdim(self):
        return self._config.blockdim

    @property
    def sharedmem(self):
        return self._config.sharedmem

    def update(self, *args):
        """New arguments for this launch (the graph's update(self, *args))."""
        g = self._graph()
        if g is None:
            raise ValueError("the graph of this node is gone")
        g.update(self, *args)

    def __repr__(self):
        name = getattr(self.kernel, "__name__", "kernel")
        return "<KernelNode %d: %s[%s, %s]>" % (self.index, name, self.griddim, self.blockdim)


class Graph:
    """Made by gpujit.graph(stream, mode='thread_local'); `with g:` captures. See the module."""

    def __init__(self, stream, mode="thread_local"):
        if mode not in _MODES:
            raise ValueError("mode must be one of %s, not %r" % (", ".join(map(repr, _MODES)), mode))
        self.stream = stream
        self.mode = mode
        self.nodes = []           # KernelNode, in launch order
        self._stream = _stream_arg(stream)
        self._state = "new"       # new -> capturing -> ready | discarded; closed
        self._records = []
        self._ops = []            # cpu target: KernelNode or ("copy", dst, src, n, keep), in order
        self._keep = []           # host memory the captured copies use
        self._target = _core.get_target()
        self._device = stream.device if isinstance(stream, _core.Stream) else _core.current_device()
        self._generation = None
        self._graph = self._exec = 0
        self._finalizer = None

    # ---- capture ----

    def __enter__(self):
        if self._state != "new":
            raise GraphCaptureError("this graph was captured already: make a new one with gpujit.graph(stream)")
        _core._graph_begin(self._stream, _MODES[self.mode], self._records)
        self._state = "capturing"
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._state != "capturing":
            return False
        if exc_type is not None:  # the block failed: the capture ends and is thrown away
            self._state = "discarded"
            self._records.clear()
            _core._graph_end(True)
            return False
        try:
            graph = _core._graph_end(False)
        except BaseException:
            self._state = "discarded"
            self._records.clear()
            raise
        if self._target == "cuda":
            try:
                self._exec, self._generation = _core._graph_instantiate(self._device, graph)
            except BaseException:  # the graph went with it
                self._state = "discarded"
                self._records.clear()
                raise
            self._graph = graph
            self._finalizer = weakref.finalize(self, _core._graph_destroy, self._device, self._generation,
                                               self._graph, self._exec)
        for rec in self._records:
            if rec[0] == "kernel":
                node = KernelNode(self, len(self.nodes), rec[1], rec[2], rec[3], rec[4])
                self.nodes.append(node)
                self._ops.append(node)
            elif rec[0] == "copy":
                self._ops.append(rec)
            else:
                self._keep.append(rec[1])
        self._records = None
        self._state = "ready"
        return False

    # ---- use ----

    def _check_ready(self):
        if self._state != "ready":
            raise GraphCaptureError({"new": "this graph has not been captured: use `with graph:`",
                                     "capturing": "this graph is still being captured",
                                     "discarded": "this graph's capture failed: it was discarded",
                                     "closed": "this graph was closed"}[self._state])
        if self._target == "cuda" and not _core._graph_alive(self._device, self._generation):
            raise _core.CudaError("this graph was destroyed by gpujit.reset()")

    def launch(self, stream=None):
        """Replay the graph on `stream` (default: the stream it was captured on). Like a kernel
        launch it is asynchronous on the GPU; on the cpu target it runs before returning."""
        self._check_ready()
        stream = self.stream if stream is None else stream
        if self._target == "cuda":
            _core._graph_launch(self._device, self._exec, _stream_arg(stream))
            return
        import ctypes
        for op in self._ops:
            if isinstance(op, KernelNode):
                op._config(*op.args)
            else:
                ctypes.memmove(op[1], op[2], op[3])

    def replay(self):
        """launch() on the stream the graph was captured on (PyTorch's name)."""
        self.launch()

    def upload(self, stream=None):
        """Prepare the graph on the device now, so that the first launch costs no more than the
        next ones (cuGraphUpload; nothing to do on the cpu target)."""
        self._check_ready()
        if self._target == "cuda":
            _core._graph_upload(self._device, self._exec, _stream_arg(self.stream if stream is None else stream))

    def update(self, node, *args):
        """Give captured kernel launch `node` (a KernelNode or its index in `nodes`) new
        arguments for the following replays, without capturing again. They must be of the
        same types as the captured ones (the same specialisation of the kernel): new arrays
        of the same dtype, layout and dimensions, new scalar values. The launch
        configuration stays."""
        self._check_ready()
        if not isinstance(node, KernelNode):
            try:
                node = self.nodes[node]
            except (IndexError, TypeError):
                raise IndexError("graph node %r: this graph has %d kernel launches" % (node, len(self.nodes))) \
                    from None
        elif node._graph() is not self:
            raise ValueError("the node belongs to another graph")
        if self._target == "cuda":
            if not node._node:
                raise GraphCaptureError("the driver did not report the graph node of this launch: it cannot "
                                        "be updated")
            _core._graph_update(self._exec, node._node, node._kernel, node._config, args)
        else:
            _core._graph_update(0, 0, node._kernel, node._config, args)
        node.args = args

    def close(self):
        """Free the graph now (it is also freed when garbage-collected)."""
        if self._finalizer is not None:
            self._finalizer()
        self._ops = []
        self._keep = []
        self.nodes = []
        if self._state == "ready":
            self._state = "closed"

    def __repr__(self):
        return "<gpujit Graph (%s target): %s, %d kernel launches>" % (self._target, self._state, len(self.nodes))


class _GraphModule(types.ModuleType):
    """gpujit.graph is this module, and calling it makes a Graph."""

    def __call__(self, stream, mode="thread_local"):
        return Graph(stream, mode)


sys.modules[__name__].__class__ = _GraphModule
