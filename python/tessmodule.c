/*
 * tessmodule.c — the `tessera._tessera` CPython extension: the tables face
 * for Python programs (docs/python.md).  A Context wraps a tess_ctx, a Table a
 * tess_table and a Task the tess_task of a running kernel instance; the pure
 * Python package around it (python/tessera/__init__.py) adds pickled kernel
 * arguments and NumPy conveniences.
 *
 * The GIL: tess_main, tess_run, tess_barrier, tess_finalize and every table
 * call are made with the GIL released, because they may wait for worker
 * threads that themselves wait for the GIL (a kernel written in Python) or
 * for a partition lock.  Kernel instances run on tessera's worker threads and
 * take the GIL with PyGILState_Ensure for as long as their Python code runs;
 * the control function likewise on rank 0's main thread.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include <tessera/tessera.h>
#include <tessera/tile.h>

static PyObject *tess__py_error;        /* tessera.Error */
static PyObject *tess__py_kernel_error; /* tessera.KernelError */

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

static PyTypeObject tess__py_ctx_type, tess__py_table_type, tess__py_task_type, tess__py_tile_type;

/* ------------------------------------------------------------ errors */

/* Raise tessera.Error for status rc with the context's last error. */
static PyObject *tess__py_raise(tess__py_ctx *c, int rc)
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

static int tess__py_live(tess__py_ctx *c)
{
    if (c->ctx != NULL) return 1;
    PyErr_SetString(tess__py_error, "tessera: the context is finalized");
    return 0;
}

static int tess__py_need_control(tess__py_ctx *c, const char *what)
{
    if (!tess__py_live(c)) return 0;
    if (c->in_control) return 1;
    PyErr_Format(tess__py_error, "tessera: %s() is for the control function (inside Context.main)",
                 what);
    return 0;
}

static int tess__py_need_setup(tess__py_ctx *c, const char *what)
{
    if (!tess__py_live(c)) return 0;
    if (!c->started) return 1;
    PyErr_Format(tess__py_error, "tessera: %s() must come before Context.main()", what);
    return 0;
}

/* ------------------------------------------------------------ Task */

static tess__py_task *tess__py_task_get(PyObject *self)
{
    tess__py_task *k = (tess__py_task *)self;
    if (k->task != NULL) return k;
    PyErr_SetString(tess__py_error, "tessera: task used outside its kernel (it has returned)");
    return NULL;
}

static PyObject *tess__py_task_instance(PyObject *self, void *unused)
{
    (void)unused;
    tess__py_task *k = tess__py_task_get(self);
    return k ? PyLong_FromLong(tess_task_instance(k->task)) : NULL;
}

static PyObject *tess__py_task_instances(PyObject *self, void *unused)
{
    (void)unused;
    tess__py_task *k = tess__py_task_get(self);
    return k ? PyLong_FromLong(tess_task_instances(k->task)) : NULL;
}

static PyObject *tess__py_task_worker(PyObject *self, void *unused)
{
    (void)unused;
    tess__py_task *k = tess__py_task_get(self);
    return k ? PyLong_FromLong(tess_task_worker(k->task)) : NULL;
}

static PyGetSetDef tess__py_task_getset[] = {
    {"instance", tess__py_task_instance, NULL, "index of this kernel instance", NULL},
    {"instances", tess__py_task_instances, NULL, "instances in the run", NULL},
    {"worker", tess__py_task_worker, NULL, "global worker id", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject tess__py_task_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tessera._tessera.Task",
    .tp_basicsize = sizeof(tess__py_task),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_getset = tess__py_task_getset,
    .tp_doc = "A running kernel instance (valid only while its kernel runs).",
};

/* ------------------------------------------------------------ keys and values */

static int tess__py_key(tess__py_table *t, PyObject *o, uint64_t *key)
{
    if (!PyLong_Check(o)) {
        PyErr_Format(PyExc_TypeError, "tessera: table '%s' keys are int, not %s", t->name,
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    if (t->dense) {
        *key = PyLong_AsUnsignedLongLong(o);
    } else {
        *key = (uint64_t)PyLong_AsLongLong(o);
    }
    if (PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_OverflowError, "tessera: table '%s': key out of range for %s keys",
                     t->name, t->dense ? "uint64" : "int64");
        return -1;
    }
    return 0;
}

/* Value o as bytes in buf (8 bytes), or *data pointing into a bytes object. */
static int tess__py_value(tess__py_table *t, PyObject *o, char *buf, const void **data, size_t *len)
{
    if (t->vkind == TESS__PY_BYTES) {
        if (!PyBytes_Check(o)) goto wrong;
        *data = PyBytes_AS_STRING(o);
        *len = (size_t)PyBytes_GET_SIZE(o);
        return 0;
    }
    *data = buf;
    *len = 8;
    if (t->vkind == TESS__PY_F64) {
        if (!PyFloat_Check(o) && !PyLong_Check(o)) goto wrong;
        double d = PyFloat_AsDouble(o);
        if (d == -1.0 && PyErr_Occurred()) return -1;
        memcpy(buf, &d, 8);
        return 0;
    }
    if (!PyLong_Check(o)) goto wrong;
    long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    int64_t v64 = v;
    memcpy(buf, &v64, 8);
    return 0;
wrong:
    PyErr_Format(PyExc_TypeError, "tessera: table '%s' values are %s, not %s", t->name,
                 t->vkind == TESS__PY_F64   ? "float"
                 : t->vkind == TESS__PY_I64 ? "int"
                                            : "bytes",
                 Py_TYPE(o)->tp_name);
    return -1;
}

static PyObject *tess__py_value_obj(tess__py_table *t, const void *v, size_t len)
{
    if (t->vkind == TESS__PY_BYTES) return PyBytes_FromStringAndSize(v, (Py_ssize_t)len);
    if (t->vkind == TESS__PY_F64) {
        double d;
        memcpy(&d, v, 8);
        return PyFloat_FromDouble(d);
    }
    int64_t i;
    memcpy(&i, v, 8);
    return PyLong_FromLongLong(i);
}

static tess__py_table *tess__py_table_live(PyObject *self)
{
    tess__py_table *t = (tess__py_table *)self;
    return tess__py_live(t->owner) ? t : NULL;
}

/* ------------------------------------------------------------ Table: single keys */

static PyObject *tess__py_table_get(PyObject *self, PyObject *args)
{
    tess__py_table *t = tess__py_table_live(self);
    PyObject *ko, *dflt = NULL;
    uint64_t key;
    if (!t || !PyArg_ParseTuple(args, "O|O", &ko, &dflt) || tess__py_key(t, ko, &key)) return NULL;
    char small[256];
    char *buf = small;
    size_t cap = sizeof small, len = 0;
    int rc;
    for (;;) {
        Py_BEGIN_ALLOW_THREADS rc = tess_table_get(t->t, &key, buf, cap, &len);
        Py_END_ALLOW_THREADS if (rc != TESS_ERR_INVAL || len <= cap) break;
        if (buf != small) PyMem_Free(buf);
        cap = len;
        if ((buf = PyMem_Malloc(cap)) == NULL) return PyErr_NoMemory();
    }
    PyObject *res = NULL;
    if (rc == TESS_OK) {
        res = tess__py_value_obj(t, buf, len);
    } else if (rc == TESS_ERR_NOTFOUND && dflt != NULL) {
        Py_INCREF(dflt);
        res = dflt;
    } else if (rc == TESS_ERR_NOTFOUND) {
        PyErr_Format(PyExc_KeyError, "tessera: table '%s' has no key %S", t->name, ko);
    } else {
        tess__py_raise(t->owner, rc);
    }
    if (buf != small) PyMem_Free(buf);
    return res;
}

typedef int (*tess__py_write_fn)(tess_table *, const void *, const void *, size_t);

static PyObject *tess__py_table_write(PyObject *self, PyObject *args, tess__py_write_fn fn)
{
    tess__py_table *t = tess__py_table_live(self);
    PyObject *ko, *vo;
    uint64_t key;
    char buf[8];
    const void *data;
    size_t len;
    if (!t || !PyArg_ParseTuple(args, "OO", &ko, &vo) || tess__py_key(t, ko, &key) ||
        tess__py_value(t, vo, buf, &data, &len))
        return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = fn(t->t, &key, data, len);
    Py_END_ALLOW_THREADS if (rc != TESS_OK) return tess__py_raise(t->owner, rc);
    Py_RETURN_NONE;
}

static PyObject *tess__py_table_put(PyObject *self, PyObject *args)
{
    return tess__py_table_write(self, args, tess_table_put);
}

static PyObject *tess__py_table_update(PyObject *self, PyObject *args)
{
    return tess__py_table_write(self, args, tess_table_update);
}

static PyObject *tess__py_table_contains(PyObject *self, PyObject *ko)
{
    tess__py_table *t = tess__py_table_live(self);
    uint64_t key;
    if (!t || tess__py_key(t, ko, &key)) return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = tess_table_contains(t->t, &key);
    Py_END_ALLOW_THREADS if (rc < 0) return tess__py_raise(t->owner, rc);
    return PyBool_FromLong(rc);
}

static PyObject *tess__py_table_remove(PyObject *self, PyObject *ko)
{
    tess__py_table *t = tess__py_table_live(self);
    uint64_t key;
    if (!t || tess__py_key(t, ko, &key)) return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = tess_table_remove(t->t, &key);
    Py_END_ALLOW_THREADS if (rc < 0) return tess__py_raise(t->owner, rc);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------ Table: whole table */

typedef int (*tess__py_table_fn)(tess_table *);

static PyObject *tess__py_table_call(PyObject *self, tess__py_table_fn fn)
{
    tess__py_table *t = tess__py_table_live(self);
    if (!t) return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = fn(t->t);
    Py_END_ALLOW_THREADS if (rc != TESS_OK) return tess__py_raise(t->owner, rc);
    Py_RETURN_NONE;
}

static PyObject *tess__py_table_flush(PyObject *self, PyObject *unused)
{
    (void)unused;
    return tess__py_table_call(self, tess_table_flush);
}

static PyObject *tess__py_table_clear(PyObject *self, PyObject *unused)
{
    (void)unused;
    tess__py_table *t = tess__py_table_live(self);
    if (!t || !tess__py_need_control(t->owner, "clear")) return NULL;
    return tess__py_table_call(self, tess_table_clear);
}

static PyObject *tess__py_table_size(PyObject *self, PyObject *unused)
{
    (void)unused;
    tess__py_table *t = tess__py_table_live(self);
    if (!t || !tess__py_need_control(t->owner, "size")) return NULL;
    int64_t n;
    Py_BEGIN_ALLOW_THREADS n = tess_table_size(t->t);
    Py_END_ALLOW_THREADS if (n < 0) return tess__py_raise(t->owner, (int)n);
    return PyLong_FromLongLong(n);
}

static PyObject *tess__py_table_partitions(PyObject *self, void *unused)
{
    (void)unused;
    return PyLong_FromLong(tess_table_partitions(((tess__py_table *)self)->t));
}

static PyObject *tess__py_table_name(PyObject *self, void *unused)
{
    (void)unused;
    return PyUnicode_FromString(((tess__py_table *)self)->name);
}

static PyObject *tess__py_table_dense_range(PyObject *self, PyObject *arg)
{
    tess__py_table *t = tess__py_table_live(self);
    int p = t ? (int)PyLong_AsLong(arg) : 0;
    if (!t || PyErr_Occurred()) return NULL;
    uint64_t first, count;
    int rc = tess_table_dense_range(t->t, p, &first, &count);
    if (rc != TESS_OK) return tess__py_raise(t->owner, rc);
    return Py_BuildValue("KK", (unsigned long long)first, (unsigned long long)count);
}

static PyObject *tess__py_table_is_local(PyObject *self, PyObject *arg)
{
    tess__py_table *t = tess__py_table_live(self);
    int p = t ? (int)PyLong_AsLong(arg) : 0;
    if (!t || PyErr_Occurred()) return NULL;
    return PyBool_FromLong(tess_table_is_local(t->t, p));
}

/* items(partition): the (key, value) pairs of one partition, as a list. */
static PyObject *tess__py_table_items(PyObject *self, PyObject *arg)
{
    tess__py_table *t = tess__py_table_live(self);
    int p = t ? (int)PyLong_AsLong(arg) : 0;
    if (!t || PyErr_Occurred()) return NULL;
    tess_iter *it = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = tess_table_iter(t->t, p, &it);
    Py_END_ALLOW_THREADS if (rc != TESS_OK) return tess__py_raise(t->owner, rc);
    PyObject *list = PyList_New(0);
    const void *k, *v;
    size_t len;
    while (list != NULL && (rc = tess_iter_next(it, &k, &v, &len)) == 1) {
        uint64_t key;
        memcpy(&key, k, 8);
        PyObject *ko = t->dense ? PyLong_FromUnsignedLongLong(key)
                                : PyLong_FromLongLong((long long)(int64_t)key);
        PyObject *pair = Py_BuildValue("(NN)", ko, tess__py_value_obj(t, v, len));
        if (pair == NULL || PyList_Append(list, pair) < 0) Py_CLEAR(list);
        Py_XDECREF(pair);
    }
    tess_iter_free(it);
    if (list != NULL && rc < 0) {
        Py_CLEAR(list);
        tess__py_raise(t->owner, rc);
    }
    return list;
}

/* ------------------------------------------------------------ Table: bulk, GIL released */

/* A C-contiguous buffer of 8-byte items (NumPy int64/uint64/float64). */
static int tess__py_buf8(PyObject *o, Py_buffer *b, int writable, const char *what)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(o, b, flags) < 0) return -1;
    if (b->itemsize == 8) return 0;
    PyBuffer_Release(b);
    PyErr_Format(PyExc_TypeError, "tessera: %s must be an array of 8-byte items", what);
    return -1;
}

static tess__py_table *tess__py_table_fixed(PyObject *self, const char *what)
{
    tess__py_table *t = tess__py_table_live(self);
    if (t == NULL || t->vkind != TESS__PY_BYTES) return t;
    PyErr_Format(tess__py_error, "tessera: %s() needs fixed-size values (table '%s' holds bytes)",
                 what, t->name);
    return NULL;
}

static PyObject *tess__py_table_update_many(PyObject *self, PyObject *args)
{
    tess__py_table *t = tess__py_table_fixed(self, "update_many");
    PyObject *ko, *vo;
    if (!t || !PyArg_ParseTuple(args, "OO", &ko, &vo)) return NULL;
    Py_buffer kb, vb;
    if (tess__py_buf8(ko, &kb, 0, "keys")) return NULL;
    if (tess__py_buf8(vo, &vb, 0, "values")) return PyBuffer_Release(&kb), NULL;
    int rc = TESS_ERR_INVAL;
    if (kb.len == vb.len) {
        Py_BEGIN_ALLOW_THREADS rc = tess_table_update_batch(t->t, kb.buf, vb.buf, kb.len / 8);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&kb);
    PyBuffer_Release(&vb);
    if (kb.len != vb.len)
        return PyErr_Format(PyExc_ValueError, "tessera: update_many: %zd keys but %zd values",
                            kb.len / 8, vb.len / 8);
    if (rc != TESS_OK) return tess__py_raise(t->owner, rc);
    Py_RETURN_NONE;
}

/* update_fanout(keys, offsets, updates): updates[i] into keys[offsets[i]:offsets[i+1]]
 * for every i (a CSR of out-edges and one share per vertex), GIL released. */
static int tess__py_fanout(tess_table *t, const uint64_t *keys, size_t nkeys, const int64_t *off,
                           const char *upd, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (off[i] < 0 || off[i] > off[i + 1] || (uint64_t)off[i + 1] > nkeys) return -100;
        if (off[i + 1] == off[i]) continue;
        int rc =
            tess_table_update_fanout(t, keys + off[i], (size_t)(off[i + 1] - off[i]), upd + i * 8);
        if (rc != TESS_OK) return rc;
    }
    return TESS_OK;
}

static PyObject *tess__py_table_update_fanout(PyObject *self, PyObject *args)
{
    tess__py_table *t = tess__py_table_fixed(self, "update_fanout");
    PyObject *ko, *oo, *vo;
    if (!t || !PyArg_ParseTuple(args, "OOO", &ko, &oo, &vo)) return NULL;
    Py_buffer kb, ob, vb;
    if (tess__py_buf8(ko, &kb, 0, "keys")) return NULL;
    if (tess__py_buf8(oo, &ob, 0, "offsets")) return PyBuffer_Release(&kb), NULL;
    if (tess__py_buf8(vo, &vb, 0, "updates"))
        return PyBuffer_Release(&kb), PyBuffer_Release(&ob), NULL;
    size_t n = (size_t)vb.len / 8;
    int rc = -100;
    if ((size_t)ob.len / 8 == n + 1) {
        Py_BEGIN_ALLOW_THREADS rc =
            tess__py_fanout(t->t, kb.buf, (size_t)kb.len / 8, ob.buf, vb.buf, n);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&kb);
    PyBuffer_Release(&ob);
    PyBuffer_Release(&vb);
    if (rc == -100)
        return PyErr_Format(PyExc_ValueError,
                            "tessera: update_fanout: offsets must be %zu ascending positions "
                            "into keys, one more than updates",
                            n + 1);
    if (rc != TESS_OK) return tess__py_raise(t->owner, rc);
    Py_RETURN_NONE;
}

typedef int (*tess__py_range_fn)(tess_table *, uint64_t, uint64_t, void *);

static PyObject *tess__py_table_range(PyObject *self, PyObject *args, int writable,
                                      tess__py_range_fn fn, const char *what)
{
    tess__py_table *t = tess__py_table_fixed(self, what);
    unsigned long long first;
    PyObject *o;
    if (!t || !PyArg_ParseTuple(args, "KO", &first, &o)) return NULL;
    Py_buffer b;
    if (tess__py_buf8(o, &b, writable, "values")) return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = fn(t->t, first, (uint64_t)b.len / 8, b.buf);
    Py_END_ALLOW_THREADS PyBuffer_Release(&b);
    if (rc != TESS_OK) return tess__py_raise(t->owner, rc);
    Py_RETURN_NONE;
}

static int tess__py_put_range(tess_table *t, uint64_t first, uint64_t n, void *v)
{
    return tess_table_put_range(t, first, n, v);
}

static PyObject *tess__py_table_read_range_into(PyObject *self, PyObject *args)
{
    return tess__py_table_range(self, args, 1, tess_table_read_range, "read_range");
}

static PyObject *tess__py_table_put_range(PyObject *self, PyObject *args)
{
    return tess__py_table_range(self, args, 0, tess__py_put_range, "put_range");
}

static PyObject *tess__py_table_gather_into(PyObject *self, PyObject *o)
{
    tess__py_table *t = tess__py_table_fixed(self, "gather");
    if (!t || !tess__py_need_control(t->owner, "gather")) return NULL;
    Py_buffer b;
    if (tess__py_buf8(o, &b, 1, "out")) return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = tess_table_gather(t->t, b.buf, (size_t)b.len);
    Py_END_ALLOW_THREADS PyBuffer_Release(&b);
    if (rc != TESS_OK) return tess__py_raise(t->owner, rc);
    Py_RETURN_NONE;
}

static PyMethodDef tess__py_table_methods[] = {
    {"get", tess__py_table_get, METH_VARARGS, "get(key[, default]) -> value"},
    {"put", tess__py_table_put, METH_VARARGS, "put(key, value)"},
    {"update", tess__py_table_update, METH_VARARGS, "update(key, value): accumulate"},
    {"contains", tess__py_table_contains, METH_O, "contains(key) -> bool"},
    {"remove", tess__py_table_remove, METH_O, "remove(key)"},
    {"flush", tess__py_table_flush, METH_NOARGS, "send the caller's buffered writes"},
    {"clear", tess__py_table_clear, METH_NOARGS, "remove every key (control function)"},
    {"size", tess__py_table_size, METH_NOARGS, "number of keys (control function)"},
    {"dense_range", tess__py_table_dense_range, METH_O, "dense_range(p) -> (first, count)"},
    {"is_local", tess__py_table_is_local, METH_O, "is_local(p) -> bool"},
    {"items_of", tess__py_table_items, METH_O, "items_of(p) -> [(key, value)]"},
    {"update_many", tess__py_table_update_many, METH_VARARGS,
     "update_many(keys, values): 8-byte arrays, GIL released"},
    {"update_fanout", tess__py_table_update_fanout, METH_VARARGS,
     "update_fanout(keys, offsets, updates): a CSR fan-out, GIL released"},
    {"read_range_into", tess__py_table_read_range_into, METH_VARARGS,
     "read_range_into(first, out): dense, GIL released"},
    {"put_range", tess__py_table_put_range, METH_VARARGS,
     "put_range(first, values): dense, GIL released"},
    {"gather_into", tess__py_table_gather_into, METH_O, "gather_into(out): dense, control"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef tess__py_table_getset[] = {
    {"partitions", tess__py_table_partitions, NULL, "partition count", NULL},
    {"name", tess__py_table_name, NULL, "table name", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static void tess__py_table_dealloc(PyObject *self)
{
    Py_XDECREF(((tess__py_table *)self)->owner);
    Py_TYPE(self)->tp_free(self);
}

static PyTypeObject tess__py_table_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tessera._tessera.Table",
    .tp_basicsize = sizeof(tess__py_table),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_dealloc = tess__py_table_dealloc,
    .tp_methods = tess__py_table_methods,
    .tp_getset = tess__py_table_getset,
    .tp_doc = "A partitioned key/value table (create with Context.table).",
};

/* ------------------------------------------------------------ Context */

static int tess__py_ctx_init(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"workers", "mode", "handle_signals", NULL};
    tess__py_ctx *c = (tess__py_ctx *)self;
    int workers = 0, handle_signals = 0;
    const char *mode = "auto";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|isp", names, &workers, &mode, &handle_signals))
        return -1;
    if (c->ctx != NULL) {
        PyErr_SetString(tess__py_error, "tessera: Context initialized twice");
        return -1;
    }
    tess_config cfg;
    tess_config_init(&cfg);
    cfg.workers = workers;
    cfg.handle_signals = handle_signals;
    if (strcmp(mode, "auto") == 0) {
        cfg.mode = TESS_MODE_AUTO;
    } else if (strcmp(mode, "embedded") == 0) {
        cfg.mode = TESS_MODE_EMBEDDED;
    } else if (strcmp(mode, "mpi") == 0) {
        cfg.mode = TESS_MODE_MPI;
    } else {
        PyErr_Format(PyExc_ValueError, "tessera: mode must be auto, embedded or mpi, not '%s'",
                     mode);
        return -1;
    }
    c->kernels = PyList_New(0);
    if (c->kernels == NULL) return -1;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = tess_init(&cfg, &c->ctx);
    Py_END_ALLOW_THREADS if (rc == TESS_OK) return 0;
    c->ctx = NULL;
    PyErr_Format(tess__py_error, "tessera: init failed: %s", tess_strerror(rc));
    return -1;
}

static void tess__py_ctx_close(tess__py_ctx *c)
{
    if (c->ctx == NULL) return;
    tess_ctx *ctx = c->ctx;
    c->ctx = NULL;
    Py_BEGIN_ALLOW_THREADS tess_finalize(ctx);
    Py_END_ALLOW_THREADS
}

static PyObject *tess__py_ctx_finalize(PyObject *self, PyObject *unused)
{
    (void)unused;
    tess__py_ctx *c = (tess__py_ctx *)self;
    if (c->in_control) {
        PyErr_SetString(tess__py_error, "tessera: finalize() inside the control function");
        return NULL;
    }
    tess__py_ctx_close(c);
    Py_RETURN_NONE;
}

static void tess__py_ctx_dealloc(PyObject *self)
{
    tess__py_ctx *c = (tess__py_ctx *)self;
    tess__py_ctx_close(c);
    Py_XDECREF(c->kernels);
    Py_XDECREF(c->ctl_type);
    Py_XDECREF(c->ctl_value);
    Py_XDECREF(c->ctl_tb);
    Py_TYPE(self)->tp_free(self);
}

static int tess__py_parse_accum(const char *s, tess_accum *a)
{
    static const char *names[] = {"replace", "sum", "min", "max", "product"};
    static const tess_accum vals[] = {TESS_ACC_REPLACE, TESS_ACC_SUM, TESS_ACC_MIN, TESS_ACC_MAX,
                                      TESS_ACC_PRODUCT};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(s, names[i]) == 0) return *a = vals[i], 0;
    PyErr_Format(PyExc_ValueError,
                 "tessera: accumulator must be replace, sum, min, max or product, not '%s'", s);
    return -1;
}

static int tess__py_parse_vkind(const char *s, tess__py_vkind *k)
{
    if (strcmp(s, "float") == 0 || strcmp(s, "f64") == 0) return *k = TESS__PY_F64, 0;
    if (strcmp(s, "int") == 0 || strcmp(s, "i64") == 0) return *k = TESS__PY_I64, 0;
    if (strcmp(s, "bytes") == 0) return *k = TESS__PY_BYTES, 0;
    PyErr_Format(PyExc_ValueError, "tessera: value type must be float, int or bytes, not '%s'", s);
    return -1;
}

/* _create_table(cls, name, partitions, value, accum, key_count, group_with, replicated):
 * key_count > 0 makes a dense table. */
static PyObject *tess__py_ctx_create_table(PyObject *self, PyObject *args)
{
    tess__py_ctx *c = (tess__py_ctx *)self;
    PyTypeObject *cls;
    const char *name, *vtype, *accum;
    int partitions, replicated;
    unsigned long long key_count;
    PyObject *group;
    if (!PyArg_ParseTuple(args, "O!sissKOp", &PyType_Type, &cls, &name, &partitions, &vtype, &accum,
                          &key_count, &group, &replicated) ||
        !tess__py_need_setup(c, "table"))
        return NULL;
    if (!PyType_IsSubtype(cls, &tess__py_table_type))
        return PyErr_Format(PyExc_TypeError, "tessera: cls must be a Table class");
    tess_table_spec spec;
    tess_table_spec_init(&spec);
    tess__py_vkind vk;
    if (tess__py_parse_vkind(vtype, &vk) || tess__py_parse_accum(accum, &spec.accum)) return NULL;
    if (vk == TESS__PY_BYTES && spec.accum != TESS_ACC_REPLACE)
        return PyErr_Format(PyExc_ValueError, "tessera: bytes values take the replace accumulator");
    if (group != Py_None && !PyObject_TypeCheck(group, &tess__py_table_type))
        return PyErr_Format(PyExc_TypeError, "tessera: group_with must be a Table");
    spec.name = name;
    spec.key_size = 8;
    spec.value_size = vk == TESS__PY_BYTES ? 0 : 8;
    spec.partitions = partitions;
    spec.dense = key_count > 0;
    spec.key_count = key_count;
    spec.elem = vk == TESS__PY_F64 ? TESS_F64 : TESS_I64;
    spec.group_with = group == Py_None ? NULL : ((tess__py_table *)group)->t;
    spec.replicated = replicated;
    tess__py_table *t = (tess__py_table *)cls->tp_alloc(cls, 0);
    if (t == NULL) return NULL;
    int rc = tess_table_create(c->ctx, &spec, &t->t);
    if (rc != TESS_OK) {
        Py_DECREF(t);
        return tess__py_raise(c, rc);
    }
    Py_INCREF(c);
    t->owner = c;
    t->dense = spec.dense;
    t->vkind = vk;
    t->value_size = spec.value_size;
    snprintf(t->name, sizeof t->name, "%s", name);
    return (PyObject *)t;
}

/* The C kernel behind every Python kernel: args start with the kernel's
 * index (uint32), then the pickled arguments. */
static int tess__py_kernel(tess_task *task, const void *args, size_t len)
{
    tess__py_ctx *c = tess_task_app(task);
    uint32_t idx = 0;
    if (len >= 4) memcpy(&idx, args, 4);
    PyGILState_STATE g = PyGILState_Ensure();
    int rc = TESS_OK;
    tess__py_task *k = PyObject_New(tess__py_task, &tess__py_task_type);
    PyObject *fn =
        idx < (uint32_t)PyList_GET_SIZE(c->kernels) ? PyList_GET_ITEM(c->kernels, idx) : NULL;
    PyObject *res = NULL;
    if (k != NULL && fn != NULL && len >= 4) {
        k->task = task;
        res = PyObject_CallFunction(fn, "Oy#", k, (const char *)args + 4, (Py_ssize_t)(len - 4));
        k->task = NULL;
    }
    if (res == NULL) {
        PyObject *name = fn ? PyObject_GetAttrString(fn, "__name__") : NULL;
        PyObject *type = NULL, *value = NULL, *tb = NULL;
        if (PyErr_Occurred()) {
            PyErr_Fetch(&type, &value, &tb);
            PyErr_NormalizeException(&type, &value, &tb);
            PyErr_Restore(type, value, tb);
            Py_XINCREF(value);
            PyErr_Print();
        }
        PyObject *msg = value ? PyObject_Str(value) : NULL;
        const char *tn = value ? Py_TYPE(value)->tp_name : "unknown kernel";
        tess_set_error(
            tess_task_ctx(task), TESS_ERR_KERNEL, "python kernel %s (instance %d) raised %s: %s",
            name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : "?", tess_task_instance(task),
            tn, msg && PyUnicode_Check(msg) ? PyUnicode_AsUTF8(msg) : "");
        PyErr_Clear();
        Py_XDECREF(msg);
        Py_XDECREF(value);
        Py_XDECREF(name);
        rc = TESS_ERR_KERNEL;
    }
    Py_XDECREF(res);
    Py_XDECREF(k);
    PyGILState_Release(g);
    return rc;
}

/* _register_kernel(name, fn) -> index. */
static PyObject *tess__py_ctx_register_kernel(PyObject *self, PyObject *args)
{
    tess__py_ctx *c = (tess__py_ctx *)self;
    const char *name;
    PyObject *fn;
    if (!PyArg_ParseTuple(args, "sO", &name, &fn) || !tess__py_need_setup(c, "kernel")) return NULL;
    if (!PyCallable_Check(fn)) return PyErr_Format(PyExc_TypeError, "tessera: kernel not callable");
    int rc = tess_register_kernel(c->ctx, name, tess__py_kernel);
    if (rc != TESS_OK) return tess__py_raise(c, rc);
    if (PyList_Append(c->kernels, fn) < 0) return NULL;
    return PyLong_FromSsize_t(PyList_GET_SIZE(c->kernels) - 1);
}

static int tess__py_control(tess_ctx *ctx, void *app)
{
    (void)ctx;
    tess__py_ctx *c = app;
    PyGILState_STATE g = PyGILState_Ensure();
    c->in_control = 1;
    PyObject *res = PyObject_CallFunctionObjArgs(c->control, (PyObject *)c, NULL);
    c->in_control = 0;
    int rc = TESS_OK;
    if (res == NULL) {
        PyErr_Fetch(&c->ctl_type, &c->ctl_value, &c->ctl_tb);
        rc = TESS_ERR_KERNEL;
    } else if (PyLong_Check(res)) {
        rc = (int)PyLong_AsLong(res);
    }
    Py_XDECREF(res);
    PyGILState_Release(g);
    return rc;
}

static PyObject *tess__py_ctx_main(PyObject *self, PyObject *fn)
{
    tess__py_ctx *c = (tess__py_ctx *)self;
    if (!tess__py_need_setup(c, "main")) return NULL;
    if (!PyCallable_Check(fn))
        return PyErr_Format(PyExc_TypeError, "tessera: control function not callable");
    c->started = 1;
    c->control = fn;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = tess_main(c->ctx, tess__py_control, c);
    Py_END_ALLOW_THREADS c->control = NULL;
    if (c->ctl_type != NULL) {
        PyErr_Restore(c->ctl_type, c->ctl_value, c->ctl_tb);
        c->ctl_type = c->ctl_value = c->ctl_tb = NULL;
        return NULL;
    }
    if (rc < 0)
        return PyErr_Format(tess__py_error, "tessera: the control function failed: %s",
                            tess_strerror(rc));
    return PyLong_FromLong(rc);
}

/* _run(kernel, index, instances, locality, args) */
static PyObject *tess__py_ctx_run(PyObject *self, PyObject *args)
{
    tess__py_ctx *c = (tess__py_ctx *)self;
    const char *name;
    unsigned int idx;
    int instances;
    PyObject *loc;
    const char *payload;
    Py_ssize_t plen;
    if (!PyArg_ParseTuple(args, "sIiOy#", &name, &idx, &instances, &loc, &payload, &plen) ||
        !tess__py_need_control(c, "run"))
        return NULL;
    if (loc != Py_None && !PyObject_TypeCheck(loc, &tess__py_table_type))
        return PyErr_Format(PyExc_TypeError, "tessera: locality must be a Table or None");
    char *buf = PyMem_Malloc((size_t)plen + 4);
    if (buf == NULL) return PyErr_NoMemory();
    uint32_t i32 = idx;
    memcpy(buf, &i32, 4);
    memcpy(buf + 4, payload, (size_t)plen);
    tess_table *lt = loc == Py_None ? NULL : ((tess__py_table *)loc)->t;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = tess_run(c->ctx, name, instances, lt, buf, (size_t)plen + 4);
    Py_END_ALLOW_THREADS PyMem_Free(buf);
    if (rc != TESS_OK) return tess__py_raise(c, rc);
    Py_RETURN_NONE;
}

static PyObject *tess__py_ctx_barrier(PyObject *self, PyObject *unused)
{
    (void)unused;
    tess__py_ctx *c = (tess__py_ctx *)self;
    if (!tess__py_need_control(c, "barrier")) return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = tess_barrier(c->ctx);
    Py_END_ALLOW_THREADS if (rc != TESS_OK) return tess__py_raise(c, rc);
    Py_RETURN_NONE;
}

static PyObject *tess__py_ctx_checkpoint_enable(PyObject *self, PyObject *args)
{
    tess__py_ctx *c = (tess__py_ctx *)self;
    const char *dir, *job;
    int keep = 2;
    if (!PyArg_ParseTuple(args, "ss|i", &dir, &job, &keep) ||
        !tess__py_need_setup(c, "checkpoint_enable"))
        return NULL;
    int rc = tess_checkpoint_enable(c->ctx, dir, job, keep);
    if (rc != TESS_OK) return tess__py_raise(c, rc);
    Py_RETURN_NONE;
}

static PyObject *tess__py_ctx_checkpoint(PyObject *self, PyObject *arg)
{
    tess__py_ctx *c = (tess__py_ctx *)self;
    const char *user;
    Py_ssize_t len;
    if (!PyArg_Parse(arg, "y#", &user, &len) || !tess__py_need_control(c, "checkpoint"))
        return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = tess_checkpoint_barrier(c->ctx, user, (size_t)len);
    if (rc == TESS_OK) rc = tess_checkpoint_wait(c->ctx, NULL);
    Py_END_ALLOW_THREADS if (rc != TESS_OK) return tess__py_raise(c, rc);
    Py_RETURN_NONE;
}

/* restore() -> user bytes, or None when there is no checkpoint. */
static PyObject *tess__py_ctx_restore(PyObject *self, PyObject *unused)
{
    (void)unused;
    tess__py_ctx *c = (tess__py_ctx *)self;
    if (!tess__py_need_control(c, "restore")) return NULL;
    void *user = NULL;
    size_t len = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = tess_checkpoint_restore(c->ctx, &user, &len, NULL);
    Py_END_ALLOW_THREADS if (rc == TESS_ERR_NOTFOUND) Py_RETURN_NONE;
    if (rc != TESS_OK) return tess__py_raise(c, rc);
    PyObject *res = PyBytes_FromStringAndSize(user ? user : "", (Py_ssize_t)len);
    free(user);
    return res;
}

static PyObject *tess__py_ctx_int(PyObject *self, int (*fn)(const tess_ctx *))
{
    tess__py_ctx *c = (tess__py_ctx *)self;
    return tess__py_live(c) ? PyLong_FromLong(fn(c->ctx)) : NULL;
}

static PyObject *tess__py_ctx_rank(PyObject *self, void *unused)
{
    (void)unused;
    return tess__py_ctx_int(self, tess_rank);
}

static PyObject *tess__py_ctx_nranks(PyObject *self, void *unused)
{
    (void)unused;
    return tess__py_ctx_int(self, tess_nranks);
}

static PyObject *tess__py_ctx_workers(PyObject *self, void *unused)
{
    (void)unused;
    return tess__py_ctx_int(self, tess_workers_total);
}

/* ------------------------------------------------------------ tiles */

typedef struct {
    PyObject_HEAD tess__py_ctx *owner;
    tess_tile_job job;
    PyObject *kernel; /* kernel(lo, hi, in, out) over memoryviews */
    Py_buffer in, out;
    int has_in, has_out;
    char name[64];
} tess__py_tile;

static void tess__py_tile_dealloc(PyObject *self)
{
    tess__py_tile *j = (tess__py_tile *)self;
    if (j->has_in) PyBuffer_Release(&j->in);
    if (j->has_out) PyBuffer_Release(&j->out);
    Py_XDECREF(j->kernel);
    Py_XDECREF(j->owner);
    Py_TYPE(self)->tp_free(self);
}

static PyTypeObject tess__py_tile_type = {
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
 * input_hi, output) */
static PyObject *tess__py_ctx_tile_job(PyObject *self, PyObject *args)
{
    tess__py_ctx *c = (tess__py_ctx *)self;
    const char *name;
    PyObject *ext, *mint, *maxt, *kernel, *input, *output;
    Py_ssize_t in_bytes, out_bytes;
    long long lo, hi;
    if (!PyArg_ParseTuple(args, "sOOOnnOOLLO", &name, &ext, &mint, &maxt, &in_bytes, &out_bytes,
                          &kernel, &input, &lo, &hi, &output) ||
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
    job->kernel[TESS_TILE_CPU] = tess__py_tile_kernel;
    job->arg = j;
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
static PyObject *tess__py_ctx_tile_run(PyObject *self, PyObject *args, PyObject *kw)
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

static PyMethodDef tess__py_ctx_methods[] = {
    {"_create_table", tess__py_ctx_create_table, METH_VARARGS, NULL},
    {"_register_kernel", tess__py_ctx_register_kernel, METH_VARARGS, NULL},
    {"_run", tess__py_ctx_run, METH_VARARGS, NULL},
    {"_tile_job", tess__py_ctx_tile_job, METH_VARARGS, NULL},
    {"tile_run", (PyCFunction)(void (*)(void))tess__py_ctx_tile_run, METH_VARARGS | METH_KEYWORDS,
     "tile_run(job, processors=None, policy=None) -> stats (control function)"},
    {"main", tess__py_ctx_main, METH_O, "main(control): run control(ctx) on rank 0"},
    {"barrier", tess__py_ctx_barrier, METH_NOARGS, "wait for kernels and writes"},
    {"finalize", tess__py_ctx_finalize, METH_NOARGS, "stop the runtime"},
    {"checkpoint_enable", tess__py_ctx_checkpoint_enable, METH_VARARGS,
     "checkpoint_enable(dir, job[, keep]) before main()"},
    {"checkpoint", tess__py_ctx_checkpoint, METH_O, "checkpoint(user_bytes): a checkpoint barrier"},
    {"restore", tess__py_ctx_restore, METH_NOARGS, "restore() -> user bytes or None"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef tess__py_ctx_getset[] = {
    {"rank", tess__py_ctx_rank, NULL, "this rank", NULL},
    {"nranks", tess__py_ctx_nranks, NULL, "number of ranks", NULL},
    {"workers", tess__py_ctx_workers, NULL, "worker threads over all ranks", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject tess__py_ctx_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tessera._tessera.Context",
    .tp_basicsize = sizeof(tess__py_ctx),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = PyType_GenericNew,
    .tp_init = tess__py_ctx_init,
    .tp_dealloc = tess__py_ctx_dealloc,
    .tp_methods = tess__py_ctx_methods,
    .tp_getset = tess__py_ctx_getset,
    .tp_doc = "A tessera runtime (one per process).",
};

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
        PyModule_AddStringConstant(m, "version", tess_version()) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
