/*
 * tess_py.h — what the files of the `tessera._tessera` CPython extension
 * share (docs/python.md): the object structs of a Context, Table, Task and
 * TileJob, their type objects, the exceptions and the checks every method
 * makes first (a live context, the control function, before main()).
 * Private to python/; every symbol is hidden in the extension.
 *
 * The GIL: tess_main, tess_run, tess_barrier, tess_finalize and every table
 * call are made with the GIL released, because they may wait for worker
 * threads that themselves wait for the GIL (a kernel written in Python) or
 * for a partition lock.  Kernel instances run on tessera's worker threads and
 * take the GIL with PyGILState_Ensure for as long as their Python code runs;
 * the control function likewise on rank 0's main thread.
 */
#ifndef TESS_PYTHON_TESS_PY_H
#define TESS_PYTHON_TESS_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <tessera/tessera.h>
#include <tessera/tile.h>

extern PyObject *tess__py_error;        /* tessera.Error */
extern PyObject *tess__py_kernel_error; /* tessera.KernelError */

typedef struct {
    PyObject_HEAD tess_ctx *ctx;
    PyObject *kernels;                       /* list of callables; index = registration order */
    PyObject *control;                       /* during main() */
    PyObject *ctl_type, *ctl_value, *ctl_tb; /* the control function's exception */
    int in_control;                          /* the control function is running */
    int started;                             /* main() was called */
} tess__py_ctx;

typedef enum { TESS__PY_F64, TESS__PY_I64, TESS__PY_BYTES } tess__py_vkind;

typedef struct {
    PyObject_HEAD tess__py_ctx *owner;
    tess_table *t;
    int dense;
    tess__py_vkind vkind;
    size_t value_size;
    char name[64];
} tess__py_table;

typedef struct {
    PyObject_HEAD tess_task *task; /* NULL once its kernel returned */
} tess__py_task;

/* TileJob: a tiles job whose kernels are a Python function (CPU) and
 * optionally an OpenCL kernel given as source (tess_py_tile.c). */
typedef struct {
    PyObject_HEAD tess__py_ctx *owner;
    tess_tile_job job;
    PyObject *kernel;     /* kernel(lo, hi, in, out) over memoryviews, or None */
    PyObject *cl_strings; /* (source, name, params, options) of the OpenCL kernel, or NULL */
    void *cl;             /* its tess_tile_opencl_kernel (tile_opencl.h), or NULL */
    Py_buffer in, out;
    int has_in, has_out;
    char name[64];
} tess__py_tile;

extern PyTypeObject tess__py_ctx_type, tess__py_table_type, tess__py_task_type, tess__py_tile_type;

/* Raise tessera.Error (KernelError for TESS_ERR_KERNEL) for status rc with
 * the context's last error; returns NULL. */
PyObject *tess__py_raise(tess__py_ctx *c, int rc);
/* 1 when the context is not finalized, else 0 with tessera.Error set. */
int tess__py_live(tess__py_ctx *c);
/* 1 inside the control function, else 0 with tessera.Error naming `what`. */
int tess__py_need_control(tess__py_ctx *c, const char *what);
/* 1 before Context.main(), else 0 with tessera.Error naming `what`. */
int tess__py_need_setup(tess__py_ctx *c, const char *what);

/* Context methods defined with the tiles (tess_py_tile.c). */
PyObject *tess__py_ctx_tile_job(PyObject *self, PyObject *args);
PyObject *tess__py_ctx_tile_run(PyObject *self, PyObject *args, PyObject *kw);

#endif
