/* The launcher's arguments (runtime/args.c), shared with runtime/launch.c:
 * each Python argument classified into a descriptor, checked against a
 * kernel, staged (NumPy arrays on the cuda target) and packed into
 * kernelParams by the kernel's parameter layout (gj_layout, src/layout.c). */
#ifndef GPUJIT_ARGS_H
#define GPUJIT_ARGS_H

#include "runtime.h"
#include "cuda.h"

enum {
    A_DEVARRAY = 1, /* DeviceArrayBase: memory of the launch's target */
    A_HOST,         /* host memory (buffer protocol, DLPack kDLCPU): staged on cuda */
    A_FOREIGN,      /* device memory of another library (CAI, DLPack kDLCUDA) */
    A_SCALAR,
    A_TUPLE,        /* a tuple: its items' descriptors follow it (span) */
};

typedef struct ArgDesc {
    int kind;
    GjDtype dtype;              /* 0 for records (record_id, itemsize say which) */
    int record_id, itemsize;    /* records and arrays of them: the dtype's number (gj_args_key), its bytes;
                                 * a namedtuple (A_TUPLE): its class's number */
    int span;                   /* descriptors this argument takes: 1, or a tuple's 1 + its items' spans */
    int nitems;                 /* tuples */
    int pos;                    /* the launch argument (1-based) it is, or is part of */
    int kernel_writes;          /* gj_args_mark: the kernel may store into it */
    int ndim, c_contig, readonly;
    uint64_t data;
    int64_t shape[GJ_MAXDIM], strides[GJ_MAXDIM]; /* strides in bytes */
    union {
        int64_t i;
        uint64_t u;
        double f;
    } value; /* scalars, in `dtype` (a complex's real part in f) */
    double imag;                /* complex scalars: the imaginary part */
    Py_buffer view;             /* A_HOST from a buffer: released after the launch */
    int has_view;
    PyObject *capsule;          /* consumed DLPack capsule: deleter runs after the launch */
    DLManagedTensor *managed;
    CUdeviceptr staged;         /* cuda: device copy of an A_HOST argument */
    int64_t staged_strides[GJ_MAXDIM]; /* the copy's: C-contiguous */
    int alias;                  /* staged shares an earlier argument's copy */
    int written;                /* cuda: copy back after the launch (the kernel may write it) */
} ArgDesc;

/* Bytes of cache key per argument (gj_args_key). */
#define GJ_ARG_KEY_BYTES 4

/* How many descriptors argument `o` takes (a tuple: itself and its items,
 * depth-first); -1 with TypeError past the nesting limit. */
int gj_args_count(PyObject *o, int pos, int depth);
/* Fills `d` (gj_args_count(o) of them, each zeroed as launch.c does) from argument `o` (1-based `pos` for messages). *sync gets a
 * producer's stream the launch must wait for (CAI, CuPy), else NULL;
 * *cupy_stream caches CuPy's current stream for the launch ((CUstream)-1: not
 * looked up yet). 0, or -1 with TypeError/ValueError/OverflowError. */
int gj_args_classify(ArgDesc *d, PyObject *o, int pos, GjTargetKind target, int dev, CUstream launch_stream,
                     CUstream *sync, CUstream *cupy_stream);
/* Releases buffers, DLPack capsules and staged copies of n descriptors. */
void gj_args_release(ArgDesc *d, int n, int dev);
/* The argument's cache key: kind, dtype, ndim, layout. */
void gj_args_key(uint8_t *k, const ArgDesc *d);
/* Whether kernel `o` takes these arguments and its parameters are the
 * layout of its arguments; 0, or -1 with TypeError (or RuntimeError for a
 * compiler bug). `disp` names the kernel in messages. */
int gj_args_check(PyObject *disp, GjOutput *o, const ArgDesc *d, int nargs);
/* Sets each descriptor's kernel_writes from kernel o's argument infos. */
void gj_args_mark(ArgDesc *d, int nargs, const GjOutput *o);
/* cuda target: copies host arrays to the device (the same array given
 * twice shares one copy); *staged is set if any was. 0, or -1. */
int gj_args_stage_in(ArgDesc *d, int ndesc, int dev, int *staged);
/* ... and back, those the kernel may have written, after the stream synchronised. */
int gj_args_stage_out(ArgDesc *d, int nargs, int dev);
/* kernelParams for `o`: each parameter in its own 8-byte slot, kp[i] = &slots[i];
 * `errbuf` is the address a debug kernel gets for its error buffer. */
void gj_args_pack(const GjOutput *o, const ArgDesc *d, uint64_t errbuf, uint64_t *slots, void **kp);
/* The dispatcher's name for messages: its __name__, else the kernel's symbol. New reference. */
PyObject *gj_kernel_name(PyObject *disp, GjOutput *o);
/* For tests: the CuPy ndarray type read without its interface, once seen; else None. New reference. */
PyObject *gj_args_cupy_type(void);

#endif
