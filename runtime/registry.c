/* The runtime's part of the gpujit._core module: each runtime file adds its
 * own types and functions (its gj_*_add, declared in cuda.h); this is the one
 * list of them, called once from the module's init (src/pymodule.c). The
 * order matters where one part uses another's: exceptions first. */
#include "runtime.h"
#include "cuda.h"

int gj_runtime_add_to_module(PyObject *m) {
    if (gj_driver_add(m) < 0 || gj_memory_add(m) < 0 || gj_devicearray_add(m) < 0 || gj_stream_add(m) < 0 ||
        gj_module_add(m) < 0 || gj_launch_add(m) < 0 || gj_ipc_add(m) < 0 ||
        gj_graph_add(m) < 0)
        return -1;
    return 0;
}
