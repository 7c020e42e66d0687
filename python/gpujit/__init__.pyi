"""What type checkers and editors see of the gpujit package: every public name, those
loaded on first use (vectorize, Reduce, config, ...) and the vector types included.
tests/test_typing.py checks that it names what dir(gpujit) lists."""
from typing import Any

from .vector_types import VectorConstructor as _VectorConstructor

from . import args as args
from . import bf16 as bf16
from . import compiler as compiler
from . import config as config
from . import cudadrv as cudadrv
from . import devicearray as devicearray
from . import deviceufunc as deviceufunc
from . import dispatcher as dispatcher
from . import errors as errors
from . import fp8 as fp8
from . import graph as graph
from . import intrinsics as intrinsics
from . import kernels as kernels
from . import libdevice as libdevice
from . import libdevicefuncs as libdevicefuncs
from . import linking as linking
from . import numba_interop as numba_interop
from . import reduction as reduction
from . import types as types
from . import typing as typing
from . import vector_types as vector_types
from ._place import install_as_numba_cuda as install_as_numba_cuda
from .args import In as In
from .args import InOut as InOut
from .args import Out as Out
from .compiler import compile as compile
from .compiler import compile_all as compile_all
from .compiler import compile_for_current_device as compile_for_current_device
from .compiler import compile_ptx as compile_ptx
from .compiler import compile_ptx_for_current_device as compile_ptx_for_current_device
from .cudadrv import Event as Event
from .cudadrv import MemoryInfo as MemoryInfo
from .cudadrv import Stream as Stream
from .cudadrv import close as close
from .cudadrv import current_context as current_context
from .cudadrv import current_target as current_target
from .cudadrv import default_stream as default_stream
from .cudadrv import defer_cleanup as defer_cleanup
from .cudadrv import detect as detect
from .cudadrv import devices as devices
from .cudadrv import driver as driver
from .cudadrv import driver_version as driver_version
from .cudadrv import event as event
from .cudadrv import event_elapsed_time as event_elapsed_time
from .cudadrv import external_stream as external_stream
from .cudadrv import get_current_context as get_current_context
from .cudadrv import get_current_device as get_current_device
from .cudadrv import gpus as gpus
from .cudadrv import is_available as is_available
from .cudadrv import is_bfloat16_supported as is_bfloat16_supported
from .cudadrv import is_float16_supported as is_float16_supported
from .cudadrv import is_fp8_supported as is_fp8_supported
from .cudadrv import is_supported_version as is_supported_version
from .cudadrv import kernel_attributes as kernel_attributes
from .cudadrv import legacy_default_stream as legacy_default_stream
from .cudadrv import list_devices as list_devices
from .cudadrv import max_potential_block as max_potential_block
from .cudadrv import mem_get_info as mem_get_info
from .cudadrv import nvvm as nvvm
from .cudadrv import per_thread_default_stream as per_thread_default_stream
from .cudadrv import pinned as pinned
from .cudadrv import reset as reset
from .cudadrv import select_device as select_device
from .cudadrv import set_target as set_target
from .cudadrv import stream as stream
from .cudadrv import synchronize as synchronize
from .cudadrv.devices import require_context as require_context
from .cudadrv.driver import CudaSupportError as CudaSupportError
from .cudadrv.driver import profile_start as profile_start
from .cudadrv.driver import profile_stop as profile_stop
from .cudadrv.driver import profiling as profiling
from .cudadrv.emm import BaseCUDAMemoryManager as BaseCUDAMemoryManager
from .cudadrv.emm import GetIpcHandleMixin as GetIpcHandleMixin
from .cudadrv.emm import HostOnlyCUDAMemoryManager as HostOnlyCUDAMemoryManager
from .cudadrv.emm import MappedMemory as MappedMemory
from .cudadrv.emm import MemoryPointer as MemoryPointer
from .cudadrv.emm import PinnedMemory as PinnedMemory
from .cudadrv.emm import mapped as mapped
from .cudadrv.emm import set_memory_manager as set_memory_manager
from .cudadrv.runtime import runtime as runtime
from .devicearray import DeviceArray as DeviceArray
from .devicearray import DeviceNDArray as DeviceNDArray
from .devicearray import as_cuda_array as as_cuda_array
from .devicearray import device_array as device_array
from .devicearray import device_array_like as device_array_like
from .devicearray import from_cuda_array_interface as from_cuda_array_interface
from .devicearray import is_cuda_array as is_cuda_array
from .devicearray import managed_array as managed_array
from .devicearray import mapped_array as mapped_array
from .devicearray import mapped_array_like as mapped_array_like
from .devicearray import pinned_array as pinned_array
from .devicearray import pinned_array_like as pinned_array_like
from .devicearray import to_device as to_device
from .dispatcher import DeviceFunction as DeviceFunction
from .dispatcher import Dispatcher as Dispatcher
from .errors import CompileError as CompileError
from .errors import CudaDriverError as CudaDriverError
from .errors import CudaError as CudaError
from .errors import GraphCaptureError as GraphCaptureError
from .errors import InternalCompilerError as InternalCompilerError
from .errors import KernelRuntimeError as KernelRuntimeError
from .errors import LaunchError as LaunchError
from .errors import RaceError as RaceError
from .errors import PerformanceWarning as PerformanceWarning
from .errors import TypingError as TypingError
from .errors import UnsupportedError as UnsupportedError
from .intrinsics import activemask as activemask
from .intrinsics import all_sync as all_sync
from .intrinsics import any_sync as any_sync
from .intrinsics import atomic as atomic
from .intrinsics import ballot_sync as ballot_sync
from .intrinsics import blockDim as blockDim
from .intrinsics import blockIdx as blockIdx
from .intrinsics import brev as brev
from .intrinsics import cbrt as cbrt
from .intrinsics import cg as cg
from .intrinsics import clz as clz
from .intrinsics import const as const
from .intrinsics import cp_async as cp_async
from .intrinsics import eq_sync as eq_sync
from .intrinsics import ffs as ffs
from .intrinsics import fma as fma
from .intrinsics import fp16 as fp16
from .intrinsics import grid as grid
from .intrinsics import gridDim as gridDim
from .intrinsics import gridsize as gridsize
from .intrinsics import laneid as laneid
from .intrinsics import lanemask_lt as lanemask_lt
from .intrinsics import ldca as ldca
from .intrinsics import ldcg as ldcg
from .intrinsics import ldcs as ldcs
from .intrinsics import ldcv as ldcv
from .intrinsics import ldlu as ldlu
from .intrinsics import local as local
from .intrinsics import match_all_sync as match_all_sync
from .intrinsics import match_any_sync as match_any_sync
from .intrinsics import mbarrier as mbarrier
from .intrinsics import nanosleep as nanosleep
from .intrinsics import popc as popc
from .intrinsics import selp as selp
from .intrinsics import shared as shared
from .intrinsics import shfl_down_sync as shfl_down_sync
from .intrinsics import shfl_sync as shfl_sync
from .intrinsics import shfl_up_sync as shfl_up_sync
from .intrinsics import shfl_xor_sync as shfl_xor_sync
from .intrinsics import stcg as stcg
from .intrinsics import stcs as stcs
from .intrinsics import stwb as stwb
from .intrinsics import stwt as stwt
from .intrinsics import syncthreads as syncthreads
from .intrinsics import syncthreads_and as syncthreads_and
from .intrinsics import syncthreads_count as syncthreads_count
from .intrinsics import syncthreads_or as syncthreads_or
from .intrinsics import syncwarp as syncwarp
from .intrinsics import threadIdx as threadIdx
from .intrinsics import threadfence as threadfence
from .intrinsics import threadfence_block as threadfence_block
from .intrinsics import threadfence_system as threadfence_system
from .intrinsics import warpsize as warpsize
from .intrinsics import wmma as wmma
from .ipc import IpcHandle as IpcHandle
from .ipc import open_ipc_array as open_ipc_array
from .linking import Archive as Archive
from .linking import CUSource as CUSource
from .linking import Cubin as Cubin
from .linking import Fatbin as Fatbin
from .linking import LTOIR as LTOIR
from .linking import LinkableCode as LinkableCode
from .linking import Object as Object
from .linking import PTXSource as PTXSource
from .linking import declare_device as declare_device
from .misc.special import literal_unroll as literal_unroll
from .reduction import Reduce as Reduce
from .types import b1 as b1
from .types import bfloat16 as bfloat16
from .types import bool_ as bool_
from .types import boolean as boolean
from .types import byte as byte
from .types import c16 as c16
from .types import c8 as c8
from .types import char as char
from .types import complex128 as complex128
from .types import complex64 as complex64
from .types import double as double
from .types import f2 as f2
from .types import f4 as f4
from .types import f8 as f8
from .types import float16 as float16
from .types import float32 as float32
from .types import float64 as float64
from .types import float8_e4m3fn as float8_e4m3fn
from .types import float8_e5m2 as float8_e5m2
from .types import float_ as float_
from .types import i1 as i1
from .types import i2 as i2
from .types import i4 as i4
from .types import i8 as i8
from .types import int16 as int16
from .types import int32 as int32
from .types import int64 as int64
from .types import int8 as int8
from .types import int_ as int_
from .types import intc as intc
from .types import intp as intp
from .types import long_ as long_
from .types import longlong as longlong
from .types import none as none
from .types import short as short
from .types import u1 as u1
from .types import u2 as u2
from .types import u4 as u4
from .types import u8 as u8
from .types import uchar as uchar
from .types import uint as uint
from .types import uint16 as uint16
from .types import uint32 as uint32
from .types import uint64 as uint64
from .types import uint8 as uint8
from .types import uintc as uintc
from .types import uintp as uintp
from .types import ulong as ulong
from .types import ulonglong as ulonglong
from .types import ushort as ushort
from .types import void as void
from .typing.typeof import typeof as typeof
from .vectorizers import guvectorize as guvectorize
from .vectorizers import vectorize as vectorize

reduce = Reduce

def cuda_error() -> Any: ...
def jit(
    func_or_sig: Any = ..., device: Any = ..., inline: Any = ..., forceinline: Any = ..., link: Any = ...,
    debug: Any = ..., opt: Any = ..., lineinfo: Any = ..., cache: Any = ..., launch_bounds: Any = ..., lto:
    Any = ..., shared_memory_carveout: Any = ..., fastmath: Any = ..., boundscheck: Any = ..., extensions: Any
    = ..., racecheck: Any = ...,
) -> Any: ...

char1: _VectorConstructor
char2: _VectorConstructor
char3: _VectorConstructor
char4: _VectorConstructor
config_default_cc: tuple[int, int]
double1: _VectorConstructor
double2: _VectorConstructor
double3: _VectorConstructor
double4: _VectorConstructor
float1: _VectorConstructor
float2: _VectorConstructor
float3: _VectorConstructor
float32x1: _VectorConstructor
float32x2: _VectorConstructor
float32x3: _VectorConstructor
float32x4: _VectorConstructor
float4: _VectorConstructor
float64x1: _VectorConstructor
float64x2: _VectorConstructor
float64x3: _VectorConstructor
float64x4: _VectorConstructor
implementation: str
int1: _VectorConstructor
int16x1: _VectorConstructor
int16x2: _VectorConstructor
int16x3: _VectorConstructor
int16x4: _VectorConstructor
int2: _VectorConstructor
int3: _VectorConstructor
int32x1: _VectorConstructor
int32x2: _VectorConstructor
int32x3: _VectorConstructor
int32x4: _VectorConstructor
int4: _VectorConstructor
int64x1: _VectorConstructor
int64x2: _VectorConstructor
int64x3: _VectorConstructor
int64x4: _VectorConstructor
int8x1: _VectorConstructor
int8x2: _VectorConstructor
int8x3: _VectorConstructor
int8x4: _VectorConstructor
long1: _VectorConstructor
long2: _VectorConstructor
long3: _VectorConstructor
long4: _VectorConstructor
longlong1: _VectorConstructor
longlong2: _VectorConstructor
longlong3: _VectorConstructor
longlong4: _VectorConstructor
numba_cuda_default_ptx_cc: tuple[int, int]
short1: _VectorConstructor
short2: _VectorConstructor
short3: _VectorConstructor
short4: _VectorConstructor
uchar1: _VectorConstructor
uchar2: _VectorConstructor
uchar3: _VectorConstructor
uchar4: _VectorConstructor
uint1: _VectorConstructor
uint16x1: _VectorConstructor
uint16x2: _VectorConstructor
uint16x3: _VectorConstructor
uint16x4: _VectorConstructor
uint2: _VectorConstructor
uint3: _VectorConstructor
uint32x1: _VectorConstructor
uint32x2: _VectorConstructor
uint32x3: _VectorConstructor
uint32x4: _VectorConstructor
uint4: _VectorConstructor
uint64x1: _VectorConstructor
uint64x2: _VectorConstructor
uint64x3: _VectorConstructor
uint64x4: _VectorConstructor
uint8x1: _VectorConstructor
uint8x2: _VectorConstructor
uint8x3: _VectorConstructor
uint8x4: _VectorConstructor
ulong1: _VectorConstructor
ulong2: _VectorConstructor
ulong3: _VectorConstructor
ulong4: _VectorConstructor
ulonglong1: _VectorConstructor
ulonglong2: _VectorConstructor
ulonglong3: _VectorConstructor
ulonglong4: _VectorConstructor
ushort1: _VectorConstructor
ushort2: _VectorConstructor
ushort3: _VectorConstructor
ushort4: _VectorConstructor

__all__ = [
    "jit", "declare_device", "compile_all", "compile_for_current_device", "compile_ptx",
    "compile_ptx_for_current_device", "literal_unroll", "implementation", "config_default_cc",
    "numba_cuda_default_ptx_cc", "vectorize", "guvectorize", "reduce", "Reduce", "threadIdx", "blockIdx",
    "blockDim", "gridDim", "laneid", "warpsize", "grid", "gridsize", "shared", "local", "const", "atomic", "cg",
    "syncthreads", "syncthreads_and", "syncthreads_count", "syncthreads_or", "syncwarp", "threadfence",
    "threadfence_block", "threadfence_system", "shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync",
    "all_sync", "any_sync", "eq_sync", "ballot_sync", "match_any_sync", "match_all_sync", "activemask",
    "lanemask_lt", "popc", "brev", "clz", "ffs", "fma", "cbrt", "selp", "nanosleep", "ldca", "ldcg", "ldcs", "ldlu",
    "ldcv", "stcg", "stcs", "stwb", "stwt", "to_device", "device_array", "device_array_like", "pinned_array",
    "pinned_array_like", "mapped_array", "mapped_array_like", "managed_array", "as_cuda_array", "is_cuda_array",
    "from_cuda_array_interface", "open_ipc_array", "IpcHandle", "pinned", "mapped", "In", "Out", "InOut",
    "BaseCUDAMemoryManager", "HostOnlyCUDAMemoryManager", "GetIpcHandleMixin", "MemoryPointer", "MappedMemory",
    "PinnedMemory", "MemoryInfo", "set_memory_manager", "is_available", "is_supported_version", "cuda_error",
    "detect", "select_device", "get_current_device", "list_devices", "gpus", "close", "current_context",
    "require_context", "synchronize", "defer_cleanup", "stream", "default_stream", "legacy_default_stream",
    "per_thread_default_stream", "external_stream", "event", "event_elapsed_time", "profiling", "profile_start",
    "profile_stop", "runtime", "is_float16_supported", "is_bfloat16_supported", "is_fp8_supported", "Archive",
    "CUSource", "Cubin", "Fatbin", "LinkableCode", "LTOIR", "Object", "PTXSource", "CudaSupportError",
    "KernelRuntimeError", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "intp", "uintp",
    "intc", "uintc", "boolean", "float32", "float64", "complex64", "complex128", "bool_", "byte", "char", "uchar",
    "short", "ushort", "int_", "uint", "long_", "ulong", "longlong", "ulonglong", "float_", "double", "void",
    "none", "bfloat16", "b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f4", "f8", "c8", "c16", "char1", "char2",
    "char3", "char4", "double1", "double2", "double3", "double4", "float1", "float2", "float3", "float32x1",
    "float32x2", "float32x3", "float32x4", "float4", "float64x1", "float64x2", "float64x3", "float64x4", "int1",
    "int16x1", "int16x2", "int16x3", "int16x4", "int2", "int3", "int32x1", "int32x2", "int32x3", "int32x4", "int4",
    "int64x1", "int64x2", "int64x3", "int64x4", "int8x1", "int8x2", "int8x3", "int8x4", "long1", "long2", "long3",
    "long4", "longlong1", "longlong2", "longlong3", "longlong4", "short1", "short2", "short3", "short4", "uchar1",
    "uchar2", "uchar3", "uchar4", "uint1", "uint16x1", "uint16x2", "uint16x3", "uint16x4", "uint2", "uint3",
    "uint32x1", "uint32x2", "uint32x3", "uint32x4", "uint4", "uint64x1", "uint64x2", "uint64x3", "uint64x4",
    "uint8x1", "uint8x2", "uint8x3", "uint8x4", "ulong1", "ulong2", "ulong3", "ulong4", "ulonglong1", "ulonglong2",
    "ulonglong3", "ulonglong4", "ushort1", "ushort2", "ushort3", "ushort4"
]
