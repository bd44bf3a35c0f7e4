/*
 * test_ckpt_codec.c — tables as checkpoint data: every partition layout
 * encodes and restores to the same entries (also into another partition
 * count), only local keys are kept, malformed bytes are refused, and a
 * replay log applies updates, puts, removes and clears in order.  Also:
 * tess_checkpoint_enable creates the directory and its parents, and refuses
 * a path under a regular file naming it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "test_main.h"

#include "test_ctx.h"
#include "comm/comm.h"
#include "core/internal.h"
#include "table/table_internal.h"

static tess_ctx *new_ctx(void) { return test_ctx(1); }

static tess_table *make(tess_ctx *ctx, int dense, size_t vsize, int parts)
{
    tess_table_spec s;
    tess_table_spec_init(&s);
    s.name = "t";
    s.key_size = 8;
    s.value_size = vsize;
    s.partitions = parts;
    s.dense = dense;
    s.key_count = dense ? 1000 : 0;
    if (vsize == 8) {
        s.accum = TESS_ACC_SUM;
        s.elem = TESS_I64;
    }
    tess_table *t = NULL;
    assert_int_equal(tess_table_create(ctx, &s, &t), TESS_OK);
    return t;
}

/* Keys 3, 10, 17, ... with value key*5 (fixed) or "v<key>" (variable). */
static void fill(tess_table *t, size_t vsize)
{
    for (uint64_t k = 3; k < 1000; k += 7) {
        int p = tess_table_partition_of(t, &k);
        if (vsize == 8) {
            int64_t v = (int64_t)k * 5;
            assert_int_equal(tess__table_put_local(t, p, &k, &v, 8), TESS_OK);
        } else {
            char v[32];
            int n = snprintf(v, sizeof v, "v%llu", (unsigned long long)k);
            assert_int_equal(tess__table_put_local(t, p, &k, v, (size_t)n), TESS_OK);
        }
    }
}

static void check(tess_table *t, size_t vsize)
{
    for (uint64_t k = 0; k < 1000; k++) {
        char buf[32];
        size_t len = 0;
        int rc = tess_table_get(t, &k, buf, sizeof buf, &len);
        if (k % 7 != 3) {
            assert_int_equal(rc, TESS_ERR_NOTFOUND);
            continue;
        }
        assert_int_equal(rc, TESS_OK);
        if (vsize == 8) {
            int64_t v;
            memcpy(&v, buf, 8);
            assert_int_equal(v, (int64_t)k * 5);
        } else {
            char want[32];
            int n = snprintf(want, sizeof want, "v%llu", (unsigned long long)k);
            assert_int_equal(len, (size_t)n);
            assert_memory_equal(buf, want, len);
        }
    }
}

/* The four table layouts; each test takes one as its state. */
typedef struct layout {
    int dense;
    size_t vsize; /* 0: variable-length values */
} layout;
static const layout dense_fixed = {1, 8}, dense_variable = {1, 0}, hash_fixed = {0, 8},
                    hash_variable = {0, 0};
#define ROUND_TRIP_TEST(l)                                  \
    {                                                       \
        "test_" #l, test_round_trip, NULL, NULL, (void *)&l \
    }

static void test_round_trip(void **state)
{
    const layout *l = *state;
    int dense = l->dense;
    size_t vsize = l->vsize;
    tess_ctx *ctx = new_ctx();
    tess_table *a = make(ctx, dense, vsize, 4), *b = make(ctx, dense, vsize, 7);
    fill(a, vsize);
    for (int p = 0; p < 4; p++) {
        uint8_t *buf = NULL;
        size_t len = 0;
        assert_int_equal(tess__table_encode_partition(a, p, &buf, &len), TESS_OK);
        assert_int_equal(tess__table_restore_encoded(b, buf, len), TESS_OK);
        if (len > 1)
            assert_int_equal(tess__table_restore_encoded(b, buf, len - 1), TESS_ERR_FORMAT);
        buf[0] = 'X';
        assert_int_equal(tess__table_restore_encoded(b, buf, len), TESS_ERR_FORMAT);
        free(buf);
    }
    check(b, vsize);
    tess_finalize(ctx);
}

static void log_add(uint8_t **log, size_t *len, uint32_t type, const void *a, size_t alen,
                    const void *b, size_t blen)
{
    uint32_t head[2] = {type, (uint32_t)(alen + blen)};
    *log = realloc(*log, *len + 8 + alen + blen);
    memcpy(*log + *len, head, 8);
    memcpy(*log + *len + 8, a, alen);
    if (blen) memcpy(*log + *len + 8 + alen, b, blen);
    *len += 8 + alen + blen;
}

static void test_replay(void **s)
{
    (void)s;
    tess_ctx *ctx = new_ctx();
    tess_table *t = make(ctx, 1, 8, 3);
    uint8_t *log = NULL;
    size_t len = 0;
    uint64_t kv[4] = {5, 6, 100, 200}; /* keys 5, 6; values 100, 200 */
    tess__table_hdr h = {.table = 0, .n = 2};
    log_add(&log, &len, TESS_MSG_UPDATES, &h, sizeof h, kv, sizeof kv);
    log_add(&log, &len, TESS_MSG_UPDATES, &h, sizeof h, kv, sizeof kv);
    tess__table_hdr hp = {.table = 0, .arg = 8};
    uint64_t put[2] = {7, 42};
    log_add(&log, &len, TESS_MSG_PUT, &hp, sizeof hp, put, sizeof put);
    tess__table_hdr hr = {.table = 0};
    log_add(&log, &len, TESS_MSG_REMOVE, &hr, sizeof hr, &kv[1], 8);
    assert_int_equal(tess__table_replay_log(ctx, log, len), TESS_OK);
    int64_t v = 0;
    uint64_t k = 5;
    assert_int_equal(tess_table_get(t, &k, &v, 8, NULL), TESS_OK);
    assert_int_equal(v, 200);
    k = 6;
    assert_int_equal(tess_table_get(t, &k, &v, 8, NULL), TESS_ERR_NOTFOUND);
    k = 7;
    assert_int_equal(tess_table_get(t, &k, &v, 8, NULL), TESS_OK);
    assert_int_equal(v, 42);
    assert_int_equal(tess__table_replay_log(ctx, log, len - 1), TESS_ERR_FORMAT);
    tess__req_hdr rq = {0};
    uint8_t clear[sizeof rq + sizeof hr];
    memcpy(clear, &rq, sizeof rq);
    memcpy(clear + sizeof rq, &hr, sizeof hr);
    size_t at = len;
    log_add(&log, &len, TESS_MSG_CLEAR_REQ, clear, sizeof clear, NULL, 0);
    assert_int_equal(tess__table_replay_log(ctx, log + at, len - at), TESS_OK);
    assert_int_equal(tess_table_get(t, &k, &v, 8, NULL), TESS_ERR_NOTFOUND);
    free(log);
    tess_finalize(ctx);
}

static void test_enable_dirs(void **s)
{
    (void)s;
    char base[] = "/tmp/tess_ckpt_dirs_XXXXXX", path[320], file[256];
    assert_non_null(mkdtemp(base));
    snprintf(path, sizeof path, "%s/a/b/c", base);
    tess_ctx *ctx = new_ctx();
    assert_int_equal(tess_checkpoint_enable(ctx, path, "job", 0), TESS_OK);
    tess_finalize(ctx);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    snprintf(file, sizeof file, "%s/file", base);
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    fclose(fp);
    snprintf(path, sizeof path, "%s/x", file);
    ctx = new_ctx();
    assert_int_equal(tess_checkpoint_enable(ctx, path, "job", 0), TESS_ERR_IO);
    assert_non_null(strstr(tess_last_error(ctx), file));
    assert_non_null(strstr(tess_last_error(ctx), "not a directory"));
    tess_finalize(ctx);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", base);
    assert_int_equal(system(cmd), 0);
}

TEST_MAIN(ROUND_TRIP_TEST(dense_fixed), ROUND_TRIP_TEST(dense_variable),
          ROUND_TRIP_TEST(hash_fixed), ROUND_TRIP_TEST(hash_variable),
          cmocka_unit_test(test_replay), cmocka_unit_test(test_enable_dirs))
