/*
 * tess_py_tile.c — a TileJob of the Python module (docs/python.md, "Tiles"):
 * a tiles job (tile.h) whose CPU kernel is a Python function called with
 * memoryviews of the tile's input and output (the package turns them into
 * NumPy views), on any policy, and optionally an OpenCL kernel given as
 * OpenCL C source, run through tess_tile_opencl_run (no GIL: it never calls
 * Python).  Each processor thread takes the GIL for the CPU kernel's Python
 * code; a kernel exception prints its traceback and ends the job with one
 * line.
 */
#include <string.h>

#include "tess_py.h"
#if TESS_HAVE_OPENCL
#include <tessera/tile_opencl.h>
#endif

static void tess__py_tile_dealloc(PyObject *self)
{
    tess__py_tile *j = (tess__py_tile *)self;
    if (j->has_in) PyBuffer_Release(&j->in);
    if (j->has_out) PyBuffer_Release(&j->out);
    Py_XDECREF(j->kernel);
    Py_XDECREF(j->cl_strings);
    PyMem_Free(j->cl);
    Py_XDECREF(j->owner);
    Py_TYPE(self)->tp_free(self);
}

PyTypeObject tess__py_tile_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tessera._tessera.TileJob",
    .tp_basicsize = sizeof(tess__py_tile),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = tess__py_tile_dealloc,
    .tp_doc = "A tiles job (create with Context.tile_job).",
};

static PyObject *tess__py_box_tuple(const int64_t *v, int n)
{
    PyObject *t = PyTuple_New(n);
    for (int d = 0; t != NULL && d < n; d++) PyTuple_SET_ITEM(t, d, PyLong_FromLongLong(v[d]));
    return t;
}

/* A kernel exception: traceback on stderr, one line as the job's error. */
static int tess__py_tile_failed(tess__py_tile *j)
{
    PyObject *type = NULL, *value = NULL, *tb = NULL;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *msg = value ? PyObject_Str(value) : NULL;
    tess_set_error(j->owner->ctx, TESS_ERR_KERNEL, "python tile kernel of job %s raised %s: %s",
                   j->name, value ? Py_TYPE(value)->tp_name : "?",
                   msg && PyUnicode_Check(msg) ? PyUnicode_AsUTF8(msg) : "");
    Py_XDECREF(msg);
    PyErr_Restore(type, value, tb);
    PyErr_Print();
    return TESS_ERR_KERNEL;
}

static int tess__py_tile_kernel(const tess_tile_box *box, const void *in, void *out, void *device,
                                void *arg)
{
    (void)device;
    tess__py_tile *j = arg;
    int64_t cells = 1;
    for (int d = 0; d < box->ndims; d++) cells *= box->hi[d] - box->lo[d];
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *inv =
        in ? PyMemoryView_FromMemory((char *)in, cells * (int64_t)j->job.in_bytes, PyBUF_READ)
           : (Py_INCREF(Py_None), Py_None);
    PyObject *outv = PyMemoryView_FromMemory(out, cells * (int64_t)j->job.out_bytes, PyBUF_WRITE);
    PyObject *res = NULL;
    if (inv != NULL && outv != NULL)
        res = PyObject_CallFunction(j->kernel, "NNOO", tess__py_box_tuple(box->lo, box->ndims),
                                    tess__py_box_tuple(box->hi, box->ndims), inv, outv);
    int rc = res != NULL ? TESS_OK : tess__py_tile_failed(j);
    Py_XDECREF(res);
    Py_XDECREF(inv);
    Py_XDECREF(outv);
    PyGILState_Release(g);
    return rc;
}

#if TESS_HAVE_OPENCL
static int tess__py_tile_opencl(const tess_tile_box *box, const void *in, void *out, void *device,
                                void *arg)
{
    tess__py_tile *j = arg;
    return tess_tile_opencl_run(j->cl, box, in, out, device, arg);
}

/* The OpenCL kernel of (source, name, params, options): strings kept alive
 * by j->cl_strings, since the device's build cache knows the kernel by its
 * descriptor's address. */
static int tess__py_tile_set_opencl(tess__py_tile *j, PyObject *cl)
{
    const char *source, *name, *params, *options;
    if (!PyArg_ParseTuple(cl, "sssz", &source, &name, &params, &options)) return -1;
    tess_tile_opencl_kernel *k = PyMem_Calloc(1, sizeof *k);
    if (k == NULL) return PyErr_NoMemory(), -1;
    *k = (tess_tile_opencl_kernel){.source = source,
                                   .options = options,
                                   .name = name,
                                   .params = params,
                                   .in_bytes = j->job.in_bytes,
                                   .out_bytes = j->job.out_bytes};
    Py_INCREF(cl);
    j->cl_strings = cl;
    j->cl = k;
    j->job.kernel[TESS_TILE_OPENCL] = tess__py_tile_opencl;
    return 0;
}
#else
static int tess__py_tile_set_opencl(tess__py_tile *j, PyObject *cl)
{
    (void)cl;
    PyErr_Format(tess__py_error,
                 "tessera: tile_job %s: not supported: an OpenCL kernel (this build has no "
                 "OpenCL; apt-get install ocl-icd-opencl-dev opencl-c-headers)",
                 j->name);
    return -1;
}
#endif

static int tess__py_dims(PyObject *o, int64_t *v, int *n)
{
    PyObject *seq = PySequence_Fast(o, "tessera: a tile shape must be a sequence of ints");
    if (seq == NULL) return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    if (len < 1 || len > TESS_TILE_MAX_DIMS || (*n && len != *n)) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError,
                     "tessera: a tile job has 1 to %d dimensions, the same "
                     "for extent, min_tile and max_tile",
                     TESS_TILE_MAX_DIMS);
        return -1;
    }
    for (Py_ssize_t d = 0; d < len; d++) v[d] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, d));
    Py_DECREF(seq);
    *n = (int)len;
    return PyErr_Occurred() ? -1 : 0;
}

/* _tile_job(name, extent, min_tile, max_tile, in_bytes, out_bytes, kernel, input, input_lo,
 * input_hi, output, opencl): kernel None for none on CPUs, opencl None or (source, name,
 * params, options) */
PyObject *tess__py_ctx_tile_job(PyObject *self, PyObject *args)
{
    tess__py_ctx *c = (tess__py_ctx *)self;
    const char *name;
    PyObject *ext, *mint, *maxt, *kernel, *input, *output, *cl;
    Py_ssize_t in_bytes, out_bytes;
    long long lo, hi;
    if (!PyArg_ParseTuple(args, "sOOOnnOOLLOO", &name, &ext, &mint, &maxt, &in_bytes, &out_bytes,
                          &kernel, &input, &lo, &hi, &output, &cl) ||
        !tess__py_need_setup(c, "tile_job"))
        return NULL;
    tess__py_tile *j = PyObject_New(tess__py_tile, &tess__py_tile_type);
    if (j == NULL) return NULL;
    memset((char *)j + sizeof(PyObject), 0, sizeof *j - sizeof(PyObject));
    Py_INCREF(c);
    j->owner = c;
    Py_INCREF(kernel);
    j->kernel = kernel;
    snprintf(j->name, sizeof j->name, "%s", name);
    tess_tile_job *job = &j->job;
    job->name = j->name;
    if (tess__py_dims(ext, job->extent, &job->ndims) ||
        tess__py_dims(mint, job->min_tile, &job->ndims) ||
        tess__py_dims(maxt, job->max_tile, &job->ndims))
        return Py_DECREF(j), NULL;
    job->in_bytes = (size_t)in_bytes;
    job->out_bytes = (size_t)out_bytes;
    if (kernel != Py_None) job->kernel[TESS_TILE_CPU] = tess__py_tile_kernel;
    job->arg = j;
    if (cl != Py_None && tess__py_tile_set_opencl(j, cl) < 0) return Py_DECREF(j), NULL;
    if (input != Py_None) {
        if (PyObject_GetBuffer(input, &j->in, PyBUF_C_CONTIGUOUS) < 0) return Py_DECREF(j), NULL;
        j->has_in = 1;
        job->input = j->in.buf;
        job->input_lo = lo;
        job->input_hi = hi;
    }
    if (output != Py_None) {
        if (PyObject_GetBuffer(output, &j->out, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0)
            return Py_DECREF(j), NULL;
        j->has_out = 1;
        job->output = j->out.buf;
    }
    int rc = tess_tile_register(c->ctx, job);
    if (rc != TESS_OK) return Py_DECREF(j), tess__py_raise(c, rc);
    return (PyObject *)j;
}

/* tile_run(job, processors=None, policy=None) -> stats dict (control function). */
PyObject *tess__py_ctx_tile_run(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"job", "processors", "policy", NULL};
    tess__py_ctx *c = (tess__py_ctx *)self;
    PyObject *jo;
    tess_tile_options opt;
    memset(&opt, 0, sizeof opt);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|zz", names, &tess__py_tile_type, &jo,
                                     &opt.processors, &opt.policy) ||
        !tess__py_need_control(c, "tile_run"))
        return NULL;
    tess_tile_stats st;
    memset(&st, 0, sizeof st);
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = tess_tile_run(c->ctx, &((tess__py_tile *)jo)->job, &opt, &st);
    Py_END_ALLOW_THREADS if (rc != TESS_OK) return tess__py_raise(c, rc);
    PyObject *res = Py_BuildValue(
        "{s:d,s:K,s:K,s:s,s:i}", "seconds", st.seconds, "cells", (unsigned long long)st.cells,
        "tiles", (unsigned long long)st.tiles, "policy", st.policy, "processors", st.nprocs);
    tess_tile_stats_free(&st);
    return res;
}
