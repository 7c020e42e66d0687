"""Refuse to load on a CPython whose bytecode gpujit's decoder was not written for.

Kernels are compiled from CPython bytecode, whose instruction set changes with
every minor version; another version's bytecode would be misread, so importing
gpujit there raises ImportError instead. Each supported version has its table
in src/pyversions.c.
"""
import sys

SUPPORTED = ((3, 11), (3, 12), (3, 13), (3, 14), (3, 15))


def check(version_info=sys.version_info):
    if tuple(version_info[:2]) not in SUPPORTED:
        raise ImportError("gpujit supports CPython 3.11 to 3.15 (it compiles their bytecode); "
                          "this is Python %d.%d" % tuple(version_info[:2]))


check()
