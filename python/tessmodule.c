/*
 * tessmodule.c — the `tessera._tessera` CPython extension: the tables and
 * tiles faces for Python programs (docs/python.md).  This file is the module
 * itself (its exceptions and types) and the error and state checks every
 * method shares; a Context and its kernels are in tess_py_ctx.c, a Table in
 * tess_py_table.c, a TileJob in tess_py_tile.c, what they share in
 * tess_py.h.  The pure Python package around it (python/tessera/__init__.py)
 * adds pickled kernel arguments and NumPy conveniences.
 */
#include "tess_py.h"

PyObject *tess__py_error;        /* tessera.Error */
PyObject *tess__py_kernel_error; /* tessera.KernelError */

/* ------------------------------------------------------------ errors */

/* Raise tessera.Error for status rc with the context's last error. */
PyObject *tess__py_raise(tess__py_ctx *c, int rc)
{
    PyObject *cls = rc == TESS_ERR_KERNEL ? tess__py_kernel_error : tess__py_error;
    const char *msg = c && c->ctx ? tess_last_error(c->ctx) : "";
    if (msg == NULL || msg[0] == '\0') msg = tess_strerror(rc);
    PyObject *exc = PyObject_CallFunction(cls, "s", msg);
    PyObject *st = PyLong_FromLong(rc);
    if (exc != NULL && st != NULL) PyObject_SetAttrString(exc, "status", st);
    Py_XDECREF(st);
    if (exc != NULL) {
        PyErr_SetObject(cls, exc);
        Py_DECREF(exc);
    }
    return NULL;
}

int tess__py_live(tess__py_ctx *c)
{
    if (c->ctx != NULL) return 1;
    PyErr_SetString(tess__py_error, "tessera: the context is finalized");
    return 0;
}

int tess__py_need_control(tess__py_ctx *c, const char *what)
{
    if (!tess__py_live(c)) return 0;
    if (c->in_control) return 1;
    PyErr_Format(tess__py_error, "tessera: %s() is for the control function (inside Context.main)",
                 what);
    return 0;
}

int tess__py_need_setup(tess__py_ctx *c, const char *what)
{
    if (!tess__py_live(c)) return 0;
    if (!c->started) return 1;
    PyErr_Format(tess__py_error, "tessera: %s() must come before Context.main()", what);
    return 0;
}

/* ------------------------------------------------------------ module */

static struct PyModuleDef tess__py_module = {PyModuleDef_HEAD_INIT,
                                             "_tessera",
                                             "tessera's C extension (use the tessera package).",
                                             -1,
                                             NULL,
                                             NULL,
                                             NULL,
                                             NULL,
                                             NULL};

static int tess__py_add_type(PyObject *m, PyTypeObject *type, const char *name)
{
    if (PyType_Ready(type) < 0) return -1;
    Py_INCREF(type);
    return PyModule_AddObject(m, name, (PyObject *)type);
}

PyMODINIT_FUNC PyInit__tessera(void)
{
    PyObject *m = PyModule_Create(&tess__py_module);
    if (m == NULL) return NULL;
    tess__py_error = PyErr_NewException("tessera.Error", NULL, NULL);
    tess__py_kernel_error = PyErr_NewException("tessera.KernelError", tess__py_error, NULL);
    if (tess__py_error == NULL || tess__py_kernel_error == NULL ||
        PyModule_AddObjectRef(m, "Error", tess__py_error) < 0 ||
        PyModule_AddObjectRef(m, "KernelError", tess__py_kernel_error) < 0 ||
        tess__py_add_type(m, &tess__py_ctx_type, "Context") < 0 ||
        tess__py_add_type(m, &tess__py_table_type, "Table") < 0 ||
        tess__py_add_type(m, &tess__py_task_type, "Task") < 0 ||
        tess__py_add_type(m, &tess__py_tile_type, "TileJob") < 0 ||
        PyModule_AddStringConstant(m, "version", tess_version()) < 0 ||
        PyModule_AddIntConstant(m, "have_opencl", TESS_HAVE_OPENCL) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
