/* digest.c: _core.Digest, the on-disk cache's hash (keys, file names, checksums): BLAKE3 from
 * LLVM's support library, which the extension already carries. CPython's own hashes (hashlib,
 * _blake2) are modules a fresh process would load first, a few hundred microseconds of a
 * warm-cache start. The interface is hashlib's: update(), digest(), hexdigest(). */
#include <llvm-c/blake3.h>

#include "gj.h"

typedef struct {
    PyObject_HEAD llvm_blake3_hasher h;
} Digest;

static int digest_feed(Digest *self, PyObject *data) {
    Py_buffer b;
    if (PyObject_GetBuffer(data, &b, PyBUF_SIMPLE) < 0) return -1;
    llvm_blake3_hasher_update(&self->h, b.buf, (size_t)b.len);
    PyBuffer_Release(&b);
    return 0;
}

static int digest_init(Digest *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"data", NULL};
    PyObject *data = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:Digest", kwlist, &data)) return -1;
    llvm_blake3_hasher_init(&self->h);
    return data ? digest_feed(self, data) : 0;
}

static PyObject *digest_update(Digest *self, PyObject *data) {
    if (digest_feed(self, data) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *digest_digest(Digest *self, PyObject *unused) {
    (void)unused;
    uint8_t out[LLVM_BLAKE3_OUT_LEN];
    llvm_blake3_hasher_finalize(&self->h, out, sizeof out);
    return PyBytes_FromStringAndSize((const char *)out, sizeof out);
}

static PyObject *digest_hexdigest(Digest *self, PyObject *unused) {
    (void)unused;
    static const char hex[] = "0123456789abcdef";
    uint8_t out[LLVM_BLAKE3_OUT_LEN];
    char text[2 * LLVM_BLAKE3_OUT_LEN];
    llvm_blake3_hasher_finalize(&self->h, out, sizeof out);
    for (size_t i = 0; i < sizeof out; i++) {
        text[2 * i] = hex[out[i] >> 4];
        text[2 * i + 1] = hex[out[i] & 15];
    }
    return PyUnicode_FromStringAndSize(text, sizeof text);
}

/* clang-format off */
static PyMethodDef digest_methods[] = {
    {"update", (PyCFunction)digest_update, METH_O, "update(bytes-like): hash these bytes too"},
    {"digest", (PyCFunction)digest_digest, METH_NOARGS, "the 32-byte BLAKE3 hash of everything given"},
    {"hexdigest", (PyCFunction)digest_hexdigest, METH_NOARGS, "digest() as 64 hexadecimal digits"},
    {NULL},
};
/* clang-format on */

static PyTypeObject Digest_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gpujit._core.Digest",
    .tp_doc = "Digest(data=b''): BLAKE3 (32 bytes), with hashlib's update/digest/hexdigest",
    .tp_basicsize = sizeof(Digest),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)digest_init,
    .tp_methods = digest_methods,
};

int gj_digest_add(PyObject *m) {
    if (PyType_Ready(&Digest_Type) < 0) return -1;
    return PyModule_AddObjectRef(m, "Digest", (PyObject *)&Digest_Type);
}
