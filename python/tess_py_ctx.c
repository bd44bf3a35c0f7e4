/*
 * tess_py_ctx.c — a Context of the Python module (docs/python.md): the
 * runtime (tess_init .. tess_finalize), the tables and kernels registered
 * before main(), the control function and what it calls (run, barrier,
 * checkpoints), and the Task a Python kernel receives.  A kernel or control
 * function that raises prints its traceback and becomes a clean failure of
 * the run (TESS_ERR_KERNEL with one line), never a crash or a hang.
 */
#include <string.h>

#include "tess_py.h"

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

PyTypeObject tess__py_task_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tessera._tessera.Task",
    .tp_basicsize = sizeof(tess__py_task),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_getset = tess__py_task_getset,
    .tp_doc = "A running kernel instance (valid only while its kernel runs).",
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

PyTypeObject tess__py_ctx_type = {
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
