/* Runtime-internal interfaces shared by the runtime's files and src/pymodule.c. */
#ifndef GPUJIT_RUNTIME_H
#define GPUJIT_RUNTIME_H

#include <Python.h>
#include "gpujit/gpujit.h"
#include "cpu.h"

/* runtime/registry.c: adds the runtime's types and functions to the
 * extension module `m` (DeviceArray base, streams, events, driver queries,
 * the launcher). */
int gj_runtime_add_to_module(PyObject *m);

/* src/pymodule.c: the CompiledKernel type wraps one GjOutput (one specialisation
 * for one target). Borrowed result; NULL (no exception set) if `obj` is not one. */
GjOutput *gj_compiled_output(PyObject *obj);
/* What is linked with its PTX when it loads (CompiledKernel.link): a tuple of
 * (kind, name, bytes), checked when set; borrowed, NULL for nothing. */
PyObject *gj_compiled_link(PyObject *obj);

/* Exceptions created by the module: gpujit.CompileError and friends live in
 * src/diag.c; gpujit.CudaError in runtime/driver.c; gpujit.LaunchError in
 * runtime/launch.c. */
extern PyObject *GjExc_CudaError;

extern PyObject *GjExc_LaunchError; /* gpujit.LaunchError: a cpu-target launch failed */
extern PyObject *GjExc_RaceError;   /* gpujit.RaceError: racecheck found a data race (a LaunchError) */

/* runtime/module.c caches the CUDA module of each CompiledKernel. If the
 * CompiledKernel type supports weak references (tp_weaklistoffset), the cache
 * entry dies with the kernel; otherwise the cache keeps the kernel alive. */

#endif
