"""Launch-argument wrappers (numba.cuda.args): In, Out and InOut say which way
a host array is copied around a launch. The kernel gets a device copy of the
array; In copies it there before the launch only (the kernel's writes never
reach the host array), Out copies it back after the launch only (the kernel
starts from uninitialised memory), InOut both, which is also what a plain host
array gets. A device array (or any __cuda_array_interface__ object) is passed
as it is, whatever wraps it. The cpu target has the same copies: it keeps
device arrays in memory of their own too."""
import abc

from . import _core


def _on_device(value):
    return isinstance(value, _core.DeviceArrayBase) or hasattr(value, "__cuda_array_interface__")


def _is_host_array(value):
    import numpy as np
    return isinstance(value, np.ndarray)


def _copy_for_kernel(host, stream, copy):
    """A device array like host (its contents when copy), or, for what device arrays do not
    hold (record dtypes), a host array of its own, which the launcher stages like any other."""
    import numpy as np
    from .devicearray import to_device
    try:
        return to_device(host, stream=stream, copy=copy)
    except TypeError:
        return host.copy() if copy else np.empty_like(host)


def _copy_back(dev, host, stream):
    import numpy as np
    if isinstance(dev, np.ndarray):
        np.copyto(host, dev)
    else:
        dev.copy_to_host(host, stream=stream)


class ArgHint(metaclass=abc.ABCMeta):
    """A launch argument with a say in how it reaches the kernel: to_device(retr, stream)
    gives what the kernel gets and appends to `retr` what to call after the launch."""

    def __init__(self, value):
        self.value = value

    @abc.abstractmethod
    def to_device(self, retr, stream=0):
        """What the kernel gets for this argument; the after-launch work goes into retr
        (callables of no arguments)."""

    @property
    def _numba_type_(self):
        from .typing.typeof import typeof
        return typeof(self.value)

    def __repr__(self):
        return "%s(%r)" % (type(self).__name__, self.value)


class In(ArgHint):
    """In(value): the kernel argument `value` (an array) copied to the device before the
    launch, never back."""

    def to_device(self, retr, stream=0):
        if _on_device(self.value) or not _is_host_array(self.value):
            return self.value
        dev = _copy_for_kernel(self.value, stream, True)
        retr.append(lambda: dev)   # keeps the copy alive until the launch is done with it
        return dev


class Out(ArgHint):
    """Out(value): the kernel argument `value` (an array) copied back to the host after
    the launch; the kernel starts from uninitialised memory."""
    copy_input = False

    def to_device(self, retr, stream=0):
        if _on_device(self.value) or not _is_host_array(self.value):
            return self.value
        host = self.value
        dev = _copy_for_kernel(host, stream, self.copy_input)
        retr.append(lambda: _copy_back(dev, host, stream))
        return dev


class InOut(Out):
    """InOut(value): the kernel argument `value` (an array) copied to the device before
    the launch and back after it (a plain host array's way)."""
    copy_input = True


def wrap_arg(value, default=InOut):
    """value as it is when it is already an ArgHint, else default(value)."""
    return value if isinstance(value, ArgHint) else default(value)


_core.DispatcherBase._set_arg_hint_type(ArgHint)

__all__ = ["ArgHint", "In", "Out", "InOut", "wrap_arg"]
