"""numba's device-side allocator (NRT) statistics, under its names: rtsys.

numba's kernels may allocate on the device (np.empty, a.copy()) through NRT, and
its tests check the allocation counters for leaks. gpujit's kernels never allocate
on the device, so every counter is zero, always: what rtsys reports is true."""
import collections

_Stats = collections.namedtuple("_nrt_mstats", ["alloc", "free", "mi_alloc", "mi_free"])


class _Runtime:
    """numba's rtsys: the statistics switch and counters."""

    def __init__(self):
        self._stats = False

    def memsys_enable_stats(self):
        self._stats = True

    def memsys_disable_stats(self):
        self._stats = False

    def memsys_stats_enabled(self):
        return self._stats

    def get_allocation_stats(self):
        """(alloc, free, mi_alloc, mi_free): allocations made and freed by kernels, all 0."""
        return _Stats(0, 0, 0, 0)


rtsys = _Runtime()
