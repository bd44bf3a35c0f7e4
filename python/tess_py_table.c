/*
 * tess_py_table.c — a Table of the Python module (docs/python.md): a
 * tess_table whose keys are Python ints and whose values are floats, ints
 * (8 bytes, the built-in accumulators) or bytes.  Single-key operations,
 * whole-table ones for the control function (clear, size, a partition's
 * items), and the bulk operations over NumPy arrays (update_many,
 * update_fanout, dense ranges, gather), which release the GIL while tessera
 * applies them.
 */
#include <string.h>

#include "tess_py.h"

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

typedef int (*tess__py_key_fn)(tess_table *, const void *);

/* fn(table, key) without the GIL: its result (>= 0), or -1 with the Python
 * exception set. */
static int tess__py_table_key_call(PyObject *self, PyObject *ko, tess__py_key_fn fn)
{
    tess__py_table *t = tess__py_table_live(self);
    uint64_t key;
    if (!t || tess__py_key(t, ko, &key)) return -1;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = fn(t->t, &key);
    Py_END_ALLOW_THREADS if (rc < 0) return tess__py_raise(t->owner, rc), -1;
    return rc;
}

static PyObject *tess__py_table_contains(PyObject *self, PyObject *ko)
{
    int rc = tess__py_table_key_call(self, ko, tess_table_contains);
    return rc < 0 ? NULL : PyBool_FromLong(rc);
}

static PyObject *tess__py_table_remove(PyObject *self, PyObject *ko)
{
    if (tess__py_table_key_call(self, ko, tess_table_remove) < 0) return NULL;
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

/* replica_view() -> a read-only memoryview of this rank's replica (tess_table_replica),
 * or None while there is none.  No copy: valid until the next barrier that changes it. */
static PyObject *tess__py_table_replica_view(PyObject *self, PyObject *unused)
{
    (void)unused;
    tess__py_table *t = tess__py_table_fixed(self, "replica");
    if (!t) return NULL;
    uint64_t count = 0;
    const void *r = tess_table_replica(t->t, &count);
    if (r == NULL) Py_RETURN_NONE;
    return PyMemoryView_FromMemory((char *)r, (Py_ssize_t)(count * t->value_size), PyBUF_READ);
}

/* out[i] = the sum of rep[keys[j]] for j in off[i] .. off[i+1]-1, in order: a pull
 * kernel's gather and sum in one pass over the replica.  -100: bad offsets, -101: a
 * key outside the table. */
static int tess__py_csr_sum(const double *rep, uint64_t nrep, const int64_t *keys, size_t nkeys,
                            const int64_t *off, size_t n, double *out)
{
    for (size_t i = 0; i < n; i++) {
        if (off[i] < 0 || off[i] > off[i + 1] || (uint64_t)off[i + 1] > nkeys) return -100;
        double sum = 0.0;
        for (int64_t j = off[i]; j < off[i + 1]; j++) {
            if ((uint64_t)keys[j] >= nrep) return -101;
            sum += rep[keys[j]];
        }
        out[i] = sum;
    }
    return 0;
}

/* replica_sums_into(keys, offsets, out): tess__py_csr_sum over this rank's replica, GIL
 * released. */
static PyObject *tess__py_table_replica_sums(PyObject *self, PyObject *args)
{
    tess__py_table *t = tess__py_table_fixed(self, "replica_sums");
    PyObject *ko, *oo, *vo;
    if (!t || !PyArg_ParseTuple(args, "OOO", &ko, &oo, &vo)) return NULL;
    uint64_t nrep = 0;
    const double *rep = tess_table_replica(t->t, &nrep);
    if (t->vkind != TESS__PY_F64 || rep == NULL)
        return PyErr_Format(tess__py_error,
                            "tessera: replica_sums() needs a float table with a "
                            "replica (table '%s')",
                            t->name);
    Py_buffer kb, ob, vb;
    if (tess__py_buf8(ko, &kb, 0, "keys")) return NULL;
    if (tess__py_buf8(oo, &ob, 0, "offsets")) return PyBuffer_Release(&kb), NULL;
    if (tess__py_buf8(vo, &vb, 1, "out")) return PyBuffer_Release(&kb), PyBuffer_Release(&ob), NULL;
    size_t n = (size_t)vb.len / 8;
    int rc = -100;
    if ((size_t)ob.len / 8 == n + 1) {
        Py_BEGIN_ALLOW_THREADS rc =
            tess__py_csr_sum(rep, nrep, kb.buf, (size_t)kb.len / 8, ob.buf, n, vb.buf);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&kb);
    PyBuffer_Release(&ob);
    PyBuffer_Release(&vb);
    if (rc == -101)
        return PyErr_Format(PyExc_IndexError, "tessera: replica_sums: a key outside table '%s'",
                            t->name);
    if (rc != 0)
        return PyErr_Format(PyExc_ValueError,
                            "tessera: replica_sums: offsets must be %zu ascending positions "
                            "into keys, one more than out",
                            n + 1);
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
    {"replica_sums_into", tess__py_table_replica_sums, METH_VARARGS,
     "replica_sums_into(keys, offsets, out): sums over a CSR of replica keys, GIL released"},
    {"replica_view", tess__py_table_replica_view, METH_NOARGS,
     "replica_view() -> memoryview of this rank's replica, or None"},
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

PyTypeObject tess__py_table_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tessera._tessera.Table",
    .tp_basicsize = sizeof(tess__py_table),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_dealloc = tess__py_table_dealloc,
    .tp_methods = tess__py_table_methods,
    .tp_getset = tess__py_table_getset,
    .tp_doc = "A partitioned key/value table (create with Context.table).",
};
