/*
 * test_runtime.c — unit tests of the core runtime in embedded mode: the
 * registry, lifecycle misuse, worker mailboxes (per-link FIFO), local table
 * operations and their buffering, the barrier with many small tasks, and
 * kernel errors.
 */
#include <sched.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "test_main.h"

#include "test_ctx.h"
#include "comm/comm.h"
#include "core/internal.h"
#include "tessera/tessera.h"

static tess_ctx *new_ctx(int workers) { return test_ctx(workers); }

static int noop(tess_task *t, const void *a, size_t l)
{
    (void)t, (void)a, (void)l;
    return 0;
}

static void test_registry(void **state)
{
    (void)state;
    tess_ctx *ctx = new_ctx(2);
    assert_int_equal(tess_register_kernel(ctx, "a", noop), TESS_OK);
    assert_int_equal(tess_register_kernel(ctx, "b", noop), TESS_OK);
    assert_int_equal(tess_register_kernel(ctx, "a", noop), TESS_ERR_INVAL);
    assert_non_null(strstr(tess_last_error(ctx), "twice"));
    assert_int_equal(tess_register_kernel(ctx, "", noop), TESS_ERR_INVAL);
    assert_int_equal(tess_register_kernel(ctx, "c", NULL), TESS_ERR_INVAL);
    assert_int_equal(tess__registry_find(ctx->reg.kernels, ctx->reg.nkernels, "b"), 1);
    assert_int_equal(tess__registry_find(ctx->reg.kernels, ctx->reg.nkernels, "zz"), -1);
    tess_accum_ops bad = {0};
    assert_int_equal(tess_register_accumulator(ctx, "u", &bad), TESS_ERR_INVAL);
    tess_finalize(ctx);
    tess_finalize(NULL); /* accepts NULL */
}

static void test_topology(void **state)
{
    (void)state;
    tess_ctx *ctx = new_ctx(3);
    assert_int_equal(tess_rank(ctx), 0);
    assert_int_equal(tess_nranks(ctx), 1);
    assert_int_equal(tess_workers(ctx), 3);
    assert_int_equal(tess_workers_total(ctx), 3);
    assert_int_equal(tess_is_mpi(ctx), 0);
    assert_string_equal(tess_version(), TESS_VERSION_STRING);
    assert_int_equal(tess_version_number(), TESS_VERSION_NUMBER);
    assert_string_equal(tess_strerror(TESS_ERR_NOMEM), "out of memory");
    tess_finalize(ctx);
}

static void test_inbox_fifo(void **state)
{
    (void)state;
    tess_ctx *ctx = new_ctx(3);
    for (int i = 0; i < 100; i++) {
        assert_int_equal(tess__worker_send(ctx, i % 2, 2, &i, sizeof i), TESS_OK);
    }
    int next[2] = {0, 1};
    for (int n = 0; n < 100; n++) {
        int src = -1;
        void *mem = NULL;
        uint8_t *data = NULL;
        size_t len = 0;
        assert_int_equal(tess__worker_recv(ctx, 2, 1.0, &src, &mem, &data, &len), 1);
        assert_int_equal(len, sizeof(int));
        assert_int_equal((uintptr_t)data % 8, 0);
        int v;
        memcpy(&v, data, sizeof v);
        free(mem);
        assert_int_equal(v, next[src]); /* per-link order */
        next[src] += 2;
    }
    int src;
    void *mem;
    uint8_t *data;
    size_t len;
    assert_int_equal(tess__worker_recv(ctx, 2, 0.01, &src, &mem, &data, &len), 0);
    assert_int_equal(tess__worker_send(ctx, 0, 7, "x", 1), TESS_ERR_INVAL);
    tess_finalize(ctx);
}

/* A block handed to a worker of this rank travels uncopied: the receiver
 * gets the same block, and may send it on. */
static void test_inbox_block_handover(void **state)
{
    (void)state;
    tess_ctx *ctx = new_ctx(3);
    void *blk = tess__worker_block_new(64);
    assert_non_null(blk);
    assert_int_equal(tess__worker_block_cap(blk), 64);
    uint8_t *d = tess__worker_block_data(blk);
    assert_int_equal((uintptr_t)d % 8, 0);
    memcpy(d, "hello", 5);
    void *sent = blk;
    assert_int_equal(tess__worker_send_block(ctx, 0, 1, &blk, 65), TESS_ERR_INVAL); /* > cap */
    assert_ptr_equal(blk, sent);
    assert_int_equal(tess__worker_send_block(ctx, 0, 1, &blk, 5), TESS_OK);
    assert_null(blk); /* the receiver's now */
    int src = -1;
    void *mem = NULL;
    uint8_t *data = NULL;
    size_t len = 0;
    assert_int_equal(tess__worker_recv(ctx, 1, 1.0, &src, &mem, &data, &len), 1);
    assert_ptr_equal(mem, sent);
    assert_int_equal(src, 0);
    assert_int_equal(len, 5);
    assert_memory_equal(data, "hello", 5);
    /* A received block is sent on, with a longer message up to its cap. */
    memset(data, 'x', 64);
    assert_int_equal(tess__worker_send_block(ctx, 1, 2, &mem, 64), TESS_OK);
    assert_int_equal(tess__worker_recv(ctx, 2, 1.0, &src, &mem, &data, &len), 1);
    assert_int_equal(src, 1);
    assert_int_equal(len, 64);
    assert_int_equal(data[63], 'x');
    assert_int_equal(tess__worker_send_block(ctx, 0, 9, &mem, 1), TESS_ERR_INVAL);
    free(mem);
    tess_finalize(ctx);
}

static tess_table *dense_sum(tess_ctx *ctx, uint64_t n, int parts)
{
    tess_table_spec s;
    tess_table_spec_init(&s);
    s.key_size = 8;
    s.value_size = 8;
    s.dense = 1;
    s.key_count = n;
    s.partitions = parts;
    s.accum = TESS_ACC_SUM;
    s.elem = TESS_F64;
    tess_table *t = NULL;
    assert_int_equal(tess_table_create(ctx, &s, &t), TESS_OK);
    return t;
}

static void test_table_local_ops(void **state)
{
    (void)state;
    tess_ctx *ctx = new_ctx(1);
    tess_table *t = dense_sum(ctx, 1000, 7);
    uint64_t first, count, total = 0;
    for (int p = 0; p < 7; p++) {
        assert_int_equal(tess_table_dense_range(t, p, &first, &count), TESS_OK);
        assert_int_equal(first, total);
        total += count;
    }
    assert_int_equal(total, 1000);
    double one = 1.0, got = 0;
    for (int r = 0; r < 3; r++)
        for (uint64_t k = 0; k < 1000; k++) assert_int_equal(tess_table_update(t, &k, &one, 8), 0);
    uint64_t k = 999;
    assert_int_equal(tess_table_get(t, &k, &got, sizeof got, NULL), TESS_OK); /* flushes */
    assert_true(got == 3.0);
    uint64_t keys[5] = {1, 1, 500, 999, 1};
    double vals[5] = {1, 2, 3, 4, 5};
    assert_int_equal(tess_table_update_batch(t, keys, vals, 5), TESS_OK);
    k = 1;
    assert_int_equal(tess_table_get(t, &k, &got, sizeof got, NULL), TESS_OK);
    assert_true(got == 3.0 + 8.0);
    assert_int_equal(tess_table_size(t), 1000);
    assert_int_equal(tess_table_remove(t, &k), TESS_OK);
    assert_int_equal(tess_table_contains(t, &k), 0);
    assert_int_equal(tess_table_size(t), 999);
    k = 1000;
    assert_int_equal(tess_table_update(t, &k, &one, 8), TESS_ERR_INVAL);
    assert_non_null(strstr(tess_last_error(ctx), "outside"));
    assert_int_equal(tess_table_put(t, &k, &one, 4), TESS_ERR_INVAL); /* wrong size */
    assert_int_equal(tess_table_clear(t), TESS_OK);
    assert_int_equal(tess_table_size(t), 0);
    tess_finalize(ctx);
}

/* Updates that cancel out or add +0.0 still make the key present: the
 * per-thread combining array must not take "value is zero" for "untouched". */
static void test_table_zero_sums_present(void **state)
{
    (void)state;
    tess_ctx *ctx = new_ctx(1);
    tess_table *t = dense_sum(ctx, 100, 3);
    uint64_t keys[4] = {5, 5, 50, 99};
    double vals[4] = {1.0, -1.0, 0.0, 2.0};
    assert_int_equal(tess_table_update_batch(t, keys, vals, 4), TESS_OK);
    assert_int_equal(tess_table_flush(t), TESS_OK);
    assert_int_equal(tess_table_size(t), 3);
    for (int i = 0; i < 4; i++) assert_int_equal(tess_table_contains(t, &keys[i]), 1);
    uint64_t absent = 6;
    assert_int_equal(tess_table_contains(t, &absent), 0);
    double got = -1;
    assert_int_equal(tess_table_get(t, &keys[0], &got, sizeof got, NULL), TESS_OK);
    assert_true(got == 0.0);
    tess_finalize(ctx);
}

/* A fan-out update equals one update per key, on the fast and general paths. */
static void test_table_fanout(void **state)
{
    (void)state;
    tess_ctx *ctx = new_ctx(1);
    tess_table *t = dense_sum(ctx, 100, 4);
    tess_table_spec s;
    tess_table_spec_init(&s);
    s.key_size = 8, s.value_size = 8, s.partitions = 3, s.accum = TESS_ACC_SUM;
    s.elem = TESS_F64;
    tess_table *h = NULL;
    assert_int_equal(tess_table_create(ctx, &s, &h), TESS_OK);
    uint64_t keys[5] = {3, 97, 3, 50, 0};
    double plus = 0.5, minus = -2.0, got = 0;
    for (int i = 0; i < 2; i++) {
        tess_table *x = i ? h : t;
        assert_int_equal(tess_table_update_fanout(x, keys, 5, &plus), TESS_OK);
        assert_int_equal(tess_table_update_fanout(x, keys, 2, &minus), TESS_OK);
        assert_int_equal(tess_table_get(x, &keys[0], &got, sizeof got, NULL), TESS_OK);
        assert_true(got == 1.0 - 2.0);
        assert_int_equal(tess_table_get(x, &keys[1], &got, sizeof got, NULL), TESS_OK);
        assert_true(got == 0.5 - 2.0);
        assert_int_equal(tess_table_size(x), 4);
    }
    uint64_t bad[2] = {1, 100};
    assert_int_equal(tess_table_update_fanout(t, bad, 2, &plus), TESS_ERR_INVAL);
    tess_finalize(ctx);
}

static void test_table_spec_errors(void **state)
{
    (void)state;
    tess_ctx *ctx = new_ctx(1);
    tess_table_spec s;
    tess_table_spec_init(&s);
    tess_table *t = NULL;
    s.key_size = 8;
    s.partitions = 0;
    assert_int_equal(tess_table_create(ctx, &s, &t), TESS_ERR_INVAL);
    s.partitions = 2;
    s.accum = TESS_ACC_SUM; /* needs an element type */
    s.value_size = 8;
    assert_int_equal(tess_table_create(ctx, &s, &t), TESS_ERR_INVAL);
    s.accum = TESS_ACC_USER;
    s.accumulator = "nope";
    assert_int_equal(tess_table_create(ctx, &s, &t), TESS_ERR_NOTFOUND);
    assert_null(t);
    tess_finalize(ctx);
}

typedef struct many_app {
    tess_table *t;
    int fail_instance;
} many_app;

static int add_one(tess_task *task, const void *a, size_t l)
{
    (void)a, (void)l;
    many_app *app = tess_task_app(task);
    if (tess_task_instance(task) == app->fail_instance) return TESS_ERR_IO;
    uint64_t key = (uint64_t)tess_task_instance(task) % 10;
    double one = 1;
    return tess_table_update(app->t, &key, &one, sizeof one);
}

static int many_control(tess_ctx *ctx, void *arg)
{
    many_app *app = arg;
    for (int round = 0; round < 20; round++) {
        assert_int_equal(tess_run(ctx, "add_one", 500, NULL, NULL, 0), TESS_OK);
        assert_int_equal(tess_barrier(ctx), TESS_OK);
    }
    double v = 0;
    for (uint64_t k = 0; k < 10; k++) {
        assert_int_equal(tess_table_get(app->t, &k, &v, sizeof v, NULL), TESS_OK);
        assert_true(v == 20 * 50);
    }
    app->fail_instance = 77;
    assert_int_equal(tess_run(ctx, "add_one", 100, NULL, NULL, 0), TESS_OK);
    assert_int_equal(tess_barrier(ctx), TESS_ERR_KERNEL);
    assert_non_null(strstr(tess_last_error(ctx), "add_one instance 77"));
    assert_int_equal(tess_run(ctx, "missing", 1, NULL, NULL, 0), TESS_ERR_NOTFOUND);
    return 42;
}

static void test_barrier_many_tasks(void **state)
{
    (void)state;
    tess_ctx *ctx = new_ctx(4);
    many_app app = {.fail_instance = -1};
    app.t = dense_sum(ctx, 10, 3);
    assert_int_equal(tess_register_kernel(ctx, "add_one", add_one), TESS_OK);
    assert_int_equal(tess_main(ctx, many_control, &app), 42);
    assert_int_equal(tess_register_kernel(ctx, "late", add_one), TESS_ERR_MISUSE);
    assert_int_equal(tess_main(ctx, many_control, &app), TESS_ERR_MISUSE);
    tess_finalize(ctx);
}

/* A registered partitioner: the key's first byte names its partition. */
static int first_byte(const void *key, size_t key_size, int partitions)
{
    (void)key_size;
    return ((const uint8_t *)key)[0] % partitions;
}

typedef struct order_app {
    tess_table *t;
    int order[6];
    _Atomic int next;
} order_app;

static int record_order(tess_task *task, const void *a, size_t l)
{
    (void)a, (void)l;
    order_app *app = tess_task_app(task);
    app->order[atomic_fetch_add(&app->next, 1)] = tess_task_instance(task);
    return 0;
}

static int order_control(tess_ctx *ctx, void *arg)
{
    order_app *app = arg;
    assert_int_equal(tess_run(ctx, "record_order", 6, app->t, NULL, 0), TESS_OK);
    return tess_barrier(ctx);
}

/* Instances run biggest locality partition first (one worker: a strict order). */
static void test_partitioner_and_biggest_first(void **state)
{
    (void)state;
    tess_ctx *ctx = new_ctx(1);
    assert_int_equal(tess_register_partitioner(ctx, "first_byte", first_byte), TESS_OK);
    assert_int_equal(tess_register_kernel(ctx, "record_order", record_order), TESS_OK);
    tess_table_spec s;
    tess_table_spec_init(&s);
    s.key_size = 4;
    s.value_size = 1;
    s.partitions = 6;
    s.partitioner = "first_byte";
    order_app app = {0};
    assert_int_equal(tess_table_create(ctx, &s, &app.t), TESS_OK);
    static const int sizes[6] = {3, 10, 0, 7, 1, 5}; /* keys per partition */
    for (int p = 0; p < 6; p++)
        for (int i = 0; i < sizes[p]; i++) {
            uint8_t key[4] = {(uint8_t)p, (uint8_t)i, 0, 0};
            assert_int_equal(tess_table_partition_of(app.t, key), p);
            assert_int_equal(tess_table_put(app.t, key, "x", 1), TESS_OK);
        }
    assert_int_equal(tess_main(ctx, order_control, &app), TESS_OK);
    static const int expected[6] = {1, 3, 5, 0, 4, 2};
    assert_memory_equal(app.order, expected, sizeof expected);
    tess_finalize(ctx);
}

static void test_parse_slow_worker(void **state)
{
    (void)state;
    int rank = -1, sleep = -1;
    double factor = 0;
    assert_int_equal(tess_parse_slow_worker("3:2.5", &rank, &factor, &sleep), TESS_OK);
    assert_int_equal(rank, 3);
    assert_true(factor == 2.5);
    assert_int_equal(sleep, 0);
    assert_int_equal(tess_parse_slow_worker("0:4:sleep", &rank, &factor, &sleep), TESS_OK);
    assert_int_equal(rank, 0);
    assert_int_equal(sleep, 1);
    assert_int_equal(tess_parse_slow_worker("1:2:spin", &rank, &factor, &sleep), TESS_OK);
    assert_int_equal(sleep, 0);
    static const char *bad[] = {"",       "1",    "1:",      ":2",   "-1:2",      "1:0.5",
                                "1:1001", "1:2:", "1:2:nap", "1:2x", "1:2:sleepy"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(tess_parse_slow_worker(bad[i], &rank, &factor, &sleep), TESS_ERR_INVAL);
    assert_int_equal(rank, 1); /* untouched by the failures */
    assert_int_equal(tess_parse_slow_worker(NULL, &rank, &factor, &sleep), TESS_ERR_INVAL);
}

static int nap(tess_task *t, const void *a, size_t l)
{
    (void)t, (void)a, (void)l;
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
    return 0;
}

static int throttle_control(tess_ctx *ctx, void *arg)
{
    double *took = arg, start = tess_now();
    int rc = tess_run(ctx, "nap", 1, NULL, NULL, 0);
    if (rc == TESS_OK) rc = tess_barrier(ctx);
    *took = tess_now() - start;
    return rc;
}

/* The slowed rank's instances take FACTOR x as long, spinning or asleep. */
static void test_slow_worker_throttle(void **state)
{
    (void)state;
    for (int sleep = 0; sleep <= 1; sleep++) {
        tess_config cfg;
        test_config(&cfg, 1);
        cfg.slow_rank = 0;
        cfg.slow_factor = 3.0;
        cfg.slow_sleep = sleep;
        tess_ctx *ctx = NULL;
        assert_int_equal(tess_init(&cfg, &ctx), TESS_OK);
        assert_int_equal(tess_register_kernel(ctx, "nap", nap), TESS_OK);
        double took = 0;
        assert_int_equal(tess_main(ctx, throttle_control, &took), TESS_OK);
        assert_true(took >= 0.030); /* 10 ms of kernel, 20 ms of throttle at least */
        tess_finalize(ctx);
    }
}

/* The CPUs a tiles processor may be bound to: each k below the mask's size
 * names a distinct CPU of the mask, and outside it there is none. */
static void test_nth_usable_cpu(void **state)
{
    (void)state;
    cpu_set_t mask;
    assert_int_equal(sched_getaffinity(0, sizeof mask, &mask), 0);
    int n = tess__usable_cores(), last = -1;
    for (int k = 0; k < n; k++) {
        int cpu = tess__nth_usable_cpu(k);
        assert_true(cpu > last && CPU_ISSET(cpu, &mask));
        last = cpu;
    }
    assert_int_equal(tess__nth_usable_cpu(n), -1);
    assert_int_equal(tess__nth_usable_cpu(-1), -1);
    unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    unsetenv("MPI_LOCALNRANKS");
    assert_true(tess__rank_owns_cores()); /* alone on the node */
}

TEST_MAIN(cmocka_unit_test(test_registry), cmocka_unit_test(test_nth_usable_cpu),
          cmocka_unit_test(test_topology), cmocka_unit_test(test_inbox_fifo),
          cmocka_unit_test(test_inbox_block_handover), cmocka_unit_test(test_table_local_ops),
          cmocka_unit_test(test_table_spec_errors), cmocka_unit_test(test_barrier_many_tasks),
          cmocka_unit_test(test_table_zero_sums_present), cmocka_unit_test(test_table_fanout),
          cmocka_unit_test(test_partitioner_and_biggest_first),
          cmocka_unit_test(test_parse_slow_worker), cmocka_unit_test(test_slow_worker_throttle))
